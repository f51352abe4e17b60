"""Appends from a user's own Python processes (tests/api/append_process.py), with real processes
and signals: a million rows appended while a heavyweight ALTER of the table runs, read back after
the swap (every row exactly once, converted), and an append killed with SIGKILL mid-write (nothing
visible, its transaction aborted once its lease runs out, its files deleted by GC)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from alterflow.catalog.models import DataFileRow, TransactionRow
from alterflow.store.layout import absolute
from tests.support.gc import delete_dropped_files

HISTORY = 200_000
APPENDED = 500_000  # by each of two processes: a million in all
LEASE_S = 3.0


def spawn(api, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(
        ALTERFLOW_HOME=str(api.settings.home),
        ALTERFLOW_CATALOG_URL=api.settings.catalog_url,
        ALTERFLOW_WAREHOUSE=str(api.warehouse),
        ALTERFLOW_LEASE_S=str(LEASE_S),
    )
    return subprocess.Popen(
        [sys.executable, "-m", "tests.api.append_process", *args],
        env=env,
        cwd=os.getcwd(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finished(proc: subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return out


@pytest.fixture
def events(api):
    """A table without a primary key: a row written twice would be counted twice."""
    api.sql("CREATE TABLE events (id BIGINT NOT NULL, code STRING) DISTRIBUTED BY HASH(id) BUCKETS 4")
    ids = np.arange(-HISTORY, 0, dtype=np.int64)
    api.table("events").append(pa.table({"id": ids, "code": pc.cast(pa.array(-ids % 1000), pa.string())}))
    return api.table("events")


def test_a_million_rows_appended_during_a_heavy_alter_land_once_converted(api, events):
    job = events.alter("MODIFY COLUMN code INT", postpone_swap=True)
    assert job.state in ("PENDING", "WAITING_TXN", "RUNNING")
    # One process starts at once (its rows fall below the boundary and are waited for, or above
    # it and are dual written: either way once); the other waits until the job is converting,
    # so its rows are dual written into the new index.
    early = spawn(api, "events", "0", str(APPENDED))
    late = spawn(api, "events", str(APPENDED), str(APPENDED), "--after-boundary")
    early_out, late_out = finished(early), finished(late)
    assert "rows=500000" in early_out and "rows=500000" in late_out
    assert job.wait(timeout=300).state == "READY_TO_SWAP", job.job.msg
    late_txn = int(re.search(r"txn_id=(\d+)", late_out).group(1))
    assert late_txn > job.job.boundary_txn  # dual written, not converted
    api.sql("RESUME ALTER TABLE COLUMN FROM events")
    assert job.state == "FINISHED"

    got = events.scan().to_arrow()
    assert got.schema.field("code").type == pa.int32()
    ids = np.sort(got.column("id").to_numpy())
    assert np.array_equal(ids, np.arange(-HISTORY, 2 * APPENDED, dtype=np.int64)), "a row is missing or appears twice"
    model = np.abs(got.column("id").to_numpy()) % 1000
    assert np.array_equal(got.column("code").to_numpy(), model), "a row was not converted"


def test_an_append_killed_mid_write_leaves_nothing(api, events, monkeypatch):
    monkeypatch.setenv("ALTERFLOW_LEASE_S", str(LEASE_S))
    proc = spawn(api, "events", "0", str(APPENDED), "--slow")
    deadline = time.monotonic() + 120
    try:
        while True:  # its transaction in PREPARE with a file written
            with api.catalog.db_session() as s:
                found = (
                    s.query(TransactionRow.id)
                    .join(DataFileRow, DataFileRow.txn_id == TransactionRow.id)
                    .filter(TransactionRow.state == "PREPARE", TransactionRow.label == "append 0")
                    .first()
                )
            if found is not None:
                break
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the append never wrote a file"
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    txn = found[0]
    with api.catalog.db_session() as s:
        files = [r.path for r in s.query(DataFileRow).filter(DataFileRow.txn_id == txn)]
    assert files and events.scan().to_arrow().num_rows == HISTORY  # nothing visible

    time.sleep(LEASE_S + 0.5)  # its lease runs out: the next load aborts it
    events.append(pa.table({"id": [10**9], "code": ["1"]}))
    with api.catalog.db_session() as s:
        row = s.get(TransactionRow, txn)
        assert (row.state, row.reason) == ("ABORTED", "its lease expired")
    delete_dropped_files(api.session)
    assert not [p for p in files if absolute(api.warehouse, p).exists()], "the killed append's files are still there"
    assert events.scan().to_arrow().num_rows == HISTORY + 1
