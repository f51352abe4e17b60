"""`alterflow sql` run through `alterflow.cli.command.main` from `python -c` (a Makefile's or a cron
line's way), without the Spark Connect dependencies the project pins (issue 35): a heavyweight
ALTER validates with Great Expectations, whose import of Spark Connect used to `sys.exit(0)` there,
ending the process with status 0 and the job unfinished."""

from __future__ import annotations

import os
import subprocess
import sys

PROGRAM = """
import sys
sys.modules["zstandard"] = None  # as if it were not installed
from alterflow.cli.command import main
sys.exit(main(sys.argv[1:]))
"""
STATEMENTS = (
    "CREATE TABLE t (id BIGINT NOT NULL, code STRING) DISTRIBUTED BY HASH(id) BUCKETS 2;"
    "INSERT INTO t VALUES (1, '7'), (2, '8'), (3, '9');"
    "ALTER TABLE t MODIFY COLUMN code INT;"
    "SELECT count(*), sum(code) FROM t"
)


def test_a_heavy_alter_through_main_under_python_c_finishes(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env["ALTERFLOW_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, "sql", "-e", STATEMENTS],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "ALTER TABLE t: job 1 FINISHED, schema version 2" in lines, lines
    assert lines[-3].replace(" ", "") == "|3|24|" and lines[-1] == "1 row", lines
