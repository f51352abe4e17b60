"""The pieces of bench/fleet_load.py that need no fleet: the team fleet's DAG folder with Airflow's
floor DAG (a DAG of one task that does nothing), and the row that reads its runs."""

from __future__ import annotations

import pathlib

from bench.fleet_load import FLOOR_DAG, FLOOR_DAG_FILE, LIGHT, RunTime, _floor_row
from tests.support.live_airflow import dags_folder

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_the_floor_dag_is_one_task_that_does_nothing_beside_the_repositorys_dag_files(tmp_path):
    from airflow.dag_processing.dagbag import DagBag

    from alterflow.airflow.policy import LIGHT_FIRST_WEIGHT

    folder = dags_folder(tmp_path / "dags", written={f"{FLOOR_DAG}.py": FLOOR_DAG_FILE})  # as bench.fleet_load.fleet makes it
    ours = [path.name for path in (REPO / "dags").glob("*.py")]
    assert sorted(path.name for path in folder.glob("*.py")) == sorted([*ours, f"{FLOOR_DAG}.py"])
    bag = DagBag(dag_folder=str(folder / f"{FLOOR_DAG}.py"))
    assert not bag.import_errors, bag.import_errors
    (task,) = bag.dags[FLOOR_DAG].tasks
    assert task.priority_weight == LIGHT_FIRST_WEIGHT  # as a light ALTER's first task: the same place in line
    assert task.python_callable() is None


def test_the_floor_row_reads_the_p99_under_load_against_the_idle_p50_and_counts_failed_runs():
    loaded = [RunTime(f"floor_{n}", "", LIGHT, float(n + 1), "success", 0.0) for n in range(4)]
    loaded.append(RunTime("floor_4", "", LIGHT, 30.0, "failed", 0.0))
    row = _floor_row(loaded, idle=[0.5, 0.5, 1.0], light_ratio=6.5)
    assert row.result == "p50 2.5 s · p99 4.0 s trigger→end"  # the failed run's time is not counted
    assert row.ratio == "7.94 (p99 loaded/p50 idle; the light ALTER's 6.50)"  # 3.97 / 0.5
    assert "(5 runs, 1 failed)" in row.case
    assert row.goal.startswith("—") and row.met == "—"  # context: judged nothing, so not in the README's summary
