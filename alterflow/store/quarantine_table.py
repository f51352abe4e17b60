"""The quarantine table of `"on_cast_error" = "quarantine"` (docs/semantics.md, "SQL"), made ready when a job that
uses it starts and again whenever rows go to it (a user may have dropped it meanwhile): created on first use as `<table>__quarantine` (the source's columns as STRING, then
`_job_id BIGINT`, `_column STRING`, `_reason STRING`; no key, one bucket), or given the source's
columns it lacks (a lightweight ADD COLUMN of its own version). A table of that name that is not
a quarantine table is refused, and nothing is changed.
"""

from __future__ import annotations

import uuid

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.records import AlterProperties, JobSpec
from alterflow.catalog.schema import Column, SchemaVersion, name_key
from alterflow.sql.names import valid_name
from alterflow.store.quarantine import (
    COLUMN_COLUMN,
    JOB_COLUMN,
    META_COLUMNS,
    REASON_COLUMN,
    STRING,
    QuarantineTarget,
    QuarantineUnavailable,
    quarantine_table_name,
)
from alterflow.values.types import parse_type

BIGINT = parse_type("BIGINT")
_META_TYPES = {JOB_COLUMN: BIGINT, COLUMN_COLUMN: STRING, REASON_COLUMN: STRING}


def _column_list(columns: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name} {sql}" for name, sql in columns)


def _check_source(source: str, old: SchemaVersion, name: str) -> None:
    clash = [c.name for c in old.columns if name_key(c.name) in {name_key(m) for m in META_COLUMNS}]
    if clash:
        raise QuarantineUnavailable(
            f"ALTER TABLE {source}: on_cast_error quarantine: column {clash[0]} clashes with the quarantine table's own column; "
            "use fail or null"
        )
    if not valid_name(name):
        raise QuarantineUnavailable(
            f"ALTER TABLE {source}: on_cast_error quarantine: {name} is not a valid table name (at most 128 characters)"
        )


def ensure_quarantine_table(catalog: Catalog, source: str, old: SchemaVersion) -> str:
    """Make `<source>__quarantine` ready for rows of version `old`; returns its name."""
    name = quarantine_table_name(source)
    _check_source(source, old, name)
    kind = catalog.object_kind(name)
    if kind == "view":
        raise QuarantineUnavailable(f"ALTER TABLE {source}: on_cast_error quarantine needs table {name}, but a view has that name")
    if kind is None:
        columns = [(c.name, "STRING") for c in old.columns] + [(m, _META_TYPES[m].sql()) for m in META_COLUMNS]
        statement = f"CREATE TABLE {name} ({_column_list(columns)})"

        def build(table_id: int) -> tuple[SchemaVersion, int]:
            made = [Column(i + 1, column, parse_type(sql)) for i, (column, sql) in enumerate(columns)]
            return SchemaVersion(table_id, 1, tuple(made), statement=statement), len(made) + 1

        if catalog.create_table(name, build, statement, if_not_exists=True) is not None:
            return name
    _extend(catalog, source, name, old)
    return name


def _extend(catalog: Catalog, source: str, name: str, old: SchemaVersion) -> None:
    """An existing quarantine table: check it is one, then add the source's columns it lacks."""
    info, current = catalog.current_schema(name)
    if current.primary_key:
        raise QuarantineUnavailable(
            f"ALTER TABLE {source}: on_cast_error quarantine: table {info.name} has a primary key, which would merge "
            "quarantined rows; drop or rename it"
        )
    for meta, wanted in _META_TYPES.items():
        column = current.column(meta)
        if column is None or column.type != wanted:
            raise QuarantineUnavailable(
                f"ALTER TABLE {source}: on_cast_error quarantine: table {info.name} exists but is not a quarantine table "
                f"(it needs {meta} {wanted.sql()}); drop or rename it"
            )
    for column in old.columns:
        existing = current.column(column.name)
        if existing is not None and existing.type != STRING:
            raise QuarantineUnavailable(
                f"ALTER TABLE {source}: on_cast_error quarantine: column {existing.name} of {info.name} is {existing.type.sql()}, "
                "not STRING; drop or rename the table"
            )
    missing = [c.name for c in old.columns if current.column(c.name) is None]
    if not missing:
        return
    added = tuple(Column(info.next_column_id + i, column, STRING) for i, column in enumerate(missing))
    statement = f"ALTER TABLE {info.name} " + ", ".join(f"ADD COLUMN {column} STRING" for column in missing)
    new = SchemaVersion(
        info.id,
        current.version + 1,
        current.columns + added,
        current.primary_key,
        current.partition_by,
        current.distributed_by,
        current.buckets,
        current.sort_key,
        statement=statement,
    )
    spec = JobSpec(uuid.uuid4().hex, info.id, info.name, current.version, new, info.next_column_id + len(added), AlterProperties(), 60)
    catalog.commit_light_alter(spec, ["quarantine"])


def quarantine_target(catalog: Catalog, source: str, job_id: int, old: SchemaVersion) -> QuarantineTarget:
    """Where job `job_id`'s quarantined rows of version `old` go now: the quarantine table as it
    is (made again, or given the columns it lacks, when a user dropped or changed it meanwhile)."""
    name = ensure_quarantine_table(catalog, source, old)
    info, version = catalog.current_schema(name)
    return QuarantineTarget(job_id, info.id, info.name, info.current_index_id, version)
