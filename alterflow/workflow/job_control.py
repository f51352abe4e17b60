"""A user's hand on an alter job: cancel it, or resume a postponed swap (SPEC §4).

The one place both doors go through: SQL (`CANCEL / RESUME ALTER TABLE COLUMN FROM t`, which name a
table) and the Airflow plugin's API (which names a job id). A refusal raises `JobControlRefused`
with one line and changes nothing; an unknown table or job raises the catalog's `UnknownObject`.
"""

from __future__ import annotations

import pathlib

from alterflow.workflow import heavy_steps
from catalog.catalog import ACTIVE_JOB_STATES, AlterJob, Catalog
from catalog.errors import ConcurrentChange
from catalog.heavy_jobs import HeavyJobs, JobStateError


class JobControlRefused(ValueError):
    """The job's state does not allow the action; nothing changed. The message is one line."""


def can_cancel(job: AlterJob) -> bool:
    return job.state in ACTIVE_JOB_STATES


def can_resume(job: AlterJob) -> bool:
    return job.state == "READY_TO_SWAP"


def cancel_job(catalog: Catalog, warehouse: pathlib.Path, job_id: int, reason: str) -> AlterJob:
    """Cancel an unfinished job: its shadow index, files and pending version go; the origin stays."""
    job = HeavyJobs(catalog).job(job_id)
    if not can_cancel(job):
        raise JobControlRefused(f"job {job.id} is {job.state}; only an unfinished job can be cancelled")
    try:
        return heavy_steps.cancel(catalog, warehouse, job.id, reason)
    except JobStateError as exc:  # finished or cancelled meanwhile
        raise JobControlRefused(str(exc)) from None


def resume_job(catalog: Catalog, job_id: int) -> AlterJob:
    """Perform the postponed swap of a READY_TO_SWAP job: it becomes FINISHED."""
    job = HeavyJobs(catalog).job(job_id)
    if not can_resume(job):
        raise JobControlRefused(f"job {job.id} is {job.state}; only a READY_TO_SWAP job can be resumed")
    try:
        return HeavyJobs(catalog).swap(job.id, from_states=("READY_TO_SWAP",))
    except (JobStateError, ConcurrentChange) as exc:
        raise JobControlRefused(str(exc)) from None


def unfinished_job(catalog: Catalog, table: str) -> AlterJob | None:
    """The table's unfinished job, if any (there is at most one per table)."""
    return catalog.active_job(catalog.table(table).id)


def cancel_table_job(catalog: Catalog, warehouse: pathlib.Path, table: str, reason: str) -> AlterJob:
    """`CANCEL ALTER TABLE COLUMN FROM table`."""
    job = unfinished_job(catalog, table)
    if job is None:
        raise JobControlRefused(f"no unfinished alter job on {catalog.table(table).name}")
    return cancel_job(catalog, warehouse, job.id, reason)


def resume_table_job(catalog: Catalog, table: str) -> AlterJob:
    """`RESUME ALTER TABLE COLUMN FROM table`."""
    job = unfinished_job(catalog, table)
    if job is None:
        raise JobControlRefused("there is no unfinished job; only a READY_TO_SWAP job can be resumed")
    return resume_job(catalog, job.id)
