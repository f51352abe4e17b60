"""Immutable schema snapshots: `Column` and `SchemaVersion`.

Columns are identified by integer ids that are unique in their table and never reused; keys
(primary key, partition, distribution, sort key) are stored as column ids, so a rename never
touches them. Names compare case-insensitively, the way Spark resolves them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from alterflow.sql.names import name_key
from alterflow.values.types import DataType, decode_value, encode_value, parse_type

__all__ = ["Column", "SchemaVersion", "key_role", "name_key"]


def key_role(column_id: int, primary_key, partition_by, distributed_by) -> str | None:
    """The first key a column belongs to (primary-key, partition, distribution), or None."""
    if column_id in primary_key:
        return "primary-key"
    if column_id in partition_by:
        return "partition"
    if column_id in distributed_by:
        return "distribution"
    return None


@dataclass(frozen=True)
class Column:
    id: int
    name: str
    type: DataType
    nullable: bool = True
    initial_default: Any = None  # read for rows written before the column existed; fixed forever
    write_default: Any = None  # used by inserts that omit the column
    comment: str | None = None

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "type": self.type.sql(),
            "nullable": self.nullable,
            "initial_default": encode_value(self.initial_default, self.type),
            "write_default": encode_value(self.write_default, self.type),
            "comment": self.comment,
        }

    @classmethod
    def from_json(cls, data: dict) -> Column:
        dtype = parse_type(data["type"])
        return cls(
            id=int(data["id"]),
            name=data["name"],
            type=dtype,
            nullable=bool(data["nullable"]),
            initial_default=decode_value(data.get("initial_default"), dtype),
            write_default=decode_value(data.get("write_default"), dtype),
            comment=data.get("comment"),
        )


@dataclass(frozen=True)
class SchemaVersion:
    """One immutable version of a table's schema."""

    table_id: int
    version: int
    columns: tuple[Column, ...]
    primary_key: tuple[int, ...] = ()
    partition_by: tuple[int, ...] = ()
    distributed_by: tuple[int, ...] = ()
    buckets: int = 1
    sort_key: tuple[int, ...] = ()
    statement: str = ""
    created_at: datetime | None = field(default=None, compare=False)

    # -- lookups -------------------------------------------------------------------------
    def column(self, name: str) -> Column | None:
        key = name_key(name)
        for col in self.columns:
            if name_key(col.name) == key:
                return col
        return None

    def column_by_id(self, column_id: int) -> Column | None:
        for col in self.columns:
            if col.id == column_id:
                return col
        return None

    def names(self, column_ids: tuple[int, ...]) -> list[str]:
        return [self.column_by_id(cid).name for cid in column_ids]

    @property
    def column_ids(self) -> tuple[int, ...]:
        return tuple(c.id for c in self.columns)

    def key_role(self, column_id: int) -> str | None:
        """The role that pins a column in place, for messages: primary-key, partition, distribution."""
        return key_role(column_id, self.primary_key, self.partition_by, self.distributed_by)

    # -- storage -------------------------------------------------------------------------
    def spec_json(self) -> str:
        return json.dumps(
            {
                "columns": [c.to_json() for c in self.columns],
                "primary_key": list(self.primary_key),
                "partition_by": list(self.partition_by),
                "distributed_by": list(self.distributed_by),
                "buckets": self.buckets,
                "sort_key": list(self.sort_key),
            },
            sort_keys=True,
        )

    @classmethod
    def from_spec_json(
        cls, table_id: int, version: int, spec: str, statement: str = "", created_at: datetime | None = None
    ) -> SchemaVersion:
        data = json.loads(spec)
        return cls(
            table_id=table_id,
            version=version,
            columns=tuple(Column.from_json(c) for c in data["columns"]),
            primary_key=tuple(data["primary_key"]),
            partition_by=tuple(data["partition_by"]),
            distributed_by=tuple(data["distributed_by"]),
            buckets=int(data["buckets"]),
            sort_key=tuple(data["sort_key"]),
            statement=statement,
            created_at=created_at,
        )
