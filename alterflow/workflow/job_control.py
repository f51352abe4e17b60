"""A user's hand on an alter job: cancel it, or resume it (docs/heavyweight.md).

The one place both doors go through: SQL (`CANCEL / RESUME ALTER TABLE COLUMN FROM t`, which name a
table) and the Airflow plugin's API (which names a job id). A refusal raises `JobControlRefused`
with one line and changes nothing; an unknown table or job raises the catalog's `UnknownObject`.

Resuming means one of two things:
- a READY_TO_SWAP job (`postpone_swap`) is swapped: it becomes FINISHED;
- an orphaned job (its runner died: its lease expired) is taken over and driven to the end from
  where it stopped (`take_over`, in this process; the Airflow page starts a DAG run instead).
  While a live runner holds the job's lease, the answer names it and when its lease expires.
"""

from __future__ import annotations

import pathlib

from alterflow.catalog.catalog import ACTIVE_JOB_STATES, AlterJob, Catalog
from alterflow.catalog.catalog_errors import ConcurrentChange, LeaseHeld
from alterflow.catalog.heavy_jobs import HeavyJobs, JobStateError
from alterflow.catalog.job_leases import ensure_not_driven, is_orphaned
from alterflow.catalog.states import JobState
from alterflow.errors import UserError
from alterflow.workflow import heavy_steps


class JobControlRefused(UserError):
    """The job's state does not allow the action; nothing changed. The message is one line."""


def can_cancel(job: AlterJob) -> bool:
    return job.state in ACTIVE_JOB_STATES


def can_resume(job: AlterJob) -> bool:
    """A postponed swap, or an orphaned job."""
    return job.state == JobState.READY_TO_SWAP or is_orphaned(job)


def cancel_job(catalog: Catalog, warehouse: pathlib.Path, job_id: int, reason: str) -> AlterJob:
    """Cancel an unfinished job: its shadow index, files and pending version go; the origin stays."""
    job = HeavyJobs(catalog).job(job_id)
    if not can_cancel(job):
        raise JobControlRefused(f"job {job.id} is {job.state}; only an unfinished job can be cancelled")
    try:
        return heavy_steps.cancel(catalog, warehouse, job.id, reason)
    except JobStateError as exc:  # finished or cancelled meanwhile
        raise JobControlRefused(str(exc)) from None


def swap_postponed(catalog: Catalog, job_id: int) -> AlterJob:
    """Perform the postponed swap of a READY_TO_SWAP job: it becomes FINISHED."""
    try:
        heavy = HeavyJobs(catalog)
        return heavy.swap(job_id, (JobState.READY_TO_SWAP,), holder=None, msg=heavy_steps.swapped_msg(heavy.job(job_id).msg))
    except (JobStateError, ConcurrentChange) as exc:
        raise JobControlRefused(str(exc)) from None


def check_resumable(job: AlterJob) -> None:
    """Refuse, in one line, a job that RESUME cannot take: finished, or driven by a live runner."""
    if job.state == JobState.READY_TO_SWAP:
        return
    if job.state not in ACTIVE_JOB_STATES:
        raise JobControlRefused(f"job {job.id} is {job.state}; only an unfinished job can be resumed")
    try:
        ensure_not_driven(job)
    except LeaseHeld as exc:
        raise JobControlRefused(str(exc)) from None


def take_over(catalog: Catalog, warehouse: pathlib.Path, job_id: int, spark_factory, lease_s: float) -> AlterJob:
    """Drive an orphaned job to its end in this process (the lease is taken by compare-and-set: of
    two runners resuming at once, one drives and the other is refused)."""
    from alterflow.workflow.alter_runner import run_heavy

    check_resumable(HeavyJobs(catalog).job(job_id))
    try:
        return run_heavy(catalog, warehouse, job_id, spark_factory, lease_s=lease_s)
    except LeaseHeld as exc:
        raise JobControlRefused(str(exc)) from None


def resume_job(catalog: Catalog, warehouse: pathlib.Path, job_id: int, spark_factory, lease_s: float) -> AlterJob:
    job = HeavyJobs(catalog).job(job_id)
    check_resumable(job)
    if job.state == JobState.READY_TO_SWAP:
        return swap_postponed(catalog, job.id)
    return take_over(catalog, warehouse, job.id, spark_factory, lease_s)


def unfinished_job(catalog: Catalog, table: str) -> AlterJob | None:
    """The table's unfinished job, if any (there is at most one per table)."""
    return catalog.active_job(catalog.table(table).id)


def cancel_table_job(catalog: Catalog, warehouse: pathlib.Path, table: str, reason: str) -> AlterJob:
    """`CANCEL ALTER TABLE COLUMN FROM table`."""
    job = unfinished_job(catalog, table)
    if job is None:
        raise JobControlRefused(f"no unfinished alter job on {catalog.table(table).name}")
    return cancel_job(catalog, warehouse, job.id, reason)


def table_job_to_resume(catalog: Catalog, table: str) -> AlterJob:
    """The job `RESUME ALTER TABLE COLUMN FROM table` would resume (refused in one line if none)."""
    job = unfinished_job(catalog, table)
    if job is None:
        raise JobControlRefused("there is no unfinished job to resume")
    check_resumable(job)
    return job
