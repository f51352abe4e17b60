"""ALTER TABLE planning: docs/semantics.md, "Lightweight, heavyweight, rejected", as code.

`plan_alter` turns a parsed `AlterTable` and the table's current state into an `AlterPlan`: every
clause classified LIGHT / HEAVY / REJECTED with its reason, the one new schema version all
clauses produce together, and what a heavyweight rewrite must do per column. It never raises for
a rule violation: the violation is recorded (so EXPLAIN ALTER can show every clause) and
`AlterPlan.raise_if_rejected` turns it into an `AlterRejected`. The rules of each clause class
are in `clause_rules.py` (`plan_clause`); this module checks the statement as a whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from alterflow.catalog.schema import SchemaVersion
from alterflow.planner.alter_state import ClauseRejected, TableContext, Verdict, WorkingSchema
from alterflow.planner.clause_rules import plan_clause
from alterflow.planner.clause_text import render_clause
from alterflow.planner.properties import AlterProperties, parse_properties
from alterflow.planner.rejections import AlterRejected, one_line
from alterflow.sql.ast import AlterTable, ModifyColumn, RevertToVersion
from alterflow.values.types import Change, DataType, classify_conversion

__all__ = ["AlterPlan", "ClausePlan", "ColumnConversion", "plan_alter"]

REWRITE_NOTE = 'PROPERTIES ("rewrite" = "true"): the data is rewritten'


@dataclass(frozen=True)
class ClausePlan:
    text: str  # the clause re-rendered as SQL, e.g. "MODIFY COLUMN c BIGINT"
    verdict: Verdict
    reason: str  # why; for a rejected clause, the rejection message
    column_id: int | None = None  # the column a MODIFY COLUMN changes (after the statement's earlier renames)


@dataclass(frozen=True)
class ColumnConversion:
    """What a heavyweight rewrite must do to one column of the new version."""

    column_id: int
    old_type: DataType | None  # None for a column added by the statement
    new_type: DataType
    check_not_null: bool


@dataclass(frozen=True)
class AlterPlan:
    table: str
    clauses: tuple[ClausePlan, ...]
    old: SchemaVersion
    new: SchemaVersion  # version old.version + 1, statement = the ALTER's text
    next_column_id: int
    properties: AlterProperties
    conversions: tuple[ColumnConversion, ...]
    kind: Verdict  # LIGHT, HEAVY, or REJECTED when the statement or any clause is
    rejection: str | None  # the first rejection's message
    # A lightweight plan's columns read narrower than today's files store them (a REVERT of a
    # widening whose stored values all fit): its commit checks the files again under the table's lock.
    narrowed: tuple[int, ...] = ()

    @property
    def rejected(self) -> bool:
        return self.kind is Verdict.REJECTED

    @property
    def heavy(self) -> bool:
        return self.kind is Verdict.HEAVY

    def raise_if_rejected(self) -> None:
        if self.rejection is not None or self.kind is Verdict.REJECTED:
            raise AlterRejected(self.rejection or f"ALTER TABLE {self.table}: rejected")


# ------------------------------------------------------------------------------------------------
# The statement
# ------------------------------------------------------------------------------------------------


def plan_alter(ctx: TableContext, stmt: AlterTable) -> AlterPlan:
    """Plan `stmt` against `ctx`. Never raises for a broken rule: see `AlterPlan.rejection`."""
    rejections: list[str] = []
    try:
        props = parse_properties(ctx.name, stmt.properties)
    except AlterRejected as exc:
        rejections.append(str(exc))
        props = AlterProperties()
    rejections += [_message(ctx, text) for text in _statement_rejections(ctx, stmt, props)]
    work = WorkingSchema.of(ctx.current, ctx.next_column_id)
    clauses: list[ClausePlan] = []
    for clause in stmt.clauses:
        planned, work = _plan_one(ctx, work, clause, props)
        clauses.append(planned)
        if planned.verdict is Verdict.REJECTED:
            rejections.append(planned.reason)
    rewrites = props.rewrite or any(c.verdict is Verdict.HEAVY for c in clauses)
    kind = Verdict.REJECTED if rejections else Verdict.HEAVY if rewrites else Verdict.LIGHT
    new = work.schema(ctx.current, stmt.sql)
    return AlterPlan(
        table=ctx.name,
        clauses=tuple(clauses),
        old=ctx.current,
        new=new,
        next_column_id=work.next_column_id,
        properties=props,
        conversions=_conversions(ctx.current, new, rewrites),
        kind=kind,
        rejection=rejections[0] if rejections else None,
        narrowed=_narrowed(ctx.current, new) if kind is Verdict.LIGHT else (),
    )


def _message(ctx: TableContext, text: str) -> str:
    return one_line(f"ALTER TABLE {ctx.name}: {text}")


def _statement_rejections(ctx: TableContext, stmt: AlterTable, props: AlterProperties) -> list[str]:
    """The rules the statement as a whole breaks, in the order they are reported."""
    broken = []
    if ctx.active_job:
        broken.append(f"{ctx.active_job} is not finished; one job per table")
    if props.expected_version is not None and props.expected_version != ctx.current.version:
        broken.append(f"expected_version {props.expected_version} but the current version is {ctx.current.version}")
    if not stmt.clauses:
        broken.append("nothing to change")
    if len(stmt.clauses) > 1 and any(isinstance(c, RevertToVersion) for c in stmt.clauses):
        broken.append("REVERT TO VERSION is a statement of its own; it cannot be combined with other clauses")
    return broken


def _plan_one(ctx: TableContext, work: WorkingSchema, clause, props: AlterProperties) -> tuple[ClausePlan, WorkingSchema]:
    """One clause's plan, and the working schema after it (unchanged when the clause is rejected)."""
    text = render_clause(clause)
    modified = work.find(clause.column.name) if isinstance(clause, ModifyColumn) else None
    column_id = modified.id if modified is not None else None
    trial = work.copy()
    try:
        verdict, reason = plan_clause(clause, trial, ctx)
    except ClauseRejected as exc:
        return ClausePlan(text, Verdict.REJECTED, _message(ctx, str(exc)), column_id), work
    if props.rewrite:
        verdict, reason = Verdict.HEAVY, f"{reason}; {REWRITE_NOTE}"
    return ClausePlan(text, verdict, reason, column_id), trial


def _narrowed(old: SchemaVersion, new: SchemaVersion) -> tuple[int, ...]:
    """Columns a lightweight plan reads narrower than `old` stores them."""
    return tuple(
        c.id
        for c in new.columns
        if (before := old.column_by_id(c.id)) is not None
        and before.type != c.type
        and classify_conversion(before.type, c.type)[0] is Change.HEAVY
    )


def _conversions(old: SchemaVersion, new: SchemaVersion, heavy: bool) -> tuple[ColumnConversion, ...]:
    """Per column of `new`, what a rewrite from `old` must do (only when the statement is heavy,
    except NULL -> NOT NULL checks and heavy type changes, which are always listed)."""
    out: list[ColumnConversion] = []
    for col in new.columns:
        before = old.column_by_id(col.id)
        if before is None:
            if heavy:
                out.append(ColumnConversion(col.id, None, col.type, not col.nullable))
            continue
        becomes_not_null = before.nullable and not col.nullable
        if before.type == col.type:
            change = Change.SAME
        else:
            change = classify_conversion(before.type, col.type)[0]
        if change is Change.HEAVY or becomes_not_null:
            out.append(ColumnConversion(col.id, before.type, col.type, not col.nullable))
        elif heavy and change is not Change.SAME:
            out.append(ColumnConversion(col.id, before.type, col.type, False))
    return tuple(out)
