"""A table's Airflow asset, and telling apart the events on it, for a DAG of your own:

    from alterflow.airflow.assets import is_load, is_schema_change, table_asset

    ORDERS = table_asset("orders")                 # Asset("alterflow://default/orders")

    @dag(schedule=[ORDERS], ...)
    def orders_loaded():
        @task.short_circuit
        def a_load_landed(triggering_asset_events=None) -> bool:
            return any(is_load(e) for e in triggering_asset_events[ORDERS])

Every finished schema change (the `alterflow_schema_change` and `alterflow_migrate` DAGs,
`AlterflowSchemaChangeOperator`) and every load of `AlterflowLoadOperator` emits an event on the
table's asset; its extra's `event` says which (`schema_change` or `load`)."""

from __future__ import annotations

from typing import Any

from airflow.sdk import Asset

from alterflow import schema_change_events as events
from alterflow.errors import UserError, shown
from alterflow.settings import CATALOG_NAME, catalog_name
from alterflow.sql.names import MAX_NAME, valid_name

__all__ = ["table_asset", "is_load", "is_schema_change", "BadAssetName"]


class BadAssetName(UserError):
    """A table or catalog name that names no table's asset."""


def table_asset(table: str, catalog: str | None = None) -> Asset:
    """The asset of `table` in the catalog named `catalog` (default: ALTERFLOW_CATALOG_NAME of this
    process, else `default`), as the events on it name it: `alterflow://<catalog name>/<table>`."""
    if not isinstance(table, str) or not valid_name(table):
        raise BadAssetName(f"table {shown(table)}: names match [A-Za-z_][A-Za-z0-9_]* up to {MAX_NAME} characters")
    if catalog is None:
        catalog = catalog_name()
    elif not isinstance(catalog, str) or not CATALOG_NAME.fullmatch(catalog):
        raise BadAssetName(f"catalog name {shown(catalog)}: 1 to 63 letters, digits, '_', '.' or '-' (not starting with '.' or '-')")
    return Asset(events.table_asset_uri(catalog, table))


def _extra(event: Any) -> dict | None:
    return event if isinstance(event, dict) or event is None else getattr(event, "extra", None)


def is_load(event: Any) -> bool:
    """Whether an asset event (or its extra) is a load's."""
    return events.is_load(_extra(event))


def is_schema_change(event: Any) -> bool:
    """Whether an asset event (or its extra) is a finished schema change's."""
    return events.is_schema_change(_extra(event))
