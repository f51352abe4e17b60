"""A load through Spark killed with SIGKILL (its driver, its JVM and its Python workers at once):
in the middle of its tasks, at each step boundary after them, and at a seeded random moment. Nothing
becomes visible, nobody edits the catalog: once the load's lease expires, GC aborts its transaction
and removes what it staged and moved, and the load run again gives every row exactly once."""

from __future__ import annotations

import os
import pathlib
import random
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from alterflow.catalog.models import DataFileRow, TransactionRow
from alterflow.engine.session import Session
from alterflow.gc.gc_runner import run_gc
from alterflow.load.inputs import open_input
from tests.support.catalog_rows import txn_state
from tests.support.process_signals import stop_outside_a_catalog_write
from tests.support.statements import sql

pytestmark = pytest.mark.spark

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
LEASE_S = 3.0
ROWS = 600_000
BEFORE = ((-2, "before"), (-1, "before"))


@pytest.fixture
def big_csv(tmp_path) -> pathlib.Path:
    path = tmp_path / "big.csv"
    pacsv.write_csv(pa.table({"id": pa.array(range(ROWS), pa.int64()), "v": pa.array([f"v{i}" for i in range(ROWS)])}), path)
    return path


@pytest.fixture
def table_b(session):
    sql(session, "CREATE TABLE b (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4")
    sql(session, "INSERT INTO b VALUES (-1, 'before'), (-2, 'before')")
    return session


def spawn_load(session: Session, path: pathlib.Path, crash_at: str | None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(
        ALTERFLOW_HOME=str(session.settings.home),
        ALTERFLOW_LEASE_S=str(LEASE_S),
        ALTERFLOW_SPARK_MASTER="local[2]",
        ALTERFLOW_TARGET_FILE_MB="1",  # files roll while the tasks run
    )
    if crash_at:
        env["ALTERFLOW_CRASH_AT"] = crash_at
    return subprocess.Popen(
        [str(ALTERFLOW), "load", "b", str(path), "--engine", "spark"],
        env=env,
        cwd=session.settings.home,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def load_txn(session: Session) -> tuple[int, str] | None:
    with session.catalog.db_session() as s:
        found = s.query(TransactionRow.id, TransactionRow.state).filter(TransactionRow.label.like("load %")).first()
    return None if found is None else (found[0], found[1])


def staged_files(session: Session) -> list[pathlib.Path]:
    return sorted(session.warehouse.rglob("_load/l*/*.parquet"))


def wait_until(proc: subprocess.Popen, ready, what: str, timeout: float = 180):
    deadline = time.monotonic() + timeout
    while not (found := ready()):
        assert proc.poll() is None, f"the load ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.005)
    return found


def kill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)


def files_on_disk(session: Session) -> set[str]:
    return {str(p.relative_to(session.warehouse)) for p in session.warehouse.rglob("*.parquet")}


def check_recovered(session: Session, txn: int, big_csv: pathlib.Path, spark) -> None:
    """GC after the lease cleans up; the load run again adds every row exactly once."""
    time.sleep(LEASE_S + 0.5)
    run_gc(session.catalog, session.warehouse, lambda: spark, 0)  # no retention: the dead load's files go now
    assert txn_state(session, txn) == "ABORTED"
    assert not staged_files(session) and not list(session.warehouse.rglob("_load/l*"))
    live = {f.path for f in session.catalog.snapshot("b").files}
    assert files_on_disk(session) == live, "files of the killed load are left on disk"
    assert sql(session, "SELECT id, v FROM b WHERE id < 0 ORDER BY id") == BEFORE
    assert sql(session, "SELECT count(*) FROM b") == ((2,),)

    session.load_input("b", open_input(big_csv), label="again", engine="spark")
    assert sql(session, "SELECT count(*), count(DISTINCT id), sum(id), min(v), max(id) FROM b") == (
        (ROWS + 2, ROWS + 2, ROWS * (ROWS - 1) // 2 - 3, "before", ROWS - 1),
    )


def test_killed_while_its_tasks_write(table_b, big_csv, spark):
    session = table_b
    proc = spawn_load(session, big_csv, None)
    try:
        wait_until(proc, lambda: staged_files(session), "a staged file")
        # frozen mid-task, outside a catalog write (a stop inside one locks SQLite for every reader): look, then kill
        stop_outside_a_catalog_write(proc.pid, session.settings.catalog_url)
        txn, state = load_txn(session)
        with session.catalog.db_session() as s:
            registered = s.query(DataFileRow).filter(DataFileRow.txn_id == txn).count()
        assert (state, registered) == ("PREPARE", 0), "the tasks were over before the kill"
    finally:
        kill(proc)
    assert staged_files(session)
    check_recovered(session, txn, big_csv, spark)


@pytest.mark.parametrize("point", ["load_tasks_done", "load_files_moved"])
def test_killed_at_a_step_boundary(table_b, big_csv, spark, point):
    session = table_b
    proc = spawn_load(session, big_csv, point)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, out, err)
    txn, state = load_txn(session)
    assert state == "PREPARE"
    with session.catalog.db_session() as s:
        registered = s.query(DataFileRow).filter(DataFileRow.txn_id == txn).count()
    assert (registered > 0) == (point == "load_files_moved")
    assert sql(session, "SELECT count(*) FROM b") == ((2,),)
    check_recovered(session, txn, big_csv, spark)


@pytest.mark.parametrize("seed", [11])
def test_killed_at_a_random_moment(table_b, big_csv, spark, seed):
    """Either the load committed before the kill, whole, or it left nothing."""
    session = table_b
    proc = spawn_load(session, big_csv, None)
    try:
        wait_until(proc, lambda: load_txn(session), "the load's transaction")
        time.sleep(random.Random(seed).uniform(0, 3))
    finally:
        kill(proc)
    txn, state = load_txn(session)
    if txn_state(session, txn) == "COMMITTED":
        assert sql(session, "SELECT count(*) FROM b") == ((ROWS + 2,),)
        return
    assert sql(session, "SELECT count(*) FROM b") == ((2,),)
    check_recovered(session, txn, big_csv, spark)
