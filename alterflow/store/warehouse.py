"""`Warehouse`: the one object every write, move, listing and delete of warehouse files goes through
(pyiceberg's FileIO is the model). It owns three promises of SPEC §6:

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
  (alterflow.gc.files). Scratch folders that never held a visible file (a conversion's,
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
import shutil
import socket
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.errors import CatalogError
from alterflow.store.layout import DATA_FILE, INDEX_DIR, TABLE_DIR, TABLET_DIR, absolute

MARKER = "_alterflow_warehouse.json"
SYNC_THREADS = 16  # flushes waited for at once (each thread mostly sleeps in the kernel)
BIND_HINT = "check ALTERFLOW_CATALOG_URL and ALTERFLOW_WAREHOUSE; `alterflow db bind-warehouse` re-binds"


class WarehouseNotOwned(CatalogError):
    """The warehouse belongs to another catalog (or holds files this catalog knows nothing of);
    nothing was written or deleted."""


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


class Warehouse:
    """The files of one catalog's tables under `root`. Cheap to make; each object checks its
    ownership once (`check_owner`), on its first write or delete."""

    def __init__(self, root: pathlib.Path | str, catalog: Catalog):
        self.root = pathlib.Path(root).absolute()
        self._real_root = self.root.resolve()  # what `path` resolves under (a symlinked root too)
        self.catalog = catalog
        self._owned = False

    def path(self, relative: str) -> pathlib.Path:
        """The absolute path of a catalog path, refusing anything outside the warehouse."""
        return absolute(self.root, relative)

    # -- who owns it --------------------------------------------------------------------------
    @property
    def marker(self) -> pathlib.Path:
        return self.root / MARKER

    def owner(self) -> str | None:
        """The id of the catalog the marker names, None without a marker."""
        try:
            text = self.marker.read_text()
        except FileNotFoundError:
            return None
        try:
            owner = json.loads(text)["catalog_id"]
        except (ValueError, KeyError, TypeError):
            raise WarehouseNotOwned(f"warehouse {self.root} has an unreadable owner marker {MARKER}: {BIND_HINT}") from None
        if not isinstance(owner, str):
            raise WarehouseNotOwned(f"warehouse {self.root} has an unreadable owner marker {MARKER}: {BIND_HINT}")
        return owner

    def table_folders(self) -> set[int]:
        """The table ids of the `t<id>` folders at the root."""
        if not self.root.is_dir():
            return set()
        return {int(m.group(1)) for p in self.root.iterdir() if (m := TABLE_DIR.fullmatch(p.name)) and p.is_dir()}

    def check_owner(self, claim: bool = True) -> None:
        """Refuse (WarehouseNotOwned, one line) unless this catalog owns the warehouse; claim a
        warehouse without an owner when nothing there says it is another catalog's (unless
        `claim` is False: a look that writes nothing, as `gc --dry-run`)."""
        if self._owned:
            return
        mine = self.catalog.catalog_id()
        owner = self.owner()
        if owner is None:
            self._refuse_foreign_folders(mine)
            if not claim:
                return
            owner = self._claim(mine)
        if owner != mine:
            raise WarehouseNotOwned(f"warehouse {self.root} belongs to catalog {owner}, not to this catalog {mine}: {BIND_HINT}")
        self._owned = True

    def _refuse_foreign_folders(self, mine: str) -> None:
        folders = self.table_folders()
        if not folders:
            return
        known = self.catalog.table_ids()
        if not known & folders:
            what = "has no tables" if not known else "knows none of them"
            raise WarehouseNotOwned(
                f"warehouse {self.root} holds {len(folders)} table folder(s) and catalog {mine} {what}: "
                f"it is another catalog's warehouse; {BIND_HINT}"
            )

    def _claim(self, catalog_id: str) -> str:
        """Write the marker unless one appeared meanwhile; the owner it names."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{MARKER}.{uuid.uuid4().hex}.tmp"
        self._write_marker(tmp, catalog_id)
        try:
            with contextlib.suppress(FileExistsError):  # another process claimed it first: its owner wins
                os.link(tmp, self.marker)
        finally:
            tmp.unlink(missing_ok=True)
        fsync_path(self.root, directory=True)
        return self.owner() or catalog_id

    def _write_marker(self, path: pathlib.Path, catalog_id: str) -> None:
        body = {
            "catalog_id": catalog_id,
            "bound_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "bound_by": f"{socket.gethostname()}:{os.getpid()}",
        }
        with open(path, "w") as out:
            out.write(json.dumps(body) + "\n")
            out.flush()
            os.fsync(out.fileno())

    def bind(self, force: bool = False) -> str:
        """Make this catalog the warehouse's owner on purpose (after a restore, a move of the
        catalog...). Refused while the warehouse holds data files this catalog has no row for
        (the old owner's live files, which GC would then delete), unless `force`. One line out."""
        mine = self.catalog.catalog_id()
        owner = self.owner()
        if owner == mine:
            return f"warehouse {self.root} is already bound to catalog {mine}"
        unknown = self.unknown_files()
        if unknown and not force:
            raise WarehouseNotOwned(
                f"warehouse {self.root} holds {len(unknown)} data file(s) catalog {mine} has no record of "
                f"(its owner's: {owner or 'none recorded'}): --force re-binds anyway, and GC then deletes them"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{MARKER}.{uuid.uuid4().hex}.tmp"
        self._write_marker(tmp, mine)
        os.replace(tmp, self.marker)
        fsync_path(self.root, directory=True)
        self._owned = True
        before = f"from catalog {owner}" if owner else "(it had no owner)"
        return f"warehouse {self.root} bound to catalog {mine} {before}" + (
            f"; {len(unknown)} unknown file(s) left to GC" if unknown else ""
        )

    def unknown_files(self) -> list[str]:
        """Data files in tablet folders that no row of this catalog names."""
        from alterflow.catalog.garbage import GarbageCollection

        found = [relative for relative, _path in self.data_files()]
        if not found:
            return []
        known = GarbageCollection(self.catalog).known_paths(p.removesuffix(".tmp") for p in found)
        return sorted(p for p in found if p.removesuffix(".tmp") not in known)

    # -- listing ------------------------------------------------------------------------------
    def index_folders(self) -> list[tuple[str, int, pathlib.Path]]:
        """(relative folder, index id, path) of every `t<table>/i<index>` folder."""
        found = []
        if not self.root.is_dir():
            return found
        for table in sorted(self.root.iterdir()):
            if not (table.is_dir() and TABLE_DIR.fullmatch(table.name)):
                continue
            for index in sorted(table.iterdir()):
                match = INDEX_DIR.fullmatch(index.name)
                if index.is_dir() and match:
                    found.append((f"{table.name}/{index.name}", int(match.group(1)), index))
        return found

    def data_files(self) -> Iterator[tuple[str, pathlib.Path]]:
        """(catalog path, path) of every data file (or its `.tmp`) in a tablet folder."""
        for relative, _index_id, index in self.index_folders():
            for tablet in sorted(index.iterdir()):
                if not (tablet.is_dir() and TABLET_DIR.fullmatch(tablet.name)):
                    continue
                for data_file in sorted(tablet.iterdir()):
                    if data_file.is_file() and DATA_FILE.fullmatch(data_file.name):
                        yield f"{relative}/{tablet.name}/{data_file.name}", data_file

    # -- writing ------------------------------------------------------------------------------
    def prepare(self, relative: str) -> pathlib.Path:
        """The absolute path a writer may create `relative` at (its folder made), after the
        ownership check."""
        self.check_owner()
        path = self.path(relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

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
        durably, dropped past the retention period. Returns how many existed."""
        self.check_owner()
        deleted = 0
        folders: set[pathlib.Path] = set()
        for relative in relatives:
            path = self.path(relative)
            for victim in (path, path.with_name(path.name + ".tmp")):
                with contextlib.suppress(FileNotFoundError):  # already gone: a crash after the unlink
                    victim.unlink()
                    folders.add(path.parent)
                    if victim == path:
                        deleted += 1
        for folder in folders:
            if folder.is_dir():
                fsync_path(folder, directory=True)
        return deleted

    def remove_scratch(self, folder: pathlib.Path) -> None:
        """Remove a staging folder: output that never became visible (a conversion's, a
        compaction's or a Spark load's before it moved into a tablet)."""
        folder = pathlib.Path(folder).resolve()
        if self._real_root not in folder.parents:
            raise ValueError(f"{folder} is not a folder inside the warehouse {self.root}")
        if folder.exists():
            self.check_owner()
            shutil.rmtree(folder, ignore_errors=True)

    def remove_empty_folders(self, top: pathlib.Path, below: bool = True) -> None:
        """Remove `top` if it is empty, with (`below`) the empty folders under it first (a
        dropped index's)."""
        if not top.is_dir() or top == self.root:
            return
        inner = sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True) if below else []
        for folder in [*inner, top]:
            with contextlib.suppress(OSError):  # not empty: something is still there, keep it
                folder.rmdir()
