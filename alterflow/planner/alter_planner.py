"""ALTER TABLE planning: SPEC §3 as code.

`plan_alter` turns a parsed `AlterTable` and the table's current state into an `AlterPlan`: every
clause classified LIGHT / HEAVY / REJECTED with its reason, the one new schema version all
clauses produce together, and what a heavyweight rewrite must do per column. It never raises for
a rule violation: the violation is recorded (so EXPLAIN ALTER can show every clause) and
`AlterPlan.raise_if_rejected` turns it into an `AlterRejected`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from alterflow.catalog.schema import Column, SchemaVersion, key_role
from alterflow.planner.errors import AlterRejected, one_line
from alterflow.planner.properties import AlterProperties, parse_properties
from alterflow.planner.statement_parts import (
    MAX_BUCKETS,
    column_def_sql,
    first_duplicate,
    is_floating,
    literal_sql,
    name_list,
    valid_name,
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
    RenameColumn,
    RevertToVersion,
    SetDefault,
)
from alterflow.types import (
    Change,
    DataType,
    InvalidType,
    InvalidValue,
    classify_conversion,
    coerce_literal,
    coerce_value,
    format_value,
    integer_range,
    parse_type,
)

__all__ = [
    "TableContext",
    "Verdict",
    "ClausePlan",
    "ColumnConversion",
    "AlterPlan",
    "plan_alter",
    "render_clause",
]

REWRITE_NOTE = 'PROPERTIES ("rewrite" = "true"): the data is rewritten'


class Verdict(StrEnum):
    LIGHT = "LIGHT"
    HEAVY = "HEAVY"
    REJECTED = "REJECTED"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class TableContext:
    """What the planner needs to know about the table being altered."""

    name: str
    current: SchemaVersion
    next_column_id: int
    view_uses: Mapping[int, tuple[str, ...]] = field(default_factory=dict)  # column id -> view names
    active_job: str | None = None  # an unfinished alter job on the table, e.g. "job 7 (RUNNING)"
    # version number -> that kept version of the table, None once GC collected it (REVERT TO VERSION)
    versions: Callable[[int], SchemaVersion | None] = lambda _version: None
    # column id -> (lowest, highest) value of an integer column over today's files, from their
    # statistics ((None, None): no value stored), None when unknown (REVERT of a widening)
    stored_range: Callable[[int], tuple[int | None, int | None] | None] = lambda _column_id: None


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
# Rendering
# ------------------------------------------------------------------------------------------------


def render_clause(clause) -> str:
    """A clause as SQL text, for EXPLAIN ALTER."""
    if isinstance(clause, AddColumn):
        return "ADD COLUMN " + column_def_sql(clause.column)
    if isinstance(clause, AddColumns):
        return "ADD COLUMN (" + ", ".join(column_def_sql(c) for c in clause.columns) + ")"
    if isinstance(clause, DropColumn):
        return "DROP COLUMN " + clause.name
    if isinstance(clause, ModifyColumn):
        return "MODIFY COLUMN " + column_def_sql(clause.column)
    if isinstance(clause, RenameColumn):
        return f"RENAME COLUMN {clause.old} TO {clause.new}"
    if isinstance(clause, SetDefault):
        return f"ALTER COLUMN {clause.name} SET DEFAULT {literal_sql(clause.default)}"
    if isinstance(clause, DropDefault):
        return f"ALTER COLUMN {clause.name} DROP DEFAULT"
    if isinstance(clause, OrderBy):
        return "ORDER BY " + name_list(clause.columns)
    if isinstance(clause, DistributeBy):
        return f"DISTRIBUTED BY HASH{name_list(clause.columns)} BUCKETS {clause.buckets}"
    if isinstance(clause, RevertToVersion):
        return f"REVERT TO VERSION {clause.version}"
    return type(clause).__name__


# ------------------------------------------------------------------------------------------------
# Working state
# ------------------------------------------------------------------------------------------------


class _Reject(Exception):
    """A clause breaks a rule; the argument is the message without the "ALTER TABLE t: " prefix."""


@dataclass
class _Work:
    """The schema as the clauses planned so far leave it (mutable; copied per clause)."""

    columns: list[Column]
    primary_key: tuple[int, ...]
    partition_by: tuple[int, ...]
    distributed_by: tuple[int, ...]
    buckets: int
    sort_key: tuple[int, ...]
    next_column_id: int
    added: set[int]  # ids added by this statement
    type_changed: set[int]  # ids whose type a clause of this statement changed

    @classmethod
    def of(cls, schema: SchemaVersion, next_column_id: int) -> _Work:
        top = max((c.id for c in schema.columns), default=0) + 1
        return cls(
            columns=list(schema.columns),
            primary_key=tuple(schema.primary_key),
            partition_by=tuple(schema.partition_by),
            distributed_by=tuple(schema.distributed_by),
            buckets=schema.buckets,
            sort_key=tuple(schema.sort_key),
            next_column_id=max(next_column_id, top),
            added=set(),
            type_changed=set(),
        )

    def copy(self) -> _Work:
        return replace(self, columns=list(self.columns), added=set(self.added), type_changed=set(self.type_changed))

    def find(self, name: str) -> Column | None:
        key = name.lower()
        for col in self.columns:
            if col.name.lower() == key:
                return col
        return None

    def get(self, name: str) -> Column:
        col = self.find(name)
        if col is None:
            raise _Reject(f"unknown column {name}")
        return col

    def index(self, column_id: int) -> int:
        for i, col in enumerate(self.columns):
            if col.id == column_id:
                return i
        raise KeyError(column_id)

    def put(self, col: Column) -> None:
        self.columns[self.index(col.id)] = col

    def role(self, column_id: int) -> str | None:
        return key_role(column_id, self.primary_key, self.partition_by, self.distributed_by)

    def schema(self, base: SchemaVersion, statement: str) -> SchemaVersion:
        return SchemaVersion(
            table_id=base.table_id,
            version=base.version + 1,
            columns=tuple(self.columns),
            primary_key=self.primary_key,
            partition_by=self.partition_by,
            distributed_by=self.distributed_by,
            buckets=self.buckets,
            sort_key=self.sort_key,
            statement=statement,
        )


def _fmt(value, dtype: DataType) -> str:
    text = format_value(value, dtype)
    if isinstance(value, str):
        return "'" + text.replace("'", "''") + "'"
    return text


def _convert_value(value, old: DataType, new: DataType):
    """A stored default of type `old` as a value of type `new` (InvalidValue when it does not fit)."""
    if value is None:
        return None
    if new.is_string and not isinstance(value, str):
        value = format_value(value, old)
    elif old.name == "DATETIME" and new.name == "DATE":
        value = value.date()  # the conversion drops the time of day
    return coerce_value(value, new)


# ------------------------------------------------------------------------------------------------
# The planner
# ------------------------------------------------------------------------------------------------


class _Planner:
    def __init__(self, ctx: TableContext):
        self.ctx = ctx
        self.table = ctx.name

    def message(self, text: str) -> str:
        return one_line(f"ALTER TABLE {self.table}: {text}")

    def views_of(self, column_id: int) -> str | None:
        names = sorted(set(self.ctx.view_uses.get(column_id, ()) or ()), key=str.lower)
        if not names:
            return None
        return ("view " if len(names) == 1 else "views ") + ", ".join(names)

    # -- defaults --------------------------------------------------------------------------------
    @staticmethod
    def default_value(lit: Literal, dtype: DataType, nullable: bool, what: str):
        if lit.kind == "null":
            if not nullable:
                raise _Reject(f"{what}: DEFAULT NULL does not fit a NOT NULL column")
            return None
        try:
            value = coerce_literal(lit, dtype)
        except InvalidValue as exc:
            raise _Reject(f"{what}: DEFAULT {exc}") from None
        if value is None and not nullable:
            raise _Reject(f"{what}: DEFAULT NULL does not fit a NOT NULL column")
        return value

    # -- clauses ---------------------------------------------------------------------------------
    def add_one(self, w: _Work, cdef: ColumnDef) -> str:
        name = cdef.name
        what = f"cannot add column {name}"
        if not valid_name(name):
            raise _Reject(f"cannot add column {name!r}: invalid name: names match [A-Za-z_][A-Za-z0-9_]* and have at most 128 characters")
        existing = w.find(name)
        if existing is not None:
            raise _Reject(f"{what}: duplicate column name (column {existing.name} already exists)")
        try:
            dtype = parse_type(cdef.type)
        except InvalidType as exc:
            raise _Reject(f"{what}: {exc}") from None
        nullable = cdef.nullable is not False
        default = None
        if cdef.default is not None:
            default = self.default_value(cdef.default, dtype, nullable, what)
        if not nullable and default is None:
            raise _Reject(f"{what}: a NOT NULL column needs a DEFAULT for the rows that already exist")
        index = len(w.columns)
        where = ""
        pos = cdef.position
        if pos is not None and pos.first:
            index, where = 0, " FIRST"
        elif pos is not None and pos.after is not None:
            anchor = w.find(pos.after)
            if anchor is None:
                raise _Reject(f"{what} AFTER {pos.after}: unknown column {pos.after}")
            index, where = w.index(anchor.id) + 1, f" after {anchor.name}"
        col = Column(
            id=w.next_column_id,
            name=name,
            type=dtype,
            nullable=nullable,
            initial_default=default,
            write_default=default,
            comment=cdef.comment,
        )
        w.next_column_id += 1
        w.columns.insert(index, col)
        w.added.add(col.id)
        if default is None:
            return f"adds column id {col.id} ({name}){where}, NULL for existing rows"
        return f"adds column id {col.id} ({name}){where} with initial default {_fmt(default, dtype)}"

    def add_column(self, w: _Work, clause: AddColumn) -> tuple[Verdict, str]:
        return Verdict.LIGHT, "metadata only: " + self.add_one(w, clause.column)

    def add_columns(self, w: _Work, clause: AddColumns) -> tuple[Verdict, str]:
        if not clause.columns:
            raise _Reject("ADD COLUMN () needs at least one column")
        parts = [self.add_one(w, cdef) for cdef in clause.columns]
        return Verdict.LIGHT, "metadata only: " + "; ".join(parts)

    def drop_column(self, w: _Work, clause: DropColumn) -> tuple[Verdict, str]:
        col = w.get(clause.name)
        what = f"cannot drop column {col.name}"
        role = w.role(col.id)
        if role is not None:
            raise _Reject(f"{what}: it is a {role} column")
        if col.id in w.sort_key:
            raise _Reject(f"{what}: it is in the sort key; change ORDER BY first")
        views = self.views_of(col.id)
        if views is not None:
            raise _Reject(f"{what}: it is used by {views}")
        if len(w.columns) == 1:
            raise _Reject(f"{what}: it is the last column")
        del w.columns[w.index(col.id)]
        return (
            Verdict.LIGHT,
            f"metadata only: drops column id {col.id} ({col.name}); its data stays in old files until compaction",
        )

    def rename_column(self, w: _Work, clause: RenameColumn) -> tuple[Verdict, str]:
        col = w.get(clause.old)
        new = clause.new
        what = f"cannot rename column {col.name}"
        role = w.role(col.id)
        if role is not None:
            raise _Reject(f"{what}: it is a {role} column")
        if not valid_name(new):
            raise _Reject(f"{what} to {new!r}: invalid name: names match [A-Za-z_][A-Za-z0-9_]* and have at most 128 characters")
        other = w.find(new)
        if other is not None and other.id != col.id:
            raise _Reject(f"{what} to {new}: duplicate column name (column {other.name} already exists)")
        if new == col.name:
            raise _Reject(f"{what} to {new}: the new name is the current name")
        w.put(replace(col, name=new))
        return (
            Verdict.LIGHT,
            f"metadata only: column id {col.id} is renamed {col.name} -> {new}; files match columns by id",
        )

    def modify_column(self, w: _Work, clause: ModifyColumn) -> tuple[Verdict, str]:
        cdef = clause.column
        col = w.get(cdef.name)
        name = col.name
        try:
            new_type = parse_type(cdef.type)
        except InvalidType as exc:
            raise _Reject(f"cannot modify column {name}: {exc}") from None
        verdict = Verdict.LIGHT
        reasons: list[str] = []

        # type
        change, why = classify_conversion(col.type, new_type)
        if change is Change.SAME:
            new_type = col.type
        else:
            what = f"cannot change the type of column {name}"
            role = w.role(col.id)
            if role is not None:
                raise _Reject(f"{what}: it is a {role} column")
            views = self.views_of(col.id)
            if views is not None:
                raise _Reject(f"{what}: it is used by {views}")
            if change is Change.REJECTED:
                raise _Reject(f"{what}: {why}")
            if col.id in w.type_changed:
                raise _Reject(f"{what}: its type is already changed by this statement; change it once")
            if change is Change.HEAVY:
                verdict = Verdict.HEAVY
            reasons.append(why + (" (a cast when reading)" if change is Change.LIGHT else ""))

        # nullability
        nullable = col.nullable
        if cdef.nullable is True and not col.nullable:
            if col.id in w.primary_key:
                raise _Reject(f"cannot make column {name} NULL: it is a primary-key column")
            nullable = True
            reasons.append("NOT NULL -> NULL")
        elif cdef.nullable is False and col.nullable:
            nullable = False
            verdict = Verdict.HEAVY
            reasons.append("NULL -> NOT NULL: every existing value is checked by a rewrite")

        # defaults: the initial default follows the type; a restated DEFAULT sets the write default
        initial, write = col.initial_default, col.write_default
        if new_type != col.type:
            try:
                initial = _convert_value(initial, col.type, new_type)
            except InvalidValue:
                raise _Reject(
                    f"cannot change the type of column {name} to {new_type.sql()}: its initial default"
                    f" {_fmt(initial, col.type)} does not fit {new_type.sql()}"
                ) from None
            if cdef.default is None:
                try:
                    write = _convert_value(write, col.type, new_type)
                except InvalidValue:
                    raise _Reject(
                        f"cannot change the type of column {name} to {new_type.sql()}: its default"
                        f" {_fmt(write, col.type)} does not fit {new_type.sql()}; restate DEFAULT"
                    ) from None
        if cdef.default is not None:
            write = self.default_value(cdef.default, new_type, nullable, f"cannot modify column {name}")
            if write != col.write_default or new_type != col.type:
                reasons.append(
                    f"write default {_fmt(col.write_default, col.type)} -> {_fmt(write, new_type)} (existing rows keep their values)"
                )
        if cdef.comment is not None and cdef.comment != col.comment:
            reasons.append("comment changed")

        updated = replace(
            col,
            type=new_type,
            nullable=nullable,
            initial_default=initial,
            write_default=write,
            comment=col.comment if cdef.comment is None else cdef.comment,
        )
        w.put(updated)

        # position
        pos = cdef.position
        if pos is not None and (pos.first or pos.after is not None):
            others = [c for c in w.columns if c.id != col.id]
            if pos.first:
                index, where = 0, "FIRST"
            else:
                anchor = w.find(pos.after)
                if anchor is None:
                    raise _Reject(f"cannot move column {name} AFTER {pos.after}: unknown column {pos.after}")
                if anchor.id == col.id:
                    raise _Reject(f"cannot move column {name} AFTER itself")
                index = next(i for i, c in enumerate(others) if c.id == anchor.id) + 1
                where = f"after {anchor.name}"
            others.insert(index, updated)
            if [c.id for c in others] != [c.id for c in w.columns]:
                if col.id in w.primary_key:
                    raise _Reject(f"cannot move column {name}: it is a primary-key column")
                w.columns = others
                reasons.append(f"moved {where}")

        if change is not Change.SAME:
            w.type_changed.add(col.id)
        if not reasons:
            return Verdict.LIGHT, "no change"
        if verdict is Verdict.LIGHT:
            return verdict, "metadata only: " + "; ".join(reasons)
        return verdict, "; ".join(reasons)

    def set_default(self, w: _Work, clause: SetDefault) -> tuple[Verdict, str]:
        col = w.get(clause.name)
        value = self.default_value(clause.default, col.type, col.nullable, f"cannot set the default of column {col.name}")
        w.put(replace(col, write_default=value))
        return (
            Verdict.LIGHT,
            f"metadata only: the write default of {col.name} becomes {_fmt(value, col.type)}; existing rows keep their values",
        )

    def drop_default(self, w: _Work, clause: DropDefault) -> tuple[Verdict, str]:
        col = w.get(clause.name)
        w.put(replace(col, write_default=None))
        tail = "; inserts must name it (NOT NULL)" if not col.nullable else "; inserts that omit it write NULL"
        return Verdict.LIGHT, f"metadata only: {col.name} has no write default{tail}"

    def resolve(self, w: _Work, names: tuple[str, ...], what: str) -> list[Column]:
        if not names:
            raise _Reject(f"{what} needs at least one column")
        dup = first_duplicate(names)
        if dup is not None:
            raise _Reject(f"column {dup} appears twice in {what}")
        return [w.get(n) for n in names]

    def order_by(self, w: _Work, clause: OrderBy) -> tuple[Verdict, str]:
        cols = self.resolve(w, tuple(clause.columns), "ORDER BY")
        w.sort_key = tuple(c.id for c in cols)
        return Verdict.HEAVY, f"rewrite: the data is sorted by {name_list(c.name for c in cols)}"

    def distribute_by(self, w: _Work, clause: DistributeBy) -> tuple[Verdict, str]:
        cols = self.resolve(w, tuple(clause.columns), "DISTRIBUTED BY")
        for col in cols:
            if is_floating(col.type):
                raise _Reject(f"cannot distribute by column {col.name}: {col.type.sql()} cannot be a distribution column")
            if w.primary_key and col.id not in w.primary_key:
                raise _Reject(f"cannot distribute by column {col.name}: it is not part of the primary key")
        n = clause.buckets
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_BUCKETS:
            raise _Reject(f"BUCKETS must be between 1 and {MAX_BUCKETS}, got {n}")
        w.distributed_by = tuple(c.id for c in cols)
        w.buckets = n
        return (
            Verdict.HEAVY,
            f"rewrite: the data is redistributed by HASH{name_list(c.name for c in cols)} into {n} buckets",
        )

    def handler(self, clause) -> Callable[[_Work, object], tuple[Verdict, str]]:
        table = {
            AddColumn: self.add_column,
            AddColumns: self.add_columns,
            DropColumn: self.drop_column,
            ModifyColumn: self.modify_column,
            RenameColumn: self.rename_column,
            SetDefault: self.set_default,
            DropDefault: self.drop_default,
            OrderBy: self.order_by,
            DistributeBy: self.distribute_by,
            RevertToVersion: self.revert,
        }
        for cls, fn in table.items():
            if isinstance(clause, cls):
                return fn
        raise _Reject(f"unsupported clause {type(clause).__name__}")

    def revert(self, w: _Work, clause: RevertToVersion) -> tuple[Verdict, str]:
        """Version n's columns (by id), keys and layout again, as the next version. Lightweight when
        today's files present it by column id: a column dropped since comes back with its values in
        the files written while it existed (rows written after the drop read its initial default);
        widenings back are read-time casts. A narrowing, NULL -> NOT NULL, a new distribution or
        sort key make it heavyweight (the same rewrite as MODIFY COLUMN / ORDER BY)."""
        n = clause.version
        current = self.ctx.current
        what = f"cannot revert to version {n}"
        if n == current.version:
            raise _Reject(f"{what}: it is the current version")
        if n > current.version:
            raise _Reject(f"{what}: the table's newest version is {current.version}")
        target = self.ctx.versions(n)
        if target is None:
            raise _Reject(
                f"{what}: garbage collection has collected it (versions are kept for the GC retention after they stop being current)"
            )
        if (target.primary_key, target.partition_by) != (w.primary_key, w.partition_by):
            raise _Reject(f"{what}: its primary key or partitioning differs from today's")
        by_id = {c.id: c for c in w.columns}
        heavy: list[str] = []
        notes: list[str] = []
        back: list[str] = []
        for col in target.columns:
            now = by_id.get(col.id)
            if now is None:
                if not col.nullable and col.initial_default is None:
                    raise _Reject(
                        f"{what}: column {col.name} comes back NOT NULL without a default, and rows written since it was dropped have no value"
                    )
                # Files may hold it as any kept version had it (GC collects a version once no file needs it).
                for other in range(1, current.version):
                    kept = self.ctx.versions(other) if other != n else target
                    held = kept.column_by_id(col.id) if kept is not None else None
                    if held is None:
                        continue
                    change = Change.SAME if held.type == col.type else classify_conversion(held.type, col.type)[0]
                    if change not in (Change.SAME, Change.LIGHT) and not self.fits_stored_values(held, col):
                        raise _Reject(
                            f"{what}: column {col.name} comes back, but version {other} stored it as {held.type.sql()}, and "
                            f"its stored values cannot be read as {col.type.sql()}"
                        )
                    if other > n and held.nullable and not col.nullable:
                        raise _Reject(
                            f"{what}: column {col.name} comes back NOT NULL, but version {other} let it hold NULLs, "
                            "and rows of that version may hold them"
                        )
                back.append(f"{col.name} (id {col.id})")
                continue
            if now.name != col.name:
                notes.append(f"{now.name} is named {col.name} again")
            if now.type != col.type:
                change, why = classify_conversion(now.type, col.type)
                if change is Change.REJECTED:
                    raise _Reject(f"{what}: column {now.name}: {why}")
                views = self.views_of(col.id)
                if views is not None:
                    raise _Reject(f"{what}: the type of column {now.name} is used by {views}")
                if change is Change.HEAVY and self.fits_stored_values(now, col):
                    notes.append(f"{now.name}: {now.type.sql()} -> {col.type.sql()}, every stored value fits (file statistics)")
                else:
                    (heavy if change is Change.HEAVY else notes).append(f"{now.name}: {why}")
            if now.nullable and not col.nullable:
                heavy.append(f"{now.name}: NULL -> NOT NULL checks every row")
        for col in w.columns:
            if target.column_by_id(col.id) is None:
                views = self.views_of(col.id)
                if views is not None:
                    raise _Reject(f"{what}: column {col.name}, added since, is used by {views}")
                notes.append(f"drops {col.name} (id {col.id})")
        retyped_keys = [
            cid for cid in target.distributed_by if (now := by_id.get(cid)) is not None and now.type != target.column_by_id(cid).type
        ]
        if (target.distributed_by, target.buckets) != (w.distributed_by, w.buckets) or retyped_keys:
            heavy.append("its distribution differs: a re-bucket")
        if target.sort_key != w.sort_key:
            heavy.append("its sort key differs: a re-sort")
        w.columns = list(target.columns)
        w.distributed_by, w.buckets, w.sort_key = target.distributed_by, target.buckets, target.sort_key
        if back:
            notes.insert(0, f"brings back {', '.join(back)} from the files written while it existed")
        if heavy:
            return Verdict.HEAVY, f"presents version {n} again: {'; '.join(heavy + notes)}"
        return Verdict.LIGHT, f"metadata only: presents version {n} again" + (f": {'; '.join(notes)}" if notes else "")

    def fits_stored_values(self, now: Column, back: Column) -> bool:
        """Whether a revert can read an integer column narrower again without a rewrite: `back`'s
        type widens to `now`'s (the change undone was a widening) and every value today's files
        store fits `back`'s type (their statistics say so)."""
        if not (now.type.is_integer and back.type.is_integer) or "LARGEINT" in (now.type.name, back.type.name):
            return False
        if classify_conversion(back.type, now.type)[0] is not Change.LIGHT:
            return False
        stored = self.ctx.stored_range(back.id)
        if stored is None:
            return False
        low, high = integer_range(back.type)
        return stored[0] is None or (low <= stored[0] and stored[1] <= high)

    # -- the statement ---------------------------------------------------------------------------
    def plan(self, stmt: AlterTable) -> AlterPlan:
        ctx = self.ctx
        rejections: list[str] = []
        try:
            props = parse_properties(self.table, stmt.properties)
        except AlterRejected as exc:
            rejections.append(str(exc))
            props = AlterProperties()
        if ctx.active_job:
            rejections.append(self.message(f"{ctx.active_job} is not finished; one job per table"))
        if props.expected_version is not None and props.expected_version != ctx.current.version:
            rejections.append(self.message(f"expected_version {props.expected_version} but the current version is {ctx.current.version}"))
        if not stmt.clauses:
            rejections.append(self.message("nothing to change"))
        if len(stmt.clauses) > 1 and any(isinstance(c, RevertToVersion) for c in stmt.clauses):
            rejections.append(self.message("REVERT TO VERSION is a statement of its own; it cannot be combined with other clauses"))

        work = _Work.of(ctx.current, ctx.next_column_id)
        clauses: list[ClausePlan] = []
        for clause in stmt.clauses:
            text = render_clause(clause)
            modified = work.find(clause.column.name) if isinstance(clause, ModifyColumn) else None
            column_id = modified.id if modified is not None else None
            trial = work.copy()
            try:
                verdict, reason = self.handler(clause)(trial, clause)
            except _Reject as exc:
                message = self.message(str(exc))
                rejections.append(message)
                clauses.append(ClausePlan(text, Verdict.REJECTED, message, column_id))
                continue
            work = trial
            if props.rewrite:
                verdict, reason = Verdict.HEAVY, f"{reason}; {REWRITE_NOTE}"
            clauses.append(ClausePlan(text, verdict, reason, column_id))

        if rejections:
            kind = Verdict.REJECTED
        elif props.rewrite or any(c.verdict is Verdict.HEAVY for c in clauses):
            kind = Verdict.HEAVY
        else:
            kind = Verdict.LIGHT
        new = work.schema(ctx.current, stmt.sql)
        heavy = kind is Verdict.HEAVY or (kind is Verdict.REJECTED and (props.rewrite or any(c.verdict is Verdict.HEAVY for c in clauses)))
        return AlterPlan(
            table=self.table,
            clauses=tuple(clauses),
            old=ctx.current,
            new=new,
            next_column_id=work.next_column_id,
            properties=props,
            conversions=_conversions(ctx.current, new, heavy),
            kind=kind,
            rejection=rejections[0] if rejections else None,
            narrowed=_narrowed(ctx.current, new) if kind is Verdict.LIGHT else (),
        )


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


def plan_alter(ctx: TableContext, stmt: AlterTable) -> AlterPlan:
    """Plan `stmt` against `ctx`. Never raises for a broken rule: see `AlterPlan.rejection`."""
    return _Planner(ctx).plan(stmt)
