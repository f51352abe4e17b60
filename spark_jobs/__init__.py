"""Spark applications, run with spark-submit. Each is a thin entry point over alterflow's core."""
