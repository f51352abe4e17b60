"""alterflow's Celery configuration: Airflow's own, and alterflow imported by each worker before it
forks its pool, so that a task process does not import it again."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import child_pythonpath


def test_the_configuration_is_airflows_with_alterflows_worker_imports():
    from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG

    from alterflow.airflow.celery_config import CELERY_CONFIG, WORKER_IMPORTS

    assert {key: value for key, value in CELERY_CONFIG.items() if key != "imports"} == {
        key: value for key, value in DEFAULT_CELERY_CONFIG.items() if key != "imports"
    }
    assert CELERY_CONFIG["imports"][-1] == WORKER_IMPORTS == "alterflow.airflow.worker_imports"


def test_the_worker_imports_bring_the_dag_factories_and_start_no_thread():
    """What a worker imports before it forks: the DAG factories a task's DAG file imports, and
    nothing running (a thread would not survive the fork)."""
    script = (
        "import sys, threading\n"
        "import alterflow.airflow.worker_imports\n"
        "assert 'alterflow.airflow.dags' in sys.modules and 'pyarrow.parquet' in sys.modules\n"
        "print(threading.active_count())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": child_pythonpath(os.environ.get("PYTHONPATH"))},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "1"
