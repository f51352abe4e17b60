"""The states the catalog records, read straight from its rows (what no statement shows)."""

from __future__ import annotations

from alterflow.catalog.models import IndexRow, TransactionRow
from alterflow.engine.session import Session


def index_state(session: Session, index_id: int) -> str:
    with session.catalog.db_session() as s:
        return s.get(IndexRow, index_id).state


def txn_state(session: Session, txn_id: int) -> str:
    with session.catalog.db_session() as s:
        return s.get(TransactionRow, txn_id).state


def transactions(session: Session, table: str) -> list[tuple[int, str, str]]:
    """(id, state, label) of every transaction of `table`, oldest first."""
    from sqlalchemy import select

    table_id = session.catalog.table(table).id
    with session.catalog.db_session() as s:
        rows = s.execute(select(TransactionRow.id, TransactionRow.state, TransactionRow.label).where(TransactionRow.table_id == table_id))
        return sorted((r.id, str(r.state), r.label) for r in rows)
