"""`make demo-s3`'s runner (deploy/s3_demo.py): the command it runs gets a fresh bucket of a
moto server started for it, with the AWS variables that reach it, and the demo's commands work on
it; the server goes with the command, whose exit code is the runner's."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support import REPO

SCRIPT = (
    'alterflow sql --format json -e "CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2); SELECT count(*) FROM t" && '
    'echo "warehouse=$ALTERFLOW_WAREHOUSE" && exit 3'
)


def test_the_runner_gives_the_command_a_bucket_and_returns_its_exit_code(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALTERFLOW_", "AWS_"))}
    env["PATH"] = f"{os.path.dirname(sys.executable)}:{env['PATH']}"
    command = f"ALTERFLOW_HOME={tmp_path / 'home'} ALTERFLOW_WAREHOUSE=\"$DEMO_WAREHOUSE/demo\" sh -c '{SCRIPT}'"
    done = subprocess.run(
        [sys.executable, str(REPO / "deploy" / "s3_demo.py"), "sh", "-c", command],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("--- the warehouse is s3://alterflow-demo-") and "moto's S3 server at http://127.0.0.1:" in lines[0]
    assert (
        lines[1] == '{"columns": ["count(1)"], "rows": [[2]]}'
        and lines[-1].startswith("warehouse=s3://alterflow-demo-")
        and lines[-1].endswith("/demo")
    ), done.stdout
    assert not (tmp_path / "home" / "warehouse").exists(), "the tables went to a local folder"
