"""What a Celery worker imports once at its start (`alterflow.airflow.celery_config`), so the task
processes it forks find it imported: the modules the DAG files and a short task of
`alterflow_schema_change` import (the DAG factories bring the catalog, SQLAlchemy and the workflow),
the Parquet writer of a rewrite in the worker, and the PostgreSQL driver where it is installed.
Importing starts no thread and opens no connection, so forking after it is safe."""

from __future__ import annotations

import contextlib

import pyarrow.parquet  # noqa: F401

import alterflow.airflow.dags  # noqa: F401

with contextlib.suppress(ImportError):  # a catalog in SQLite needs no PostgreSQL driver
    import psycopg  # noqa: F401
