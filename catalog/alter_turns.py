"""The line of Airflow runs waiting to ALTER one table (docs/airflow.md#runs-on-one-table).

One job per table: a heavyweight ALTER on a table whose job is unfinished would be refused. An
Airflow run waits instead, in the order the runs were triggered: it takes its turn once

- no job of the table is unfinished (but its own: a retried run that already started its job),
- no run triggered before it that it must not overlap is still waiting, and
- no run it must not overlap has just been let through and not yet made its job (it plans, then
  commits or starts: the job it makes is the table's from then on).

A heavy run (a rewrite: it starts a job) overlaps no other run: a light change committed after its
job started would be refused. Light runs (metadata only) may overlap each other: of two light
commits on one version the second is planned again on the first's (`retry_on_table_moved`).

A run in line renews its place each time it looks (a run whose task died lapses after `hold_s`
and the runs behind it move up); one let through holds its place for `hold_s` or until its job
exists. Each look is one database transaction under the table row's lock, so two runs that look at
the same moment never both go. A run's row goes in the transaction that makes its job (the light
commit, the heavyweight start), when the run is refused or leaves, or, once it lapsed, at the
table's next `take`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, exists, or_, select
from sqlalchemy.orm import Session

from alterflow.catalog.catalog import Catalog, utcnow
from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.catalog.models import AlterJobRow, AlterTurnRow, TableRow


@dataclass(frozen=True)
class Turn:
    """Whether a run may go on now, and if not what it waits behind (one phrase, for its log)."""

    go: bool
    behind: str = ""


class AlterTurns:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def take(
        self, request_id: str, table_id: int, triggered_at: datetime, hold_s: float, heavy: bool = True, now: datetime | None = None
    ) -> Turn:
        """Join the table's line (or renew this run's place in it, as a `heavy` run or a light one)
        and say whether it goes now; a run that goes is let through (it holds its place until its
        job exists)."""
        now = now or utcnow()
        with self.catalog.db_session() as s, s.begin():
            self._lock_table(s, table_id)
            s.execute(delete(AlterTurnRow).where(AlterTurnRow.table_id == table_id, _done_or_lapsed(now)))
            mine = s.get(AlterTurnRow, request_id)
            if mine is None:
                mine = AlterTurnRow(request_id=request_id, table_id=table_id, triggered_at=triggered_at)
                s.add(mine)
            mine.heavy = heavy
            mine.expires_at = now + timedelta(seconds=hold_s)
            turn = self._verdict(s, mine, now)
            if turn.go and mine.let_through_at is None:
                mine.let_through_at = now
            return turn

    def glance(self, request_id: str, table_id: int, triggered_at: datetime, now: datetime | None = None) -> bool:
        """Whether `take` may let the run through now, changing nothing: a waiter's frequent looks."""
        now = now or utcnow()
        with self.catalog.db_session() as s:
            mine = s.get(AlterTurnRow, request_id) or AlterTurnRow(
                request_id=request_id, table_id=table_id, triggered_at=triggered_at, heavy=True
            )
            return self._verdict(s, mine, now).go

    def leave(self, request_id: str) -> None:
        """Take the run out of its line (it was refused, or it is over)."""
        with self.catalog.db_session() as s, s.begin():
            s.execute(delete(AlterTurnRow).where(AlterTurnRow.request_id == request_id))

    def line(self, table_id: int, now: datetime | None = None) -> list[str]:
        """The request ids in the table's line, first first (lapsed ones and those with a job left out)."""
        now = now or utcnow()
        with self.catalog.db_session() as s:
            rows = s.scalars(
                select(AlterTurnRow)
                .where(AlterTurnRow.table_id == table_id, ~_done_or_lapsed(now))
                .order_by(AlterTurnRow.triggered_at, AlterTurnRow.request_id)
            )
            return [row.request_id for row in rows]

    @staticmethod
    def _lock_table(s: Session, table_id: int) -> None:
        table = s.scalar(select(TableRow).where(TableRow.id == table_id).with_for_update())
        if table is None or table.name_key is None:
            raise UnknownObject(f"unknown table (id {table_id})")

    def _verdict(self, s: Session, mine: AlterTurnRow, now: datetime) -> Turn:
        job = self.catalog.active_job_row(s, mine.table_id)
        if job is not None and job.request_id != mine.request_id:
            return Turn(False, f"job {job.id} ({job.state}) on {job.table_name}")
        if mine.let_through_at is not None:  # its turn came: a run triggered before it that joined since waits behind it
            return Turn(True)
        query = select(AlterTurnRow).where(
            AlterTurnRow.table_id == mine.table_id,
            AlterTurnRow.request_id != mine.request_id,
            ~_done_or_lapsed(now),
            or_(
                AlterTurnRow.let_through_at.is_not(None),
                AlterTurnRow.triggered_at < mine.triggered_at,
                and_(AlterTurnRow.triggered_at == mine.triggered_at, AlterTurnRow.request_id < mine.request_id),
            ),
        )
        if not mine.heavy:  # a light run overlaps other light ones
            query = query.where(AlterTurnRow.heavy)
        order = (AlterTurnRow.let_through_at.is_(None), AlterTurnRow.triggered_at, AlterTurnRow.request_id)
        ahead = s.scalar(query.order_by(*order).limit(1))
        if ahead is not None:
            how = "let through, making its job" if ahead.let_through_at is not None else "triggered before it"
            return Turn(False, f"run {ahead.request_id} ({how})")
        return Turn(True)


def _done_or_lapsed(now: datetime):
    """A row whose run has its job (committed or started) or stopped renewing its place."""
    return or_(AlterTurnRow.expires_at <= now, exists().where(AlterJobRow.request_id == AlterTurnRow.request_id))
