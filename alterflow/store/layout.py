"""Where files live. Paths are built from ids only; no user-typed name ever becomes a path."""

from __future__ import annotations

import pathlib
import uuid


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
    """Resolve a catalog path, refusing anything that would leave the warehouse."""
    root = warehouse.resolve()
    path = (root / relative).resolve()
    if root != path and root not in path.parents:
        raise ValueError(f"path {relative!r} is outside the warehouse")
    return path
