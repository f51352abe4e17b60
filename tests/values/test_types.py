"""alterflow.values.types without Spark: parsing, conversion classes (docs/semantics.md), coercion, storage, text."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import subprocess
import sys
from decimal import Decimal

import pyarrow as pa
import pytest

from alterflow.bucketing import bucket_of
from alterflow.sql.ast import Literal
from alterflow.values.types import (
    Change,
    DataType,
    InvalidType,
    InvalidValue,
    classify_conversion,
    coerce_literal,
    coerce_value,
    decode_value,
    encode_value,
    format_value,
    parse_type,
    to_arrow,
)

T = parse_type


# --------------------------------------------------------------------------------------------
# parse_type / DataType
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("BOOLEAN", DataType("BOOLEAN")),
        ("BOOL", DataType("BOOLEAN")),
        ("TINYINT", DataType("TINYINT")),
        ("SMALLINT", DataType("SMALLINT")),
        ("INT", DataType("INT")),
        ("INTEGER", DataType("INT")),
        ("BIGINT", DataType("BIGINT")),
        ("LARGEINT", DataType("LARGEINT")),
        ("FLOAT", DataType("FLOAT")),
        ("DOUBLE", DataType("DOUBLE")),
        ("DECIMAL(10,2)", DataType("DECIMAL", 10, 2)),
        ("DECIMAL( 10 , 2 )", DataType("DECIMAL", 10, 2)),
        ("DECIMAL(10)", DataType("DECIMAL", 10, 0)),
        ("DECIMAL", DataType("DECIMAL", 9, 0)),
        ("DECIMAL(38,38)", DataType("DECIMAL", 38, 38)),
        ("DECIMAL(1,0)", DataType("DECIMAL", 1, 0)),
        ("VARCHAR(20)", DataType("VARCHAR", length=20)),
        ("VARCHAR", DataType("VARCHAR", length=65533)),
        ("VARCHAR(65533)", DataType("VARCHAR", length=65533)),
        ("CHAR(3)", DataType("CHAR", length=3)),
        ("CHAR", DataType("CHAR", length=1)),
        ("CHAR(255)", DataType("CHAR", length=255)),
        ("STRING", DataType("STRING")),
        ("DATE", DataType("DATE")),
        ("DATETIME", DataType("DATETIME")),
        ("TIMESTAMP", DataType("DATETIME")),
        ("int", DataType("INT")),
    ],
)
def test_parse_type(text, expected):
    assert parse_type(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "DECIMAL(39,0)",
        "DECIMAL(0)",
        "DECIMAL(5,6)",
        "VARCHAR(0)",
        "VARCHAR(65534)",
        "CHAR(0)",
        "CHAR(256)",
        "FOO",
        "",
        "INT(11)",
        "STRING(10)",
        "DATETIME(3)",
        "DECIMAL(10,2,1)",
        "VARCHAR(2,1)",
        "DECIMAL(-1,0)",
        "ARRAY<INT>",
    ],
)
def test_parse_type_invalid(text):
    with pytest.raises(InvalidType) as info:
        parse_type(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("INT", "INT"),
        ("INTEGER", "INT"),
        ("DECIMAL(10,2)", "DECIMAL(10,2)"),
        ("DECIMAL", "DECIMAL(9,0)"),
        ("DECIMAL(7)", "DECIMAL(7,0)"),
        ("VARCHAR(20)", "VARCHAR(20)"),
        ("VARCHAR", "VARCHAR(65533)"),
        ("CHAR(3)", "CHAR(3)"),
        ("CHAR", "CHAR(1)"),
        ("TIMESTAMP", "DATETIME"),
        ("STRING", "STRING"),
    ],
)
def test_sql_round_trips(text, canonical):
    t = parse_type(text)
    assert t.sql() == canonical == str(t)
    assert parse_type(t.sql()) == t


def test_datatype_is_hashable_and_frozen():
    assert {T("INT"), DataType("INT")} == {DataType("INT")}
    with pytest.raises(dataclasses.FrozenInstanceError):
        T("INT").name = "BIGINT"  # type: ignore[misc]


def test_datatype_rejects_misplaced_parameters():
    with pytest.raises(InvalidType):
        DataType("INT", length=3)
    with pytest.raises(InvalidType):
        DataType("VARCHAR", precision=3)
    with pytest.raises(InvalidType):
        DataType("FOO")


def test_type_families():
    assert all(T(n).is_integer for n in ("TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT"))
    assert not T("DECIMAL").is_integer and T("DECIMAL").is_number
    assert T("FLOAT").is_number and T("DOUBLE").is_number and not T("DOUBLE").is_integer
    assert all(T(n).is_string for n in ("CHAR", "VARCHAR(3)", "STRING"))
    assert T("DATE").is_temporal and T("DATETIME").is_temporal
    for name in ("BOOLEAN", "DATE", "STRING"):
        assert not T(name).is_number
    assert not T("BOOLEAN").is_string and not T("BOOLEAN").is_temporal


# --------------------------------------------------------------------------------------------
# classify_conversion
# --------------------------------------------------------------------------------------------

INTEGERS = ["TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT"]
INTEGER_WIDENINGS = [(a, b) for i, a in enumerate(INTEGERS) for b in INTEGERS[i + 1 :]]
INTEGER_NARROWINGS = [(b, a) for a, b in INTEGER_WIDENINGS]

LIGHT = INTEGER_WIDENINGS + [
    ("FLOAT", "DOUBLE"),
    ("DECIMAL(10,2)", "DECIMAL(11,2)"),
    ("DECIMAL(10,2)", "DECIMAL(11,3)"),
    ("DECIMAL(10,2)", "DECIMAL(38,2)"),
    ("DECIMAL(10,2)", "DECIMAL(38,30)"),
    ("DECIMAL(1,0)", "DECIMAL(2,1)"),
    ("DECIMAL", "DECIMAL(10,1)"),
    ("CHAR(3)", "VARCHAR(3)"),
    ("CHAR(3)", "VARCHAR(10)"),
    ("CHAR(3)", "STRING"),
    ("VARCHAR(10)", "VARCHAR(11)"),
    ("VARCHAR(10)", "VARCHAR"),
    ("VARCHAR(10)", "STRING"),
    ("VARCHAR", "STRING"),
    ("DATE", "DATETIME"),
    ("DATE", "TIMESTAMP"),
]

HEAVY = [
    # string -> number or DATE
    *[(s, n) for s in ("CHAR(5)", "VARCHAR(20)", "STRING") for n in INTEGERS + ["FLOAT", "DOUBLE", "DECIMAL(10,2)", "DATE"]],
    # number narrowing, and any number -> number outside the LIGHT list
    *INTEGER_NARROWINGS,
    ("DOUBLE", "FLOAT"),
    ("DECIMAL(10,2)", "DECIMAL(10,3)"),  # integer digits shrink
    ("DECIMAL(10,2)", "DECIMAL(12,1)"),  # scale shrinks
    ("DECIMAL(10,2)", "DECIMAL(9,2)"),
    ("DECIMAL(10,2)", "DECIMAL(10,0)"),
    ("INT", "DECIMAL(10,0)"),
    ("BIGINT", "DOUBLE"),
    ("INT", "FLOAT"),
    ("DOUBLE", "BIGINT"),
    ("FLOAT", "DECIMAL(10,2)"),
    ("DECIMAL(10,2)", "DOUBLE"),
    ("DECIMAL(38,0)", "LARGEINT"),
    ("LARGEINT", "DECIMAL(38,0)"),
    # temporal
    ("DATETIME", "DATE"),
    ("INT", "DATE"),
    ("BIGINT", "DATE"),
    # number -> VARCHAR(n) / STRING
    *[(n, s) for n in INTEGERS + ["FLOAT", "DOUBLE", "DECIMAL(10,2)"] for s in ("VARCHAR(5)", "STRING")],
]

REJECTED = [
    ("DATE", "INT"),
    ("DATE", "BIGINT"),
    ("DATETIME", "BIGINT"),
    ("STRING", "BOOLEAN"),
    ("VARCHAR(10)", "BOOLEAN"),
    ("VARCHAR(10)", "VARCHAR(5)"),
    ("STRING", "VARCHAR(20)"),
    ("STRING", "VARCHAR"),
    ("STRING", "CHAR(5)"),
    ("VARCHAR(10)", "CHAR(10)"),
    ("CHAR(3)", "CHAR(5)"),
    ("CHAR(5)", "CHAR(3)"),
    ("CHAR(5)", "VARCHAR(4)"),
    ("BOOLEAN", "INT"),
    ("INT", "BOOLEAN"),
    ("BOOLEAN", "STRING"),
    ("BOOLEAN", "TINYINT"),
    ("DOUBLE", "BOOLEAN"),
    ("BOOLEAN", "DATE"),
    ("DATE", "VARCHAR(20)"),
    ("DATE", "STRING"),
    ("DATETIME", "STRING"),
    ("STRING", "DATETIME"),
    ("DATE", "DOUBLE"),
    ("DATETIME", "INT"),
    ("TINYINT", "DATE"),
    ("SMALLINT", "DATE"),
    ("LARGEINT", "DATE"),
    ("DOUBLE", "DATE"),
    ("DECIMAL(8,0)", "DATE"),
    ("INT", "DATETIME"),
    ("INT", "CHAR(10)"),
]


def _classify(old: str, new: str):
    return classify_conversion(parse_type(old), parse_type(new))


@pytest.mark.parametrize("old, new", LIGHT)
def test_light_conversions(old, new):
    change, reason = _classify(old, new)
    assert change is Change.LIGHT
    assert reason == f"lossless widening {T(old).sql()} -> {T(new).sql()}"


@pytest.mark.parametrize("old, new", HEAVY)
def test_heavy_conversions(old, new):
    change, reason = _classify(old, new)
    assert change is Change.HEAVY, reason
    assert f"{T(old).sql()} -> {T(new).sql()}" in reason and "rewrite" in reason


@pytest.mark.parametrize("old, new", REJECTED)
def test_rejected_conversions(old, new):
    change, reason = _classify(old, new)
    assert change is Change.REJECTED, reason
    assert reason == f"{T(old).sql()} -> {T(new).sql()} is not a supported type change"


@pytest.mark.parametrize("text", ["INT", "DECIMAL(10,2)", "VARCHAR(3)", "CHAR(3)", "DATE", "BOOLEAN"])
def test_same_type(text):
    assert _classify(text, text)[0] is Change.SAME


def test_synonyms_are_the_same_type():
    assert _classify("INTEGER", "INT")[0] is Change.SAME
    assert _classify("TIMESTAMP", "DATETIME")[0] is Change.SAME
    assert _classify("DECIMAL", "DECIMAL(9,0)")[0] is Change.SAME


def test_reason_examples_from_the_brief():
    assert _classify("INT", "BIGINT")[1] == "lossless widening INT -> BIGINT"
    assert _classify("STRING", "INT")[1] == "STRING -> INT can fail and needs a rewrite"
    assert _classify("DATE", "INT")[1] == "DATE -> INT is not a supported type change"


def test_every_pair_is_classified_consistently():
    samples = [
        T(x)
        for x in INTEGERS
        + ["BOOLEAN", "FLOAT", "DOUBLE", "DECIMAL(10,2)", "DECIMAL(5,0)", "CHAR(3)", "VARCHAR(10)", "STRING", "DATE", "DATETIME"]
    ]
    for old in samples:
        for new in samples:
            change, reason = classify_conversion(old, new)
            assert (change is Change.SAME) == (old == new)
            assert reason and "\n" not in reason
            if old.name == "BOOLEAN" or new.name == "BOOLEAN":
                assert change in (Change.SAME, Change.REJECTED)


# --------------------------------------------------------------------------------------------
# coerce_literal
# --------------------------------------------------------------------------------------------


def lit_int(v: int) -> Literal:
    return Literal("int", v, str(v))


def lit_dec(text: str) -> Literal:
    return Literal("decimal", text, text)


def lit_str(s: str) -> Literal:
    return Literal("string", s, "'" + s.replace("'", "''") + "'")


LIT_NULL = Literal("null", None, "NULL")
LIT_TRUE = Literal("bool", True, "TRUE")
LIT_FALSE = Literal("bool", False, "FALSE")


@pytest.mark.parametrize(
    "lit, type_text, expected",
    [
        (LIT_TRUE, "BOOLEAN", True),
        (LIT_FALSE, "BOOLEAN", False),
        (lit_str("true"), "BOOLEAN", True),
        (lit_str("FALSE"), "BOOLEAN", False),
        (lit_str("1"), "BOOLEAN", True),
        (lit_str("0"), "BOOLEAN", False),
        (lit_int(-128), "TINYINT", -128),
        (lit_int(127), "TINYINT", 127),
        (lit_int(-32768), "SMALLINT", -32768),
        (lit_int(32767), "SMALLINT", 32767),
        (lit_int(2**31 - 1), "INT", 2**31 - 1),
        (lit_int(-(2**31)), "INT", -(2**31)),
        (lit_int(2**63 - 1), "BIGINT", 2**63 - 1),
        (lit_int(-(2**63)), "BIGINT", -(2**63)),
        (lit_int(10**38 - 1), "LARGEINT", 10**38 - 1),
        (lit_int(-(10**38) + 1), "LARGEINT", -(10**38) + 1),
        (lit_str("1"), "INT", 1),
        (lit_str("-42"), "BIGINT", -42),
        (lit_str(" 7 "), "INT", 7),
        (lit_dec("1.0"), "INT", 1),
        (lit_int(3), "DOUBLE", 3.0),
        (lit_dec("1.5"), "DOUBLE", 1.5),
        (lit_dec("-2.5e3"), "DOUBLE", -2500.0),
        (lit_dec("1.5"), "FLOAT", 1.5),
        (lit_dec("3.4e38"), "FLOAT", 3.3999999521443642e38),  # stored as the float32 it becomes
        (lit_str("0.25"), "FLOAT", 0.25),
        (lit_int(12), "DECIMAL(5,2)", Decimal("12.00")),
        (lit_dec("1.5"), "DECIMAL(5,2)", Decimal("1.50")),
        (lit_dec("-999.99"), "DECIMAL(5,2)", Decimal("-999.99")),
        (lit_dec("1.230"), "DECIMAL(5,2)", Decimal("1.23")),
        (lit_dec("1e2"), "DECIMAL(5,2)", Decimal("100.00")),
        (lit_dec("-0.0"), "DECIMAL(5,2)", Decimal("0.00")),
        (lit_str("12.5"), "DECIMAL(5,2)", Decimal("12.50")),
        (lit_str("9" * 38), "DECIMAL(38,0)", Decimal("9" * 38)),
        (lit_dec("0." + "0" * 37 + "1"), "DECIMAL(38,38)", Decimal("1e-38")),
        (lit_str("abc"), "VARCHAR(3)", "abc"),
        (lit_str("äöü"), "VARCHAR(3)", "äöü"),
        (lit_str("ab"), "CHAR(3)", "ab"),
        (lit_str(""), "STRING", ""),
        (lit_str("x" * 100000), "STRING", "x" * 100000),
        (lit_str("2024-02-29"), "DATE", dt.date(2024, 2, 29)),
        (lit_str("0001-01-01"), "DATE", dt.date(1, 1, 1)),
        # The date texts of docs/semantics.md, as a STRING -> DATE ALTER reads them; two-digit years pivot at 69
        (lit_str("2024-1-1"), "DATE", dt.date(2024, 1, 1)),
        (lit_str("20240101"), "DATE", dt.date(2024, 1, 1)),
        (lit_str("240101"), "DATE", dt.date(2024, 1, 1)),
        (lit_str("2024/01/02"), "DATE", dt.date(2024, 1, 2)),
        (lit_str("68/1/2"), "DATE", dt.date(2068, 1, 2)),
        (lit_str("69-12-31"), "DATE", dt.date(1969, 12, 31)),
        (lit_str(" 2024-01-02\t"), "DATE", dt.date(2024, 1, 2)),
        (lit_str("2024-01-01"), "DATETIME", dt.datetime(2024, 1, 1)),
        (lit_str("2024-01-01 10:11:12"), "DATETIME", dt.datetime(2024, 1, 1, 10, 11, 12)),
        (lit_str("2024-01-01T10:11:12"), "DATETIME", dt.datetime(2024, 1, 1, 10, 11, 12)),
        (lit_str("2024-01-01 10:11:12.5"), "DATETIME", dt.datetime(2024, 1, 1, 10, 11, 12, 500000)),
        (lit_str("2024-01-01 10:11:12.000123"), "DATETIME", dt.datetime(2024, 1, 1, 10, 11, 12, 123)),
        (lit_str("2024-01-01 10:11:12"), "TIMESTAMP", dt.datetime(2024, 1, 1, 10, 11, 12)),
    ],
)
def test_coerce_literal(lit, type_text, expected):
    value = coerce_literal(lit, parse_type(type_text))
    assert value == expected and type(value) is type(expected)
    if isinstance(expected, Decimal):
        assert value.as_tuple().exponent == -parse_type(type_text).scale
        assert str(value) == str(expected)


@pytest.mark.parametrize("type_text", ["BOOLEAN", "INT", "DECIMAL(5,2)", "VARCHAR(1)", "DATE", "DATETIME"])
def test_null_literal_fits_every_type(type_text):
    assert coerce_literal(LIT_NULL, parse_type(type_text)) is None


@pytest.mark.parametrize(
    "lit, type_text, message",
    [
        (lit_int(300), "TINYINT", "value 300 does not fit TINYINT"),
        (lit_int(-129), "TINYINT", "value -129 does not fit TINYINT"),
        (lit_int(32768), "SMALLINT", "value 32768 does not fit SMALLINT"),
        (lit_int(2**31), "INT", f"value {2**31} does not fit INT"),
        (lit_int(2**63), "BIGINT", f"value {2**63} does not fit BIGINT"),
        (lit_int(10**38), "LARGEINT", f"value {10**38} does not fit LARGEINT"),
        (lit_int(-(10**38)), "LARGEINT", f"value {-(10**38)} does not fit LARGEINT"),
        (lit_str("300"), "TINYINT", "value '300' does not fit TINYINT"),
        (lit_dec("1.5"), "INT", "value 1.5 does not fit INT"),
        (lit_str("1.5"), "INT", "value '1.5' is not a valid INT"),
        (lit_str("abc"), "INT", "value 'abc' is not a valid INT"),
        (lit_str(""), "INT", "value '' is not a valid INT"),
        (lit_str("1_000"), "INT", "value '1_000' is not a valid INT"),
        (lit_dec("1.234"), "DECIMAL(5,2)", "value 1.234 does not fit DECIMAL(5,2)"),
        (lit_dec("1000"), "DECIMAL(5,2)", "value 1000 does not fit DECIMAL(5,2)"),
        (lit_int(1000), "DECIMAL(5,2)", "value 1000 does not fit DECIMAL(5,2)"),
        (lit_dec("0.001"), "DECIMAL(5,2)", "value 0.001 does not fit DECIMAL(5,2)"),
        (lit_int(10**38), "DECIMAL(38,0)", f"value {10**38} does not fit DECIMAL(38,0)"),
        (lit_str("nan"), "DECIMAL(5,2)", "value 'nan' is not a valid DECIMAL(5,2)"),
        (lit_dec("3.5e38"), "FLOAT", "value 3.5e38 does not fit FLOAT"),
        (lit_dec("1e309"), "DOUBLE", "value 1e309 does not fit DOUBLE"),
        (lit_str("inf"), "DOUBLE", "value 'inf' is not a valid DOUBLE"),
        (lit_str("NaN"), "FLOAT", "value 'NaN' is not a valid FLOAT"),
        (lit_str("abcd"), "VARCHAR(3)", "value 'abcd' does not fit VARCHAR(3)"),
        (lit_str("ab"), "CHAR(1)", "value 'ab' does not fit CHAR(1)"),
        (lit_str("abc"), "DATE", "value 'abc' is not a valid DATE"),
        (lit_str("2024-02-30"), "DATE", "value '2024-02-30' is not a valid DATE"),
        (lit_str("2023-02-29"), "DATE", "value '2023-02-29' is not a valid DATE"),
        (lit_str("2024-1-1 "), "DATETIME", "value '2024-1-1 ' is not a valid DATETIME"),
        (lit_str("2024.01.01"), "DATE", "value '2024.01.01' is not a valid DATE"),
        (lit_str("2024-01/01"), "DATE", "value '2024-01/01' is not a valid DATE"),
        (lit_str("0000-01-01"), "DATE", "value '0000-01-01' is not a valid DATE"),
        (lit_str("230229"), "DATE", "value '230229' is not a valid DATE"),
        (lit_str("024-01-01"), "DATE", "value '024-01-01' is not a valid DATE"),
        (lit_str("\u00a02024-01-01"), "DATE", "value '\\xa02024-01-01' is not a valid DATE"),
        (lit_str("١٢"), "INT", "value '١٢' is not a valid INT"),
        (lit_str("2024-01-01 10:00:00"), "DATE", "value '2024-01-01 10:00:00' is not a valid DATE"),
        (lit_str("2024-01-01 25:00:00"), "DATETIME", "value '2024-01-01 25:00:00' is not a valid DATETIME"),
        (lit_str("2024-01-01 10:00"), "DATETIME", "value '2024-01-01 10:00' is not a valid DATETIME"),
        (lit_str("2024-01-01 10:00:00.1234567"), "DATETIME", "value '2024-01-01 10:00:00.1234567' is not a valid DATETIME"),
        (lit_str("2024-01-01 10:00:00+02:00"), "DATETIME", "value '2024-01-01 10:00:00+02:00' is not a valid DATETIME"),
        (lit_str("yes"), "BOOLEAN", "value 'yes' is not a valid BOOLEAN"),
        (lit_str("2"), "BOOLEAN", "value '2' is not a valid BOOLEAN"),
        (LIT_TRUE, "INT", "value TRUE is not a valid INT"),
        (lit_int(1), "BOOLEAN", "value 1 is not a valid BOOLEAN"),
        (lit_int(123456), "VARCHAR(5)", "value 123456 does not fit VARCHAR(5)"),
        (lit_int(20240101), "DATE", "value 20240101 is not a valid DATE"),
    ],
)
def test_coerce_literal_errors(lit, type_text, message):
    with pytest.raises(InvalidValue) as info:
        coerce_literal(lit, parse_type(type_text))
    assert str(info.value) == message


@pytest.mark.parametrize(
    "lit, type_text, expected",
    [(LIT_TRUE, "STRING", "true"), (lit_int(1), "VARCHAR(5)", "1"), (lit_dec("1.50"), "STRING", "1.50"), (lit_int(-12), "CHAR(3)", "-12")],
)
def test_typed_literals_into_text_columns_are_their_text(lit, type_text, expected):
    """As PostgreSQL and Spark assign them in an INSERT."""
    assert coerce_literal(lit, parse_type(type_text)) == expected


def test_error_messages_stay_on_one_short_line():
    with pytest.raises(InvalidValue) as info:
        coerce_literal(lit_str("line1\nline2" + "x" * 500), parse_type("VARCHAR(3)"))
    text = str(info.value)
    assert "\n" not in text and len(text) < 120 and "VARCHAR(3)" in text


# --------------------------------------------------------------------------------------------
# coerce_value
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, type_text, expected",
    [
        (True, "BOOLEAN", True),
        ("true", "BOOLEAN", True),
        ("0", "BOOLEAN", False),
        (5, "TINYINT", 5),
        ("5", "TINYINT", 5),
        (5.0, "INT", 5),
        (Decimal("5.00"), "INT", 5),
        (Decimal("99999999999999999999999999999999999999"), "LARGEINT", 10**38 - 1),
        (2**63 - 1, "BIGINT", 2**63 - 1),
        (1, "FLOAT", 1.0),
        (0.1, "DOUBLE", 0.1),
        (Decimal("1.25"), "DOUBLE", 1.25),
        ("1e3", "DOUBLE", 1000.0),
        (0.1, "DECIMAL(5,2)", Decimal("0.10")),
        (Decimal("1.5"), "DECIMAL(5,2)", Decimal("1.50")),
        (7, "DECIMAL(5,2)", Decimal("7.00")),
        ("-7.25", "DECIMAL(5,2)", Decimal("-7.25")),
        (Decimal("-0.00"), "DECIMAL(5,2)", Decimal("0.00")),
        ("héllo", "VARCHAR(5)", "héllo"),
        ("x", "CHAR(3)", "x"),
        ("anything", "STRING", "anything"),
        (dt.date(2024, 1, 2), "DATE", dt.date(2024, 1, 2)),
        ("2024-01-02", "DATE", dt.date(2024, 1, 2)),
        (dt.datetime(2024, 1, 2), "DATE", dt.date(2024, 1, 2)),
        (dt.date(2024, 1, 2), "DATETIME", dt.datetime(2024, 1, 2)),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 6), "DATETIME", dt.datetime(2024, 1, 2, 3, 4, 5, 6)),
        ("2024-01-02 03:04:05.000006", "DATETIME", dt.datetime(2024, 1, 2, 3, 4, 5, 6)),
        (dt.datetime(2024, 1, 2, 12, tzinfo=dt.timezone(dt.timedelta(hours=2))), "DATETIME", dt.datetime(2024, 1, 2, 10)),
    ],
)
def test_coerce_value(value, type_text, expected):
    result = coerce_value(value, parse_type(type_text))
    assert result == expected and type(result) is type(expected)
    if isinstance(expected, Decimal):
        assert str(result) == str(expected)


def test_coerce_value_none():
    assert coerce_value(None, parse_type("INT")) is None


def test_coerce_value_matches_pyarrow_read_back():
    types = [parse_type(x) for x in ("BOOLEAN", "TINYINT", "LARGEINT", "FLOAT", "DECIMAL(10,2)", "VARCHAR(5)", "DATE", "DATETIME")]
    row = [True, -3, 10**38 - 1, 1.5, Decimal("3.10"), "abc", dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 1, 2, 3, 4)]
    table = pa.table({f"c{i}": pa.array([v], to_arrow(t)) for i, (v, t) in enumerate(zip(row, types))})
    back = [table.column(i)[0].as_py() for i in range(len(types))]
    assert [coerce_value(v, t) for v, t in zip(back, types)] == row


@pytest.mark.parametrize(
    "value, type_text, message",
    [
        (300, "TINYINT", "value 300 does not fit TINYINT"),
        ("300", "TINYINT", "value '300' does not fit TINYINT"),
        (1.5, "INT", "value 1.5 does not fit INT"),
        (float("nan"), "INT", "value nan does not fit INT"),
        (float("inf"), "DOUBLE", "value inf does not fit DOUBLE"),
        (float("nan"), "DOUBLE", "value nan does not fit DOUBLE"),
        (1e39, "FLOAT", "value 1e+39 does not fit FLOAT"),
        (Decimal("NaN"), "DECIMAL(5,2)", "value NaN does not fit DECIMAL(5,2)"),
        (Decimal("1.234"), "DECIMAL(5,2)", "value 1.234 does not fit DECIMAL(5,2)"),
        (1.234, "DECIMAL(5,2)", "value 1.234 does not fit DECIMAL(5,2)"),
        (1000, "DECIMAL(5,2)", "value 1000 does not fit DECIMAL(5,2)"),
        (10**38, "LARGEINT", f"value {10**38} does not fit LARGEINT"),
        (True, "INT", "value TRUE is not a valid INT"),
        (1, "BOOLEAN", "value 1 is not a valid BOOLEAN"),
        (1.5, "STRING", "value 1.5 is not a valid STRING"),
        (12345, "VARCHAR(3)", "value 12345 does not fit VARCHAR(3)"),
        ("abcd", "VARCHAR(3)", "value 'abcd' does not fit VARCHAR(3)"),
        ("it's long", "CHAR(2)", "value 'it''s long' does not fit CHAR(2)"),
        ("2024-13-01", "DATE", "value '2024-13-01' is not a valid DATE"),
        ("abc", "DATETIME", "value 'abc' is not a valid DATETIME"),
        (dt.datetime(2024, 1, 1, 10), "DATE", "value '2024-01-01 10:00:00' does not fit DATE"),
        (dt.date(2024, 1, 1), "CHAR(5)", "value '2024-01-01' does not fit CHAR(5)"),
        (dt.date(2024, 1, 1), "INT", "value '2024-01-01' is not a valid INT"),
        (b"abc", "STRING", "value b'abc' is not a valid STRING"),
    ],
)
def test_coerce_value_errors(value, type_text, message):
    with pytest.raises(InvalidValue) as info:
        coerce_value(value, parse_type(type_text))
    assert str(info.value) == message


# --------------------------------------------------------------------------------------------
# encode / decode / format
# --------------------------------------------------------------------------------------------

ROUND_TRIP = [
    (None, "INT"),
    (True, "BOOLEAN"),
    (False, "BOOLEAN"),
    (-128, "TINYINT"),
    (2**63 - 1, "BIGINT"),
    (10**38 - 1, "LARGEINT"),
    (1.5, "FLOAT"),
    (0.1, "DOUBLE"),
    (-1e300, "DOUBLE"),
    (Decimal("1.50"), "DECIMAL(10,2)"),
    (Decimal("0E-10"), "DECIMAL(20,10)"),
    (Decimal("1E-38"), "DECIMAL(38,38)"),
    (Decimal("-12345678901234567890123456789012345678"), "DECIMAL(38,0)"),
    ("héllo 'x'", "VARCHAR(20)"),
    ("", "STRING"),
    (dt.date(1, 1, 1), "DATE"),
    (dt.date(9999, 12, 31), "DATE"),
    (dt.datetime(2024, 1, 1, 10), "DATETIME"),
    (dt.datetime(2024, 1, 1, 10, 0, 0, 5), "DATETIME"),
]


@pytest.mark.parametrize("value, type_text", ROUND_TRIP)
def test_encode_decode_round_trip(value, type_text):
    t = parse_type(type_text)
    data = encode_value(value, t)
    restored = decode_value(json.loads(json.dumps(data)), t)
    assert restored == value and type(restored) is type(value)
    if isinstance(value, Decimal):
        assert str(restored) == str(value)


def test_encode_value_forms():
    assert encode_value(Decimal("1.50"), T("DECIMAL(5,2)")) == "1.50"
    assert encode_value(Decimal("1E-8"), T("DECIMAL(10,8)")) == "0.00000001"
    assert encode_value(dt.date(2024, 1, 1), T("DATE")) == "2024-01-01"
    assert encode_value(dt.datetime(2024, 1, 1, 10), T("DATETIME")) == "2024-01-01 10:00:00"
    assert encode_value(7, T("INT")) == 7 and encode_value(True, T("BOOLEAN")) is True


@pytest.mark.parametrize(
    "value, type_text, text",
    [
        (None, "INT", "NULL"),
        (True, "BOOLEAN", "true"),
        (False, "BOOLEAN", "false"),
        (-5, "INT", "-5"),
        (10**38 - 1, "LARGEINT", "9" * 38),
        (Decimal("1.5"), "DECIMAL(10,2)", "1.50"),
        (Decimal("1E-8"), "DECIMAL(10,8)", "0.00000001"),
        (1.5, "DOUBLE", "1.5"),
        (0.10000000149011612, "FLOAT", "0.1"),
        ("x y", "STRING", "x y"),
        (dt.date(2024, 1, 1), "DATE", "2024-01-01"),
        (dt.datetime(2024, 1, 1, 10), "DATETIME", "2024-01-01 10:00:00"),
        (dt.datetime(2024, 1, 1, 10, 0, 0, 500000), "DATETIME", "2024-01-01 10:00:00.5"),
        (dt.datetime(2024, 1, 1, 10, 0, 0, 123), "DATETIME", "2024-01-01 10:00:00.000123"),
        (dt.datetime(1, 1, 1), "DATETIME", "0001-01-01 00:00:00"),
    ],
)
def test_format_value(value, type_text, text):
    assert format_value(value, parse_type(type_text)) == text


# --------------------------------------------------------------------------------------------
# Arrow and bucketing (the Spark side is in test_types_spark.py)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "type_text, arrow_type",
    [
        ("BOOLEAN", pa.bool_()),
        ("TINYINT", pa.int8()),
        ("SMALLINT", pa.int16()),
        ("INT", pa.int32()),
        ("BIGINT", pa.int64()),
        ("LARGEINT", pa.decimal128(38, 0)),
        ("FLOAT", pa.float32()),
        ("DOUBLE", pa.float64()),
        ("DECIMAL(10,2)", pa.decimal128(10, 2)),
        ("CHAR(3)", pa.string()),
        ("VARCHAR(9)", pa.string()),
        ("STRING", pa.string()),
        ("DATE", pa.date32()),
        ("DATETIME", pa.timestamp("us")),
    ],
)
def test_to_arrow(type_text, arrow_type):
    assert to_arrow(parse_type(type_text)) == arrow_type


def test_bucket_of_is_pmod_of_sparks_hash():
    """Re-exported from alterflow.bucketing (tested there and against Spark in test_types_spark.py):
    Spark prints hash(1) = -559580957, hash(NULL) = 42 (the seed), hash('abc') = 1322437556."""
    assert bucket_of((1,), (T("INT"),), 16) == -559580957 % 16 == 3
    assert bucket_of((None,), (T("INT"),), 7) == 42 % 7 == 0
    assert bucket_of(("abc",), (T("STRING"),), 10) == 1322437556 % 10 == 6
    assert bucket_of(("x",), (T("STRING"),), 1) == 0


def test_bucket_of_rejects_bad_keys():
    with pytest.raises(InvalidType):
        bucket_of((1.5,), (T("DOUBLE"),), 4)
    with pytest.raises(InvalidType):
        bucket_of((1.5,), (T("FLOAT"),), 4)
    with pytest.raises(ValueError):
        bucket_of((1,), (T("INT"),), 0)
    with pytest.raises(ValueError):
        bucket_of((1, 2), (T("INT"),), 4)


def test_import_does_not_import_pyspark():
    code = (
        "import sys, alterflow.values.types as t\n"
        "t.parse_type('INT'); t.to_arrow(t.parse_type('DATE'))\n"
        "assert not any(m == 'pyspark' or m.startswith('pyspark.') for m in sys.modules), 'pyspark'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_float_values_are_the_float32_a_float_column_holds():
    """A FLOAT default must read the same before and after FLOAT -> DOUBLE (the file holds float32)."""
    assert coerce_literal(lit_dec("0.1"), parse_type("FLOAT")) == 0.10000000149011612
    assert coerce_value(0.1, parse_type("FLOAT")) == 0.10000000149011612
    assert coerce_value(0.1, parse_type("DOUBLE")) == 0.1
    assert format_value(coerce_value(0.1, parse_type("FLOAT")), parse_type("FLOAT")) == "0.1"
    assert format_value(3.4028234663852886e38, parse_type("FLOAT")) == "3.4028235e+38"


@pytest.mark.parametrize(
    "value, expected",
    [
        (True, "true"),
        (False, "false"),
        (12, "12"),
        (-(2**70), str(-(2**70))),
        (Decimal("1.50"), "1.50"),
        (Decimal("0E-10"), "0.0000000000"),
        (Decimal("1E-7"), "0.0000001"),
        (dt.date(2024, 1, 2), "2024-01-02"),
        (dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 120000), "2024-01-02 03:04:05.12"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=5))), "2024-01-01 22:04:05"),
    ],
)
def test_typed_values_loaded_into_text_columns_are_their_text(value, expected):
    """Parquet, JSON and INSERT ... SELECT values into CHAR / VARCHAR / STRING: the text PostgreSQL
    and Spark would assign (a float is refused: engines disagree on its text)."""
    assert coerce_value(value, parse_type("STRING")) == expected
