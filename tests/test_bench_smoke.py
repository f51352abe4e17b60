"""The benchmarks run (`python -m bench --quick`: small sizes). Their speed is not checked here:
speed is measured by `make bench` only, never in a timed unit test."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.spark  # the subprocess starts its own local Spark


def test_quick_benchmarks_run_and_print_the_results_table(tmp_path):
    output = tmp_path / "RESULTS.md"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONUNBUFFERED": "1"}
    env.pop("ALTERFLOW_HOME", None)  # each benchmark makes its own temporary home
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--output", str(output)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    header = "| Benchmark | Case | Result | Baseline (same run) | Ratio | Goal |"
    assert header in done.stdout
    for benchmark in (
        "light ALTER",
        "lease cost",
        "heavy ALTER, CLI process",
        "light ALTER, CLI process",
        "migrate lint, CLI process",
        "migrate apply, CLI process",
        "lint --analyze, NOT NULL check",
        "Spark golden queries answered in process",
        "object store: Table.append",
        "object store: query, CLI process",
        "object store: heavy conversion (Spark local[2])",
        "object store: load, engine auto",
        "evolved read",
        "heavy conversion",
        "load during dual write",
        "write_table (Spark, local[2])",
        "Airflow DAG run",
    ):
        assert f"| {benchmark}" in done.stdout, done.stdout
    assert "FAILED" not in done.stdout
    assert header in output.read_text(encoding="utf-8")
