"""A Spark standalone cluster for tests that run spark-submit against one: a master and a worker
started from the pyspark installation, on 127.0.0.1 (tests/workflow/test_spark_submit.py,
tests/test_spark_door_submit.py)."""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import subprocess
import time
from collections.abc import Iterator

from alterflow.rewrite.spark_submit import spark_submit_binary
from tests.support.heavy_jobs import subprocess_env
from tests.support.ports import free_port


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)


def _wait_for(path: pathlib.Path, text: str, procs, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text(errors="replace"):
        for p in procs:
            assert p.poll() is None, f"a Spark daemon exited: {path.read_text(errors='replace')[-3000:]}"
        assert time.monotonic() < deadline, f"no {text!r} in {path}: {path.read_text(errors='replace')[-3000:]}"
        time.sleep(0.2)


def standalone_cluster(base: pathlib.Path, cores: int = 1, memory: str = "1g") -> Iterator[dict]:
    """Start a master and one worker (`cores`, `memory`) under `base`; yields {"master": URL,
    "logs": {"master": path, "worker": path}}; both process groups are killed at the end. For a
    fixture: `yield from standalone_cluster(tmp_path_factory.mktemp("standalone"))`."""
    spark_class = spark_submit_binary().with_name("spark-class")
    port = free_port()
    env = subprocess_env()
    env["SPARK_WORKER_DIR"] = str(base / "work")
    procs = []
    logs = {name: base / f"{name}.log" for name in ("master", "worker")}
    try:
        with open(logs["master"], "w") as log:
            procs.append(
                subprocess.Popen(
                    [
                        str(spark_class),
                        "org.apache.spark.deploy.master.Master",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(port),
                        "--webui-port",
                        str(free_port()),
                    ],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        _wait_for(logs["master"], "I have been elected leader", procs)
        with open(logs["worker"], "w") as log:
            procs.append(
                subprocess.Popen(
                    [
                        str(spark_class),
                        "org.apache.spark.deploy.worker.Worker",
                        f"spark://127.0.0.1:{port}",
                        "--cores",
                        str(cores),
                        "--memory",
                        memory,
                        "--webui-port",
                        str(free_port()),
                        "--work-dir",
                        str(base / "work"),
                    ],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        _wait_for(logs["master"], "Registering worker", procs)
        yield {"master": f"spark://127.0.0.1:{port}", "logs": logs}
    finally:
        for proc in reversed(procs):
            _stop(proc)
