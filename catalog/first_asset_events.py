"""The first asset event on each table's asset (docs/airflow.md#scheduling-on-a-tables-schema-changes-asset-events).

Airflow 3.3 creates an asset in its database when the first event on it is registered, without
looking for a row another task inserts at the same moment: two tasks that emit the first events on
one table's asset in the same instant (two light ALTERs side by side) collide there ("duplicate
key value violates unique constraint idx_asset_name_uri_unique"), and Airflow marks one of them
failed though its change committed. The task that emits a table's first event says so here; an
event within `spacing_s` after it waits until the first is that old, by which time Airflow has
created the asset (it registers a task's events as the task finishes, within a second), and
later events never wait.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.exc import IntegrityError

from alterflow.catalog.catalog import Catalog, utcnow
from alterflow.catalog.models import FirstAssetEventRow

SPACING_S = 5.0  # how long after a table's first asset event the next ones wait


class FirstAssetEvents:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def wait_s(self, uri: str, spacing_s: float = SPACING_S, now: datetime | None = None) -> float:
        """How long an event on `uri` about to be emitted waits: 0 for the first (recorded now) and
        for any event `spacing_s` or more after it; else until the first is `spacing_s` old."""
        now = now or utcnow()
        with self.catalog.db_session() as s:
            first = s.get(FirstAssetEventRow, uri)
        if first is None:
            try:
                with self.catalog.db_session() as s, s.begin():
                    s.add(FirstAssetEventRow(uri=uri, emitted_at=now))
                return 0.0
            except IntegrityError:  # another task's event on it was recorded first, just now
                with self.catalog.db_session() as s:
                    first = s.get(FirstAssetEventRow, uri)
        ready = first.emitted_at + timedelta(seconds=spacing_s)
        return max(0.0, (ready - now).total_seconds())
