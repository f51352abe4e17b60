"""The planner: CREATE TABLE and ALTER TABLE rules (docs/semantics.md, "Lightweight, heavyweight, rejected") as plain Python.

`plan_create_table` builds a table's first schema version; `plan_alter` classifies every clause of
an ALTER TABLE as LIGHT / HEAVY / REJECTED and builds the one new version they produce together:
`alter_planner.py` checks the statement, `clause_rules.py` dispatches each clause to its rule
(`modify_column.py` and `revert.py` hold the two largest), on the state of `alter_state.py`.
"""

from alterflow.planner.alter_planner import AlterPlan, ClausePlan, ColumnConversion, plan_alter
from alterflow.planner.alter_state import TableContext, Verdict
from alterflow.planner.clause_text import render_clause
from alterflow.planner.create_table import plan_create_table
from alterflow.planner.properties import AlterProperties, parse_properties
from alterflow.planner.rejections import AlterRejected, CreateTableRejected

__all__ = [
    "AlterPlan",
    "AlterProperties",
    "AlterRejected",
    "ClausePlan",
    "ColumnConversion",
    "CreateTableRejected",
    "TableContext",
    "Verdict",
    "parse_properties",
    "plan_alter",
    "plan_create_table",
    "render_clause",
]
