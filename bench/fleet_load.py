"""A team's load on a fleet (issue 39), through Airflow on the CeleryExecutor: `make airflow
AIRFLOW_EXECUTOR=celery`'s processes (deploy/celery_fleet.py) with Celery workers on a Redis of the
benchmark's own, Airflow's metadata and alterflow's catalog in PostgreSQL (the machine's server, a
schema of the benchmark's own), ALTERs triggered through the REST API as a team's tools trigger them.

- **Idle**: light ALTERs (ADD COLUMN) one after another on the idle fleet (two workers): the light
  DAG run's idle p50.
- **Under load**: `tables` tables; loads land in every table throughout (LOADERS threads, each
  loading LOAD_ROWS new rows into its tables in turn through the Python API, as an ingest service
  would); and 50 ALTERs (20 tables), light and heavy mixed (`plans`): each table's ALTERs one after
  another, as a migration tool applies a table's changes, every table at once. The heavy ALTERs
  convert on the local engine, in the worker (small tables: `engine` auto).
- A run's time: from the harness's trigger request to the run's end (Airflow's `end_date`, the
  same host's clock); per kind p50 and p99.
- At the end: every run succeeded, every table holds each row once (count, distinct ids and sum
  of ids against the loads that committed: rows lost), every job FINISHED, no lease held.
- **Two workers against one**: two tables' heavy ALTERs (MODIFY COLUMN of a `speed_rows`-row table
  each, local engine) triggered at once, on a fleet with one Celery worker of one task slot and
  on one with two such workers: from the first trigger to the last run's end, the median of
  `speed_trials` pairs (two new tables each).

Goals (issue 39): light p99 under load ≤ 3× idle p50; 0 rows lost, 0 jobs stuck, 0 leases held;
two workers ≤ 0.65× one (two cores: both conversions share them, docs/benchmarks.md).

`measure_team_load` is also the fleet test's (tests/e2e/test_airflow_fleet.py), which checks its
end state and judges no time.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import pathlib
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from bench import ResultRow, markdown_table, median, percentile, rows_text, verdict
from bench.airflow_runs import timeline, wait_for_dag

DAG = "alterflow_schema_change"
FULL = {"tables": 20, "rows": 20_000, "idle_runs": 7, "burst": 10, "burst_trials": 3, "speed_rows": 1_000_000, "speed_trials": 3}
QUICK = {"tables": 4, "rows": 1_000, "idle_runs": 2, "burst": 4, "burst_trials": 1, "speed_rows": 20_000, "speed_trials": 1}
LIGHT_GOAL = 3.0  # light p99 under load / idle p50
SPEED_GOAL = 0.65  # two workers / one
TEAM_SLOTS = 4  # task slots a worker under the team load: `make airflow`'s Celery default (deploy/celery_fleet.py)
LOADERS = 2
LOAD_ROWS = 100
LOAD_PAUSE_S = 1.0  # between two loads of one loader: each table gets a load about every 10 s (20 tables)
TABLE = "CREATE TABLE {name} (id BIGINT NOT NULL, v INT, note STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"
LIGHT, HEAVY = "light", "heavy"
# Airflow's own floor: a DAG of one task that does nothing, in the team fleet's DAG folder beside
# alterflow's, triggered every FLOOR_EVERY_S while the team's ALTERs run (and one at a time idle):
# how far the same load slows a run that holds no alterflow code (`run`, docs/benchmarks.md).
FLOOR_DAG = "alterflow_bench_noop"
FLOOR_EVERY_S = 5.0
FLOOR_DAG_FILE = f"""import pendulum
from airflow.sdk import dag, task


@dag(dag_id="{FLOOR_DAG}", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False,
     max_active_runs=100_000, max_active_tasks=100_000, tags=["alterflow-bench"])
def noop():
    @task(priority_weight=5, weight_rule="absolute")  # a light ALTER's first task's weight (alterflow.airflow.policy)
    def nothing():
        return None

    nothing()


noop()
"""


@dataclass(frozen=True)
class Step:
    kind: str  # LIGHT or HEAVY
    statement: str


@dataclass(frozen=True)
class RunTime:
    run_id: str
    table: str
    kind: str
    seconds: float  # trigger request to the run's end
    state: str
    ended_at: float  # the run's end, seconds since the epoch


@dataclass
class TeamLoad:
    """What `measure_team_load` saw."""

    runs: list[RunTime]
    loads: dict[str, int]  # loads committed per table
    load_errors: list[str]
    tables_wrong: dict[str, str]  # table -> what it holds, for each table whose rows differ from the model
    jobs_not_finished: list[str]
    leases_held: list[str]
    seconds: float

    def of(self, kind: str) -> list[float]:
        return [run.seconds for run in self.runs if run.kind == kind and run.state == "success"]

    @property
    def failed_runs(self) -> list[str]:
        return [run.run_id for run in self.runs if run.state != "success"]

    def problems(self) -> list[str]:
        """One line per thing that went wrong: a failed run or load, a table's rows, a stuck job, a held lease."""
        lines = [f"run {run_id} failed" for run_id in self.failed_runs] + [f"load {error}" for error in self.load_errors]
        lines += [f"table {table}: {rows}" for table, rows in self.tables_wrong.items()]
        return lines + self.jobs_not_finished + self.leases_held


def plans(tables: int) -> dict[str, list[Step]]:
    """Each table's ALTERs in order: the first half of the tables light, heavy, light; the rest
    heavy, light (20 tables: 30 light and 20 heavy, 50 ALTERs). Loads keep their columns (id, v,
    note): the added columns are nullable, and v's values (below 30,000) fit SMALLINT."""
    by_table = {}
    for number in range(1, tables + 1):
        name = f"team{number}"
        add_a1 = Step(LIGHT, f"ALTER TABLE {name} ADD COLUMN a1 INT")
        narrow = Step(HEAVY, f"ALTER TABLE {name} MODIFY COLUMN v SMALLINT")  # every value checked and rewritten
        if number <= tables // 2:
            by_table[name] = [add_a1, narrow, Step(LIGHT, f"ALTER TABLE {name} ADD COLUMN a2 STRING")]
        else:
            by_table[name] = [narrow, add_a1]
    return by_table


def _rows(first_id: int, count: int) -> pa.Table:
    ids = np.arange(first_id, first_id + count, dtype=np.int64)
    return pa.table({"id": ids, "v": (ids % 30_000).astype(np.int32), "note": pa.array(np.char.add("n", ids.astype(str)))})


def _when(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Runs:
    """Triggers runs of the schema-change DAG and sees them end: one listing a second of the DAG's
    runs that ended since the oldest run in flight was triggered (not one request per run, nor
    every run the load has made)."""

    def __init__(self, live, headers: dict, dag: str = DAG):
        self.live, self.headers, self.dag = live, headers, dag
        self.in_flight: dict[str, tuple[str, Step, float]] = {}  # run id -> table, step, trigger time
        self.ended: list[RunTime] = []

    def trigger(self, run_id: str, table: str, step: Step) -> None:
        body = {"dag_run_id": run_id, "logical_date": None, "conf": {"statement": step.statement}}
        triggered_at = time.time()
        answer = self.live.call("POST", f"/api/v2/dags/{self.dag}/dagRuns", headers=self.headers, json=body)
        if answer.status_code not in (200, 409):  # 409: a repeated request found the run its first one made
            raise RuntimeError(f"trigger {run_id}: {answer.status_code} {answer.text}")
        self.in_flight[run_id] = (table, step, triggered_at)

    def _ended_since(self, since: float) -> dict[str, dict]:
        """The runs that ended (succeeded or failed) at `since` or later, by run id: only those,
        so that the harness's poll costs the api-server (on the same cores as the fleet) little
        however many runs the load has made."""
        runs, offset = {}, 0
        window = {"end_date_gte": dt.datetime.fromtimestamp(since, dt.UTC).isoformat(), "state": ["success", "failed"]}
        while True:
            page = self.live.call(
                "GET", f"/api/v2/dags/{self.dag}/dagRuns", headers=self.headers, params={"limit": 100, "offset": offset, **window}
            ).json()
            runs.update((run["dag_run_id"], run) for run in page["dag_runs"])
            offset += len(page["dag_runs"])
            if not page["dag_runs"] or offset >= page["total_entries"]:
                return runs

    def wait_for_some(self, timeout: float) -> list[RunTime]:
        """Until at least one run in flight has ended: the runs that ended."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.live.check_running()
            since = min(triggered_at for _table, _step, triggered_at in self.in_flight.values()) - 5  # each ends after its trigger
            states, ended = self._ended_since(since), []
            for run_id, (table, step, triggered_at) in list(self.in_flight.items()):
                run = states.get(run_id)
                if run is not None and run["state"] in ("success", "failed") and run.get("end_date"):
                    del self.in_flight[run_id]
                    end = _when(run["end_date"])
                    ended.append(RunTime(run_id, table, step.kind, end - triggered_at, run["state"], end))
            if ended:
                self.ended.extend(ended)
                return ended
            time.sleep(1)
        raise RuntimeError(f"runs still going after {timeout} s: {sorted(self.in_flight)}")


class Loads:
    """LOADERS threads loading into the tables until `stop` is set; what each table got."""

    def __init__(self, settings, tables: list[str], first_id: int):
        self.settings, self.tables, self.first_id = settings, tables, first_id
        self.committed = dict.fromkeys(tables, 0)
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._load, args=(tables[n::LOADERS],)) for n in range(LOADERS)]

    def __enter__(self) -> Loads:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(300)
            if thread.is_alive():
                self.errors.append(f"a loader still loading 300 s after the end: {thread.name}")

    def _load(self, tables: list[str]) -> None:
        from alterflow.engine.session import Session

        try:
            session = Session(self.settings)
            while not self.stop.is_set():
                for table in tables:
                    self._load_one(session, table)
                    if self.stop.wait(LOAD_PAUSE_S):
                        return
        except BaseException as exc:  # a loader that stops early is reported, never silent
            self.errors.append(f"a loader stopped: {_one_line(exc)}")

    def _load_one(self, session, table: str) -> None:
        n = self.committed[table]
        try:
            session.load(table, _rows(self.first_id + n * LOAD_ROWS, LOAD_ROWS), label=f"{table} load {n + 1}", by_name=True)
        except Exception as exc:  # noqa: BLE001 - every error is reported; the load is not counted
            self.errors.append(f"{table} load {n + 1}: {_one_line(exc)}")
        else:
            self.committed[table] = n + 1


class FloorProbe:
    """While entered: a run of FLOOR_DAG triggered every FLOOR_EVERY_S (its own thread); `ended`
    then waits for them all and returns them."""

    def __init__(self, live, headers: dict):
        self.runs = Runs(live, headers, dag=FLOOR_DAG)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._trigger, name="floor probe")
        self.errors: list[str] = []

    def __enter__(self) -> FloorProbe:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stop.set()
        self.thread.join(60)
        if self.thread.is_alive():  # `ended` would read its runs while it still adds to them
            self.errors.append("still triggering 60 s after the team load's ALTERs ended (a trigger request unanswered)")

    def _trigger(self) -> None:
        number = 0
        while not self.stop.is_set():
            try:
                self.runs.trigger(f"floor_{number}", "", Step(LIGHT, ""))
            except Exception as exc:  # noqa: BLE001 - reported with the result, never silent
                self.errors.append(_one_line(exc))
                return
            number += 1
            self.stop.wait(FLOOR_EVERY_S)

    def ended(self, timeout: float = 600) -> list[RunTime]:
        if self.errors:
            raise RuntimeError(f"the floor probe stopped: {self.errors[0]}")
        while self.runs.in_flight:
            self.runs.wait_for_some(timeout)
        return self.runs.ended


def _one_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _alter_all(runs: Runs, by_table: dict[str, list[Step]], timeout: float) -> None:
    """Each table's steps one after another, every table at once: a table's next ALTER is triggered
    once its previous run ended."""
    waiting = {table: deque(steps) for table, steps in by_table.items()}
    numbers = dict.fromkeys(by_table, 0)

    def next_of(table: str) -> None:
        if waiting[table]:
            numbers[table] += 1
            runs.trigger(f"team_{table}_{numbers[table]}", table, waiting[table].popleft())

    for table in by_table:
        next_of(table)
    deadline = time.monotonic() + timeout
    while runs.in_flight:
        for ended in runs.wait_for_some(max(1.0, deadline - time.monotonic())):
            if ended.state == "success":
                next_of(ended.table)
            else:  # its job may be left unfinished, and the table's next run would wait for it
                waiting[ended.table].clear()


def _checked(session, by_table: dict[str, list[Step]], rows: int, loads: Loads) -> dict[str, str]:
    """Each table whose rows differ from the model (ids 1 to `rows`, then LOAD_ROWS new ids per
    committed load, each once): what it holds instead."""
    wrong = {}
    for table in by_table:
        expected = rows + loads.committed[table] * LOAD_ROWS
        (result,) = session.run(f"SELECT count(*), count(DISTINCT id), sum(id), min(id), sum(v), count(note) FROM {table}")
        got = tuple(result.rows[0])
        v_sum = sum(i % 30_000 for i in range(1, expected + 1))  # the rewrites keep every value
        if got != (expected, expected, expected * (expected + 1) // 2, 1, v_sum, expected):
            wrong[table] = f"count, distinct ids, sum, min, sum(v), count(note) {got}: expected ids 1 to {expected} once, v = id % 30000"
    return wrong


def _ends(catalog) -> tuple[list[str], list[str]]:
    """Jobs not FINISHED, and leases still held (jobs' and loads' transactions)."""
    import sqlalchemy

    from alterflow.catalog.records import utcnow

    jobs = catalog.jobs()
    stuck = [f"job {job.id} {job.state}" for job in jobs if job.state != "FINISHED"]
    held = [f"job {job.id} by {job.lease_holder}" for job in jobs if job.lease_expires_at is not None and job.lease_expires_at > utcnow()]
    with catalog.engine.connect() as conn:
        open_loads = conn.execute(sqlalchemy.text("SELECT id, label, lease_holder FROM af_transactions WHERE state = 'PREPARE'")).all()
    held += [f"load transaction {txn_id} ({label}) left open (PREPARE) by {holder}" for txn_id, label, holder in open_loads]
    return stuck, held


def _wait_for_gc(live, headers: dict, timeout: float) -> None:
    """Until no `alterflow_gc` run is queued or running: the hourly GC run that the fleet's start
    or an hour's turn began holds its compaction's transaction until it commits, and the end state
    counts the leases left once everything ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live.check_running()
        params = {"state": ["queued", "running"], "limit": 1}
        answer = live.call("GET", "/api/v2/dags/alterflow_gc/dagRuns", headers=headers, params=params)
        if answer.status_code == 200 and answer.json()["total_entries"] == 0:
            return
        time.sleep(1)
    raise RuntimeError(f"an alterflow_gc run still going after {timeout} s")


def idle_light_runs(live, headers: dict, session, count: int) -> list[float]:
    """`count` light ALTERs one after another on the idle fleet, after one to warm it: seconds each."""
    list(session.run(TABLE.format(name="idle")))
    steps = [(f"idle_{number}", "idle", Step(LIGHT, f"ALTER TABLE idle ADD COLUMN c{number} INT")) for number in range(count + 1)]
    return _one_at_a_time(Runs(live, headers), steps)


def idle_floor_runs(live, headers: dict, count: int) -> list[float]:
    """`count` runs of FLOOR_DAG one after another on the idle fleet, after one to warm it: seconds each."""
    steps = [(f"floor_idle_{number}", "", Step(LIGHT, "")) for number in range(count + 1)]
    return _one_at_a_time(Runs(live, headers, dag=FLOOR_DAG), steps)


def _one_at_a_time(runs: Runs, steps: list[tuple[str, str, Step]]) -> list[float]:
    """Each (run id, table, step) triggered once the run before it ended; every run must succeed.
    The seconds of each but the first, which warms the fleet."""
    for run_id, table, step in steps:
        runs.trigger(run_id, table, step)
        runs.wait_for_some(600)
    assert not [run for run in runs.ended if run.state != "success"], runs.ended
    return [run.seconds for run in runs.ended[1:]]


def _machine_busy_s() -> float | None:
    """CPU seconds all of this machine's cores have spent busy since boot (Linux's /proc/stat), or
    None where there is no such file."""
    try:
        fields = pathlib.Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Burst:
    """`light_burst`'s trials: the ALTERs of each, each trial's slowest run, all runs' seconds, and
    the machine's busy CPU seconds a light ALTER (None without /proc/stat)."""

    count: int
    slowest: list[float]
    seconds: list[float]
    cpu_per_alter: float | None


def light_burst(live, headers: dict, session, count: int, trials: int) -> Burst:
    """`count` light ALTERs triggered at once on `count` tables of an otherwise idle fleet, `trials`
    times: the floor under the team load's own first burst (its first ALTER on each table at once),
    with no heavy ALTER and no load beside them: what the machine's cores allow."""
    for number in range(count):
        list(session.run(TABLE.format(name=f"burst{number}")))
    slowest, seconds, busy = [], [], []
    for trial in range(trials):
        time.sleep(3)  # the last trial's task slots back
        runs, busy_before = Runs(live, headers), _machine_busy_s()
        for number in range(count):
            runs.trigger(f"burst_{trial}_{number}", f"burst{number}", Step(LIGHT, f"ALTER TABLE burst{number} ADD COLUMN b{trial} INT"))
        while runs.in_flight:
            runs.wait_for_some(600)
        busy_after = _machine_busy_s()
        if busy_before is not None and busy_after is not None:
            busy.append((busy_after - busy_before) / count)
        assert all(run.state == "success" for run in runs.ended), runs.ended
        slowest.append(max(run.seconds for run in runs.ended))
        seconds += [run.seconds for run in runs.ended]
    return Burst(count, slowest, seconds, median(busy) if busy else None)


def measure_team_load(live, tables: int, rows: int, beside: contextlib.AbstractContextManager | None = None) -> TeamLoad:
    """The team's load on `live` (a running fleet, `tests.support.live_airflow.LiveAirflow`);
    `beside` (a `FloorProbe`) is entered while its ALTERs run."""
    from alterflow.engine.session import Session
    from alterflow.settings import Settings

    settings = Settings.from_env(live.cli_env())
    session = Session(settings)
    by_table = plans(tables)
    for table in by_table:
        list(session.run(TABLE.format(name=table)))
        session.load(table, _rows(1, rows), label=f"{table} first", by_name=True)
    headers = {"Authorization": f"Bearer {live.token()}"}
    runs = Runs(live, headers)
    started = time.monotonic()
    with Loads(settings, list(by_table), first_id=rows + 1) as loads, beside or contextlib.nullcontext():
        _alter_all(runs, by_table, timeout=1500)
    seconds = time.monotonic() - started
    _wait_for_gc(live, headers, timeout=900)
    catalog = session.catalog
    stuck, held = _ends(catalog)
    heavy_jobs = sum(1 for job in catalog.jobs() if job.kind == "HEAVY")
    heavy_steps = sum(step.kind == HEAVY for steps in by_table.values() for step in steps)
    if heavy_jobs != heavy_steps:  # the plan's kinds are the planner's: a light step made a job, or a heavy one none
        kinds = [(job.statement, job.kind) for job in catalog.jobs()]
        raise RuntimeError(f"{heavy_steps} heavy ALTERs made {heavy_jobs} heavy jobs: {kinds}")
    return TeamLoad(runs.ended, loads.committed, loads.errors, _checked(session, by_table, rows, loads), stuck, held, seconds)


@contextlib.contextmanager
def fleet(workers: int, concurrency: int, floor_dag: bool = False) -> Iterator:
    """A Celery fleet of `workers` workers of `concurrency` task slots each, on a Redis and a
    catalog schema of its own; stopped, and both removed, afterwards. With `floor_dag`, its DAG
    folder holds FLOOR_DAG beside the repository's DAG files."""
    import shutil

    from bench.light_alter import postgres_schema
    from tests.support.live_airflow import LiveAirflow, dags_folder  # `python -m bench` runs from the repository root
    from tests.support.private_redis import Redis

    if shutil.which("redis-server") is None:
        raise RuntimeError("the fleet benchmark needs redis-server (Debian's redis-server package; make redis)")
    with contextlib.ExitStack() as stack:
        base = stack.enter_context(tempfile.TemporaryDirectory(prefix="alterflow-bench-fleet-"))
        catalog_url = stack.enter_context(postgres_schema())
        if catalog_url is None:
            raise RuntimeError("the fleet benchmark needs PostgreSQL (ALTERFLOW_BENCH_PG_URL) for the catalog and Airflow")
        from alterflow.catalog.database import close_engine

        stack.callback(close_engine, catalog_url)
        redis = Redis(pathlib.Path(base) / "redis")
        stack.callback(redis.stop)
        redis.start()
        env = {"ALTERFLOW_CATALOG_URL": catalog_url, "ALTERFLOW_CELERY_BROKER": redis.url}
        env["AIRFLOW__CELERY__WORKER_CONCURRENCY"] = str(concurrency)
        dags = dags_folder(pathlib.Path(base) / "dags", written={f"{FLOOR_DAG}.py": FLOOR_DAG_FILE}) if floor_dag else None
        live = LiveAirflow(pathlib.Path(base), executor="celery", workers=workers, extra_env=env, dags_folder=dags)
        stack.callback(live.stop)
        live.start()
        try:
            live.wait_healthy()
            yield live
        except BaseException:
            print(live.diagnostics(), file=sys.stderr)
            raise


def heavy_pair_seconds(live, rows: int, trials: int) -> list[float]:
    """Two tables' heavy ALTERs triggered at once on `live`, `trials` times (two new tables each
    time): from the first trigger to the last end, each time."""
    from alterflow.engine.session import Session
    from alterflow.settings import Settings

    session = Session(Settings.from_env(live.cli_env()))
    headers = {"Authorization": f"Bearer {live.token()}"}
    wait_for_dag(live, headers)
    seconds = []
    for trial in range(1, trials + 1):
        names = (f"pair{trial}a", f"pair{trial}b")
        for name in names:
            list(session.run(TABLE.format(name=name)))
            session.load(name, _rows(1, rows), label="first", by_name=True)
        runs = Runs(live, headers)
        started = time.time()
        for name in names:
            runs.trigger(f"pair_{name}", name, Step(HEAVY, f'ALTER TABLE {name} MODIFY COLUMN v SMALLINT PROPERTIES ("engine" = "local")'))
        while runs.in_flight:
            runs.wait_for_some(1800)
        assert all(run.state == "success" for run in runs.ended), runs.ended
        seconds.append(max(run.ended_at for run in runs.ended) - started)
    return seconds


def _team_rows(team: TeamLoad, idle: list[float], quick: bool) -> list[ResultRow]:
    light, heavy = team.of(LIGHT), team.of(HEAVY)
    idle_p50, light_p99 = median(idle), percentile(light, 99)
    ratio = light_p99 / idle_p50
    load_count = sum(team.loads.values())
    case = (
        f"{len(team.runs)} ALTERs ({len(light)} light, {len(heavy)} heavy) on {len(team.loads)} tables, "
        f"{load_count} loads landing throughout; 2 Celery workers × {TEAM_SLOTS} slots"
    )
    wrong = len(team.tables_wrong) + len(team.load_errors) + len(team.failed_runs)
    ends = (
        f"{wrong}/{len(team.jobs_not_finished)}/{len(team.leases_held)} (tables wrong or runs and loads failed / jobs stuck / leases held)"
    )
    return [
        ResultRow(
            "fleet load: light ALTER",
            case,
            f"p50 {median(light):.1f} s · p99 {light_p99:.1f} s trigger→end",
            baseline=f"idle p50 {idle_p50:.1f} s ({len(idle)} runs, same fleet)",
            ratio=f"{ratio:.2f} (p99 loaded/p50 idle)",
            goal=f"≤ {LIGHT_GOAL:g}×",
            met=verdict(ratio <= LIGHT_GOAL, quick),
            summary="fleet: light p99 loaded / idle p50",
        ),
        ResultRow(
            "fleet load: heavy ALTER",
            case + ", local engine",
            f"p50 {median(heavy):.1f} s · p99 {percentile(heavy, 99):.1f} s trigger→end; all {team.seconds:.0f} s",
            goal="— (shown for context)",
            summary="fleet: heavy ALTER",
        ),
        ResultRow(
            "fleet load: end state",
            case,
            ends,
            goal="0/0/0",
            met=verdict(wrong == 0 and not team.jobs_not_finished and not team.leases_held, quick),
            summary="fleet: wrong / stuck / held",
        ),
    ]


def _floor_row(loaded: list[RunTime], idle: list[float], light_ratio: float) -> ResultRow:
    """Airflow's own floor under the team load: FLOOR_DAG's runs (one task that does nothing) beside
    the team's ALTERs, against its idle p50; what the light ALTER's goal is measured against."""
    seconds = [run.seconds for run in loaded if run.state == "success"]
    failed = len(loaded) - len(seconds)
    p99 = percentile(seconds, 99)
    return ResultRow(
        "fleet load: Airflow's floor",
        f"a DAG of one task that does nothing, triggered every {FLOOR_EVERY_S:g} s while the team load's ALTERs run "
        f"({len(loaded)} runs{f', {failed} failed' if failed else ''}), same fleet",
        f"p50 {median(seconds):.1f} s · p99 {p99:.1f} s trigger→end",
        baseline=f"idle p50 {median(idle):.1f} s ({len(idle)} runs, same fleet)",
        ratio=f"{p99 / median(idle):.2f} (p99 loaded/p50 idle; the light ALTER's {light_ratio:.2f})",
        goal="— (context: the light ALTER's ratio on a run that holds no alterflow code)",
        summary="fleet: Airflow's no-op task, p99 loaded / idle p50",
    )


def _burst_row(burst: Burst, idle: list[float]) -> ResultRow:
    count = burst.count  # ALTERs a trial
    cpu = f"; the machine busy {burst.cpu_per_alter:.2f} CPU-s an ALTER" if burst.cpu_per_alter is not None else ""
    return ResultRow(
        "fleet: light ALTERs at once, nothing else",
        f"{count} light ALTERs triggered at once on {count} tables of the idle fleet (2 Celery workers × {TEAM_SLOTS} slots), "
        f"no heavy ALTER, no load; {len(burst.slowest)} trials",
        f"slowest run p50 {median(burst.slowest):.1f} s (trials {', '.join(f'{s:.1f}' for s in burst.slowest)}); "
        f"all runs p50 {median(burst.seconds):.1f} s{cpu}",
        baseline=f"idle p50 {median(idle):.1f} s (one at a time)",
        ratio=f"{median(burst.slowest) / median(idle):.2f} (slowest/idle p50)",
        goal="— (context: the floor under the team load's first burst, its first ALTER on each table at once)",
        summary="fleet: light ALTERs at once, nothing else",
    )


def _speed_row(one: list[float], two: list[float], rows: int, quick: bool) -> ResultRow:
    ratio = median(two) / median(one)
    return ResultRow(
        "fleet: two workers",
        f"two tables' heavy ALTERs at once, {rows_text(rows)} each, local engine; workers of 1 slot; median of {len(two)}",
        f"{median(two):.1f} s on 2 workers",
        baseline=f"1 worker: {median(one):.1f} s",
        ratio=f"{ratio:.2f} (two/one)",
        goal=f"≤ {SPEED_GOAL:g}×",
        met=verdict(ratio <= SPEED_GOAL, quick),
        summary="fleet: 2 workers / 1, heavy",
    )


def run(quick: bool = False) -> list[ResultRow]:
    sizes = QUICK if quick else FULL
    with fleet(workers=2, concurrency=TEAM_SLOTS, floor_dag=True) as live:
        headers = {"Authorization": f"Bearer {live.token()}"}
        wait_for_dag(live, headers)
        from alterflow.engine.session import Session
        from alterflow.settings import Settings

        session = Session(Settings.from_env(live.cli_env()))
        idle = idle_light_runs(live, headers, session, sizes["idle_runs"])
        print(f"  idle light runs: {', '.join(f'{s:.1f}' for s in idle)} s", flush=True)
        wait_for_dag(live, headers, dag=FLOOR_DAG)
        floor_idle = idle_floor_runs(live, headers, sizes["idle_runs"])
        print(f"  idle runs of a no-op task: {', '.join(f'{s:.1f}' for s in floor_idle)} s", flush=True)
        burst = light_burst(live, headers, session, sizes["burst"], sizes["burst_trials"])
        print(f"  {sizes['burst']} light ALTERs at once, slowest: {', '.join(f'{s:.1f}' for s in burst.slowest)} s", flush=True)
        floor = FloorProbe(live, headers)
        team = measure_team_load(live, sizes["tables"], sizes["rows"], beside=floor)
        floor_loaded = floor.ended()
        slowest = max((run for run in team.runs if run.kind == LIGHT), key=lambda run: run.seconds)
        print(f"  slowest light run, {slowest.run_id}: {timeline(live, headers, slowest.run_id)}", flush=True)
    print(f"  team load: {len(team.runs)} runs in {team.seconds:.0f} s, {sum(team.loads.values())} loads", flush=True)
    for problem in team.problems():
        print(f"  wrong: {problem}", flush=True)
    light_ratio = percentile(team.of(LIGHT), 99) / median(idle)
    rows = [*_team_rows(team, idle, quick), _floor_row(floor_loaded, floor_idle, light_ratio), _burst_row(burst, idle)]
    seconds = {}
    for workers in (1, 2):
        with fleet(workers=workers, concurrency=1) as live:
            seconds[workers] = heavy_pair_seconds(live, sizes["speed_rows"], sizes["speed_trials"])
        print(f"  two heavy ALTERs on {workers} worker(s): {', '.join(f'{s:.1f}' for s in seconds[workers])} s", flush=True)
    return [*rows, _speed_row(seconds[1], seconds[2], sizes["speed_rows"], quick)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    print(markdown_table(run(quick=parser.parse_args().quick)))
