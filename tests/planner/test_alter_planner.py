"""Unit tests of the ALTER TABLE planner: every rule of docs/semantics.md, "Lightweight, heavyweight, rejected", allowed and rejected."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.planner import (
    AlterPlan,
    AlterProperties,
    AlterRejected,
    ColumnConversion,
    TableContext,
    Verdict,
    parse_properties,
    plan_alter,
)
from alterflow.sql.ast import (
    AddColumn,
    AddColumns,
    AlterTable,
    ColumnDef,
    DistributeBy,
    DropColumn,
    DropDefault,
    Literal,
    ModifyColumn,
    OrderBy,
    Position,
    RenameColumn,
    SetDefault,
)
from alterflow.values.types import DataType, parse_type

# ------------------------------------------------------------------------------------------------
# Fixtures and helpers
# ------------------------------------------------------------------------------------------------


def T(text: str) -> DataType:
    return parse_type(text)


def lit(value) -> Literal:
    if value is None:
        return Literal("null", None, "NULL")
    if isinstance(value, bool):
        return Literal("bool", value, "TRUE" if value else "FALSE")
    if isinstance(value, int):
        return Literal("int", value, str(value))
    if isinstance(value, Decimal):
        return Literal("decimal", str(value), str(value))
    return Literal("string", value, "'" + value.replace("'", "''") + "'")


def cdef(name, type_, nullable=None, default="__unset__", comment=None, first=False, after=None):
    position = Position(first=True) if first else Position(after=after) if after else None
    return ColumnDef(
        name=name,
        type=type_,
        nullable=nullable,
        default=None if default == "__unset__" else lit(default),
        comment=comment,
        position=position,
    )


# ids 6 and 7 were used by columns dropped earlier: next free id is 8.
PK_TABLE = SchemaVersion(
    table_id=10,
    version=3,
    columns=(
        Column(1, "k", T("INT"), nullable=False),
        Column(2, "p", T("DATE"), nullable=False),
        Column(3, "v", T("INT"), nullable=False, initial_default=0, write_default=0, comment="value"),
        Column(4, "s", T("VARCHAR(10)"), comment="text"),
        Column(5, "d", T("DECIMAL(10,2)"), initial_default=Decimal("1.50"), write_default=Decimal("2.00")),
    ),
    primary_key=(1, 2),
    partition_by=(2,),
    distributed_by=(1,),
    buckets=4,
    sort_key=(1,),
    statement="CREATE TABLE t ...",
)

# No primary key: partition, distribution and sort key are value columns.
PLAIN_TABLE = SchemaVersion(
    table_id=11,
    version=1,
    columns=(
        Column(1, "a", T("INT")),
        Column(2, "b", T("DOUBLE")),
        Column(3, "c", T("STRING"), initial_default="abc", write_default="abc"),
        Column(4, "dt", T("DATE")),
        Column(5, "e", T("BIGINT")),
        Column(6, "f", T("INT")),
    ),
    partition_by=(1,),
    distributed_by=(5,),
    buckets=2,
    sort_key=(6,),
)


def ctx(schema=PK_TABLE, next_id=None, views=None, job=None, name="t") -> TableContext:
    if next_id is None:
        next_id = 8 if schema is PK_TABLE else max(c.id for c in schema.columns) + 1
    return TableContext(name=name, current=schema, next_column_id=next_id, view_uses=views or {}, active_job=job)


def alter(*clauses, props=None, table="t") -> AlterTable:
    return AlterTable(table=table, clauses=tuple(clauses), properties=dict(props or {}), sql=f"ALTER TABLE {table} ...")


def plan(*clauses, context=None, props=None) -> AlterPlan:
    return plan_alter(context or ctx(), alter(*clauses, props=props))


def names(schema: SchemaVersion) -> list[str]:
    return [c.name for c in schema.columns]


def col(schema: SchemaVersion, name: str) -> Column:
    found = schema.column(name)
    assert found is not None, name
    return found


def assert_light(p: AlterPlan) -> None:
    assert p.kind is Verdict.LIGHT, p.rejection or p.clauses
    assert p.rejection is None
    assert all(c.verdict is Verdict.LIGHT for c in p.clauses)
    p.raise_if_rejected()  # does not raise


def assert_rejected(p: AlterPlan, *words: str, table: str = "t") -> str:
    assert p.kind is Verdict.REJECTED
    msg = p.rejection
    assert msg is not None
    assert msg.startswith(f"ALTER TABLE {table}: "), msg
    assert "\n" not in msg
    for word in words:
        assert word in msg, (word, msg)
    with pytest.raises(AlterRejected) as info:
        p.raise_if_rejected()
    assert str(info.value) == msg
    return msg


def assert_clause_rejected(p: AlterPlan, index: int, *words: str) -> None:
    clause = p.clauses[index]
    assert clause.verdict is Verdict.REJECTED
    for word in words:
        assert word in clause.reason, (word, clause.reason)


# ------------------------------------------------------------------------------------------------
# The plan as a whole
# ------------------------------------------------------------------------------------------------


def test_new_version_is_one_more_and_records_the_statement():
    p = plan(DropColumn("s"))
    assert_light(p)
    assert p.table == "t"
    assert p.old is PK_TABLE
    assert p.new.version == 4
    assert p.new.table_id == 10
    assert p.new.statement == "ALTER TABLE t ..."
    assert p.properties == AlterProperties()
    assert p.conversions == ()
    assert p.next_column_id == 8


def test_old_version_is_left_untouched():
    before = PK_TABLE.spec_json()
    plan(AddColumn(cdef("x", "INT")), DropColumn("s"), ModifyColumn(cdef("v", "BIGINT")), RenameColumn("d", "dd"))
    assert PK_TABLE.spec_json() == before


def test_clause_text_is_rendered_sql():
    p = plan(
        AddColumn(cdef("x", "INT", nullable=False, default=5, comment="it's", after="v")),
        ModifyColumn(cdef("v", "BIGINT")),
        RenameColumn("d", "dd"),
        SetDefault("s", lit("z")),
        DropDefault("v"),
        AddColumns((cdef("y", "INT"), cdef("z", "STRING", nullable=True))),
        DropColumn("y"),
        OrderBy(("k", "s")),
        DistributeBy(("k", "p"), 8),
    )
    assert [c.text for c in p.clauses] == [
        "ADD COLUMN x INT NOT NULL DEFAULT 5 COMMENT 'it''s' AFTER v",
        "MODIFY COLUMN v BIGINT",
        "RENAME COLUMN d TO dd",
        "ALTER COLUMN s SET DEFAULT 'z'",
        "ALTER COLUMN v DROP DEFAULT",
        "ADD COLUMN (y INT, z STRING NULL)",
        "DROP COLUMN y",
        "ORDER BY (k, s)",
        "DISTRIBUTED BY HASH(k, p) BUCKETS 8",
    ]


def test_no_clause_is_rejected():
    assert_rejected(plan(), "nothing to change")


# ------------------------------------------------------------------------------------------------
# Properties
# ------------------------------------------------------------------------------------------------


def test_properties_defaults():
    assert parse_properties("t", {}) == AlterProperties(
        timeout=86400, on_cast_error="fail", postpone_swap=False, rewrite=False, expected_version=None
    )


def test_properties_valid_values_case_insensitive():
    props = parse_properties(
        "t",
        {"timeout": "60", "on_cast_error": "NULL", "postpone_swap": "True", "REWRITE": "TRUE", "expected_version": "0"},
    )
    assert props == AlterProperties(timeout=60, on_cast_error="null", postpone_swap=True, rewrite=True, expected_version=0)
    assert parse_properties("t", {"rewrite": "false", "postpone_swap": "FALSE", "on_cast_error": "fail"}) == AlterProperties()


@pytest.mark.parametrize(
    "key, value",
    [
        ("timeout", "0"),
        ("timeout", "-5"),
        ("timeout", "1.5"),
        ("timeout", "abc"),
        ("timeout", ""),
        ("on_cast_error", "skip"),
        ("on_cast_error", ""),
        ("postpone_swap", "yes"),
        ("postpone_swap", "1"),
        ("rewrite", "on"),
        ("rewrite", "0"),
        ("expected_version", "-1"),
        ("expected_version", "one"),
        ("expected_version", "2.0"),
        ("colour", "blue"),
    ],
)
def test_properties_bad_values_are_rejected_naming_the_property(key, value):
    with pytest.raises(AlterRejected) as info:
        parse_properties("t", {key: value})
    msg = str(info.value)
    assert msg.startswith("ALTER TABLE t: ")
    assert f'"{key}"' in msg
    assert "\n" not in msg


def test_bad_property_rejects_the_statement_but_clauses_are_still_planned():
    p = plan(DropColumn("s"), props={"timeout": "never"})
    assert_rejected(p, '"timeout"')
    assert p.clauses[0].verdict is Verdict.LIGHT
    assert p.properties == AlterProperties()


def test_properties_reach_the_plan():
    p = plan(DropColumn("s"), props={"timeout": "30", "postpone_swap": "true", "on_cast_error": "null"})
    assert_light(p)
    assert p.properties == AlterProperties(timeout=30, on_cast_error="null", postpone_swap=True)


def test_expected_version_matching_is_accepted():
    p = plan(DropColumn("s"), props={"expected_version": "3"})
    assert_light(p)
    assert p.properties.expected_version == 3


def test_expected_version_mismatch_is_rejected():
    p = plan(DropColumn("s"), props={"expected_version": "2"})
    assert_rejected(p, "expected_version 2 but the current version is 3")
    assert p.clauses[0].verdict is Verdict.LIGHT


def test_active_job_is_rejected():
    p = plan(DropColumn("s"), context=ctx(job="job 7 (RUNNING)"))
    msg = assert_rejected(p, "job 7 (RUNNING) is not finished", "one job per table")
    assert msg == "ALTER TABLE t: job 7 (RUNNING) is not finished; one job per table"


def test_statement_level_rejection_comes_before_clause_rejections():
    p = plan(DropColumn("k"), context=ctx(job="job 7 (RUNNING)"))
    assert_rejected(p, "job 7")
    assert_clause_rejected(p, 0, "primary-key")


def test_rewrite_property_makes_every_clause_heavy():
    p = plan(AddColumn(cdef("x", "INT", default=1)), DropColumn("s"), props={"rewrite": "true"})
    assert p.kind is Verdict.HEAVY
    assert p.rejection is None
    assert [c.verdict for c in p.clauses] == [Verdict.HEAVY, Verdict.HEAVY]
    assert all('"rewrite" = "true"' in c.reason for c in p.clauses)
    # a rewrite materialises the added column
    assert ColumnConversion(8, None, T("INT"), False) in p.conversions


def test_rewrite_property_does_not_hide_a_rejection():
    p = plan(DropColumn("s"), DropColumn("k"), props={"rewrite": "true"})
    assert_rejected(p, "cannot drop column k")
    assert [c.verdict for c in p.clauses] == [Verdict.HEAVY, Verdict.REJECTED]


# ------------------------------------------------------------------------------------------------
# ADD COLUMN
# ------------------------------------------------------------------------------------------------


def test_add_column_at_the_end_with_a_new_id():
    p = plan(AddColumn(cdef("x", "BIGINT")))
    assert_light(p)
    x = col(p.new, "x")
    assert x == Column(8, "x", T("BIGINT"), nullable=True, initial_default=None, write_default=None, comment=None)
    assert names(p.new) == ["k", "p", "v", "s", "d", "x"]
    assert p.next_column_id == 9
    assert "metadata only" in p.clauses[0].reason and "8" in p.clauses[0].reason
    # keys are untouched
    assert (p.new.primary_key, p.new.partition_by, p.new.distributed_by, p.new.buckets, p.new.sort_key) == ((1, 2), (2,), (1,), 4, (1,))


def test_add_column_not_null_with_default_sets_both_defaults():
    p = plan(AddColumn(cdef("x", "INT", nullable=False, default=7, comment="seven")))
    assert_light(p)
    assert col(p.new, "x") == Column(8, "x", T("INT"), nullable=False, initial_default=7, write_default=7, comment="seven")
    assert "initial default 7" in p.clauses[0].reason


@pytest.mark.parametrize(
    "type_, default, expected",
    [
        ("DECIMAL(5,2)", Decimal("1.5"), Decimal("1.50")),
        ("DATE", "2024-02-29", dt.date(2024, 2, 29)),
        ("DATETIME", "2024-01-01 10:00:00", dt.datetime(2024, 1, 1, 10)),
        ("BOOLEAN", True, True),
        ("VARCHAR(3)", "abc", "abc"),
        ("STRING", None, None),
    ],
)
def test_add_column_default_is_coerced_to_the_type(type_, default, expected):
    p = plan(AddColumn(cdef("x", type_, default=default)))
    assert_light(p)
    x = col(p.new, "x")
    assert x.initial_default == expected and x.write_default == expected


def test_add_column_first_and_after():
    p = plan(AddColumn(cdef("x", "INT", first=True)), AddColumn(cdef("y", "INT", after="V")))
    assert_light(p)
    assert names(p.new) == ["x", "k", "p", "v", "y", "s", "d"]
    assert [c.id for c in p.new.columns] == [8, 1, 2, 3, 9, 4, 5]


def test_add_columns_adds_in_order():
    p = plan(AddColumns((cdef("x", "INT"), cdef("y", "STRING", default="n"))))
    assert_light(p)
    assert len(p.clauses) == 1
    assert [(c.id, c.name) for c in p.new.columns[-2:]] == [(8, "x"), (9, "y")]
    assert col(p.new, "y").initial_default == "n"
    assert p.next_column_id == 10


def test_add_columns_is_all_or_nothing():
    p = plan(AddColumns((cdef("x", "INT"), cdef("X", "INT"))))
    assert_rejected(p, "cannot add column X", "duplicate column name")
    assert p.new.columns == PK_TABLE.columns
    assert p.next_column_id == 8


@pytest.mark.parametrize(
    "column, words",
    [
        (cdef("V", "INT"), ["cannot add column V", "duplicate column name", "v"]),
        (cdef("x", "INT", nullable=False), ["cannot add column x", "NOT NULL", "DEFAULT"]),
        (cdef("x", "INT", nullable=False, default=None), ["cannot add column x", "DEFAULT NULL", "NOT NULL"]),
        (cdef("x", "INT", default="abc"), ["cannot add column x", "DEFAULT", "'abc'", "INT"]),
        (cdef("x", "TINYINT", default=300), ["cannot add column x", "300", "TINYINT"]),
        (cdef("x", "VARCHAR(2)", default="abc"), ["cannot add column x", "'abc'", "VARCHAR(2)"]),
        (cdef("x", "DECIMAL(5,2)", default=Decimal("1.234")), ["cannot add column x", "1.234", "DECIMAL(5,2)"]),
        (cdef("x", "DATE", default="yesterday"), ["cannot add column x", "'yesterday'", "DATE"]),
        (cdef("x", "INT", default=True), ["cannot add column x", "TRUE", "INT"]),
        (cdef("x", "WIBBLE"), ["cannot add column x", "WIBBLE"]),
        (cdef("x", "INT", after="nope"), ["cannot add column x", "unknown column nope"]),
        (cdef("1x", "INT"), ["cannot add column '1x'", "invalid name"]),
    ],
)
def test_add_column_rejections(column, words):
    p = plan(AddColumn(column))
    assert_rejected(p, *words)
    assert p.new.columns == PK_TABLE.columns
    assert p.next_column_id == 8


# ------------------------------------------------------------------------------------------------
# DROP COLUMN
# ------------------------------------------------------------------------------------------------


def test_drop_value_column():
    p = plan(DropColumn("S"))
    assert_light(p)
    assert names(p.new) == ["k", "p", "v", "d"]
    assert "metadata only" in p.clauses[0].reason


def test_drop_then_add_gets_a_new_id():
    p = plan(DropColumn("s"), AddColumn(cdef("s", "VARCHAR(10)")))
    assert_light(p)
    assert col(p.new, "s").id == 8
    assert 4 not in p.new.column_ids


def test_ids_are_never_reused_across_statements():
    first = plan(DropColumn("s"))
    second = plan_alter(ctx(first.new, next_id=first.next_column_id), alter(AddColumn(cdef("s", "INT"))))
    assert col(second.new, "s").id == 8
    assert second.new.version == 5


@pytest.mark.parametrize(
    "schema, column, words",
    [
        (PK_TABLE, "k", ["cannot drop column k: it is a primary-key column"]),
        (PK_TABLE, "p", ["cannot drop column p: it is a primary-key column"]),
        (PLAIN_TABLE, "a", ["cannot drop column a: it is a partition column"]),
        (PLAIN_TABLE, "e", ["cannot drop column e: it is a distribution column"]),
        (PLAIN_TABLE, "f", ["cannot drop column f: it is in the sort key; change ORDER BY first"]),
        (PK_TABLE, "nope", ["unknown column nope"]),
    ],
)
def test_drop_rejections(schema, column, words):
    p = plan(DropColumn(column), context=ctx(schema))
    assert_rejected(p, *words)
    assert p.new.columns == schema.columns


def test_unknown_column_message_exactly():
    assert plan(DropColumn("x")).rejection == "ALTER TABLE t: unknown column x"


def test_drop_column_used_by_a_view_names_the_view():
    p = plan(DropColumn("s"), context=ctx(views={4: ("v_report",)}))
    assert_rejected(p, "cannot drop column s", "view v_report")


def test_drop_column_used_by_views_names_every_view():
    p = plan(DropColumn("s"), context=ctx(views={4: ("v2", "v1"), 3: ("other",)}))
    msg = assert_rejected(p, "cannot drop column s", "views v1, v2")
    assert "other" not in msg


def test_view_on_another_column_does_not_block_a_drop():
    assert_light(plan(DropColumn("s"), context=ctx(views={3: ("v1",)})))


def test_drop_last_column_is_rejected():
    only = SchemaVersion(table_id=1, version=1, columns=(Column(1, "a", T("INT")),))
    assert_rejected(plan(DropColumn("a"), context=ctx(only)), "cannot drop column a", "last column")


def test_drop_all_value_columns_one_by_one_until_the_last():
    two = SchemaVersion(table_id=1, version=1, columns=(Column(1, "a", T("INT")), Column(2, "b", T("INT"))))
    p = plan(DropColumn("a"), DropColumn("b"), context=ctx(two))
    assert p.clauses[0].verdict is Verdict.LIGHT
    assert_clause_rejected(p, 1, "last column")
    assert names(p.new) == ["b"]


# ------------------------------------------------------------------------------------------------
# RENAME COLUMN
# ------------------------------------------------------------------------------------------------


def test_rename_keeps_the_id():
    p = plan(RenameColumn("s", "label"))
    assert_light(p)
    assert col(p.new, "label").id == 4
    assert p.new.column("s") is None
    assert col(p.new, "label").comment == "text"


def test_rename_to_a_different_case_is_allowed():
    p = plan(RenameColumn("s", "S"))
    assert_light(p)
    assert names(p.new) == ["k", "p", "v", "S", "d"]


def test_rename_a_sort_key_column_keeps_the_sort_key():
    p = plan(RenameColumn("f", "g"), context=ctx(PLAIN_TABLE))
    assert_light(p)
    assert p.new.sort_key == (6,)
    assert p.new.names(p.new.sort_key) == ["g"]


def test_rename_a_view_used_column_is_allowed():
    assert_light(plan(RenameColumn("s", "label"), context=ctx(views={4: ("v1",)})))


@pytest.mark.parametrize(
    "schema, old, new, words",
    [
        (PK_TABLE, "nope", "x", ["unknown column nope"]),
        (PK_TABLE, "s", "D", ["cannot rename column s to D", "duplicate column name"]),
        (PK_TABLE, "s", "s", ["cannot rename column s"]),
        (PK_TABLE, "s", "bad-name", ["cannot rename column s", "invalid name"]),
        (PK_TABLE, "k", "key", ["cannot rename column k: it is a primary-key column"]),
        (PLAIN_TABLE, "a", "aa", ["cannot rename column a: it is a partition column"]),
        (PLAIN_TABLE, "e", "ee", ["cannot rename column e: it is a distribution column"]),
    ],
)
def test_rename_rejections(schema, old, new, words):
    p = plan(RenameColumn(old, new), context=ctx(schema))
    assert_rejected(p, *words)
    assert p.new.columns == schema.columns


# ------------------------------------------------------------------------------------------------
# MODIFY COLUMN
# ------------------------------------------------------------------------------------------------


def test_modify_widening_is_light_and_keeps_everything_else():
    p = plan(ModifyColumn(cdef("v", "BIGINT")))
    assert_light(p)
    assert "lossless widening INT -> BIGINT" in p.clauses[0].reason
    assert names(p.new) == names(PK_TABLE)
    assert col(p.new, "v") == Column(3, "v", T("BIGINT"), nullable=False, initial_default=0, write_default=0, comment="value")
    assert p.conversions == ()


@pytest.mark.parametrize(
    "column, old, new",
    [
        ("s", "VARCHAR(10)", "VARCHAR(20)"),
        ("s", "VARCHAR(10)", "STRING"),
        ("d", "DECIMAL(10,2)", "DECIMAL(12,4)"),
        ("v", "INT", "LARGEINT"),
    ],
)
def test_modify_lossless_widenings(column, old, new):
    p = plan(ModifyColumn(cdef(column, new)))
    assert_light(p)
    assert col(p.new, column).type == T(new)
    assert f"{old} -> {T(new).sql()}" in p.clauses[0].reason


def test_modify_widening_converts_the_defaults():
    p = plan(ModifyColumn(cdef("d", "DECIMAL(12,4)")))
    d = col(p.new, "d")
    assert d.initial_default == Decimal("1.5000") and d.write_default == Decimal("2.0000")
    assert str(d.write_default) == "2.0000"


def test_modify_heavy_type_change_records_a_conversion():
    p = plan(ModifyColumn(cdef("s", "INT")))
    assert p.kind is Verdict.HEAVY and p.rejection is None
    assert p.clauses[0].verdict is Verdict.HEAVY
    assert "VARCHAR(10) -> INT" in p.clauses[0].reason
    assert p.conversions == (ColumnConversion(4, T("VARCHAR(10)"), T("INT"), False),)
    assert col(p.new, "s").type == T("INT")
    assert col(p.new, "s").comment == "text"


def test_heavy_type_change_of_a_not_null_column_checks_not_null():
    p = plan(ModifyColumn(cdef("v", "SMALLINT")))
    assert p.kind is Verdict.HEAVY
    assert p.conversions == (ColumnConversion(3, T("INT"), T("SMALLINT"), True),)
    assert col(p.new, "v").nullable is False


def test_modify_same_type_is_no_change():
    p = plan(ModifyColumn(cdef("v", "INT")))
    assert_light(p)
    assert p.clauses[0].reason == "no change"
    assert p.new.columns == PK_TABLE.columns


def test_modify_with_a_type_synonym_is_no_change():
    p = plan(ModifyColumn(cdef("v", "INTEGER")))
    assert_light(p)
    assert p.clauses[0].reason == "no change"


def test_modify_key_column_without_a_type_change_is_allowed():
    p = plan(ModifyColumn(cdef("k", "INT", nullable=False, comment="the key")))
    assert_light(p)
    assert col(p.new, "k").comment == "the key"
    assert col(p.new, "k").nullable is False


@pytest.mark.parametrize(
    "schema, column, type_, words",
    [
        (PK_TABLE, "k", "BIGINT", ["cannot change the type of column k: it is a primary-key column"]),
        (PK_TABLE, "p", "DATETIME", ["cannot change the type of column p: it is a primary-key column"]),
        (PLAIN_TABLE, "a", "BIGINT", ["cannot change the type of column a: it is a partition column"]),
        (PLAIN_TABLE, "e", "LARGEINT", ["cannot change the type of column e: it is a distribution column"]),
        (PLAIN_TABLE, "dt", "INT", ["cannot change the type of column dt", "DATE -> INT"]),
        (PLAIN_TABLE, "c", "BOOLEAN", ["cannot change the type of column c", "STRING -> BOOLEAN"]),
        (PLAIN_TABLE, "nope", "INT", ["unknown column nope"]),
        (PLAIN_TABLE, "f", "NUMBER", ["cannot modify column f", "NUMBER"]),
    ],
)
def test_modify_type_rejections(schema, column, type_, words):
    p = plan(ModifyColumn(cdef(column, type_)), context=ctx(schema))
    assert_rejected(p, *words)
    assert p.new.columns == schema.columns


def test_modify_type_of_a_view_used_column_is_rejected_naming_the_view():
    p = plan(ModifyColumn(cdef("v", "BIGINT")), context=ctx(views={3: ("daily",)}))
    assert_rejected(p, "cannot change the type of column v", "view daily")


def test_modify_comment_of_a_view_used_column_is_allowed():
    p = plan(ModifyColumn(cdef("v", "INT", comment="new")), context=ctx(views={3: ("daily",)}))
    assert_light(p)
    assert col(p.new, "v").comment == "new"


def test_modify_not_null_to_null_is_light():
    p = plan(ModifyColumn(cdef("v", "INT", nullable=True)))
    assert_light(p)
    v = col(p.new, "v")
    assert v.nullable is True and v.initial_default == 0 and v.comment == "value"
    assert "NOT NULL -> NULL" in p.clauses[0].reason


def test_modify_null_to_not_null_is_heavy_with_a_check():
    p = plan(ModifyColumn(cdef("s", "VARCHAR(10)", nullable=False)))
    assert p.kind is Verdict.HEAVY
    assert "NULL -> NOT NULL" in p.clauses[0].reason
    assert p.conversions == (ColumnConversion(4, T("VARCHAR(10)"), T("VARCHAR(10)"), True),)
    assert col(p.new, "s").nullable is False


def test_modify_primary_key_column_to_null_is_rejected():
    assert_rejected(plan(ModifyColumn(cdef("k", "INT", nullable=True))), "column k", "NULL", "primary-key")


def test_modify_restated_default_changes_only_the_write_default():
    p = plan(ModifyColumn(cdef("v", "INT", default=5)))
    assert_light(p)
    v = col(p.new, "v")
    assert (v.initial_default, v.write_default, v.nullable, v.comment) == (0, 5, False, "value")
    assert "write default 0 -> 5" in p.clauses[0].reason


def test_modify_restated_default_must_fit_the_new_type():
    p = plan(ModifyColumn(cdef("v", "BIGINT", default=2**40)))
    assert_light(p)
    assert col(p.new, "v").write_default == 2**40
    assert col(p.new, "v").initial_default == 0
    assert_rejected(plan(ModifyColumn(cdef("v", "INT", default=2**40))), "cannot modify column v", str(2**40), "INT")
    assert_rejected(plan(ModifyColumn(cdef("v", "INT", default="x"))), "cannot modify column v", "'x'")


def test_modify_default_null_on_a_not_null_column_is_rejected():
    assert_rejected(plan(ModifyColumn(cdef("v", "INT", default=None))), "column v", "DEFAULT NULL", "NOT NULL")


def test_modify_to_null_with_default_null_is_allowed():
    p = plan(ModifyColumn(cdef("v", "INT", nullable=True, default=None)))
    assert_light(p)
    assert col(p.new, "v").write_default is None


def test_modify_type_change_whose_default_does_not_fit_is_rejected():
    p = plan(ModifyColumn(cdef("c", "INT")), context=ctx(PLAIN_TABLE))
    assert_rejected(p, "column c", "'abc'", "INT")


def test_modify_type_change_to_string_formats_the_default():
    p = plan(ModifyColumn(cdef("d", "VARCHAR(20)")))
    assert p.kind is Verdict.HEAVY
    d = col(p.new, "d")
    assert (d.initial_default, d.write_default) == ("1.50", "2.00")


def test_modify_moves_a_value_column():
    p = plan(ModifyColumn(cdef("d", "DECIMAL(10,2)", after="p")))
    assert_light(p)
    assert names(p.new) == ["k", "p", "d", "v", "s"]
    assert "moved after p" in p.clauses[0].reason
    p = plan(ModifyColumn(cdef("s", "VARCHAR(10)", first=True)))
    assert_light(p)
    assert names(p.new) == ["s", "k", "p", "v", "d"]


def test_modify_move_and_widen_together():
    p = plan(ModifyColumn(cdef("v", "BIGINT", after="d")))
    assert_light(p)
    assert names(p.new) == ["k", "p", "s", "d", "v"]
    assert col(p.new, "v").type == T("BIGINT")


def test_modify_moving_a_primary_key_column_is_rejected():
    assert_rejected(plan(ModifyColumn(cdef("k", "INT", after="v"))), "cannot move column k", "primary-key")
    assert_rejected(plan(ModifyColumn(cdef("p", "DATE", first=True))), "cannot move column p", "primary-key")


def test_modify_primary_key_column_to_where_it_already_is_is_no_change():
    p = plan(ModifyColumn(cdef("k", "INT", first=True)))
    assert_light(p)
    assert p.clauses[0].reason == "no change"


def test_modify_move_rejections():
    assert_rejected(plan(ModifyColumn(cdef("v", "INT", after="nope"))), "cannot move column v", "unknown column nope")
    assert_rejected(plan(ModifyColumn(cdef("v", "INT", after="v"))), "cannot move column v", "itself")


def test_modify_type_twice_in_one_statement_is_rejected():
    p = plan(ModifyColumn(cdef("v", "BIGINT")), ModifyColumn(cdef("v", "LARGEINT")))
    assert_rejected(p, "cannot change the type of column v", "already changed")
    assert p.clauses[0].verdict is Verdict.LIGHT
    assert col(p.new, "v").type == T("BIGINT")


def test_modify_keeps_an_unrestated_comment_and_position():
    p = plan(ModifyColumn(cdef("s", "VARCHAR(30)", nullable=True)))
    assert_light(p)
    s = col(p.new, "s")
    assert (s.id, s.comment, s.nullable) == (4, "text", True)
    assert names(p.new) == names(PK_TABLE)


# ------------------------------------------------------------------------------------------------
# SET / DROP DEFAULT
# ------------------------------------------------------------------------------------------------


def test_set_default_changes_only_the_write_default():
    p = plan(SetDefault("V", lit(7)))
    assert_light(p)
    v = col(p.new, "v")
    assert (v.initial_default, v.write_default) == (0, 7)


def test_set_default_null_on_a_nullable_column():
    p = plan(SetDefault("d", lit(None)))
    assert_light(p)
    assert col(p.new, "d").write_default is None
    assert col(p.new, "d").initial_default == Decimal("1.50")


@pytest.mark.parametrize(
    "column, value, words",
    [
        ("v", "x", ["column v", "'x'", "INT"]),
        ("v", None, ["column v", "DEFAULT NULL", "NOT NULL"]),
        ("s", "much too long", ["column s", "VARCHAR(10)"]),
        ("d", Decimal("1.005"), ["column d", "DECIMAL(10,2)"]),
        ("nope", 1, ["unknown column nope"]),
    ],
)
def test_set_default_rejections(column, value, words):
    p = plan(SetDefault(column, lit(value)))
    assert_rejected(p, *words)
    assert p.new.columns == PK_TABLE.columns


def test_drop_default_on_a_not_null_column_is_allowed():
    p = plan(DropDefault("v"))
    assert_light(p)
    v = col(p.new, "v")
    assert (v.initial_default, v.write_default, v.nullable) == (0, None, False)


def test_drop_default_unknown_column():
    assert_rejected(plan(DropDefault("zz")), "unknown column zz")


# ------------------------------------------------------------------------------------------------
# ORDER BY / DISTRIBUTED BY
# ------------------------------------------------------------------------------------------------


def test_order_by_is_heavy_and_sets_the_sort_key():
    p = plan(OrderBy(("s", "K")))
    assert p.kind is Verdict.HEAVY and p.rejection is None
    assert p.new.sort_key == (4, 1)
    assert p.clauses[0].verdict is Verdict.HEAVY
    assert p.conversions == ()


@pytest.mark.parametrize(
    "columns, words",
    [(("nope",), ["unknown column nope"]), (("s", "S"), ["column S", "twice", "ORDER BY"]), ((), ["ORDER BY"])],
)
def test_order_by_rejections(columns, words):
    p = plan(OrderBy(columns))
    assert_rejected(p, *words)
    assert p.new.sort_key == (1,)


def test_distributed_by_is_heavy_and_sets_distribution():
    p = plan(DistributeBy(("p", "k"), 16))
    assert p.kind is Verdict.HEAVY and p.rejection is None
    assert (p.new.distributed_by, p.new.buckets) == ((2, 1), 16)


def test_distributed_by_without_primary_key_takes_any_non_float_column():
    p = plan(DistributeBy(("c",), 1024), context=ctx(PLAIN_TABLE))
    assert p.kind is Verdict.HEAVY
    assert (p.new.distributed_by, p.new.buckets) == ((3,), 1024)
    # the old distribution column is an ordinary value column again, in the same statement
    p = plan(DistributeBy(("c",), 3), DropColumn("e"), context=ctx(PLAIN_TABLE))
    assert p.kind is Verdict.HEAVY
    assert p.new.column("e") is None


@pytest.mark.parametrize(
    "schema, columns, buckets, words",
    [
        (PLAIN_TABLE, ("b",), 4, ["cannot distribute by column b", "DOUBLE"]),
        (PK_TABLE, ("v",), 4, ["cannot distribute by column v", "primary key"]),
        (PK_TABLE, ("k",), 0, ["BUCKETS", "1024", "0"]),
        (PK_TABLE, ("k",), 1025, ["BUCKETS", "1025"]),
        (PK_TABLE, ("nope",), 4, ["unknown column nope"]),
        (PK_TABLE, ("k", "k"), 4, ["column k", "twice"]),
    ],
)
def test_distributed_by_rejections(schema, columns, buckets, words):
    p = plan(DistributeBy(columns, buckets), context=ctx(schema))
    assert_rejected(p, *words)
    assert (p.new.distributed_by, p.new.buckets) == (schema.distributed_by, schema.buckets)


# ------------------------------------------------------------------------------------------------
# Several clauses
# ------------------------------------------------------------------------------------------------


def test_add_then_rename_the_added_column():
    p = plan(AddColumn(cdef("x", "INT", default=1)), RenameColumn("x", "y"))
    assert_light(p)
    y = col(p.new, "y")
    assert (y.id, y.initial_default) == (8, 1)
    assert p.new.column("x") is None


def test_clauses_apply_in_order_into_one_version():
    p = plan(
        AddColumn(cdef("x", "INT")),
        ModifyColumn(cdef("x", "BIGINT", first=True)),
        SetDefault("x", lit(3)),
        DropColumn("s"),
    )
    assert_light(p)
    assert p.new.version == 4
    assert names(p.new) == ["x", "k", "p", "v", "d"]
    assert col(p.new, "x") == Column(8, "x", T("BIGINT"), nullable=True, initial_default=None, write_default=3)


def test_a_rejected_clause_among_good_ones_rejects_the_plan():
    p = plan(AddColumn(cdef("x", "INT")), DropColumn("k"), RenameColumn("s", "label"))
    assert_rejected(p, "cannot drop column k: it is a primary-key column")
    assert [c.verdict for c in p.clauses] == [Verdict.LIGHT, Verdict.REJECTED, Verdict.LIGHT]
    assert p.clauses[1].reason == p.rejection
    # the good clauses were still planned (for EXPLAIN), against the schema without the bad one
    assert names(p.new) == ["k", "p", "v", "label", "d", "x"]


def test_later_clauses_see_the_schema_without_the_rejected_clause():
    p = plan(AddColumn(cdef("x", "INT", nullable=False)), RenameColumn("x", "y"))
    assert_rejected(p, "cannot add column x")
    assert_clause_rejected(p, 1, "unknown column x")


def test_the_first_rejection_is_the_plan_rejection():
    p = plan(DropColumn("k"), DropColumn("zz"))
    assert_rejected(p, "cannot drop column k")
    assert_clause_rejected(p, 1, "unknown column zz")


def test_one_heavy_clause_makes_the_statement_heavy_and_materialises_added_columns():
    p = plan(AddColumn(cdef("x", "INT", nullable=False, default=0)), ModifyColumn(cdef("s", "BIGINT")), DropColumn("d"))
    assert p.kind is Verdict.HEAVY
    assert [c.verdict for c in p.clauses] == [Verdict.LIGHT, Verdict.HEAVY, Verdict.LIGHT]
    assert set(p.conversions) == {
        ColumnConversion(8, None, T("INT"), True),
        ColumnConversion(4, T("VARCHAR(10)"), T("BIGINT"), False),
    }


def test_a_heavy_statement_lists_light_type_changes_too():
    p = plan(ModifyColumn(cdef("v", "BIGINT")), OrderBy(("v",)))
    assert p.kind is Verdict.HEAVY
    assert p.conversions == (ColumnConversion(3, T("INT"), T("BIGINT"), False),)


def test_rename_then_add_the_old_name():
    p = plan(RenameColumn("s", "s_old"), AddColumn(cdef("s", "INT")))
    assert_light(p)
    assert (col(p.new, "s_old").id, col(p.new, "s").id) == (4, 8)


def test_table_context_defaults():
    c = TableContext(name="t", current=PK_TABLE, next_column_id=8)
    assert dict(c.view_uses) == {} and c.active_job is None
    assert_light(plan_alter(c, alter(DropColumn("s"))))
