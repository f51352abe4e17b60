"""What a Celery worker imports once at its start, before it forks its pool, so the task processes
it forks find it imported (each task of alterflow's DAGs spent about half a second importing it):
the modules the DAG files and a short task of `alterflow_schema_change` import (the DAG factories
bring the catalog, SQLAlchemy and the workflow) and the PostgreSQL driver where it is installed.
Airflow preloads its own operators the same way (`on_celery_import_modules`). Importing starts no
thread, native ones included, and opens no connection, so forking after it is safe; pyarrow is left
out for that reason (its import starts jemalloc's background thread). Celery imports it when its
configuration says so:

    AIRFLOW__CELERY__EXTRA_CELERY_CONFIG='{"imports": ["alterflow.airflow.worker_imports"]}'

(`make airflow AIRFLOW_EXECUTOR=celery` and docker-compose.yaml set it; docs/deploy.md#priorities-and-worker-start-up).
"""

from __future__ import annotations

import contextlib
import gc

import alterflow.airflow.dags  # noqa: F401
from alterflow.airflow import task_exit_wait
from alterflow.catalog.models import Base

# Every task supervisor this worker forks hands its slot back as its task process exits.
task_exit_wait.install()
# The catalog's ORM mappers configured once, here, not by each task's first query (13 ms a task).
Base.registry.configure()

with contextlib.suppress(ImportError):  # a catalog in SQLite needs no PostgreSQL driver
    import psycopg  # noqa: F401

# As Airflow does after its own imports (Celery imports this module after Airflow's freeze): the
# objects imported here are left to the forked processes without the collector touching their pages;
# Airflow unfreezes once the worker is ready.
gc.freeze()
