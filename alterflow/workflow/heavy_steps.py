"""The steps of a heavyweight ALTER (SPEC §4), after `steps.validate`:

start              PENDING: job, new version (not current), shadow index and tablets, boundary.
wait_for_boundary  WAITING_TXN: every transaction below the boundary has committed or aborted
                   (expired ones are aborted); Msg names the ones it waits for.
convert            RUNNING: Spark converts history into the shadow index, tablet by tablet.
check              VALIDATING: the Great Expectations suites; a failure cancels the job.
swap               the shadow index and the new version become current (FINISHED), or the job
                   waits in READY_TO_SWAP with `postpone_swap`.

Each step is idempotent: run again after a kill, it picks up where the job's record says it is.
Every step first checks the job is still alive: cancelled jobs stop, timed-out ones are cancelled.
"""

from __future__ import annotations

import dataclasses
import pathlib
from datetime import timedelta

from alterflow.planner import Verdict
from alterflow.store.layout import absolute
from alterflow.workflow import steps
from alterflow.workflow.request import AlterRequest
from catalog.catalog import AlterJob, Catalog, utcnow
from catalog.heavy_jobs import HeavyJobs, JobStateError

HEAVY_STEPS = ("validate", "start", "wait_for_boundary", "convert", "check", "swap")


class JobCancelled(RuntimeError):
    """The job was cancelled (by a user, a failed validation or its timeout); Msg says why."""


def delete_files(warehouse: pathlib.Path, paths: list[str]) -> None:
    for relative in paths:
        absolute(warehouse, relative).unlink(missing_ok=True)


def cancel(catalog: Catalog, warehouse: pathlib.Path, job_id: int, reason: str) -> AlterJob:
    job, paths = HeavyJobs(catalog).cancel(job_id, reason)
    delete_files(warehouse, paths)
    return job


def ensure_alive(catalog: Catalog, warehouse: pathlib.Path, job_id: int) -> AlterJob:
    job = HeavyJobs(catalog).job(job_id)
    if job.state == "CANCELLED":
        raise JobCancelled(f"ALTER TABLE {job.table_name}: job {job.id} was cancelled: {job.msg}")
    if job.state != "FINISHED" and utcnow() > job.created_at + timedelta(seconds=job.timeout_s):
        job = cancel(catalog, warehouse, job_id, f"timeout: the job ran past its timeout of {job.timeout_s} s")
        raise JobCancelled(f"ALTER TABLE {job.table_name}: job {job.id} was cancelled: {job.msg}")
    return job


def start(catalog: Catalog, request: AlterRequest, validated: dict) -> dict:
    existing = catalog.job_by_request(request.request_id)
    if existing is None:
        info, result = steps.replan(catalog, request, validated, Verdict.HEAVY, "start")
        existing = HeavyJobs(catalog).start(
            request_id=request.request_id,
            table_id=info.id,
            table_name=info.name,
            old_version=result.old.version,
            new=result.new,
            next_column_id=result.next_column_id,
            properties=dataclasses.asdict(result.properties),
            timeout_s=result.properties.timeout,
        )
    return {"job_id": existing.id, "boundary": existing.boundary_txn}


def wait_for_boundary(catalog: Catalog, warehouse: pathlib.Path, job_id: int) -> dict:
    """One look: returns {"done": bool, "blocking": [txn ids]}. Drivers call it until done."""
    job = ensure_alive(catalog, warehouse, job_id)
    heavy = HeavyJobs(catalog)
    if job.state not in ("PENDING", "WAITING_TXN"):
        return {"done": True, "blocking": []}
    heavy.advance(job_id, ("PENDING",), "WAITING_TXN")
    delete_files(warehouse, catalog.abort_expired_transactions(job.table_id))
    blocking = heavy.blocking_transactions(job)
    if blocking:
        heavy.note(job_id, msg=f"waiting for transactions {', '.join(map(str, blocking))} (below boundary {job.boundary_txn})")
        return {"done": False, "blocking": blocking}
    heavy.advance(job_id, ("WAITING_TXN",), "RUNNING", step="wait_for_boundary", msg="")
    return {"done": True, "blocking": []}


def convert(spark, catalog: Catalog, warehouse: pathlib.Path, job_id: int, parallelism: int = 2) -> dict:
    from alterflow.rewrite.tablet_conversion import ConversionStopped, convert_job

    job = ensure_alive(catalog, warehouse, job_id)
    if job.state != "RUNNING":
        return {"skipped": job.state}
    try:
        result = convert_job(spark, catalog, warehouse, job_id, parallelism)
    except (ConversionStopped, JobStateError):
        ensure_alive(catalog, warehouse, job_id)  # cancelled meanwhile: JobCancelled with its reason
        raise
    HeavyJobs(catalog).advance(job_id, ("RUNNING",), "VALIDATING", step="convert")
    return dataclasses.asdict(result)


def check(spark, catalog: Catalog, warehouse: pathlib.Path, job_id: int) -> dict:
    from expectations.validation import validate_job

    job = ensure_alive(catalog, warehouse, job_id)
    if job.state != "VALIDATING":
        return {"skipped": job.state}
    report = validate_job(spark, catalog, warehouse, job_id)
    if not report.success:
        job = cancel(catalog, warehouse, job_id, report.message)
        raise JobCancelled(f"ALTER TABLE {job.table_name}: job {job.id} was cancelled: {job.msg}")
    heavy = HeavyJobs(catalog)
    nulled = sum(t.failed_casts for t in heavy.converted(job_id).values()) + heavy.dual_write_nulled(job_id)
    note = f"{report.expectations} expectations passed"
    if nulled:
        note += f"; {nulled} values that could not be converted became NULL"
    HeavyJobs(catalog).advance(job_id, ("VALIDATING",), "VALIDATING", step="check", msg=note)
    return {"expectations": report.expectations, "nulled": nulled}


def swap(catalog: Catalog, warehouse: pathlib.Path, job_id: int) -> dict:
    job = ensure_alive(catalog, warehouse, job_id)
    heavy = HeavyJobs(catalog)
    if job.state == "VALIDATING" and job.properties.get("postpone_swap"):
        job = heavy.advance(job_id, ("VALIDATING",), "READY_TO_SWAP")
        return {"state": job.state}
    if job.state == "VALIDATING":  # READY_TO_SWAP is left only by RESUME ALTER TABLE COLUMN
        job = heavy.swap(job_id, from_states=("VALIDATING",))
    return {"state": job.state}
