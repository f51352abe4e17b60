"""Load leases (docs/heavyweight.md) with real processes and signals: a load killed with SIGKILL in PREPARE no
longer holds a heavyweight ALTER for an hour (the job aborts it once its lease expires, and its
files go), a dual-writing load killed between an origin file and its shadow's file leaves nothing,
and a load stopped with SIGSTOP past its lease fails at commit with docs/heavyweight.md's line, leaving
nothing visible."""

from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.models import DataFileRow, TransactionRow
from alterflow.engine.session import Session
from alterflow.load.inputs import open_input
from alterflow.store.layout import absolute
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.alter_runner import run_heavy
from alterflow.workflow.request import AlterRequest
from tests.support.catalog_rows import txn_state
from tests.support.gc import delete_dropped_files
from tests.support.heavy_jobs import short_leases
from tests.support.process_signals import held_at_its_own_stop, let_go, stop_outside_a_catalog_write
from tests.support.statements import sql

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
LEASE_S = 3.0
ROWS = 300_000


@pytest.fixture
def big_csv(tmp_path) -> pathlib.Path:
    path = tmp_path / "big.csv"
    table = pa.table({"id": pa.array(range(ROWS), pa.int64()), "v": pa.array([str(i % 1000) for i in range(ROWS)])})
    pacsv.write_csv(table, path)
    return path


def spawn_load(session: Session, path: pathlib.Path, crash_at: str | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(session.settings.home), ALTERFLOW_LEASE_S=str(LEASE_S))
    if crash_at is not None:
        env["ALTERFLOW_CRASH_AT"] = crash_at
    return subprocess.Popen(
        [str(ALTERFLOW), "load", "b", str(path)],
        env=env,
        cwd=session.settings.home,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for_prepare(session: Session, proc: subprocess.Popen) -> int:
    """The load's transaction id, as soon as it is in PREPARE with files registered."""
    deadline = time.monotonic() + 120
    while True:
        with session.catalog.db_session() as s:
            found = (
                s.query(TransactionRow.id)
                .join(DataFileRow, DataFileRow.txn_id == TransactionRow.id)
                .filter(TransactionRow.state == "PREPARE", TransactionRow.label.like("load %"))
                .first()
            )
        if found is not None:
            return found[0]
        assert proc.poll() is None, f"the load ended before its PREPARE was seen: {proc.communicate()}"
        assert time.monotonic() < deadline, "the load never reached PREPARE"
        time.sleep(0.005)


def txn_files(session: Session, txn_id: int) -> list[str]:
    with session.catalog.db_session() as s:
        return [r.path for r in s.query(DataFileRow).filter(DataFileRow.txn_id == txn_id)]


@pytest.fixture
def table_b(session, monkeypatch):
    short_leases(session, monkeypatch, LEASE_S)
    sql(session, "CREATE TABLE b (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4")
    sql(session, "INSERT INTO b VALUES (-1, '7'), (-2, '8')")
    return session


def test_a_load_killed_in_prepare_holds_a_heavy_alter_no_longer_than_its_lease(table_b, big_csv, spark):
    session = table_b
    proc = spawn_load(session, big_csv)
    try:
        txn = wait_for_prepare(session, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    files = txn_files(session, txn)
    assert files

    request = AlterRequest("b", "ALTER TABLE b MODIFY COLUMN v INT")
    began = time.monotonic()
    job_id = heavy_steps.start(session.catalog, request, alter_steps.validate(session.catalog, request)).job_id
    look = heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id)
    if not look.done:  # the dead load's lease had not run out yet: the job names it
        assert look.blocking == (txn,)
        msg = HeavyJobs(session.catalog).job(job_id).msg
        assert msg.startswith(f"waiting for transactions {txn} (below boundary ") and "lease expires in" in msg, msg
    while not heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id).done:
        time.sleep(0.2)
    # What the dead load cost the job: its lease (it may have been renewed just before the kill).
    # Judged on the catalog's own clock, not the test's: the job's look aborted the transaction at
    # its first poll after the lease ran out (a busy host may stretch a poll, never a lease).
    with session.catalog.db_session() as s:
        row = s.get(TransactionRow, txn)
        late = (row.finished_at - row.lease_expires_at).total_seconds()
    assert 0 <= late < 10, f"the dead load was aborted {late:.1f} s after its lease ran out"
    job = run_heavy(session.catalog, session.warehouse, job_id, lambda: spark)
    took = time.monotonic() - began
    assert job.state == "FINISHED"
    # The bound is the lease plus 30 s; the conversion and validation alone take seconds
    # more on a loaded 2-core CI machine, so the whole ALTER is held to the lease plus 60 s.
    assert took < LEASE_S + 60, f"the ALTER took {took:.1f} s behind a dead load"
    with session.catalog.db_session() as s:
        row = s.get(TransactionRow, txn)
        assert (row.state, row.reason) == ("ABORTED", "its lease expired")
    delete_dropped_files(session)  # deferred: GC deletes them after the retention
    assert not [p for p in files if absolute(session.warehouse, p).exists()], "the dead load's files are still there"
    assert sql(session, "SELECT id, v FROM b ORDER BY id") == ((-2, 8), (-1, 7))


def test_a_load_stopped_past_its_lease_fails_at_commit_and_leaves_nothing(table_b, big_csv):
    session = table_b
    before = sql(session, "SELECT count(*) FROM b")
    proc = spawn_load(session, big_csv)
    try:
        txn = wait_for_prepare(session, proc)
        stop_outside_a_catalog_write(proc.pid, session.settings.catalog_url)
        time.sleep(LEASE_S + 1.5)
        os.killpg(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=60)
    assert proc.returncode == 1, (out, err)
    assert err.strip() == f"error: transaction {txn} was aborted (its lease expired); retry the load", err
    assert sql(session, "SELECT count(*) FROM b") == before
    assert txn_state(session, txn) == "ABORTED"
    delete_dropped_files(session)  # deferred: GC deletes them after the retention
    assert not [p for p in txn_files(session, txn) if absolute(session.warehouse, p).exists()]


def test_a_dual_writing_load_killed_between_an_origin_file_and_its_shadow_file_leaves_nothing(table_b, big_csv):
    """SIGKILL after an origin file is written and before the shadow's file spliced from it: no row
    is visible in either index, the next load aborts the dead one once its lease expires and
    deletes its files, and after the swap every row is there exactly once."""
    session = table_b
    sql(session, 'ALTER TABLE b MODIFY COLUMN v INT PROPERTIES ("postpone_swap" = "true")')
    job = session.catalog.active_job(session.catalog.table("b").id)
    assert job.state == "READY_TO_SWAP"
    proc = spawn_load(session, big_csv, crash_at="load_origin_written")
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, err
    with session.catalog.db_session() as s:
        (txn,) = [r.id for r in s.query(TransactionRow).filter(TransactionRow.state == "PREPARE")]
    files = txn_files(session, txn)
    written = [p for p in files if absolute(session.warehouse, p).exists()]
    assert written and len(written) < len(files)  # some origin files, not every shadow file
    assert sql(session, "SELECT count(*) FROM b") == ((2,),)

    time.sleep(LEASE_S + 0.5)
    session.load_input("b", open_input(big_csv), label="again")
    with session.catalog.db_session() as s:
        row = s.get(TransactionRow, txn)
        assert (row.state, row.reason) == ("ABORTED", "its lease expired")
    delete_dropped_files(session)  # deferred: GC deletes them after the retention
    assert not [p for p in files if absolute(session.warehouse, p).exists()], "the dead load's files are still there"
    sql(session, "RESUME ALTER TABLE COLUMN FROM b")
    rows = sql(session, "SELECT id, v FROM b")
    assert sorted(rows) == [(-2, 8), (-1, 7)] + [(i, i % 1000) for i in range(ROWS)]


def _run(home: pathlib.Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ALTERFLOW), *args], env=env, cwd=home.parent, capture_output=True, text=True, timeout=300)


def test_a_load_stopped_mid_file_whose_lease_gc_ended_says_it_was_aborted(catalog_url, tmp_path):
    """Stopped while a data file's `.tmp` is written (the load stops itself there, at its
    `file_writing:stop` point, so no host is too fast or too slow to catch it), past the lease;
    `alterflow gc --retention 0` aborts the transaction and deletes its files, the `.tmp` too;
    SIGCONT. The load ends with the one line that says it was aborted (it was an internal
    FileNotFoundError on its `.tmp`), nothing of it is visible, and the warehouse keeps only the
    table's own files."""
    rows = 1_000_000
    csv = tmp_path / "rows.csv"
    pacsv.write_csv(pa.table({"id": pa.array(range(rows), pa.int64()), "v": pa.array([str(i % 1000) for i in range(rows)])}), csv)
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(home), ALTERFLOW_CATALOG_URL=catalog_url, ALTERFLOW_LEASE_S=str(LEASE_S))
    setup = (
        "CREATE TABLE b (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4; INSERT INTO b VALUES (-1, '7')"
    )
    assert _run(home, env, "sql", "-e", setup).returncode == 0
    warehouse = home / "warehouse"
    proc = subprocess.Popen(
        [str(ALTERFLOW), "load", "b", str(csv)],
        env={**env, "ALTERFLOW_CRASH_AT": "file_writing:stop"},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        held_at_its_own_stop(proc, catalog_url)
        assert any(warehouse.rglob("*.parquet.tmp")), "stopped at file_writing with no .tmp"
        time.sleep(LEASE_S + 1.5)  # stopped, it cannot renew: its lease is over after this on any host
        gc = _run(home, env, "gc", "--retention", "0")
        assert gc.returncode == 0, gc.stderr
        assert not any(warehouse.rglob("*.parquet.tmp")), "gc left the stopped load's file"
        out, err = let_go(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=60)
    assert proc.returncode == 1, (out, err)
    assert re.fullmatch(r"error: transaction \d+ was aborted \(its lease expired\); retry the load\n", err), err
    query = _run(home, env, "sql", "-e", "SELECT count(*) AS n FROM b", "--format", "json")
    assert query.stdout == '{"columns": ["n"], "rows": [[1]]}\n', query.stdout + query.stderr
    from alterflow.catalog.catalog import Catalog

    with Catalog(catalog_url).db_session() as s:
        live = {row.path for row in s.query(DataFileRow).filter(DataFileRow.state == "LIVE")}
    # What the resumed load wrote after its abort no row names: an orphan, deleted once older than
    # the orphan retention (docs/gc.md). Its clock is moved four days back, not waited for.
    four_days_ago = time.time() - 4 * 24 * 3600
    for leftover in (p for p in warehouse.rglob("*.parquet") if str(p.relative_to(warehouse)) not in live):
        os.utime(leftover, (four_days_ago, four_days_ago))
    assert _run(home, env, "gc", "--retention", "0").returncode == 0
    assert {str(p.relative_to(warehouse)) for p in warehouse.rglob("*") if p.is_file() and p.suffix != ".json"} == live
