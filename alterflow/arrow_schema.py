"""The Arrow schema of a schema version: each column's Arrow type, nullability and Parquet field
id (`PARQUET:field_id` in the field's metadata), which every engine matches columns by (docs/semantics.md, "Concepts").
Shared by loads, conversions and reads; it imports only types and the catalog's schema."""

from __future__ import annotations

import pyarrow as pa

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.values.types import to_arrow

FIELD_ID_KEY = b"PARQUET:field_id"

__all__ = ["FIELD_ID_KEY", "arrow_field", "arrow_schema"]


def arrow_field(column: Column) -> pa.Field:
    return pa.field(
        column.name,
        to_arrow(column.type),
        nullable=column.nullable,
        metadata={FIELD_ID_KEY: str(column.id).encode()},
    )


def arrow_schema(version: SchemaVersion) -> pa.Schema:
    return pa.schema([arrow_field(c) for c in version.columns])
