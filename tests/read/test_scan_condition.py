"""A scan's `where` as an Arrow expression: each operator against the rows a Python model of SQL's
three-valued logic keeps, and every refusal in one line."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.read.scan_condition import ScanCondition, ScanConditionError
from alterflow.values.types import parse_type

VERSION = SchemaVersion(
    table_id=1,
    version=1,
    columns=(
        Column(1, "id", parse_type("BIGINT"), nullable=False),
        Column(2, "name", parse_type("VARCHAR(20)")),
        Column(3, "amount", parse_type("DECIMAL(10,2)")),
        Column(4, "day", parse_type("DATE")),
        Column(5, "ok", parse_type("BOOLEAN")),
        Column(6, "score", parse_type("DOUBLE")),
        Column(7, "n", parse_type("INT")),
    ),
)
D = decimal.Decimal
ROWS = [
    {"id": 1, "name": "apple", "amount": D("1.50"), "day": datetime.date(2024, 1, 1), "ok": True, "score": 0.5, "n": 1},
    {"id": 2, "name": "banana", "amount": D("2.00"), "day": datetime.date(2024, 6, 1), "ok": False, "score": 2.5, "n": 2},
    {"id": 3, "name": None, "amount": None, "day": None, "ok": None, "score": None, "n": None},
    {"id": 4, "name": "apricot", "amount": D("10.25"), "day": datetime.date(2023, 12, 31), "ok": True, "score": -1.0, "n": 3},
]


@pytest.fixture(scope="module")
def rows() -> pa.Table:
    from alterflow.arrow_schema import arrow_schema

    return pa.Table.from_pylist(ROWS, schema=arrow_schema(VERSION))


def kept(rows: pa.Table, where: str) -> list[int]:
    return rows.filter(ScanCondition(where, VERSION, "t").expression).column("id").to_pylist()


@pytest.mark.parametrize(
    "where, ids",
    [
        ("id = 2", [2]),
        ("ID <> 2", [1, 3, 4]),
        ("id != 2", [1, 3, 4]),
        ("n > 1", [2, 4]),
        ("n >= 2.5", [4]),  # a fraction compares with an INT column as a number
        ("n < 2", [1]),
        ("1 < n", [2, 4]),  # the literal on the left
        ("amount <= 2", [1, 2]),
        ("amount = 1.5", [1]),  # scale differs from the column's
        ("score > -0.5", [1, 2]),
        ("day >= '2024-01-01'", [1, 2]),  # text read as the column's type
        ("day < DATE '2024-01-01'", [4]),
        ("ok", [1, 4]),
        ("ok = false", [2]),
        ("NOT ok", [2]),
        ("name IS NULL", [3]),
        ("name IS NOT NULL", [1, 2, 4]),
        ("name LIKE 'ap%'", [1, 4]),
        ("name NOT LIKE 'ap%'", [2]),  # NULL stays unknown: not kept
        ("id IN (1, 4, 9)", [1, 4]),
        ("id NOT IN (1, 4)", [2, 3]),
        ("name IN ('apple', NULL)", [1]),
        ("name NOT IN ('apple', NULL)", []),  # SQL: unknown for every row that is not 'apple'
        ("n BETWEEN 2 AND 3", [2, 4]),
        ("n NOT BETWEEN 2 AND 3", [1]),
        ("n = 1 OR name = 'banana'", [1, 2]),
        ("(n = 1 OR n = 3) AND ok", [1, 4]),
        ("NOT (n = 1)", [2, 4]),  # NOT of unknown is unknown
        ("name = NULL", []),
        ("id = -1", []),
        ("amount = id", [2]),  # two columns: 2.00 = 2
        ("n = id", [1, 2]),
    ],
)
def test_conditions_keep_the_rows_sql_keeps(rows, where, ids):
    assert kept(rows, where) == ids


def test_the_condition_names_the_columns_it_reads():
    assert ScanCondition("n > 1 AND (Name LIKE 'a%' OR n < 0)", VERSION, "t").columns == ["n", "name"]


@pytest.mark.parametrize(
    "where, message",
    [
        ("", "the condition is empty"),
        ("   ", "the condition is empty"),
        ("zz = 1", "unknown column 'zz'"),
        ("t.id = 1", "is qualified"),
        ("n + 1 > 2", "'n + 1' is not supported"),
        ("upper(name) = 'A'", "is not supported"),
        ("id = 1; DROP TABLE t", "without ';'"),
        ("id = (SELECT 1)", "is not supported"),
        ("day > 'yesterday'", "'yesterday' is not a value of type date32"),
        ("name > 5", "the number 5 compared with a string column"),
        ("n = 'x'", "is not a value of type int32"),
        ("1 = 1", "a comparison needs a column"),
        ("id LIKE 'a%'", "LIKE takes a text column"),
        ("n", "column n is not BOOLEAN"),
        ("id = ", "syntax error"),
        ("n IN (1, 'x')", "is not a value of type int32"),
        ("(" * 40 + "id = 1" + ")" * 40, "nested too deeply"),
        (" AND ".join(["id = 1"] * 600), "expression too deep"),
        ("name = 'unterminated", "unterminated string"),
    ],
)
def test_a_bad_condition_is_one_line(where, message):
    with pytest.raises(ScanConditionError) as caught:
        ScanCondition(where, VERSION, "t")
    text = str(caught.value)
    assert message in text, text
    assert "\n" not in text and len(text) <= 300, text
    assert text.startswith("scan of t: where") or "in scan of t: where" in text, text
