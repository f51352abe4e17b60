"""The Celery configuration of alterflow's workers: Airflow's own (`DEFAULT_CELERY_CONFIG`) and one
module more for each worker to import at its start, `alterflow.airflow.worker_imports`, before it
forks its pool. Every task process is forked from a pool process, so it finds alterflow's DAG
factories, SQLAlchemy, pyarrow and the PostgreSQL driver imported: without them each task of
alterflow's DAGs spends about half a second importing them (on two busy cores, most of a short
task's time). Airflow preloads its own operators the same way (`on_celery_import_modules`).

    AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS=alterflow.airflow.celery_config.CELERY_CONFIG

`make airflow AIRFLOW_EXECUTOR=celery` and docker-compose.yaml set it (docs/deploy.md#celery-workers).
"""

from __future__ import annotations

from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG

WORKER_IMPORTS = "alterflow.airflow.worker_imports"

CELERY_CONFIG = {**DEFAULT_CELERY_CONFIG, "imports": (*DEFAULT_CELERY_CONFIG.get("imports", ()), WORKER_IMPORTS)}
