"""An ALTER as a sequence of named, idempotent steps. The embedded runner (`runner.run_alter`) and
the Airflow DAG call the same step functions in the same order; nothing here imports Airflow."""
