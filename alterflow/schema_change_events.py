"""What a finished ALTER tells the pipelines downstream of its table (docs/airflow.md): an event on the
table's asset, `alterflow://<catalog name>/<table>`, whose extra says what changed. Plain data, no
Airflow import: the Airflow layer (`alterflow.airflow.dags`, the `done` task) emits it as an Airflow
asset event through an asset alias; a cancelled or unfinished job tells nothing.

A load through `AlterflowLoadOperator` emits on the same asset. Every event's extra says which it
is in `event`: `schema_change` (with `kind` LIGHT, HEAVY or CREATE) or `load` (with `kind` load),
so a DAG scheduled on the table's asset can tell them apart (`is_schema_change`, `is_load`)."""

from __future__ import annotations

from dataclasses import dataclass

from alterflow.catalog.catalog import AlterJob
from alterflow.catalog.schema import name_key
from alterflow.catalog.states import JobState

__all__ = [
    "SCHEMA_CHANGES_ALIAS",
    "SCHEMA_CHANGE",
    "LOAD",
    "SchemaChangeEvent",
    "table_asset_uri",
    "schema_change_event",
    "load_extra",
    "is_schema_change",
    "is_load",
]

SCHEMA_CHANGES_ALIAS = "alterflow_schema_changes"  # the asset alias the `done` task emits through
SCHEMA_CHANGE = "schema_change"  # extra["event"] of a schema change
LOAD = "load"  # extra["event"] (and extra["kind"]) of a load
SCHEMA_CHANGE_KINDS = ("LIGHT", "HEAVY", "CREATE")


@dataclass(frozen=True)
class SchemaChangeEvent:
    uri: str
    extra: dict


def table_asset_uri(catalog_name: str, table: str) -> str:
    """The asset of a table: names match case-insensitively, so the URI holds the name in lower case."""
    return f"alterflow://{catalog_name}/{name_key(table)}"


def schema_change_event(job: AlterJob, catalog_name: str) -> SchemaChangeEvent | None:
    """The event of a FINISHED job (lightweight or heavyweight); None for any other state."""
    if job.state != JobState.FINISHED:
        return None
    return SchemaChangeEvent(
        table_asset_uri(catalog_name, job.table_name),
        {
            "event": SCHEMA_CHANGE,
            "from_version": job.from_version,
            "to_version": job.to_version,
            "statement": job.statement,
            "kind": str(job.kind),
            "job_id": job.id,
        },
    )


def load_extra(table: str, rows: int, transaction: int) -> dict:
    """The extra of a load's event on its table's asset: the table (as the catalog names it), the
    rows the load's one transaction committed, and that transaction's id."""
    return {"event": LOAD, "kind": LOAD, "table": table, "rows": rows, "transaction": transaction}


def is_load(extra: dict | None) -> bool:
    """Whether an event's extra is a load's."""
    return bool(extra) and extra.get("event") == LOAD


def is_schema_change(extra: dict | None) -> bool:
    """Whether an event's extra is a schema change's (also one recorded before events said which
    they are: those were all schema changes, told by their kind)."""
    if not extra:
        return False
    if "event" in extra:
        return extra["event"] == SCHEMA_CHANGE
    return extra.get("kind") in SCHEMA_CHANGE_KINDS
