"""The `alterflow_schema_change` DAG: one ALTER TABLE as one DAG run (alterflow.airflow.dags)."""

from alterflow.airflow.dags import alterflow_schema_change

alterflow_schema_change()
