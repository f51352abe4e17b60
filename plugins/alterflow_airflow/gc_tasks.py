"""The GC DAG's task bodies: each runs one step of `alterflow.gc.steps` (imported when the task
runs, so the DAG parses without it) on the catalog and warehouse of `Settings.from_env()`."""

from __future__ import annotations

from collections.abc import Callable

from alterflow.settings import Settings
from catalog.catalog import Catalog

# The order of alterflow.gc.steps.GC_STEPS (tests/dags checks they agree).
STEP_ORDER = ("drop_origin_indexes", "compact", "collect_versions")


def run_step(name: str) -> dict:
    from alterflow.gc import steps as gc

    settings = Settings.from_env()
    settings.ensure_dirs()
    catalog = Catalog(settings.catalog_url)
    if name == "drop_origin_indexes":
        return gc.drop_origin_indexes(catalog, settings.warehouse, settings.gc_retention_s)
    if name == "compact":
        from alterflow.spark_session import get_spark

        return gc.compact(catalog, settings.warehouse, lambda: get_spark(settings.spark_master))
    if name == "collect_versions":
        return gc.collect_versions(catalog, settings.gc_retention_s)
    raise ValueError(f"unknown GC step {name!r}; the steps are {', '.join(STEP_ORDER)}")


def step_function(name: str) -> Callable[[], dict]:
    def body() -> dict:
        return run_step(name)

    body.__name__ = name
    body.__doc__ = f"GC step {name} (alterflow.gc.steps.{name})."
    return body
