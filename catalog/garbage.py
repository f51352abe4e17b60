"""The catalog side of garbage collection and compaction (docs/gc.md). Every method is one database
transaction, and every one is safe to repeat.

Order of work, always: the catalog first, then the files. A file is deleted only after the catalog
says nothing references it (its row is DELETED or REPLACED, or it has no row at all), so a crash
between the two leaves only unreferenced files, which the next run removes; no catalog row ever
points at a deleted file.

- `drop_index`: a RETIRED index (the origin of a swap, or the index of a dropped table) past its
  retention becomes DROPPED and its files DELETED.
- `retire_compacted`: inside the commit of a compaction transaction, the files it merged become
  REPLACED, provided the table, its index and those files are still what compaction read.
- `collect_versions`: deletes the schema versions nothing needs any more.
- `dead_files` / `forget_files`: files that left their table at least the retention period ago
  (deferred deletes: a read that planned before the change still finds them) are deleted from disk,
  then their rows are removed at last.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from alterflow.catalog.catalog import ACTIVE_JOB_STATES, Catalog
from alterflow.catalog.catalog_errors import ConcurrentChange
from alterflow.catalog.models import (
    AlterJobRow,
    DataFileRow,
    IndexRow,
    SchemaVersionRow,
    TableRow,
    TabletRow,
    TransactionRow,
    ViewDependencyRow,
    ViewRow,
)
from alterflow.catalog.states import FileState, IndexState, TransactionState, VersionState

DEAD_FILE_STATES = (FileState.DELETED, FileState.REPLACED)
_BATCH = 500  # paths per IN (...) query


@dataclass(frozen=True)
class _OfTable:
    """What compaction and version collection report about a table starts with its id and name."""

    table_id: int
    table_name: str


@dataclass(frozen=True)
class CompactionTarget(_OfTable):
    """A tablet of a table's current index holding live committed files written under old versions."""

    index_id: int
    tablet_id: int
    partition_key: str
    bucket: int
    old_versions: tuple[int, ...]


@dataclass(frozen=True)
class BusyTable(_OfTable):
    """A live table with an unfinished alter job: compaction leaves it alone."""

    job_id: int
    job_state: str


@dataclass(frozen=True)
class CollectedVersions(_OfTable):
    versions: tuple[int, ...]


@dataclass(frozen=True)
class DeadFile:
    """A file that left its table (DELETED or REPLACED) and why, for GC and `gc --dry-run`."""

    id: int
    path: str
    dropped_at: datetime | None = None
    why: str = ""


def _why_dead(state: str, txn_id: int, txn_state: str, txn_reason: str | None, index_id: int, index_state: str) -> str:
    if state == FileState.REPLACED:
        return "replaced by a compaction"
    if txn_state == TransactionState.ABORTED:
        return f"transaction {txn_id} aborted" + (f" ({txn_reason})" if txn_reason else "")
    if index_state == IndexState.DROPPED:
        return f"index {index_id} dropped (the origin of a swap, a dropped table or a cancelled job's shadow)"
    return "deleted from its table"


def _chunks(items: list, size: int = _BATCH):
    for start in range(0, len(items), size):
        yield items[start : start + size]


class GarbageCollection:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def _session(self) -> Session:
        return self.catalog.db_session()

    # -- origin indexes -----------------------------------------------------------------------
    def expired_indexes(self, cutoff: datetime) -> list[int]:
        """RETIRED indexes retired at or before `cutoff`."""
        with self._session() as s:
            return list(
                s.scalars(
                    select(IndexRow.id).where(IndexRow.state == IndexState.RETIRED, IndexRow.retired_at <= cutoff).order_by(IndexRow.id)
                )
            )

    def drop_index(self, index_id: int, cutoff: datetime) -> list[str]:
        """RETIRED (at or before `cutoff`) -> DROPPED, its live files DELETED as of the moment the
        index retired (so the sweep deletes them in the same run). Returns their paths. An index
        already dropped (or not expired) gives []."""
        with self._session() as s, s.begin():
            row = s.get(IndexRow, index_id, with_for_update=True)
            if row is None or row.state != IndexState.RETIRED or row.retired_at is None or row.retired_at > cutoff:
                return []
            table = s.get(TableRow, row.table_id, with_for_update=True)
            if table.name_key is not None and table.current_index_id == index_id:
                return []  # never the index a live table reads
            files = s.scalars(
                select(DataFileRow)
                .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
                .where(TabletRow.index_id == index_id, DataFileRow.state == FileState.LIVE)
            ).all()
            for f in files:
                f.state = FileState.DELETED
                f.dropped_at = row.retired_at  # they left the table when the index retired
            row.state = IndexState.DROPPED
            return [f.path for f in files]

    def index_live_paths(self, index_id: int) -> list[str]:
        """The paths of an index's LIVE files (what `drop_index` would drop)."""
        with self._session() as s:
            return list(
                s.scalars(
                    select(DataFileRow.path)
                    .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
                    .where(TabletRow.index_id == index_id, DataFileRow.state == FileState.LIVE)
                )
            )

    def index_states(self, index_ids: Iterable[int]) -> dict[int, str]:
        ids = sorted(set(index_ids))
        states: dict[int, str] = {}
        with self._session() as s:
            for chunk in _chunks(ids):
                states.update(s.execute(select(IndexRow.id, IndexRow.state).where(IndexRow.id.in_(chunk))).all())
        return states

    def transaction_states(self, txn_ids: Iterable[int]) -> dict[int, str]:
        ids = sorted(set(txn_ids))
        states: dict[int, str] = {}
        with self._session() as s:
            for chunk in _chunks(ids):
                states.update(s.execute(select(TransactionRow.id, TransactionRow.state).where(TransactionRow.id.in_(chunk))).all())
        return states

    def newest_transaction(self) -> int:
        """The highest transaction id this catalog ever gave (0 before the first): ids are never
        reused, so a warehouse file named with a higher one was committed by another catalog."""
        with self._session() as s:
            return s.scalar(select(func.max(TransactionRow.id))) or 0

    def index_tables(self) -> dict[int, int]:
        """Every index id this catalog ever made, dropped ones included -> its table's id."""
        with self._session() as s:
            return dict(s.execute(select(IndexRow.id, IndexRow.table_id)).all())

    # -- files --------------------------------------------------------------------------------
    def dead_files(self, cutoff: datetime, limit: int = 10_000, after_id: int = 0) -> list[DeadFile]:
        """Files the catalog no longer references (DELETED, REPLACED) that left their table at or
        before `cutoff`, whose rows remain; ids above `after_id`, in id order."""
        with self._session() as s:
            rows = s.execute(
                select(
                    DataFileRow.id,
                    DataFileRow.path,
                    DataFileRow.dropped_at,
                    DataFileRow.state,
                    TransactionRow.id,
                    TransactionRow.state,
                    TransactionRow.reason,
                    IndexRow.id,
                    IndexRow.state,
                )
                .join(TransactionRow, TransactionRow.id == DataFileRow.txn_id)
                .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
                .join(IndexRow, IndexRow.id == TabletRow.index_id)
                .where(DataFileRow.state.in_(DEAD_FILE_STATES), DataFileRow.dropped_at <= cutoff, DataFileRow.id > after_id)
                .order_by(DataFileRow.id)
                .limit(limit)
            )
            return [DeadFile(i, p, at, _why_dead(st, t, ts, tr, x, xs)) for i, p, at, st, t, ts, tr, x, xs in rows]

    def waiting_files(self, cutoff: datetime) -> tuple[int, datetime | None]:
        """How many files left their table after `cutoff` (kept for the retention period), and
        when the first of them may go."""
        with self._session() as s:
            count, first = s.execute(
                select(func.count(), func.min(DataFileRow.dropped_at)).where(
                    DataFileRow.state.in_(DEAD_FILE_STATES), DataFileRow.dropped_at > cutoff
                )
            ).one()
            return count, first

    def live_paths(self, paths: Iterable[str]) -> set[str]:
        """Those of `paths` that a LIVE row names (never deleted, whatever other rows say)."""
        found: set[str] = set()
        with self._session() as s:
            for chunk in _chunks(sorted(set(paths))):
                found.update(s.scalars(select(DataFileRow.path).where(DataFileRow.path.in_(chunk), DataFileRow.state == FileState.LIVE)))
        return found

    def known_paths(self, paths: Iterable[str]) -> set[str]:
        """Those of `paths` that any row names, whatever its state."""
        found: set[str] = set()
        with self._session() as s:
            for chunk in _chunks(sorted(set(paths))):
                found.update(s.scalars(select(DataFileRow.path).where(DataFileRow.path.in_(chunk))))
        return found

    def forget_files(self, file_ids: Iterable[int]) -> int:
        """Remove the rows of dead files whose files are gone from disk. Returns how many."""
        ids = sorted(set(file_ids))
        removed = 0
        with self._session() as s, s.begin():
            for chunk in _chunks(ids):
                removed += s.execute(delete(DataFileRow).where(DataFileRow.id.in_(chunk), DataFileRow.state.in_(DEAD_FILE_STATES))).rowcount
        return removed

    # -- compaction ---------------------------------------------------------------------------
    def busy_tables(self) -> list[BusyTable]:
        with self._session() as s:
            rows = s.execute(
                select(TableRow.id, TableRow.name, AlterJobRow.id, AlterJobRow.state)
                .join(AlterJobRow, AlterJobRow.table_id == TableRow.id)
                .where(TableRow.name_key.is_not(None), AlterJobRow.state.in_(ACTIVE_JOB_STATES))
                .order_by(TableRow.id, AlterJobRow.id)
            )
            return [BusyTable(*r) for r in rows]

    def compaction_targets(self) -> list[CompactionTarget]:
        """Tablets of live tables' current indexes with live committed files under old versions,
        except on tables with an unfinished alter job (see `busy_tables`) and tablets holding
        quarantined rows (each file keeps the job it belongs to: a cancel takes them back, the
        Schema changes page counts them)."""
        busy = {b.table_id for b in self.busy_tables()}
        found: dict[int, dict] = {}
        with self._session() as s:
            quarantine_tablets = set(
                s.scalars(
                    select(DataFileRow.tablet_id)
                    .where(DataFileRow.quarantine_job_id.is_not(None), DataFileRow.state == FileState.LIVE)
                    .distinct()
                )
            )
            rows = s.execute(
                select(
                    TableRow.id,
                    TableRow.name,
                    TableRow.current_index_id,
                    TabletRow.id,
                    TabletRow.partition_key,
                    TabletRow.bucket,
                    DataFileRow.schema_version,
                )
                .join(TabletRow, TabletRow.index_id == TableRow.current_index_id)
                .join(DataFileRow, DataFileRow.tablet_id == TabletRow.id)
                .join(TransactionRow, TransactionRow.id == DataFileRow.txn_id)
                .where(
                    TableRow.name_key.is_not(None),
                    DataFileRow.state == FileState.LIVE,
                    TransactionRow.state == TransactionState.COMMITTED,
                    DataFileRow.schema_version != TableRow.current_version,
                )
                .distinct()
            )
            for table_id, name, index_id, tablet_id, partition_key, bucket, version in rows:
                if table_id in busy or tablet_id in quarantine_tablets:
                    continue
                entry = found.setdefault(
                    tablet_id,
                    {
                        "table_id": table_id,
                        "table_name": name,
                        "index_id": index_id,
                        "tablet_id": tablet_id,
                        "partition_key": partition_key,
                        "bucket": bucket,
                        "old_versions": set(),
                    },
                )
                entry["old_versions"].add(version)
        return [
            CompactionTarget(**{**e, "old_versions": tuple(sorted(e["old_versions"]))})
            for _tablet, e in sorted(found.items(), key=lambda item: (item[1]["table_id"], item[0]))
        ]

    def commit_compaction(self, txn_id: int, file_sizes: dict[str, int], table_id: int, index_id: int, replaced_ids: Iterable[int]) -> int:
        """Commit a compaction's transaction: its output becomes visible and its inputs REPLACED
        at once (`retire_compacted`)."""
        replaced_ids = list(replaced_ids)
        return self.catalog.commit_transaction(
            txn_id, file_sizes, check=lambda s, _txn: self.retire_compacted(s, table_id, index_id, replaced_ids)
        )

    def retire_compacted(self, s: Session, table_id: int, index_id: int, replaced_ids: Iterable[int]) -> None:
        """Inside the compaction transaction's commit: its inputs become REPLACED, in the same
        database transaction that makes its output visible. Refused (ConcurrentChange, nothing
        applied) when the table was dropped, swapped to another index or got an unfinished alter
        job, or when an input is no longer live (another compaction got there first)."""
        table = s.get(TableRow, table_id, with_for_update=True)
        if table is None or table.name_key is None:
            raise ConcurrentChange(f"compaction of table id {table_id}: the table was dropped meanwhile")
        if table.current_index_id != index_id:
            raise ConcurrentChange(f"compaction of table {table.name}: the table was swapped to another index meanwhile")
        job = self.catalog.active_job_row(s, table_id)
        if job is not None:
            raise ConcurrentChange(f"compaction of table {table.name}: alter job {job.id} ({job.state}) started meanwhile")
        ids = sorted(set(replaced_ids))
        rows = s.scalars(select(DataFileRow).where(DataFileRow.id.in_(ids)).with_for_update()).all() if ids else []
        if len(rows) != len(ids) or any(r.state != FileState.LIVE for r in rows):
            raise ConcurrentChange(f"compaction of table {table.name}: its input files changed meanwhile")
        for row in rows:
            row.state = FileState.REPLACED

    # -- schema versions ----------------------------------------------------------------------
    def collect_versions(self, cutoff: datetime) -> list[CollectedVersions]:
        """Delete every committed schema version that is not current, that no live data file is
        written under (in any index, committed or not), that no live view pins and no unfinished
        job uses, and that stopped being current at or before `cutoff` (a load that read it just
        before a newer version committed may still be about to write under it). Tables with a
        load in PREPARE are left for the next run. Returns what was deleted, per table."""
        with self._session() as s:
            table_ids = list(
                s.scalars(
                    select(SchemaVersionRow.table_id)
                    .where(SchemaVersionRow.state == VersionState.COMMITTED)
                    .group_by(SchemaVersionRow.table_id)
                    .having(func.count() > 1)
                    .order_by(SchemaVersionRow.table_id)
                )
            )
        deleted = []
        for table_id in table_ids:
            collected = self._collect_table_versions(table_id, cutoff)
            if collected is not None:
                deleted.append(collected)
        return deleted

    def _collect_table_versions(self, table_id: int, cutoff: datetime) -> CollectedVersions | None:
        with self._session() as s, s.begin():
            # The table row's lock orders this after (or before) every load's begin, every ALTER's
            # commit and every job's start on the table.
            table = s.scalar(select(TableRow).where(TableRow.id == table_id).with_for_update())
            if table is None or _load_preparing(s, table_id):
                return None
            committed = list(
                s.execute(
                    select(SchemaVersionRow.version, SchemaVersionRow.created_at)
                    .where(SchemaVersionRow.table_id == table_id, SchemaVersionRow.state == VersionState.COMMITTED)
                    .order_by(SchemaVersionRow.version)
                ).all()
            )
            doomed = _unneeded_versions(committed, _needed_versions(s, table), cutoff)
            if not doomed:
                return None
            s.execute(
                delete(SchemaVersionRow).where(
                    SchemaVersionRow.table_id == table_id,
                    SchemaVersionRow.version.in_(doomed),
                    SchemaVersionRow.state == VersionState.COMMITTED,
                )
            )
            return CollectedVersions(table_id, table.name, tuple(doomed))


def _load_preparing(s: Session, table_id: int) -> bool:
    """Whether a load of the table is in PREPARE (it may write under any version it read)."""
    preparing = s.scalar(
        select(TransactionRow.id).where(TransactionRow.table_id == table_id, TransactionRow.state == TransactionState.PREPARE).limit(1)
    )
    return preparing is not None


def _needed_versions(s: Session, table: TableRow) -> set[int]:
    """The table's versions something needs: the current one, those live data files are written
    under (any index), those live views pin, and those of its unfinished jobs."""
    needed = {table.current_version}
    needed.update(
        s.scalars(
            select(DataFileRow.schema_version)
            .join(TabletRow, TabletRow.id == DataFileRow.tablet_id)
            .join(IndexRow, IndexRow.id == TabletRow.index_id)
            .where(IndexRow.table_id == table.id, DataFileRow.state == FileState.LIVE)
            .distinct()
        )
    )
    needed.update(
        v
        for v in s.scalars(
            select(ViewDependencyRow.table_version)
            .join(ViewRow, ViewRow.id == ViewDependencyRow.view_id)
            .where(ViewDependencyRow.table_id == table.id, ViewRow.name_key.is_not(None))
        )
        if v is not None
    )
    for from_version, to_version in s.execute(
        select(AlterJobRow.from_version, AlterJobRow.to_version).where(
            AlterJobRow.table_id == table.id, AlterJobRow.state.in_(ACTIVE_JOB_STATES)
        )
    ):
        needed.update((from_version, to_version))
    return needed


def _unneeded_versions(committed: list, needed: set[int], cutoff: datetime) -> list[int]:
    """Of the committed (version, created at) rows in version order: the versions not needed that
    stopped being current (the next version's commit) at or before `cutoff`; never the last."""
    doomed = []
    for position, (version, _created) in enumerate(committed):
        if version in needed or position + 1 >= len(committed):
            continue
        superseded_at = committed[position + 1][1]  # the next version's commit
        if superseded_at <= cutoff:
            doomed.append(version)
    return doomed
