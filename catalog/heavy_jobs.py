"""The catalog side of a heavyweight ALTER: its job, shadow version, shadow index, boundary, per-tablet
conversion progress, swap and cancel. Every method is one database transaction.

Life of a job (docs/heavyweight.md): `start` records the job (PENDING) with the new version (not current), the
shadow index with its tablets and the boundary B, a marker transaction whose id orders it after
every load that began before. Loads from then on dual-write (see `dual_write_target` and
`check_load_commit`). `swap` makes the shadow index and the new version current in one
transaction; `cancel` drops them and leaves the origin untouched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from alterflow.catalog.catalog import ACTIVE_JOB_STATES, AlterJob, Catalog, job_from_row, job_row, lock_job_row, utcnow, version_row
from alterflow.catalog.catalog_errors import (
    ConcurrentChange,
    JobStateError,
    LoadOvertaken,
    TableMoved,
    TransactionStateError,
    UnknownObject,
)
from alterflow.catalog.job_leases import fence
from alterflow.catalog.models import (
    AlterJobRow,
    AlterTurnRow,
    ConvertedTabletRow,
    DataFileRow,
    IndexRow,
    SchemaVersionRow,
    TableRow,
    TabletRow,
    TransactionRow,
)
from alterflow.catalog.records import AlterProperties, JobSpec
from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.states import Engine, FileState, IndexState, JobKind, JobState, OnCastError, TransactionState, VersionState
from alterflow.sql.names import named
from alterflow.values.types import Change, classify_conversion

# States in which loads dual-write into the shadow index.
DUAL_WRITE_STATES = ACTIVE_JOB_STATES


@dataclass(frozen=True)
class DualWriteTarget:
    job_id: int
    boundary_txn: int
    shadow_index_id: int
    version: SchemaVersion
    on_cast_error: OnCastError


@dataclass(frozen=True)
class ConvertedTablet:
    """An origin tablet's conversion: its transaction, the rows it read and wrote, the casts that
    failed (with samples) and the rows it quarantined."""

    origin_tablet_id: int
    txn_id: int
    rows_in: int
    rows_out: int
    failed_casts: int
    samples: tuple
    quarantined: int = 0  # rows kept in the quarantine table instead (on_cast_error = quarantine)


def _add_pending_version(s: Session, spec: JobSpec, now: datetime) -> None:
    """The job's new version, PENDING until the swap. A cancelled job may have left its version
    number behind: it goes first, so versions stay one apart."""
    new = spec.new
    s.execute(
        delete(SchemaVersionRow).where(
            SchemaVersionRow.table_id == spec.table_id,
            SchemaVersionRow.version == new.version,
            SchemaVersionRow.state == VersionState.PENDING,
        )
    )
    s.add(version_row(spec, VersionState.PENDING, now))


def _add_shadow_index(s: Session, table: TableRow, new: SchemaVersion, now: datetime) -> IndexRow:
    """The shadow index of the new version, with a tablet per partition the current index has and bucket."""
    shadow = IndexRow(table_id=table.id, schema_version=new.version, state=IndexState.SHADOW, created_at=now)
    s.add(shadow)
    s.flush()
    partitions = sorted(set(s.scalars(select(TabletRow.partition_key).where(TabletRow.index_id == table.current_index_id))))
    s.add_all(TabletRow(index_id=shadow.id, partition_key=p, bucket=b) for p in partitions for b in range(new.buckets))
    return shadow


class HeavyJobs:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def _session(self) -> Session:
        return self.catalog.db_session()

    # -- reading ------------------------------------------------------------------------------
    def job(self, job_id: int) -> AlterJob:
        with self._session() as s:
            row = s.get(AlterJobRow, job_id)
            if row is None:
                raise UnknownObject(f"unknown alter job {job_id}")
            return job_from_row(row)

    def shadow_version(self, job: AlterJob) -> SchemaVersion:
        return self.catalog.schema_version(job.table_id, job.to_version)

    def dual_write_target(self, table_id: int) -> DualWriteTarget | None:
        """Where a load must also write while a heavyweight job on the table is unfinished."""
        with self._session() as s:
            row = s.scalar(
                select(AlterJobRow).where(
                    AlterJobRow.table_id == table_id,
                    AlterJobRow.kind == JobKind.HEAVY,
                    AlterJobRow.state.in_(DUAL_WRITE_STATES),
                )
            )
            if row is None:
                return None
            version = s.get(SchemaVersionRow, (row.table_id, row.to_version))
            return DualWriteTarget(
                row.id,
                row.boundary_txn,
                row.shadow_index_id,
                SchemaVersion.from_spec_json(row.table_id, row.to_version, version.spec, version.statement),
                AlterProperties.from_json(json.loads(row.properties)).on_cast_error,
            )

    def converted(self, job_id: int) -> dict[int, ConvertedTablet]:
        with self._session() as s:
            rows = s.scalars(select(ConvertedTabletRow).where(ConvertedTabletRow.job_id == job_id))
            return {
                r.origin_tablet_id: ConvertedTablet(
                    r.origin_tablet_id, r.txn_id, r.rows_in, r.rows_out, r.failed_casts, tuple(json.loads(r.samples)), r.quarantined or 0
                )
                for r in rows
            }

    def origin_files_below_boundary(self, job: AlterJob) -> dict[int, list]:
        """Origin tablet id -> its live committed files written by transactions below the boundary."""
        from alterflow.catalog.catalog import DataFile

        origin = job.origin_index_id
        with self._session() as s:
            rows = s.execute(
                select(DataFileRow, TransactionRow.commit_seq)
                .join(TransactionRow, TransactionRow.id == DataFileRow.txn_id)
                .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
                .where(
                    TabletRow.index_id == origin,
                    TransactionRow.state == TransactionState.COMMITTED,
                    DataFileRow.state == FileState.LIVE,
                    DataFileRow.txn_id < job.boundary_txn,
                )
                .order_by(DataFileRow.id)
            )
            files: dict[int, list] = {}
            for f, seq in rows:
                files.setdefault(f.tablet_id, []).append(
                    DataFile(f.id, f.tablet_id, f.txn_id, f.schema_version, f.path, f.row_count, f.byte_size, seq)
                )
            return files

    # -- starting -----------------------------------------------------------------------------
    def start(self, spec: JobSpec, lease: tuple[str, str, float] | None = None) -> AlterJob:
        """Record the job (PENDING), the new version (`spec.new`, not current), the shadow index
        and its tablets, and the boundary, all in one transaction. Idempotent per request id.
        `lease` (holder, group, seconds): the job is born with its runner's lease."""
        request_id, table_id, table_name, new = spec.request_id, spec.table_id, spec.table_name, spec.new
        existing = self.catalog.job_by_request(request_id)
        if existing is not None:
            return existing
        now = utcnow()
        try:
            with self._session() as s, s.begin():
                table = self._lock_startable_table(s, spec)
                _add_pending_version(s, spec, now)
                table.next_column_id = spec.next_column_id  # ids handed out are never reused, even if cancelled
                shadow = _add_shadow_index(s, table, new, now)
                marker = TransactionRow(
                    table_id=table_id,
                    state=TransactionState.COMMITTED,
                    label=f"boundary of alter request {request_id}",
                    created_at=now,
                    timeout_at=now,
                    finished_at=now,
                )
                s.add(marker)
                s.flush()
                row = job_row(
                    spec,
                    JobKind.HEAVY,
                    JobState.PENDING,
                    ("validate", "start"),
                    now,
                    boundary_txn=marker.id,
                    origin_index_id=table.current_index_id,
                    shadow_index_id=shadow.id,
                )
                if lease is not None:
                    holder, group, seconds = lease
                    row.lease_holder, row.lease_group = holder, group
                    row.lease_acquired_at = row.lease_renewed_at = now
                    row.lease_expires_at = now + timedelta(seconds=seconds)
                s.add(row)
                s.execute(delete(AlterTurnRow).where(AlterTurnRow.request_id == request_id))  # its turn is over
                s.flush()
                return job_from_row(row)
        except IntegrityError as exc:
            existing = self.catalog.job_by_request(request_id)
            if existing is not None:
                return existing
            raise ConcurrentChange(f"ALTER TABLE {table_name}: another change started first; nothing was applied") from exc

    def _lock_startable_table(self, s: Session, spec: JobSpec) -> TableRow:
        """The table's row, locked, once it may start a job: it lives, has no unfinished job, is
        still at the version the ALTER was planned against and holds no rows another unfinished
        job quarantined (a rewrite would drop the files' job marks: a cancel could not take them back)."""
        table_name = spec.table_name
        table = s.scalar(select(TableRow).where(TableRow.id == spec.table_id).with_for_update())
        if table is None or table.name_key is None:
            raise UnknownObject(f"unknown table {named(table_name)}")
        active = self.catalog.active_job_row(s, spec.table_id)
        if active is not None:
            raise ConcurrentChange(f"ALTER TABLE {table_name}: job {active.id} ({active.state}) is not finished; one job per table")
        if table.current_version != spec.old_version:
            raise TableMoved(
                f"ALTER TABLE {table_name}: the table changed since this statement was planned "
                f"(version {spec.old_version} is no longer current); nothing was applied"
            )
        holding = self._unfinished_quarantining_job(s, table.current_index_id)
        if holding is not None:
            raise ConcurrentChange(
                f"ALTER TABLE {table_name}: it holds rows quarantined by unfinished job {holding.id} on {holding.table_name}; "
                "a rewrite waits until that job is over; nothing was applied"
            )
        return table

    # -- progress -----------------------------------------------------------------------------
    def advance(
        self,
        job_id: int,
        from_states: tuple[str, ...],
        state: str,
        *,
        holder: str,
        step: str | None = None,
        msg: str | None = None,
        progress: str | None = None,
    ) -> AlterJob:
        """Move the job to `state` if it is in one of `from_states` (or already in `state`), if
        `holder` still holds its lease."""
        with self._session() as s, s.begin():
            row = lock_job_row(s, job_id)
            if row.state in ACTIVE_JOB_STATES:
                fence(row, holder)
            if row.state != state and row.state not in from_states:
                raise JobStateError(f"alter job {job_id} is {row.state}, not {' or '.join(from_states)}")
            if state == JobState.READY_TO_SWAP and row.state != state:
                row.ready_to_swap_at = utcnow()
            row.state = state
            if msg is not None:
                row.msg = msg
            if progress is not None:
                row.progress = progress
            if step is not None:
                steps = json.loads(row.steps)
                if step not in steps:
                    row.steps = json.dumps(steps + [step])
            return job_from_row(row)

    def note(self, job_id: int, *, holder: str, msg: str | None = None, progress: str | None = None) -> bool:
        """Update Msg / Progress of an unfinished job (no state change) while `holder` holds its
        lease; False (nothing written) otherwise."""
        values = {k: v for k, v in (("msg", msg), ("progress", progress)) if v is not None}
        with self._session() as s, s.begin():
            result = s.execute(
                update(AlterJobRow)
                .where(
                    AlterJobRow.id == job_id,
                    AlterJobRow.state.in_(ACTIVE_JOB_STATES),
                    AlterJobRow.lease_holder == holder,
                )
                .values(**values)
            )
            return result.rowcount == 1

    def commit_load(self, txn_id: int, file_sizes: dict[str, int], dual_write_nulls: int = 0, job_id: int | None = None) -> int:
        """Commit a load's transaction (`Catalog.commit_transaction`), refused when it would lose
        rows across a swap (`check_load_commit`); `dual_write_nulls` values it turned into NULL
        while dual-writing for job `job_id` are counted in the same database transaction."""

        def check(session: Session, txn: TransactionRow) -> None:
            self.check_load_commit(session, txn)
            self.check_quarantine_files(session, txn.id)
            if dual_write_nulls:
                self.add_dual_write_nulls(session, job_id, dual_write_nulls)

        return self.catalog.commit_transaction(txn_id, file_sizes, check=check)

    def commit_converted_tablet(
        self,
        tablet: ConvertedTablet,
        file_sizes: dict[str, int],
        job_id: int,
        *,
        holder: str,
        engine: Engine | None = None,
        seconds: float | None = None,
    ) -> int:
        """Commit a tablet's conversion transaction (`tablet.txn_id`): its files become visible
        exactly when the tablet is recorded as converted, and only while `holder` holds the job's
        lease. `engine` and `seconds` (the tablet's conversion time) feed `conversion_throughput`."""
        return self.catalog.commit_transaction(
            tablet.txn_id,
            file_sizes,
            check=lambda s, _txn: self.record_converted(s, job_id, tablet, holder=holder, engine=engine, seconds=seconds),
        )

    def record_converted(
        self,
        session: Session,
        job_id: int,
        tablet: ConvertedTablet,
        *,
        holder: str,
        engine: Engine | None = None,
        seconds: float | None = None,
    ) -> None:
        """Inside the conversion transaction's commit: the tablet is done exactly when its files
        commit, and only while `holder` holds the job's lease."""
        job = session.get(AlterJobRow, job_id, with_for_update=True)
        if job is None or job.state != JobState.RUNNING:
            raise JobStateError(f"alter job {job_id} is {job.state if job else 'gone'}; conversion output discarded")
        fence(job, holder)
        if tablet.quarantined:
            self.check_quarantine_files(session, tablet.txn_id)
        session.add(
            ConvertedTabletRow(
                job_id=job_id,
                origin_tablet_id=tablet.origin_tablet_id,
                txn_id=tablet.txn_id,
                rows_in=tablet.rows_in,
                rows_out=tablet.rows_out,
                failed_casts=tablet.failed_casts,
                samples=json.dumps(tablet.samples, default=str),
                finished_at=utcnow(),
                engine=None if engine is None else str(engine),  # the column holds the engine's text
                seconds=seconds,
                quarantined=tablet.quarantined,
            )
        )

    def conversion_throughput(self, engine: Engine, tablets: int = 50) -> float | None:
        """Rows per second the `engine` converted at over the latest `tablets` timed tablets that
        held rows, on any table of this catalog (None before the first)."""
        with self._session() as s:
            rows = s.execute(
                select(ConvertedTabletRow.rows_in, ConvertedTabletRow.seconds)
                .where(ConvertedTabletRow.engine == str(engine), ConvertedTabletRow.seconds > 0, ConvertedTabletRow.rows_in > 0)
                .order_by(ConvertedTabletRow.id.desc())
                .limit(tablets)
            ).all()
        seconds = sum(r.seconds for r in rows)
        return sum(r.rows_in for r in rows) / seconds if rows and seconds > 0 else None

    def add_dual_write_nulls(self, session: Session, job_id: int, count: int) -> None:
        """Inside a dual-writing load's commit: values it turned into NULL (on_cast_error = null)."""
        if count:
            session.execute(
                update(AlterJobRow).where(AlterJobRow.id == job_id).values(dual_write_nulled=AlterJobRow.dual_write_nulled + count)
            )

    def quarantined(self, job_id: int) -> int:
        """Rows the job has kept in its table's quarantine table so far (committed files: its
        converted tablets' and its dual-written loads')."""
        return self.quarantined_by_job([job_id]).get(job_id, 0)

    def quarantined_by_job(self, job_ids: list[int]) -> dict[int, int]:
        """`quarantined` of several jobs at once (the Schema changes page); jobs with none are absent."""
        if not job_ids:
            return {}
        with self._session() as s:
            rows = s.execute(
                select(DataFileRow.quarantine_job_id, func.sum(DataFileRow.row_count))
                .join(TransactionRow, TransactionRow.id == DataFileRow.txn_id)
                .where(
                    DataFileRow.quarantine_job_id.in_(job_ids),
                    DataFileRow.state == FileState.LIVE,
                    TransactionRow.state == TransactionState.COMMITTED,
                )
                .group_by(DataFileRow.quarantine_job_id)
            ).all()
            return {int(job): int(count) for job, count in rows if count}

    def dual_write_nulled(self, job_id: int) -> int:
        with self._session() as s:
            return int(s.scalar(select(AlterJobRow.dual_write_nulled).where(AlterJobRow.id == job_id)) or 0)

    # -- the end ------------------------------------------------------------------------------
    def swap(self, job_id: int, from_states: tuple[str, ...], *, holder: str | None, msg: str | None = None) -> AlterJob:
        """In one transaction: the shadow index and the new version become current; FINISHED
        (with Msg `msg`, when given). A runner swaps holding the lease (`holder`); a user's RESUME
        of a postponed swap (READY_TO_SWAP only) passes None."""
        if holder is None and set(from_states) - {JobState.READY_TO_SWAP}:
            raise JobStateError(f"alter job {job_id}: only a READY_TO_SWAP job is swapped without its runner lease")
        now = utcnow()
        with self._session() as s, s.begin():
            row = lock_job_row(s, job_id)
            if row.state == JobState.FINISHED:
                return job_from_row(row)
            if row.state not in from_states:
                raise JobStateError(f"alter job {job_id} is {row.state}; only a job {' or '.join(from_states)} can swap")
            fence(row, holder)
            table = s.get(TableRow, row.table_id, with_for_update=True)
            if table.current_version != row.from_version or table.current_index_id != row.origin_index_id:
                raise ConcurrentChange(f"ALTER TABLE {row.table_name}: the table changed under job {job_id}")
            table.current_version = row.to_version
            table.current_index_id = row.shadow_index_id
            s.execute(
                update(SchemaVersionRow)
                .where(SchemaVersionRow.table_id == row.table_id, SchemaVersionRow.version == row.to_version)
                .values(state=VersionState.COMMITTED, created_at=now)
            )
            s.execute(update(IndexRow).where(IndexRow.id == row.origin_index_id).values(state=IndexState.RETIRED, retired_at=now))
            s.execute(update(IndexRow).where(IndexRow.id == row.shadow_index_id).values(state=IndexState.ACTIVE))
            _end_swap_wait(row, now)
            row.state = JobState.FINISHED
            if msg is not None:
                row.msg = msg
            row.finished_at = now
            row.steps = json.dumps([*json.loads(row.steps), "swap"])
            return job_from_row(row)

    def cancel(self, job_id: int, reason: str, *, holder: str | None = None) -> tuple[AlterJob, list[str]]:
        """Drop the shadow index and the uncommitted version; the origin is untouched.
        Returns the job and the paths of the shadow files, which the caller deletes. A user's
        cancel (holder None) needs no lease; a runner's (a failed validation) needs its lease."""
        now = utcnow()
        with self._session() as s, s.begin():
            row = lock_job_row(s, job_id)
            if row.state not in ACTIVE_JOB_STATES:
                raise JobStateError(f"alter job {job_id} is {row.state} and cannot be cancelled")
            fence(row, holder)
            paths = self._drop_shadow(s, row, now)
            _end_swap_wait(row, now)
            row.state = JobState.CANCELLED
            row.msg = reason
            row.finished_at = now
            return job_from_row(row), paths

    def _drop_shadow(self, s: Session, row: AlterJobRow, now) -> list[str]:
        s.execute(
            delete(SchemaVersionRow).where(
                SchemaVersionRow.table_id == row.table_id,
                SchemaVersionRow.version == row.to_version,
                SchemaVersionRow.state == VersionState.PENDING,
            )
        )
        s.execute(update(IndexRow).where(IndexRow.id == row.shadow_index_id).values(state=IndexState.DROPPED, retired_at=now))
        files = s.scalars(
            select(DataFileRow)
            .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
            .where(TabletRow.index_id == row.shadow_index_id, DataFileRow.state == FileState.LIVE)
        ).all()
        # The rows the job quarantined go back with it: the origin still holds them.
        quarantined = s.scalars(
            select(DataFileRow).where(DataFileRow.quarantine_job_id == row.id, DataFileRow.state == FileState.LIVE)
        ).all()
        for f in [*files, *quarantined]:
            f.state = FileState.DELETED
        return [f.path for f in [*files, *quarantined]]

    def _check_narrowed_meanwhile(self, s: Session, txn: TransactionRow, table: TableRow) -> None:
        """Refuse a load whose files were written under a version that stored a column wider than
        a version committed since reads it: a REVERT TO VERSION narrowed it back (lightweight,
        having checked the files committed until then) while the load ran. Every later version
        counts, not only the current one: the column may have been dropped since, and come back."""
        written = set(
            s.scalars(
                select(DataFileRow.schema_version)
                .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
                .where(DataFileRow.txn_id == txn.id, TabletRow.index_id == table.current_index_id)
            )
        ) - {table.current_version}
        if not written:
            return
        rows = s.scalars(
            select(SchemaVersionRow).where(
                SchemaVersionRow.table_id == table.id,
                SchemaVersionRow.version >= min(written),
                SchemaVersionRow.version <= table.current_version,
                SchemaVersionRow.state == VersionState.COMMITTED,
            )
        ).all()
        specs = {r.version: SchemaVersion.from_spec_json(r.table_id, r.version, r.spec) for r in rows}
        for version in sorted(written):
            for later in sorted(v for v in specs if v > version):
                for column in specs[later].columns:
                    stored = specs[version].column_by_id(column.id) if version in specs else None
                    if (
                        stored is not None
                        and stored.type != column.type
                        and classify_conversion(stored.type, column.type)[0] is Change.HEAVY
                    ):
                        raise TransactionStateError(
                            f"transaction {txn.id} cannot commit: column {column.name} of {table.name} became {column.type.sql()} "
                            f"again (REVERT TO VERSION) while it ran; retry the load"
                        )

    def _unfinished_quarantining_job(self, s: Session, index_id: int) -> AlterJobRow | None:
        """An unfinished job whose quarantined rows are live files of this index, if any."""
        return s.scalar(
            select(AlterJobRow)
            .join(DataFileRow, DataFileRow.quarantine_job_id == AlterJobRow.id)
            .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
            .where(TabletRow.index_id == index_id, DataFileRow.state == FileState.LIVE, AlterJobRow.state.in_(ACTIVE_JOB_STATES))
            .limit(1)
        )

    def check_quarantine_files(self, s: Session, txn_id: int) -> None:
        """Inside a commit that quarantines rows: each quarantine table they go to must still
        read them (its files in its current index) and must not be in a heavyweight change of
        its own, which would not carry them over its swap."""
        targets = s.execute(
            select(IndexRow.table_id, IndexRow.id)
            .join(TabletRow, TabletRow.index_id == IndexRow.id)
            .join(DataFileRow, DataFileRow.tablet_id == TabletRow.id)
            .where(DataFileRow.txn_id == txn_id, DataFileRow.quarantine_job_id.is_not(None), DataFileRow.state == FileState.LIVE)
            .distinct()
        ).all()
        for table_id, index_id in targets:
            table = s.get(TableRow, table_id, with_for_update=True)
            if table is None or table.name_key is None or table.current_index_id != index_id:
                raise TransactionStateError(f"transaction {txn_id} cannot commit: its quarantine table was dropped or changed meanwhile")
            busy = s.scalar(
                select(AlterJobRow.id).where(
                    AlterJobRow.table_id == table_id, AlterJobRow.kind == JobKind.HEAVY, AlterJobRow.state.in_(DUAL_WRITE_STATES)
                )
            )
            if busy is not None:
                raise TransactionStateError(
                    f"transaction {txn_id} cannot commit: quarantine table {table.name} is in schema change job {busy}; "
                    "retry when it has finished"
                )

    # -- loads during a job -------------------------------------------------------------------
    def check_load_commit(self, s: Session, txn: TransactionRow) -> None:
        """Called inside a load's commit: refuse a load that would lose rows across a swap.

        Its files must be in the table's current index (or only in a live shadow index), and a
        load that began after an unfinished job's boundary must have dual-written."""
        table = s.get(TableRow, txn.table_id, with_for_update=True)
        indexes = set(  # this table's (a dual write may also have quarantined rows in another table)
            s.scalars(
                select(TabletRow.index_id)
                .join(DataFileRow, DataFileRow.tablet_id == TabletRow.id)
                .join(IndexRow, IndexRow.id == TabletRow.index_id)
                .where(DataFileRow.txn_id == txn.id, IndexRow.table_id == txn.table_id)
            )
        )
        if not indexes:
            return
        self._check_narrowed_meanwhile(s, txn, table)
        job = s.scalar(
            select(AlterJobRow).where(
                AlterJobRow.table_id == txn.table_id, AlterJobRow.kind == JobKind.HEAVY, AlterJobRow.state.in_(DUAL_WRITE_STATES)
            )
        )
        if table.current_index_id not in indexes:
            raise LoadOvertaken(
                f"transaction {txn.id} cannot commit: table {table.name} was swapped to a new index while it ran; retry the load"
            )
        quarantined_for = set(  # jobs whose quarantine this load wrote rows to
            s.scalars(select(DataFileRow.quarantine_job_id).where(DataFileRow.txn_id == txn.id, DataFileRow.quarantine_job_id.is_not(None)))
        )
        dual_written = job is not None and (job.shadow_index_id in indexes or job.id in quarantined_for)
        if job is not None and txn.id > job.boundary_txn and not dual_written:
            raise LoadOvertaken(
                f"transaction {txn.id} cannot commit: schema change job {job.id} on {table.name} started while it ran; retry the load"
            )
        stale = indexes - {table.current_index_id} - ({job.shadow_index_id} if job is not None else set())
        if stale:  # dual-written into the shadow index of a job cancelled meanwhile: drop those files
            for f in s.scalars(
                select(DataFileRow)
                .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
                .where(DataFileRow.txn_id == txn.id, TabletRow.index_id.in_(stale))
            ):
                f.state = FileState.DELETED
        cancelled = set(  # ... and the rows it quarantined for that job (a finished job's stay: it swapped)
            s.scalars(select(AlterJobRow.id).where(AlterJobRow.id.in_(quarantined_for), AlterJobRow.state == JobState.CANCELLED))
        )
        if cancelled:
            for f in s.scalars(select(DataFileRow).where(DataFileRow.txn_id == txn.id, DataFileRow.quarantine_job_id.in_(cancelled))):
                f.state = FileState.DELETED


def _end_swap_wait(row: AlterJobRow, now) -> None:
    """A job leaving READY_TO_SWAP (swapped by a person's RESUME, or cancelled) adds its wait to `swap_wait_s`."""
    if row.state == JobState.READY_TO_SWAP and row.ready_to_swap_at is not None:
        row.swap_wait_s = (row.swap_wait_s or 0.0) + max(0.0, (now - row.ready_to_swap_at).total_seconds())
