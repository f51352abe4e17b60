"""An ALTER TABLE clause as SQL text (EXPLAIN ALTER shows it): one rendering per AST class."""

from __future__ import annotations

from alterflow import sql as ast
from alterflow.planner.statement_parts import column_def_sql, literal_sql, name_list

__all__ = ["render_clause"]


def render_clause(clause) -> str:
    """A clause as SQL text, for EXPLAIN ALTER (a class without a rendering: its name)."""
    match clause:
        case ast.AddColumn(column=column):
            return "ADD COLUMN " + column_def_sql(column)
        case ast.AddColumns(columns=columns):
            return "ADD COLUMN (" + ", ".join(column_def_sql(c) for c in columns) + ")"
        case ast.DropColumn(name=name):
            return "DROP COLUMN " + name
        case ast.ModifyColumn(column=column):
            return "MODIFY COLUMN " + column_def_sql(column)
        case ast.RenameColumn(old=old, new=new):
            return f"RENAME COLUMN {old} TO {new}"
        case ast.SetDefault(name=name, default=default):
            return f"ALTER COLUMN {name} SET DEFAULT {literal_sql(default)}"
        case ast.DropDefault(name=name):
            return f"ALTER COLUMN {name} DROP DEFAULT"
        case ast.OrderBy(columns=columns):
            return "ORDER BY " + name_list(columns)
        case ast.DistributeBy(columns=columns, buckets=buckets):
            return f"DISTRIBUTED BY HASH{name_list(columns)} BUCKETS {buckets}"
        case ast.RevertToVersion(version=version):
            return f"REVERT TO VERSION {version}"
    return type(clause).__name__
