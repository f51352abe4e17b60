"""The catalog's own tables (SQLAlchemy 2 declarative). Created and upgraded by Alembic only.

Every table is prefixed `af_` so the catalog can share a database with other things. Ids that
users see (tables, transactions, jobs) come from autoincrement keys that are never reused.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import BigInteger, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, event
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from alterflow.catalog.states import FileState

# SQLite only autoincrements INTEGER PRIMARY KEY; BigInteger elsewhere.
IdType = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    """The catalog's tables."""


class CatalogIdentityRow(Base):
    """The catalog's id (one row, made by migration 0007 when the catalog is created or upgraded):
    the warehouse records the id of the catalog that owns it (alterflow.store.warehouse)."""

    __tablename__ = "af_catalog"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # uuid4, hex
    created_at: Mapped[datetime] = mapped_column(DateTime)


class _IdKeyed:
    """A row keyed by an autoincrement id that is never reused (on SQLite that takes AUTOINCREMENT:
    a class with table arguments of its own repeats `sqlite_autoincrement` in them)."""

    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(IdType, primary_key=True, autoincrement=True, sort_order=-2)


class _NamedObject(_IdKeyed):
    """The columns of a table or a view row, the catalog's named objects: its id, name and name key
    first, when it was created and dropped last (`sort_order`; the id before all), its own columns in
    between."""

    name: Mapped[str] = mapped_column(String(128), sort_order=-1)
    # Lower-cased name while the object lives; NULL once dropped (NULLs never collide in a unique index).
    name_key: Mapped[str | None] = mapped_column(String(128), unique=True, sort_order=-1)
    created_at: Mapped[datetime] = mapped_column(DateTime, sort_order=1)
    dropped_at: Mapped[datetime | None] = mapped_column(DateTime, sort_order=1)


class TableRow(_NamedObject, Base):
    __tablename__ = "af_tables"

    current_version: Mapped[int] = mapped_column(Integer)
    next_column_id: Mapped[int] = mapped_column(Integer)
    current_index_id: Mapped[int | None] = mapped_column(IdType)
    commit_seq: Mapped[int] = mapped_column(BigInteger, default=0)


class SchemaVersionRow(Base):
    __tablename__ = "af_schema_versions"

    table_id: Mapped[int] = mapped_column(ForeignKey("af_tables.id"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    # COMMITTED once the version is (or was) current; PENDING for a heavyweight job's shadow version.
    state: Mapped[str] = mapped_column(String(16))
    spec: Mapped[str] = mapped_column(Text)  # SchemaVersion.spec_json(): columns, keys, distribution, sort key
    statement: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class IndexRow(_IdKeyed, Base):
    __tablename__ = "af_indexes"

    table_id: Mapped[int] = mapped_column(ForeignKey("af_tables.id"), index=True)
    schema_version: Mapped[int] = mapped_column(Integer)  # the version whose layout it follows
    state: Mapped[str] = mapped_column(String(16))  # ACTIVE, SHADOW, RETIRED
    created_at: Mapped[datetime] = mapped_column(DateTime)
    retired_at: Mapped[datetime | None] = mapped_column(DateTime)


class TabletRow(_IdKeyed, Base):
    __tablename__ = "af_tablets"
    __table_args__ = (UniqueConstraint("index_id", "partition_key", "bucket"), {"sqlite_autoincrement": True})

    index_id: Mapped[int] = mapped_column(ForeignKey("af_indexes.id"), index=True)
    partition_key: Mapped[str] = mapped_column(String(1024))  # JSON list of the partition values, canonical text
    bucket: Mapped[int] = mapped_column(Integer)


class TransactionRow(_IdKeyed, Base):
    __tablename__ = "af_transactions"
    __table_args__ = (Index("ix_af_transactions_table_state", "table_id", "state"), {"sqlite_autoincrement": True})

    table_id: Mapped[int] = mapped_column(ForeignKey("af_tables.id"))
    state: Mapped[str] = mapped_column(String(16))  # PREPARE, COMMITTED, ABORTED
    label: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    timeout_at: Mapped[datetime] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    commit_seq: Mapped[int | None] = mapped_column(BigInteger)  # order of commits on the table
    reason: Mapped[str | None] = mapped_column(Text)
    # The heavyweight job whose shadow index this transaction also wrote (dual write), if any.
    job_id: Mapped[int | None] = mapped_column(BigInteger)
    # Load lease (docs/heavyweight.md): the PREPARE transaction's process renews it; once past, whoever looks
    # first aborts the transaction. NULL: no lease (only the timeout bounds it).
    lease_holder: Mapped[str | None] = mapped_column(String(256))
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime)


class DataFileRow(_IdKeyed, Base):
    __tablename__ = "af_data_files"
    __table_args__ = (Index("ix_af_data_files_state_dropped_at", "state", "dropped_at"), {"sqlite_autoincrement": True})

    tablet_id: Mapped[int] = mapped_column(ForeignKey("af_tablets.id"), index=True)
    txn_id: Mapped[int] = mapped_column(ForeignKey("af_transactions.id"), index=True)
    schema_version: Mapped[int] = mapped_column(Integer)
    path: Mapped[str] = mapped_column(String(1024))  # relative to the warehouse; built from ids only
    row_count: Mapped[int] = mapped_column(BigInteger)
    byte_size: Mapped[int] = mapped_column(BigInteger)
    state: Mapped[str] = mapped_column(String(16))  # LIVE, REPLACED (by compaction), DELETED
    created_at: Mapped[datetime] = mapped_column(DateTime)
    # A quarantine table's file (on_cast_error = quarantine): the job whose rows it holds, so a
    # cancel of that job can take them back. NULL for every other file (migration 0006).
    quarantine_job_id: Mapped[int | None] = mapped_column(Integer, index=True)
    # When the file left its table (its state became DELETED or REPLACED): GC deletes it from disk
    # only once the retention period has passed since (deferred deletes, docs/gc.md). Set by the
    # `state` listener below, so no code path that drops a file can forget it.
    dropped_at: Mapped[datetime | None] = mapped_column(DateTime)


@event.listens_for(DataFileRow.state, "set")
def _note_dropped(target: DataFileRow, value: str, old: str, _initiator) -> None:
    if value != old and value in (FileState.DELETED, FileState.REPLACED):
        target.dropped_at = datetime.now(UTC).replace(tzinfo=None)


class AlterJobRow(_IdKeyed, Base):
    __tablename__ = "af_alter_jobs"

    request_id: Mapped[str] = mapped_column(String(64), unique=True)  # idempotency key of the run
    table_id: Mapped[int] = mapped_column(ForeignKey("af_tables.id"), index=True)
    table_name: Mapped[str] = mapped_column(String(128))
    kind: Mapped[str] = mapped_column(String(8))  # LIGHT, HEAVY
    state: Mapped[str] = mapped_column(String(16))
    statement: Mapped[str] = mapped_column(Text)
    properties: Mapped[str] = mapped_column(Text)  # JSON object
    from_version: Mapped[int] = mapped_column(Integer)
    to_version: Mapped[int] = mapped_column(Integer)
    boundary_txn: Mapped[int | None] = mapped_column(BigInteger)
    origin_index_id: Mapped[int | None] = mapped_column(IdType)
    shadow_index_id: Mapped[int | None] = mapped_column(IdType)
    msg: Mapped[str] = mapped_column(Text, default="")
    progress: Mapped[str] = mapped_column(Text, default="")
    steps: Mapped[str] = mapped_column(Text, default="[]")  # JSON list of finished step names
    timeout_s: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    # Values that dual-written loads turned into NULL (on_cast_error = null), for Msg.
    dual_write_nulled: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    # A postponed swap: when the job became READY_TO_SWAP, and the seconds it waited there in all
    # (its duration leaves them out: the job waited for a person, not for work).
    ready_to_swap_at: Mapped[datetime | None] = mapped_column(DateTime)
    swap_wait_s: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    # Runner lease (docs/heavyweight.md): who drives the job now (`host:pid:uuid`), the driver it belongs to
    # across hand-offs (an Airflow DAG run, or one process), and until when. Taking it is a
    # compare-and-set; every state change checks it (fencing).
    lease_holder: Mapped[str | None] = mapped_column(String(256))
    lease_group: Mapped[str | None] = mapped_column(String(256))
    lease_acquired_at: Mapped[datetime | None] = mapped_column(DateTime)
    lease_renewed_at: Mapped[datetime | None] = mapped_column(DateTime)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime)


class ViewRow(_NamedObject, Base):
    __tablename__ = "af_views"

    query: Mapped[str] = mapped_column(Text)


class ViewDependencyRow(_IdKeyed, Base):
    """What a view reads: a table at a pinned version and the column ids it uses, or another view."""

    __tablename__ = "af_view_dependencies"

    view_id: Mapped[int] = mapped_column(ForeignKey("af_views.id"), index=True)
    ref_name: Mapped[str] = mapped_column(String(128))  # the name the view's SQL uses
    table_id: Mapped[int | None] = mapped_column(ForeignKey("af_tables.id"), index=True)
    table_version: Mapped[int | None] = mapped_column(Integer)
    column_ids: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    dep_view_id: Mapped[int | None] = mapped_column(ForeignKey("af_views.id"))


class ConvertedTabletRow(_IdKeyed, Base):
    """One origin tablet converted by a heavyweight job: written in one transaction of its own, so a
    conversion that is killed resumes at the first tablet without such a row."""

    __tablename__ = "af_converted_tablets"
    __table_args__ = (UniqueConstraint("job_id", "origin_tablet_id"), {"sqlite_autoincrement": True})

    job_id: Mapped[int] = mapped_column(ForeignKey("af_alter_jobs.id"), index=True)
    origin_tablet_id: Mapped[int] = mapped_column(ForeignKey("af_tablets.id"))
    txn_id: Mapped[int] = mapped_column(ForeignKey("af_transactions.id"))
    rows_in: Mapped[int] = mapped_column(BigInteger)  # origin rows below the boundary (after key merge)
    rows_out: Mapped[int] = mapped_column(BigInteger)  # rows written to the shadow tablets
    failed_casts: Mapped[int] = mapped_column(BigInteger)  # values that could not be converted
    samples: Mapped[str] = mapped_column(Text, default="[]")  # JSON: a few failed values, for Msg
    finished_at: Mapped[datetime] = mapped_column(DateTime)
    # Which engine converted it and how long it took (read, convert, write, commit): the conversion
    # throughput EXPLAIN ANALYZE estimates from. NULL for tablets converted before migration 0005.
    engine: Mapped[str | None] = mapped_column(String(8))
    seconds: Mapped[float | None] = mapped_column(Float)
    quarantined: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")  # rows kept in t__quarantine


class MigrationRow(_IdKeyed, Base):
    """One versioned migration file the catalog has seen applied (or the baseline): `alterflow
    migrate` (docs/migrations.md). Its statements are `MigrationStatementRow`s."""

    __tablename__ = "af_migrations"

    version: Mapped[str] = mapped_column(String(64), unique=True)  # as written in the file name: "3", "1.2"
    description: Mapped[str] = mapped_column(Text)
    script: Mapped[str] = mapped_column(String(256))  # the file name, e.g. V3__widen_amount.sql
    checksum: Mapped[str] = mapped_column(String(64))  # sha256 of the file's text (line ends as \n)
    state: Mapped[str] = mapped_column(String(16))  # APPLYING, APPLIED, FAILED, BASELINE
    installed_by: Mapped[str] = mapped_column(String(256))
    started_at: Mapped[datetime] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    error: Mapped[str] = mapped_column(Text, default="")
    # VERSIONED, or REPEATABLE: one application of an R__ file (its version is then a unique id
    # of that application, "R:<hex>", and never a version; migration 0009)
    kind: Mapped[str] = mapped_column(String(16), default="VERSIONED", server_default="VERSIONED")


class MigrationStatementRow(_IdKeyed, Base):
    """One statement of a migration file: recorded RUNNING with its request id before it runs, and
    DONE with what it made after, so an apply that is killed in between finds the job it started."""

    __tablename__ = "af_migration_statements"
    __table_args__ = (UniqueConstraint("migration_id", "position"), {"sqlite_autoincrement": True})

    migration_id: Mapped[int] = mapped_column(ForeignKey("af_migrations.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)  # 1-based, in the file
    line: Mapped[int] = mapped_column(Integer)  # where it starts in the file
    text_hash: Mapped[str] = mapped_column(String(64))  # sha256 of its text, white space normalised
    request_id: Mapped[str] = mapped_column(String(64), unique=True)  # the ALTER job's request, or the load's label
    state: Mapped[str] = mapped_column(String(16))  # RUNNING, DONE, FAILED
    table_name: Mapped[str | None] = mapped_column(String(128))
    table_id: Mapped[int | None] = mapped_column(IdType)
    job_id: Mapped[int | None] = mapped_column(IdType)
    schema_version: Mapped[int | None] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    error: Mapped[str] = mapped_column(Text, default="")


class MigrationLeaseRow(Base):
    """Who runs `alterflow migrate apply` on this catalog now: one apply at a time (one row, named
    "apply"), taken by compare-and-set and renewed like a job's runner lease."""

    __tablename__ = "af_migration_lease"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    holder: Mapped[str | None] = mapped_column(String(256))
    acquired_at: Mapped[datetime | None] = mapped_column(DateTime)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime)


class AlterTurnRow(Base):
    """An Airflow run's ALTER in line for its table (alterflow.catalog.alter_turns): the runs of one
    table take their turn in the order they were triggered, each once no job of the table is
    unfinished and no run ahead of it that it must not overlap is still waiting or has just been
    let through."""

    __tablename__ = "af_alter_turns"

    request_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("af_tables.id"), index=True)
    triggered_at: Mapped[datetime] = mapped_column(DateTime)
    # A rewrite (or a statement the planner could not tell without the warehouse's files) goes alone;
    # light changes go side by side, as their commits retry on a lost race.
    heavy: Mapped[bool] = mapped_column(Boolean, default=True)
    let_through_at: Mapped[datetime | None] = mapped_column(DateTime)  # its turn came: it plans and starts now
    expires_at: Mapped[datetime] = mapped_column(DateTime)  # renewed while it waits; a run gone lapses


class FirstAssetEventRow(Base):
    """When the first asset event on a table's asset was emitted (alterflow.catalog.first_asset_events):
    Airflow creates the asset on its first event, and two first events at the same moment collide
    in Airflow's database, so the events right after the first wait a moment."""

    __tablename__ = "af_first_asset_events"

    uri: Mapped[str] = mapped_column(String(512), primary_key=True)  # alterflow://<catalog name>/<table>
    emitted_at: Mapped[datetime] = mapped_column(DateTime)
    # The Airflow task that emitted it (none for rows of migration 0012): once it succeeded, Airflow
    # has created the asset (in the same transaction), and the events after it need not wait.
    dag_id: Mapped[str | None] = mapped_column(String(250))
    run_id: Mapped[str | None] = mapped_column(String(250))
    task_id: Mapped[str | None] = mapped_column(String(250))
