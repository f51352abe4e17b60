"""alterflow.store.thrift_compact: every wire type decodes and encodes back to the same bytes,
real Parquet footers (pyarrow's, every alterflow type) included, and bad bytes raise ThriftError."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.store import thrift_compact as tc
from alterflow.store.thrift_compact import Struct, ThriftError, ThriftList, ThriftMap, decode_struct, encode_struct


def footer_bytes(data: bytes) -> bytes:
    length = int.from_bytes(data[-8:-4], "little")
    return data[-8 - length : -8]


def test_every_wire_type_round_trips():
    inner = Struct({1: (tc.I32, -7), 2: (tc.TRUE, False)})
    value = Struct(
        {
            1: (tc.TRUE, True),
            2: (tc.TRUE, False),
            3: (tc.BYTE, -128),
            4: (tc.I16, -32768),
            5: (tc.I32, 2**31 - 1),
            6: (tc.I64, -(2**63)),
            7: (tc.DOUBLE, 2.5),
            8: (tc.BINARY, b"\x00\xffname"),
            9: (tc.LIST, ThriftList(tc.I64, list(range(-20, 20)))),  # 15 elements or more: a long list header
            10: (tc.LIST, ThriftList(tc.TRUE, [True, False, True])),
            11: (tc.SET, ThriftList(tc.BINARY, [b"a", b"b"], is_set=True)),
            12: (tc.MAP, ThriftMap(tc.BINARY, tc.STRUCT, [(b"k", inner)])),
            13: (tc.MAP, ThriftMap(0, 0, [])),
            40: (tc.STRUCT, inner),  # a field id jump over 15: the long field header
            32000: (tc.LIST, ThriftList(tc.STRUCT, [inner, Struct()])),
        }
    )
    encoded = encode_struct(value)
    decoded, end = decode_struct(encoded)
    assert end == len(encoded)
    assert decoded == value
    assert encode_struct(decoded) == encoded


def test_fields_out_of_order_keep_their_order():
    value = Struct({5: (tc.I32, 1), 2: (tc.I32, 2), -3: (tc.BINARY, b"x")})
    decoded, _ = decode_struct(encode_struct(value))
    assert list(decoded.fields) == [5, 2, -3]
    assert decoded == value


def test_set_places_a_new_field_by_id_and_needs_its_type():
    value = Struct({1: (tc.I32, 1), 9: (tc.I32, 9)})
    value.set(4, 4, tc.I64)
    assert list(value.fields) == [1, 4, 9]
    value.set(9, 10)
    assert value.get(9) == 10 and value.fields[9][0] == tc.I32
    with pytest.raises(KeyError):
        value.set(12, 3)


def every_type_table(rows: int) -> pa.Table:
    ids = np.arange(rows)
    mask = ids % 5 == 0
    return pa.table(
        {
            "b": pa.array(ids % 2 == 0, mask=mask),
            "i8": pa.array((ids % 100).astype(np.int8), mask=mask),
            "i16": pa.array(ids.astype(np.int16)),
            "i32": pa.array(ids.astype(np.int32), mask=mask),
            "i64": pa.array(ids * 10**12),
            "large": pa.array([i * 10**20 for i in range(rows)], pa.decimal128(38, 0)),
            "f": pa.array(ids.astype(np.float32) / 3, mask=mask),
            "d": pa.array(ids / 7),
            "dec": pa.array([None if i % 3 else i for i in range(rows)], pa.decimal128(20, 2)),
            "s": pa.array([f"é{i}" for i in range(rows)]),
            "day": pa.array(ids.astype("datetime64[D]")),
            "ts": pa.array(ids.astype("datetime64[us]"), mask=mask),
        }
    )


@pytest.mark.parametrize("options", [{}, {"use_dictionary": False, "compression": "none"}, {"row_group_size": 70}])
def test_pyarrow_footers_round_trip_byte_for_byte(options):
    sink = io.BytesIO()
    pq.write_table(every_type_table(200), sink, **options)
    footer = footer_bytes(sink.getvalue())
    decoded, end = decode_struct(footer)
    assert end == len(footer)
    assert encode_struct(decoded) == footer


@pytest.mark.parametrize("data", [b"", b"\x15", b"\x18\x05ab", b"\x19\x2c", b"\x1d", b"\x16\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"])
def test_bad_bytes_raise_thrift_error(data):
    with pytest.raises(ThriftError):
        decode_struct(data)
