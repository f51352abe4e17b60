"""Casts from strings and date functions on the local engine against live Spark, value by value:
hundreds of edge strings (every kind of blank and control character, signs, leading zeros,
fractions, exponents, overflow boundaries, non-ASCII digits) and edge dates go through both
engines, and each answer — value, Python type, NULL — must be Spark's, or the local engine must
hand that value to Spark (a guarded expression), never answer it otherwise.
"""

from __future__ import annotations

import math

import pytest

from alterflow.query import duckdb_macros
from alterflow.query import sql_types as st
from alterflow.query.expression_core import FALLBACK, NotLocal
from alterflow.query.local_engine import parse_query
from alterflow.query.translation import QueryTranslation, Relation, RelationColumn
from tests.support.values import INTEGER_BOUNDARY_TEXTS

_BLANKS = ["\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\x01", "\x1f", "\x7f", "\u00a0", "\u2003", "\u3000", "\ufeff", " "]

_NUMBERS = [
    "0",
    "1",
    "-1",
    "+1",
    "00012",
    "-0",
    "+0",
    "1.",
    ".5",
    "-.5",
    "+.",
    ".",
    "-",
    "+",
    "",
    "1.9",
    "-1.9",
    "1.5e3",
    "1e3",
    "1E3",
    "1e-3",
    "1e",
    "e3",
    "1e+3",
    "0x10",
    "0X1p3",
    "1_000",
    "1,000",
    "١٢٣",
    "１２",
    "1 2",
    "--1",
    "+-1",
    "1.2.3",
    "1..",
    "..1",
    "1d",
    "1D",
    "1f",
    "1F",
    "1.5d",
    "1e3f",
    "1L",
    "NaN",
    "nan",
    "-NaN",
    "+NaN",
    "NAN",
    "Infinity",
    "-Infinity",
    "+Infinity",
    "infinity",
    "INF",
    "inf",
    "-inf",
    "+inf",
    "Inf",
    "-INFINITY",
    "+nan",
    "in f",
    *INTEGER_BOUNDARY_TEXTS,
    "255",
    "99999999999999999999999999999999999999",
    "999999999999999999999999999999999999999",
    "0000000000000000000000000000000000000000000000001",
    "2147483647.999",
    "-2147483648.5",
    "127.9",
    "1.000000000000000000001",
    "0.1",
    "0.25",
    "0.35",
    "-0.35",
    "0.05",
    "9.95",
    "99.95",
    "-99.95",
    "123.456",
    "1e40",
    "1e-40",
    "1e400",
    "-1e400",
    "1e-400",
    "4.9e-324",
    "2.4703282292062328e-324",
    "2.4703282292062329e-324",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "3.4028235e38",
    "3.4028236e38",
    "1.4e-45",
    "7.0e-46",
    "0.1000000000000000055511151231257827",
    "1.00000005960464477539062500001",
    "1.000000059604644775390625",
    "9007199254740993",
    "123456789012345678901234567890",
    "1.23456789012345678901234567890123456789",
    "12345678901234567890123456789012345678.5",
    "1e38",
    "9.999999999999999999e37",
    "t",
    "true",
    "TRUE",
    "True",
    "y",
    "yes",
    "YES",
    "1",
    "f",
    "false",
    "FALSE",
    "n",
    "no",
    "NO",
    "0",
    "tru",
    "yess",
    "on",
    "off",
    "2",
    "-1",
    "ｔrue",
    "ye s",
]
_DATES = [
    "2011-11-11",
    "2011-1-1",
    "2011-01",
    "2011-1",
    "2011",
    "201",
    "20111",
    "2011111",
    "20111111",
    "+2011-01-01",
    "-2011-01-01",
    "0000-01-01",
    "0001-01-01",
    "9999-12-31",
    "10000-01-01",
    "2011-11-11 10:00:00",
    "2011-11-11T10:00",
    "2011-11-11T",
    "2011-11-11 ",
    "2011-11-11x",
    "2011-11-11  x",
    "2011-11-11 anything at all ✓",
    "2011-11 10:00",
    "2011 10:00",
    "2011-11-",
    "2011--11",
    "2011-11-1-",
    "2011-011-11",
    "2011-11-011",
    "2011-13-01",
    "2011-00-01",
    "2011-02-29",
    "2012-02-29",
    "1900-02-29",
    "2000-02-29",
    "2011-04-31",
    "2011-12-32",
    "2011-12-00",
    "2011/11/11",
    "11-11-2011",
    "2011-11-11Z",
    "2011-11-11T10:00:00Z",
    "2011-11-11\t10",
    "٢٠١١-١١-١١",
    "1582-10-10",
    "1000-01-01",
    "5000000-01-01",
    "-5000000-01-01",
    "5881580-07-11",
    "9999999-12-31",
    "-0001-12-31",
    "  2011-11-11  ",
    "",
    "2011-1-1 1",
    "99999-1-1",
]
_STRINGS = _NUMBERS + _DATES + [b + v + b2 for v in ("1", "t", "2011-11-11", "1.5", "Infinity") for b in _BLANKS for b2 in ("", b)]


def _distinct(values):
    return list(dict.fromkeys(values))


STRINGS = _distinct(_STRINGS)
DATES = _distinct(_DATES + ["2011-11-11", "0001-01-01", "9999-12-31", "2000-02-29", "2024-12-30", "1970-01-01", "2021-01-03", "2020-12-31"])


def _spark_value(v):
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else repr(v))
    return (type(v).__name__, v)


@pytest.fixture(scope="module")
def strings_view(spark):
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    schema = StructType([StructField("i", IntegerType()), StructField("s", StringType())])
    spark.createDataFrame(list(enumerate(STRINGS)) + [(len(STRINGS), None)], schema).createOrReplaceTempView("edge_strings")
    return spark


def _local(expression: str, rows: list[tuple[int, str | None]], ddl: str = "s VARCHAR") -> dict[int, object]:
    """Each row's answer on the local engine: its value (a date as its days since 1970), or
    FALLBACK where it hands the value to Spark."""
    import duckdb

    relation = Relation(
        '"t"',
        (
            RelationColumn("i", st.INT, "i"),
            RelationColumn("s", {"VARCHAR": st.STRING, "DATE": st.DATE, "DOUBLE": st.DOUBLE}[ddl.split()[1]], "s"),
        ),
    )
    translated = QueryTranslation({"t": relation}).query(parse_query(f"SELECT i, {expression} AS v FROM t"))
    sql = translated.sql
    if translated.types[1] == st.DATE:
        sql = f"SELECT c0, CAST(c1 - DATE '1970-01-01' AS INTEGER) FROM ({sql})"
    connection = duckdb.connect()
    for statement in duckdb_macros.statements(translated.sql):
        connection.execute(statement)
    connection.execute(f"CREATE TABLE every_row (i INTEGER, {ddl})")
    connection.executemany("INSERT INTO every_row VALUES (?, ?)", rows)
    answers = {}

    def run(part):  # a guarded row fails its whole part: halves, until it stands alone
        ids = ", ".join(str(i) for i, _s in part)
        connection.execute(f"CREATE OR REPLACE TEMP VIEW t AS SELECT * FROM every_row WHERE i IN ({ids})")
        try:
            answers.update(connection.sql(sql).fetchall())
        except duckdb.Error as exc:
            if len(part) == 1:
                assert FALLBACK in str(exc), f"{expression} on {part[0][1]!r}: {exc}"
                answers[part[0][0]] = FALLBACK
            else:
                run(part[: len(part) // 2])
                run(part[len(part) // 2 :])

    run(rows)
    connection.close()
    return answers, translated.types[1]


def _compare(spark, expressions: list[str], view: str, rows: list[tuple[int, object]], ddl: str = "s VARCHAR") -> dict[str, int]:
    """Compares the engines on every row the local engine answers itself (Spark answers the rest,
    and may refuse some: to_date's error about Spark 2's parser), all expressions in one Spark
    query; returns how many rows the local engine answered, by expression."""
    columns, locals_, answered = [], {}, {}
    for n, expression in enumerate(expressions):
        local, local_type = _local(expression, rows, ddl)
        locals_[expression] = (local, local_type)
        answered[expression] = [i for i, _s in rows if local[i] != FALLBACK]
        keep = ", ".join(map(str, answered[expression])) or "NULL"
        column = f"CASE WHEN i IN ({keep}) THEN {expression} END"
        if local_type == st.DATE:  # as days since 1970: Python's dates stop at year 9999
            column = f"unix_date({column})"
        columns.append(f"typeof({expression}) AS t{n}, {column} AS v{n}")
    result = spark.sql(f"SELECT i, {', '.join(columns)} FROM {view}").collect()
    for n, expression in enumerate(expressions):
        local, local_type = locals_[expression]
        spark_type = {r["i"]: r[f"t{n}"] for r in result}[rows[0][0]]
        assert str(local_type) == spark_type, f"{expression}: type {local_type} / Spark {spark_type}"
        expected = {r["i"]: r[f"v{n}"] for r in result}
        differences = [
            (s, local[i], expected[i]) for i, s in rows if i in answered[expression] and _spark_value(local[i]) != _spark_value(expected[i])
        ]
        assert not differences, f"{expression}: {len(differences)} differ (text, local, Spark): {differences[:8]}"
    return {e: len(a) for e, a in answered.items()}


_STRING_ROWS = list(enumerate(STRINGS)) + [(len(STRINGS), None)]


CAST_TARGETS = [
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "BOOLEAN",
    "DATE",
    "DOUBLE",
    "FLOAT",
    "DECIMAL(10,0)",
    "DECIMAL(3,1)",
    "DECIMAL(38,18)",
    "DECIMAL(38,0)",
    "DECIMAL(5,5)",
    "DECIMAL(38,38)",
]


def test_a_cast_from_a_string_gives_spark_s_value_for_every_edge_string(strings_view):
    answered = _compare(strings_view, [f"CAST(s AS {t})" for t in CAST_TARGETS], "edge_strings", _STRING_ROWS)
    for expression, count in answered.items():
        share = 0.9 if "38,38" in expression else 0.95  # exponents go to Spark there
        assert count >= len(_STRING_ROWS) * share, f"{expression}: only {count} of {len(_STRING_ROWS)} strings answered in process"


STRING_DATE_FUNCTIONS = [
    "year(s)",
    "month(s)",
    "day(s)",
    "dayofmonth(s)",
    "dayofweek(s)",
    "weekday(s)",
    "dayofyear(s)",
    "quarter(s)",
    "last_day(s)",
    "date_add(s, 1)",
    "date_sub(s, 1)",
    "datediff(s, DATE '2000-01-01')",
    "to_date(s)",
    "trunc(s, 'MM')",
    "to_date(s, 'yyyy-MM-dd')",
    "to_date(s, 'yyyy-MM')",
    "s = DATE '2011-11-11'",
    "s < DATE '2011-11-11'",
    "DATE '2011-11-11' >= s",
    "s <=> DATE '2011-11-11'",
    "s <> DATE '2011-01-01'",
]


def test_a_date_function_of_a_string_gives_spark_s_value(strings_view):
    _compare(strings_view, STRING_DATE_FUNCTIONS, "edge_strings", _STRING_ROWS)


@pytest.fixture(scope="module")
def dates_view(spark):
    import datetime

    from pyspark.sql.types import DateType, IntegerType, StructField, StructType

    values = [datetime.date.fromisoformat(d) for d in DATES if _iso(d)]
    schema = StructType([StructField("i", IntegerType()), StructField("s", DateType())])
    spark.createDataFrame(list(enumerate(values)) + [(len(values), None)], schema).createOrReplaceTempView("edge_dates")
    return list(enumerate(values)) + [(len(values), None)]


def _iso(text: str) -> bool:
    import datetime

    try:
        datetime.date.fromisoformat(text)
        return len(text) == 10
    except ValueError:
        return False


DATE_FUNCTIONS = [
    "year(s)",
    "month(s)",
    "day(s)",
    "dayofweek(s)",
    "weekday(s)",
    "dayofyear(s)",
    "quarter(s)",
    "last_day(s)",
    "date_add(s, 31)",
    "date_sub(s, 400)",
    "dateadd(s, -1)",
    "datediff(s, DATE '1970-01-01')",
    "date_diff(DATE '2024-02-29', s)",
    "add_months(s, 1)",
    "add_months(s, -13)",
    "add_months(s, 0)",
    "trunc(s, 'YEAR')",
    "trunc(s, 'yy')",
    "trunc(s, 'yyyy')",
    "trunc(s, 'MONTH')",
    "trunc(s, 'Q')",
    "trunc(s, 'quarter')",
    "trunc(s, 'mon')",
    "trunc(s, 'WEEK')",
    "trunc(s, 'day')",
    "make_date(year(s), month(s), 31)",
    "make_date(year(s), 2, 29)",
    "date_format(s, 'yyyy-MM-dd')",
    "date_format(s, 'dd/MM/yy HH:mm:ss')",
    "date_format(s, 'M/d/yyyy h:m:s a')",
    "date_format(s, 'EEE, d MMM yyyy')",
    "date_format(s, 'EEEE MMMM D DDD')",
    "date_format(s, \"yyyy'T'HH SSS SSSSSS % ''\")",
    "CAST(s AS STRING)",
    "CAST(s AS TIMESTAMP_NTZ)",
]


def test_a_date_function_of_a_date_gives_spark_s_value(spark, dates_view):
    _compare(spark, DATE_FUNCTIONS, "edge_dates", dates_view, ddl="s DATE")


DOUBLES = [
    0.0,
    -0.0,
    0.5,
    -0.5,
    1.9,
    -1.9,
    127.5,
    128.0,
    -129.0,
    255.0,
    256.0,
    32767.9,
    32768.0,
    -32769.0,
    65536.5,
    2147483647.5,
    2147483648.0,
    -2147483648.9,
    -2147483649.0,
    4294967296.0,
    1e10,
    -1e10,
    9.2e18,
    9.223372036854775807e18,
    -9.3e18,
    1e300,
    -1e300,
    4.9e-324,
    float("inf"),
    float("-inf"),
    float("nan"),
    3.4e38,
    16777217.0,
    None,
]


@pytest.fixture(scope="module")
def doubles_view(spark):
    from pyspark.sql.types import DoubleType, IntegerType, StructField, StructType

    rows = list(enumerate(DOUBLES))
    schema = StructType([StructField("i", IntegerType()), StructField("s", DoubleType())])
    spark.createDataFrame(rows, schema).createOrReplaceTempView("edge_doubles")
    return rows


def test_a_cast_from_a_floating_point_number_to_an_integer_is_the_jvm_s_narrowing(spark, doubles_view):
    expressions = [f"CAST(s AS {t})" for t in ("TINYINT", "SMALLINT", "INT", "BIGINT")]
    expressions += [f"CAST(CAST(s AS FLOAT) AS {t})" for t in ("TINYINT", "SMALLINT", "INT", "BIGINT")]
    answered = _compare(spark, expressions, "edge_doubles", doubles_view, ddl="s DOUBLE")
    assert all(n == len(DOUBLES) for n in answered.values()), answered


@pytest.mark.parametrize(
    "query",
    [
        "SELECT DATE '2011-11-11'",
        "SELECT DATE '2011-1-1', DATE ' 2011 ', DATE '2011-11-11T10:00'",
        "SELECT year(DATE '2011-11-11'), month('2011-11-11'), day(DATE '2011-11-11'), dayofmonth(DATE '2011-11-11')",
        "SELECT date_add(DATE '2011-11-11', 1), date_sub(DATE '2011-11-11', 2), dateadd(DATE '2011-11-11', 1)",
        "SELECT datediff(DATE '2011-11-11', '2011-01-01'), date_diff(DATE '2011-11-11', DATE '2011-01-01')",
        "SELECT make_date(2020, 1, 2), make_date(2020, 2, 30), make_date(NULL, 1, 1), last_day('2020-02-03')",
        "SELECT to_date('2020-01-02'), to_date('2020-01-02', 'yyyy-MM-dd'), to_date(DATE '2020-01-02')",
        "SELECT date_format(DATE '2020-01-02', 'yyyy-MM'), dayofweek(DATE '2020-01-02'), weekday(DATE '2020-01-02')",
        "SELECT quarter(DATE '2020-01-02'), dayofyear(DATE '2020-01-02'), add_months(DATE '2020-01-31', 1), trunc(DATE '2020-05-05', 'MM')",
        "SELECT CAST('1' AS INT), CAST(' 1 ' AS TINYINT), try_cast('1' AS INT), '7'::int, CAST('t' AS BOOLEAN)",
        "SELECT CAST('1.5' AS DECIMAL(3,1)), CAST('1.5' AS DOUBLE), CAST('2011-11-11' AS DATE), CAST('1e1' AS FLOAT)",
        "SELECT year(NULL), to_date(NULL), date_add(NULL, 1), CAST(NULL AS STRING)",
        "SELECT DATE '2001-10-01' + 7, 1 + DATE '2001-10-01', DATE '2001-10-01' - 7, DATE '2001-10-01' - CAST(1 AS TINYINT)",
        "SELECT date_add('2011-11-11', 1Y), date '2001-09-28' + 7S, 5L, 1.5D, 127Y, CAST(1 AS TINYINT)",
        "SELECT date '2019-01-01\\t', date_sub(null, 1), to_date(null), date'0015'",
        "SELECT date('2011-11-11'), int('1'), double(' 1'), boolean('t'), date('x')",
    ],
)
def test_a_query_without_from_gives_spark_s_names_types_and_values(spark, query):
    import duckdb

    frame = spark.sql(query)
    expected = (
        [f.name for f in frame.schema.fields],
        [f.dataType.simpleString() for f in frame.schema.fields],
        [_spark_value(v) for v in frame.collect()[0]],
    )
    translated = QueryTranslation({}).query(parse_query(query))
    connection = duckdb.connect()
    for statement in duckdb_macros.statements(translated.sql):
        connection.execute(statement)
    row = connection.sql(translated.sql).fetchall()[0]
    assert (list(translated.names), [str(t) for t in translated.types], [_spark_value(v) for v in row]) == expected


@pytest.mark.parametrize(
    "query",
    [
        "SELECT DATE '2011-13-11'",  # Spark's parse error
        "SELECT DATE 'x'",
        "SELECT date_format(DATE '2020-01-02', 'G')",
        "SELECT date_format(DATE '2020-01-02', 'y')",
        "SELECT to_date('2020-01-02', 'yyyy-MM-dd HH')",
        "SELECT date_add(DATE '2020-01-02', 1L)",
        "SELECT months_between(DATE '2020-01-02', DATE '2020-01-01')",
        "SELECT current_date()",
        "SELECT CAST('2020-01-01 00:00:00' AS TIMESTAMP)",
        "SELECT year(20111111)",
        "SELECT DATE '2001-10-01' - DATE '2001-09-28'",
        "SELECT DATE '2001-10-01' + 7L",
        "SELECT null + DATE '2001-09-28' AS n",  # a TIMESTAMP in Spark
    ],
)
def test_what_the_local_engine_leaves_to_spark(query):
    with pytest.raises(NotLocal):
        QueryTranslation({}).query(parse_query(query))
