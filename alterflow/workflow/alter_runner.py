"""The embedded runner: the steps of an ALTER in this process, in order (the Airflow DAG calls the
same step functions, one task each). It drives a heavyweight job under one runner lease for the
whole run (`alterflow.held_leases.JobLease`, of the caller's `Settings.lease_s`), renewed in the background."""

from __future__ import annotations

import importlib
import os
import pathlib
import threading
import time

from alterflow.catalog.catalog import AlterJob, Catalog
from alterflow.catalog.heavy_jobs import HeavyJobs, JobStateError
from alterflow.catalog.job_leases import DRIVEN_STATES
from alterflow.catalog.states import Engine, JobKind
from alterflow.held_leases import JobLease
from alterflow.settings import DEFAULT_LEASE_S
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.background import raise_thread_niceness
from alterflow.workflow.request import AlterRequest

POLL_SECONDS = 0.5


def run_alter(
    catalog: Catalog, request: AlterRequest, warehouse: pathlib.Path | None = None, spark_factory=None, lease_s: float = DEFAULT_LEASE_S
) -> AlterJob:
    """Run an ALTER until it is FINISHED, READY_TO_SWAP or cancelled (JobCancelled).
    A request already run returns its job (idempotent retry); an unfinished one is resumed, and so
    is the orphaned job of the same statement (docs/heavyweight.md)."""
    done = catalog.job_by_request(request.request_id)
    if done is not None and done.kind == JobKind.LIGHT:
        return done
    if done is None:
        validated = alter_steps.validate(catalog, request, warehouse=warehouse)
        if validated.kind == JobKind.LIGHT:
            return alter_steps.commit_job(catalog, request, validated, warehouse)
        if warehouse is None or spark_factory is None:
            raise alter_steps.HeavyChangeUnavailable(
                f"ALTER TABLE {request.table}: a heavyweight change needs the warehouse and Spark; nothing was changed"
            )
        if validated.job_id is not None:
            job_id = validated.job_id
        else:
            job_id = heavy_steps.start(catalog, request, validated, lease_s=lease_s).job_id
    else:
        job_id = done.id
    return run_heavy(catalog, warehouse, job_id, spark_factory, lease_s=lease_s)


_PRELOADING: int | None = None  # the process that started the import (none in a forked child)


def preload_expectations(nice: int = 0) -> None:
    """Start importing Great Expectations (it takes seconds) in a background thread of niceness
    `nice` (`background.run_niced`), while the job waits and converts. (Import only: its context is made later, once this process's SparkSession
    exists.) The modules the conversion shares with it (pandas, which pyarrow imports on its first
    Python-to-Arrow conversion, numpy, pyarrow, pyspark and the conversion itself) are imported here
    first, in the caller's thread: two threads importing the same modules at once can meet a
    partially initialised module (Python's import locks give way on a cycle between threads; a
    worker task failed with "cannot import name 'SQLContext' from partially initialized module
    'pyspark.sql'" when its conversion imported pyspark while GX did)."""
    global _PRELOADING
    if _PRELOADING == os.getpid():  # started already in this process (a second call is free)
        return
    _PRELOADING = os.getpid()
    shared = ("numpy", "pandas", "pyarrow", "pyarrow.compute", "pyarrow.parquet", "pyspark.sql", "alterflow.rewrite.tablet_conversion")
    for name in shared:  # pyspark.sql: GX imports it, and so does a Spark job's conversion (45 ms)
        importlib.import_module(name)

    def load() -> None:
        raise_thread_niceness(nice)
        importlib.import_module("alterflow.expectations.validation")

    threading.Thread(target=load, name="preload-expectations", daemon=True).start()


def run_heavy(
    catalog: Catalog, warehouse: pathlib.Path, job_id: int, spark_factory, group: str | None = None, lease_s: float = DEFAULT_LEASE_S
) -> AlterJob:
    """Drive a started heavyweight job through its remaining steps, holding its lease throughout
    (LeaseHeld, in one line, while another runner drives it)."""
    job = heavy_steps.ensure_alive(catalog, warehouse, job_id)
    if job.state not in DRIVEN_STATES:  # FINISHED, or READY_TO_SWAP waiting for RESUME
        return job
    with JobLease(catalog, job_id, group, lease_s=lease_s) as lease:
        driver = heavy_steps.StepDriver(lease)
        preload_expectations()
        # Before each step: still ours? (A paused runner learns here that another took the job over.)
        while True:
            lease.ensure_held(ask_catalog=True)
            if _as_owner(lease, lambda: heavy_steps.wait_for_boundary(catalog, warehouse, job_id, driver=driver)).done:
                break
            time.sleep(POLL_SECONDS)
        # A small table converts in this process: no SparkSession is started for it.
        spark = spark_factory if heavy_steps.conversion_engine(catalog, job_id) == Engine.SPARK else lambda: None
        for step in (
            lambda: heavy_steps.convert(spark(), catalog, warehouse, job_id, driver=driver),
            lambda: heavy_steps.check(spark(), catalog, warehouse, job_id, driver=driver),
            lambda: heavy_steps.swap(catalog, warehouse, job_id, driver=driver),
        ):
            lease.ensure_held(ask_catalog=True)
            _as_owner(lease, step)
    return HeavyJobs(catalog).job(job_id)


def _as_owner(lease: JobLease, step):
    """`step()`; a runner paused between its lease check and the step finds the job moved on by
    the runner that took it over: it says it lost its lease, not that the job is in another state."""
    try:
        return step()
    except JobStateError:
        lease.ensure_held(ask_catalog=True)
        raise
