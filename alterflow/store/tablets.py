"""Splitting rows into tablets (partition value x hash bucket) and writing one Parquet file each.

Loads carry up to millions of rows, so splitting and primary-key deduplication work on whole Arrow
columns (dictionary encoding, Arrow's hash grouping, numpy sorts), never row by row in Python."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import singledispatch

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from alterflow.bucketing import bucket_array
from alterflow.catalog.schema import SchemaVersion
from alterflow.crash_points import crash_point
from alterflow.object_store import ObjectStoreLocation
from alterflow.store.layout import TXN_COLUMN, writable
from alterflow.values.types import format_value

# Hidden columns carry a "$", which no user-typed name can (docs/semantics.md, "Bad input"), so they never collide.
_ROW_COLUMN = "af$row"  # scratch column of dedupe_primary_key: the row's position in the load


def partition_key(values: tuple, version: SchemaVersion) -> str:
    """Canonical text of a row's partition values (the tablet's partition key)."""
    types = [version.column_by_id(cid).type for cid in version.partition_by]
    return json.dumps([None if v is None else format_value(v, t) for v, t in zip(values, types)])


@dataclass(frozen=True)
class TabletSlice:
    key: tuple[str, int]  # (partition key, bucket)
    rows: pa.Table


@dataclass(frozen=True)
class TabletRows:
    """Which rows of a batch go to which tablet: (key, row numbers) per tablet, in order of their
    first row; `rows` None means every row, in order (a batch that falls into one tablet)."""

    groups: list[tuple[tuple[str, int], np.ndarray | None]]

    def slices(self, data: pa.Table) -> list[TabletSlice]:
        """`data` cut by these groups. Each slice owns its memory (its own `take`, not a view of a
        shared one), so a buffered slice never pins the rest of the load. Also for another table
        row for row equal to the one grouped (a dual write's converted rows)."""
        return [TabletSlice(key, data if rows is None else data.take(pa.array(rows))) for key, rows in self.groups]


def tablet_rows(data: pa.Table, version: SchemaVersion) -> TabletRows:
    """Group rows by (partition key, bucket); row order inside a group is kept, and the groups come
    in the order of their first row.

    Each row gets a partition number (the partition columns dictionary-encoded) and a bucket
    (`bucket_array`); one stable sort by (partition, bucket) puts every tablet's rows next to each
    other in input order, and each tablet takes its run of that order. The partition key text is
    built once per distinct partition, from one representative row."""
    n = data.num_rows
    if n == 0:
        return TabletRows([])
    part_names = version.names(version.partition_by)
    bucketed = bool(version.distributed_by) and version.buckets > 1
    if not part_names and not bucketed:
        return TabletRows([((partition_key((), version), 0), None)])
    parts = _group_numbers(data, part_names) if part_names else np.zeros(n, dtype=np.int64)
    buckets = _buckets(data, version) if bucketed else np.zeros(n, dtype=np.int64)
    width = version.buckets if bucketed else 1
    groups = parts * width + buckets
    order = _stable_order(groups)
    sorted_groups = groups[order]
    starts = np.concatenate(([0], np.flatnonzero(sorted_groups[1:] != sorted_groups[:-1]) + 1))
    ends = np.append(starts[1:], n)
    first_rows = order[starts]
    texts = _partition_texts(data, part_names, parts[first_rows], first_rows, version)
    keys = [(texts[int(g) // width], int(g) % width) for g in sorted_groups[starts]]
    if len(keys) == 1:
        return TabletRows([(keys[0], None)])
    return TabletRows([(keys[i], order[starts[i] : ends[i]]) for i in np.argsort(first_rows, kind="stable")])


def _types_kept(old: SchemaVersion, new: SchemaVersion, column_ids) -> bool:
    """Whether each of these columns of `old` is in `new` with the same type."""
    for column_id in column_ids:
        after = new.column_by_id(column_id)
        if after is None or old.column_by_id(column_id).type != after.type:
            return False
    return True


def same_tablets(old: SchemaVersion, new: SchemaVersion) -> bool:
    """Whether every row falls into the same tablet under both versions, its values converted from
    `old` to `new`: the same partition and distribution columns, of the same types, in the same
    number of buckets (a column whose type stays is copied as it is)."""
    if (old.partition_by, old.distributed_by, old.buckets) != (new.partition_by, new.distributed_by, new.buckets):
        return False
    return _types_kept(old, new, (*old.partition_by, *old.distributed_by))


def same_files(old: SchemaVersion, new: SchemaVersion) -> bool:
    """Whether a file of `old` converted to `new` is already `new`'s file for the same rows: the
    same tablets (`same_tablets`), the same primary key and the same sort key, of the same types
    (so the rows deduplicate and sort alike)."""
    if not same_tablets(old, new) or (old.primary_key, old.sort_key) != (new.primary_key, new.sort_key):
        return False
    return _types_kept(old, new, (*old.primary_key, *old.sort_key))


def _buckets(data: pa.Table, version: SchemaVersion) -> np.ndarray:
    columns = [data.column(name) for name in version.names(version.distributed_by)]
    types = tuple(version.column_by_id(cid).type for cid in version.distributed_by)
    return bucket_array(columns, types, version.buckets)


def _group_numbers(data: pa.Table, names: list[str]) -> np.ndarray:
    """A number per row, equal for rows with equal values in `names` (NULL equals NULL), dense
    from 0 in order of first appearance: dictionary encoding, one column after another."""
    numbers = None
    for name in names:
        column = data.column(name)
        encoded = pc.dictionary_encode(column.combine_chunks(), null_encoding="encode")
        codes = encoded.indices.to_numpy().astype(np.int64)
        numbers = codes if numbers is None else _dense(numbers * len(encoded.dictionary) + codes)
    return numbers


def _dense(numbers: np.ndarray) -> np.ndarray:
    """Renumber 0..k-1 by first appearance, so combining one more column cannot overflow."""
    return pc.dictionary_encode(pa.array(numbers)).indices.to_numpy().astype(np.int64)


def _stable_order(groups: np.ndarray) -> np.ndarray:
    """Row numbers sorted by group, input order kept within a group. A load usually spans few
    tablets: group numbers below 2**16 sort as uint16, which numpy sorts by radix (linear time)."""
    top = int(groups.max())
    if top < 1 << 16:
        groups = groups.astype(np.uint16)
    elif top < 1 << 32:
        groups = groups.astype(np.uint32)
    return np.argsort(groups, kind="stable")


def _partition_texts(
    data: pa.Table, names: list[str], part_numbers: np.ndarray, rows: np.ndarray, version: SchemaVersion
) -> dict[int, str]:
    """The canonical key text of each partition number, from one row of it (`rows[i]` has partition
    `part_numbers[i]`), so Python sees one row per distinct partition, not one per loaded row."""
    if not names:
        return {0: partition_key((), version)}
    distinct, where = np.unique(part_numbers, return_index=True)
    sample = data.select(names).take(pa.array(rows[where]))
    values = zip(*(column.to_pylist() for column in sample.columns))
    return {int(p): partition_key(tuple(row), version) for p, row in zip(distinct, values)}


def dedupe_primary_key(data: pa.Table, version: SchemaVersion) -> pa.Table:
    """Within one load, the last row of each primary key wins (as if loaded one after another);
    the survivors keep their input order.

    Arrow's hash grouping finds each key's largest row position, its last row. Primary keys
    never hold NULL."""
    if not version.primary_key or data.num_rows == 0:
        return data
    n = data.num_rows
    names = version.names(version.primary_key)
    if len(names) == 1:
        survivors = _last_of_each_number(data.column(names[0]))
        if survivors is not None:
            return data if len(survivors) == n else data.take(pa.array(survivors))
    positions = pa.array(np.arange(n, dtype=np.int64))
    keyed = data.select(names).append_column(_ROW_COLUMN, positions)
    last = keyed.group_by(names, use_threads=False).aggregate([(_ROW_COLUMN, "max")])
    if last.num_rows == n:
        return data
    survivors = np.sort(last.column(f"{_ROW_COLUMN}_max").to_numpy())
    return data.take(pa.array(survivors))


def _last_of_each_number(keys: pa.ChunkedArray) -> np.ndarray | None:
    """Positions of the last row of each key, in input order, for a single integer or date key
    (None for other types): a sort, far cheaper than hash grouping, and nothing at all when the
    keys arrive strictly increasing (as ids in a file usually do)."""
    if not (pa.types.is_integer(keys.type) or pa.types.is_date(keys.type) or pa.types.is_timestamp(keys.type)):
        return None
    values = keys.combine_chunks().to_numpy(zero_copy_only=False)
    if len(values) < 2 or bool(np.all(values[1:] > values[:-1])):
        return np.arange(len(values))
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    last = np.ones(len(values), dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]  # the last of a run of equal keys is its latest row
    return np.sort(order[last])


def with_txn_column(data: pa.Table, txn_id: int) -> pa.Table:
    txn = pa.array(np.full(data.num_rows, txn_id, dtype=np.int64))
    return data.append_column(pa.field(TXN_COLUMN, pa.int64(), nullable=False), txn)


DICTIONARY_SAMPLE_ROWS = 8192
DICTIONARY_MAX_DISTINCT = 0.5  # share of distinct values in the sample above which a column is written plain


def dictionary_columns(data: pa.Table) -> list[str]:
    """The columns worth dictionary encoding: those with few distinct values in a sample of the
    rows. Parquet writers try a dictionary for every column and fall back once it grows too big;
    for ids and free text that attempt is wasted work."""
    sample = data.slice(0, DICTIONARY_SAMPLE_ROWS)
    if sample.num_rows == 0:
        return []
    chosen = []
    for name, column in zip(sample.column_names, sample.columns):
        if pa.types.is_boolean(column.type):
            continue
        distinct = pc.count_distinct(column, mode="all").as_py()
        if distinct <= DICTIONARY_MAX_DISTINCT * sample.num_rows:
            chosen.append(name)
    return chosen


def write_options(data: pa.Table) -> dict:
    """pq.write_table's options for every data file alterflow writes."""
    return {"compression": "snappy", "use_dictionary": dictionary_columns(data)}


@singledispatch
def write_parquet(warehouse: pathlib.Path, relative: str, data: pa.Table) -> int:
    """Write one data file (field ids come from the schema's field metadata), whole or not at all
    (docs/storage.md); returns its size."""
    return write_parquet_file(writable(warehouse, relative), data)


@write_parquet.register
def _(warehouse: ObjectStoreLocation, relative: str, data: pa.Table) -> int:
    sink = pa.BufferOutputStream()
    pq.write_table(data, sink, **write_options(data))
    return _upload(warehouse, relative, sink.getvalue())


def _upload(warehouse: ObjectStoreLocation, relative: str, data) -> int:
    """Upload a whole file's bytes. pyarrow completes an upload whenever its stream closes, an
    exception's unwinding included, so the bytes go in one call, which no Python exception (a
    signal's) can cut: the object is whole, or (a killed process) absent. Returns its size."""
    with warehouse.filesystem.open_output_stream(warehouse.key(relative), metadata={}) as out:
        out.write(data)
        crash_point("object_uploading")  # handed over, not yet complete (the parts upload in the background)
    return len(data)


def write_pieces(path: pathlib.Path, pieces: Sequence[memoryview | bytes | pa.Buffer]) -> int:
    """Write a local file's bytes through a temporary name, so it appears whole or not at all;
    returns its size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as out:
        for piece in pieces:
            out.write(piece)
        out.flush()
        os.fdatasync(out.fileno())  # on the writer's thread; the commit's flush then finds it clean
    crash_point("file_writing")
    tmp.replace(path)
    return path.stat().st_size


@singledispatch
def write_encoded(warehouse: pathlib.Path, relative: str, pieces: Sequence[memoryview | bytes | pa.Buffer]) -> int:
    """Write a data file from its encoded bytes (alterflow.store.column_splice), whole or not at
    all; returns its size."""
    return write_pieces(writable(warehouse, relative), pieces)


@write_encoded.register
def _(warehouse: ObjectStoreLocation, relative: str, pieces: Sequence[memoryview | bytes | pa.Buffer]) -> int:
    return _upload(warehouse, relative, pieces[0] if len(pieces) == 1 else b"".join(pieces))


def flush_data(path: pathlib.Path) -> None:
    """fdatasync a file just written (its data and size, not its timestamps)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


def write_parquet_file(path: pathlib.Path, data: pa.Table) -> int:
    """`write_parquet` to an absolute path (a conversion's staging folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(data, tmp, **write_options(data))
    flush_data(tmp)  # on the writer's thread (loads write on several): the commit's flush then finds it clean
    crash_point("file_writing")
    tmp.replace(path)
    return path.stat().st_size
