"""Garbage collection and compaction (docs/gc.md): Airflow-free steps that the `alterflow_gc` DAG and
`alterflow gc` both run (`gc_steps.GC_STEPS`, in that order, by `gc_runner.run_gc`)."""
