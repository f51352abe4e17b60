"""Unit tests of the CREATE TABLE planner: the first schema version and every rule, each way."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.planner import CreateTableRejected, plan_create_table
from alterflow.sql.ast import ColumnDef, CreateTable, Literal, Position
from alterflow.values.types import parse_type


def lit(value) -> Literal:
    if value is None:
        return Literal("null", None, "NULL")
    if isinstance(value, bool):
        return Literal("bool", value, "TRUE" if value else "FALSE")
    if isinstance(value, int):
        return Literal("int", value, str(value))
    if isinstance(value, Decimal):
        return Literal("decimal", str(value), str(value))
    return Literal("string", value, "'" + value + "'")


def c(name, type_, nullable=None, default="__unset__", comment=None, position=None) -> ColumnDef:
    return ColumnDef(
        name=name,
        type=type_,
        nullable=nullable,
        default=None if default == "__unset__" else lit(default),
        comment=comment,
        position=position,
    )


def create(*columns, pk=(), part=(), dist=None, buckets=None, order=(), name="t") -> CreateTable:
    return CreateTable(
        name=name,
        columns=tuple(columns),
        primary_key=tuple(pk),
        partition_by=tuple(part),
        distributed_by=None if dist is None else tuple(dist),
        buckets=buckets,
        order_by=tuple(order),
    )


def rejected(stmt: CreateTable, *words: str) -> str:
    with pytest.raises(CreateTableRejected) as info:
        plan_create_table(stmt, table_id=1)
    msg = str(info.value)
    assert msg.startswith(f"CREATE TABLE {stmt.name}: "), msg
    assert "\n" not in msg
    for word in words:
        assert word in msg, (word, msg)
    return msg


STANDARD = (
    c("k", "INT"),
    c("p", "DATE", nullable=False),
    c("v", "BIGINT", nullable=False, default=0, comment="value"),
    c("s", "VARCHAR(10)", default="none"),
    c("d", "DECIMAL(10,2)", nullable=True),
)


def test_full_table():
    version, next_id = plan_create_table(
        create(*STANDARD, pk=("k", "p"), part=("p",), dist=("k",), buckets=8, order=("v", "k")), table_id=42
    )
    assert next_id == 6
    assert version == SchemaVersion(
        table_id=42,
        version=1,
        columns=(
            Column(1, "k", parse_type("INT"), nullable=False),
            Column(2, "p", parse_type("DATE"), nullable=False),
            Column(3, "v", parse_type("BIGINT"), nullable=False, initial_default=0, write_default=0, comment="value"),
            Column(4, "s", parse_type("VARCHAR(10)"), nullable=True, initial_default="none", write_default="none"),
            Column(5, "d", parse_type("DECIMAL(10,2)"), nullable=True),
        ),
        primary_key=(1, 2),
        partition_by=(2,),
        distributed_by=(1,),
        buckets=8,
        sort_key=(3, 1),
        statement="",
    )


def test_names_keep_their_spelling_and_keys_match_case_insensitively():
    version, _ = plan_create_table(create(c("Id", "INT"), c("Val", "STRING"), pk=("ID",), order=("val",)), 1)
    assert [col.name for col in version.columns] == ["Id", "Val"]
    assert version.primary_key == (1,)
    assert version.sort_key == (2,)


def test_defaults_without_primary_key_or_distribution():
    version, next_id = plan_create_table(create(c("a", "INT"), c("b", "DOUBLE")), 7)
    assert next_id == 3
    assert version.table_id == 7 and version.version == 1
    assert [col.nullable for col in version.columns] == [True, True]
    assert (version.primary_key, version.partition_by, version.distributed_by, version.buckets, version.sort_key) == ((), (), (), 1, ())


def test_distribution_defaults_to_the_primary_key_with_one_bucket():
    version, _ = plan_create_table(create(*STANDARD, pk=("p", "k")), 1)
    assert version.distributed_by == (2, 1)
    assert version.buckets == 1


def test_partition_without_primary_key_may_be_any_column():
    version, _ = plan_create_table(create(c("a", "INT"), c("b", "DATE"), part=("b",), dist=("a",), buckets=1024), 1)
    assert (version.partition_by, version.distributed_by, version.buckets) == ((2,), (1,), 1024)


def test_primary_key_column_becomes_not_null():
    version, _ = plan_create_table(create(c("k", "INT"), c("v", "INT"), pk=("k",)), 1)
    assert version.column("k").nullable is False
    assert version.column("v").nullable is True


@pytest.mark.parametrize(
    "type_, default, expected",
    [
        ("INT", -3, -3),
        ("DECIMAL(5,2)", Decimal("2.5"), Decimal("2.50")),
        ("DOUBLE", Decimal("0.5"), 0.5),
        ("DATE", "2024-01-31", dt.date(2024, 1, 31)),
        ("TIMESTAMP", "2024-01-31 12:30:00", dt.datetime(2024, 1, 31, 12, 30)),
        ("BOOLEAN", False, False),
        ("STRING", None, None),
    ],
)
def test_default_is_coerced_into_both_defaults(type_, default, expected):
    version, _ = plan_create_table(create(c("x", type_, default=default)), 1)
    x = version.column("x")
    assert x.initial_default == expected and x.write_default == expected
    assert x.type == parse_type(type_)


@pytest.mark.parametrize(
    "stmt, words",
    [
        (create(), ["at least one column"]),
        (create(c("a", "INT"), c("A", "INT")), ["duplicate column name A"]),
        (create(c("a", "WIBBLE")), ["column a", "WIBBLE"]),
        (create(c("a", "DECIMAL(50,2)")), ["column a", "DECIMAL(50,2)"]),
        (create(c("a", "INT", default="abc")), ["column a", "'abc'", "INT"]),
        (create(c("a", "TINYINT", default=128)), ["column a", "128", "TINYINT"]),
        (create(c("a", "INT", nullable=False, default=None)), ["column a", "DEFAULT NULL", "NOT NULL"]),
        (create(c("k", "INT", default=None), pk=("k",)), ["column k", "DEFAULT NULL", "NOT NULL"]),
        (create(c("k", "INT", nullable=True), pk=("k",)), ["column k", "NULL", "primary-key"]),
        (create(c("k", "DOUBLE"), pk=("k",)), ["column k", "primary key", "DOUBLE"]),
        (create(c("k", "FLOAT"), pk=("k",)), ["column k", "primary key", "FLOAT"]),
        (create(c("k", "INT"), pk=("x",)), ["unknown column x", "primary key"]),
        (create(c("k", "INT"), pk=("k", "K")), ["column K", "twice", "primary key"]),
        (create(c("k", "INT"), c("p", "DATE"), pk=("k",), part=("p",)), ["partition column p", "primary key"]),
        (create(c("k", "INT"), part=("x",)), ["unknown column x", "partition"]),
        (create(c("k", "INT"), c("v", "INT"), pk=("k",), dist=("v",), buckets=2), ["distribution column v", "primary key"]),
        (create(c("k", "INT"), c("f", "DOUBLE"), dist=("f",), buckets=2), ["distribution column f", "DOUBLE"]),
        (create(c("k", "INT"), dist=("x",), buckets=2), ["unknown column x", "distribution"]),
        (create(c("k", "INT"), dist=("k", "k"), buckets=2), ["column k", "twice", "distribution"]),
        (create(c("k", "INT"), dist=(), buckets=2), ["DISTRIBUTED BY"]),
        (create(c("k", "INT"), dist=("k",), buckets=0), ["BUCKETS", "1024", "0"]),
        (create(c("k", "INT"), dist=("k",), buckets=1025), ["BUCKETS", "1025"]),
        (create(c("k", "INT"), order=("x",)), ["unknown column x", "ORDER BY"]),
        (create(c("k", "INT"), order=("k", "K")), ["column K", "twice", "ORDER BY"]),
        (create(c("1k", "INT")), ["invalid column name", "1k"]),
        (create(c("k", "INT"), name="bad-name"), ["invalid table name"]),
        (create(c("k", "INT"), c("v", "INT", position=Position(first=True))), ["column v", "FIRST"]),
    ],
)
def test_rejections(stmt, words):
    rejected(stmt, *words)


def test_explicit_not_null_on_primary_key_is_fine():
    version, _ = plan_create_table(create(c("k", "INT", nullable=False, default=1), pk=("k",)), 1)
    assert version.column("k").nullable is False
    assert version.column("k").write_default == 1
