"""The states the catalog records, read straight from its rows (what no statement shows)."""

from __future__ import annotations

from alterflow.catalog.models import IndexRow, TransactionRow
from alterflow.session import Session


def index_state(session: Session, index_id: int) -> str:
    with session.catalog.db_session() as s:
        return s.get(IndexRow, index_id).state


def txn_state(session: Session, txn_id: int) -> str:
    with session.catalog.db_session() as s:
        return s.get(TransactionRow, txn_id).state
