"""The `alterflow` command as a separate process, and its one error line checked: exit 1, one line
on stderr starting `error: `, at most MAX_LINE characters, no internal error."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

from alterflow.errors import MAX_LINE

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"


def run(home: pathlib.Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update({"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[1]", "PYSPARK_PYTHON": sys.executable, **extra})
    return subprocess.run([str(ALTERFLOW), *args], env=env, cwd=home.parent, capture_output=True, text=True, timeout=600)


def one_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr[:500])
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr[:500]
    message = proc.stderr[len("error: ") : -1]
    assert len(message) <= MAX_LINE and "internal error" not in message, message
    return message
