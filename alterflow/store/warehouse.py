"""`Warehouse`: the one object every write, move, listing and delete of warehouse files goes through
(pyiceberg's FileIO is the model). It owns three promises of docs/gc.md:

- **A warehouse belongs to one catalog.** The first command that writes files records the
  catalog's id (`Catalog.catalog_id`, made with the catalog) in a marker file at the warehouse's
  root, `_alterflow_warehouse.json`. Every command that writes or deletes files calls
  `check_owner` first: a catalog that is not the owner is refused with one line naming both ids,
  before anything is touched. A warehouse with no marker yet (written by a release before this
  one) is claimed only by a catalog that knows its table folders; a catalog that knows none of
  them (a fresh catalog because a worker lost its ALTERFLOW_CATALOG_URL) is refused the same way.
  `bind` (`alterflow db bind-warehouse`) re-binds on purpose.
- **Durable before visible.** `sync` flushes files and the directory entries leading to them
  (fsync) and is called right before the catalog transaction that makes them visible commits;
  `move` is a rename whose directory entry `sync` flushes with the file.
- **Deletes are deferred.** `delete` is the only way a data file leaves the disk, and only GC's
  sweep calls it, for files whose catalog rows left the table at least the retention period ago
  (alterflow.gc.file_sweep). Scratch folders that never held a visible file (a conversion's,
  compaction's or Spark load's staging output) go through `remove_scratch`.

A filesystem that acknowledges fsync without writing (some network or FUSE filesystems, a disk
with a volatile write cache and barriers off) breaks the second promise; docs/gc.md says so.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pathlib
import re
import shutil
import socket
import stat
import time
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.catalog_errors import CatalogError
from alterflow.catalog.records import utcnow
from alterflow.catalog.states import TransactionState
from alterflow.errors import shown_path
from alterflow.store.layout import (
    COMPACTION_DIR,
    COMPACTION_STAGING,
    CONVERSION_STAGING,
    DATA_FILE,
    INDEX_DIR,
    LOAD_DIR,
    LOAD_STAGING,
    TABLE_DIR,
    TABLET_DIR,
    absolute,
    writable,
)

MARKER = "_alterflow_warehouse.json"
CLAIM_ATTEMPTS = 5
SYNC_THREADS = 16  # flushes waited for at once (each thread mostly sleeps in the kernel)
BIND_HINT = "check ALTERFLOW_CATALOG_URL and ALTERFLOW_WAREHOUSE; `alterflow db bind-warehouse` re-binds"
FORCE_HINT = "`alterflow db bind-warehouse --force` makes it the owner"


class WarehouseNotOwned(CatalogError):
    """The warehouse belongs to another catalog (or holds files this catalog knows nothing of);
    nothing was written or deleted."""


class CatalogBehindWarehouse(WarehouseNotOwned):
    """The warehouse holds files committed by transactions this catalog never committed (a
    restored or copied catalog): GC deletes nothing."""


def fsync_path(path: pathlib.Path, directory: bool = False) -> None:
    """Flush a file's data and size (fdatasync: its timestamps are not needed to read it back), or a
    folder's entries (fsync), to stable storage."""
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        if directory:
            os.fsync(fd)
        else:
            os.fdatasync(fd)
    except OSError as exc:  # some filesystems cannot fsync a folder; a file must always flush
        if not (directory and exc.errno in (errno.EINVAL, errno.EBADF, errno.ENOTSUP)):
            raise
    finally:
        os.close(fd)


@dataclass(frozen=True)
class MarkerRecord:
    """What `_alterflow_warehouse.json` says: the owner's id, the highest transaction id a GC run
    of the owner saw (a catalog whose newest is lower is behind: a restore or a copy), and, after a
    forced bind, the moment before which files no row names are accepted as leftovers."""

    catalog_id: str
    high_water: int = 0
    accepted_before: datetime | None = None

    def to_json(self, bound_by: str) -> str:
        body = {
            "catalog_id": self.catalog_id,
            "high_water": self.high_water,
            "bound_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "bound_by": bound_by,
        }
        if self.accepted_before is not None:
            body["accepted_before"] = self.accepted_before.isoformat(timespec="seconds")
        return json.dumps(body) + "\n"

    @classmethod
    def from_json(cls, text: str) -> MarkerRecord:
        """Raises ValueError, KeyError or TypeError when the text is no marker."""
        body = json.loads(text)
        owner, high_water, accepted = body["catalog_id"], body.get("high_water", 0), body.get("accepted_before")
        if not isinstance(owner, str) or isinstance(high_water, bool) or not isinstance(high_water, int):
            raise TypeError("not a marker")
        return cls(owner, high_water, datetime.fromisoformat(accepted) if accepted is not None else None)


@dataclass(frozen=True)
class Skipped:
    """A link or a special file where a folder or a data file belongs: never followed, never deleted."""

    path: str
    why: str


@dataclass(frozen=True)
class FoundFile:
    """A data file (or its `.tmp`) in a tablet folder, as listed: its catalog path, absolute path
    and modification time (UTC)."""

    path: str
    absolute: pathlib.Path | str  # the local path, or the object's key
    modified: datetime

    @property
    def name(self) -> str:
        """The catalog path it stands for (a `.tmp` stands for the file it would become)."""
        return self.path.removesuffix(".tmp")

    @property
    def txn_id(self) -> int:
        """The transaction the writer named it after (`<txn>-...`, alterflow.store.layout)."""
        return int(self.path.rsplit("/", 1)[-1].split("-", 1)[0])


@dataclass(frozen=True)
class IndexFolder:
    relative: str
    table_id: int
    index_id: int
    path: pathlib.Path | str  # the local folder, or the key prefix


@dataclass(frozen=True)
class StagingFolder:
    """Scratch output under an index (alterflow.store.layout): a conversion's `_staging` (no
    transaction: it is over when the index is no longer a shadow), or a compaction's
    `_compact/x<txn>` or Spark load's `_load/l<txn>` (over when the transaction is no longer PREPARE)."""

    relative: str
    index_id: int
    txn_id: int | None


@dataclass(frozen=True)
class IncompleteUpload:
    """An upload to an object store that never completed (a writer killed mid-upload): no object
    exists, only its parts, which take space until the upload is aborted."""

    path: str  # the catalog path it was to become
    upload_id: str
    initiated: datetime  # UTC


@dataclass
class WarehouseScan:
    """One listing of the warehouse's layout (lstat only: links are reported, not followed)."""

    tables: dict[int, pathlib.Path] = field(default_factory=dict)
    indexes: list[IndexFolder] = field(default_factory=list)
    files: list[FoundFile] = field(default_factory=list)
    staging: list[StagingFolder] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass
class Evidence:
    """What a scan says about this catalog: files no row names, split by whose they can be."""

    named: int = 0  # files some row of this catalog names
    orphans: list[FoundFile] = field(default_factory=list)  # of this catalog's aborted or open transactions: crash leftovers
    foreign: list[FoundFile] = field(default_factory=list)  # of transactions this catalog never committed
    unknown_folders: list[str] = field(default_factory=list)  # table or index folders of ids this catalog never gave
    newest_txn: int = 0


def _is_folder(path: pathlib.Path) -> bool:
    """A real folder, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _modified(stat_result: os.stat_result) -> datetime:
    return datetime.fromtimestamp(stat_result.st_mtime, UTC).replace(tzinfo=None)


class Warehouse:
    """The files of one catalog's tables under `root`, a folder. Cheap to make; each object checks
    its ownership once (`check_owner`), on its first write or delete. A root in object storage is
    an `ObjectWarehouse` (alterflow.store.object_warehouse), which keeps the same promises without
    renames or fsync (docs/storage.md); `alterflow.store.warehouse_kinds.open_warehouse` opens the
    one a root is."""

    def __init__(self, root: pathlib.Path | str, catalog: Catalog):
        self.root = pathlib.Path(root).absolute()
        self._real_root = self.root.resolve()  # the root's links resolved once (a symlinked root works); nothing below it
        self.catalog = catalog
        self._owned = False
        self.record: MarkerRecord | None = None  # the marker, once `check_owner` read it
        self.skipped: list[Skipped] = []  # links and special files a delete met and left alone

    def path(self, relative: str) -> pathlib.Path:
        """The absolute path of a catalog path, refusing anything outside the warehouse; links
        below the root are not resolved."""
        return absolute(self.root, relative)

    def exists(self, relative: str) -> bool:
        """Whether a catalog path is there (a link counts: it is not followed)."""
        return os.path.lexists(self.path(relative))

    def size(self, relative: str) -> int:
        """A written file's size in bytes (FileNotFoundError when it is not there)."""
        return self.path(relative).stat().st_size

    # -- who owns it --------------------------------------------------------------------------
    @property
    def marker(self) -> pathlib.Path:
        return self.root / MARKER

    def _unreadable(self) -> WarehouseNotOwned:
        return WarehouseNotOwned(f"warehouse {shown_path(self.root)} has an unreadable owner marker {MARKER}: {BIND_HINT}")

    def _marker_text(self) -> str | None:
        """The marker's text, None without one; WarehouseNotOwned when it cannot be read as text."""
        try:
            readable = stat.S_ISREG(os.lstat(self.marker).st_mode)
            text = self.marker.read_bytes().decode("utf-8") if readable else None
        except FileNotFoundError:
            return None
        except (OSError, ValueError):  # unreadable, or not UTF-8
            raise self._unreadable() from None
        if text is None:  # a folder, a link, a special file
            raise self._unreadable()
        return text

    def read_marker(self) -> MarkerRecord | None:
        """The marker, None without one; one line (WarehouseNotOwned) when it is unreadable: not
        JSON, not UTF-8, empty, a folder, a link or a special file."""
        text = self._marker_text()
        if text is None:
            return None
        try:
            return MarkerRecord.from_json(text)
        except (ValueError, KeyError, TypeError):
            raise self._unreadable() from None

    def owner(self) -> str | None:
        """The id of the catalog the marker names, None without a marker."""
        record = self.read_marker()
        return record.catalog_id if record else None

    def check_owner(self, claim: bool = True) -> None:
        """Refuse (WarehouseNotOwned, one line) unless this catalog owns the warehouse; claim a
        warehouse without an owner when it proves to be this catalog's (`_prove_claim`), unless
        `claim` is False: a look that writes nothing, as `gc --dry-run`."""
        if self._owned:
            return
        mine = self.catalog.catalog_id()
        record = self.read_marker()
        if record is None:
            self._prove_claim()
            if not claim:
                return
            record = self._claim(mine)
        if record.catalog_id != mine:
            raise WarehouseNotOwned(
                f"warehouse {shown_path(self.root)} belongs to catalog {record.catalog_id}, not to this catalog {mine}: {BIND_HINT}"
            )
        self.record = record
        self._owned = True

    def _prove_claim(self) -> None:
        """A warehouse without a marker is this catalog's only when every table folder, index
        folder and data file in it is one this catalog has a record of, and, if it holds data
        files, some of them are files this catalog's rows name. Otherwise one line."""
        scan = self.scan()
        if not scan.tables:
            return
        known = self.catalog.table_ids()
        if not known:
            raise WarehouseNotOwned(
                f"warehouse {shown_path(self.root)} is another catalog's warehouse: it holds {len(scan.tables)} table folder(s) "
                f"and this catalog has none; {BIND_HINT}"
            )
        evidence = self.evidence(scan)
        strangers = len(evidence.unknown_folders) + len(evidence.foreign)
        if strangers or (scan.files and not evidence.named):
            raise WarehouseNotOwned(
                f"warehouse {shown_path(self.root)} has no owner marker and this catalog has no record of "
                f"{strangers or len(scan.files)} file(s) or folder(s) there: {BIND_HINT}"
            )

    def evidence(self, scan: WarehouseScan) -> Evidence:
        """Sort the scan's files by what this catalog knows of them (see `Evidence`). A file no row
        names is a leftover of this catalog when its transaction is one this catalog began and
        never committed (a crash, a load that wrote after its abort): every writer records a
        file's row before the file appears, and a row goes only after its file. Any other such
        file (its transaction unknown here, or committed here with other files) was written by
        another catalog: a newer copy of this one, or a second catalog under the same id. Files
        older than a forced bind's `accepted_before` count as leftovers."""
        from alterflow.catalog.garbage import GarbageCollection

        gc = GarbageCollection(self.catalog)
        found = Evidence(newest_txn=gc.newest_transaction())
        tables, indexes = self.catalog.table_ids(), gc.index_tables()
        found.unknown_folders = [f"t{t}" for t in sorted(scan.tables) if t not in tables] + [
            i.relative for i in scan.indexes if i.table_id in tables and indexes.get(i.index_id) != i.table_id
        ]
        if not scan.files:
            return found
        known = gc.known_paths({f.name for f in scan.files})
        unknown = [f for f in scan.files if f.name not in known]
        found.named = len(scan.files) - len(unknown)
        states = gc.transaction_states(f.txn_id for f in unknown)
        accepted = self.record.accepted_before if self.record else None
        for f in unknown:
            if states.get(f.txn_id) in (TransactionState.PREPARE, TransactionState.ABORTED):
                found.orphans.append(f)
            elif accepted is not None and f.modified <= accepted:
                found.orphans.append(f)
            elif self._still_there(f):  # not one another GC run deleted meanwhile
                found.foreign.append(f)
        return found

    def check_current(self, evidence: Evidence) -> None:
        """Refuse (CatalogBehindWarehouse, one line) when the warehouse holds what this catalog
        never committed: GC's deletes then wait for an operator (docs/gc.md, "Claims need proof")."""
        mine = self.catalog.catalog_id()
        if self.record is not None and self.record.high_water > evidence.newest_txn:
            raise CatalogBehindWarehouse(
                f"catalog {mine} is behind warehouse {shown_path(self.root)}: GC saw transaction {self.record.high_water} there, "
                f"its newest is {evidence.newest_txn} (a restore, a copy?); GC deletes nothing; {FORCE_HINT}"
            )
        if evidence.foreign:
            raise CatalogBehindWarehouse(
                f"catalog {mine} is behind warehouse {shown_path(self.root)}: {len(evidence.foreign)} file(s) there are of "
                f"transactions it never committed (a restore, a copy?); GC deletes nothing; {FORCE_HINT}"
            )

    def record_high_water(self, newest_txn: int) -> None:
        """After a GC run: the marker remembers the newest transaction this owner had, so a copy
        or restore of the catalog from before it is known to be behind."""
        if self.record is None or newest_txn <= self.record.high_water:
            return
        self._replace_marker(replace(self.record, high_water=newest_txn))

    def _claim(self, mine: str) -> MarkerRecord:
        """Create the marker unless one exists, then the marker there: whoever created it owns the
        warehouse. An object store may answer a claim racing another with a conflict before either
        landed: asked again a moment later."""
        for attempt in range(CLAIM_ATTEMPTS):
            self._create_marker(MarkerRecord(mine))
            record = self.read_marker()
            if record is not None:
                return record
            time.sleep(0.1 * (attempt + 1))
        raise WarehouseNotOwned(
            f"warehouse {shown_path(self.root)}: its owner marker could not be created ({CLAIM_ATTEMPTS} attempts); run it again"
        )

    def _still_there(self, found: FoundFile) -> bool:
        return os.path.lexists(found.absolute)

    def _create_marker(self, record: MarkerRecord) -> None:
        """Write the marker unless one appeared meanwhile (then that one's owner wins)."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{MARKER}.{uuid.uuid4().hex}.tmp"
        self._write_marker(tmp, record)
        try:
            with contextlib.suppress(FileExistsError):  # another process claimed it first: its owner wins
                os.link(tmp, self.marker)
        finally:
            tmp.unlink(missing_ok=True)
        fsync_path(self.root, directory=True)

    def _write_marker(self, path: pathlib.Path, record: MarkerRecord) -> None:
        with open(path, "w") as out:
            out.write(record.to_json(f"{socket.gethostname()}:{os.getpid()}"))
            out.flush()
            os.fsync(out.fileno())

    def _replace_marker(self, record: MarkerRecord) -> bool:
        """Replace the marker (by rename: of two replaces at once, the later one stands); True."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{MARKER}.{uuid.uuid4().hex}.tmp"
        self._write_marker(tmp, record)
        os.replace(tmp, self.marker)
        fsync_path(self.root, directory=True)
        self.record = record
        return True

    def bind(self, force: bool = False) -> str:
        """Make this catalog the warehouse's owner on purpose (after a restore, a move of the
        catalog, a marker gone bad). Refused while the warehouse holds data files of
        transactions this catalog never committed (the old owner's live files, which GC would then
        delete, or those of a newer copy of this catalog), unless `force`. A forced bind of a
        catalog whose id the marker already names gives the catalog a new id, so the copies that
        share the old one are refused from then on. One line out."""
        mine = self.catalog.catalog_id()
        try:
            before, unreadable = self.read_marker(), False
        except WarehouseNotOwned:
            before, unreadable = None, True
        self.record = before if before and before.catalog_id == mine else None
        scan = self.scan()
        evidence = self.evidence(scan)
        behind = before is not None and before.catalog_id == mine and before.high_water > evidence.newest_txn
        owner = before.catalog_id if before else None
        if owner == mine and not behind and not evidence.foreign:
            self.record, self._owned = before, True
            return f"warehouse {shown_path(self.root)} is already bound to catalog {mine}"
        unknown = evidence.foreign
        if (unknown or behind) and not force:
            if unknown:
                raise WarehouseNotOwned(
                    f"warehouse {shown_path(self.root)} holds {len(unknown)} data file(s) catalog {mine} has no record of "
                    f"(its owner's: {owner or 'none recorded'}): --force re-binds anyway, and GC then deletes them"
                )
            raise WarehouseNotOwned(
                f"catalog {mine} is behind warehouse {shown_path(self.root)}: a GC saw transaction {before.high_water} there, "
                f"this catalog's newest is {evidence.newest_txn}: --force re-binds anyway"
            )
        moved_aside = self._move_unreadable_marker() if unreadable else None
        if owner == mine:  # a copy of this catalog wrote there too: from now on only this one is the owner
            mine = self.catalog.new_identity()
        accepted = utcnow() if unknown else None
        if not self._replace_marker(MarkerRecord(mine, evidence.newest_txn, accepted)):
            raise WarehouseNotOwned(
                f"warehouse {shown_path(self.root)}: its owner marker changed while binding (another catalog's claim, a GC); run it again"
            )
        self._owned = True
        was = f"from catalog {owner}" if owner else ("(its marker was unreadable)" if unreadable else "(it had no owner)")
        return (
            f"warehouse {shown_path(self.root)} bound to catalog {mine} {was}"
            + (f"; {len(unknown)} unknown file(s) left to GC" if unknown else "")
            + (f"; the unreadable marker moved to {moved_aside}" if moved_aside else "")
        )

    def _move_unreadable_marker(self) -> str | None:
        """An unreadable marker that is a folder (or anything but a file) moves aside, kept for a
        look; an unreadable file is simply replaced."""
        if not os.path.lexists(self.marker) or stat.S_ISREG(os.lstat(self.marker).st_mode):
            return None
        aside = f"{MARKER}.unreadable-{utcnow():%Y%m%dT%H%M%S}"
        os.rename(self.marker, self.root / aside)
        return aside

    # -- listing ------------------------------------------------------------------------------
    def _link_why(self, path: pathlib.Path, what: str) -> str:
        try:
            target = path.resolve()
            inside = target == self._real_root or self._real_root in target.parents
        except (OSError, RuntimeError):  # a loop
            inside = False
        where = "to another place in the warehouse" if inside else "pointing outside the warehouse"
        return f"a symbolic link {where} where a {what} belongs: not followed, not deleted"

    def _entries(self, folder: pathlib.Path, skipped: list[Skipped], pattern, what: str) -> Iterator[tuple[os.DirEntry, re.Match]]:
        """The entries of `folder` whose names match `pattern`, in name order; links and special
        files among them are reported in `skipped`, never followed."""
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            match = pattern.fullmatch(entry.name)
            if not match:
                continue
            relative = str(pathlib.Path(entry.path).relative_to(self._real_root))
            if entry.is_symlink():
                skipped.append(Skipped(relative, self._link_why(pathlib.Path(entry.path), what)))
            elif entry.is_dir(follow_symlinks=False) if what != "data file" else entry.is_file(follow_symlinks=False):
                yield entry, match
            else:
                skipped.append(Skipped(relative, f"not a {'regular file' if what == 'data file' else 'folder'}: left alone"))

    def scan(self) -> WarehouseScan:
        """Every table folder, index folder and data file of the layout (alterflow.store.layout),
        by lstat: a link is reported (`skipped`) and never followed, so nothing outside the
        warehouse or elsewhere in it is ever listed through one."""
        found = WarehouseScan()
        root = self._real_root
        if not root.is_dir():
            return found
        for table, t in self._entries(root, found.skipped, TABLE_DIR, "table folder"):
            found.tables[int(t.group(1))] = pathlib.Path(table.path)
            for index, i in self._entries(pathlib.Path(table.path), found.skipped, INDEX_DIR, "index folder"):
                folder = IndexFolder(f"{table.name}/{index.name}", int(t.group(1)), int(i.group(1)), pathlib.Path(index.path))
                found.indexes.append(folder)
                for tablet, _b in self._entries(folder.path, found.skipped, TABLET_DIR, "tablet folder"):
                    for data_file, _f in self._entries(pathlib.Path(tablet.path), found.skipped, DATA_FILE, "data file"):
                        found.files.append(
                            FoundFile(
                                f"{folder.relative}/{tablet.name}/{data_file.name}",
                                pathlib.Path(data_file.path),
                                _modified(data_file.stat(follow_symlinks=False)),
                            )
                        )
                found.staging += self._staging(folder)
        return found

    @staticmethod
    def _staging(index: IndexFolder) -> list[StagingFolder]:
        """The scratch folders under an index (real folders only: a link there is nobody's output)."""
        found = []
        if _is_folder(index.path / CONVERSION_STAGING):
            found.append(StagingFolder(f"{index.relative}/{CONVERSION_STAGING}", index.index_id, None))
        for folder, pattern in ((COMPACTION_STAGING, COMPACTION_DIR), (LOAD_STAGING, LOAD_DIR)):
            if not _is_folder(index.path / folder):
                continue
            try:
                attempts = sorted((index.path / folder).iterdir())
            except (FileNotFoundError, NotADirectoryError):  # removed meanwhile (the work it held ended)
                continue
            for attempt in attempts:
                match = pattern.fullmatch(attempt.name)
                if match and _is_folder(attempt):
                    found.append(StagingFolder(f"{index.relative}/{folder}/{attempt.name}", index.index_id, int(match.group(1))))
        return sorted(found, key=lambda s: s.relative)

    # -- writing ------------------------------------------------------------------------------
    def prepare(self, relative: str) -> pathlib.Path:
        """The absolute path a writer may create `relative` at (its folders made, none of them a
        link: alterflow.store.layout.writable), after the ownership check."""
        self.check_owner()
        return writable(self.root, relative)

    def move(self, source: pathlib.Path, relative: str) -> pathlib.Path:
        """Rename a written file (a staging output) into place; `sync` makes the rename durable."""
        target = self.prepare(relative)
        os.replace(source, target)
        return target

    def sync(self, relatives: Iterable[str]) -> int:
        """fsync each file and every folder from its own up to the warehouse's root (their
        entries: a new file's name, a rename, a new folder), each folder once, all at once and all
        done when this returns. Called before the catalog commit that makes the files visible (their
        order does not matter: nothing is visible until that commit). Returns how many files were
        flushed."""
        self.check_owner()
        folders: set[pathlib.Path] = set()
        files = []
        for relative in relatives:
            path = self.path(relative)
            files.append(path)
            folder = path.parent
            while folder not in folders and (folder == self._real_root or self._real_root in folder.parents):
                folders.add(folder)
                folder = folder.parent
        # All at once: the filesystem's journal then commits the folders' entries together (one
        # journal commit, not one per folder). Every flush is done before this returns.
        flushes = [(path, False) for path in files] + [(folder, True) for folder in folders]
        if len(flushes) <= 2:
            for path, directory in flushes:
                fsync_path(path, directory)
        else:
            with ThreadPoolExecutor(min(len(flushes), SYNC_THREADS), thread_name_prefix="fsync") as pool:
                list(pool.map(lambda item: fsync_path(*item), flushes))
        return len(files)

    def sync_transaction(self, txn_id: int) -> int:
        """`sync` every file of a PREPARE transaction, right before its commit makes them visible."""
        return self.sync(self.catalog.transaction_paths(txn_id))

    # -- deleting -----------------------------------------------------------------------------
    def delete(self, relatives: Iterable[str]) -> int:
        """Delete files by their catalog paths (and a `.tmp` a write may have left), then flush
        their folders. Only GC's sweep calls this, for files whose rows the catalog has already,
        durably, dropped past the retention period. Each path is the path itself: a link is not
        followed (nor deleted), and nothing is deleted through a linked folder; those land in
        `skipped`. Returns how many existed."""
        self.check_owner()
        deleted = 0
        folders: set[pathlib.Path] = set()
        for path in [self.path(relative) for relative in relatives]:  # nothing goes when one is outside
            if not self._plain_folders(path.parent):
                continue
            for victim in (path, path.with_name(path.name + ".tmp")):
                try:
                    mode = os.lstat(victim).st_mode
                except FileNotFoundError:  # already gone: a crash after the unlink
                    continue
                if not stat.S_ISREG(mode):
                    self.skipped.append(Skipped(str(victim.relative_to(self._real_root)), self._not_deleted_why(victim, mode)))
                    continue
                with contextlib.suppress(FileNotFoundError):
                    victim.unlink()
                    folders.add(path.parent)
                    if victim == path:
                        deleted += 1
        for folder in folders:
            if folder.is_dir():
                fsync_path(folder, directory=True)
        return deleted

    def _not_deleted_why(self, path: pathlib.Path, mode: int) -> str:
        return self._link_why(path, "data file") if stat.S_ISLNK(mode) else "not a regular file: left alone"

    def _plain_folders(self, folder: pathlib.Path) -> bool:
        """Whether every folder from the root down to `folder` is a real folder, not a link
        (a missing one counts as plain: nothing is there to delete). A link lands in `skipped`."""
        chain = []
        while folder != self._real_root:
            chain.append(folder)
            folder = folder.parent
        for part in reversed(chain):
            try:
                mode = os.lstat(part).st_mode
            except FileNotFoundError:
                return True
            if not stat.S_ISDIR(mode):
                where = str(part.relative_to(self._real_root))
                if not any(s.path == where for s in self.skipped):
                    why = self._link_why(part, "folder") if stat.S_ISLNK(mode) else "not a folder: left alone"
                    self.skipped.append(Skipped(where, why))
                return False
        return True

    def remove_scratch(self, folder: pathlib.Path | str) -> None:
        """Remove a staging folder (its path, or a `str` relative to the root): output that never
        became visible (a conversion's, a compaction's or a Spark load's before it moved into a
        tablet). A link there is not followed: it lands in `skipped`."""
        folder = self.root / folder if isinstance(folder, str) else pathlib.Path(folder)
        relative = None
        for base in (self._real_root, self.root):
            with contextlib.suppress(ValueError):
                relative = folder.relative_to(base)
                break
        if relative is None or not relative.parts or ".." in relative.parts:
            raise ValueError(f"{folder} is not a folder inside the warehouse {self.root}")
        folder = self._real_root / relative
        if not os.path.lexists(folder):
            return
        self.check_owner()
        if self._plain_folders(folder):
            shutil.rmtree(folder, ignore_errors=True)  # follows no link inside: it removes the links themselves

    def incomplete_uploads(self) -> list[IncompleteUpload]:
        """Uploads begun and never completed. A disk has none: a write cut short there is a
        `.tmp` file, which the listing finds (alterflow.gc.file_sweep)."""
        return []

    def abort_uploads(self, uploads: Iterable[IncompleteUpload]) -> int:
        """Abort incomplete uploads (none on a disk); returns how many were aborted."""
        return len(list(uploads))

    def remove_dropped_index_folder(self, index: IndexFolder) -> None:
        """The empty folders of a dropped index, and its table's folder if nothing is left in it."""
        self.remove_empty_folders(pathlib.Path(index.path))
        self.remove_empty_folders(pathlib.Path(index.path).parent, below=False)

    def remove_empty_folders(self, top: pathlib.Path, below: bool = True) -> None:
        """Remove `top` if it is empty, with (`below`) the empty folders under it first (a
        dropped index's)."""
        if not top.is_dir() or top == self.root:
            return
        inner = sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True) if below else []
        for folder in [*inner, top]:
            with contextlib.suppress(OSError):  # not empty: something is still there, keep it
                folder.rmdir()
