"""The ALTER planner's rules, one per clause class: `plan_clause` dispatches on the clause's AST
class (`functools.singledispatch`). A rule changes the working schema as its clause does and returns
the clause's verdict and reason, or raises `ClauseRejected`. MODIFY COLUMN and REVERT TO VERSION
have their own modules (`modify_column.py`, `revert.py`)."""

from __future__ import annotations

import functools
from dataclasses import replace

from alterflow import sql as ast
from alterflow.catalog.schema import Column
from alterflow.planner.alter_defaults import default_sql, default_value
from alterflow.planner.alter_state import ClauseRejected, TableContext, Verdict, WorkingSchema, metadata_only, views_using
from alterflow.planner.modify_column import modify_column
from alterflow.planner.revert import revert_to_version
from alterflow.planner.statement_parts import MAX_BUCKETS, declared_column, first_duplicate, is_floating, name_list
from alterflow.sql.names import valid_name
from alterflow.values.types import InvalidType, parse_type

__all__ = ["plan_clause"]


@functools.singledispatch
def plan_clause(clause, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    """Plan one clause against `w` (changed in place): its verdict and reason. One rule per AST class, registered below."""
    raise ClauseRejected(f"unsupported clause {type(clause).__name__}")


plan_clause.register(ast.ModifyColumn, modify_column)
plan_clause.register(ast.RevertToVersion, revert_to_version)


@plan_clause.register(ast.AddColumn)
def _add_column(clause: ast.AddColumn, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    return metadata_only(_add_one(w, clause.column))


@plan_clause.register(ast.AddColumns)
def _add_columns(clause: ast.AddColumns, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    if not clause.columns:
        raise ClauseRejected("ADD COLUMN () needs at least one column")
    parts = [_add_one(w, cdef) for cdef in clause.columns]
    return metadata_only("; ".join(parts))


def _add_one(w: WorkingSchema, cdef: ast.ColumnDef) -> str:
    """Adds one column (a new id, at its position) and says so."""
    name = cdef.name
    what = f"cannot add column {name}"
    if not valid_name(name):
        raise ClauseRejected(
            f"cannot add column {name!r}: invalid name: names match [A-Za-z_][A-Za-z0-9_]* and have at most 128 characters"
        )
    existing = w.find(name)
    if existing is not None:
        raise ClauseRejected(f"{what}: duplicate column name (column {existing.name} already exists)")
    try:
        dtype = parse_type(cdef.type)
    except InvalidType as exc:
        raise ClauseRejected(f"{what}: {exc}") from None
    nullable = cdef.nullable is not False
    default = None if cdef.default is None else default_value(cdef.default, dtype, nullable, what)
    if not nullable and default is None:
        raise ClauseRejected(f"{what}: a NOT NULL column needs a DEFAULT for the rows that already exist")
    index, where = _added_position(w, cdef, what)
    col = declared_column(w.next_column_id, cdef, dtype, nullable, default)
    w.next_column_id += 1
    w.columns.insert(index, col)
    w.added.add(col.id)
    if default is None:
        return f"adds column id {col.id} ({name}){where}, NULL for existing rows"
    return f"adds column id {col.id} ({name}){where} with initial default {default_sql(default, dtype)}"


def _added_position(w: WorkingSchema, cdef: ast.ColumnDef, what: str) -> tuple[int, str]:
    """Where an added column goes (index, and how the reason says it): last, FIRST or AFTER a column."""
    pos = cdef.position
    if pos is not None and pos.first:
        return 0, " FIRST"
    if pos is not None and pos.after is not None:
        anchor = w.find(pos.after)
        if anchor is None:
            raise ClauseRejected(f"{what} AFTER {pos.after}: unknown column {pos.after}")
        return w.index(anchor.id) + 1, f" after {anchor.name}"
    return len(w.columns), ""


@plan_clause.register(ast.DropColumn)
def _drop_column(clause: ast.DropColumn, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    col = w.get(clause.name)
    what = f"cannot drop column {col.name}"
    role = w.role(col.id)
    if role is not None:
        raise ClauseRejected(f"{what}: it is a {role} column")
    if col.id in w.sort_key:
        raise ClauseRejected(f"{what}: it is in the sort key; change ORDER BY first")
    views = views_using(ctx, col.id)
    if views is not None:
        raise ClauseRejected(f"{what}: it is used by {views}")
    if len(w.columns) == 1:
        raise ClauseRejected(f"{what}: it is the last column")
    del w.columns[w.index(col.id)]
    return metadata_only(f"drops column id {col.id} ({col.name}); its data stays in old files until compaction")


@plan_clause.register(ast.RenameColumn)
def _rename_column(clause: ast.RenameColumn, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    col = w.get(clause.old)
    new = clause.new
    what = f"cannot rename column {col.name}"
    role = w.role(col.id)
    if role is not None:
        raise ClauseRejected(f"{what}: it is a {role} column")
    if not valid_name(new):
        raise ClauseRejected(f"{what} to {new!r}: invalid name: names match [A-Za-z_][A-Za-z0-9_]* and have at most 128 characters")
    other = w.find(new)
    if other is not None and other.id != col.id:
        raise ClauseRejected(f"{what} to {new}: duplicate column name (column {other.name} already exists)")
    if new == col.name:
        raise ClauseRejected(f"{what} to {new}: the new name is the current name")
    w.put(replace(col, name=new))
    return metadata_only(f"column id {col.id} is renamed {col.name} -> {new}; files match columns by id")


@plan_clause.register(ast.SetDefault)
def _set_default(clause: ast.SetDefault, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    col = w.get(clause.name)
    value = default_value(clause.default, col.type, col.nullable, f"cannot set the default of column {col.name}")
    w.put(replace(col, write_default=value))
    return metadata_only(f"the write default of {col.name} becomes {default_sql(value, col.type)}; existing rows keep their values")


@plan_clause.register(ast.DropDefault)
def _drop_default(clause: ast.DropDefault, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    col = w.get(clause.name)
    w.put(replace(col, write_default=None))
    tail = "; inserts must name it (NOT NULL)" if not col.nullable else "; inserts that omit it write NULL"
    return metadata_only(f"{col.name} has no write default{tail}")


def _resolve(w: WorkingSchema, names: tuple[str, ...], what: str) -> list[Column]:
    if not names:
        raise ClauseRejected(f"{what} needs at least one column")
    dup = first_duplicate(names)
    if dup is not None:
        raise ClauseRejected(f"column {dup} appears twice in {what}")
    return [w.get(n) for n in names]


@plan_clause.register(ast.OrderBy)
def _order_by(clause: ast.OrderBy, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    cols = _resolve(w, tuple(clause.columns), "ORDER BY")
    w.sort_key = tuple(c.id for c in cols)
    return Verdict.HEAVY, f"rewrite: the data is sorted by {name_list(c.name for c in cols)}"


@plan_clause.register(ast.DistributeBy)
def _distribute_by(clause: ast.DistributeBy, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    cols = _resolve(w, tuple(clause.columns), "DISTRIBUTED BY")
    for col in cols:
        if is_floating(col.type):
            raise ClauseRejected(f"cannot distribute by column {col.name}: {col.type.sql()} cannot be a distribution column")
        if w.primary_key and col.id not in w.primary_key:
            raise ClauseRejected(f"cannot distribute by column {col.name}: it is not part of the primary key")
    n = clause.buckets
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_BUCKETS:
        raise ClauseRejected(f"BUCKETS must be between 1 and {MAX_BUCKETS}, got {n}")
    w.distributed_by = tuple(c.id for c in cols)
    w.buckets = n
    return (
        Verdict.HEAVY,
        f"rewrite: the data is redistributed by HASH{name_list(c.name for c in cols)} into {n} buckets",
    )
