"""Running Spark SQL over catalog tables and views.

Each name a query reads is resolved through the catalog and registered as a Spark temporary view
under that same name: a table as its current version, a view as its query bound to the table
versions it pinned (recursively). Spark analyses a DataFrame when it is created, so a view's inner
`t` (pinned) and an outer `t` (current) never get mixed up.
"""

from __future__ import annotations

import pathlib
import re

from alterflow.catalog.catalog import Catalog, ViewInfo
from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.errors import UserError
from alterflow.read.evolved_read import read_snapshot


class QueryError(UserError):
    """A query over catalog objects that cannot be bound."""


def _register(spark, name: str, frame) -> None:
    frame.createOrReplaceTempView(name)


def table_frame(spark, catalog: Catalog, warehouse: pathlib.Path, name: str):
    return read_snapshot(spark, warehouse, catalog.snapshot(name))


def view_frame(spark, catalog: Catalog, warehouse: pathlib.Path, view: ViewInfo, depth: int = 0):
    """The view's rows: its query over the table versions it was planned against."""
    if depth > 32:
        raise QueryError(f"view {view.name}: views nest too deeply")
    # Inner views first: binding them registers their own pinned tables under the same names.
    for dep in view.dependencies:
        if dep.dep_view_id is not None:
            inner = catalog.view_by_id(dep.dep_view_id)
            _register(spark, dep.ref_name, view_frame(spark, catalog, warehouse, inner, depth + 1))
    for dep in view.dependencies:
        if dep.table_id is not None:
            snapshot = catalog.snapshot_by_id(dep.table_id)
            pinned = catalog.schema_version(dep.table_id, dep.table_version)
            _register(spark, dep.ref_name, read_snapshot(spark, warehouse, snapshot, pinned))
    return spark.sql(view.query)


def bind_names(spark, catalog: Catalog, warehouse: pathlib.Path, names: tuple[str, ...]) -> None:
    """Register every name a query reads, as it is now in the catalog (views first, whose binding
    registers pinned tables under their names, then the query's own tables at their current version)."""
    kinds = {name: catalog.object_kind(name) for name in names}
    for name, kind in kinds.items():
        if kind is None:
            raise UnknownObject(f"unknown table or view {name}")
    for name in [n for n, k in kinds.items() if k == "view"]:
        _register(spark, name, view_frame(spark, catalog, warehouse, catalog.view(name)))
    for name in [n for n, k in kinds.items() if k == "table"]:
        _register(spark, name, table_frame(spark, catalog, warehouse, name))


def relation_names(spark, sql: str) -> tuple[str, ...]:
    """The relations a query reads, as Spark's parser finds them before any name is bound (for a
    query sqlglot cannot parse): its UnresolvedRelation nodes, subqueries' included, less the
    names its WITH clauses define."""
    plan = spark._jsparkSession.sessionState().sqlParser().parsePlan(sql)
    text = plan.treeString()
    ctes = {name.strip().lower() for listed in re.findall(r"^\W*CTE \[([^\]]*)\]", text, re.M) for name in listed.split(",")}
    found = re.findall(r"'UnresolvedRelation \[([^\],]+)\]", text)
    return tuple(dict.fromkeys(name for name in found if name.lower() not in ctes))


def run_query(spark, catalog: Catalog, warehouse: pathlib.Path, sql: str, names: tuple[str, ...]):
    bind_names(spark, catalog, warehouse, names)
    return spark.sql(sql)
