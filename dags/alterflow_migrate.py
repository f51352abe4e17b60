"""The `alterflow_migrate` DAG: lint, approve and apply a migrations directory (alterflow.airflow.dags)."""

from alterflow.airflow.dags import alterflow_migrate

alterflow_migrate()
