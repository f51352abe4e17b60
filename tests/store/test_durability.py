"""Crash consistency at the `Warehouse` boundary (docs/gc.md: durable before visible; deletes deferred).

`Trace` watches a real session on SQLite and PostgreSQL through everything that writes, moves or
deletes data files: local loads, a Spark load, INSERT ... SELECT, heavyweight conversions on the
Arrow and Spark engines (a dual-writing load among them), compaction and GC after a DROP TABLE.
- Every fsync goes through `alterflow.store.warehouse.fsync_path`, which it records.
- At each catalog commit (SQLAlchemy's `commit` event, before the database commits) it reads, in
  that same transaction, every file the commit leaves visible (LIVE, in a COMMITTED transaction):
  each must have been flushed, and so must its folder (its directory entry).
- Every data file that disappears must go through `Warehouse.delete`, and only after the catalog
  change that dropped it is committed (looked up on a connection of its own, which sees only
  committed rows) and the retention period has passed since.
A control run with the flush before a load's commit taken out shows that the trace catches it.
"""

from __future__ import annotations

import os
import pathlib
import re
import threading
from datetime import datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import create_engine, event, text

import alterflow.store.warehouse as warehouse_module
from alterflow.catalog.catalog import utcnow
from alterflow.catalog.database import normalise_url
from alterflow.gc import gc_steps
from alterflow.gc.gc_runner import run_gc
from alterflow.load.inputs import open_input
from alterflow.store.layout import DATA_FILE
from alterflow.store.warehouse import Warehouse
from tests.support.gc import later, sql

pytestmark = pytest.mark.spark

VISIBLE = "SELECT f.path FROM af_data_files f JOIN af_transactions t ON t.id = f.txn_id WHERE f.state = 'LIVE' AND t.state = 'COMMITTED'"
ROW_STATES = "SELECT state, dropped_at FROM af_data_files WHERE path = :path"


class Trace:
    def __init__(self, session, monkeypatch, retention_s: int):
        self.session = session
        self.root = pathlib.Path(session.warehouse).resolve()
        self.retention = timedelta(seconds=retention_s)
        self.clock_ahead = timedelta(0)  # when a test runs GC with `now` moved forward
        self.synced_files: set[pathlib.Path] = set()
        self.synced_dirs: set[pathlib.Path] = set()
        self.commits_checked = 0
        self.deleted: list[str] = []
        self.violations: list[str] = []
        self._deleting = threading.local()
        self._observer = create_engine(normalise_url(session.settings.catalog_url))  # sees committed rows only
        real_fsync = warehouse_module.fsync_path

        def fsync_path(path, directory=False):
            real_fsync(path, directory)
            (self.synced_dirs if directory else self.synced_files).add(pathlib.Path(path).resolve())

        monkeypatch.setattr(warehouse_module, "fsync_path", fsync_path)
        real_delete = Warehouse.delete
        trace = self

        def delete(self_, relatives):
            relatives = list(relatives)
            for relative in relatives:
                trace.check_delete(relative)
            trace._deleting.on = True
            try:
                return real_delete(self_, relatives)
            finally:
                trace._deleting.on = False

        monkeypatch.setattr(Warehouse, "delete", delete)
        real_unlink = os.unlink

        def unlink(path, *args, **kwargs):
            name = os.path.basename(os.fsdecode(path))
            if DATA_FILE.fullmatch(name) and not name.endswith(".tmp") and not getattr(self._deleting, "on", False):
                self.violations.append(f"{path} deleted outside Warehouse.delete")
            return real_unlink(path, *args, **kwargs)

        monkeypatch.setattr(os, "unlink", unlink)
        self.engine = session.catalog.engine
        event.listen(self.engine, "commit", self.check_commit)

    def close(self) -> None:
        event.remove(self.engine, "commit", self.check_commit)
        self._observer.dispose()

    def check_commit(self, conn) -> None:
        self.commits_checked += 1
        for (relative,) in conn.exec_driver_sql(VISIBLE).fetchall():
            path = (self.root / relative).resolve()
            if path not in self.synced_files:
                self.violations.append(f"{relative} visible before it was fsynced")
            elif path.parent not in self.synced_dirs:
                self.violations.append(f"{relative} visible before its folder was fsynced")

    def check_delete(self, relative: str) -> None:
        self.deleted.append(relative)
        with self._observer.connect() as conn:
            rows = conn.execute(text(ROW_STATES), {"path": relative}).all()
        for state, dropped_at in rows:
            if isinstance(dropped_at, str):  # SQLite through a plain text() query
                dropped_at = datetime.fromisoformat(dropped_at)
            if state == "LIVE":
                self.violations.append(f"{relative} deleted while a committed row names it LIVE")
            elif dropped_at is None or dropped_at > utcnow() + self.clock_ahead - self.retention + timedelta(seconds=1):
                self.violations.append(f"{relative} deleted {state} within the retention period (dropped at {dropped_at})")


@pytest.fixture
def traced(catalog_session, spark, monkeypatch):
    traces = []

    def start(retention_s: int = 0) -> Trace:
        trace = Trace(catalog_session, monkeypatch, retention_s)
        traces.append(trace)
        return trace

    yield start
    for trace in traces:
        trace.close()


def _parquet(path: pathlib.Path, first: int, count: int) -> pathlib.Path:
    pq.write_table(pa.table({"id": list(range(first, first + count)), "v": [f"r{i}" for i in range(first, first + count)]}), path)
    return path


def test_every_file_is_flushed_before_it_is_visible_and_deleted_only_after_it_left(catalog_session, traced, tmp_path):
    trace = traced(retention_s=0)
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")  # a local load
    s.load_input("t", open_input(_parquet(tmp_path / "local.parquet", 10, 200)), label="local", engine="local")
    s.load_input("t", open_input(_parquet(tmp_path / "spark.parquet", 300, 200)), label="spark", engine="spark")
    sql(s, "CREATE TABLE u (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(s, "INSERT INTO u SELECT id, v FROM t")  # INSERT ... SELECT through Spark tasks
    sql(s, "ALTER TABLE t ADD COLUMN n INT DEFAULT 1")
    # Heavyweight, on the Arrow engine, swap postponed: a load dual-writes meanwhile.
    sql(s, 'ALTER TABLE t MODIFY COLUMN n SMALLINT PROPERTIES ("engine" = "local", "postpone_swap" = "true")')
    sql(s, "INSERT INTO t VALUES (5000, 'dual', 4)")
    sql(s, "RESUME ALTER TABLE COLUMN FROM t")
    sql(s, "ALTER TABLE t ADD COLUMN m INT")  # light: compaction has old files to rewrite
    sql(s, "ALTER TABLE u ADD COLUMN n INT DEFAULT 2")
    sql(s, 'ALTER TABLE u MODIFY COLUMN n SMALLINT PROPERTIES ("engine" = "spark")')  # Spark engine
    sql(s, "INSERT INTO u VALUES (9999, 'late', 3)")
    assert trace.commits_checked > 10 and trace.synced_files
    expected_t = sorted(sql(s, "SELECT id, v, n FROM t"))
    expected_u = sorted(sql(s, "SELECT id, v, n FROM u"))

    # Compaction, then GC with no retention: every replaced, retired and dropped file goes, each
    # only through Warehouse.delete and after its row left the table.
    result = run_gc(s.catalog, s.warehouse, lambda: s.spark, 0)
    assert result["compact"].tablets_compacted >= 1
    sql(s, "DROP TABLE u")
    run_gc(s.catalog, s.warehouse, lambda: s.spark, 0, now=later())
    assert trace.deleted, "GC deleted files"
    assert sorted(sql(s, "SELECT id, v, n FROM t")) == expected_t and (len(expected_t), len(expected_u)) == (403, 403)
    assert trace.violations == []
    live = {f.path for f in s.catalog.snapshot("t").files}
    assert {(trace.root / p).resolve() for p in live} <= trace.synced_files


def test_deletes_wait_for_the_retention_period(catalog_session, traced):
    """With the default hour, GC right after a compaction deletes nothing it replaced; an hour later
    it does, and the trace finds nothing deleted early."""
    trace = traced(retention_s=3600)
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(s, "INSERT INTO t VALUES (1, 'a')")
    sql(s, "INSERT INTO t VALUES (2, 'b')")
    sql(s, "ALTER TABLE t ADD COLUMN n INT")
    old = {f.path for f in s.catalog.snapshot("t").files}
    first = run_gc(s.catalog, s.warehouse, lambda: s.spark, 3600)
    assert first["compact"].tablets_compacted == 1 and first["delete_files"].files_kept_for_retention == 2
    assert all((s.warehouse / p).exists() for p in old)
    trace.clock_ahead = timedelta(hours=1, seconds=5)
    assert gc_steps.delete_files(s.catalog, s.warehouse, 3600, now=utcnow() + trace.clock_ahead).files_deleted == 2
    assert not any((s.warehouse / p).exists() for p in old)
    assert trace.violations == []


def test_the_trace_catches_a_commit_that_skips_the_flush(catalog_session, traced, monkeypatch):
    """The control: with the flush before a load's commit taken out, the trace reports the file."""
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING)")
    trace = traced()
    monkeypatch.setattr(Warehouse, "sync_transaction", lambda self, txn_id: 0)
    sql(s, "INSERT INTO t VALUES (1, 'a')")
    assert len(trace.violations) == 1 and re.fullmatch(r"t\d+/i\d+/b\d+/\S+\.parquet visible before it was fsynced", trace.violations[0])
