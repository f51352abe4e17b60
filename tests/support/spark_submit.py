"""The conversion application run through `spark-submit` to its end, as a deployment submits it
(`alterflow.rewrite.spark_submit.submit_command`): for the tests of that path."""

from __future__ import annotations

import subprocess
import sys

from alterflow.held_leases import process_group
from alterflow.rewrite.spark_submit import submit_command
from alterflow.settings import Settings, child_environment


def submit_conversion(
    settings: Settings, job_id: int, master: str | None = None, timeout_s: int | None = None
) -> subprocess.CompletedProcess:
    """Run the conversion application to completion; raises CalledProcessError when it fails.
    The application drives the job as part of this process's driver (it takes over its lease)."""
    env = child_environment({"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"})
    command = submit_command(settings, job_id, master or settings.spark_master, lease_group=process_group())
    return subprocess.run(command, env=env, check=True, capture_output=True, text=True, timeout=timeout_s)
