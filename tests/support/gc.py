"""Helpers of the garbage-collection tests."""

from __future__ import annotations

from datetime import timedelta

from alterflow.catalog.catalog import utcnow
from alterflow.catalog.models import DataFileRow, SchemaVersionRow, TransactionRow
from alterflow.engine.session import Session
from alterflow.gc.gc_runner import run_gc
from alterflow.gc.gc_steps import DeletedFiles, GcStepResult
from alterflow.store.warehouse import MARKER
from tests.support.catalog_rows import index_state, txn_state  # noqa: F401 (the tests import them from here too)
from tests.support.heavy_jobs import start as start_heavy  # noqa: F401 (validate + start: the job stays PENDING)
from tests.support.statements import sql, versions  # noqa: F401

LATER = timedelta(hours=2)  # past the default retention of one hour


def gc(session: Session, spark, retention_s: int = 0, now=None) -> dict[str, GcStepResult]:
    return run_gc(session.catalog, session.warehouse, lambda: spark, retention_s, now=now)


def no_spark():
    raise AssertionError("Spark was started although nothing needed compaction")


def disk_files(session: Session) -> list[str]:
    """Every file under the warehouse, relative to it (but its owner marker)."""
    root = session.warehouse
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != MARKER) if root.exists() else []


def live_data_files(session: Session, table: str):
    """The `DataFile`s of the table's live committed files (current index)."""
    return session.catalog.snapshot(table).files


def file_rows(session: Session) -> dict[str, str]:
    """Catalog path -> state, for every data-file row."""
    with session.catalog.db_session() as s:
        return {r.path: r.state for r in s.query(DataFileRow)}


def version_rows(session: Session, table_id: int) -> list[int]:
    with session.catalog.db_session() as s:
        return sorted(r.version for r in s.query(SchemaVersionRow).filter_by(table_id=table_id))


def referenced_files_exist(session: Session) -> None:
    """No LIVE catalog row points at a missing file (docs/gc.md)."""
    with session.catalog.db_session() as s:
        for row in s.query(DataFileRow).filter_by(state="LIVE"):
            txn = s.get(TransactionRow, row.txn_id)
            if txn.state == "COMMITTED":
                assert (session.warehouse / row.path).exists(), f"live row {row.id} points at a missing file {row.path}"


def later():
    return utcnow() + LATER


def delete_dropped_files(session: Session) -> DeletedFiles:
    """GC's file step with no retention (what a run an hour later deletes): files that left their
    tables (an aborted load's, a cancelled job's shadow...) and files no row names."""
    from alterflow.gc import gc_steps

    return gc_steps.delete_files(session.catalog, session.warehouse, 0)
