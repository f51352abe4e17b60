"""What the catalog hands its callers and takes from them: plain frozen dataclasses (never live ORM
rows), and the process-wide cache of decoded schema versions. No SQLAlchemy here, so that a process
that only reads (a query, `catalog/snapshot_reads.py`) never imports it.

An ALTER's job is recorded from a `JobSpec` (a lightweight one's commit, a heavyweight one's start)
and read back as an `AlterJob`; both carry its `AlterProperties`, which the job's row stores as JSON.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime

from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.states import Engine, JobState, OnCastError


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class TableInfo:
    id: int
    name: str
    current_version: int
    next_column_id: int
    current_index_id: int
    created_at: datetime


@dataclass(frozen=True)
class DataFile:
    id: int
    tablet_id: int
    txn_id: int
    schema_version: int
    path: str
    row_count: int
    byte_size: int
    commit_seq: int | None = None


@dataclass(frozen=True)
class NewFile:
    tablet_id: int
    schema_version: int
    path: str
    row_count: int
    byte_size: int
    quarantine_job_id: int | None = None  # a quarantine table's file: the job whose rows it holds


@dataclass(frozen=True)
class OpenTransaction:
    """A PREPARE transaction, as a job waiting on its boundary shows it."""

    id: int
    label: str
    created_at: datetime
    timeout_at: datetime
    lease_expires_at: datetime | None


@dataclass(frozen=True)
class TableSnapshot:
    """A consistent view of a table for one read: its current version and its live committed files."""

    table: TableInfo
    current: SchemaVersion
    files: tuple[DataFile, ...]
    versions: dict[int, SchemaVersion]  # every version some file was written under, plus the current one
    # Transaction id -> commit order, for primary-key tables (rows name the load that wrote them).
    commit_seqs: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class AlterProperties:
    """An ALTER's PROPERTIES, checked (`alterflow.planner.properties.parse_properties`); each
    default here is what an ALTER that does not set the property gets."""

    timeout: int = 86400  # seconds a job may take before it is cancelled
    on_cast_error: OnCastError = OnCastError.FAIL
    postpone_swap: bool = False  # a heavyweight job waits in READY_TO_SWAP for RESUME
    rewrite: bool = False  # a heavyweight change even where a lightweight one would do
    expected_version: int | None = None  # refused unless the table is at this version
    engine: Engine = Engine.AUTO  # what converts history (docs/heavyweight.md)

    def __post_init__(self) -> None:  # "null" given as text is OnCastError.NULL from here on
        object.__setattr__(self, "on_cast_error", OnCastError(self.on_cast_error))
        object.__setattr__(self, "engine", Engine(self.engine))

    def to_json(self) -> dict:
        return {
            "timeout": self.timeout,
            "on_cast_error": self.on_cast_error.value,
            "postpone_swap": self.postpone_swap,
            "rewrite": self.rewrite,
            "expected_version": self.expected_version,
            "engine": self.engine.value,
        }

    @classmethod
    def from_json(cls, data: dict) -> AlterProperties:
        """The properties a job's row stores; a key an older row lacks (`engine` came later, a
        quarantine table's column additions stored `{}`) takes its default."""
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})


@dataclass(frozen=True)
class JobSpec:
    """What an ALTER's job is recorded with: the request it answers, the table, the version it
    goes from and the one it makes, and its properties (`Catalog.commit_light_alter` records a
    lightweight job with it, `HeavyJobs.start` a heavyweight one)."""

    request_id: str
    table_id: int
    table_name: str
    old_version: int
    new: SchemaVersion
    next_column_id: int  # the table's next column id once the job is recorded
    properties: AlterProperties
    timeout_s: int


@dataclass(frozen=True)
class AlterJob:
    id: int
    request_id: str
    table_id: int
    table_name: str
    kind: str
    state: str
    statement: str
    properties: AlterProperties
    from_version: int
    to_version: int
    boundary_txn: int | None
    msg: str
    progress: str
    steps: tuple[str, ...]
    timeout_s: int
    created_at: datetime
    finished_at: datetime | None
    origin_index_id: int | None = None
    shadow_index_id: int | None = None
    # The runner lease (catalog.job_leases): who drives the job and until when.
    lease_holder: str | None = None
    lease_group: str | None = None
    lease_acquired_at: datetime | None = None
    lease_renewed_at: datetime | None = None
    lease_expires_at: datetime | None = None
    # A postponed swap: when it became READY_TO_SWAP, and the seconds it has waited there in all.
    ready_to_swap_at: datetime | None = None
    swap_wait_s: float = 0.0

    def waiting_for_swap_s(self, now: datetime) -> float:
        """Seconds the job has waited for a person's swap, up to `now` while it still waits."""
        waiting = self.state == JobState.READY_TO_SWAP and self.ready_to_swap_at is not None
        return (self.swap_wait_s or 0.0) + (max(0.0, (now - self.ready_to_swap_at).total_seconds()) if waiting else 0.0)


@dataclass(frozen=True)
class ViewDependency:
    ref_name: str
    table_id: int | None = None
    table_version: int | None = None
    column_ids: tuple[int, ...] = ()
    dep_view_id: int | None = None


@dataclass(frozen=True)
class AlterContext:
    """What planning an ALTER reads from the catalog, read in one database transaction."""

    table: TableInfo
    current: SchemaVersion
    base: SchemaVersion  # the version the ALTER is planned against (the current one unless asked)
    active_job: AlterJob | None
    view_uses: dict[int, tuple[str, ...]]  # column id -> names of the live views that use it


@dataclass(frozen=True)
class ViewInfo:
    id: int
    name: str
    query: str
    dependencies: tuple[ViewDependency, ...] = field(default=())


_DECODED: dict[tuple, SchemaVersion] = {}
_DECODED_LOCK = threading.Lock()
_DECODED_MAX = 1024


def decode_version(table_id: int, version: int, spec: str, statement: str, created_at: datetime | None) -> SchemaVersion:
    """A stored version, decoded once per process: the result is a pure function of the row's
    values and immutable, so every statement that reads the same version shares it."""
    key = (table_id, version, spec, statement, created_at)
    found = _DECODED.get(key)
    if found is None:
        found = SchemaVersion.from_spec_json(table_id, version, spec, statement, created_at)
        remember_version(key, found)
    return found


def remember_version(key: tuple, version: SchemaVersion) -> None:
    with _DECODED_LOCK:
        if len(_DECODED) >= _DECODED_MAX:
            del _DECODED[next(iter(_DECODED))]  # the oldest entry
        _DECODED[key] = version
