"""What the ALTER planner's clause rules read and change: the table as it is (`TableContext`), the
schema as the clauses planned so far leave it (`WorkingSchema`), a clause's `Verdict`, and the
`ClauseRejected` a rule raises when the clause breaks it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from alterflow.catalog.schema import Column, SchemaVersion, key_role

__all__ = ["ClauseRejected", "TableContext", "Verdict", "WorkingSchema", "metadata_only", "views_using"]


class Verdict(StrEnum):
    LIGHT = "LIGHT"
    HEAVY = "HEAVY"
    REJECTED = "REJECTED"

    def __str__(self) -> str:
        return self.value


def metadata_only(reason: str) -> tuple[Verdict, str]:
    """A LIGHT clause's verdict and reason: it changes the schema version only, no file is rewritten."""
    return Verdict.LIGHT, "metadata only: " + reason


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


class ClauseRejected(Exception):
    """A clause breaks a rule; the argument is the message without the "ALTER TABLE t: " prefix."""


def views_using(ctx: TableContext, column_id: int) -> str | None:
    """The views that use a column, as a message names them ("view v", "views a, b"), or None."""
    names = sorted(set(ctx.view_uses.get(column_id, ()) or ()), key=str.lower)
    if not names:
        return None
    return ("view " if len(names) == 1 else "views ") + ", ".join(names)


@dataclass
class WorkingSchema:
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
    def of(cls, schema: SchemaVersion, next_column_id: int) -> WorkingSchema:
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

    def copy(self) -> WorkingSchema:
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
            raise ClauseRejected(f"unknown column {name}")
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
