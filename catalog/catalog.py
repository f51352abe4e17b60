"""`Catalog`: every read and write of the catalog database, each a single database transaction.

All queries use bound parameters (SQLAlchemy expressions); names are data, never SQL or paths.
Callers get plain dataclasses back, never live ORM rows.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, fields, replace
from datetime import datetime, timedelta

from sqlalchemy import Engine, and_, bindparam, delete, func, or_, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from alterflow.catalog.catalog_errors import (
    CatalogError,
    ConcurrentChange,
    DependentObjects,
    NameInUse,
    TableMoved,
    TransactionStateError,
    UnknownObject,
    checked_label,
)
from alterflow.catalog.database import open_engine
from alterflow.catalog.models import (
    AlterJobRow,
    AlterTurnRow,
    CatalogIdentityRow,
    DataFileRow,
    IndexRow,
    SchemaVersionRow,
    TableRow,
    TabletRow,
    TransactionRow,
    ViewDependencyRow,
    ViewRow,
)
from alterflow.catalog.records import (
    AlterContext,
    AlterJob,
    AlterProperties,
    JobSpec,
    NewFile,
    OpenTransaction,
    TableInfo,
    TableSnapshot,
    ViewDependency,
    ViewInfo,
    decode_version,
    remember_version,
    utcnow,
)
from alterflow.catalog.records import (
    DataFile as DataFile,  # re-exported: the readers take it from here
)
from alterflow.catalog.schema import SchemaVersion, name_key
from alterflow.catalog.snapshot_reads import Fetch, SnapshotReads, read_snapshot
from alterflow.catalog.states import FileState, IndexState, JobKind, JobState, TransactionState, VersionState
from alterflow.sql.names import named

ACTIVE_JOB_STATES = (JobState.PENDING, JobState.WAITING_TXN, JobState.RUNNING, JobState.VALIDATING, JobState.READY_TO_SWAP)

# The queries of every ALTER statement, built once: building a SQLAlchemy statement costs about as
# much CPU as running it on SQLite. Same SQL, same bound parameters.
_TABLE_AT_CURRENT_VERSION = (
    select(TableRow, SchemaVersionRow)
    .join(SchemaVersionRow, and_(SchemaVersionRow.table_id == TableRow.id, SchemaVersionRow.version == TableRow.current_version))
    .where(TableRow.name_key == bindparam("name_key"))
)
_ACTIVE_JOB = (
    select(AlterJobRow)
    .where(AlterJobRow.table_id == bindparam("table_id"), AlterJobRow.state.in_(ACTIVE_JOB_STATES))
    .order_by(AlterJobRow.id)
)
_JOB_BY_REQUEST = select(AlterJobRow).where(AlterJobRow.request_id == bindparam("request_id"))
_VIEW_USES = (
    select(ViewRow.name, ViewDependencyRow.column_ids)
    .join(ViewDependencyRow, ViewDependencyRow.view_id == ViewRow.id)
    .where(and_(ViewDependencyRow.table_id == bindparam("table_id"), ViewRow.name_key.is_not(None)))
)


LEASE_EXPIRED = "its lease expired"


def _lease_expired(txn: TransactionRow, now: datetime) -> bool:
    return txn.lease_expires_at is not None and txn.lease_expires_at < now


def _abort_expired(s: Session, txn: TransactionRow, now: datetime) -> list[str]:
    """Abort a PREPARE transaction past its timeout or lease (in `s`); its files' paths to delete."""
    txn.state = TransactionState.ABORTED
    if _lease_expired(txn, now) and not txn.timeout_at < now:
        txn.reason = LEASE_EXPIRED
    else:
        txn.reason = f"timed out at {txn.timeout_at.isoformat(sep=' ', timespec='seconds')}"
    txn.finished_at = now
    paths = []
    for f in s.scalars(select(DataFileRow).where(DataFileRow.txn_id == txn.id, DataFileRow.state == FileState.LIVE)):
        f.state = FileState.DELETED
        paths.append(f.path)
    return paths


# AlterJob's fields are its row's columns of the same name; two of them are stored as JSON.
_JOB_JSON_FIELDS = ("properties", "steps")
_JOB_COLUMNS = tuple(f.name for f in fields(AlterJob) if f.name not in _JOB_JSON_FIELDS)


def job_from_row(row: AlterJobRow) -> AlterJob:
    return AlterJob(
        **{name: getattr(row, name) for name in _JOB_COLUMNS},
        properties=AlterProperties.from_json(json.loads(row.properties)),
        steps=tuple(json.loads(row.steps)),
    )


def extend_lease(
    s: Session, row_class: type[TransactionRow | AlterJobRow], row_id: int, still_held: Iterable, expires_at: datetime, **more: object
) -> bool:
    """Move the lease of a load's transaction or of a job's runner to `expires_at`, a compare-and-set
    on the row while `still_held` holds (`more`: other columns to set with it); False when it did
    not (the lease is gone)."""
    result = s.execute(update(row_class).where(row_class.id == row_id, *still_held).values(lease_expires_at=expires_at, **more))
    return result.rowcount == 1


def lock_job_row(s: Session, job_id: int) -> AlterJobRow:
    """The job's row, locked for the rest of `s`'s transaction; UnknownObject if there is none."""
    row = s.get(AlterJobRow, job_id, with_for_update=True)
    if row is None:
        raise UnknownObject(f"unknown alter job {job_id}")
    return row


def _fetch(s: Session) -> Fetch:
    """The snapshot reads' fetch, in `s`'s transaction."""
    return lambda sql, params: s.execute(text(sql), params).all()


def _table(row: TableRow) -> TableInfo:
    return TableInfo(row.id, row.name, row.current_version, row.next_column_id, row.current_index_id, row.created_at)


def _version(row: SchemaVersionRow) -> SchemaVersion:
    return decode_version(row.table_id, row.version, row.spec, row.statement, row.created_at)


def _remember_written_version(row: SchemaVersionRow, version: SchemaVersion) -> None:
    """The version a commit just wrote is the one the next statement reads: keep the planner's
    object under the row's values instead of decoding the JSON it was encoded to."""
    remember_version(
        (row.table_id, row.version, row.spec, row.statement, row.created_at),
        replace(version, table_id=row.table_id, created_at=row.created_at),
    )


def version_row(spec: JobSpec, state: VersionState, now: datetime) -> SchemaVersionRow:
    """The row of an ALTER's new version: COMMITTED at once by a light ALTER, PENDING until the
    swap for a heavyweight one."""
    return SchemaVersionRow(
        table_id=spec.table_id,
        version=spec.new.version,
        state=state,
        spec=spec.new.spec_json(),
        statement=spec.new.statement,
        created_at=now,
    )


def job_row(spec: JobSpec, kind: JobKind, state: JobState, steps: Iterable[str], now: datetime, **more: object) -> AlterJobRow:
    """The row of an ALTER's job, recorded with `steps` done; `more` holds the columns only one
    kind sets (a light job's `finished_at`, a heavyweight one's indexes and boundary)."""
    return AlterJobRow(
        request_id=spec.request_id,
        table_id=spec.table_id,
        table_name=spec.table_name,
        kind=kind,
        state=state,
        statement=spec.new.statement,
        properties=json.dumps(spec.properties.to_json(), sort_keys=True),
        from_version=spec.old_version,
        to_version=spec.new.version,
        msg="",
        progress="",
        steps=json.dumps(list(steps)),
        timeout_s=spec.timeout_s,
        created_at=now,
        **more,
    )


class Catalog(SnapshotReads):
    """The versioned catalog on one database (SQLite or PostgreSQL). Its reads of a query's binding
    (`object_kind`, `snapshot`, `view`, ...) are `SnapshotReads`', run through SQLAlchemy."""

    def __init__(self, url: str | None = None, engine: Engine | None = None):
        self.engine = engine if engine is not None else open_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._id: str | None = None

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Fetch]:
        with self.db_session() as s, s.begin():
            yield _fetch(s)

    def db_session(self) -> Session:
        """A database session, for the catalog package's own modules (heavy_jobs, garbage,
        leases): no ORM object or session leaves the catalog package."""
        return self._sessions()

    def catalog_id(self) -> str:
        """The id this catalog was given when it was created (migration 0007): the warehouse it
        owns records it (alterflow.store.warehouse). Read once per Catalog object."""
        if self._id is None:
            with self.db_session() as s:
                self._id = s.scalar(select(CatalogIdentityRow.id))
            if self._id is None:
                raise CatalogError("the catalog database has no identity row (af_catalog): run `alterflow db upgrade`")
        return self._id

    def new_identity(self) -> str:
        """Give this catalog a new id (a forced `alterflow db bind-warehouse`): copies of the
        database made before (a clone, an older restore) keep the old one, so the warehouse the
        new id is recorded in refuses them."""
        new_id = uuid.uuid4().hex
        with self.db_session() as s, s.begin():
            s.execute(update(CatalogIdentityRow).values(id=new_id))
        self._id = new_id
        return new_id

    def table_ids(self) -> set[int]:
        """Every table id this catalog ever gave, dropped tables included."""
        with self.db_session() as s:
            return set(s.scalars(select(TableRow.id)))

    # -- names --------------------------------------------------------------------------------
    def _live_table(self, s: Session, name: str) -> TableRow:
        row = s.scalar(select(TableRow).where(TableRow.name_key == name_key(name)))
        if row is None:
            raise UnknownObject(f"unknown table {named(name)}")
        return row

    def _live_view(self, s: Session, name: str) -> ViewRow | None:
        return s.scalar(select(ViewRow).where(ViewRow.name_key == name_key(name)))

    # -- tables -------------------------------------------------------------------------------
    def create_table(
        self,
        name: str,
        build: Callable[[int], tuple[SchemaVersion, int]],
        statement: str,
        if_not_exists: bool = False,
    ) -> TableInfo | None:
        """Create a table with version 1 from `build(table_id) -> (version, next_column_id)`.

        Returns None when it exists and `if_not_exists` is set."""
        now = utcnow()
        try:
            with self.db_session() as s, s.begin():
                if self._live_view(s, name) is not None:
                    raise NameInUse(f"cannot create table {name}: a view of that name exists")
                existing = s.scalar(select(TableRow).where(TableRow.name_key == name_key(name)))
                if existing is not None:
                    if if_not_exists:
                        return None
                    raise NameInUse(f"table {name} already exists")
                row = TableRow(
                    name=name,
                    name_key=name_key(name),
                    current_version=1,
                    next_column_id=1,
                    commit_seq=0,
                    created_at=now,
                )
                s.add(row)
                s.flush()
                version, next_column_id = build(row.id)
                row.next_column_id = next_column_id
                s.add(
                    SchemaVersionRow(
                        table_id=row.id,
                        version=1,
                        state=VersionState.COMMITTED,
                        spec=version.spec_json(),
                        statement=statement,
                        created_at=now,
                    )
                )
                index = IndexRow(table_id=row.id, schema_version=1, state=IndexState.ACTIVE, created_at=now)
                s.add(index)
                s.flush()
                row.current_index_id = index.id
                return _table(row)
        except IntegrityError as exc:
            if if_not_exists:
                return None
            raise NameInUse(f"table {name} already exists") from exc

    def drop_table(self, name: str, if_exists: bool = False) -> TableInfo | None:
        """Mark a table dropped (its name becomes free). Returns None if absent and `if_exists`."""
        with self.db_session() as s, s.begin():
            row = s.scalar(select(TableRow).where(TableRow.name_key == name_key(name)))
            if row is None:
                if if_exists:
                    return None
                raise UnknownObject(f"unknown table {named(name)}")
            views = self._views_reading_table(s, row.id)
            if views:
                raise DependentObjects(f"cannot drop table {row.name}: view {', '.join(views)} uses it")
            job = self.active_job_row(s, row.id)
            if job is not None:
                raise DependentObjects(f"cannot drop table {row.name}: alter job {job.id} ({job.state}) is not finished")
            row.name_key = None
            row.dropped_at = utcnow()
            s.execute(update(IndexRow).where(IndexRow.table_id == row.id).values(state=IndexState.RETIRED, retired_at=row.dropped_at))
            s.execute(
                update(TransactionRow)
                .where(TransactionRow.table_id == row.id, TransactionRow.state == TransactionState.PREPARE)
                .values(state=TransactionState.ABORTED, finished_at=row.dropped_at, reason="table dropped")
            )
            return _table(row)

    def table(self, name: str) -> TableInfo:
        with self.db_session() as s:
            return _table(self._live_table(s, name))

    def tables(self) -> list[TableInfo]:
        with self.db_session() as s:
            rows = s.scalars(select(TableRow).where(TableRow.name_key.is_not(None)).order_by(TableRow.id))
            return [_table(r) for r in rows]

    def current_schema(self, name: str) -> tuple[TableInfo, SchemaVersion]:
        with self.db_session() as s:
            table = self._live_table(s, name)
            return _table(table), _version(s.get(SchemaVersionRow, (table.id, table.current_version)))

    def schema_versions(self, table_id: int) -> list[SchemaVersion]:
        with self.db_session() as s:
            rows = s.scalars(
                select(SchemaVersionRow)
                .where(SchemaVersionRow.table_id == table_id, SchemaVersionRow.state == VersionState.COMMITTED)
                .order_by(SchemaVersionRow.version)
            )
            return [_version(r) for r in rows]

    # -- lightweight ALTER --------------------------------------------------------------------
    def commit_light_alter(
        self, spec: JobSpec, steps: Iterable[str], check_files: Callable[[TableSnapshot], None] | None = None
    ) -> AlterJob:
        """Make `spec.new` the current version in one database transaction, with its FINISHED job.

        Compare-and-set on the table's current version: of two concurrent ALTERs planned against
        the same version, exactly one commits; the other gets ConcurrentChange. Re-running with
        the same request id returns the job already recorded (idempotent retry). `check_files`
        looks at the table's files as of `spec.old_version` under the table row's lock (no load
        commits meanwhile) and may refuse the commit."""
        now = utcnow()
        try:
            with self.db_session() as s, s.begin():
                done = s.scalar(_JOB_BY_REQUEST, {"request_id": spec.request_id})
                if done is not None:
                    return job_from_row(done)
                self._claim_next_version(s, spec)
                s.execute(delete(AlterTurnRow).where(AlterTurnRow.request_id == spec.request_id))  # its turn is over
                if check_files is not None:
                    check_files(read_snapshot(_fetch(s), _table(s.get(TableRow, spec.table_id)), version=spec.old_version))
                new_version = version_row(spec, VersionState.COMMITTED, now)
                s.add(new_version)
                row = job_row(spec, JobKind.LIGHT, JobState.FINISHED, steps, now, finished_at=now)
                s.add(row)
                s.flush()
                job = job_from_row(row)
            _remember_written_version(new_version, spec.new)  # committed: the next read gets this object
            return job
        except IntegrityError as exc:
            existing = self.job_by_request(spec.request_id)
            if existing is not None:
                return existing
            raise TableMoved(
                f"ALTER TABLE {spec.table_name}: another ALTER committed version {spec.new.version} first; nothing was applied"
            ) from exc

    def _claim_next_version(self, s: Session, spec: JobSpec) -> None:
        """The compare-and-set of a light ALTER, first: it takes the table row's lock, which a
        heavyweight job's start holds too, so the job check after it sees a job started meanwhile."""
        result = s.execute(
            update(TableRow)
            .where(
                TableRow.id == spec.table_id,
                TableRow.current_version == spec.old_version,
                TableRow.name_key.is_not(None),
            )
            .values(current_version=spec.new.version, next_column_id=spec.next_column_id)
        )
        job = self.active_job_row(s, spec.table_id)
        if job is not None:
            raise ConcurrentChange(f"ALTER TABLE {spec.table_name}: job {job.id} ({job.state}) is not finished; one job per table")
        if result.rowcount != 1:
            raise TableMoved(
                f"ALTER TABLE {spec.table_name}: the table changed since this statement was planned "
                f"(version {spec.old_version} is no longer current); nothing was applied"
            )

    # -- alter jobs ---------------------------------------------------------------------------
    def active_job_row(self, s: Session, table_id: int) -> AlterJobRow | None:
        return s.scalar(_ACTIVE_JOB, {"table_id": table_id})

    def active_job(self, table_id: int) -> AlterJob | None:
        with self.db_session() as s:
            row = self.active_job_row(s, table_id)
            return job_from_row(row) if row is not None else None

    def alter_context(self, name: str, version: int | None = None) -> AlterContext:
        """The table, its current version, `version` (default: the current one), its unfinished
        job and the view uses of its columns, read in one transaction (one round of queries per
        ALTER step instead of one connection per item)."""
        with self.db_session() as s:
            found = s.execute(_TABLE_AT_CURRENT_VERSION, {"name_key": name_key(name)}).first()
            if found is None:
                raise UnknownObject(f"unknown table {named(name)}")
            table, current = found[0], _version(found[1])
            base = current
            if version is not None and version != current.version:
                row = s.get(SchemaVersionRow, (table.id, version))
                if row is None:
                    raise UnknownObject(f"table id {table.id} has no schema version {version}")
                base = _version(row)
            job = self.active_job_row(s, table.id)
            return AlterContext(_table(table), current, base, job_from_row(job) if job is not None else None, self._view_uses(s, table.id))

    def alter_contexts(self, names: Iterable[str]) -> dict[str, AlterContext]:
        """`alter_context` of each named table that exists, by name key, at its current version:
        three queries per 500 tables instead of three per table (`migrate lint` plans hundreds)."""
        keys = sorted({name_key(n) for n in names})
        contexts: dict[str, AlterContext] = {}
        for start in range(0, len(keys), 500):  # a bounded IN list (SQLite limits bound parameters)
            contexts.update(self._alter_contexts(keys[start : start + 500]))
        return contexts

    def _alter_contexts(self, keys: list[str]) -> dict[str, AlterContext]:
        with self.db_session() as s:
            found = s.execute(
                select(TableRow, SchemaVersionRow)
                .join(
                    SchemaVersionRow, and_(SchemaVersionRow.table_id == TableRow.id, SchemaVersionRow.version == TableRow.current_version)
                )
                .where(TableRow.name_key.in_(keys))
            ).all()
            ids = [table.id for table, _version_row in found]
            jobs: dict[int, AlterJobRow] = {}
            for job in s.scalars(
                select(AlterJobRow).where(AlterJobRow.table_id.in_(ids), AlterJobRow.state.in_(ACTIVE_JOB_STATES)).order_by(AlterJobRow.id)
            ):
                jobs.setdefault(job.table_id, job)  # the first, as `active_job_row` reads it
            uses: dict[int, dict[int, set[str]]] = {}
            for table_id, view_name, column_ids in s.execute(
                select(ViewDependencyRow.table_id, ViewRow.name, ViewDependencyRow.column_ids)
                .join(ViewDependencyRow, ViewDependencyRow.view_id == ViewRow.id)
                .where(ViewDependencyRow.table_id.in_(ids), ViewRow.name_key.is_not(None))
            ):
                for cid in json.loads(column_ids):
                    uses.setdefault(table_id, {}).setdefault(cid, set()).add(view_name)
            contexts = {}
            for table, version_row in found:
                current = _version(version_row)
                job = jobs.get(table.id)
                view_uses = {cid: tuple(sorted(views)) for cid, views in uses.get(table.id, {}).items()}
                contexts[table.name_key] = AlterContext(
                    _table(table), current, current, job_from_row(job) if job is not None else None, view_uses
                )
            return contexts

    def job_by_request(self, request_id: str) -> AlterJob | None:
        with self.db_session() as s:
            row = s.scalar(_JOB_BY_REQUEST, {"request_id": request_id})
            return job_from_row(row) if row is not None else None

    def jobs(self, table_id: int | None = None) -> list[AlterJob]:
        with self.db_session() as s:
            query = select(AlterJobRow).order_by(AlterJobRow.id)
            if table_id is not None:
                query = query.where(AlterJobRow.table_id == table_id)
            return [job_from_row(r) for r in s.scalars(query)]

    # -- tablets, transactions and data files -------------------------------------------------
    def ensure_tablets(self, index_id: int, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Tablet ids for (partition key, bucket) pairs of an index, creating the missing ones."""
        wanted = set(keys)
        found: dict[tuple[str, int], int] = {}
        for _attempt in range(5):
            with self.db_session() as s, s.begin():
                for row in s.scalars(select(TabletRow).where(TabletRow.index_id == index_id)):
                    if (row.partition_key, row.bucket) in wanted:
                        found[(row.partition_key, row.bucket)] = row.id
                missing = wanted - found.keys()
                if not missing:
                    return found
                try:
                    with s.begin_nested():
                        rows = [TabletRow(index_id=index_id, partition_key=p, bucket=b) for p, b in sorted(missing)]
                        s.add_all(rows)
                        s.flush()
                    for row in rows:
                        found[(row.partition_key, row.bucket)] = row.id
                    return found
                except IntegrityError:
                    continue  # a concurrent load created some of them first: look again
        raise ConcurrentChange(f"could not create tablets of index {index_id}: too much contention")

    def tablets(self, index_id: int) -> dict[int, tuple[str, int]]:
        with self.db_session() as s:
            rows = s.scalars(select(TabletRow).where(TabletRow.index_id == index_id))
            return {r.id: (r.partition_key, r.bucket) for r in rows}

    def begin_transaction(self, table_id: int, label: str, timeout_s: int, lease_s: float | None = None, holder: str | None = None) -> int:
        """A new PREPARE transaction. Its id is taken under the table row's lock, the same lock a
        heavyweight job takes for its boundary, so every id is clearly below or above a boundary.

        With `lease_s` the transaction has a load lease (docs/heavyweight.md) that its process renews
        (`renew_transaction`); once past, whoever looks first aborts it. Without, only the
        timeout bounds it. A label the catalog cannot keep is refused (BadLabel) before anything is written."""
        checked_label(label, "load")
        now = utcnow()
        with self.db_session() as s, s.begin():
            if s.scalar(select(TableRow.id).where(TableRow.id == table_id, TableRow.name_key.is_not(None)).with_for_update()) is None:
                raise UnknownObject(f"unknown table id {table_id}")
            row = TransactionRow(
                table_id=table_id,
                state=TransactionState.PREPARE,
                label=label,
                created_at=now,
                timeout_at=now + timedelta(seconds=timeout_s),
                lease_holder=holder if lease_s is not None else None,
                lease_expires_at=now + timedelta(seconds=lease_s) if lease_s is not None else None,
            )
            s.add(row)
            s.flush()
            return row.id

    def renew_transaction(self, txn_id: int, lease_s: float, now: datetime | None = None) -> bool:
        """Extend a PREPARE transaction's load lease; False once it expired or the transaction ended
        (a lease that ran out is gone, even if nobody has aborted the transaction yet)."""
        now = now or utcnow()
        still_held = (
            TransactionRow.state == TransactionState.PREPARE,
            TransactionRow.lease_expires_at.is_not(None),
            TransactionRow.lease_expires_at >= now,
        )
        with self.db_session() as s, s.begin():
            return extend_lease(s, TransactionRow, txn_id, still_held, now + timedelta(seconds=lease_s))

    def register_files(self, txn_id: int, files: Iterable[NewFile]) -> None:
        """Record files a PREPARE transaction is about to write (invisible until it commits),
        so an abort or a crash can always find and delete them."""
        now = utcnow()
        with self.db_session() as s, s.begin():
            txn = s.get(TransactionRow, txn_id)
            if txn is not None and txn.state == TransactionState.ABORTED and txn.reason == LEASE_EXPIRED:
                raise TransactionStateError(f"transaction {txn_id} was aborted ({LEASE_EXPIRED}); retry the load")
            if txn is not None and txn.state == TransactionState.ABORTED:
                raise TransactionStateError(
                    f"transaction {txn_id} cannot write files: it is ABORTED" + (f" ({txn.reason})" if txn.reason else "")
                )
            if txn is None or txn.state != TransactionState.PREPARE:
                raise TransactionStateError(f"transaction {txn_id} is not in PREPARE")
            # A NewFile's fields are the file row's columns of the same name.
            s.add_all(DataFileRow(**asdict(f), txn_id=txn_id, state=FileState.LIVE, created_at=now) for f in files)

    def commit_transaction(
        self,
        txn_id: int,
        file_sizes: dict[str, int] | None = None,
        check: Callable[[Session, TransactionRow], None] | None = None,
    ) -> int:
        """PREPARE -> COMMITTED; its files become visible all at once. Returns the commit sequence.
        `check` (the catalog's own modules only: `HeavyJobs.commit_load`,
        `HeavyJobs.commit_converted_tablet`, `GarbageCollection.commit_compaction`) runs inside the
        same database transaction and may refuse the commit.

        `file_sizes` records the byte sizes of the files written since `register_files`."""
        with self.db_session() as s, s.begin():
            txn = s.get(TransactionRow, txn_id, with_for_update=True)
            now = utcnow()
            if txn is not None and txn.state == TransactionState.PREPARE and _lease_expired(txn, now):
                _abort_expired(s, txn, now)  # the abort commits with this block; the commit is refused below
            if txn is None or txn.state != TransactionState.ABORTED:
                return self._commit_prepared(s, txn_id, txn, file_sizes, check)
            reason = txn.reason
        if reason == LEASE_EXPIRED:
            raise TransactionStateError(f"transaction {txn_id} was aborted ({LEASE_EXPIRED}); retry the load")
        raise TransactionStateError(f"transaction {txn_id} cannot commit: it is ABORTED" + (f" ({reason})" if reason else ""))

    def _commit_prepared(self, s: Session, txn_id: int, txn: TransactionRow | None, file_sizes, check) -> int:
        """The commit proper, inside the caller's database transaction."""
        if txn is None or txn.state != TransactionState.PREPARE:
            state = txn.state if txn is not None else "unknown"
            reason = f" ({txn.reason})" if txn is not None and txn.reason else ""
            raise TransactionStateError(f"transaction {txn_id} cannot commit: it is {state}{reason}")
        if check is not None:
            check(s, txn)
        s.execute(update(TableRow).where(TableRow.id == txn.table_id).values(commit_seq=TableRow.commit_seq + 1))
        seq = s.scalar(select(TableRow.commit_seq).where(TableRow.id == txn.table_id))
        for path, size in (file_sizes or {}).items():
            s.execute(update(DataFileRow).where(DataFileRow.txn_id == txn_id, DataFileRow.path == path).values(byte_size=size))
        txn.state = TransactionState.COMMITTED
        txn.commit_seq = seq
        txn.finished_at = utcnow()
        return seq

    def transaction_paths(self, txn_id: int) -> list[str]:
        """The paths of a transaction's LIVE files: what its commit makes visible, which the
        committer flushes first (alterflow.store.warehouse.Warehouse.sync_transaction)."""
        with self.db_session() as s:
            return list(
                s.scalars(
                    select(DataFileRow.path)
                    .where(DataFileRow.txn_id == txn_id, DataFileRow.state == FileState.LIVE)
                    .order_by(DataFileRow.id)
                )
            )

    def aborted_elsewhere(self, txn_id: int) -> TransactionStateError | None:
        """The line for a load whose transaction someone else aborted meanwhile (its lease ran out
        and GC or a waiting job aborted it, a later run of the same load), None while it is not
        ABORTED. A load that fails after that (GC deleted the file it was writing) says this,
        not what it tripped over."""
        with self.db_session() as s:
            txn = s.get(TransactionRow, txn_id)
            if txn is None or txn.state != TransactionState.ABORTED:
                return None
            return TransactionStateError(f"transaction {txn_id} was aborted ({txn.reason or 'by another process'}); retry the load")

    def abort_transaction(self, txn_id: int, reason: str) -> list[str]:
        """PREPARE -> ABORTED. Returns the paths of its files, which the caller deletes."""
        with self.db_session() as s, s.begin():
            txn = s.get(TransactionRow, txn_id, with_for_update=True)
            if txn is None:
                raise TransactionStateError(f"unknown transaction {txn_id}")
            if txn.state == TransactionState.COMMITTED:
                raise TransactionStateError(f"transaction {txn_id} is already committed")
            txn.state = TransactionState.ABORTED
            txn.reason = txn.reason or reason
            txn.finished_at = txn.finished_at or utcnow()
            files = s.scalars(select(DataFileRow).where(DataFileRow.txn_id == txn_id, DataFileRow.state == FileState.LIVE))
            paths = []
            for f in files:
                f.state = FileState.DELETED
                paths.append(f.path)
            return paths

    def abort_expired_transactions(self, table_id: int | None = None, now: datetime | None = None) -> list[str]:
        """Abort every PREPARE transaction past its timeout or its load lease; returns their
        files' paths to delete."""
        now = now or utcnow()
        paths: list[str] = []
        expired = or_(
            TransactionRow.timeout_at < now,
            and_(TransactionRow.lease_expires_at.is_not(None), TransactionRow.lease_expires_at < now),
        )
        with self.db_session() as s:
            # A look first, without a write lock: most of the time nothing has expired.
            query = select(TransactionRow.id).where(TransactionRow.state == TransactionState.PREPARE, expired)
            if table_id is not None:
                query = query.where(TransactionRow.table_id == table_id)
            if not s.scalars(query).first():
                return paths
        with self.db_session() as s, s.begin():
            query = select(TransactionRow).where(TransactionRow.state == TransactionState.PREPARE, expired)
            if table_id is not None:
                query = query.where(TransactionRow.table_id == table_id)
            # One lock order for every looker (two of them never deadlock on PostgreSQL).
            for txn in s.scalars(query.order_by(TransactionRow.id).with_for_update()):
                paths += _abort_expired(s, txn, now)
        return paths

    def blocking_transactions(self, table_id: int, below: int) -> list[OpenTransaction]:
        """The table's PREPARE transactions with ids below `below`, oldest first."""
        with self.db_session() as s:
            rows = s.scalars(
                select(TransactionRow)
                .where(TransactionRow.table_id == table_id, TransactionRow.state == TransactionState.PREPARE, TransactionRow.id < below)
                .order_by(TransactionRow.id)
            )
            return [OpenTransaction(r.id, r.label, r.created_at, r.timeout_at, r.lease_expires_at) for r in rows]

    # -- reads --------------------------------------------------------------------------------
    def table_stats(self, table_id: int) -> tuple[int, int]:
        """(rows, bytes) of the live committed files of the table's current index."""
        with self.db_session() as s:
            table = s.get(TableRow, table_id)
            result = s.execute(
                select(func.coalesce(func.sum(DataFileRow.row_count), 0), func.coalesce(func.sum(DataFileRow.byte_size), 0))
                .join(TransactionRow, TransactionRow.id == DataFileRow.txn_id)
                .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
                .where(
                    TabletRow.index_id == table.current_index_id,
                    TransactionRow.state == TransactionState.COMMITTED,
                    DataFileRow.state == FileState.LIVE,
                )
            ).one()
            return int(result[0]), int(result[1])

    # -- views --------------------------------------------------------------------------------
    def create_view(self, name: str, query: str, dependencies: Iterable[ViewDependency]) -> ViewInfo:
        now = utcnow()
        try:
            with self.db_session() as s, s.begin():
                if s.scalar(select(TableRow.id).where(TableRow.name_key == name_key(name))) is not None:
                    raise NameInUse(f"cannot create view {name}: a table of that name exists")
                if self._live_view(s, name) is not None:
                    raise NameInUse(f"view {name} already exists")
                row = ViewRow(name=name, name_key=name_key(name), query=query, created_at=now)
                s.add(row)
                s.flush()
                deps = tuple(dependencies)
                for dep in deps:
                    s.add(
                        ViewDependencyRow(
                            view_id=row.id,
                            ref_name=dep.ref_name,
                            table_id=dep.table_id,
                            table_version=dep.table_version,
                            column_ids=json.dumps(sorted(dep.column_ids)),
                            dep_view_id=dep.dep_view_id,
                        )
                    )
                return ViewInfo(row.id, row.name, row.query, deps)
        except IntegrityError as exc:
            raise NameInUse(f"view {name} already exists") from exc

    def drop_view(self, name: str, if_exists: bool = False) -> bool:
        with self.db_session() as s, s.begin():
            row = self._live_view(s, name)
            if row is None:
                if if_exists:
                    return False
                raise UnknownObject(f"unknown view {named(name)}")
            users = s.scalars(
                select(ViewRow.name)
                .join(ViewDependencyRow, ViewDependencyRow.view_id == ViewRow.id)
                .where(ViewDependencyRow.dep_view_id == row.id, ViewRow.name_key.is_not(None))
            ).all()
            if users:
                raise DependentObjects(f"cannot drop view {row.name}: view {', '.join(sorted(set(users)))} uses it")
            row.name_key = None
            row.dropped_at = utcnow()
            return True

    def views_reading_table(self, table_id: int) -> list[str]:
        """Names of the live views that read the table (DROP TABLE is refused while there are any)."""
        with self.db_session() as s:
            return self._views_reading_table(s, table_id)

    def _views_reading_table(self, s: Session, table_id: int) -> list[str]:
        return sorted(
            set(
                s.scalars(
                    select(ViewRow.name)
                    .join(ViewDependencyRow, ViewDependencyRow.view_id == ViewRow.id)
                    .where(ViewDependencyRow.table_id == table_id, ViewRow.name_key.is_not(None))
                )
            )
        )

    def view_uses(self, table_id: int) -> dict[int, tuple[str, ...]]:
        """Column id -> names of the live views that use it."""
        with self.db_session() as s:
            return self._view_uses(s, table_id)

    def _view_uses(self, s: Session, table_id: int) -> dict[int, tuple[str, ...]]:
        uses: dict[int, set[str]] = {}
        rows = s.execute(_VIEW_USES, {"table_id": table_id})
        for view_name, column_ids in rows:
            for cid in json.loads(column_ids):
                uses.setdefault(cid, set()).add(view_name)
        return {cid: tuple(sorted(names)) for cid, names in uses.items()}
