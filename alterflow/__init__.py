"""alterflow: online schema changes for tablet-based analytic tables.

The Python API (docs/python.md) is what this module exports; every other module may change:

    import alterflow

    with alterflow.connect() as af:
        orders = af.table("orders")
        orders.append(arrow_table)
        rows = orders.scan(columns=["id", "amount"], where="amount > 10").to_arrow()
        job = orders.alter("MODIFY COLUMN amount BIGINT")
        job.wait(timeout=600)

The names below are imported on first use (PEP 562), so `import alterflow` stays free: the CLI's
lightweight statements import neither the catalog's database driver nor Arrow before they need it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_EXPORTS = {
    "connect": "alterflow.api.connection",
    "Connection": "alterflow.api.connection",
    "ConnectionClosed": "alterflow.api.connection",
    "Table": "alterflow.api.table",
    "Scan": "alterflow.api.table",
    "AppendResult": "alterflow.api.table",
    "AlterJobHandle": "alterflow.api.alter_job_handle",
    "SchemaVersion": "alterflow.catalog.schema",
    "Column": "alterflow.catalog.schema",
    "AlterJob": "alterflow.catalog.catalog",
    "ResultSet": "alterflow.results",
    "Done": "alterflow.results",
    "AlterflowError": "alterflow.errors",
    "UserError": "alterflow.errors",
}

__all__ = [
    "__version__",
    "connect",
    "Connection",
    "ConnectionClosed",
    "Table",
    "Scan",
    "AppendResult",
    "AlterJobHandle",
    "SchemaVersion",
    "Column",
    "AlterJob",
    "ResultSet",
    "Done",
    "AlterflowError",
    "UserError",
]

if TYPE_CHECKING:  # pragma: no cover
    from alterflow.api.alter_job_handle import AlterJobHandle
    from alterflow.api.connection import Connection, ConnectionClosed, connect
    from alterflow.api.table import AppendResult, Scan, Table
    from alterflow.catalog.catalog import AlterJob
    from alterflow.catalog.schema import Column, SchemaVersion
    from alterflow.errors import AlterflowError, UserError
    from alterflow.results import Done, ResultSet


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'alterflow' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
