"""No job stranded by a dead runner (docs/heavyweight.md): an `alterflow sql` runner is killed with SIGKILL at
every step boundary and at seeded random moments; each time the job is orphaned (SHOW ALTER says
`no runner since ...`), RESUME (or the same ALTER again) drives it to the end, and the table equals
a model: every row exactly once, values converted. Afterwards the GC sweep finds no file the
catalog does not know. Two runners racing for one orphaned job: one drives it, the other gets one
clear line. On SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
import os
import pathlib
import random
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest

from alterflow.catalog.catalog import utcnow
from alterflow.catalog.garbage import GarbageCollection
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.engine.session import Session, StatementError
from alterflow.gc.file_sweep import OrphanAge, sweep
from alterflow.gc.gc_steps import abort_expired_loads
from alterflow.settings import Settings
from alterflow.store.warehouse_kinds import open_warehouse
from tests.support.catalog_rows import txn_state
from tests.support.heavy_jobs import short_leases, show_alter, sql, subprocess_env
from tests.support.process_signals import stop_outside_a_catalog_write

pytestmark = pytest.mark.spark

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
LEASE_S = 2.0  # short leases: an orphan shows within seconds
BOUNDARIES = ("after_start", "waiting_txn", "running", "tablet_2", "validating", "before_swap")
SEED = 20261123
TABLE = "CREATE TABLE k (id INT NOT NULL, v STRING, w INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"


class Model:
    """What the table must hold: rows by id, with the columns the ALTERs so far have made."""

    def __init__(self, rows: int):
        self.columns = ["id", "v", "w"]
        self.v_is_text = True
        self.rows = {i: {"id": i, "v": str(i), "w": i * 10} for i in range(1, rows + 1)}
        self.next_id = rows + 1

    @staticmethod
    def engine(n: int) -> str:
        """Step `n`'s engine: two steps on Spark, two on the local one, and so on, so both are
        killed, each resumed both ways (the doors alternate step by step)."""
        return ("spark", "local")[(n // 2) % 2]

    def statement(self, n: int) -> str:
        engine = self.engine(n)
        if self.v_is_text:
            return f'ALTER TABLE k MODIFY COLUMN v INT PROPERTIES ("engine" = "{engine}")'
        return f'ALTER TABLE k ADD COLUMN c{n} INT DEFAULT {n} PROPERTIES ("rewrite" = "true", "engine" = "{engine}")'

    def applied(self, n: int) -> None:
        """The ALTER of step `n` took effect."""
        if self.v_is_text:
            self.v_is_text = False
            for row in self.rows.values():
                row["v"] = int(row["v"])
        else:
            self.columns.append(f"c{n}")
            for row in self.rows.values():
                row[f"c{n}"] = n

    def insert(self, session: Session, count: int) -> None:
        """Rows loaded while the job is orphaned: they dual-write, and must be there once after it."""
        new = []
        for _ in range(count):
            i = self.next_id
            self.next_id += 1
            row = {"id": i, "v": str(i) if self.v_is_text else i, "w": i * 10}
            row.update({c: int(c[1:]) for c in self.columns[3:]})
            new.append(row)
            self.rows[i] = row

        def literal(value):
            return f"'{value}'" if isinstance(value, str) else str(value)

        values = ", ".join("(" + ", ".join(literal(r[c]) for c in self.columns) + ")" for r in new)
        sql(session, f"INSERT INTO k ({', '.join(self.columns)}) VALUES {values}")

    def expected(self) -> tuple:
        return tuple(tuple(self.rows[i][c] for c in self.columns) for i in sorted(self.rows))


def runner_env(session: Session, crash_at: str | None) -> dict[str, str]:
    env = subprocess_env(session.settings.home)
    env.update(
        ALTERFLOW_CATALOG_URL=session.settings.catalog_url,
        ALTERFLOW_LEASE_S=str(LEASE_S),
        ALTERFLOW_SPARK_MASTER="local[1]",
    )
    if crash_at:
        env["ALTERFLOW_CRASH_AT"] = crash_at
    return env


def spawn(session: Session, statement: str, crash_at: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [str(ALTERFLOW), "sql", "-e", statement],
        env=runner_env(session, crash_at),
        cwd=session.settings.home,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def job_recorded(session: Session, statement: str, proc: subprocess.Popen) -> float:
    """When the runner's job showed in the catalog (time.monotonic), or when the runner ended if it
    never did: a runner's life is measured from there, not from its process start, whose length
    (Python's imports) varies with the machine's load, so that a random kill lands inside a step."""
    while the_job(session, statement) is None and proc.poll() is None:
        time.sleep(0.05)
    return time.monotonic()


def kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have ended by itself
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)


def the_job(session: Session, statement: str):
    """The newest job of the statement, or None."""
    jobs = [j for j in session.catalog.jobs(session.catalog.table("k").id) if j.statement == statement]
    return jobs[-1] if jobs else None


def wait_until_orphaned(session: Session, job_id: int) -> dict:
    deadline = time.monotonic() + LEASE_S * 10 + 10
    while True:
        shown = [r for r in show_alter(session, "k") if r["JobId"] == job_id][0]
        if shown["Msg"].startswith("no runner since "):
            return shown
        assert time.monotonic() < deadline, f"job {job_id} never showed as orphaned: {shown}"
        time.sleep(0.2)


def finish_after_kill(session: Session, model: Model, n: int, statement: str, resume_with_alter: bool) -> str:
    """After the runner died: resume what it left (or redo what it never started); returns what
    was found. The model advances by the statement's effect."""
    job = the_job(session, statement)
    if job is None:  # killed before the job was recorded: nothing happened, run it again
        assert "FINISHED" in sql(session, statement)
        found = "no job"
    elif job.state == "FINISHED":
        found = "finished"
    else:
        assert job.state in ("PENDING", "WAITING_TXN", "RUNNING", "VALIDATING"), job
        shown = wait_until_orphaned(session, job.id)
        assert shown["State"] == job.state
        model.insert(session, 3)  # loads keep landing while nobody drives the job
        door = statement if resume_with_alter else "RESUME ALTER TABLE COLUMN FROM k"
        done = sql(session, door)
        assert f"job {job.id} FINISHED" in done, done
        found = job.state
    model.applied(n)
    return found


def converted_before(session: Session, job) -> dict:
    return HeavyJobs(session.catalog).converted(job.id) if job is not None else {}


def run_kill_loop(session: Session, random_kills: int) -> list[str]:
    sql(session, TABLE)
    model = Model(400)
    for chunk in range(0, 400, 100):
        sql(session, "INSERT INTO k VALUES " + ", ".join(f"({i}, '{i}', {i * 10})" for i in range(chunk + 1, chunk + 101)))
    rng = random.Random(SEED)
    outcomes = []
    # One run to the end on each engine first: how long a runner lives, so the random kills land
    # inside its life. Without random kills nothing needs the measure: the same two ALTERs run in
    # this process (the kills below are the runner processes under test).
    lives = {}
    for n in (0, 2):
        if not random_kills:
            assert "FINISHED" in sql(session, model.statement(n))
            model.applied(n)
            continue
        proc = spawn(session, model.statement(n))
        began = job_recorded(session, model.statement(n), proc)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and "FINISHED" in out, err
        lives[model.engine(n)] = time.monotonic() - began
        model.applied(n)
    plan = [("boundary", point) for point in BOUNDARIES] + [("random", None)] * random_kills
    for n, (how, point) in enumerate(plan, start=3):
        statement = model.statement(n)
        if how == "boundary":
            proc = spawn(session, statement, crash_at=point)
            began = job_recorded(session, statement, proc)
            _out, err = proc.communicate(timeout=300)
            assert proc.returncode == -signal.SIGKILL, f"{point}: the runner was not killed there ({proc.returncode}): {err}"
            label = point
            if point == "before_swap" and model.engine(n) in lives:
                # A whole life but the swap, measured after the first runner (the coldest one, its
                # JVM's first start): the random kills' window follows the shorter of the two.
                lives[model.engine(n)] = min(lives[model.engine(n)], time.monotonic() - began)
        else:
            delay = rng.uniform(0.1, 0.95 * lives[model.engine(n)])
            proc = spawn(session, statement)
            began = job_recorded(session, statement, proc)
            try:
                proc.wait(timeout=delay)
                _out, err = proc.communicate()
                assert proc.returncode == 0, err
                label = f"random {delay:.1f} s (finished first)"
                lives[model.engine(n)] = min(lives[model.engine(n)], time.monotonic() - began)  # a shorter life seen
            except subprocess.TimeoutExpired:
                kill_group(proc)
                label = f"random {delay:.1f} s"
        before = converted_before(session, the_job(session, statement))
        found = finish_after_kill(session, model, n, statement, resume_with_alter=(n % 2 == 0))
        job = the_job(session, statement)
        for tablet, record in before.items():  # converted tablets are not converted again
            assert HeavyJobs(session.catalog).converted(job.id)[tablet].txn_id == record.txn_id
        got = sql(session, f"SELECT {', '.join(model.columns)} FROM k ORDER BY id")
        assert got == model.expected(), f"after a kill at {label} (found {found}), the table is not the model"
        outcomes.append(f"{label}: {found}")
    return outcomes


def assert_no_unknown_files(session: Session) -> None:
    time.sleep(LEASE_S + 0.5)  # every killed runner's conversion transaction is past its lease
    abort_expired_loads(session.catalog, session.warehouse)
    now = utcnow()  # files no row names count whatever their age (and one of another catalog's would raise)
    swept = sweep(GarbageCollection(session.catalog), open_warehouse(session.warehouse, session.catalog), now, OrphanAge(now, timedelta(0)))
    assert swept.orphan_files == [] and swept.waiting_orphans == [], f"files the catalog does not know: {swept.orphan_files}"


def test_a_runner_killed_anywhere_is_resumed_and_the_table_equals_the_model(session, monkeypatch):
    short_leases(session, monkeypatch, LEASE_S)
    # Every step boundary (each engine killed there and resumed both ways, by RESUME and by the
    # same ALTER), then two kills at seeded random moments (one per engine: Spark's resumed by
    # RESUME, the local one's by the ALTER again) that land inside a step rather than between two.
    # The other two random pairs (local by RESUME, Spark by the ALTER) the boundary kills cover.
    # With the 6 on PostgreSQL, the race's, GC's and the load tests': well over 14 SIGKILLs in all.
    outcomes = run_kill_loop(session, random_kills=2)
    kills = [o for o in outcomes if "finished first" not in o]
    assert len(kills) >= 7, outcomes  # the 6 at the boundaries and at least one random one
    orphans = [o for o in kills if o.endswith(("RUNNING", "WAITING_TXN", "PENDING", "VALIDATING"))]
    assert len(orphans) >= 7, outcomes  # ... that left an orphan to resume
    assert_no_unknown_files(session)


@pytest.mark.postgres
def test_a_runner_killed_at_each_step_boundary_resumes_on_postgresql(pg_url, tmp_path, spark, monkeypatch):
    monkeypatch.setenv("ALTERFLOW_LEASE_S", str(LEASE_S))
    session = Session(
        Settings.from_env(
            {
                "ALTERFLOW_HOME": str(tmp_path / "home"),
                "ALTERFLOW_CATALOG_URL": pg_url,
                "ALTERFLOW_SPARK_MASTER": "local[2]",
                "ALTERFLOW_LEASE_S": str(LEASE_S),
            }
        )
    )
    outcomes = run_kill_loop(session, random_kills=0)
    assert [o.split(":")[1].strip() for o in outcomes] == [
        "PENDING",
        "WAITING_TXN",
        "RUNNING",
        "RUNNING",
        "VALIDATING",
        "VALIDATING",
    ], outcomes
    assert_no_unknown_files(session)


def test_two_runners_racing_for_an_orphaned_job_one_drives_it_and_the_other_gets_one_line(session, monkeypatch):
    short_leases(session, monkeypatch, LEASE_S)
    sql(session, TABLE)
    sql(session, "INSERT INTO k VALUES " + ", ".join(f"({i}, '{i}', {i})" for i in range(1, 201)))
    statement = "ALTER TABLE k MODIFY COLUMN v INT"
    proc = spawn(session, statement, crash_at="running")
    proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL
    job = the_job(session, statement)
    wait_until_orphaned(session, job.id)

    racers = [spawn(session, "RESUME ALTER TABLE COLUMN FROM k") for _ in range(2)]
    results = [(p.communicate(timeout=300), p.returncode) for p in racers]
    winners = [out for (out, _err), code in results if code == 0]
    losers = [err for (_out, err), code in results if code != 0]
    assert len(winners) == 1 and len(losers) == 1, results
    assert f"job {job.id} FINISHED" in winners[0]
    line = losers[0].strip()
    assert "\n" not in line, line
    assert line.startswith(f"error: RESUME ALTER TABLE COLUMN FROM k: job {job.id} is being driven by "), line
    assert "its lease expires in" in line
    assert sql(session, "SELECT count(*), sum(v) FROM k") == ((200, sum(range(1, 201))),)


def test_resume_of_a_job_driven_by_a_live_runner_is_refused_in_one_line(session, monkeypatch):
    """SIGSTOP stands for a slow runner: while its lease lives RESUME is refused; once it expires
    RESUME takes over, and the stopped runner, continued, stops without writing."""
    short_leases(session, monkeypatch, LEASE_S)
    sql(session, TABLE)
    sql(session, "INSERT INTO k VALUES " + ", ".join(f"({i}, '{i}', {i})" for i in range(1, 101)))
    statement = "ALTER TABLE k MODIFY COLUMN v INT"
    # Hold the job in WAITING_TXN with a load of this process, so the runner is caught there.
    info = session.catalog.table("k")
    held = session.catalog.begin_transaction(info.id, "a slow load", 3600)
    proc = spawn(session, statement)
    try:
        deadline = time.monotonic() + 120
        while (job := the_job(session, statement)) is None or job.state != "WAITING_TXN":
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        with pytest.raises(StatementError) as err:
            sql(session, "RESUME ALTER TABLE COLUMN FROM k")
        assert f"job {job.id} is being driven by " in str(err.value)
        stop_outside_a_catalog_write(proc.pid, session.settings.catalog_url)
        wait_until_orphaned(session, job.id)
        session.catalog.commit_transaction(held)
        assert f"job {job.id} FINISHED" in sql(session, "RESUME ALTER TABLE COLUMN FROM k")
        os.killpg(proc.pid, signal.SIGCONT)
        out, err_text = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            kill_group(proc)
    last = err_text.strip().splitlines()[-1]
    assert proc.returncode == 1 and last.startswith(f"error: alter job {job.id}: this runner lost its lease to "), (out, err_text)
    assert last.endswith("; it stopped without writing")
    assert sql(session, "SELECT count(*), sum(v) FROM k") == ((100, sum(range(1, 101))),)


def test_gc_resumes_an_orphaned_job_in_process_and_aborts_a_dead_load(session, spark, monkeypatch):
    from alterflow.gc.gc_runner import run_gc
    from alterflow.gc.summary import step_line

    short_leases(session, monkeypatch, LEASE_S)
    sql(session, TABLE)
    sql(session, "INSERT INTO k VALUES (1, '5', 1), (2, '6', 2)")
    statement = "ALTER TABLE k MODIFY COLUMN v INT"
    proc = spawn(session, statement, crash_at="waiting_txn")
    proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL
    dead_load = session.catalog.begin_transaction(session.catalog.table("k").id, "load that died", 3600, lease_s=LEASE_S, holder="x:1:y")
    job = the_job(session, statement)
    wait_until_orphaned(session, job.id)
    time.sleep(LEASE_S + 0.5)  # the dead load's lease too

    results = run_gc(session.catalog, session.warehouse, lambda: spark, retention_s=3600)
    assert results["abort_expired_loads"].expired_transaction_files == 0  # it had no files yet
    assert txn_state(session, dead_load) == "ABORTED"
    [resumed] = results["resume_orphaned_jobs"].jobs
    assert (resumed.job.job_id, resumed.outcome, resumed.job.state) == (job.id, "FINISHED", "WAITING_TXN")
    line = step_line("resume_orphaned_jobs", results["resume_orphaned_jobs"])
    assert line.startswith(f"resume_orphaned_jobs: 1 orphaned job resumed; job {job.id} on k (no runner since ")
    assert sql(session, "SELECT id, v FROM k ORDER BY id") == ((1, 5), (2, 6))
