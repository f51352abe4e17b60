"""MODIFY COLUMN: the column's type, nullability, defaults, comment and position, each a step that
checks its rules and notes what it changes. The steps run in this order, so the first broken rule
in it is the one the user reads."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from alterflow.catalog.schema import Column
from alterflow.planner.alter_defaults import converted_default, default_sql, default_value
from alterflow.planner.alter_state import ClauseRejected, TableContext, Verdict, WorkingSchema, metadata_only, views_using
from alterflow.sql.ast import ColumnDef, ModifyColumn, Position
from alterflow.values.types import Change, DataType, InvalidType, InvalidValue, classify_conversion, parse_type

__all__ = ["modify_column"]


@dataclass
class _Changes:
    """What the steps found: the clause's verdict and, in order, the reason of each change."""

    verdict: Verdict = Verdict.LIGHT
    reasons: list[str] = field(default_factory=list)

    def note(self, reason: str, heavy: bool = False) -> None:
        self.reasons.append(reason)
        if heavy:
            self.verdict = Verdict.HEAVY

    def outcome(self) -> tuple[Verdict, str]:
        if not self.reasons:
            return Verdict.LIGHT, "no change"
        if self.verdict is Verdict.LIGHT:
            return metadata_only("; ".join(self.reasons))
        return self.verdict, "; ".join(self.reasons)


def modify_column(clause: ModifyColumn, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    cdef = clause.column
    col = w.get(cdef.name)
    changes = _Changes()
    new_type = _stated_type(col, cdef)
    change = _type_change(col, new_type, w, ctx, changes)
    if change is Change.SAME:
        new_type = col.type
    nullable = _nullability(col, cdef, w, changes)
    initial, write = _carried_defaults(col, new_type, restated=cdef.default is not None)
    if cdef.default is not None:
        write = _restated_default(col, cdef, new_type, nullable, changes)
    if cdef.comment is not None and cdef.comment != col.comment:
        changes.note("comment changed")
    updated = replace(
        col,
        type=new_type,
        nullable=nullable,
        initial_default=initial,
        write_default=write,
        comment=col.comment if cdef.comment is None else cdef.comment,
    )
    w.put(updated)
    _move(w, updated, cdef.position, changes)
    if change is not Change.SAME:
        w.type_changed.add(col.id)
    return changes.outcome()


def _stated_type(col: Column, cdef: ColumnDef) -> DataType:
    try:
        return parse_type(cdef.type)
    except InvalidType as exc:
        raise ClauseRejected(f"cannot modify column {col.name}: {exc}") from None


def _type_change(col: Column, new_type: DataType, w: WorkingSchema, ctx: TableContext, changes: _Changes) -> Change:
    """The kind of the type change; a change of a key column, of one a view uses, a rejected
    conversion or a second change of one column in the statement is refused."""
    change, why = classify_conversion(col.type, new_type)
    if change is Change.SAME:
        return change
    what = f"cannot change the type of column {col.name}"
    role = w.role(col.id)
    if role is not None:
        raise ClauseRejected(f"{what}: it is a {role} column")
    views = views_using(ctx, col.id)
    if views is not None:
        raise ClauseRejected(f"{what}: it is used by {views}")
    if change is Change.REJECTED:
        raise ClauseRejected(f"{what}: {why}")
    if col.id in w.type_changed:
        raise ClauseRejected(f"{what}: its type is already changed by this statement; change it once")
    changes.note(why + (" (a cast when reading)" if change is Change.LIGHT else ""), heavy=change is Change.HEAVY)
    return change


def _nullability(col: Column, cdef: ColumnDef, w: WorkingSchema, changes: _Changes) -> bool:
    """NOT NULL -> NULL is metadata (not for a primary-key column); NULL -> NOT NULL checks every row."""
    if cdef.nullable is True and not col.nullable:
        if col.id in w.primary_key:
            raise ClauseRejected(f"cannot make column {col.name} NULL: it is a primary-key column")
        changes.note("NOT NULL -> NULL")
        return True
    if cdef.nullable is False and col.nullable:
        changes.note("NULL -> NOT NULL: every existing value is checked by a rewrite", heavy=True)
        return False
    return col.nullable


def _carried_defaults(col: Column, new_type: DataType, restated: bool) -> tuple[object, object]:
    """The column's (initial, write) defaults under its new type: the initial default follows the
    type, and so does the write default unless the clause restates DEFAULT."""
    initial, write = col.initial_default, col.write_default
    if new_type == col.type:
        return initial, write
    initial = _carried_default(col, new_type, initial, "its initial default")
    if restated:
        return initial, write
    return initial, _carried_default(col, new_type, write, "its default", "; restate DEFAULT")


def _carried_default(col: Column, new_type: DataType, value: object, which: str, advice: str = "") -> object:
    """One of the column's defaults (`which`) converted to its new type; refused when it does not fit."""
    try:
        return converted_default(value, col.type, new_type)
    except InvalidValue:
        raise ClauseRejected(
            f"cannot change the type of column {col.name} to {new_type.sql()}: {which}"
            f" {default_sql(value, col.type)} does not fit {new_type.sql()}{advice}"
        ) from None


def _restated_default(col: Column, cdef: ColumnDef, new_type: DataType, nullable: bool, changes: _Changes):
    """The write default the clause states; existing rows keep their values."""
    write = default_value(cdef.default, new_type, nullable, f"cannot modify column {col.name}")
    if write != col.write_default or new_type != col.type:
        changes.note(
            f"write default {default_sql(col.write_default, col.type)} -> {default_sql(write, new_type)} (existing rows keep their values)"
        )
    return write


def _move(w: WorkingSchema, col: Column, pos: Position | None, changes: _Changes) -> None:
    """FIRST or AFTER another column; a primary-key column stays where it is."""
    if pos is None or not (pos.first or pos.after is not None):
        return
    others = [c for c in w.columns if c.id != col.id]
    if pos.first:
        index, where = 0, "FIRST"
    else:
        anchor = w.find(pos.after)
        if anchor is None:
            raise ClauseRejected(f"cannot move column {col.name} AFTER {pos.after}: unknown column {pos.after}")
        if anchor.id == col.id:
            raise ClauseRejected(f"cannot move column {col.name} AFTER itself")
        index = next(i for i, c in enumerate(others) if c.id == anchor.id) + 1
        where = f"after {anchor.name}"
    others.insert(index, col)
    if [c.id for c in others] == [c.id for c in w.columns]:
        return
    if col.id in w.primary_key:
        raise ClauseRejected(f"cannot move column {col.name}: it is a primary-key column")
    w.columns = others
    changes.note(f"moved {where}")
