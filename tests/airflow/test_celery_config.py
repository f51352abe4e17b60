"""alterflow's Celery settings: each worker imports alterflow before it forks its pool, so that a task
process does not import it again."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support import REPO, child_pythonpath


def _python(script: str, **env: str) -> str:
    environment = {**os.environ, **env, "PYTHONPATH": child_pythonpath(os.environ.get("PYTHONPATH"))}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180, env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_airflows_celery_app_takes_the_worker_imports_the_fleet_sets():
    """The setting `make airflow AIRFLOW_EXECUTOR=celery` gives its workers reaches the Celery app
    Airflow's workers run, beside Airflow's own settings."""
    sys.path.insert(0, str(REPO / "deploy"))
    try:
        from celery_fleet import WORKER_IMPORTS
    finally:
        sys.path.remove(str(REPO / "deploy"))
    script = (
        "import json\n"
        "from airflow.providers.celery.executors.celery_executor_utils import app\n"
        "print(json.dumps([list(app.conf.imports), app.conf.task_acks_late]))\n"
    )
    imports, acks_late = json.loads(_python(script, AIRFLOW__CELERY__EXTRA_CELERY_CONFIG=WORKER_IMPORTS))
    assert imports == ["alterflow.airflow.worker_imports"] and acks_late is True  # Airflow's settings kept


def test_the_worker_imports_bring_the_dag_factories_and_start_no_thread():
    """What a worker imports before it forks: the DAG factories a task's DAG file imports, the
    supervisor's wait on a task's exit (`task_exit_wait`), the catalog's ORM mappers configured,
    and nothing running, native threads included (a thread would not survive the fork)."""
    script = (
        "import os, sys\n"
        "before = len(os.listdir('/proc/self/task'))\n"
        "import alterflow.airflow.worker_imports\n"
        "assert 'alterflow.airflow.dags' in sys.modules and 'sqlalchemy' in sys.modules\n"
        "from alterflow.airflow import task_exit_wait\n"
        "assert task_exit_wait.installed()\n"
        "from alterflow.catalog.models import Base\n"
        "assert Base.registry.mappers and all(mapper.configured for mapper in Base.registry.mappers)\n"
        "print(len(os.listdir('/proc/self/task')) - before)\n"
    )
    assert _python(script) == "0"
