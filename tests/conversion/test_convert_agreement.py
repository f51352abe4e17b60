"""The decisive test of the conversion rules: for every family of type change, the same rows
converted by pyarrow (`convert_arrow`, the dual-write path) and by Spark (`convert_frame`, the
rewrite of history) give the same values, bit for bit, and the same failures, in both
on_cast_error modes. Inputs: hand-picked edge cases plus a few hundred seeded random values per
family. Spark reads the rows from Parquet written by pyarrow, as the rewrite does."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.conversion.arrow_convert import convert_arrow
from alterflow.conversion.spark_convert import convert_frame, failure_column
from alterflow.values.cast_rules import FLOAT32_MAX, can_fail, round_to_float32
from alterflow.values.types import parse_type, to_arrow
from tests.support.values import INTEGER_BOUNDARY_TEXTS

pytestmark = pytest.mark.spark

RANDOM = 300
D = decimal.Decimal
EXACT = decimal.Context(prec=100)


# --------------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------------


def _schemas(cases: list[tuple[str, str]]) -> tuple[SchemaVersion, SchemaVersion]:
    """OLD has c0..cN of the old types (ids 1..N+1), NEW renames them to n0..nN, new types,
    in reverse order (so the conversion also reorders)."""
    old_cols = tuple(Column(i + 1, f"c{i}", parse_type(o)) for i, (o, _) in enumerate(cases))
    new_cols = tuple(Column(i + 1, f"n{i}", parse_type(n)) for i, (_, n) in enumerate(cases))
    return SchemaVersion(1, 1, old_cols), SchemaVersion(1, 2, tuple(reversed(new_cols)))


def _arrow_values(values: list, type_text: str) -> list:
    if parse_type(type_text).name == "LARGEINT":
        return [None if v is None else D(v) for v in values]
    return values


def _table(cases: list[tuple[str, str, list]]) -> pa.Table:
    length = max(len(values) for _, _, values in cases) + 3  # a few NULLs in every column
    arrays = {}
    for i, (old_text, _, values) in enumerate(cases):
        padded = list(values) + [None] * (length - len(values))
        arrays[f"c{i}"] = pa.array(_arrow_values(padded, old_text), type=to_arrow(parse_type(old_text)))
    arrays["__row"] = pa.array(range(length), pa.int64())
    return pa.table(arrays)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, D) and isinstance(b, D):
        return a == b  # (PySpark's collect may show another exponent, e.g. 4.00E-10 for 4E-10)
    return type(a) is type(b) and a == b


def _assert_agree(spark, tmp_path, cases: list[tuple[str, str, list]]) -> None:
    old, new = _schemas([(o, n) for o, n, _ in cases])
    table = _table(cases)
    path = tmp_path / "rows.parquet"
    pq.write_table(table, path)
    frame = spark.read.parquet(str(path))
    by_id = {c.id: c for c in new.columns}
    for mode in ("fail", "null"):
        result = convert_arrow(table, old, new, on_cast_error=mode, max_failures=10**9)
        converted, flags = convert_frame(frame, old, new, on_cast_error=mode)
        assert converted.columns[: len(new.columns)] == [c.name for c in new.columns]
        assert converted.columns[len(new.columns)] == "__row"
        assert converted.columns[len(new.columns) + 1 :] == flags
        rows = {row["__row"]: row for row in converted.collect()}
        assert len(rows) == table.num_rows
        python = result.table.to_pylist()
        disagreements = []
        for i, (old_text, new_text, _) in enumerate(cases):
            column = by_id[i + 1]
            for r in range(table.num_rows):
                mine, theirs = python[r][column.name], rows[r][column.name]
                if column.type.name == "LARGEINT" and theirs is not None:
                    theirs = D(theirs)
                if not (mine is None and theirs is None) and not _same(mine, theirs):
                    disagreements.append((f"{old_text}->{new_text}", table.column(f"c{i}")[r].as_py(), mine, theirs))
        assert not disagreements, disagreements[:10]
        spark_failed = {
            (c.name, r) for c in new.columns if failure_column(c.id) in flags for r, row in rows.items() if row[failure_column(c.id)]
        }
        if mode == "fail":
            python_failed = {(f.column, f.row) for f in result.failures}
            assert result.nulled == {}
        else:
            assert result.failures == ()
            python_failed = {
                (c.name, r)
                for c in new.columns
                for r in range(table.num_rows)
                if python[r][c.name] is None and table.column(f"c{c.id - 1}")[r].as_py() is not None and c.name in result.nulled
            }
            counts = {}
            for name, _ in spark_failed:
                counts[name] = counts.get(name, 0) + 1
            assert result.nulled == counts
        assert python_failed == spark_failed, sorted(python_failed ^ spark_failed)[:10]
        for i, (old_text, new_text, _) in enumerate(cases):  # flags exist exactly where failure is possible
            assert (failure_column(i + 1) in flags) == can_fail(parse_type(old_text), parse_type(new_text))


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------

WHITESPACE = ["", " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c"]


def _decorate(rng: random.Random, text: str) -> str:
    return rng.choice(WHITESPACE) + text + rng.choice(WHITESPACE)


def _integer_texts(rng: random.Random) -> list[str]:
    edges = [
        "0",
        "-0",
        "+0",
        "  12  ",
        "\t-5\n",
        "007",
        "-007",
        "+42",
        "1.5",
        "1.0",
        "1e3",
        "",
        " ",
        "abc",
        "12a",
        "+",
        "-",
        "--1",
        "+-1",
        "1 2",
        *INTEGER_BOUNDARY_TEXTS,
        "255",
        "9" * 38,
        "-" + "9" * 38,
        "9" * 39,
        "1" + "0" * 38,
        "0" * 60 + "1",
        "-" + "0" * 60 + "127",
        "\u0661\u0662",
        "\uff11\uff12",
        "\u00a012",
        "12\u2028",
        "12\n",
        "\x0b12\x0c",
        "0x1F",
        "1_000",
        "\u200b1",
        "1\x00",
    ]
    values = list(edges)
    for _ in range(RANDOM):
        magnitude = rng.choice([3, 5, 10, 19, 20, 38, 40])
        number = rng.randint(-(10**magnitude), 10**magnitude)
        text = str(abs(number))
        if rng.random() < 0.2:
            text = "0" * rng.randint(1, 5) + text
        sign = "-" if number < 0 else rng.choice(["", "", "+"])
        values.append(_decorate(rng, sign + text))
    return values


def _number_texts(rng: random.Random) -> list[str]:
    edges = [
        "1.5",
        "  -2.25e-3 ",
        ".5",
        "5.",
        "-.5",
        "+5.",
        "1e10",
        "1E+10",
        "1e-10",
        "1e400",
        "-1e400",
        "1e-400",
        "1e-46",
        "1e-45",
        "7e-46",
        "3.4028235e38",
        "3.4028236e38",
        "-3.4028236e38",
        "3.40282356779733661637539395458142568447e38",
        "3.40282356779733661637539395458142568448e38",
        "1e39",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        "inf",
        "-inf",
        "nan",
        "Infinity",
        "NaN",
        "1.5f",
        "1.5d",
        "0x1p3",
        "",
        ".",
        "e5",
        "1e",
        "1e+",
        "--1",
        "1,5",
        "+.5e-0",
        "-0",
        "-0.0",
        "0",
        "0e99999999999",
        "1e99999999999999999999",
        "1e-99999999999999999999",
        "0.1",
        "0.2",
        "1.00000005960464477539062500000000001",
        "1.000000059604644775390625",
        "16777217",
        "9007199254740993",
        "123456789012345678901234567890",
        "\u00a01",
        "1 ",
        " 1",
        "0000.0001000",
        "1e0000000000000000000005",
        "4.9e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "1.4e-45",
        "7.006492321624085e-46",
        "7.006492321624087e-46",
    ]
    values = list(edges)
    for i in range(RANDOM):
        kind = i % 4
        if kind == 0:  # a decimal right next to a float32 rounding boundary
            bits = rng.randint(1, 0x7F7FFFFE)
            low = D(struct.unpack("<f", struct.pack("<I", bits))[0])
            high = D(struct.unpack("<f", struct.pack("<I", bits + 1))[0])
            middle = (low + high) / 2
            nudge = middle.scaleb(-rng.randint(15, 30)) * rng.choice([-1, 0, 1])
            text = str(middle + nudge)
        elif kind == 1:
            text = f"{rng.randint(0, 10 ** rng.randint(1, 25))}e{rng.randint(-60, 45)}"
        elif kind == 2:
            text = f"{rng.randint(0, 10**9)}.{rng.randint(0, 10**12):012d}"
        else:
            text = repr(rng.uniform(-1, 1) * 10 ** rng.randint(-320, 308))
        if rng.random() < 0.3 and not text.startswith("-"):
            text = "-" + text
        values.append(_decorate(rng, text))
    return values


def _decimal_texts(rng: random.Random) -> list[str]:
    edges = [
        "123.455",
        "-123.455",
        "0.005",
        "-0.005",
        "0.0049999",
        "-0.0049999",
        "99999999.994",
        "99999999.995",
        "-99999999.995",
        "1e5",
        "1.2345e2",
        "1e-3",
        "1E+7",
        "1e8",
        "1e-8",
        "12345678901234567890123456789012345678.9",
        "12345678901234567890123456789012345678",
        "99999999999999999999999999999999999999.5",
        "0e99999",
        "0.000e-99999999",
        "1e999999",
        "1e-999999",
        "-1e-999999",
        "1e-2147483649",
        "1e2147483648",
        "0e2147483648",
        "1e99999",
        "1e-99999",
        "0" * 45 + "1.5",
        "1.2345678901234567890123456789012345678901234567890",
        "0.00000000000000000000000000000000000000000000000005",
        "",
        "abc",
        " 1.5 ",
        "1.5e",
        "1..5",
        ".",
        "-",
        "+.5",
        "5.",
        "-0",
        "-0.001",
        "0.1e1",
        "10e-1",
        "1e+0",
        "1e-0",
        "0.5",
        "1.5",
        "2.5",
        "-2.5",
        "0.995",
        "9.995",
        "0.0000001",
        "0.00000005",
        "NaN",
        "Infinity",
        "1234567890123456789012345678901234567890e-30",
        "-98765432109876543210987654321098765432109876e-35",
        "0.00000000000000000000000000000000000000001234567e40",
        "5e-11",
        "-5e-11",
        "4.99999e-11",
        "0.5e-10",
        "1e37",
        "9.99999999999999999999999999999999999999e37",
        "99999999.995e0",
        "9999999999.995E-2",
    ]
    values = list(edges)
    for _ in range(RANDOM):
        whole = rng.randint(0, 10 ** rng.randint(0, 12))
        fraction = str(rng.randint(0, 10 ** rng.randint(0, 8)))
        text = f"{whole}.{fraction}" if rng.random() < 0.8 else str(whole)
        if rng.random() < 0.2:
            text += f"e{rng.randint(-12, 12)}"
        if rng.random() < 0.4:
            text = "-" + text
        values.append(_decorate(rng, text))
    return values


def _date_texts(rng: random.Random) -> list[str]:
    edges = [
        "2024-01-31",
        "2024-1-5",
        "24-01-31",
        "68-12-31",
        "69-01-01",
        "00-02-29",
        "01-02-29",
        "20240131",
        "240131",
        "690101",
        "680101",
        "2024/01/31",
        "24/1/5",
        "2023-02-29",
        "2024-02-29",
        "1900-02-29",
        "2000-02-29",
        "2100-02-29",
        "2400-02-29",
        "2024-13-01",
        "2024-00-10",
        "2024-01-00",
        "2024-04-31",
        "0000-01-01",
        "0001-01-01",
        "9999-12-31",
        "00000101",
        "00010101",
        " 2024-01-31 ",
        "\t240131\n",
        "2024-01-31T00:00",
        "2024-01-31 00:00:00",
        "2024-01/31",
        "2024/01-31",
        "2024-001-01",
        "2024-01-001",
        "202401311",
        "2401311",
        "24013",
        "12024-01-01",
        "2024-1-",
        "-2024-01-01",
        "",
        "abc",
        "2024.01.31",
        "31-01-2024",
        "1-1-1",
        "024-01-01",
        "2024--01-01",
        "\u0662024-01-01",
        "99-12-31",
        "99991231",
        "19991231",
        "991231",
        "000229",
        "040229",
        "030229",
    ]
    values = list(edges)
    for i in range(RANDOM):
        year = rng.randint(1, 9999)
        month = rng.randint(0, 13)
        day = rng.randint(0, 32)
        form = i % 6
        if form == 0:
            text = f"{year:04d}-{month}-{day}" if rng.random() < 0.5 else f"{year:04d}-{month:02d}-{day:02d}"
        elif form == 1:
            text = f"{year % 100:02d}-{month}-{day:02d}"
        elif form == 2:
            text = f"{year:04d}{month:02d}{day:02d}"
        elif form == 3:
            text = f"{year % 100:02d}{month:02d}{day:02d}"
        elif form == 4:
            text = f"{year:04d}/{month:02d}/{day}"
        else:
            text = f"{year % 100:02d}/{month}/{day}"
        values.append(_decorate(rng, text) if rng.random() < 0.3 else text)
    return values


def _yyyymmdd(rng: random.Random, bits: int) -> list[int]:
    edges = [
        20240131,
        20240229,
        20230229,
        19000229,
        20000229,
        10000101,
        9991231,
        99991231,
        100000101,
        -20240131,
        0,
        1,
        20241301,
        20240100,
        20240132,
        20240431,
        19700101,
        10000100,
        99991232,
    ]
    if bits == 64:
        edges += [2**63 - 1, -(2**63), 2024013100, 202401310000]
    values = list(edges)
    for _ in range(RANDOM):
        if rng.random() < 0.7:
            values.append(rng.randint(1000, 9999) * 10000 + rng.randint(0, 13) * 100 + rng.randint(0, 32))
        else:
            values.append(rng.randint(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
    return values


def _datetimes(rng: random.Random) -> list[dt.datetime]:
    base = dt.datetime(1, 1, 1)
    edges = [
        base,
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1970, 1, 1),
        dt.datetime(2024, 2, 29, 12),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    ]
    return edges + [base + dt.timedelta(microseconds=rng.randint(0, 315537897599999999)) for _ in range(RANDOM)]


def _doubles(rng: random.Random) -> list[float]:
    edges = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        1.5,
        -1.5,
        2.5,
        127.0,
        128.0,
        -128.0,
        -129.0,
        127.5,
        2.0**31,
        2.0**31 - 1,
        -(2.0**31),
        -(2.0**31) - 1,
        2.0**63,
        -(2.0**63),
        2.0**63 - 1024,
        2.0**53 + 2,
        2.0**60,
        1e23,
        2.82879384806159e17,
        1e38,
        -1e38,
        9.999999999999999e37,
        1e39,
        0.1,
        0.125,
        -0.125,
        0.005,
        0.015,
        1.005,
        123.455,
        99999999.995,
        1e-7,
        5e-324,
        1.7976931348623157e308,
        FLOAT32_MAX,
        3.4028235677973366e38,
        3.4028235677973362e38,
        -3.4028235677973366e38,
        1.401298464324817e-45,
        7.006492321624085e-46,
        1e-50,
        1e7,
        9999999.0,
        0.001,
        1e-3,
        math.inf,
        -math.inf,
        math.nan,
        123456789.125,
        4503599627370497.5,
    ]
    values = list(edges)
    for i in range(RANDOM):
        kind = i % 6
        if kind == 0:
            values.append(struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0])
        elif kind == 1:
            values.append(rng.uniform(-1, 1) * 10 ** rng.randint(-30, 40))
        elif kind == 2:
            values.append(float(rng.randint(-(2**64), 2**64) >> rng.randint(0, 64)))
        elif kind == 3:
            values.append(round(rng.uniform(-1e6, 1e6), rng.randint(0, 4)))
        elif kind == 4:
            values.append(float(rng.randint(-300, 300)))
        else:
            values.append(rng.uniform(-1, 1) * 10 ** rng.randint(-12, 0))
    return values


def _floats(rng: random.Random) -> list[float]:
    values = []
    for v in _doubles(rng):
        if math.isnan(v) or math.isinf(v):
            values.append(v)
        else:
            values.append(round_to_float32(D(v)))
    values += [struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0] for _ in range(100)]
    return values


def _decimals(rng: random.Random, precision: int, scale: int) -> list[D]:
    top = 10**precision - 1
    units = [0, 1, -1, top, -top, 5, -5, 15, -15, 25, 10**scale, -(10**scale), 10**scale // 2, 10**scale + 5]
    for i in range(RANDOM):
        kind = i % 4
        if kind == 0:
            units.append(rng.randint(-top, top))
        elif kind == 1:
            units.append(rng.randint(-(10**6), 10**6))
        elif kind == 2:  # a whole number
            units.append(
                rng.randint(-(10 ** rng.randint(0, max(0, precision - scale))), 10 ** rng.randint(0, max(0, precision - scale))) * 10**scale
            )
        else:  # ties and near-ties of rounding to fewer digits
            units.append(rng.randint(-(10**8), 10**8) * 10 ** max(0, scale - 3) + rng.choice([0, 5, 4, 6]) * 10 ** max(0, scale - 4))
    return [D(u).scaleb(-scale, EXACT) for u in units if abs(u) <= top]


def _integers(rng: random.Random, bits: int) -> list[int]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    edges = [
        0,
        1,
        -1,
        low,
        high,
        127,
        128,
        -128,
        -129,
        32767,
        32768,
        99999,
        100000,
        -99999,
        -100000,
        2**24 + 1,
        2**53 + 1,
        2**60 + 2**36 + 1,
        2**60 + 2**36,
        2**62 + 2**38 + 2**38 - 1,
    ]
    values = [v for v in edges if low <= v <= high]
    values += [rng.randint(low, high) >> rng.randint(0, bits - 1) for _ in range(RANDOM)]
    return values


def _largeints(rng: random.Random) -> list[int]:
    top = 10**38 - 1
    edges = [0, 1, -1, top, -top, 2**63, -(2**63) - 1, 2**100 + 1, 10**20, 2**127 - 1]
    return [v for v in edges if abs(v) <= top] + [rng.randint(-top, top) >> rng.randint(0, 126) for _ in range(RANDOM)]


# --------------------------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------------------------


def _cases(name: str) -> list[tuple[str, str, list]]:
    rng = random.Random(name)
    if name == "string_to_integer":
        texts = _integer_texts(rng)
        return [("STRING", t, texts) for t in ("TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT")] + [
            ("VARCHAR(50)", "INT", texts),
            ("CHAR(50)", "BIGINT", [t[:50] for t in texts]),
        ]
    if name == "string_to_float":
        texts = _number_texts(rng)
        return [("STRING", "DOUBLE", texts), ("STRING", "FLOAT", texts), ("VARCHAR(200)", "FLOAT", texts)]
    if name == "string_to_decimal":
        texts = _decimal_texts(rng)
        return [
            ("STRING", t, texts)
            for t in ("DECIMAL(10,2)", "DECIMAL(38,0)", "DECIMAL(38,38)", "DECIMAL(5,5)", "DECIMAL(18,4)", "DECIMAL(38,10)")
        ]
    if name == "string_to_date":
        texts = _date_texts(rng)
        return [("STRING", "DATE", texts), ("VARCHAR(30)", "DATE", texts)]
    if name == "integer_to_date":
        return [("INT", "DATE", _yyyymmdd(rng, 32)), ("BIGINT", "DATE", _yyyymmdd(rng, 64))]
    if name == "datetime_to_date":
        return [("DATETIME", "DATE", _datetimes(rng))]
    if name == "float_to_integer":
        doubles, floats = _doubles(rng), _floats(rng)
        return [("DOUBLE", t, doubles) for t in ("TINYINT", "INT", "BIGINT", "LARGEINT")] + [
            ("FLOAT", t, floats) for t in ("SMALLINT", "BIGINT", "LARGEINT")
        ]
    if name == "exact_to_integer":
        return [
            ("DECIMAL(10,2)", "TINYINT", _decimals(rng, 10, 2)),
            ("DECIMAL(38,10)", "BIGINT", _decimals(rng, 38, 10)),
            ("DECIMAL(38,30)", "INT", _decimals(rng, 38, 30)),
            ("DECIMAL(38,5)", "LARGEINT", _decimals(rng, 38, 5)),
            ("DECIMAL(20,0)", "BIGINT", _decimals(rng, 20, 0)),
            ("LARGEINT", "BIGINT", _largeints(rng)),
            ("LARGEINT", "TINYINT", _largeints(rng)),
            ("BIGINT", "TINYINT", _integers(rng, 64)),
            ("BIGINT", "INT", _integers(rng, 64)),
            ("INT", "SMALLINT", _integers(rng, 32)),
            ("SMALLINT", "TINYINT", _integers(rng, 16)),
        ]
    if name == "to_decimal":
        doubles, floats = _doubles(rng), _floats(rng)
        return [
            ("DOUBLE", "DECIMAL(10,2)", doubles),
            ("DOUBLE", "DECIMAL(38,0)", doubles),
            ("DOUBLE", "DECIMAL(20,18)", doubles),
            ("DOUBLE", "DECIMAL(38,38)", doubles),
            ("FLOAT", "DECIMAL(10,2)", floats),
            ("FLOAT", "DECIMAL(20,10)", floats),
            ("DECIMAL(20,4)", "DECIMAL(10,2)", _decimals(rng, 20, 4)),
            ("DECIMAL(38,10)", "DECIMAL(38,0)", _decimals(rng, 38, 10)),
            ("DECIMAL(12,6)", "DECIMAL(12,2)", _decimals(rng, 12, 6)),
            ("INT", "DECIMAL(5,2)", _integers(rng, 32)),
            ("BIGINT", "DECIMAL(10,0)", _integers(rng, 64)),
            ("LARGEINT", "DECIMAL(20,0)", _largeints(rng)),
            ("TINYINT", "DECIMAL(2,0)", _integers(rng, 8)),
        ]
    if name == "to_float":
        return [
            ("DOUBLE", "FLOAT", _doubles(rng)),
            ("BIGINT", "FLOAT", _integers(rng, 64)),
            ("INT", "FLOAT", _integers(rng, 32)),
            ("LARGEINT", "FLOAT", _largeints(rng)),
            ("DECIMAL(38,10)", "FLOAT", _decimals(rng, 38, 10)),
            ("DECIMAL(10,3)", "FLOAT", _decimals(rng, 10, 3)),
            ("DECIMAL(38,38)", "FLOAT", _decimals(rng, 38, 38)),
            ("BIGINT", "DOUBLE", _integers(rng, 64)),
            ("INT", "DOUBLE", _integers(rng, 32)),
            ("LARGEINT", "DOUBLE", _largeints(rng)),
            ("DECIMAL(38,10)", "DOUBLE", _decimals(rng, 38, 10)),
            ("DECIMAL(18,17)", "DOUBLE", _decimals(rng, 18, 17)),
        ]
    if name == "to_string":
        doubles, floats = _doubles(rng), _floats(rng)
        return [
            ("DOUBLE", "STRING", doubles),
            ("DOUBLE", "VARCHAR(10)", doubles),
            ("FLOAT", "STRING", floats),
            ("FLOAT", "VARCHAR(8)", floats),
            ("DECIMAL(38,38)", "STRING", _decimals(rng, 38, 38)),
            ("DECIMAL(38,10)", "VARCHAR(12)", _decimals(rng, 38, 10)),
            ("DECIMAL(10,2)", "VARCHAR(5)", _decimals(rng, 10, 2)),
            ("DECIMAL(20,0)", "STRING", _decimals(rng, 20, 0)),
            ("BIGINT", "VARCHAR(5)", _integers(rng, 64)),
            ("TINYINT", "VARCHAR(3)", _integers(rng, 8)),
            ("TINYINT", "VARCHAR(4)", _integers(rng, 8)),
            ("INT", "STRING", _integers(rng, 32)),
            ("LARGEINT", "STRING", _largeints(rng)),
            ("LARGEINT", "VARCHAR(20)", _largeints(rng)),
        ]
    if name == "widening":
        return [
            ("INT", "BIGINT", _integers(rng, 32)),
            ("SMALLINT", "LARGEINT", _integers(rng, 16)),
            ("BIGINT", "LARGEINT", _integers(rng, 64)),
            ("FLOAT", "DOUBLE", _floats(rng)),
            ("DECIMAL(10,2)", "DECIMAL(12,4)", _decimals(rng, 10, 2)),
            ("VARCHAR(5)", "STRING", ["", "a", " b ", "ä😀"]),
            ("CHAR(3)", "VARCHAR(10)", ["abc", "x"]),
            ("DATE", "DATETIME", [dt.date(1, 1, 1), dt.date(1969, 12, 31), dt.date(9999, 12, 31)]),
        ]
    raise AssertionError(name)


def test_defaults_and_shape_agree(spark, tmp_path):
    """Added columns (initial defaults of every type), a dropped column, renames and reordering."""
    old = SchemaVersion(
        3, 1, (Column(1, "id", parse_type("BIGINT")), Column(2, "gone", parse_type("STRING")), Column(3, "txt", parse_type("STRING")))
    )
    defaults = [
        ("BOOLEAN", False),
        ("TINYINT", -128),
        ("SMALLINT", 12),
        ("INT", -5),
        ("BIGINT", 2**63 - 1),
        ("LARGEINT", -(10**38) + 1),
        ("FLOAT", round_to_float32(D("0.1"))),
        ("DOUBLE", 1e-300),
        ("DECIMAL(38,38)", D("1E-38")),
        ("DECIMAL(10,2)", D("-3.50")),
        ("CHAR(3)", "abc"),
        ("VARCHAR(5)", "ä😀"),
        ("STRING", ""),
        ("DATE", dt.date(1, 1, 1)),
        ("DATETIME", dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
        ("DATETIME", dt.datetime(1970, 1, 1, 0, 0, 0, 1)),
        ("INT", None),
        ("DATE", None),
    ]
    added = tuple(Column(10 + i, f"d{i}", parse_type(t), initial_default=v) for i, (t, v) in enumerate(defaults))
    new = SchemaVersion(3, 2, added[:5] + (Column(3, "n", parse_type("INT")), Column(1, "key", parse_type("LARGEINT"))) + added[5:])
    table = pa.table(
        {
            "id": pa.array([1, None, 3], pa.int64()),
            "gone": pa.array(["a", "b", None]),
            "txt": pa.array(["1", "x", None]),
            "__row": pa.array([0, 1, 2], pa.int64()),
        }
    )
    path = tmp_path / "rows.parquet"
    pq.write_table(table, path)
    converted, flags = convert_frame(spark.read.parquet(str(path)), old, new)
    assert flags == [failure_column(3)]
    assert converted.columns == [c.name for c in new.columns] + ["__row"] + flags
    rows = {row["__row"]: row.asDict() for row in converted.collect()}
    python = convert_arrow(table, old, new).table.to_pylist()
    for r, mine in enumerate(python):
        theirs = rows[r]
        for name, value in mine.items():
            other = theirs[name]
            if name == "key" and other is not None:
                other = D(other)
            assert (value is None and other is None) or _same(value, other), (name, value, other)


FAMILIES = [
    "string_to_integer",
    "string_to_float",
    "string_to_decimal",
    "string_to_date",
    "integer_to_date",
    "datetime_to_date",
    "float_to_integer",
    "exact_to_integer",
    "to_decimal",
    "to_float",
    "to_string",
    "widening",
]


@pytest.mark.parametrize("name", FAMILIES)
def test_python_and_spark_agree(spark, tmp_path, name):
    _assert_agree(spark, tmp_path, _cases(name))
