"""The first asset event on each table's asset (docs/airflow.md#scheduling-on-a-tables-schema-changes-asset-events).

Airflow 3.3 creates an asset in its database when the first event on it is registered, without
looking for a row another task inserts at the same moment: two tasks that emit the first events on
one table's asset in the same instant (two light ALTERs side by side) collide there ("duplicate
key value violates unique constraint idx_asset_name_uri_unique"), and Airflow marks one of them
failed though its change committed. The task that emits a table's first event says so here; an
event within `spacing_s` after it waits until the first is that old, by which time Airflow has
created the asset (it registers a task's events as the task finishes, within a second), and
later events never wait. The row also names the Airflow task that emitted the first event: once
that task has succeeded, Airflow has created the asset (it registers a task's events in the
transaction that marks it succeeded), so an event within the spacing goes at once after all, as a
table's next ALTER, triggered when the run before it ended, does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.exc import IntegrityError

from alterflow.catalog.catalog import Catalog, utcnow
from alterflow.catalog.models import FirstAssetEventRow

SPACING_S = 5.0  # how long after a table's first asset event the next ones wait


@dataclass(frozen=True)
class EmittingTask:
    """The Airflow task instance that emits an asset event."""

    dag_id: str
    run_id: str
    task_id: str


class FirstAssetEvents:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def wait_s(
        self,
        uri: str,
        spacing_s: float = SPACING_S,
        now: datetime | None = None,
        emitter: EmittingTask | None = None,
        succeeded: Callable[[EmittingTask], bool] | None = None,
    ) -> float:
        """How long an event on `uri` about to be emitted (by `emitter`) waits: 0 for the first
        (recorded now, with its emitter) and for any event `spacing_s` or more after it, or after a
        first whose emitting task `succeeded` says has succeeded; else until the first is
        `spacing_s` old."""
        now = now or utcnow()
        with self.catalog.db_session() as s:
            first = s.get(FirstAssetEventRow, uri)
        if first is None:
            try:
                with self.catalog.db_session() as s, s.begin():
                    s.add(_first_row(uri, now, emitter))
                return 0.0
            except IntegrityError:  # another task's event on it was recorded first, just now
                with self.catalog.db_session() as s:
                    first = s.get(FirstAssetEventRow, uri)
        ready = first.emitted_at + timedelta(seconds=spacing_s)
        wait = max(0.0, (ready - now).total_seconds())
        first_emitter = _emitter_of(first)
        if wait > 0 and first_emitter is not None and first_emitter != emitter and succeeded is not None and succeeded(first_emitter):
            return 0.0  # Airflow registered the first event, and made the asset, as that task succeeded
        return wait


def _first_row(uri: str, now: datetime, emitter: EmittingTask | None) -> FirstAssetEventRow:
    if emitter is None:
        return FirstAssetEventRow(uri=uri, emitted_at=now)
    return FirstAssetEventRow(uri=uri, emitted_at=now, dag_id=emitter.dag_id, run_id=emitter.run_id, task_id=emitter.task_id)


def _emitter_of(row: FirstAssetEventRow) -> EmittingTask | None:
    if row.dag_id is None or row.run_id is None or row.task_id is None:
        return None  # recorded before migration 0013, or outside Airflow
    return EmittingTask(row.dag_id, row.run_id, row.task_id)
