"""`projection_sql` (the SQL-text projection `read_snapshot` uses, one `selectExpr` per file group)
returns exactly what the Column-API `projection` returns: same values, same Spark types, for every
type's initial default (strings with quotes, backslashes and non-ASCII included), casts and renames."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.arrow_schema import arrow_schema
from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.read.evolved_read import projection_sql, spark_schema
from alterflow.values.types import parse_type
from tests.support.spark_projection import projection

pytestmark = pytest.mark.spark


def col(cid, name, type_text, default=None):
    return Column(cid, name, parse_type(type_text), True, default, default)


SOURCE = SchemaVersion(
    1,
    1,
    (
        col(1, "id", "INT"),
        col(2, "small", "SMALLINT"),
        col(3, "f", "FLOAT"),
        col(4, "d", "DATE"),
        col(5, "dec", "DECIMAL(5,2)"),
        col(6, "old_name", "VARCHAR(3)"),
        col(7, "gone", "STRING"),
    ),
)

STRINGS = ["it's", "back\\slash", "\\'", "é中 x", "", "NULL", "a\nb", "``", "'; DROP TABLE t; --"]

TARGET = SchemaVersion(
    1,
    2,
    (
        col(1, "id", "BIGINT"),
        col(2, "small", "LARGEINT"),
        col(3, "f", "DOUBLE"),
        col(4, "d", "DATETIME"),
        col(5, "dec", "DECIMAL(10,4)"),
        col(6, "new_name", "STRING"),
        *(col(10 + i, f"s{i}", "STRING", text) for i, text in enumerate(STRINGS)),
        col(30, "c_char", "CHAR(3)", "ab"),
        col(31, "b_true", "BOOLEAN", True),
        col(32, "ti", "TINYINT", -128),
        col(33, "big", "BIGINT", 9223372036854775807),
        col(34, "large", "LARGEINT", -99999999999999999999999999999999999999),
        col(35, "fl", "FLOAT", 0.1),
        col(36, "dbl", "DOUBLE", 2.5e-300),
        col(37, "dc", "DECIMAL(38,37)", Decimal("-9.9999999999999999999999999999999999999")),
        col(38, "day", "DATE", dt.date(1, 1, 1)),
        col(39, "ts", "DATETIME", dt.datetime(2024, 1, 2, 3, 4, 5, 1)),
        col(40, "nothing", "INT"),
    ),
)


def test_sql_projection_equals_the_column_projection(spark, tmp_path):
    path = tmp_path / "part.parquet"
    data = pa.table(
        [
            pa.array([1, None, -2147483648], pa.int32()),
            pa.array([-32768, 7, None], pa.int16()),
            pa.array([0.1, None, -3.4028234663852886e38], pa.float32()),
            pa.array([dt.date(2024, 2, 29), dt.date(1, 1, 1), None], pa.date32()),
            pa.array([Decimal("999.99"), None, Decimal("-0.01")], pa.decimal128(5, 2)),
            pa.array(["abc", "é中x", None], pa.string()),
            pa.array(["x", "y", "z"], pa.string()),
        ],
        schema=arrow_schema(SOURCE),
    )
    pq.write_table(data, path)
    frame = spark.read.schema(spark_schema(SOURCE)).parquet(str(path))

    by_columns = frame.select(*projection(SOURCE, TARGET))
    by_sql = frame.selectExpr(*projection_sql(SOURCE, TARGET))

    assert [(f.name, f.dataType) for f in by_sql.schema.fields] == [(f.name, f.dataType) for f in by_columns.schema.fields]
    expected = [tuple(r) for r in by_columns.collect()]
    assert [tuple(r) for r in by_sql.collect()] == expected
    assert [row[TARGET.columns.index(TARGET.column("s0"))] for row in expected] == ["it's"] * 3
    strings = {name: expected[0][i] for i, name in enumerate(c.name for c in TARGET.columns)}
    assert [strings[f"s{i}"] for i in range(len(STRINGS))] == STRINGS
