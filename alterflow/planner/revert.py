"""REVERT TO VERSION n: version n's columns (by id), keys and layout again, as the next version.

Lightweight when today's files present it by column id: a column dropped since comes back with its
values in the files written while it existed (rows written after the drop read its initial
default); widenings back are read-time casts. A narrowing, NULL -> NOT NULL, a new distribution or
sort key make it heavyweight (the same rewrite as MODIFY COLUMN / ORDER BY). Each rule is a
function; they run in the order `revert_to_version` calls them, so the first broken rule in it is
the one the user reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.planner.alter_state import ClauseRejected, TableContext, Verdict, WorkingSchema, metadata_only, views_using
from alterflow.sql.ast import RevertToVersion
from alterflow.values.types import Change, classify_conversion, integer_range

__all__ = ["revert_to_version"]


@dataclass
class _Differences:
    """How version n differs from the working schema: what needs a rewrite, what is metadata only,
    and the dropped columns that come back."""

    heavy: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    back: list[str] = field(default_factory=list)


def revert_to_version(clause: RevertToVersion, w: WorkingSchema, ctx: TableContext) -> tuple[Verdict, str]:
    n = clause.version
    what = f"cannot revert to version {n}"
    target = _kept_target(n, ctx, what)
    if (target.primary_key, target.partition_by) != (w.primary_key, w.partition_by):
        raise ClauseRejected(f"{what}: its primary key or partitioning differs from today's")
    found = _Differences()
    by_id = {c.id: c for c in w.columns}
    for col in target.columns:
        now = by_id.get(col.id)
        if now is None:
            _check_comes_back(col, n, target, ctx, what)
            found.back.append(f"{col.name} (id {col.id})")
        else:
            _compare_column(now, col, ctx, what, found)
    _check_columns_dropped(target, w, ctx, what, found)
    _compare_layout(target, w, by_id, found)
    w.columns = list(target.columns)
    w.distributed_by, w.buckets, w.sort_key = target.distributed_by, target.buckets, target.sort_key
    return _outcome(n, found)


def _kept_target(n: int, ctx: TableContext, what: str) -> SchemaVersion:
    """Version n, an older version GC has kept."""
    current = ctx.current
    if n == current.version:
        raise ClauseRejected(f"{what}: it is the current version")
    if n > current.version:
        raise ClauseRejected(f"{what}: the table's newest version is {current.version}")
    target = ctx.versions(n)
    if target is None:
        raise ClauseRejected(
            f"{what}: garbage collection has collected it (versions are kept for the GC retention after they stop being current)"
        )
    return target


def _check_comes_back(col: Column, n: int, target: SchemaVersion, ctx: TableContext, what: str) -> None:
    """A dropped column comes back: rows written since have no value for it, and the files may
    hold it as any kept version had it (GC collects a version once no file needs it)."""
    if not col.nullable and col.initial_default is None:
        raise ClauseRejected(
            f"{what}: column {col.name} comes back NOT NULL without a default, and rows written since it was dropped have no value"
        )
    for other in range(1, ctx.current.version):
        kept = ctx.versions(other) if other != n else target
        held = kept.column_by_id(col.id) if kept is not None else None
        if held is not None:
            _check_held_as(held, col, other, n, ctx, what)


def _check_held_as(held: Column, col: Column, other: int, n: int, ctx: TableContext, what: str) -> None:
    """The values version `other` stored for a returning column read as the column of version n."""
    change = Change.SAME if held.type == col.type else classify_conversion(held.type, col.type)[0]
    if change not in (Change.SAME, Change.LIGHT) and not _fits_stored_values(ctx, held, col):
        raise ClauseRejected(
            f"{what}: column {col.name} comes back, but version {other} stored it as {held.type.sql()}, and "
            f"its stored values cannot be read as {col.type.sql()}"
        )
    if other > n and held.nullable and not col.nullable:
        raise ClauseRejected(
            f"{what}: column {col.name} comes back NOT NULL, but version {other} let it hold NULLs, and rows of that version may hold them"
        )


def _compare_column(now: Column, col: Column, ctx: TableContext, what: str, found: _Differences) -> None:
    """A column both have: its name, type and nullability as version n had them."""
    if now.name != col.name:
        found.notes.append(f"{now.name} is named {col.name} again")
    if now.type != col.type:
        _compare_type(now, col, ctx, what, found)
    if now.nullable and not col.nullable:
        found.heavy.append(f"{now.name}: NULL -> NOT NULL checks every row")


def _compare_type(now: Column, col: Column, ctx: TableContext, what: str, found: _Differences) -> None:
    change, why = classify_conversion(now.type, col.type)
    if change is Change.REJECTED:
        raise ClauseRejected(f"{what}: column {now.name}: {why}")
    views = views_using(ctx, col.id)
    if views is not None:
        raise ClauseRejected(f"{what}: the type of column {now.name} is used by {views}")
    if change is Change.HEAVY and _fits_stored_values(ctx, now, col):
        found.notes.append(f"{now.name}: {now.type.sql()} -> {col.type.sql()}, every stored value fits (file statistics)")
    else:
        (found.heavy if change is Change.HEAVY else found.notes).append(f"{now.name}: {why}")


def _check_columns_dropped(target: SchemaVersion, w: WorkingSchema, ctx: TableContext, what: str, found: _Differences) -> None:
    """Columns added since version n go, unless a view uses them."""
    for col in w.columns:
        if target.column_by_id(col.id) is None:
            views = views_using(ctx, col.id)
            if views is not None:
                raise ClauseRejected(f"{what}: column {col.name}, added since, is used by {views}")
            found.notes.append(f"drops {col.name} (id {col.id})")


def _compare_layout(target: SchemaVersion, w: WorkingSchema, by_id: dict[int, Column], found: _Differences) -> None:
    """Another distribution (or a distribution column of another type) re-buckets; another sort key re-sorts."""
    retyped_keys = [
        cid for cid in target.distributed_by if (now := by_id.get(cid)) is not None and now.type != target.column_by_id(cid).type
    ]
    if (target.distributed_by, target.buckets) != (w.distributed_by, w.buckets) or retyped_keys:
        found.heavy.append("its distribution differs: a re-bucket")
    if target.sort_key != w.sort_key:
        found.heavy.append("its sort key differs: a re-sort")


def _outcome(n: int, found: _Differences) -> tuple[Verdict, str]:
    notes = list(found.notes)
    if found.back:
        notes.insert(0, f"brings back {', '.join(found.back)} from the files written while it existed")
    if found.heavy:
        return Verdict.HEAVY, f"presents version {n} again: {'; '.join(found.heavy + notes)}"
    return metadata_only(f"presents version {n} again" + (f": {'; '.join(notes)}" if notes else ""))


def _fits_stored_values(ctx: TableContext, now: Column, back: Column) -> bool:
    """Whether a revert can read an integer column narrower again without a rewrite: `back`'s
    type widens to `now`'s (the change undone was a widening) and every value today's files
    store fits `back`'s type (their statistics say so)."""
    if not (now.type.is_integer and back.type.is_integer) or "LARGEINT" in (now.type.name, back.type.name):
        return False
    if classify_conversion(back.type, now.type)[0] is not Change.LIGHT:
        return False
    stored = ctx.stored_range(back.id)
    if stored is None:
        return False
    low, high = integer_range(back.type)
    return stored[0] is None or (low <= stored[0] and stored[1] <= high)
