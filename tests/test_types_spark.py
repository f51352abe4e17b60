"""alterflow.types against real Spark: Parquet written by pyarrow reads back as `to_spark`, and
`bucket_of` (Python) equals `spark_bucket_expr` (Spark) for every distribution-eligible type."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Context, Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.types import (
    DataType,
    InvalidType,
    bucket_of,
    coerce_value,
    parse_type,
    spark_bucket_expr,
    to_arrow,
    to_spark,
)

pytestmark = pytest.mark.spark

ALL_TYPES = ["BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT", "FLOAT", "DOUBLE",
             "DECIMAL(10,2)", "DECIMAL(38,0)", "DECIMAL(38,38)", "CHAR(3)", "VARCHAR(20)", "STRING",
             "DATE", "DATETIME"]
ROWS = 300


def _write_and_read(spark, tmp_path, columns: dict[str, tuple[DataType, list]]):
    """Write the columns with pyarrow (to_arrow types) and read them back with Spark."""
    ids = list(range(len(next(iter(columns.values()))[1])))
    arrays = {"id": pa.array(ids, pa.int64())}
    arrays.update({name: pa.array(values, to_arrow(t)) for name, (t, values) in columns.items()})
    path = tmp_path / "data.parquet"
    pq.write_table(pa.table(arrays), path)
    return spark.read.parquet(str(path))


def test_arrow_and_spark_types_agree(spark, tmp_path):
    types = {f"c{i}": parse_type(text) for i, text in enumerate(ALL_TYPES)}
    df = _write_and_read(spark, tmp_path, {name: (t, [None]) for name, t in types.items()})
    read = {field.name: field.dataType for field in df.schema.fields}
    for name, t in types.items():
        assert read[name] == to_spark(t), t.sql()


# --------------------------------------------------------------------------------------------
# Generated keys
# --------------------------------------------------------------------------------------------

_EXACT = Context(prec=100)
_TEXTS = ["", "a", "abc", "ä", "日本語", "😀", "x y", "\\N", "a\x01b", "'quoted'", "Ünïcödé", "\t"]


def _integer_values(rng: random.Random, low: int, high: int) -> list:
    edges = [low, low + 1, -1, 0, 1, high - 1, high]
    return edges + [rng.randint(low, high) for _ in range(ROWS - len(edges))]


def _decimal_values(rng: random.Random, precision: int, scale: int) -> list:
    top = 10**precision - 1
    edges = [u for u in (-top, top, 0, 1, -1, 10, 10**scale, 10**scale - 1) if abs(u) <= top]
    units = edges + [rng.choice([rng.randint(-top, top), rng.randint(-999, 999)]) for _ in range(ROWS)]
    return [Decimal(u).scaleb(-scale, _EXACT) for u in units]


def _text_values(rng: random.Random, max_length: int) -> list:
    alphabet = "abcXYZ09 äé日😀\x01\\-_"
    values = [s for s in _TEXTS if len(s) <= max_length]
    while len(values) < ROWS:
        values.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_length))))
    return values


def _date_values(rng: random.Random) -> list:
    edges = [dt.date(1, 1, 1), dt.date(1582, 10, 15), dt.date(1970, 1, 1), dt.date(9999, 12, 31)]
    return edges + [dt.date(1, 1, 1) + dt.timedelta(days=rng.randint(0, 3652058)) for _ in range(ROWS)]


def _datetime_values(rng: random.Random) -> list:
    base = dt.datetime(1, 1, 1)
    edges = [base, dt.datetime(1970, 1, 1), dt.datetime(2024, 1, 1, 10), dt.datetime(2024, 1, 1, 10, 0, 0, 500000),
             dt.datetime(2024, 1, 1, 10, 0, 0, 123000), dt.datetime(2024, 1, 1, 10, 0, 0, 1),
             dt.datetime(9999, 12, 31, 23, 59, 59, 999999)]
    values = []
    for i in range(ROWS):
        moment = base + dt.timedelta(seconds=rng.randint(0, 315537897599))
        micro = [0, rng.randint(0, 999999), rng.choice([100000, 120000, 123400, 10, 999999])][i % 3]
        values.append(moment.replace(microsecond=micro))
    return edges + values


def _values_for(t: DataType, rng: random.Random) -> list:
    if t.name == "BOOLEAN":
        values = [True, False] * (ROWS // 2)
    elif t.name == "LARGEINT":
        values = _integer_values(rng, -(10**38) + 1, 10**38 - 1)
    elif t.is_integer:
        bits = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}[t.name]
        values = _integer_values(rng, -(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    elif t.name == "DECIMAL":
        values = _decimal_values(rng, t.precision, t.scale)
    elif t.is_string:
        values = _text_values(rng, min(t.length or 30, 30))
    elif t.name == "DATE":
        values = _date_values(rng)
    else:
        values = _datetime_values(rng)
    values = [coerce_value(v, t) for v in values]
    return values + [None] * 5


def _arrow_values(values: list, t: DataType) -> list:
    """LARGEINT is stored as decimal(38,0): pyarrow wants Decimal objects for it."""
    if t.name == "LARGEINT":
        return [None if v is None else Decimal(v) for v in values]
    return values


BUCKET_TYPES = ["BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT", "DECIMAL(10,2)",
                "DECIMAL(5,0)", "DECIMAL(20,10)", "DECIMAL(38,0)", "DECIMAL(38,38)", "DECIMAL(18,9)",
                "CHAR(3)", "VARCHAR(20)", "STRING", "DATE", "DATETIME"]


def _assert_buckets_agree(spark, tmp_path, types: list[DataType], columns: list[list], buckets: int):
    data = {f"k{i}": (t, _arrow_values(values, t)) for i, (t, values) in enumerate(zip(types, columns))}
    df = _write_and_read(spark, tmp_path, data)
    names = list(data)
    expr = spark_bucket_expr(names, tuple(types), buckets)
    in_spark = {row["id"]: row["b"] for row in df.select("id", expr.alias("b")).collect()}
    rows = list(zip(*columns))
    in_python = {i: bucket_of(row, tuple(types), buckets) for i, row in enumerate(rows)}
    mismatches = [(rows[i], in_python[i], in_spark[i]) for i in in_python if in_python[i] != in_spark[i]]
    assert not mismatches, mismatches[:5]


@pytest.mark.parametrize("type_text", BUCKET_TYPES)
def test_bucket_of_matches_spark(spark, tmp_path, type_text):
    t = parse_type(type_text)
    values = _values_for(t, random.Random(type_text))
    # 2**32 buckets compares the whole crc32, 7 the modulo.
    for buckets in (2**32, 7):
        (tmp_path / str(buckets)).mkdir()
        _assert_buckets_agree(spark, tmp_path / str(buckets), [t], [values], buckets)


@pytest.mark.parametrize(
    "type_texts",
    [("INT", "STRING"), ("DATE", "BIGINT", "VARCHAR(20)"), ("DECIMAL(20,10)", "DATETIME", "BOOLEAN"),
     ("LARGEINT", "CHAR(3)", "TINYINT", "DATE")],
)
def test_multi_column_bucket_of_matches_spark(spark, tmp_path, type_texts):
    types = [parse_type(x) for x in type_texts]
    rng = random.Random(",".join(type_texts))
    columns = []
    for t in types:
        values = _values_for(t, rng)
        rng.shuffle(values)  # mixes NULLs into different rows per column
        columns.append(values)
    size = min(len(c) for c in columns)
    _assert_buckets_agree(spark, tmp_path, types, [c[:size] for c in columns], 16)


def test_spark_bucket_expr_rejects_float_keys(spark):
    with pytest.raises(InvalidType):
        spark_bucket_expr(["x"], (parse_type("DOUBLE"),), 4)
