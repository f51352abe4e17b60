"""Loads found again by their transaction's label: what makes a load that a driver may retry (an
Airflow task's next try) happen once. The label names the driver's unit of work; a committed
transaction with it means the load is done, and a PREPARE one is an earlier try's, which a new try
aborts before it writes (its writer, if still alive, can then neither add a file nor commit)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.catalog_errors import TransactionStateError
from alterflow.catalog.models import DataFileRow, TabletRow, TransactionRow
from alterflow.catalog.states import TransactionState

__all__ = ["CommittedLoad", "committed_load", "abort_open_loads", "loads_by_holder"]


@dataclass(frozen=True)
class CommittedLoad:
    txn_id: int
    rows: int  # the rows the load wrote into the table (a dual write's second copy not counted)


def committed_load(catalog: Catalog, table_id: int, label: str) -> CommittedLoad | None:
    """The committed load of `table_id` labelled `label` (the first, should there be more)."""
    with catalog.db_session() as s:
        txn_id = s.scalars(
            select(TransactionRow.id)
            .where(TransactionRow.table_id == table_id, TransactionRow.label == label, TransactionRow.state == TransactionState.COMMITTED)
            .order_by(TransactionRow.id)
        ).first()
        if txn_id is None:
            return None
        # A load during a heavyweight job wrote every row into the table's index and, converted,
        # into the job's new index (but those a quarantine took, which went to the quarantine
        # table's files): the index with the most rows holds each row of the load once.
        per_index = (
            select(func.sum(DataFileRow.row_count).label("rows"))
            .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
            .where(DataFileRow.txn_id == txn_id, DataFileRow.quarantine_job_id.is_(None))
            .group_by(TabletRow.index_id)
            .subquery()
        )
        rows = s.scalar(select(func.coalesce(func.max(per_index.c.rows), 0)))
        return CommittedLoad(txn_id, int(rows))


def abort_open_loads(catalog: Catalog, table_id: int, label: str, reason: str) -> list[int]:
    """Abort the PREPARE transactions of `table_id` labelled `label`; their ids. Their files go the
    way of every aborted load's: GC deletes them after the retention period."""
    with catalog.db_session() as s:
        open_ids = list(
            s.scalars(
                select(TransactionRow.id).where(
                    TransactionRow.table_id == table_id, TransactionRow.label == label, TransactionRow.state == TransactionState.PREPARE
                )
            )
        )
    aborted = []
    for txn_id in open_ids:
        try:
            catalog.abort_transaction(txn_id, reason)
        except TransactionStateError:  # it committed meanwhile: `committed_load` finds it
            continue
        aborted.append(txn_id)
    return aborted


def loads_by_holder(catalog: Catalog, table_id: int, label: str, holder_prefix: str) -> list[tuple[int, str]]:
    """(transaction id, state) of every load of `table_id` labelled `label` whose lease holder
    starts with `holder_prefix` (`host:pid:`: the loads one process began), oldest first. An
    interrupted `alterflow load` says with it whether its load committed or was aborted."""
    with catalog.db_session() as s:
        rows = s.execute(
            select(TransactionRow.id, TransactionRow.state)
            .where(
                TransactionRow.table_id == table_id,
                TransactionRow.label == label,
                TransactionRow.lease_holder.startswith(holder_prefix, autoescape=True),
            )
            .order_by(TransactionRow.id)
        )
        return [(int(txn_id), str(state)) for txn_id, state in rows]
