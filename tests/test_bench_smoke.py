"""The benchmarks run (`python -m bench --quick`: small sizes). Their speed is not checked here:
speed is measured by `make bench` only, never in a timed unit test. The Airflow benchmark
(`bench.airflow_runs`) is measured on the live end-to-end test's Airflow instead
(tests/e2e/test_airflow_live.py), so that no second Airflow starts for it; the fleet benchmark's team
load (`bench.fleet_load`) runs in `make test-fleet` (tests/e2e/test_airflow_fleet.py)."""

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
        [sys.executable, "-m", "bench", "--quick", "--output", str(output), "--skip", "airflow_runs", "--skip", "fleet_load"],
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
    ):
        assert f"| {benchmark}" in done.stdout, done.stdout
    assert "FAILED" not in done.stdout and "| Airflow DAG run" not in done.stdout and "| fleet" not in done.stdout  # skipped
    assert header in output.read_text(encoding="utf-8")


def test_the_readme_summary_names_each_case_whole():
    """Each result row carries a short name for the README's summary, used whole (the long case
    text stays in bench/RESULTS.md); every ResultRow of the benchmarks gives one."""
    import ast

    from bench import ResultRow
    from bench.__main__ import summary_table

    long_case = "20,000,000 rows, 4 columns, STRING -> INT, a case text far longer than a summary's column"
    row = ResultRow(
        "heavy conversion", long_case, "1 s", ratio="1.06 (ours/plain)", goal="≥ 0.8×", met="yes", summary="heavy conversion, Spark"
    )
    assert summary_table([row]).splitlines()[-1] == "| heavy conversion, Spark | 1.06 | ≥ 0.8× | yes |"
    counted = ResultRow("golden", "870 queries", "77.2% (672 of 870): right 584", goal="≥ 70%", met="yes", summary="golden")
    assert summary_table([counted]).splitlines()[-1] == "| golden | 77.2% | ≥ 70% | yes |"  # the figure, not half its note
    timed = ResultRow("light", "1,000 rows", "p50 11.06 ms · p90 15.49 ms", goal="p50 ≤ 10 ms", met="no", summary="light")
    assert summary_table([timed]).splitlines()[-1] == "| light | p50 11.06 | p50 ≤ 10 ms | no |"
    missing = [
        f"{path.name}:{node.lineno}"
        for path in sorted((ROOT / "bench").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ResultRow" and path.name != "__main__.py"
        if "summary" not in {k.arg for k in node.keywords}
    ]
    assert not missing, f"ResultRow without a summary name: {missing}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    summary = readme[readme.index("<!-- bench summary") : readme.index("<!-- end of bench summary")]
    assert "…" not in summary
