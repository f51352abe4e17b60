"""alterflow.store.tablets without a catalog: the vectorised `split_into_tablets` (`tablet_rows`'s slices) equals the plain
row-by-row definition (partition key text x `bucket_of`, groups in order of their first row, rows in
input order), on partitioned and bucketed versions and on sliced and chunked input;
`dedupe_primary_key` keeps the last row of each key, in input order."""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alterflow.bucketing import bucket_of
from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.store.tablets import TabletSlice, dedupe_primary_key, partition_key, tablet_rows
from alterflow.values.types import parse_type

COLUMNS = (
    Column(1, "id", parse_type("BIGINT"), nullable=False),
    Column(2, "region", parse_type("VARCHAR(8)"), nullable=False),
    Column(3, "day", parse_type("DATE")),
    Column(4, "amount", parse_type("DECIMAL(20,2)")),
    Column(5, "note", parse_type("STRING")),
    Column(6, "seq", parse_type("INT"), nullable=False),
)
ARROW_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("region", pa.string()),
        ("day", pa.date32()),
        ("amount", pa.decimal128(20, 2)),
        ("note", pa.string()),
        ("seq", pa.int32()),
    ]
)


def _version(partition_by=(), distributed_by=(), buckets=1, primary_key=()) -> SchemaVersion:
    return SchemaVersion(1, 1, COLUMNS, primary_key=primary_key, partition_by=partition_by, distributed_by=distributed_by, buckets=buckets)


def _rows(count: int, seed: int = 7) -> pa.Table:
    rng = random.Random(seed)
    days = [dt.date(1969, 12, 31), dt.date(2024, 1, 1), dt.date(2024, 1, 2), None]
    notes = ["", "a", "é", "日本語", None, "abcdefg"]
    return pa.table(
        {
            "id": [rng.randint(-5, 40) for _ in range(count)],
            "region": [rng.choice(["eu", "us", "ap"]) for _ in range(count)],
            "day": [rng.choice(days) for _ in range(count)],
            "amount": [rng.choice([None, Decimal(rng.randint(-(10**6), 10**6)).scaleb(-2)]) for _ in range(count)],
            "note": [rng.choice(notes) for _ in range(count)],
            "seq": list(range(count)),
        },
        schema=ARROW_SCHEMA,
    )


def _split_row_by_row(data: pa.Table, version: SchemaVersion) -> list[tuple[tuple[str, int], list[int]]]:
    """The definition: each row's partition key text and bucket, groups in order of first row."""
    part_names = version.names(version.partition_by)
    hash_names = version.names(version.distributed_by)
    hash_types = tuple(version.column_by_id(cid).type for cid in version.distributed_by)
    groups: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, row in enumerate(data.to_pylist()):
        part = partition_key(tuple(row[name] for name in part_names), version)
        bucketed = hash_names and version.buckets > 1
        bucket = bucket_of(tuple(row[name] for name in hash_names), hash_types, version.buckets) if bucketed else 0
        groups[(part, bucket)].append(i)
    return list(groups.items())


def _assert_split_as_defined(data: pa.Table, version: SchemaVersion) -> list[TabletSlice]:
    slices = split_into_tablets(data, version)
    expected = _split_row_by_row(data, version)
    assert [s.key for s in slices] == [key for key, _ in expected]
    flat = data.combine_chunks()
    for piece, (key, rows) in zip(slices, expected):
        assert piece.rows.schema == data.schema
        assert piece.rows.to_pylist() == flat.take(rows).to_pylist(), key
    return slices


VERSIONS = {
    "partitioned and bucketed": _version(partition_by=(2, 3), distributed_by=(1,), buckets=7),
    "bucketed by two columns": _version(distributed_by=(1, 5), buckets=16),
    "bucketed by a decimal and a date": _version(distributed_by=(4, 3), buckets=5),
    "partitioned only": _version(partition_by=(3,)),
    "partitioned by a decimal, one bucket": _version(partition_by=(4,), distributed_by=(1,), buckets=1),
    "bucketed, two buckets": _version(distributed_by=(6,), buckets=2),
}


@pytest.mark.parametrize("name", list(VERSIONS))
def test_split_equals_the_row_by_row_definition(name):
    version = VERSIONS[name]
    slices = _assert_split_as_defined(_rows(300), version)
    assert sum(s.rows.num_rows for s in slices) == 300
    for piece in slices:
        seq = piece.rows.column("seq").to_pylist()
        assert seq == sorted(seq)  # input order kept inside a tablet


def test_split_of_partitioned_and_bucketed_rows_spans_many_tablets():
    slices = _assert_split_as_defined(_rows(400), VERSIONS["partitioned and bucketed"])
    parts = {s.key[0] for s in slices}
    assert parts == {
        partition_key((r, d), VERSIONS["partitioned and bucketed"])
        for r in ("eu", "us", "ap")
        for d in (dt.date(1969, 12, 31), dt.date(2024, 1, 1), dt.date(2024, 1, 2), None)
    }
    assert {s.key[1] for s in slices} == set(range(7))
    assert '["eu", null]' in parts  # a NULL partition value is a partition of its own


@pytest.mark.parametrize("name", list(VERSIONS))
def test_split_of_sliced_and_chunked_input(name):
    version = VERSIONS[name]
    data = _rows(500, seed=11)
    _assert_split_as_defined(data.slice(37, 301), version)
    chunked = pa.Table.from_batches(data.slice(3, 400).to_batches(max_chunksize=57))
    assert chunked.column("id").num_chunks > 1
    _assert_split_as_defined(chunked, version)


def test_split_without_partitions_or_buckets_is_one_slice_of_everything():
    data = _rows(20)
    for version in (_version(), _version(distributed_by=(1,), buckets=1)):
        assert split_into_tablets(data, version) == [TabletSlice(("[]", 0), data)]
    assert split_into_tablets(data.slice(0, 0), _version(partition_by=(2,), distributed_by=(1,), buckets=4)) == []


def test_split_into_one_tablet_returns_the_rows_as_they_are():
    data = _rows(50).filter(pc.equal(pc.field("region"), "eu"))
    version = _version(partition_by=(2,))
    assert split_into_tablets(data, version) == [TabletSlice(('["eu"]', 0), data)]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-3, 3), st.sampled_from(["eu", "us"]), st.sampled_from([None, "x", "é"])), max_size=60),
    st.sampled_from([1, 2, 3, 8]),
)
def test_split_matches_the_definition_on_generated_rows(rows, buckets):
    data = pa.table(
        {
            "id": [r[0] for r in rows],
            "region": [r[1] for r in rows],
            "day": [None] * len(rows),
            "amount": [None] * len(rows),
            "note": [r[2] for r in rows],
            "seq": list(range(len(rows))),
        },
        schema=ARROW_SCHEMA,
    )
    _assert_split_as_defined(data, _version(partition_by=(2, 5), distributed_by=(1,), buckets=buckets))


# --------------------------------------------------------------------------------------------
# dedupe_primary_key
# --------------------------------------------------------------------------------------------


def _dedupe_row_by_row(data: pa.Table, names: list[str]) -> list[dict]:
    rows = data.to_pylist()
    last = {tuple(row[name] for name in names): i for i, row in enumerate(rows)}
    return [rows[i] for i in sorted(last.values())]


def test_dedupe_keeps_the_last_row_of_each_key_in_input_order():
    data = pa.table(
        {
            "id": [1, 2, 1, 3, 2, 1, 4],
            "region": ["eu", "eu", "us", "eu", "eu", "eu", "us"],
            "day": [None] * 7,
            "amount": [None] * 7,
            "note": ["a", "b", "c", "d", "e", "f", "g"],
            "seq": list(range(7)),
        },
        schema=ARROW_SCHEMA,
    )
    result = dedupe_primary_key(data, _version(primary_key=(1, 2)))
    # (1, eu) last at 5, (2, eu) last at 4, (1, us) at 2, (3, eu) at 3, (4, us) at 6.
    assert result.column("seq").to_pylist() == [2, 3, 4, 5, 6]
    assert result.column("note").to_pylist() == ["c", "d", "e", "f", "g"]
    result = dedupe_primary_key(data, _version(primary_key=(1,)))
    assert result.column("seq").to_pylist() == [3, 4, 5, 6]


@pytest.mark.parametrize("primary_key", [(1,), (1, 2), (2, 1, 6), (5, 1)])
def test_dedupe_equals_the_row_by_row_definition(primary_key):
    data = _rows(400, seed=3)
    version = _version(primary_key=primary_key)
    names = version.names(primary_key)
    expected = _dedupe_row_by_row(data, names)
    assert dedupe_primary_key(data, version).to_pylist() == expected
    chunked = pa.Table.from_batches(data.to_batches(max_chunksize=33))
    assert dedupe_primary_key(chunked, version).to_pylist() == expected
    sliced = data.slice(50, 200)
    assert dedupe_primary_key(sliced, version).to_pylist() == _dedupe_row_by_row(sliced, names)


def test_dedupe_without_duplicates_or_key_returns_the_rows_unchanged():
    data = _rows(30)
    assert dedupe_primary_key(data, _version(primary_key=(6,))) is data  # seq is unique
    assert dedupe_primary_key(data, _version()) is data
    empty = data.slice(0, 0)
    assert dedupe_primary_key(empty, _version(primary_key=(1,))) is empty


def _changed(version: SchemaVersion, column_id: int, type_text: str, **changes) -> SchemaVersion:
    import dataclasses

    columns = tuple(dataclasses.replace(c, type=parse_type(type_text)) if c.id == column_id else c for c in version.columns)
    return dataclasses.replace(version, version=version.version + 1, columns=columns, **changes)


def test_same_tablets_when_no_partition_or_distribution_column_changes():
    from alterflow.store.tablets import same_tablets

    old = _version(partition_by=(2,), distributed_by=(1, 3), buckets=4)
    assert same_tablets(old, _changed(old, 6, "BIGINT"))
    assert same_tablets(old, _changed(old, 5, "VARCHAR(3)"))
    assert not same_tablets(old, _changed(old, 1, "LARGEINT"))  # a distribution column's type: its hash
    assert not same_tablets(old, _changed(old, 2, "STRING"))  # a partition column's type
    assert not same_tablets(old, _changed(old, 6, "BIGINT", buckets=8))
    assert not same_tablets(old, _changed(old, 6, "BIGINT", distributed_by=(1,)))


def test_a_dual_writes_converted_rows_fall_as_the_origin_rows_when_tablets_are_alike():
    """The split of the origin rows, applied to the converted rows, is the split of the converted
    rows themselves: what lets a dual write split a batch once."""
    from alterflow.conversion.arrow_convert import convert_arrow
    from alterflow.store.tablets import same_tablets, tablet_rows

    old = _version(partition_by=(2,), distributed_by=(1, 3), buckets=5, primary_key=(1, 2))
    new = _changed(old, 6, "BIGINT")
    assert same_tablets(old, new)
    data = _rows(3000)
    converted = convert_arrow(data, old, new, "fail").table
    shared = tablet_rows(data, old).slices(converted)
    own = split_into_tablets(converted, new)
    assert [s.key for s in shared] == [s.key for s in own]
    assert all(a.rows.equals(b.rows) for a, b in zip(shared, own))


def split_into_tablets(data: pa.Table, version) -> list[TabletSlice]:
    """`data`'s rows by tablet: what a load writes, tablet by tablet."""
    return tablet_rows(data, version).slices(data)
