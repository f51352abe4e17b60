"""convert_arrow (the pyarrow side of a heavyweight ALTER), without Spark: each family's good,
boundary and failing values, both on_cast_error modes, and the shape of the result (added,
dropped, renamed, reordered columns, defaults, extras, field ids)."""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal as D

import pyarrow as pa
import pytest

from alterflow.arrow_schema import FIELD_ID_KEY, arrow_schema
from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.conversion.arrow_convert import ArrowConversion, CastFailure, convert_arrow
from alterflow.values.cast_rules import (
    FLOAT32_MAX,
    can_fail,
    family,
    java_double_to_string,
    java_float_to_string,
    round_to_float32,
)
from alterflow.values.types import parse_type, to_arrow

FAIL = object()  # the expected outcome of a value that cannot be converted


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _versions(old_text: str, new_text: str) -> tuple[SchemaVersion, SchemaVersion]:
    old = SchemaVersion(1, 1, (Column(1, "v", parse_type(old_text)),))
    new = SchemaVersion(1, 2, (Column(1, "w", parse_type(new_text)),))
    return old, new


def _column(values: list, type_text: str) -> pa.Array:
    t = parse_type(type_text)
    if t.name == "LARGEINT":
        values = [None if v is None else D(v) for v in values]
    return pa.array(values, type=to_arrow(t))


def _convert(old_text: str, new_text: str, values: list, mode: str = "fail", **kwargs) -> ArrowConversion:
    old, new = _versions(old_text, new_text)
    return convert_arrow(pa.table({"v": _column(values, old_text)}), old, new, on_cast_error=mode, **kwargs)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, D) and isinstance(b, D):
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return type(a) is type(b) and a == b


# (old type, new type, source value, expected value or FAIL)
CASES = [
    # STRING -> integers: trimmed ASCII whitespace, optional sign, digits only, in range
    ("STRING", "INT", "42", 42),
    ("STRING", "INT", " -7 ", -7),
    ("STRING", "INT", "+0", 0),
    ("STRING", "INT", "-0", 0),
    ("STRING", "INT", "007", 7),
    ("STRING", "INT", "\t12\n", 12),
    ("STRING", "INT", "\x0b\x0c12\r\n", 12),
    ("STRING", "INT", "2147483647", 2147483647),
    ("STRING", "INT", "-2147483648", -2147483648),
    ("STRING", "INT", "2147483648", FAIL),
    ("STRING", "INT", "-2147483649", FAIL),
    ("STRING", "INT", "1.5", FAIL),
    ("STRING", "INT", "1.0", FAIL),
    ("STRING", "INT", "1e3", FAIL),
    ("STRING", "INT", "", FAIL),
    ("STRING", "INT", "  ", FAIL),
    ("STRING", "INT", "abc", FAIL),
    ("STRING", "INT", "12a", FAIL),
    ("STRING", "INT", "1 2", FAIL),
    ("STRING", "INT", "+-1", FAIL),
    ("STRING", "INT", "-", FAIL),
    ("STRING", "INT", "0x1F", FAIL),
    ("STRING", "INT", "\uff11\uff12", FAIL),
    ("STRING", "INT", "\u0661", FAIL),
    ("STRING", "INT", "\u00a012", FAIL),
    ("STRING", "INT", "12\u2028", FAIL),
    ("STRING", "TINYINT", "127", 127),
    ("STRING", "TINYINT", "-128", -128),
    ("STRING", "TINYINT", "128", FAIL),
    ("STRING", "SMALLINT", "-32769", FAIL),
    ("STRING", "SMALLINT", "0032767", 32767),
    ("STRING", "BIGINT", "9223372036854775807", 2**63 - 1),
    ("STRING", "BIGINT", "9223372036854775808", FAIL),
    ("STRING", "LARGEINT", "9" * 38, 10**38 - 1),
    ("STRING", "LARGEINT", "-" + "9" * 38, -(10**38) + 1),
    ("STRING", "LARGEINT", "9" * 39, FAIL),
    ("STRING", "LARGEINT", "0" * 50 + "5", 5),
    ("VARCHAR(10)", "INT", " 5 ", 5),
    ("CHAR(3)", "SMALLINT", "-12", -12),
    # STRING -> FLOAT / DOUBLE: decimal text, finite in the target
    ("STRING", "DOUBLE", "1.5", 1.5),
    ("STRING", "DOUBLE", " -2.5e3 ", -2500.0),
    ("STRING", "DOUBLE", ".5", 0.5),
    ("STRING", "DOUBLE", "5.", 5.0),
    ("STRING", "DOUBLE", "1E+10", 1e10),
    ("STRING", "DOUBLE", "-0", -0.0),
    ("STRING", "DOUBLE", "1e-400", 0.0),
    ("STRING", "DOUBLE", "1e400", FAIL),
    ("STRING", "DOUBLE", "-1e400", FAIL),
    ("STRING", "DOUBLE", "1.7976931348623157e308", 1.7976931348623157e308),
    ("STRING", "DOUBLE", "inf", FAIL),
    ("STRING", "DOUBLE", "Infinity", FAIL),
    ("STRING", "DOUBLE", "nan", FAIL),
    ("STRING", "DOUBLE", "NaN", FAIL),
    ("STRING", "DOUBLE", "0x10", FAIL),
    ("STRING", "DOUBLE", "1.5d", FAIL),
    ("STRING", "DOUBLE", "1,5", FAIL),
    ("STRING", "DOUBLE", ".", FAIL),
    ("STRING", "DOUBLE", "e5", FAIL),
    ("STRING", "DOUBLE", "1e", FAIL),
    ("STRING", "DOUBLE", "", FAIL),
    ("STRING", "DOUBLE", "1e99999999999999999999", FAIL),
    ("STRING", "DOUBLE", "0e99999999999999999999", 0.0),
    ("STRING", "FLOAT", "0.1", f32(0.1)),
    ("STRING", "FLOAT", "3.4028235e38", FLOAT32_MAX),
    ("STRING", "FLOAT", "3.4028236e38", FAIL),
    ("STRING", "FLOAT", "1e39", FAIL),
    ("STRING", "FLOAT", "1e-50", 0.0),
    ("STRING", "FLOAT", "-1e-50", -0.0),
    ("STRING", "FLOAT", "1e99999999999999999999", FAIL),
    # correctly rounded from the text (no double rounding through a double)
    ("STRING", "FLOAT", "1.00000005960464477539062500000000001", f32(1.0000001192092896)),
    ("STRING", "FLOAT", "1.000000059604644775390625", 1.0),
    # STRING -> DECIMAL: rounded HALF_UP, integer digits must fit
    ("STRING", "DECIMAL(5,2)", "1.005", D("1.01")),
    ("STRING", "DECIMAL(5,2)", "-1.005", D("-1.01")),
    ("STRING", "DECIMAL(5,2)", "1.0049", D("1.00")),
    ("STRING", "DECIMAL(5,2)", " 999.994 ", D("999.99")),
    ("STRING", "DECIMAL(5,2)", "999.995", FAIL),
    ("STRING", "DECIMAL(5,2)", "1e2", D("100.00")),
    ("STRING", "DECIMAL(5,2)", "1E3", FAIL),
    ("STRING", "DECIMAL(5,2)", "12345e-2", D("123.45")),
    ("STRING", "DECIMAL(5,2)", "-0.001", D("0.00")),
    ("STRING", "DECIMAL(5,2)", "0e999999999", D("0.00")),
    ("STRING", "DECIMAL(5,2)", "1e-999999999", D("0.00")),
    ("STRING", "DECIMAL(5,2)", "1e999999999", FAIL),
    ("STRING", "DECIMAL(5,2)", "abc", FAIL),
    ("STRING", "DECIMAL(5,2)", "", FAIL),
    ("STRING", "DECIMAL(5,2)", "1..5", FAIL),
    ("STRING", "DECIMAL(5,2)", "NaN", FAIL),
    ("STRING", "DECIMAL(38,0)", "9" * 38, D("9" * 38)),
    ("STRING", "DECIMAL(38,0)", "9" * 38 + ".5", FAIL),
    ("STRING", "DECIMAL(38,38)", "0.5", D("0.5" + "0" * 37)),
    ("STRING", "DECIMAL(38,38)", "1", FAIL),
    # STRING -> DATE: the six formats, real dates only
    ("STRING", "DATE", "2024-01-31", dt.date(2024, 1, 31)),
    ("STRING", "DATE", "2024-1-5", dt.date(2024, 1, 5)),
    ("STRING", "DATE", "24-01-31", dt.date(2024, 1, 31)),
    ("STRING", "DATE", "68-12-31", dt.date(2068, 12, 31)),
    ("STRING", "DATE", "69-01-01", dt.date(1969, 1, 1)),
    ("STRING", "DATE", "20240131", dt.date(2024, 1, 31)),
    ("STRING", "DATE", "240131", dt.date(2024, 1, 31)),
    ("STRING", "DATE", "990101", dt.date(1999, 1, 1)),
    ("STRING", "DATE", "2024/01/31", dt.date(2024, 1, 31)),
    ("STRING", "DATE", "24/1/5", dt.date(2024, 1, 5)),
    ("STRING", "DATE", " 2024-02-29\n", dt.date(2024, 2, 29)),
    ("STRING", "DATE", "2000-02-29", dt.date(2000, 2, 29)),
    ("STRING", "DATE", "2023-02-29", FAIL),
    ("STRING", "DATE", "1900-02-29", FAIL),
    ("STRING", "DATE", "2024-02-30", FAIL),
    ("STRING", "DATE", "2024-13-01", FAIL),
    ("STRING", "DATE", "2024-00-10", FAIL),
    ("STRING", "DATE", "2024-04-31", FAIL),
    ("STRING", "DATE", "0000-01-01", FAIL),
    ("STRING", "DATE", "0001-01-01", dt.date(1, 1, 1)),
    ("STRING", "DATE", "2024-01/31", FAIL),
    ("STRING", "DATE", "2024-001-01", FAIL),
    ("STRING", "DATE", "2401311", FAIL),
    ("STRING", "DATE", "2024-01-31T00:00", FAIL),
    ("STRING", "DATE", "2024.01.31", FAIL),
    ("STRING", "DATE", "", FAIL),
    ("STRING", "DATE", "31-01-2024", FAIL),
    ("VARCHAR(12)", "DATE", "000229", dt.date(2000, 2, 29)),
    # INT / BIGINT -> DATE: yyyymmdd
    ("INT", "DATE", 20240131, dt.date(2024, 1, 31)),
    ("INT", "DATE", 20240229, dt.date(2024, 2, 29)),
    ("INT", "DATE", 10000101, dt.date(1000, 1, 1)),
    ("INT", "DATE", 99991231, dt.date(9999, 12, 31)),
    ("INT", "DATE", 20230229, FAIL),
    ("INT", "DATE", 20241301, FAIL),
    ("INT", "DATE", 20240100, FAIL),
    ("INT", "DATE", 9991231, FAIL),
    ("INT", "DATE", -20240131, FAIL),
    ("INT", "DATE", 0, FAIL),
    ("BIGINT", "DATE", 19700101, dt.date(1970, 1, 1)),
    ("BIGINT", "DATE", 202401310, FAIL),
    ("BIGINT", "DATE", 2**63 - 1, FAIL),
    # DATETIME -> DATE: the date part
    ("DATETIME", "DATE", dt.datetime(2024, 1, 31, 23, 59, 59, 999999), dt.date(2024, 1, 31)),
    ("DATETIME", "DATE", dt.datetime(1969, 12, 31, 23, 0), dt.date(1969, 12, 31)),
    # numbers -> integers: integral and in range
    ("DOUBLE", "INT", 2.0, 2),
    ("DOUBLE", "INT", -0.0, 0),
    ("DOUBLE", "INT", 1.5, FAIL),
    ("DOUBLE", "INT", -0.5, FAIL),
    ("DOUBLE", "INT", 2147483647.0, 2147483647),
    ("DOUBLE", "INT", 2147483648.0, FAIL),
    ("DOUBLE", "INT", math.nan, FAIL),
    ("DOUBLE", "INT", math.inf, FAIL),
    ("DOUBLE", "BIGINT", -(2.0**63), -(2**63)),
    ("DOUBLE", "BIGINT", 2.0**63, FAIL),
    ("DOUBLE", "TINYINT", 127.0, 127),
    ("DOUBLE", "TINYINT", 128.0, FAIL),
    ("DOUBLE", "LARGEINT", 1e20, 10**20),
    ("DOUBLE", "LARGEINT", 1e38, FAIL),
    ("DOUBLE", "LARGEINT", 1e23, 99999999999999990000000),  # Spark: through Double.toString's digits
    ("FLOAT", "SMALLINT", f32(-32768.0), -32768),
    ("FLOAT", "SMALLINT", f32(0.5), FAIL),
    ("DECIMAL(10,2)", "INT", D("2.00"), 2),
    ("DECIMAL(10,2)", "INT", D("2.50"), FAIL),
    ("DECIMAL(10,2)", "INT", D("-0.01"), FAIL),
    ("DECIMAL(12,0)", "INT", D("2147483648"), FAIL),
    ("DECIMAL(38,5)", "LARGEINT", D("123.00000"), 123),
    ("BIGINT", "TINYINT", 127, 127),
    ("BIGINT", "TINYINT", 128, FAIL),
    ("BIGINT", "TINYINT", -129, FAIL),
    ("INT", "SMALLINT", -32768, -32768),
    ("LARGEINT", "BIGINT", 2**63 - 1, 2**63 - 1),
    ("LARGEINT", "BIGINT", 2**63, FAIL),
    # numbers -> DECIMAL: HALF_UP to the scale; doubles through Double.toString
    ("DOUBLE", "DECIMAL(5,2)", 1.005, D("1.01")),
    ("DOUBLE", "DECIMAL(5,2)", 0.125, D("0.13")),
    ("DOUBLE", "DECIMAL(5,2)", -0.125, D("-0.13")),
    ("DOUBLE", "DECIMAL(5,2)", 999.994, D("999.99")),
    ("DOUBLE", "DECIMAL(5,2)", 999.995, FAIL),
    ("DOUBLE", "DECIMAL(5,2)", -0.001, D("0.00")),
    ("DOUBLE", "DECIMAL(5,2)", math.nan, FAIL),
    ("DOUBLE", "DECIMAL(5,2)", -math.inf, FAIL),
    ("FLOAT", "DECIMAL(20,18)", f32(0.1), D("0.100000001490116120")),
    ("DECIMAL(10,4)", "DECIMAL(6,2)", D("1.2345"), D("1.23")),
    ("DECIMAL(10,4)", "DECIMAL(6,2)", D("1.2350"), D("1.24")),
    ("DECIMAL(10,4)", "DECIMAL(6,2)", D("-1.2350"), D("-1.24")),
    ("DECIMAL(10,4)", "DECIMAL(6,2)", D("9999.9949"), D("9999.99")),
    ("DECIMAL(10,4)", "DECIMAL(6,2)", D("9999.9950"), FAIL),
    ("INT", "DECIMAL(5,2)", 999, D("999.00")),
    ("INT", "DECIMAL(5,2)", 1000, FAIL),
    ("LARGEINT", "DECIMAL(20,0)", 10**20, FAIL),
    # numbers -> FLOAT / DOUBLE
    ("DOUBLE", "FLOAT", 0.1, f32(0.1)),
    ("DOUBLE", "FLOAT", FLOAT32_MAX, FLOAT32_MAX),
    ("DOUBLE", "FLOAT", 3.4028235677973362e38, FLOAT32_MAX),
    ("DOUBLE", "FLOAT", 3.4028235677973366e38, FAIL),
    ("DOUBLE", "FLOAT", -1e39, FAIL),
    ("DOUBLE", "FLOAT", 1e-50, 0.0),
    ("DOUBLE", "FLOAT", math.nan, FAIL),
    ("BIGINT", "FLOAT", 2**60 + 2**36 + 1, float(2**60 + 2**37)),
    ("BIGINT", "FLOAT", 2**24 + 1, float(2**24)),
    ("INT", "DOUBLE", 7, 7.0),
    ("BIGINT", "DOUBLE", 2**53 + 1, float(2**53)),
    ("LARGEINT", "DOUBLE", 10**38 - 1, 1e38),
    ("DECIMAL(10,1)", "FLOAT", D("0.1"), f32(0.1)),
    ("DECIMAL(10,1)", "DOUBLE", D("0.1"), 0.1),
    # numbers -> STRING / VARCHAR(n): Spark's CAST(x AS STRING)
    ("DOUBLE", "STRING", 1.0, "1.0"),
    ("DOUBLE", "STRING", 0.1, "0.1"),
    ("DOUBLE", "STRING", 1e10, "1.0E10"),
    ("DOUBLE", "STRING", 1e-5, "1.0E-5"),
    ("DOUBLE", "STRING", 0.001, "0.001"),
    ("DOUBLE", "STRING", 1e7, "1.0E7"),
    ("DOUBLE", "STRING", 1234567.0, "1234567.0"),
    ("DOUBLE", "STRING", -0.0, "-0.0"),
    ("DOUBLE", "STRING", 1e23, "9.999999999999999E22"),
    ("DOUBLE", "STRING", 2.82879384806159e17, "2.82879384806159008E17"),
    ("DOUBLE", "STRING", math.nan, "NaN"),
    ("DOUBLE", "STRING", -math.inf, "-Infinity"),
    ("DOUBLE", "STRING", 5e-324, "4.9E-324"),
    ("FLOAT", "STRING", f32(0.1), "0.1"),
    ("FLOAT", "STRING", f32(1.4e-45), "1.4E-45"),
    ("FLOAT", "STRING", FLOAT32_MAX, "3.4028235E38"),
    ("FLOAT", "STRING", f32(1e7), "1.0E7"),
    ("FLOAT", "STRING", f32(123.25), "123.25"),
    ("DOUBLE", "VARCHAR(5)", 1.5, "1.5"),
    ("DOUBLE", "VARCHAR(5)", 123456.0, FAIL),
    ("DECIMAL(10,2)", "VARCHAR(5)", D("1.50"), "1.50"),
    ("DECIMAL(10,2)", "VARCHAR(5)", D("123.45"), FAIL),
    ("DECIMAL(38,38)", "STRING", D("1E-38"), "1E-38"),
    ("DECIMAL(38,38)", "STRING", D(0), "0E-38"),
    ("DECIMAL(10,9)", "STRING", D("0.000000100"), "1.00E-7"),
    ("DECIMAL(10,2)", "STRING", D("-5"), "-5.00"),
    ("BIGINT", "VARCHAR(3)", 999, "999"),
    ("BIGINT", "VARCHAR(3)", -99, "-99"),
    ("BIGINT", "VARCHAR(3)", 1000, FAIL),
    ("LARGEINT", "STRING", 10**38 - 1, "9" * 38),
    ("TINYINT", "STRING", -128, "-128"),
    # lossless widenings
    ("INT", "BIGINT", -5, -5),
    ("SMALLINT", "LARGEINT", 300, 300),
    ("FLOAT", "DOUBLE", f32(0.1), f32(0.1)),
    ("DECIMAL(5,2)", "DECIMAL(7,3)", D("1.25"), D("1.250")),
    ("VARCHAR(3)", "STRING", "abc", "abc"),
    ("CHAR(2)", "VARCHAR(5)", "ab", "ab"),
    ("DATE", "DATETIME", dt.date(2024, 1, 31), dt.datetime(2024, 1, 31)),
]


@pytest.mark.parametrize("old_text,new_text,value,expected", CASES, ids=[f"{o}->{n}:{v!r}"[:80] for o, n, v, _ in CASES])
def test_value(old_text, new_text, value, expected):
    new_type = parse_type(new_text)
    fail = _convert(old_text, new_text, [value], "fail")
    null = _convert(old_text, new_text, [value], "null")
    got = null.table.column("w")[0].as_py()
    if new_type.name == "LARGEINT" and got is not None:
        got = int(got)
    assert null.failures == ()
    if expected is FAIL:
        assert got is None
        assert null.nulled == {"w": 1}
        shown = int(D(value)) if parse_type(old_text).name == "LARGEINT" else value
        assert len(fail.failures) == 1
        failure = fail.failures[0]
        assert (failure.column, failure.row) == ("w", 0)
        assert _same(failure.value, shown) or (isinstance(value, float) and math.isnan(value))
        assert can_fail(parse_type(old_text), new_type)
    else:
        assert _same(got, expected), (got, expected)
        assert null.nulled == {} and fail.failures == ()
        assert _same(fail.table.column("w")[0].as_py() if new_type.name != "LARGEINT" else int(fail.table.column("w")[0].as_py()), expected)


@pytest.mark.parametrize("old_text,new_text", sorted({(o, n) for o, n, _, _ in CASES}))
def test_null_is_never_a_failure(old_text, new_text):
    result = _convert(old_text, new_text, [None, None])
    assert result.table.column("w").to_pylist() == [None, None]
    assert result.failures == () and result.nulled == {}
    assert result.table.schema.field("w").type == to_arrow(parse_type(new_text))


def test_failures_report_column_value_and_row_in_row_order():
    old = SchemaVersion(1, 1, (Column(1, "a", parse_type("STRING")), Column(2, "b", parse_type("BIGINT"))))
    new = SchemaVersion(1, 2, (Column(2, "bb", parse_type("TINYINT")), Column(1, "aa", parse_type("INT"))))
    data = pa.table({"a": pa.array(["1", "x", None, "4", "2.5"]), "b": pa.array([1000, 2, 3, None, -200], pa.int64())})
    result = convert_arrow(data, old, new)
    assert result.failures == (
        CastFailure("bb", 1000, 0),
        CastFailure("aa", "x", 1),
        CastFailure("bb", -200, 4),
        CastFailure("aa", "2.5", 4),
    )
    assert result.nulled == {}
    nulled = convert_arrow(data, old, new, on_cast_error="null")
    assert nulled.failures == ()
    assert nulled.nulled == {"bb": 2, "aa": 2}
    assert nulled.table.column("aa").to_pylist() == [1, None, None, 4, None]
    assert nulled.table.column("bb").to_pylist() == [None, 2, 3, None, None]


def test_max_failures_keeps_the_first_ones():
    values = [str(i) if i % 3 else f"bad{i}" for i in range(100)]
    result = _convert("STRING", "INT", values, max_failures=5)
    assert [f.row for f in result.failures] == [0, 3, 6, 9, 12]
    assert [f.value for f in result.failures] == ["bad0", "bad3", "bad6", "bad9", "bad12"]
    assert _convert("STRING", "INT", values, "null").nulled == {"w": 34}


def test_chunked_input_rows_count_across_chunks():
    old, new = _versions("STRING", "SMALLINT")
    chunked = pa.chunked_array([pa.array(["1", "2"]), pa.array(["x", "40000"]), pa.array([], pa.string())])
    result = convert_arrow(pa.table({"v": chunked}), old, new)
    assert [(f.value, f.row) for f in result.failures] == [("x", 2), ("40000", 3)]


def test_empty_table():
    old, new = _versions("STRING", "DATE")
    result = convert_arrow(pa.table({"v": pa.array([], pa.string())}), old, new)
    assert result.table.num_rows == 0 and result.failures == ()
    assert result.table.schema == arrow_schema(new)


# --------------------------------------------------------------------------------------------
# Shape: columns matched by id, defaults, extras, field ids
# --------------------------------------------------------------------------------------------

OLD = SchemaVersion(
    7,
    3,
    (
        Column(1, "id", parse_type("BIGINT"), nullable=False),
        Column(2, "price", parse_type("STRING")),
        Column(3, "gone", parse_type("DOUBLE")),
        Column(4, "day", parse_type("INT")),
    ),
)
NEW = SchemaVersion(
    7,
    4,
    (
        Column(4, "day_date", parse_type("DATE")),  # renamed, moved first, INT -> DATE
        Column(1, "id", parse_type("BIGINT"), nullable=False),
        Column(9, "big", parse_type("LARGEINT"), initial_default=10**30, write_default=5),
        Column(10, "amount", parse_type("DECIMAL(10,2)"), initial_default=D("1.50")),
        Column(2, "price", parse_type("DECIMAL(6,2)"), nullable=False),
        Column(11, "note", parse_type("VARCHAR(10)")),  # no default: NULL
        Column(12, "at", parse_type("DATETIME"), initial_default=dt.datetime(2024, 1, 2, 3, 4, 5, 600000)),
        Column(13, "on", parse_type("DATE"), initial_default=dt.date(2020, 2, 29)),
        Column(14, "ratio", parse_type("FLOAT"), initial_default=f32(0.1)),
        Column(15, "flag", parse_type("BOOLEAN"), initial_default=True),
        Column(16, "label", parse_type("STRING"), initial_default="n/a"),
    ),
)


def _old_rows() -> pa.Table:
    return pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "price": pa.array([" 9.995", None, "12.5"]),
            "gone": pa.array([1.5, 2.5, None]),
            "day": pa.array([20240131, None, 20240230], pa.int32()),
            "__txn": pa.array([70, 70, 71], pa.int64()),
            "__op": pa.array(["I", "I", "U"]),
        }
    )


def test_columns_matched_by_id_with_defaults_and_extras():
    result = convert_arrow(_old_rows(), OLD, NEW, on_cast_error="null")
    table = result.table
    assert table.column_names == [c.name for c in NEW.columns] + ["__txn", "__op"]
    assert table.to_pylist() == [
        {
            "day_date": dt.date(2024, 1, 31),
            "id": 1,
            "big": D(10**30),
            "amount": D("1.50"),
            "price": D("10.00"),
            "note": None,
            "at": dt.datetime(2024, 1, 2, 3, 4, 5, 600000),
            "on": dt.date(2020, 2, 29),
            "ratio": f32(0.1),
            "flag": True,
            "label": "n/a",
            "__txn": 70,
            "__op": "I",
        },
        {
            "day_date": None,
            "id": 2,
            "big": D(10**30),
            "amount": D("1.50"),
            "price": None,
            "note": None,
            "at": dt.datetime(2024, 1, 2, 3, 4, 5, 600000),
            "on": dt.date(2020, 2, 29),
            "ratio": f32(0.1),
            "flag": True,
            "label": "n/a",
            "__txn": 70,
            "__op": "I",
        },
        {
            "day_date": None,
            "id": 3,
            "big": D(10**30),
            "amount": D("1.50"),
            "price": D("12.50"),
            "note": None,
            "at": dt.datetime(2024, 1, 2, 3, 4, 5, 600000),
            "on": dt.date(2020, 2, 29),
            "ratio": f32(0.1),
            "flag": True,
            "label": "n/a",
            "__txn": 71,
            "__op": "U",
        },
    ]
    assert result.nulled == {"day_date": 1}  # NULL in a NOT NULL column is not checked here
    failing = convert_arrow(_old_rows(), OLD, NEW)
    assert failing.failures == (CastFailure("day_date", 20240230, 2),)


def test_result_schema_has_field_ids_types_and_extras():
    table = convert_arrow(_old_rows(), OLD, NEW).table
    expected = arrow_schema(NEW)
    for field in expected:
        assert table.schema.field(field.name).equals(field, check_metadata=True)
    assert [table.schema.field(c.name).metadata[FIELD_ID_KEY] for c in NEW.columns] == [str(c.id).encode() for c in NEW.columns]
    assert table.schema.field("__txn").type == pa.int64() and table.schema.field("__txn").metadata is None
    assert table.schema.field("id").nullable is False
    assert table.schema.field("big").type == pa.decimal128(38, 0)


def test_names_match_case_insensitively():
    data = pa.table(
        {"ID": pa.array([1], pa.int64()), "Price": pa.array(["1"]), "GONE": pa.array([0.0]), "Day": pa.array([20000101], pa.int32())}
    )
    table = convert_arrow(data, OLD, NEW).table
    assert table.column("price").to_pylist() == [D("1.00")]
    assert table.column_names[-1] == "label"


def test_same_types_pass_through_unchanged():
    old = SchemaVersion(1, 1, (Column(1, "a", parse_type("VARCHAR(5)")), Column(2, "b", parse_type("DECIMAL(5,2)"))))
    new = SchemaVersion(1, 2, (Column(2, "b", parse_type("DECIMAL(5,2)")), Column(1, "c", parse_type("VARCHAR(5)"))))
    data = pa.table({"a": pa.array(["x", None]), "b": pa.array([D("1.25"), None], pa.decimal128(5, 2))})
    result = convert_arrow(data, old, new)
    assert result.table.to_pylist() == [{"b": D("1.25"), "c": "x"}, {"b": None, "c": None}]


@pytest.mark.parametrize(
    "old_text,new_text",
    [
        ("DATE", "INT"),
        ("STRING", "BOOLEAN"),
        ("BIGINT", "CHAR(5)"),
        ("DATETIME", "INT"),
        ("BOOLEAN", "INT"),
        ("STRING", "DATETIME"),
        ("SMALLINT", "DATE"),
        ("VARCHAR(10)", "VARCHAR(5)"),
    ],
)
def test_rejected_type_changes_raise(old_text, new_text):
    with pytest.raises(ValueError):
        _convert(old_text, new_text, [None])


def test_bad_arguments():
    old, new = _versions("STRING", "INT")
    with pytest.raises(ValueError, match="on_cast_error"):
        convert_arrow(pa.table({"v": pa.array(["1"])}), old, new, on_cast_error="ignore")
    with pytest.raises(ValueError, match="no column v"):
        convert_arrow(pa.table({"x": pa.array(["1"])}), old, new)


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


def test_families_and_can_fail():
    P = parse_type
    assert family(P("INT"), P("BIGINT")) == "widen"
    assert family(P("STRING"), P("DATE")) == "string_to_date"
    assert family(P("BIGINT"), P("DATE")) == "integer_to_date"
    assert family(P("DOUBLE"), P("VARCHAR(30)")) == "number_to_string"
    assert not can_fail(P("INT"), P("DOUBLE"))
    assert not can_fail(P("DECIMAL(38,10)"), P("FLOAT"))
    assert not can_fail(P("TINYINT"), P("VARCHAR(4)")) and can_fail(P("TINYINT"), P("VARCHAR(3)"))
    assert not can_fail(P("INT"), P("DECIMAL(10,0)")) and can_fail(P("INT"), P("DECIMAL(9,0)"))
    assert can_fail(P("DECIMAL(5,2)"), P("DECIMAL(4,1)")) and not can_fail(P("DECIMAL(5,2)"), P("DECIMAL(5,1)"))
    assert not can_fail(P("DATETIME"), P("DATE")) and can_fail(P("DOUBLE"), P("FLOAT"))


@pytest.mark.parametrize(
    "value,text",
    [
        (1.0, "1.0"),
        (0.1, "0.1"),
        (100.0, "100.0"),
        (1e7, "1.0E7"),
        (9999999.0, "9999999.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1e21, "1.0E21"),
        (123456789012.0, "1.23456789012E11"),
        (2.0**60, "1.15292150460684698E18"),
        (1e23, "9.999999999999999E22"),
        (2.82879384806159e17, "2.82879384806159008E17"),
        (5e-324, "4.9E-324"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (-2.5, "-2.5"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
    ],
)
def test_java_double_to_string(value, text):
    assert java_double_to_string(value) == text


@pytest.mark.parametrize(
    "value,text",
    [
        (f32(0.1), "0.1"),
        (f32(1e10), "1.0E10"),
        (f32(16777216.0), "1.6777216E7"),
        (f32(1.4e-45), "1.4E-45"),
        (f32(-3.25), "-3.25"),
        (-0.0, "-0.0"),
    ],
)
def test_java_float_to_string(value, text):
    assert java_float_to_string(value) == text


def test_round_to_float32_is_correctly_rounded():
    assert round_to_float32(2**60 + 2**36 + 1) == float(2**60 + 2**37)  # float(int) then float32 would round down
    assert round_to_float32(D("3.40282356779733661637539395458142568448e38")) == math.inf  # the tie rounds to even: inf
    assert round_to_float32(D("3.40282356779733661637539395458142568447e38")) == FLOAT32_MAX
    assert round_to_float32(D("7.006492321624085e-46")) == 0.0
    assert round_to_float32(D("7.0064923216240862e-46")) == f32(1.4e-45)
    assert math.copysign(1.0, round_to_float32(D("-0"))) == -1.0
