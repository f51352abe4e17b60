"""Where files live: the one home of the warehouse layout. Paths are built from ids only; no
user-typed name ever becomes a path.

    t<table>/i<index>/b<tablet>/<txn>-<seq>-<uuid>.parquet   a data file (`data_file_path`)
    t<table>/i<index>/_staging/o<tablet>-<attempt>/          a conversion's output before it moves
    t<table>/i<index>/_compact/x<txn>/                       a compaction's output before it moves
    t<table>/i<index>/_load/l<txn>/                          a Spark load's output before it moves

The builders below write these names and the patterns read them back (GC's sweep,
alterflow.gc.file_sweep)."""

from __future__ import annotations

import os
import pathlib
import re
import stat
import uuid
from dataclasses import dataclass
from functools import singledispatch

from alterflow.errors import UserError
from alterflow.object_store import ObjectStoreLocation

TXN_COLUMN = "af$txn"  # hidden column of primary-key tables: the transaction that wrote the row

CONVERSION_STAGING = "_staging"  # alterflow.rewrite.tablet_conversion
COMPACTION_STAGING = "_compact"  # alterflow.gc.compaction
LOAD_STAGING = "_load"  # alterflow.load.spark_load

TABLE_DIR = re.compile(r"t(\d+)")
INDEX_DIR = re.compile(r"i(\d+)")
TABLET_DIR = re.compile(r"b(\d+)")
COMPACTION_DIR = re.compile(r"x(\d+)")  # under COMPACTION_STAGING: one compaction's transaction
LOAD_DIR = re.compile(r"l(\d+)")  # under LOAD_STAGING: one load's transaction
DATA_FILE = re.compile(r"[0-9]+-(?:[0-9]+-)?[0-9a-f]{32}\.parquet(\.tmp)?")  # <txn>-[<seq>-]<uuid>, or its .tmp


@dataclass(frozen=True)
class PathWriter:
    """Who writes at a path of this layout: a transaction (a tablet's data file, a compaction's or
    a Spark load's staging) or a conversion (the `_staging` of its shadow index); for staged
    output, the staging folder it is in."""

    txn_id: int | None = None
    shadow_index_id: int | None = None
    staging: str | None = None  # relative to the warehouse; None for a tablet's data file


def path_writer(relative: str) -> PathWriter | None:
    """The writer of a path relative to the warehouse, by the layout's names; None for a path
    outside them (nothing proves whose it is)."""
    parts = relative.split("/")
    if len(parts) < 4 or not TABLE_DIR.fullmatch(parts[0]) or not (index := INDEX_DIR.fullmatch(parts[1])):
        return None
    kind = parts[2]
    if TABLET_DIR.fullmatch(kind) and len(parts) == 4 and DATA_FILE.fullmatch(parts[3]):
        return PathWriter(txn_id=int(parts[3].split("-", 1)[0]))
    if kind == CONVERSION_STAGING:
        return PathWriter(shadow_index_id=int(index.group(1)), staging="/".join(parts[:3]))
    attempt = {COMPACTION_STAGING: COMPACTION_DIR, LOAD_STAGING: LOAD_DIR}.get(kind)
    if attempt is not None and len(parts) > 4 and (found := attempt.fullmatch(parts[3])):
        return PathWriter(txn_id=int(found.group(1)), staging="/".join(parts[:4]))
    return None


def table_dir(table_id: int) -> str:
    return f"t{int(table_id)}"


def index_dir(table_id: int, index_id: int) -> str:
    return f"{table_dir(table_id)}/i{int(index_id)}"


SEQ_DIGITS = 24  # a file's sequence in its name, zero-padded so that names sort by it


def data_file_path(table_id: int, index_id: int, tablet_id: int, txn_id: int, seq: int = 0) -> str:
    """A new file's path relative to the warehouse: `<txn>-<seq, 24 digits>-<uuid>.parquet`.

    `seq` orders the files one transaction writes into one tablet (a streaming load writes a
    tablet's rows in several files): between rows of the same primary key and transaction, the
    row of the file whose name sorts last wins (alterflow.read.evolved_read)."""
    return f"{index_dir(table_id, index_id)}/b{int(tablet_id)}/{int(txn_id)}-{int(seq):0{SEQ_DIGITS}d}-{uuid.uuid4().hex}.parquet"


def absolute(warehouse: pathlib.Path, relative: str) -> pathlib.Path:
    """A catalog path under the warehouse's root, refusing anything that would leave it.

    Only the root is resolved (a symlinked warehouse root keeps working); the path below it is
    joined as written, never through a link's target: a link inside the warehouse is the link
    (docs/gc.md, "Links are not followed")."""
    parts = pathlib.PurePosixPath(relative).parts
    if not parts or parts[0] == "/" or ".." in parts:
        raise ValueError(f"path {relative!r} is outside the warehouse")
    return _resolved_root(warehouse).joinpath(*parts)


@dataclass(frozen=True)
class FileSource:
    """Where a reader opens a data file: a local path (no `filesystem`), or an object's key and the
    pyarrow file system of its store."""

    path: str
    filesystem: object | None = None

    def parquet(self):
        """The file as a `pyarrow.parquet.ParquetFile` (closed by its `close`: it opened the file)."""
        import pyarrow.parquet as pq

        return pq.ParquetFile(self.path, filesystem=self.filesystem)


@singledispatch
def file_source(warehouse, relative: str) -> FileSource:
    """The `FileSource` of a catalog path in a warehouse (a folder, or an `ObjectStoreLocation`)."""
    return FileSource(str(absolute(pathlib.Path(warehouse), relative)))


@file_source.register
def _(warehouse: ObjectStoreLocation, relative: str) -> FileSource:
    return FileSource(warehouse.key(relative), warehouse.filesystem)


_ROOTS: dict[pathlib.Path, pathlib.Path] = {}


def _resolved_root(warehouse: pathlib.Path) -> pathlib.Path:
    """The warehouse root with its links resolved, cached (a query's reader asks per file)."""
    root = _ROOTS.get(warehouse)
    if root is None:
        root = pathlib.Path(warehouse).resolve()
        if len(_ROOTS) < 64:
            _ROOTS[warehouse] = root
    return root


class LinkInWarehouse(UserError):
    """A folder a write would go through is a symbolic link (or not a folder)."""


def writable(warehouse: pathlib.Path, relative: str) -> pathlib.Path:
    """`absolute`, its folders made, after checking that none of the folders below the root is a
    symbolic link: a write never lands at a link's target (another table's folder, a path outside
    the warehouse)."""
    path = absolute(warehouse, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    root = _resolved_root(warehouse)
    folder = path.parent
    while folder != root:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise LinkInWarehouse(
                f"{folder.relative_to(root)} in warehouse {root} is a symbolic link or not a folder: alterflow writes through no link"
            )
        folder = folder.parent
    return path


def conversion_staging_path(table_id: int, shadow_index_id: int, tablet_id: int, attempt: str) -> str:
    """A tablet's conversion output before it moves into place: one folder per runner (`attempt`),
    so a runner that lost its lease never touches its successor's files."""
    return f"{index_dir(table_id, shadow_index_id)}/{CONVERSION_STAGING}/o{int(tablet_id)}-{attempt}"


def compaction_staging_path(table_id: int, index_id: int, txn_id: int) -> str:
    return f"{index_dir(table_id, index_id)}/{COMPACTION_STAGING}/x{int(txn_id)}"


def load_staging_path(table_id: int, index_id: int, txn_id: int) -> str:
    """A Spark load's task output before it moves into the tablets."""
    return f"{index_dir(table_id, index_id)}/{LOAD_STAGING}/l{int(txn_id)}"
