"""alterflow.bucketing without Spark: Spark's Murmur3 `hash()` over Arrow columns (`hash_array`,
`bucket_array`) equals the one-row Python rule (`hash_of`, `bucket_of`), and both equal values that
real Spark printed (the Spark-side comparison on generated data is in tests/values/test_types_spark.py)."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from decimal import Context, Decimal

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alterflow.bucketing import bucket_array, bucket_of, hash_array, hash_of
from alterflow.values.types import DataType, InvalidType, parse_type, to_arrow

T = parse_type
BUCKET_COUNTS = (1, 2, 7, 16)
_EXACT = Context(prec=100)

# Printed by Spark 4 (`SELECT hash(...)`), the source of truth the Python and Arrow paths must match.
SPARK_HASHES = [
    ((1,), ("INT",), -559580957),
    ((None,), ("INT",), 42),
    ((True,), ("BOOLEAN",), -559580957),
    ((False,), ("BOOLEAN",), 933211791),
    ((-1,), ("TINYINT",), -1604776387),
    ((1,), ("BIGINT",), -1712319331),
    ((-(2**63),), ("BIGINT",), -853646085),
    ((Decimal("1.50"),), ("DECIMAL(9,2)",), -2056712946),
    ((Decimal("-12345678901234.5678"),), ("DECIMAL(18,4)",), 1466772144),
    ((Decimal("1.5000000000"),), ("DECIMAL(38,10)",), -994477761),
    ((Decimal("-1"),), ("DECIMAL(19,0)",), 1398487324),
    ((10**38 - 1,), ("LARGEINT",), -817514053),
    ((-(2**63) - 1,), ("LARGEINT",), -1667168926),
    ((2**64,), ("LARGEINT",), 1074617613),
    (("",), ("STRING",), 142593372),
    (("a",), ("VARCHAR(5)",), 1485273170),
    (("abc",), ("CHAR(3)",), 1322437556),
    (("abcd",), ("STRING",), -396302900),
    (("abcdefg",), ("STRING",), 2132013596),
    (("é",), ("STRING",), 2119106806),
    (("日本語",), ("STRING",), -1143049834),
    (("😀x",), ("STRING",), -1814635023),
    ((dt.date(1969, 12, 31),), ("DATE",), -1604776387),
    ((dt.date(2024, 1, 1),), ("DATE",), -456589419),
    ((dt.datetime(1969, 12, 31, 23, 59, 59, 999999),), ("DATETIME",), -939490007),
    ((dt.datetime(2024, 1, 1, 10, 0, 0, 120000),), ("DATETIME",), -1773273414),
    ((1, "abc"), ("INT", "STRING"), -1267584506),
    ((None, "abc"), ("INT", "STRING"), 1322437556),
    ((True, None, dt.date(2024, 1, 1)), ("BOOLEAN", "STRING", "DATE"), -1696242369),
]


def _array(values: list, t: DataType) -> pa.Array:
    """An Arrow column in `t`'s storage type (LARGEINT is decimal128(38,0): pyarrow wants Decimals)."""
    if t.name == "LARGEINT":
        values = [None if v is None else Decimal(v) for v in values]
    return pa.array(values, to_arrow(t))


def _rows_by_python(rows: list[tuple], types: tuple[DataType, ...], buckets: int) -> list[int]:
    return [bucket_of(row, types, buckets) for row in rows]


def _rows_by_arrow(rows: list[tuple], types: tuple[DataType, ...], buckets: int) -> list[int]:
    columns = [_array(list(values), t) for values, t in zip(zip(*rows), types)] if rows else [_array([], t) for t in types]
    return bucket_array(columns, types, buckets).tolist()


# --------------------------------------------------------------------------------------------
# Known Spark values
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("values, type_texts, spark_hash", SPARK_HASHES)
def test_hash_equals_what_spark_printed(values, type_texts, spark_hash):
    types = tuple(T(x) for x in type_texts)
    assert hash_of(values, types) == spark_hash
    columns = [_array([v], t) for v, t in zip(values, types)]
    assert hash_array(columns, types).tolist() == [spark_hash]
    for buckets in BUCKET_COUNTS:
        assert bucket_of(values, types, buckets) == spark_hash % buckets  # Spark's pmod
        assert bucket_array(columns, types, buckets).tolist() == [spark_hash % buckets]


def test_bucket_is_pmod_of_the_signed_hash():
    t = (T("INT"),)
    assert hash_of((1,), t) == -559580957
    assert bucket_of((1,), t, 7) == 2 and bucket_array([pa.array([1], pa.int32())], t, 7).tolist() == [2]
    assert bucket_of((1,), t, 16) == 3 and bucket_array([pa.array([1], pa.int32())], t, 16).tolist() == [3]
    assert bucket_of((1,), t, 2**32) == 2**32 - 559580957
    assert bucket_array([pa.array([1], pa.int32())], t, 2**32).tolist() == [2**32 - 559580957]


# --------------------------------------------------------------------------------------------
# Arrow equals Python, on generated values of every distribution type
# --------------------------------------------------------------------------------------------


def _integers(bits: int) -> st.SearchStrategy:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return st.one_of(st.sampled_from([low, low + 1, -1, 0, 1, high - 1, high]), st.integers(low, high))


def _large_integers() -> st.SearchStrategy:
    top = 10**38 - 1
    edges = [top, -top, 0, -1, 1, 127, 128, -128, -129, 255, 256]
    edges += [s * (2**e + d) for e in (31, 32, 63, 64, 95, 96, 120, 126) for d in (-1, 0, 1) for s in (1, -1)]
    return st.one_of(st.sampled_from(edges), st.integers(-top, top))


def _decimals(precision: int, scale: int) -> st.SearchStrategy:
    top = 10**precision - 1
    units = st.one_of(st.sampled_from([top, -top, 0, 1, -1]), st.integers(-top, top), st.integers(-999, 999))
    return units.map(lambda u: Decimal(u).scaleb(-scale, _EXACT))


def _strings() -> st.SearchStrategy:
    edges = ["", "a", "ab", "abc", "abcd", "abcde", "abcdefg", "abcdefgh", "é", "ñandú", "😀", "日本語", "x" * 1000]
    return st.one_of(st.sampled_from(edges), st.text(max_size=40))


VALUE_STRATEGIES = {
    "BOOLEAN": st.booleans(),
    "TINYINT": _integers(8),
    "SMALLINT": _integers(16),
    "INT": _integers(32),
    "BIGINT": _integers(64),
    "LARGEINT": _large_integers(),
    "DECIMAL(9,2)": _decimals(9, 2),
    "DECIMAL(18,4)": _decimals(18, 4),
    "DECIMAL(18,0)": _decimals(18, 0),
    "DECIMAL(19,0)": _decimals(19, 0),
    "DECIMAL(38,10)": _decimals(38, 10),
    "DECIMAL(38,38)": _decimals(38, 38),
    "CHAR(3)": _strings(),
    "VARCHAR(20)": _strings(),
    "STRING": _strings(),
    "DATE": st.dates(),
    "DATETIME": st.datetimes(),
}


@pytest.mark.parametrize("type_text", list(VALUE_STRATEGIES))
def test_arrow_buckets_equal_python_buckets(type_text):
    t = T(type_text)

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.none() | VALUE_STRATEGIES[type_text], max_size=30))
    def check(values):
        rows = [(v,) for v in values]
        assert hash_array([_array(values, t)], (t,)).tolist() == [hash_of(row, (t,)) for row in rows]
        for buckets in BUCKET_COUNTS:
            assert _rows_by_arrow(rows, (t,), buckets) == _rows_by_python(rows, (t,), buckets)

    check()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from(list(VALUE_STRATEGIES)), min_size=2, max_size=4).flatmap(
        lambda texts: st.tuples(
            st.just(tuple(texts)),
            st.lists(st.tuples(*[st.none() | VALUE_STRATEGIES[x] for x in texts]), max_size=20),
        )
    )
)
def test_multi_column_arrow_buckets_equal_python_buckets(key):
    texts, rows = key
    types = tuple(T(x) for x in texts)
    for buckets in BUCKET_COUNTS:
        assert _rows_by_arrow(rows, types, buckets) == _rows_by_python(rows, types, buckets)


def test_null_keeps_the_running_hash():
    int_, text = T("INT"), T("STRING")
    assert hash_of((None,), (int_,)) == 42
    assert hash_of((None, None), (int_, text)) == 42
    assert hash_of((None, "abc"), (int_, text)) == hash_of(("abc",), (text,))
    assert hash_array([pa.nulls(3, pa.int32()), pa.nulls(3, pa.string())], (int_, text)).tolist() == [42] * 3


# --------------------------------------------------------------------------------------------
# Array shapes: sliced, chunked, large_string, other storage types, empty
# --------------------------------------------------------------------------------------------

SHAPE_CASES = {
    "BOOLEAN": [True, False, None, True, True, False, None, False, True, False, True] * 3,
    "SMALLINT": [1, -1, None, 300, -32768, 32767, 0, 7, None, 12, 13] * 3,
    "BIGINT": [1, -1, None, 2**63 - 1, -(2**63), 0, 2**32, 7, None, 12, 13] * 3,
    "DECIMAL(9,2)": [Decimal("1.50"), None, Decimal("-0.01"), Decimal("9999999.99"), Decimal("0.00")] * 6,
    "LARGEINT": [0, -1, None, 10**38 - 1, -(10**38) + 1, 2**64, -(2**63), 127, 128, -129] * 3,
    "STRING": ["", "a", None, "abcd", "abcdefg", "é", "😀x", "日本語", "x" * 100, "ab", "abc"] * 3,
    "DATE": [dt.date(1969, 12, 31), None, dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(2024, 2, 29)] * 6,
    "DATETIME": [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), None, dt.datetime(2024, 1, 1, 10, 0, 0, 5)] * 10,
}


@pytest.mark.parametrize("type_text", list(SHAPE_CASES))
def test_sliced_and_chunked_arrays_hash_like_whole_ones(type_text):
    t = T(type_text)
    values = SHAPE_CASES[type_text]
    whole = _array(values, t)
    expected = [hash_of((v,), (t,)) for v in values]
    assert hash_array([whole], (t,)).tolist() == expected
    for start, stop in ((1, 7), (3, 30), (5, 6), (9, 9), (0, len(values))):
        assert hash_array([whole.slice(start, stop - start)], (t,)).tolist() == expected[start:stop], (start, stop)
    chunked = pa.chunked_array([whole.slice(0, 5), whole.slice(5, 0), whole.slice(5, 13), whole.slice(18)])
    assert hash_array([chunked], (t,)).tolist() == expected
    assert bucket_array([chunked], (t,), 7).tolist() == [h % 7 for h in expected]


def test_chunk_boundaries_may_differ_between_key_columns():
    types = (T("INT"), T("STRING"))
    ints = list(range(-5, 15))
    texts = [f"v{i}é" if i % 3 else None for i in range(20)]
    expected = [bucket_of(row, types, 16) for row in zip(ints, texts)]
    left = pa.chunked_array([pa.array(ints[:3], pa.int32()), pa.array(ints[3:], pa.int32())])
    right = pa.chunked_array([pa.array(texts[:11]), pa.array(texts[11:17]), pa.array(texts[17:])])
    assert bucket_array([left, right], types, 16).tolist() == expected


def test_large_string_and_other_storage_types_are_accepted():
    texts = ["", "abc", None, "日本語", "abcde"]
    as_string = bucket_array([pa.array(texts, pa.string())], (T("STRING"),), 16).tolist()
    assert bucket_array([pa.array(texts, pa.large_string())], (T("STRING"),), 16).tolist() == as_string
    assert as_string == [bucket_of((v,), (T("STRING"),), 16) for v in texts]
    # An int64 column keyed as INT is cast first, as spark_bucket_expr casts to the column's type.
    assert bucket_array([pa.array([1, -7, None], pa.int64())], (T("INT"),), 16).tolist() == [
        bucket_of((v,), (T("INT"),), 16) for v in (1, -7, None)
    ]


def test_empty_columns_have_no_buckets():
    result = bucket_array([pa.array([], pa.int64()), pa.array([], pa.string())], (T("BIGINT"), T("STRING")), 4)
    assert result.tolist() == []


def test_bad_keys_are_rejected():
    for t in (T("DOUBLE"), T("FLOAT")):
        with pytest.raises(InvalidType):
            bucket_of((1.5,), (t,), 4)
        with pytest.raises(InvalidType):
            bucket_array([pa.array([1.5])], (t,), 4)
    with pytest.raises(ValueError):
        bucket_of((1,), (T("INT"),), 0)
    with pytest.raises(ValueError):
        bucket_array([pa.array([1], pa.int32())], (T("INT"),), 0)
    with pytest.raises(ValueError):
        bucket_of((1, 2), (T("INT"),), 4)
    with pytest.raises(ValueError):
        bucket_array([pa.array([1], pa.int32()), pa.array([1, 2], pa.int32())], (T("INT"), T("INT")), 4)


def test_bucketing_does_not_import_pyspark():
    code = (
        "import sys, pyarrow as pa\n"
        "from alterflow.values.types import parse_type\n"
        "from alterflow.bucketing import bucket_array, bucket_of\n"
        "bucket_array([pa.array(['x'])], (parse_type('STRING'),), 4); bucket_of((1,), (parse_type('INT'),), 4)\n"
        "assert not any(m == 'pyspark' or m.startswith('pyspark.') for m in sys.modules), 'pyspark'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
