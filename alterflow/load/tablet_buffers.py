"""Rows of one load waiting to become files, one buffer per tablet of an index.

A streaming load adds batch after batch; a tablet whose buffer reaches the target file size is
flushed at once, and the load flushes the largest buffer when all of them together pass its memory
budget. A flush hands the tablet's rows to `on_file` as one file's content: primary keys
deduplicated (the last row wins) and rows sorted by the sort key. The same buffers serve a local
load (alterflow.load.local_load) and each task of a Spark load (alterflow.load.spark_load)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa

from alterflow.catalog.schema import SchemaVersion
from alterflow.store.tablets import TabletRows, dedupe_primary_key, tablet_rows

TabletKey = tuple[str, int]  # (partition key, bucket)
OnFile = Callable[[TabletKey, int, pa.Table], None]  # (tablet, sequence of its file in this load, rows)


def sorted_rows(data: pa.Table, version: SchemaVersion) -> pa.Table:
    """`data` in sort-key order, NULLs first: the order Spark's ascending sort gives (and Doris's),
    so files the local engines and Spark write are ordered alike."""
    if not version.sort_key or data.num_rows < 2:
        return data
    return data.sort_by([(name, "ascending", "at_start") for name in version.names(version.sort_key)])


@dataclass
class _Buffer:
    parts: list[pa.Table] = field(default_factory=list)
    nbytes: int = 0
    files: int = 0  # files flushed so far: the next file's sequence


class TabletBuffers:
    def __init__(self, version: SchemaVersion, target_bytes: int, on_file: OnFile, first_seq: int = 0):
        self.version = version
        self.target_bytes = target_bytes
        self.on_file = on_file
        self.first_seq = first_seq
        self.buffers: dict[TabletKey, _Buffer] = {}
        self.nbytes = 0
        self.rows_flushed = 0

    def add(self, data: pa.Table, tablets: TabletRows | None = None) -> TabletRows:
        """Buffer `data`'s rows by tablet (`tablets`: how they fall, when already known); returns
        how they fell."""
        if tablets is None:
            tablets = tablet_rows(data, self.version)
        for piece in tablets.slices(data):
            buffer = self.buffers.get(piece.key)
            if buffer is None:
                buffer = self.buffers[piece.key] = _Buffer()
            buffer.parts.append(piece.rows)
            buffer.nbytes += piece.rows.nbytes
            self.nbytes += piece.rows.nbytes
            if buffer.nbytes >= self.target_bytes:
                self.flush(piece.key)
        return tablets

    def largest(self) -> int:
        return max((b.nbytes for b in self.buffers.values()), default=0)

    def flush_largest(self) -> None:
        key = max(self.buffers, key=lambda k: self.buffers[k].nbytes)
        self.flush(key)

    def flush(self, key: TabletKey) -> None:
        buffer = self.buffers[key]
        if not buffer.parts:
            return
        rows = pa.concat_tables(buffer.parts) if len(buffer.parts) > 1 else buffer.parts[0]
        self.nbytes -= buffer.nbytes
        buffer.parts, buffer.nbytes = [], 0
        rows = sorted_rows(dedupe_primary_key(rows, self.version), self.version)
        seq = self.first_seq + buffer.files
        buffer.files += 1
        self.rows_flushed += rows.num_rows
        self.on_file(key, seq, rows)

    def flush_all(self) -> None:
        for key in list(self.buffers):
            self.flush(key)
