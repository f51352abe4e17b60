"""alterflow.store.column_splice: a file made from another's encoded chunks is byte for byte the
file pyarrow writes for the same table (changed, renamed, moved, added and dropped columns, NULLs,
every alterflow type, several row groups); what it cannot place makes `splice` answer None."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alterflow.arrow_schema import FIELD_ID_KEY
from alterflow.store.column_splice import EncodedFile, encode_parquet, splice
from alterflow.store.tablets import write_pieces


def field(name: str, arrow_type: pa.DataType, field_id: int | None, nullable: bool = True) -> pa.Field:
    metadata = None if field_id is None else {FIELD_ID_KEY: str(field_id).encode()}
    return pa.field(name, arrow_type, nullable=nullable, metadata=metadata)


def origin_table(rows: int) -> pa.Table:
    ids = np.arange(rows, dtype=np.int64)
    mask = ids % 5 == 0
    columns = [
        (field("id", pa.int64(), 1, nullable=False), pa.array(ids)),
        (field("flag", pa.bool_(), 2), pa.array(ids % 2 == 0, mask=mask)),
        (field("tiny", pa.int8(), 3), pa.array((ids % 100).astype(np.int8), mask=mask)),
        (field("grp", pa.int32(), 4), pa.array((ids % 7).astype(np.int32), mask=mask)),
        (field("big", pa.decimal128(38, 0), 5), pa.array([i * 10**20 for i in range(rows)], pa.decimal128(38, 0))),
        (field("ratio", pa.float64(), 6), pa.array(ids / 7)),
        (field("amount", pa.decimal128(20, 2), 7), pa.array([None if i % 3 else i for i in range(rows)], pa.decimal128(20, 2))),
        (field("name", pa.string(), 8), pa.array([f"名前{i}" for i in range(rows)], mask=mask)),
        (field("day", pa.date32(), 9), pa.array(ids.astype("datetime64[D]"))),
        (field("at", pa.timestamp("us"), 10), pa.array(ids.astype("datetime64[us]"), mask=mask)),
        (field("af$txn", pa.int64(), None, nullable=False), pa.array(np.full(rows, 7, dtype=np.int64))),
    ]
    return pa.Table.from_arrays([array for _f, array in columns], schema=pa.schema([f for f, _a in columns]))


def assert_spliced_equals_written(origin: pa.Table, target: pa.Table, row_groups=None) -> None:
    encoded = encode_parquet(origin, row_groups)
    pieces = splice(EncodedFile.parse(encoded), origin, target)
    assert pieces is not None
    spliced = b"".join(bytes(piece) for piece in pieces)
    assert spliced == encode_parquet(target, row_groups).to_pybytes()
    read = pq.read_table(io.BytesIO(spliced))
    assert read.equals(target) and read.schema.equals(target.schema, check_metadata=True)


def replace(table: pa.Table, name: str, new_field: pa.Field, values: pa.Array) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), new_field, values)


def test_a_narrowed_column_is_encoded_again_and_the_rest_taken_as_it_is():
    origin = origin_table(3000)
    target = replace(origin, "grp", field("grp", pa.int16(), 4), origin["grp"].cast(pa.int16()))
    assert_spliced_equals_written(origin, target)


def test_renamed_moved_added_and_dropped_columns():
    origin = origin_table(3000)
    target = replace(origin, "grp", field("group_no", pa.int64(), 4), origin["grp"].cast(pa.int64()))
    target = target.rename_columns(["id", "flag", "tiny", "group_no", "big", "ratio", "amount", "label", "day", "at", "af$txn"])
    target = target.drop_columns(["tiny", "big"])
    target = target.select(["label", "id", "at", "group_no", "flag", "ratio", "amount", "day", "af$txn"])
    target = target.add_column(2, field("added", pa.string(), 11), pa.array(["x"] * 3000))
    assert_spliced_equals_written(origin, target)


def test_a_column_made_not_null_is_encoded_again():
    origin = origin_table(500)
    target = replace(origin, "ratio", field("ratio", pa.float64(), 6, nullable=False), origin["ratio"])
    assert_spliced_equals_written(origin, target)


def test_several_row_groups():
    origin = origin_table(2500)
    target = replace(origin, "tiny", field("tiny", pa.int32(), 3), origin["tiny"].cast(pa.int32()))
    assert_spliced_equals_written(origin, target, [1000, 1000, 500])


def test_a_converted_column_of_the_same_arrow_type_is_encoded_again():
    """LARGEINT -> DECIMAL(38,0) keeps decimal128(38, 0): only the very same data is taken."""
    origin = origin_table(400)
    converted = pa.array([None if i % 2 else i for i in range(400)], pa.decimal128(38, 0))
    target = replace(origin, "big", field("big", pa.decimal128(38, 0), 5), converted)
    assert_spliced_equals_written(origin, target)
    pieces = splice(EncodedFile.parse(encode_parquet(origin)), origin, target)
    assert pq.read_table(io.BytesIO(b"".join(bytes(p) for p in pieces)))["big"].equals(target["big"])


def test_no_rows_answers_none():
    origin = origin_table(0)
    assert splice(EncodedFile.parse(encode_parquet(origin)), origin, origin) is None


def test_a_field_id_means_the_column_whatever_its_name():
    """A column that takes another's name but not its id (DROP v, ADD v) is not the old one."""
    origin = origin_table(400)
    target = origin.drop_columns(["name"]).append_column(field("name", pa.string(), 12), pa.array(["new"] * 400))
    assert_spliced_equals_written(origin, target)


@pytest.mark.parametrize("case", ["every column changes", "a nested column", "a page index", "schema metadata changes"])
def test_what_cannot_be_placed_answers_none(case):
    origin = origin_table(300)
    target = origin
    write = {}
    if case == "every column changes":
        target = pa.table({"other": pa.array(range(300))})
    elif case == "a nested column":
        origin = origin.append_column(field("tags", pa.list_(pa.string()), 20), pa.array([["a"]] * 300))
        target = origin
    elif case == "a page index":
        write = {"write_page_index": True}
    else:
        target = origin.replace_schema_metadata({"k": "v"})
    sink = io.BytesIO()
    pq.write_table(origin, sink, **write)
    assert splice(EncodedFile.parse(sink.getvalue()), origin, target) is None


def test_not_a_parquet_file():
    with pytest.raises(ValueError, match="not a Parquet file"):
        EncodedFile.parse(b"PAR1 and more")


def test_write_pieces_writes_through_a_temporary_name(tmp_path):
    path = tmp_path / "a" / "f.parquet"
    assert write_pieces(path, [b"ab", memoryview(b"cd"), pa.py_buffer(b"e")]) == 5
    assert path.read_bytes() == b"abcde"
    assert [p.name for p in path.parent.iterdir()] == ["f.parquet"]


TYPES = {
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "string": (pa.string(), st.text(max_size=12)),
    "double": (pa.float64(), st.floats(allow_nan=False)),
    "date": (pa.date32(), st.dates()),
    "bool": (pa.bool_(), st.booleans()),
}


@st.composite
def origin_and_target(draw):
    rows = draw(st.integers(1, 60))
    names = draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=1, max_size=6))
    fields, arrays = [], []
    for number, type_name in enumerate(names):
        arrow_type, values = TYPES[type_name]
        nullable = draw(st.booleans())
        data = draw(st.lists(values if not nullable else st.none() | values, min_size=rows, max_size=rows))
        fields.append(field(f"c{number}", arrow_type, number + 1, nullable))
        arrays.append(pa.array(data, arrow_type))
    origin = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    target_fields, target_arrays = [], []
    taken = 0  # columns passed through, whose chunks the splice takes
    for number in draw(st.permutations(range(len(names)))):
        if draw(st.integers(0, 4)) == 0:
            continue  # dropped
        kept = origin.schema.field(number)
        values = origin.column(number)
        change = draw(st.sampled_from(["keep", "rename", "to string"]))
        if change == "rename":
            kept = kept.with_name(f"renamed{number}")
        elif change == "to string":
            values = values.cast(pa.string()) if values.type != pa.string() else pa.chunked_array([pa.array(values.to_pylist())])
            kept = kept.with_type(pa.string())
        taken += change != "to string"
        target_fields.append(kept)
        target_arrays.append(values)
    if draw(st.booleans()) or not target_fields:
        target_fields.append(field("added", pa.int64(), 99))
        target_arrays.append(pa.array([None] * rows, pa.int64()))
    target = pa.Table.from_arrays(target_arrays, schema=pa.schema(target_fields))
    groups = draw(st.sampled_from([None, [rows], [rows // 2, rows - rows // 2] if rows > 1 else [rows]]))
    return origin, target, groups, taken


@settings(max_examples=150, deadline=None)
@given(origin_and_target())
def test_any_change_gives_the_file_pyarrow_writes(case):
    origin, target, groups, taken = case
    encoded = encode_parquet(origin, groups)
    pieces = splice(EncodedFile.parse(encoded), origin, target)
    expected = encode_parquet(target, groups).to_pybytes()
    assert (pieces is None) == (taken == 0)  # None only when no column chunk can be taken
    if pieces is not None:
        assert b"".join(bytes(piece) for piece in pieces) == expected
