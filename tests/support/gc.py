"""Helpers of the garbage-collection tests."""

from __future__ import annotations

from datetime import timedelta

from alterflow.gc.runner import run_gc
from alterflow.session import Session
from alterflow.workflow import heavy_steps, steps
from alterflow.workflow.request import AlterRequest
from alterflow.catalog.catalog import utcnow
from alterflow.catalog.models import DataFileRow, IndexRow, SchemaVersionRow, TransactionRow
from tests.support.statements import sql

LATER = timedelta(hours=2)  # past the default retention of one hour


def gc(session: Session, spark, retention_s: int = 0, now=None) -> dict:
    return run_gc(session.catalog, session.warehouse, lambda: spark, retention_s, now=now)


def no_spark():
    raise AssertionError("Spark was started although nothing needed compaction")


def versions(session: Session, table: str) -> list[int]:
    return [r[0] for r in sql(session, f"SHOW SCHEMA VERSIONS FROM {table}")]


def disk_files(session: Session) -> list[str]:
    """Every file under the warehouse, relative to it."""
    root = session.warehouse
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def live_data_files(session: Session, table: str):
    """The `DataFile`s of the table's live committed files (current index)."""
    return session.catalog.snapshot(table).files


def file_rows(session: Session) -> dict[str, str]:
    """Catalog path -> state, for every data-file row."""
    with session.catalog.db_session() as s:
        return {r.path: r.state for r in s.query(DataFileRow)}


def index_state(session: Session, index_id: int) -> str:
    with session.catalog.db_session() as s:
        return s.get(IndexRow, index_id).state


def txn_state(session: Session, txn_id: int) -> str:
    with session.catalog.db_session() as s:
        return s.get(TransactionRow, txn_id).state


def version_rows(session: Session, table_id: int) -> list[int]:
    with session.catalog.db_session() as s:
        return sorted(r.version for r in s.query(SchemaVersionRow).filter_by(table_id=table_id))


def referenced_files_exist(session: Session) -> None:
    """No LIVE catalog row points at a missing file (SPEC §6)."""
    with session.catalog.db_session() as s:
        for row in s.query(DataFileRow).filter_by(state="LIVE"):
            txn = s.get(TransactionRow, row.txn_id)
            if txn.state == "COMMITTED":
                assert (session.warehouse / row.path).exists(), f"live row {row.id} points at a missing file {row.path}"


def start_heavy(session: Session, statement: str) -> int:
    """validate + start of a heavyweight ALTER: the job stays PENDING."""
    req = AlterRequest(statement.split()[2], statement, {})
    validated = steps.validate(session.catalog, req)
    assert validated["kind"] == "HEAVY", validated
    return heavy_steps.start(session.catalog, req, validated)["job_id"]


def later():
    return utcnow() + LATER
