"""Splitting rows into tablets (partition value x hash bucket) and writing one Parquet file each."""

from __future__ import annotations

import json
import pathlib
from collections import defaultdict
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from alterflow.store.layout import absolute
from alterflow.types import bucket_of, format_value
from catalog.schema import SchemaVersion

# Hidden columns carry a "$", which no user-typed name can (SPEC §9), so they never collide.
TXN_COLUMN = "af$txn"  # hidden column of primary-key tables: the transaction that wrote the row


def partition_key(values: tuple, version: SchemaVersion) -> str:
    """Canonical text of a row's partition values (the tablet's partition key)."""
    types = [version.column_by_id(cid).type for cid in version.partition_by]
    return json.dumps([None if v is None else format_value(v, t) for v, t in zip(values, types)])


@dataclass(frozen=True)
class TabletSlice:
    key: tuple[str, int]  # (partition key, bucket)
    rows: pa.Table


def split_into_tablets(data: pa.Table, version: SchemaVersion) -> list[TabletSlice]:
    """Group rows by (partition key, bucket); row order inside a group is kept."""
    n = data.num_rows
    if n == 0:
        return []
    part_names = version.names(version.partition_by)
    hash_ids = version.distributed_by
    hash_types = tuple(version.column_by_id(cid).type for cid in hash_ids)
    if not part_names and (not hash_ids or version.buckets == 1):
        return [TabletSlice((partition_key((), version), 0), data)]
    parts = list(zip(*(data.column(name).to_pylist() for name in part_names))) if part_names else [()] * n
    if hash_ids and version.buckets > 1:
        hash_values = zip(*(data.column(name).to_pylist() for name in version.names(hash_ids)))
        buckets = [bucket_of(values, hash_types, version.buckets) for values in hash_values]
    else:
        buckets = [0] * n
    groups: dict[tuple[tuple, int], list[int]] = defaultdict(list)
    for row, (part, bucket) in enumerate(zip(parts, buckets)):
        groups[(part, bucket)].append(row)
    return [
        TabletSlice((partition_key(part, version), bucket), data.take(pa.array(rows, type=pa.int64())))
        for (part, bucket), rows in groups.items()
    ]


def dedupe_primary_key(data: pa.Table, version: SchemaVersion) -> pa.Table:
    """Within one load, the last row of each primary key wins (as if loaded one after another)."""
    if not version.primary_key or data.num_rows == 0:
        return data
    keys = zip(*(data.column(name).to_pylist() for name in version.names(version.primary_key)))
    last: dict[tuple, int] = {}
    for row, key in enumerate(keys):
        last[key] = row
    if len(last) == data.num_rows:
        return data
    return data.take(pa.array(sorted(last.values()), type=pa.int64()))


def with_txn_column(data: pa.Table, txn_id: int) -> pa.Table:
    return data.append_column(pa.field(TXN_COLUMN, pa.int64(), nullable=False), pa.array([txn_id] * data.num_rows, pa.int64()))


def write_parquet(warehouse: pathlib.Path, relative: str, data: pa.Table) -> int:
    """Write one data file (field ids come from the schema's field metadata); returns its size."""
    path = absolute(warehouse, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(data, tmp, compression="snappy")
    tmp.replace(path)
    return path.stat().st_size
