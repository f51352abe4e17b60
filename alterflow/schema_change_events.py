"""What a finished ALTER tells the pipelines downstream of its table (SPEC §8): an event on the
table's asset, `alterflow://<catalog name>/<table>`, whose extra says what changed. Plain data, no
Airflow import: the Airflow layer (`alterflow.airflow.dags`, the `done` task) emits it as an Airflow
asset event through an asset alias; a cancelled or unfinished job tells nothing."""

from __future__ import annotations

from dataclasses import dataclass

from alterflow.catalog.catalog import AlterJob
from alterflow.catalog.schema import name_key
from alterflow.catalog.states import JobState

__all__ = ["SCHEMA_CHANGES_ALIAS", "SchemaChangeEvent", "table_asset_uri", "schema_change_event"]

SCHEMA_CHANGES_ALIAS = "alterflow_schema_changes"  # the asset alias the `done` task emits through


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
            "from_version": job.from_version,
            "to_version": job.to_version,
            "statement": job.statement,
            "kind": str(job.kind),
            "job_id": job.id,
        },
    )
