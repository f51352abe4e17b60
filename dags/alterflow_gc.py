"""The `alterflow_gc` DAG: garbage collection and compaction, hourly (alterflow.airflow.dags)."""

from alterflow.airflow.dags import alterflow_gc

alterflow_gc()
