"""The catalog's record of versioned migrations (docs/migrations.md): which files were applied, with what
checksum, and each statement with the request it ran under and what it made; plus the apply lease
(one `alterflow migrate apply` at a time per catalog). Each method is one database transaction.

States of a file: APPLYING (an apply is running it, or was killed or repaired inside it: the next
apply continues it), APPLIED, FAILED (a statement failed: `repair` clears it), BASELINE (the
catalog adopted migrations up to this version without running them), DELETED (its file left the
directory after it ran; `repair` marked it so, and it is no longer drift; back in the directory,
`repair` returns it to APPLIED, or APPLYING if it had not finished). `migrate set` records a file
APPLIED with no statement row. Of a statement: RUNNING
(recorded before it runs, with its request id), DONE, FAILED.

A statement's RUNNING and DONE records are committed without waiting for the disk (`_unsynced`:
SQLite `synchronous=NORMAL` in WAL mode, PostgreSQL `synchronous_commit = off`). They survive a
killed process as any commit does; after a power cut or an OS crash the last of them may be gone,
but never one that a later durable commit follows, since both databases make their log durable
in commit order. The statement's own effect is such a commit (its job, table, view or load), so
a RUNNING record is on disk whenever what the statement did is; a DONE record that is lost leaves
the statement RUNNING, and the next apply finds its effect by its request id (as after a kill).
Apply makes two of these per statement, and waiting for the disk twice more would cost a light
ALTER about half again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, Select, bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from alterflow.catalog.catalog import Catalog, utcnow
from alterflow.catalog.catalog_errors import CatalogError, ConcurrentChange
from alterflow.catalog.models import (
    AlterJobRow,
    MigrationLeaseRow,
    MigrationRow,
    MigrationStatementRow,
    SchemaVersionRow,
    TableRow,
    TransactionRow,
    ViewRow,
)
from alterflow.catalog.states import TransactionState, VersionState

APPLYING, APPLIED, FAILED, BASELINE, DELETED = "APPLYING", "APPLIED", "FAILED", "BASELINE", "DELETED"
RUNNING, DONE = "RUNNING", "DONE"
VERSIONED, REPEATABLE = "VERSIONED", "REPEATABLE"  # af_migrations.kind
LEASE_NAME = "apply"

# The two writes apply makes around every statement, as Core statements built once and run on a
# connection: through an ORM session each cost a millisecond or more of Python, as much as the
# durable commit itself, and a light ALTER costs little more than both together.
_DELETE_FAILED_STATEMENT = delete(MigrationStatementRow).where(
    MigrationStatementRow.migration_id == bindparam("migration_id"),
    MigrationStatementRow.position == bindparam("position"),
    MigrationStatementRow.state == FAILED,
)
_INSERT_STATEMENT = insert(MigrationStatementRow)
_FINISH_STATEMENT = (
    update(MigrationStatementRow)
    .where(MigrationStatementRow.migration_id == bindparam("of_migration"), MigrationStatementRow.position == bindparam("at_position"))
    .values(
        state=DONE,
        table_name=bindparam("made_table_name"),
        table_id=bindparam("made_table_id"),
        job_id=bindparam("made_job_id"),
        schema_version=bindparam("made_version"),
        finished_at=bindparam("finished"),
    )
)
_JOB_OF_REQUEST = select(AlterJobRow.id, AlterJobRow.table_id, AlterJobRow.table_name, AlterJobRow.to_version).where(
    AlterJobRow.request_id == bindparam("request_id")
)


class MigrationLeaseHeld(CatalogError):
    """Another `migrate apply` holds the catalog's apply lease; nothing changed."""


@dataclass(frozen=True)
class RecordedStatement:
    position: int
    line: int
    text_hash: str
    request_id: str
    state: str
    table_name: str | None
    table_id: int | None
    job_id: int | None
    schema_version: int | None
    started_at: datetime
    finished_at: datetime | None
    error: str


@dataclass(frozen=True)
class RecordedMigration:
    id: int
    version: str
    description: str
    script: str
    checksum: str
    state: str
    installed_by: str
    started_at: datetime
    finished_at: datetime | None
    error: str
    statements: tuple[RecordedStatement, ...]

    def statement(self, position: int) -> RecordedStatement | None:
        return next((s for s in self.statements if s.position == position), None)


@dataclass(frozen=True)
class MadeVersion:
    """A schema version in the catalog: who made it is told by the migration history."""

    table_id: int
    table_name: str
    version: int
    statement: str
    created_at: datetime


@dataclass(frozen=True)
class LeaseState:
    holder: str | None
    expires_at: datetime | None


def _statement(row: MigrationStatementRow) -> RecordedStatement:
    return RecordedStatement(
        row.position,
        row.line,
        row.text_hash,
        row.request_id,
        row.state,
        row.table_name,
        row.table_id,
        row.job_id,
        row.schema_version,
        row.started_at,
        row.finished_at,
        row.error,
    )


def _dropped_since(model: type[TableRow] | type[ViewRow], name_key: str, since: datetime) -> Select:
    """A dropped table's (or view's) id, when one of that name was dropped at or after `since`."""
    return select(model.id).where(model.name_key.is_(None), model.dropped_at >= since).where(func.lower(model.name) == name_key)


class MigrationHistory:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def _session(self):
        return self.catalog.db_session()

    @contextlib.contextmanager
    def _unsynced(self) -> Iterator[Connection]:
        """A transaction committed without waiting for the disk (see the module's docstring)."""
        with self.catalog.engine.connect() as conn:
            if conn.dialect.name != "sqlite":
                with conn.begin():
                    conn.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
                    yield conn
                return
            raw = conn.connection.driver_connection  # autocommit: the pragma is outside any transaction
            raw.execute("PRAGMA synchronous=NORMAL")
            try:
                with conn.begin():
                    yield conn
            finally:
                try:
                    raw.execute("PRAGMA synchronous=FULL")  # back to the pool as it came
                except Exception:  # noqa: BLE001 - then never back to the pool: closed instead
                    conn.invalidate()

    # -- reading ----------------------------------------------------------------------------
    def migrations(self) -> list[RecordedMigration]:
        """Every recorded versioned file (and the baseline), with its statements, oldest first
        (the applications of repeatable files: `alterflow.catalog.repeatable_history`)."""
        with self._session() as s:
            rows = list(s.scalars(select(MigrationRow).where(MigrationRow.kind == VERSIONED).order_by(MigrationRow.id)))
            statements: dict[int, list[RecordedStatement]] = {}
            for st in s.scalars(select(MigrationStatementRow).order_by(MigrationStatementRow.migration_id, MigrationStatementRow.position)):
                statements.setdefault(st.migration_id, []).append(_statement(st))
            return [
                RecordedMigration(
                    r.id,
                    r.version,
                    r.description,
                    r.script,
                    r.checksum,
                    r.state,
                    r.installed_by,
                    r.started_at,
                    r.finished_at,
                    r.error,
                    tuple(statements.get(r.id, ())),
                )
                for r in rows
            ]

    def schema_versions_since(self, since: datetime) -> list[MadeVersion]:
        """Every committed schema version created at or after `since` (drift: which of them no
        migration made)."""
        with self._session() as s:
            rows = s.execute(
                select(SchemaVersionRow, TableRow.name)
                .join(TableRow, TableRow.id == SchemaVersionRow.table_id)
                .where(SchemaVersionRow.created_at >= since, SchemaVersionRow.state == VersionState.COMMITTED)
                .order_by(SchemaVersionRow.created_at, SchemaVersionRow.table_id, SchemaVersionRow.version)
            ).all()
            return [MadeVersion(v.table_id, name, v.version, v.statement, v.created_at) for v, name in rows]

    # -- writing ----------------------------------------------------------------------------
    def baseline(self, version: str, description: str, installed_by: str) -> None:
        """Record that the catalog adopts migrations up to `version` without running them;
        refused once any history exists."""
        now = utcnow()
        with self._session() as s, s.begin():
            existing = s.scalars(select(MigrationRow).order_by(MigrationRow.id).limit(1)).first()
            if existing is not None:
                raise CatalogError(
                    f"migrate baseline: the catalog already has migration history ({existing.script} {existing.state}); "
                    "a baseline only adopts a catalog that has none"
                )
            s.add(
                MigrationRow(
                    version=version,
                    description=description,
                    script="<< baseline >>",
                    checksum="",
                    state=BASELINE,
                    installed_by=installed_by,
                    started_at=now,
                    finished_at=now,
                    error="",
                )
            )

    def begin_file(self, version: str, description: str, script: str, checksum: str, installed_by: str) -> int:
        """The history row of a file an apply starts (APPLYING), made now or found (a file an
        earlier apply left APPLYING); its id."""
        with self._session() as s, s.begin():
            row = s.scalars(select(MigrationRow).where(MigrationRow.version == version)).first()
            if row is None:
                row = MigrationRow(
                    version=version,
                    description=description,
                    script=script,
                    checksum=checksum,
                    state=APPLYING,
                    installed_by=installed_by,
                    started_at=utcnow(),
                    error="",
                )
                s.add(row)
                s.flush()
            elif row.state != APPLYING:
                raise ConcurrentChange(f"{script} is {row.state} in the migration history; it cannot be applied again")
            return row.id

    def start_statement(self, migration_id: int, position: int, line: int, text_hash: str, request_id: str) -> None:
        """Record a statement as RUNNING under `request_id`, before it runs (a FAILED record of the
        same statement, cleared by repair, is replaced)."""
        with self._unsynced() as conn:
            conn.execute(_DELETE_FAILED_STATEMENT, {"migration_id": migration_id, "position": position})
            conn.execute(
                _INSERT_STATEMENT,
                {
                    "migration_id": migration_id,
                    "position": position,
                    "line": line,
                    "text_hash": text_hash,
                    "request_id": request_id,
                    "state": RUNNING,
                    "started_at": utcnow(),
                    "error": "",
                },
            )

    def finish_statement(
        self,
        migration_id: int,
        position: int,
        table_name: str | None,
        table_id: int | None,
        job_id: int | None,
        schema_version: int | None,
    ) -> None:
        with self._unsynced() as conn:
            conn.execute(
                _FINISH_STATEMENT,
                {
                    "of_migration": migration_id,
                    "at_position": position,
                    "made_table_name": table_name,
                    "made_table_id": table_id,
                    "made_job_id": job_id,
                    "made_version": schema_version,
                    "finished": utcnow(),
                },
            )

    def fail(self, migration_id: int, position: int | None, error: str) -> None:
        """The file is FAILED with `error`, and its statement at `position` too."""
        now = utcnow()
        with self._session() as s, s.begin():
            if position is not None:
                s.execute(
                    update(MigrationStatementRow)
                    .where(MigrationStatementRow.migration_id == migration_id, MigrationStatementRow.position == position)
                    .values(state=FAILED, error=error, finished_at=now)
                )
            s.execute(update(MigrationRow).where(MigrationRow.id == migration_id).values(state=FAILED, error=error, finished_at=now))

    def finish_file(self, migration_id: int) -> None:
        with self._session() as s, s.begin():
            s.execute(update(MigrationRow).where(MigrationRow.id == migration_id).values(state=APPLIED, finished_at=utcnow(), error=""))

    def repair(self, checksums: dict[str, str]) -> list[str]:
        """Accept the given current checksums (version -> checksum) of applied files, clear FAILED
        (the file is APPLYING again: the next apply retries from its failed statement), and forget
        the records of files that were deleted while never applied through (FAILED or APPLYING with
        nothing done). What it did, a line each."""
        done: list[str] = []
        with self._session() as s, s.begin():
            rows = select(MigrationRow).where(MigrationRow.state.not_in((BASELINE, DELETED)), MigrationRow.kind == VERSIONED)
            for row in s.scalars(rows.order_by(MigrationRow.id)):
                if row.state == FAILED:
                    row.state = APPLYING
                    row.error = ""
                    row.finished_at = None
                    done.append(f"{row.script}: FAILED cleared; apply retries it from its failed statement")
                if row.version in checksums and checksums[row.version] != row.checksum:
                    row.checksum = checksums[row.version]
                    done.append(f"{row.script}: its current checksum accepted")
        return done

    def readopt(self, version: str, checksum: str) -> str:
        """A file `repair` marked DELETED is back in the directory: its row goes back to the state
        it had (APPLIED when it had finished, else APPLYING: the next apply continues it) with
        the file's checksum; that state. Compare-and-set on DELETED."""
        with self._session() as s, s.begin():
            row = s.scalars(select(MigrationRow).where(MigrationRow.version == version, MigrationRow.state == DELETED)).first()
            if row is None:
                raise ConcurrentChange(f"version {version} is no longer DELETED in the migration history")
            row.state = APPLIED if row.finished_at is not None and not row.error else APPLYING
            row.checksum = checksum
            return row.state

    def record_applied(self, files: list[tuple[str, str, str, str]], installed_by: str) -> datetime:
        """`migrate set`: record each (version, description, script, checksum) as APPLIED without
        running it, by `installed_by`, now (one transaction; the time). A file's row may exist
        only as APPLYING with no statement recorded (an apply that stopped before its first
        statement); any other row refuses the whole (ConcurrentChange)."""
        now = utcnow()
        with self._session() as s, s.begin():
            for version, description, script, checksum in files:
                row = s.scalars(select(MigrationRow).where(MigrationRow.version == version)).first()
                if row is None:
                    s.add(
                        MigrationRow(
                            version=version,
                            description=description,
                            script=script,
                            checksum=checksum,
                            state=APPLIED,
                            installed_by=installed_by,
                            started_at=now,
                            finished_at=now,
                            error="",
                        )
                    )
                    continue
                ran = s.scalars(select(MigrationStatementRow.position).where(MigrationStatementRow.migration_id == row.id)).first()
                if row.state != APPLYING or ran is not None:
                    raise ConcurrentChange(f"{script} is {row.state} in the migration history now; nothing was recorded")
                row.state, row.checksum, row.installed_by, row.started_at, row.finished_at, row.error = (
                    APPLIED,
                    checksum,
                    installed_by,
                    now,
                    now,
                    "",
                )
        return now

    def mark_deleted(self, version: str) -> None:
        with self._session() as s, s.begin():
            s.execute(update(MigrationRow).where(MigrationRow.version == version).values(state=DELETED))

    def forget(self, version: str) -> None:
        """Remove a file's record whose statements never ran (a repair of a deleted file)."""
        with self._session() as s, s.begin():
            row = s.scalars(select(MigrationRow).where(MigrationRow.version == version)).first()
            if row is None:
                return
            s.execute(delete(MigrationStatementRow).where(MigrationStatementRow.migration_id == row.id))
            s.delete(row)

    # -- effects of a statement an apply was killed in ----------------------------------------
    def job_of_request(self, request_id: str) -> tuple[int, int, str, int] | None:
        """(job id, table id, table name, version it makes) of the ALTER job run under `request_id`."""
        with self.catalog.engine.connect() as conn:
            row = conn.execute(_JOB_OF_REQUEST, {"request_id": request_id}).first()
            return None if row is None else (row[0], row[1], row[2], row[3])

    def table_created_since(self, name_key: str, since: datetime) -> tuple[int, str] | None:
        """(id, name) of the live table of that name when it was created at or after `since`."""
        with self._session() as s:
            row = s.scalars(select(TableRow).where(TableRow.name_key == name_key, TableRow.created_at >= since)).first()
            return None if row is None else (row.id, row.name)

    def table_dropped_since(self, name_key: str, since: datetime) -> bool:
        return self._found(_dropped_since(TableRow, name_key, since))

    def view_created_since(self, name_key: str, since: datetime) -> bool:
        return self._found(select(ViewRow.id).where(ViewRow.name_key == name_key, ViewRow.created_at >= since))

    def view_dropped_since(self, name_key: str, since: datetime) -> bool:
        return self._found(_dropped_since(ViewRow, name_key, since))

    def load_committed(self, label: str) -> bool:
        """Whether a load labelled `label` committed."""
        return self._found(
            select(TransactionRow.id).where(TransactionRow.label == label, TransactionRow.state == TransactionState.COMMITTED)
        )

    def _found(self, query: Select) -> bool:
        """Whether `query` finds a row."""
        with self._session() as s:
            return s.scalars(query).first() is not None

    # -- the apply lease --------------------------------------------------------------------
    def lease(self) -> LeaseState:
        with self._session() as s:
            row = s.get(MigrationLeaseRow, LEASE_NAME)
            return LeaseState(None, None) if row is None else LeaseState(row.holder, row.expires_at)

    def acquire_lease(self, holder: str, lease_s: float, now: datetime | None = None) -> LeaseState:
        """Take the apply lease for `holder` when it is free or expired (compare-and-set); else
        return who holds it, and until when, without taking it."""
        now = now or utcnow()
        until = now + timedelta(seconds=lease_s)
        with self._session() as s, s.begin():
            row = s.get(MigrationLeaseRow, LEASE_NAME, with_for_update=True)
            if row is None:
                s.add(MigrationLeaseRow(name=LEASE_NAME, holder=holder, acquired_at=now, expires_at=until))
                try:
                    s.flush()
                except IntegrityError:  # another apply made the row first
                    raise ConcurrentChange("another migrate apply started at the same moment") from None
                return LeaseState(holder, until)
            if row.holder is not None and row.holder != holder and row.expires_at is not None and row.expires_at >= now:
                return LeaseState(row.holder, row.expires_at)
            row.holder, row.acquired_at, row.expires_at = holder, now, until
            return LeaseState(holder, until)

    def renew_lease(self, holder: str, lease_s: float) -> bool:
        now = utcnow()
        with self._session() as s, s.begin():
            result = s.execute(
                update(MigrationLeaseRow)
                .where(MigrationLeaseRow.name == LEASE_NAME, MigrationLeaseRow.holder == holder)
                .values(expires_at=now + timedelta(seconds=lease_s))
            )
            return result.rowcount == 1

    def release_lease(self, holder: str) -> None:
        with self._session() as s, s.begin():
            s.execute(
                update(MigrationLeaseRow)
                .where(MigrationLeaseRow.name == LEASE_NAME, MigrationLeaseRow.holder == holder)
                .values(holder=None, expires_at=None)
            )
