"""alterflow.values.types against real Spark: Parquet written by pyarrow reads back as `to_spark`, and the
bucket of a key is the same three ways, for every distribution-eligible type: `spark_bucket_expr`
(Spark), `bucket_array` (numpy over the Arrow columns) and `bucket_of` (Python, one row); the raw
hash equals Spark's `hash()`."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Context, Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.bucketing import bucket_array, bucket_of, hash_array, hash_of, spark_bucket_expr
from alterflow.values.types import DataType, InvalidType, coerce_value, parse_type, to_arrow, to_spark

pytestmark = pytest.mark.spark

ALL_TYPES = [
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "LARGEINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL(10,2)",
    "DECIMAL(38,0)",
    "DECIMAL(38,38)",
    "CHAR(3)",
    "VARCHAR(20)",
    "STRING",
    "DATE",
    "DATETIME",
]
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
_TEXTS = [
    "",
    "a",
    "ab",
    "abc",
    "abcd",
    "abcde",
    "abcdefg",
    "abcdefgh",
    "ä",
    "é",
    "xé",
    "ñandú",
    "日本語",
    "😀",
    "😀x",
    "x y",
    "\\N",
    "a\x01b",
    "'quoted'",
    "Ünïcödé",
    "\t",
    "long " * 40,
]


def _integer_values(rng: random.Random, low: int, high: int) -> list:
    edges = [low, low + 1, -1, 0, 1, high - 1, high]
    # Where the minimal two's complement bytes of a LARGEINT change length, and the 64-bit edges.
    edges += [v for e in (7, 8, 15, 31, 32, 63, 64, 95, 126) for d in (-1, 0, 1) for v in (2**e + d, -(2**e) - d) if low <= v <= high]
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
    edges = [dt.date(1, 1, 1), dt.date(1582, 10, 15), dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(9999, 12, 31)]
    return edges + [dt.date(1, 1, 1) + dt.timedelta(days=rng.randint(0, 3652058)) for _ in range(ROWS)]


def _datetime_values(rng: random.Random) -> list:
    base = dt.datetime(1, 1, 1)
    edges = [
        base,
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1900, 6, 1, 0, 0, 0, 1),
        dt.datetime(1970, 1, 1),
        dt.datetime(2024, 1, 1, 10),
        dt.datetime(2024, 1, 1, 10, 0, 0, 500000),
        dt.datetime(2024, 1, 1, 10, 0, 0, 123000),
        dt.datetime(2024, 1, 1, 10, 0, 0, 1),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    ]
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


BUCKET_TYPES = [
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "LARGEINT",
    "DECIMAL(9,2)",
    "DECIMAL(10,2)",
    "DECIMAL(5,0)",
    "DECIMAL(18,4)",
    "DECIMAL(18,9)",
    "DECIMAL(19,0)",
    "DECIMAL(20,10)",
    "DECIMAL(38,0)",
    "DECIMAL(38,10)",
    "DECIMAL(38,38)",
    "CHAR(3)",
    "VARCHAR(20)",
    "STRING",
    "DATE",
    "DATETIME",
]
BUCKET_COUNTS = (1, 2, 7, 16)


def _assert_buckets_agree(spark, tmp_path, types: list[DataType], columns: list[list]):
    """Spark's hash() and spark_bucket_expr over the Parquet file equal hash_array / bucket_array over
    the Arrow columns written and hash_of / bucket_of over the Python values, row by row."""
    from pyspark.sql import functions as F

    types = tuple(types)
    data = {f"k{i}": (t, _arrow_values(values, t)) for i, (t, values) in enumerate(zip(types, columns))}
    df = _write_and_read(spark, tmp_path, data)
    names = list(data)
    spark_hash = F.hash(*[F.col(name).cast(to_spark(t)) for name, t in zip(names, types)]).alias("h")
    spark_buckets = [spark_bucket_expr(names, types, b).alias(f"b{b}") for b in BUCKET_COUNTS]
    in_spark = {row["id"]: row for row in df.select("id", spark_hash, *spark_buckets).collect()}
    arrays = [pa.array(values, to_arrow(t)) for t, values in data.values()]
    in_arrow = {"h": hash_array(arrays, types).tolist()}
    in_arrow.update({f"b{b}": bucket_array(arrays, types, b).tolist() for b in BUCKET_COUNTS})
    rows = list(zip(*columns))
    assert len(in_spark) == len(rows)
    mismatches = []
    for i, row in enumerate(rows):
        in_python = {"h": hash_of(row, types), **{f"b{b}": bucket_of(row, types, b) for b in BUCKET_COUNTS}}
        for field, value in in_python.items():
            if not value == in_arrow[field][i] == in_spark[i][field]:
                mismatches.append((row, field, value, in_arrow[field][i], in_spark[i][field]))
    assert not mismatches, mismatches[:5]


@pytest.mark.parametrize("type_text", BUCKET_TYPES)
def test_buckets_match_spark(spark, tmp_path, type_text):
    t = parse_type(type_text)
    values = _values_for(t, random.Random(type_text))
    _assert_buckets_agree(spark, tmp_path, [t], [values])


@pytest.mark.parametrize(
    "type_texts",
    [
        ("INT", "STRING"),
        ("DATE", "BIGINT", "VARCHAR(20)"),
        ("DECIMAL(20,10)", "DATETIME", "BOOLEAN"),
        ("LARGEINT", "CHAR(3)", "TINYINT", "DATE"),
        ("DECIMAL(9,2)", "SMALLINT", "DECIMAL(38,10)"),
    ],
)
def test_multi_column_buckets_match_spark(spark, tmp_path, type_texts):
    types = [parse_type(x) for x in type_texts]
    rng = random.Random(",".join(type_texts))
    columns = []
    for t in types:
        values = _values_for(t, rng)
        rng.shuffle(values)  # mixes NULLs into different rows per column
        columns.append(values)
    size = min(len(c) for c in columns)
    _assert_buckets_agree(spark, tmp_path, types, [c[:size] for c in columns])


def test_spark_bucket_expr_casts_each_column_to_its_type(spark):
    """A key column Spark holds in a wider type hashes as its own type (here INT, not BIGINT)."""
    df = spark.createDataFrame([(1,), (-7,), (None,)], "k BIGINT")
    int_type = parse_type("INT")
    got = [row[0] for row in df.select(spark_bucket_expr(["k"], (int_type,), 16)).collect()]
    assert got == [bucket_of((v,), (int_type,), 16) for v in (1, -7, None)] == [3, 15, 10]


def test_spark_bucket_expr_rejects_float_keys(spark):
    with pytest.raises(InvalidType):
        spark_bucket_expr(["x"], (parse_type("DOUBLE"),), 4)
