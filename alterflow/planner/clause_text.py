"""An ALTER TABLE clause as SQL text (EXPLAIN ALTER shows it): one rendering per AST class."""

from __future__ import annotations

import functools

from alterflow.planner.statement_parts import column_def_sql, literal_sql, name_list
from alterflow.sql.ast import (
    AddColumn,
    AddColumns,
    DistributeBy,
    DropColumn,
    DropDefault,
    ModifyColumn,
    OrderBy,
    RenameColumn,
    RevertToVersion,
    SetDefault,
)

__all__ = ["render_clause"]


@functools.singledispatch
def render_clause(clause) -> str:
    """A clause as SQL text, for EXPLAIN ALTER (a class without a rendering: its name)."""
    return type(clause).__name__


@render_clause.register(AddColumn)
def _add_column_sql(clause: AddColumn) -> str:
    return "ADD COLUMN " + column_def_sql(clause.column)


@render_clause.register(AddColumns)
def _add_columns_sql(clause: AddColumns) -> str:
    return "ADD COLUMN (" + ", ".join(column_def_sql(c) for c in clause.columns) + ")"


@render_clause.register(DropColumn)
def _drop_column_sql(clause: DropColumn) -> str:
    return "DROP COLUMN " + clause.name


@render_clause.register(ModifyColumn)
def _modify_column_sql(clause: ModifyColumn) -> str:
    return "MODIFY COLUMN " + column_def_sql(clause.column)


@render_clause.register(RenameColumn)
def _rename_column_sql(clause: RenameColumn) -> str:
    return f"RENAME COLUMN {clause.old} TO {clause.new}"


@render_clause.register(SetDefault)
def _set_default_sql(clause: SetDefault) -> str:
    return f"ALTER COLUMN {clause.name} SET DEFAULT {literal_sql(clause.default)}"


@render_clause.register(DropDefault)
def _drop_default_sql(clause: DropDefault) -> str:
    return f"ALTER COLUMN {clause.name} DROP DEFAULT"


@render_clause.register(OrderBy)
def _order_by_sql(clause: OrderBy) -> str:
    return "ORDER BY " + name_list(clause.columns)


@render_clause.register(DistributeBy)
def _distribute_by_sql(clause: DistributeBy) -> str:
    return f"DISTRIBUTED BY HASH{name_list(clause.columns)} BUCKETS {clause.buckets}"


@render_clause.register(RevertToVersion)
def _revert_to_version_sql(clause: RevertToVersion) -> str:
    return f"REVERT TO VERSION {clause.version}"
