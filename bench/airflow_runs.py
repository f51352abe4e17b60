"""DAG runs through Airflow (issue 12): a small heavyweight ALTER against a lightweight one, on the
same Airflow, triggered through the REST API as a user's tool would.

A throwaway Airflow (`make airflow`'s command: scheduler, dag-processor, triggerer and api-server,
LocalExecutor, in a temporary home on a free port; the e2e test's `LiveAirflow`) runs
`alterflow_schema_change`. Runs alternate: `ADD COLUMN` of a table (lightweight: one task, validate,
which commits it; docs/airflow.md#a-lightweight-change-in-one-task) and `MODIFY COLUMN v BIGINT` of a STRING column of a 10,000-row table
(heavyweight on the local engine: one task too, validate, which starts the job, waits for its
boundary, converts, checks with Great Expectations and swaps). A run's time is Airflow's own: from the run being queued to its end
(`queued_at` to `end_date`), so the client's polling does not count. Goal: heavy at most 2× light.
"""

from __future__ import annotations

import argparse
import datetime as dt
import pathlib
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

from bench import ResultRow, markdown_table, median, rows_text, verdict

FULL = {"rows": 10_000, "runs": 4}
QUICK = {"rows": 1_000, "runs": 1}
GOAL = 2.0
DAG = "alterflow_schema_change"
TABLE = "CREATE TABLE {name} (id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"


def _rows(count: int) -> pa.Table:
    ids = np.arange(count, dtype=np.int64)
    return pa.table({"id": ids, "grp": (ids % 7).astype(np.int32), "v": pa.array(ids.astype(str))})


def _when(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _timed_run(live, headers: dict, run_id: str, table: str, statement: str, timeout: float = 600) -> float:
    """Trigger one run and wait for it; its seconds from queued to end, by Airflow's clock."""
    conf = {"table": table, "statement": statement, "properties": {}}
    answer = live.call(
        "POST", f"/api/v2/dags/{DAG}/dagRuns", headers=headers, json={"dag_run_id": run_id, "logical_date": None, "conf": conf}
    )
    if answer.status_code != 200:
        raise RuntimeError(f"trigger {run_id}: {answer.status_code} {answer.text}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns/{run_id}", headers=headers).json()
        if run["state"] == "success":
            return (_when(run["end_date"]) - _when(run["queued_at"])).total_seconds()
        if run["state"] == "failed":
            raise RuntimeError(f"run {run_id} failed:\n{live.task_problems(run_id)}")
        time.sleep(0.25)
    raise RuntimeError(f"run {run_id} still {run['state']} after {timeout} s")


def timeline(live, headers: dict, run_id: str) -> str:
    """Each task of the run: when it was queued and started, and how long it ran, in seconds from
    the run being queued (where a run's time goes: hand-offs or work)."""
    run = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns/{run_id}", headers=headers).json()
    zero = _when(run["queued_at"])
    tasks = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns/{run_id}/taskInstances", headers=headers).json()["task_instances"]
    parts = []
    for ti in sorted((t for t in tasks if t.get("start_date")), key=lambda t: t["start_date"]):
        queued = (_when(ti["queued_when"]) - zero).total_seconds() if ti.get("queued_when") else float("nan")
        began = (_when(ti["start_date"]) - zero).total_seconds()
        ran = (_when(ti["end_date"]) - _when(ti["start_date"])).total_seconds() if ti.get("end_date") else float("nan")
        parts.append(f"{ti['task_id']} q{queued:.1f}/s{began:.1f}+{ran:.1f}")
    began = (_when(run["start_date"]) - zero).total_seconds() if run.get("start_date") else float("nan")
    return f"run began {began:.1f}, ended {(_when(run['end_date']) - zero).total_seconds():.1f}: " + ", ".join(parts)


def wait_for_dag(live, headers: dict, timeout: float = 240, dag: str = DAG) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live.check_running()
        if live.call("GET", f"/api/v2/dags/{dag}", headers=headers).status_code == 200:
            return
        time.sleep(1)
    raise RuntimeError(f"DAG {dag} not parsed after {timeout} s")


def run(quick: bool = False) -> list[ResultRow]:
    """A throwaway Airflow started for the runs (`measure`), stopped after them."""
    from tests.support.live_airflow import LiveAirflow  # the e2e test's harness (`python -m bench` runs from the repository root)

    with tempfile.TemporaryDirectory(prefix="alterflow-bench-airflow-") as base:
        live = LiveAirflow(pathlib.Path(base))
        live.start()
        try:
            return measure(live, quick)
        except BaseException:
            print(live.diagnostics(), file=sys.stderr)
            raise
        finally:
            live.stop()


def measure(live, quick: bool = False) -> list[ResultRow]:
    """The runs on `live`, a running Airflow (`tests.support.live_airflow.LiveAirflow`): the
    benchmark's own, or the live end-to-end test's, which measures once with --quick's sizes
    (so the benchmarks' smoke test starts no Airflow of its own)."""
    from alterflow.engine.session import Session
    from alterflow.settings import Settings

    sizes = QUICK if quick else FULL
    runs, count = sizes["runs"], sizes["rows"]
    warm_up = 0 if quick else 1  # a first run of each warms Airflow's and the OS's caches; --quick judges nothing
    last = runs + warm_up - 1
    session = Session(Settings.from_env(live.cli_env()))
    for i in range(runs + warm_up):
        for kind in ("heavy", "light"):
            list(session.run(TABLE.format(name=f"bench_{kind}{i}")))
            session.load(f"bench_{kind}{i}", _rows(count), label="bench", by_name=True)
    live.wait_healthy()
    headers = {"Authorization": f"Bearer {live.token()}"}
    wait_for_dag(live, headers)
    light, heavy = [], []
    for i in range(runs + warm_up):
        light_s = _timed_run(live, headers, f"bench_light_{i}", f"bench_light{i}", f"ALTER TABLE bench_light{i} ADD COLUMN n INT")
        heavy_s = _timed_run(live, headers, f"bench_heavy_{i}", f"bench_heavy{i}", f"ALTER TABLE bench_heavy{i} MODIFY COLUMN v BIGINT")
        print(f"  run {i}: light {light_s:.1f} s, heavy {heavy_s:.1f} s{' (warm-up)' if i < warm_up else ''}", flush=True)
        if i >= warm_up:
            light.append(light_s), heavy.append(heavy_s)
    print(f"  last light run: {timeline(live, headers, f'bench_light_{last}')}", flush=True)
    print(f"  last heavy run: {timeline(live, headers, f'bench_heavy_{last}')}", flush=True)
    jobs = session.catalog.jobs(session.catalog.table(f"bench_heavy{last}").id)
    assert jobs and jobs[-1].state == "FINISHED" and jobs[-1].kind == "HEAVY", jobs
    ratio = median(heavy) / median(light)
    print(f"  heavy DAG run {median(heavy):.1f} s, light DAG run {median(light):.1f} s: ratio {ratio:.2f}")
    return [
        ResultRow(
            "Airflow DAG run",
            f"heavy: {rows_text(count)}, MODIFY COLUMN v BIGINT (STRING), local engine",
            f"median {median(heavy):.1f} s queued→end ({runs} runs)",
            baseline=f"light DAG run (ADD COLUMN), same Airflow: {median(light):.1f} s",
            ratio=f"{ratio:.2f} (heavy/light)",
            goal=f"≤ {GOAL:g}×",
            reference="before issue 12: a 3-row heavy run took 1 min 07 s",
            met=verdict(ratio <= GOAL, quick),
            summary="Airflow DAG run, heavy / light",
        ),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    print(markdown_table(run(quick=parser.parse_args().quick)))
