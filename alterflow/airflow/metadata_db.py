"""Connection arguments for Airflow's own metadata database when it is SQLite, as `make airflow`
sets it up by default (`[database] sql_alchemy_connect_args` and `..._async` name these dicts).

SQLite lets one writer in at a time; its driver gives up after 5 s of waiting for the lock, and
the api-server then answers a trigger with HTTP 500 "Database error" while a scheduler or a task
holds the lock for longer (seen when the hourly GC DAG's first run starts with Airflow on 2 cores).
Waiting up to 60 s turns that into a slower answer instead of a failed one; the CLI's client
(alterflow/airflow_client.py) waits 70 s for an answer and repeats a call that got none."""

SQLITE_CONNECT_ARGS = {"timeout": 60}
SQLITE_CONNECT_ARGS_ASYNC = {"timeout": 60}
