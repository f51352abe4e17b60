"""The embedded runner: the steps of an ALTER in this process, in order (the Airflow DAG calls the
same step functions, one task each)."""

from __future__ import annotations

import importlib
import pathlib
import threading
import time

from alterflow.workflow import heavy_steps, steps
from alterflow.workflow.request import AlterRequest
from catalog.catalog import AlterJob, Catalog
from catalog.heavy_jobs import HeavyJobs

POLL_SECONDS = 0.5


def run_alter(catalog: Catalog, request: AlterRequest, warehouse: pathlib.Path | None = None, spark_factory=None) -> AlterJob:
    """Run an ALTER until it is FINISHED, READY_TO_SWAP or cancelled (JobCancelled).
    A request already run returns its job (idempotent retry); an unfinished one is resumed."""
    done = catalog.job_by_request(request.request_id)
    if done is not None and done.kind == "LIGHT":
        return done
    if done is None:
        validated = steps.validate(catalog, request)
        if validated["kind"] == "LIGHT":
            return steps.commit_job(catalog, request, validated)
        if warehouse is None or spark_factory is None:
            raise steps.HeavyChangeUnavailable(
                f"ALTER TABLE {request.table}: a heavyweight change needs the warehouse and Spark; nothing was changed"
            )
        job_id = heavy_steps.start(catalog, request, validated)["job_id"]
    else:
        job_id = done.id
    return run_heavy(catalog, warehouse, job_id, spark_factory)


def _preload_expectations() -> None:
    """Great Expectations takes seconds to import; do it while the job waits and converts.
    (Import only: its context is made later, once this process's SparkSession exists.)"""
    importlib.import_module("expectations.validation")


def run_heavy(catalog: Catalog, warehouse: pathlib.Path, job_id: int, spark_factory) -> AlterJob:
    """Drive a started heavyweight job through its remaining steps."""
    threading.Thread(target=_preload_expectations, name="preload-expectations", daemon=True).start()
    while not heavy_steps.wait_for_boundary(catalog, warehouse, job_id)["done"]:
        time.sleep(POLL_SECONDS)
    heavy_steps.convert(spark_factory(), catalog, warehouse, job_id)
    heavy_steps.check(spark_factory(), catalog, warehouse, job_id)
    heavy_steps.swap(catalog, warehouse, job_id)
    return HeavyJobs(catalog).job(job_id)
