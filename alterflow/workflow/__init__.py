"""An ALTER as a sequence of named, idempotent steps. The embedded runner (`alter_runner.run_alter`) and
the Airflow DAG call the same step functions in the same order; `airflow_submission.submit_alter`
hands an ALTER to that DAG through Airflow's REST API and waits for it. Nothing here imports
Airflow."""
