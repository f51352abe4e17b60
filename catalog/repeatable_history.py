"""The catalog's record of repeatable migrations (`R__<description>.sql`): each application of a
file is a row of af_migrations of kind REPEATABLE (migration 0009) with the file's checksum then,
who and when, its state (APPLYING, APPLIED, FAILED) and its statements in af_migration_statements,
written by `MigrationHistory`'s statement methods as for a versioned file. A file is known by its
description, as in Flyway: the latest row of a description says whether the file on disk is
applied (same checksum) or is to be applied again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update

from alterflow.catalog.catalog import Catalog, utcnow
from alterflow.catalog.migration_history import APPLYING, FAILED, REPEATABLE
from alterflow.catalog.models import MigrationRow, ViewDependencyRow, ViewRow
from alterflow.catalog.schema import name_key


@dataclass(frozen=True)
class RepeatableRun:
    """One application of a repeatable file."""

    id: int
    description: str
    script: str
    checksum: str
    state: str  # APPLYING (running, or its apply stopped), APPLIED, FAILED
    installed_by: str
    started_at: datetime
    finished_at: datetime | None
    error: str


def description_key(description: str) -> str:
    """Descriptions compare case-insensitively (`R__Views.sql` and `R__views.sql` are one file)."""
    return description.casefold()


class RepeatableHistory:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def latest_runs(self) -> dict[str, RepeatableRun]:
        """The latest application of each description (by `description_key`)."""
        with self.catalog.db_session() as s:
            rows = s.scalars(select(MigrationRow).where(MigrationRow.kind == REPEATABLE).order_by(MigrationRow.id))
            latest = {}
            for r in rows:
                latest[description_key(r.description)] = RepeatableRun(
                    r.id, r.description, r.script, r.checksum, r.state, r.installed_by, r.started_at, r.finished_at, r.error
                )
            return latest

    def begin_run(self, description: str, script: str, checksum: str, installed_by: str) -> int:
        """A new application of a repeatable file, APPLYING; its id (the id its statements are
        recorded under)."""
        with self.catalog.db_session() as s, s.begin():
            row = MigrationRow(
                version=f"R:{uuid.uuid4().hex[:24]}",  # unique per application; never a version
                description=description,
                script=script,
                checksum=checksum,
                state=APPLYING,
                installed_by=installed_by,
                started_at=utcnow(),
                error="",
                kind=REPEATABLE,
            )
            s.add(row)
            s.flush()
            return row.id

    def abandon(self, run_id: int, error: str) -> None:
        """An application an apply was stopped in (still APPLYING) is FAILED with `error`: the
        next application runs the whole file again."""
        with self.catalog.db_session() as s, s.begin():
            s.execute(
                update(MigrationRow)
                .where(MigrationRow.id == run_id, MigrationRow.state == APPLYING)
                .values(state=FAILED, error=error, finished_at=utcnow())
            )

    def views_using_view(self, name: str) -> list[str]:
        """Names of the live views that read the live view `name`."""
        with self.catalog.db_session() as s:
            view = s.scalar(select(ViewRow.id).where(ViewRow.name_key == name_key(name)))
            if view is None:
                return []
            users = s.scalars(
                select(ViewRow.name)
                .join(ViewDependencyRow, ViewDependencyRow.view_id == ViewRow.id)
                .where(ViewDependencyRow.dep_view_id == view, ViewRow.name_key.is_not(None))
            )
            return sorted(set(users))
