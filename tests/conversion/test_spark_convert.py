"""convert_frame (the Spark side of a heavyweight ALTER): each family's good, boundary and
failing values in both on_cast_error modes, the failure flag columns, and the shape of the
result (added, dropped, renamed, reordered columns, defaults, extras). Rows reach Spark as the
rewrite reads them: Parquet written by pyarrow."""

from __future__ import annotations

import datetime as dt
import math
import struct
from collections import defaultdict
from decimal import Decimal as D

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.conversion.spark_convert import convert_frame, failure_column
from alterflow.values.cast_rules import FLOAT32_MAX, can_fail
from alterflow.values.types import parse_type, to_arrow, to_spark

pytestmark = pytest.mark.spark

FAIL = object()


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


# (old type, new type, source value, expected value or FAIL)
CASES = [
    ("STRING", "INT", "42", 42),
    ("STRING", "INT", " -7 ", -7),
    ("STRING", "INT", "+0", 0),
    ("STRING", "INT", "007", 7),
    ("STRING", "INT", "\t12\n", 12),
    ("STRING", "INT", "\x0b\x0c12\r\n", 12),
    ("STRING", "INT", "2147483647", 2147483647),
    ("STRING", "INT", "2147483648", FAIL),
    ("STRING", "INT", "1.5", FAIL),
    ("STRING", "INT", "1e3", FAIL),
    ("STRING", "INT", "", FAIL),
    ("STRING", "INT", "abc", FAIL),
    ("STRING", "INT", "\uff11\uff12", FAIL),
    ("STRING", "INT", "\u00a012", FAIL),
    ("STRING", "INT", "12\u2028", FAIL),
    ("STRING", "INT", "0x1F", FAIL),
    ("STRING", "TINYINT", "127", 127),
    ("STRING", "TINYINT", "-128", -128),
    ("STRING", "TINYINT", "128", FAIL),
    ("STRING", "BIGINT", "9223372036854775807", 2**63 - 1),
    ("STRING", "BIGINT", "9223372036854775808", FAIL),
    ("STRING", "LARGEINT", "9" * 38, 10**38 - 1),
    ("STRING", "LARGEINT", "9" * 39, FAIL),
    ("STRING", "LARGEINT", "0" * 50 + "5", 5),
    ("CHAR(3)", "SMALLINT", "-12", -12),
    ("STRING", "DOUBLE", "1.5", 1.5),
    ("STRING", "DOUBLE", " -2.5e3 ", -2500.0),
    ("STRING", "DOUBLE", ".5", 0.5),
    ("STRING", "DOUBLE", "5.", 5.0),
    ("STRING", "DOUBLE", "-0", -0.0),
    ("STRING", "DOUBLE", "1e-400", 0.0),
    ("STRING", "DOUBLE", "1e400", FAIL),
    ("STRING", "DOUBLE", "inf", FAIL),
    ("STRING", "DOUBLE", "NaN", FAIL),
    ("STRING", "DOUBLE", "Infinity", FAIL),
    ("STRING", "DOUBLE", "1.5d", FAIL),
    ("STRING", "DOUBLE", "0x10", FAIL),
    ("STRING", "FLOAT", "0.1", f32(0.1)),
    ("STRING", "FLOAT", "3.4028235e38", FLOAT32_MAX),
    ("STRING", "FLOAT", "3.4028236e38", FAIL),
    ("STRING", "FLOAT", "1e-50", 0.0),
    ("STRING", "FLOAT", "1.00000005960464477539062500000000001", f32(1.0000001192092896)),
    ("STRING", "DECIMAL(5,2)", "1.005", D("1.01")),
    ("STRING", "DECIMAL(5,2)", "-1.005", D("-1.01")),
    ("STRING", "DECIMAL(5,2)", " 999.994 ", D("999.99")),
    ("STRING", "DECIMAL(5,2)", "999.995", FAIL),
    ("STRING", "DECIMAL(5,2)", "1e2", D("100.00")),
    ("STRING", "DECIMAL(5,2)", "1E3", FAIL),
    ("STRING", "DECIMAL(5,2)", "0e999999999", D("0.00")),
    ("STRING", "DECIMAL(5,2)", "1e-999999999", D("0.00")),
    ("STRING", "DECIMAL(5,2)", "1e999999999", FAIL),
    ("STRING", "DECIMAL(5,2)", "abc", FAIL),
    ("STRING", "DECIMAL(5,2)", "NaN", FAIL),
    ("STRING", "DECIMAL(38,38)", "0.5", D("0.5")),
    ("STRING", "DATE", "2024-01-31", dt.date(2024, 1, 31)),
    ("STRING", "DATE", "2024-1-5", dt.date(2024, 1, 5)),
    ("STRING", "DATE", "68-12-31", dt.date(2068, 12, 31)),
    ("STRING", "DATE", "69-01-01", dt.date(1969, 1, 1)),
    ("STRING", "DATE", "20240131", dt.date(2024, 1, 31)),
    ("STRING", "DATE", "240131", dt.date(2024, 1, 31)),
    ("STRING", "DATE", "2024/01/31", dt.date(2024, 1, 31)),
    ("STRING", "DATE", "24/1/5", dt.date(2024, 1, 5)),
    ("STRING", "DATE", " 2024-02-29\n", dt.date(2024, 2, 29)),
    ("STRING", "DATE", "2023-02-29", FAIL),
    ("STRING", "DATE", "1900-02-29", FAIL),
    ("STRING", "DATE", "2024-13-01", FAIL),
    ("STRING", "DATE", "0000-01-01", FAIL),
    ("STRING", "DATE", "2024-01/31", FAIL),
    ("STRING", "DATE", "2024-01-31T00:00", FAIL),
    ("STRING", "DATE", "", FAIL),
    ("INT", "DATE", 20240131, dt.date(2024, 1, 31)),
    ("INT", "DATE", 20240229, dt.date(2024, 2, 29)),
    ("INT", "DATE", 20230229, FAIL),
    ("INT", "DATE", 9991231, FAIL),
    ("INT", "DATE", -20240131, FAIL),
    ("INT", "DATE", 20241301, FAIL),
    ("BIGINT", "DATE", 99991231, dt.date(9999, 12, 31)),
    ("BIGINT", "DATE", 202401310, FAIL),
    ("BIGINT", "DATE", 2**63 - 1, FAIL),
    ("DATETIME", "DATE", dt.datetime(2024, 1, 31, 23, 59, 59, 999999), dt.date(2024, 1, 31)),
    ("DATETIME", "DATE", dt.datetime(1969, 12, 31, 23, 0), dt.date(1969, 12, 31)),
    ("DOUBLE", "INT", 2.0, 2),
    ("DOUBLE", "INT", -0.0, 0),
    ("DOUBLE", "INT", 1.5, FAIL),
    ("DOUBLE", "INT", 2147483648.0, FAIL),
    ("DOUBLE", "INT", math.nan, FAIL),
    ("DOUBLE", "INT", math.inf, FAIL),
    ("DOUBLE", "BIGINT", -(2.0**63), -(2**63)),
    ("DOUBLE", "BIGINT", 2.0**63, FAIL),
    ("DOUBLE", "LARGEINT", 1e23, 99999999999999990000000),
    ("DOUBLE", "LARGEINT", 1e38, FAIL),
    ("DECIMAL(10,2)", "INT", D("2.00"), 2),
    ("DECIMAL(10,2)", "INT", D("2.50"), FAIL),
    ("DECIMAL(38,5)", "LARGEINT", D("123.00000"), 123),
    ("BIGINT", "TINYINT", 127, 127),
    ("BIGINT", "TINYINT", 128, FAIL),
    ("LARGEINT", "BIGINT", 2**63, FAIL),
    ("LARGEINT", "BIGINT", -(2**63), -(2**63)),
    ("DOUBLE", "DECIMAL(5,2)", 1.005, D("1.01")),
    ("DOUBLE", "DECIMAL(5,2)", -0.125, D("-0.13")),
    ("DOUBLE", "DECIMAL(5,2)", 999.995, FAIL),
    ("DOUBLE", "DECIMAL(5,2)", math.nan, FAIL),
    ("FLOAT", "DECIMAL(20,18)", f32(0.1), D("0.100000001490116120")),
    ("DECIMAL(10,4)", "DECIMAL(6,2)", D("1.2350"), D("1.24")),
    ("DECIMAL(10,4)", "DECIMAL(6,2)", D("9999.9950"), FAIL),
    ("INT", "DECIMAL(5,2)", 1000, FAIL),
    ("INT", "DECIMAL(5,2)", -999, D("-999.00")),
    ("DOUBLE", "FLOAT", 0.1, f32(0.1)),
    ("DOUBLE", "FLOAT", 3.4028235677973366e38, FAIL),
    ("DOUBLE", "FLOAT", 1e-50, 0.0),
    ("DOUBLE", "FLOAT", math.nan, FAIL),
    ("BIGINT", "FLOAT", 2**60 + 2**36 + 1, float(2**60 + 2**37)),
    ("BIGINT", "DOUBLE", 2**53 + 1, float(2**53)),
    ("LARGEINT", "DOUBLE", 10**38 - 1, 1e38),
    ("DECIMAL(10,1)", "FLOAT", D("0.1"), f32(0.1)),
    ("DOUBLE", "STRING", 1.0, "1.0"),
    ("DOUBLE", "STRING", 1e10, "1.0E10"),
    ("DOUBLE", "STRING", 1e-5, "1.0E-5"),
    ("DOUBLE", "STRING", 0.001, "0.001"),
    ("DOUBLE", "STRING", -0.0, "-0.0"),
    ("DOUBLE", "STRING", 1e23, "9.999999999999999E22"),
    ("DOUBLE", "STRING", 2.82879384806159e17, "2.82879384806159008E17"),
    ("DOUBLE", "STRING", math.nan, "NaN"),
    ("DOUBLE", "STRING", -math.inf, "-Infinity"),
    ("FLOAT", "STRING", f32(0.1), "0.1"),
    ("FLOAT", "STRING", FLOAT32_MAX, "3.4028235E38"),
    ("DOUBLE", "VARCHAR(5)", 1.5, "1.5"),
    ("DOUBLE", "VARCHAR(5)", 123456.0, FAIL),
    ("DECIMAL(10,2)", "VARCHAR(5)", D("1.50"), "1.50"),
    ("DECIMAL(10,2)", "VARCHAR(5)", D("123.45"), FAIL),
    ("DECIMAL(38,38)", "STRING", D("1E-38"), "1E-38"),
    ("DECIMAL(38,38)", "STRING", D(0), "0E-38"),
    ("BIGINT", "VARCHAR(3)", -99, "-99"),
    ("BIGINT", "VARCHAR(3)", 1000, FAIL),
    ("LARGEINT", "STRING", 10**38 - 1, "9" * 38),
    ("INT", "BIGINT", -5, -5),
    ("SMALLINT", "LARGEINT", 300, 300),
    ("FLOAT", "DOUBLE", f32(0.1), f32(0.1)),
    ("DECIMAL(5,2)", "DECIMAL(7,3)", D("1.25"), D("1.250")),
    ("VARCHAR(3)", "STRING", "abc", "abc"),
    ("DATE", "DATETIME", dt.date(2024, 1, 31), dt.datetime(2024, 1, 31)),
]


def _frame(spark, tmp_path, arrays: dict[str, pa.Array], name: str = "rows"):
    path = tmp_path / f"{name}.parquet"
    pq.write_table(pa.table(arrays), path)
    return spark.read.parquet(str(path))


def _arrow(values: list, type_text: str) -> pa.Array:
    t = parse_type(type_text)
    if t.name == "LARGEINT":
        values = [None if v is None else D(v) for v in values]
    return pa.array(values, type=to_arrow(t))


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, D) and isinstance(b, D):
        return a == b
    return type(a) is type(b) and a == b


@pytest.fixture(scope="module")
def converted(spark, tmp_path_factory):
    """All CASES in one frame: one column per type change (values down the rows, NULL-padded),
    converted in both modes."""
    pairs: dict[tuple[str, str], list] = defaultdict(list)
    for old_text, new_text, value, expected in CASES:
        pairs[(old_text, new_text)].append((value, expected))
    length = max(len(v) for v in pairs.values()) + 1
    old_cols, new_cols, arrays = [], [], {}
    for i, ((old_text, new_text), items) in enumerate(pairs.items()):
        old_cols.append(Column(i + 1, f"c{i}", parse_type(old_text)))
        new_cols.append(Column(i + 1, f"n{i}", parse_type(new_text)))
        arrays[f"c{i}"] = _arrow([v for v, _ in items] + [None] * (length - len(items)), old_text)
    arrays["__row"] = pa.array(range(length), pa.int64())
    old = SchemaVersion(1, 1, tuple(old_cols))
    new = SchemaVersion(1, 2, tuple(new_cols))
    frame = _frame(spark, tmp_path_factory.mktemp("cases"), arrays)
    results = {}
    for mode in ("fail", "null"):
        out, flags = convert_frame(frame, old, new, on_cast_error=mode)
        results[mode] = (out.schema, {row["__row"]: row for row in out.collect()}, flags)
    return pairs, new, results


def test_values_and_flags(converted):
    pairs, new, results = converted
    problems = []
    for mode, (schema, rows, flags) in results.items():
        for i, ((old_text, new_text), items) in enumerate(pairs.items()):
            column = f"n{i}"
            flag = failure_column(i + 1)
            assert (flag in flags) == can_fail(parse_type(old_text), parse_type(new_text)), (old_text, new_text)
            assert schema[column].dataType == to_spark(parse_type(new_text))
            for r, (value, expected) in enumerate(items):
                got = rows[r][column]
                failed = rows[r][flag] if flag in flags else False
                if expected is FAIL:
                    if got is not None or failed is not True:
                        problems.append((mode, old_text, new_text, value, "expected a failure", got, failed))
                elif failed or not _same(got, D(expected) if parse_type(new_text).name == "LARGEINT" else expected):
                    problems.append((mode, old_text, new_text, value, expected, got, failed))
            last = rows[len(rows) - 1]  # the NULL row: NULL, never a failure
            if last[column] is not None or (flag in flags and last[flag] is not False):
                problems.append((mode, old_text, new_text, None, "NULL stays NULL", last[column]))
    assert not problems, problems[:10]


def test_modes_give_the_same_frame(converted):
    _, _, results = converted
    fail_schema, fail_rows, fail_flags = results["fail"]
    null_schema, null_rows, null_flags = results["null"]
    assert fail_schema == null_schema and fail_flags == null_flags
    assert fail_rows == null_rows


# --------------------------------------------------------------------------------------------
# Shape
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
        Column(4, "day_date", parse_type("DATE")),
        Column(1, "id", parse_type("BIGINT"), nullable=False),
        Column(9, "big", parse_type("LARGEINT"), initial_default=10**30, write_default=5),
        Column(10, "amount", parse_type("DECIMAL(10,2)"), initial_default=D("1.50")),
        Column(2, "price", parse_type("DECIMAL(6,2)"), nullable=False),
        Column(11, "note", parse_type("VARCHAR(10)")),
        Column(12, "at", parse_type("DATETIME"), initial_default=dt.datetime(2024, 1, 2, 3, 4, 5, 600000)),
        Column(13, "on", parse_type("DATE"), initial_default=dt.date(2020, 2, 29)),
        Column(14, "ratio", parse_type("FLOAT"), initial_default=f32(0.1)),
        Column(15, "flag", parse_type("BOOLEAN"), initial_default=True),
        Column(16, "label", parse_type("STRING"), initial_default="n/a"),
        Column(17, "small", parse_type("TINYINT"), initial_default=-7),
    ),
)


def _old_frame(spark, tmp_path):
    return _frame(
        spark,
        tmp_path,
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "price": pa.array([" 9.995", None, "12.5"]),
            "gone": pa.array([1.5, 2.5, None]),
            "day": pa.array([20240131, None, 20240230], pa.int32()),
            "__txn": pa.array([70, 70, 71], pa.int64()),
        },
    )


def test_columns_matched_by_id_with_defaults_and_extras(spark, tmp_path):
    frame = _old_frame(spark, tmp_path)
    out, flags = convert_frame(frame, OLD, NEW, on_cast_error="null")
    assert flags == ["af$failed_4", "af$failed_2"]
    assert out.columns == [c.name for c in NEW.columns] + ["__txn"] + flags
    for column in NEW.columns:
        assert out.schema[column.name].dataType == to_spark(column.type)
    defaults = {
        "big": D(10**30),
        "amount": D("1.50"),
        "note": None,
        "at": dt.datetime(2024, 1, 2, 3, 4, 5, 600000),
        "on": dt.date(2020, 2, 29),
        "ratio": f32(0.1),
        "flag": True,
        "label": "n/a",
        "small": -7,
    }
    rows = sorted((row.asDict() for row in out.collect()), key=lambda r: r["id"])
    assert rows == [
        {
            "day_date": dt.date(2024, 1, 31),
            "id": 1,
            "price": D("10.00"),
            **defaults,
            "__txn": 70,
            "af$failed_4": False,
            "af$failed_2": False,
        },
        {"day_date": None, "id": 2, "price": None, **defaults, "__txn": 70, "af$failed_4": False, "af$failed_2": False},
        {"day_date": None, "id": 3, "price": D("12.50"), **defaults, "__txn": 71, "af$failed_4": True, "af$failed_2": False},
    ]


def test_uses_no_python_udf(spark, tmp_path):
    out, _ = convert_frame(_old_frame(spark, tmp_path), OLD, NEW)
    plan = out._jdf.queryExecution().executedPlan().toString()
    assert "Python" not in plan and "BatchEval" not in plan


def test_no_failure_columns_when_nothing_can_fail(spark, tmp_path):
    old = SchemaVersion(1, 1, (Column(1, "a", parse_type("INT")), Column(2, "b", parse_type("DATETIME"))))
    new = SchemaVersion(1, 2, (Column(1, "a", parse_type("DOUBLE")), Column(2, "b", parse_type("DATE"))))
    frame = _frame(
        spark, tmp_path, {"a": pa.array([1, None], pa.int32()), "b": pa.array([dt.datetime(2024, 5, 6, 7), None], pa.timestamp("us"))}
    )
    out, flags = convert_frame(frame, old, new)
    assert flags == [] and out.columns == ["a", "b"]
    assert [tuple(r) for r in out.orderBy("a").collect()] == [(None, None), (1.0, dt.date(2024, 5, 6))]


@pytest.mark.parametrize(
    "old_text,new_text",
    [("DATE", "INT"), ("STRING", "BOOLEAN"), ("BIGINT", "CHAR(5)"), ("SMALLINT", "DATE"), ("VARCHAR(10)", "VARCHAR(5)")],
)
def test_rejected_type_changes_raise(spark, tmp_path, old_text, new_text):
    old = SchemaVersion(1, 1, (Column(1, "v", parse_type(old_text)),))
    new = SchemaVersion(1, 2, (Column(1, "v", parse_type(new_text)),))
    frame = _frame(spark, tmp_path, {"v": pa.array([None], to_arrow(parse_type(old_text)))})
    with pytest.raises(ValueError):
        convert_frame(frame, old, new)


def test_bad_arguments(spark, tmp_path):
    frame = _old_frame(spark, tmp_path)
    with pytest.raises(ValueError, match="on_cast_error"):
        convert_frame(frame, OLD, NEW, on_cast_error="skip")
    with pytest.raises(ValueError, match="no column gone"):
        convert_frame(frame.drop("gone"), OLD, NEW)


def test_refuses_double_text_conversions_on_a_jvm_that_prints_doubles_differently(spark, tmp_path, monkeypatch):
    import alterflow.values.spark_kernels as spark_kernels

    old = SchemaVersion(1, 1, (Column(1, "d", parse_type("DOUBLE")), Column(2, "s", parse_type("STRING"))))
    to_text = SchemaVersion(1, 2, (Column(1, "d", parse_type("STRING")), Column(2, "s", parse_type("STRING"))))
    to_int = SchemaVersion(1, 2, (Column(1, "d", parse_type("DOUBLE")), Column(2, "s", parse_type("INT"))))
    frame = _frame(spark, tmp_path, {"d": pa.array([1e23]), "s": pa.array(["1"])})
    convert_frame(frame, old, to_text)  # this JVM is Java 17
    monkeypatch.setattr(spark_kernels, "_jvm_checked", {})
    monkeypatch.setattr(spark_kernels, "java_double_to_string", lambda value: repr(value))  # a "shortest" JDK
    with pytest.raises(RuntimeError, match="Java 17"):
        convert_frame(frame, old, to_text)
    convert_frame(frame, old, to_int)  # no double text involved: fine
