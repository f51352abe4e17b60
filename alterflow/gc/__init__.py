"""Garbage collection and compaction (docs/gc.md): Airflow-free steps that the `alterflow_gc` DAG and
`alterflow gc` both run (`steps.GC_STEPS`, in that order, by `runner.run_gc`)."""
