"""`AlterJobHandle`: an ALTER started through the Python API (`Table.alter`), followed to its end.

The statement is planned first, in the caller's thread, so a rejected change raises its one line
before anything exists. Then:
- a lightweight change is committed at once (metadata only): the handle is FINISHED;
- a heavyweight change's job is created (PENDING) and driven through the same steps as
  `alterflow sql` (`alterflow.workflow.alter_runner.run_heavy`), in a thread of this process that holds
  the job's runner lease; with ALTERFLOW_AIRFLOW_URL set, a DAG run of alterflow_schema_change
  runs it instead and the thread follows the run.

The driver thread is not a daemon: a script that ends without `wait()` still finishes its
change before the interpreter exits. A process killed meanwhile leaves an orphaned job that the
garbage-collection DAG or `RESUME ALTER TABLE COLUMN` takes over (docs/heavyweight.md), as for the CLI.
A driver thread that dies of anything alterflow did not raise itself (SystemExit, KeyboardInterrupt,
a failed import, a bug) lets its lease go as it unwinds (`JobLease`), so the job is orphaned where
it stopped, nothing of it visible; `wait()` raises `DriverDied`, one line with the job's state and
the statement that drives it on.
"""

from __future__ import annotations

import pathlib
import threading
import time
from typing import TYPE_CHECKING

from alterflow.catalog.states import JobState
from alterflow.errors import AlterflowError, UserError, capped, first_line
from alterflow.workflow.request import AlterRequest

if TYPE_CHECKING:  # pragma: no cover
    from alterflow.catalog.catalog import AlterJob, Catalog
    from alterflow.workflow.alter_driver import AlterDriver

ENDED = (JobState.FINISHED, JobState.CANCELLED, JobState.READY_TO_SWAP)
POLL_SECONDS = 0.2


class JobWaitTimeout(UserError, TimeoutError):
    """`wait(timeout)` ran out; the job goes on."""


class DriverDied(UserError):
    """The thread driving (or following) the job in this process died of an error alterflow did not
    raise itself; the job stays where it stopped (its `__cause__` is that error)."""


class AlterJobHandle:
    """One ALTER's job: `state`, `progress`, `wait(timeout)`, `cancel()`. `job` is the job as the
    catalog has it now (None while a DAG run has not created it yet)."""

    def __init__(self, catalog: Catalog, warehouse: pathlib.Path | None, request: AlterRequest, job_id: int | None):
        self._catalog, self._warehouse = catalog, warehouse
        self.request = request
        self._job_id = job_id
        self._driver: threading.Thread | None = None
        self._error: BaseException | None = None
        self._cancelled_here = False
        self._via_airflow = False  # the thread follows a DAG run that drives the job

    def __repr__(self) -> str:
        job = self.job
        return f"<alterflow.AlterJobHandle {self.request.table} job {job.id if job else '?'} {job.state if job else 'SUBMITTED'}>"

    @property
    def table(self) -> str:
        return self.request.table

    @property
    def job(self) -> AlterJob | None:
        catalog = self._catalog
        if self._job_id is None:
            found = catalog.job_by_request(self.request.request_id)
            if found is None:
                return None
            self._job_id = found.id
        from alterflow.catalog.heavy_jobs import HeavyJobs

        return HeavyJobs(catalog).job(self._job_id)

    @property
    def id(self) -> int | None:
        job = self.job
        return job.id if job is not None else None

    @property
    def state(self) -> str:
        """The job's state (docs/heavyweight.md, "Job states"): PENDING, WAITING_TXN, RUNNING, VALIDATING, READY_TO_SWAP,
        FINISHED or CANCELLED; SUBMITTED while a DAG run has not created the job yet."""
        job = self.job
        return str(job.state) if job is not None else "SUBMITTED"

    @property
    def progress(self) -> str:
        """The job's progress as SHOW ALTER TABLE COLUMN shows it (`rows converted / total`)."""
        job = self.job
        return job.progress if job is not None else ""

    @property
    def done(self) -> bool:
        """Whether the job has ended (FINISHED or CANCELLED), waits for RESUME (READY_TO_SWAP), or
        its driver failed (`wait()` raises the failure)."""
        if self._driver is not None:
            if self._driver.is_alive():
                return False
            if self._error is not None:  # its driver failed (wait() raises why), whatever the job's state
                return True
        return self.state in ENDED

    def wait(self, timeout: float | None = None) -> AlterJob:
        """Wait until the job is FINISHED, CANCELLED or READY_TO_SWAP and return it. A job that
        failed (a failed validation, a timeout, a cancel from elsewhere) raises the line the CLI
        would print; one cancelled through this handle returns as CANCELLED. `timeout` (seconds)
        running out raises `JobWaitTimeout` and the job goes on."""
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0):
            raise UserError(f"wait: timeout is a number of seconds, not {timeout!r}")
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._driver is not None:
            self._driver.join(timeout)
            if self._driver.is_alive():
                raise self._timed_out(timeout)
        else:
            while self.state not in ENDED:
                if deadline is not None and time.monotonic() >= deadline:
                    raise self._timed_out(timeout)
                time.sleep(POLL_SECONDS)
        job = self._ended_job()
        if job is None:  # the driver ended without a job: its error was raised above
            raise UserError(f"ALTER TABLE {self.table}: no job was created for request {self.request.request_id}")
        return job

    def _ended_job(self) -> AlterJob | None:
        """The job once its driver is done, or the line of why it did not finish: a job cancelled
        elsewhere (CANCEL from SQL or the page, a failed validation, its timeout) raises that, in
        one line, whatever its driver met as the job was taken from under it."""
        from alterflow.workflow.heavy_steps import JobCancelled

        job = self.job
        if job is not None and job.state == JobState.CANCELLED:
            if self._cancelled_here:
                return job
            raise JobCancelled(f"ALTER TABLE {job.table_name}: job {job.id} was cancelled: {job.msg}")
        if self._error is None:
            return job
        if isinstance(self._error, AlterflowError):  # the line the CLI would print
            raise self._error
        if job is not None and job.state in (JobState.FINISHED, JobState.READY_TO_SWAP):
            return job  # it died after the work was done (a DAG run's thread: the run did it)
        raise DriverDied(self._died_line(job)) from self._error

    def _died_line(self, job: AlterJob | None) -> str:
        from alterflow.catalog.job_leases import is_orphaned, runner_text

        error = self._error
        why = type(error).__name__ + (f": {first_line(error, 80)}" if str(error).strip() else "")
        role = "following" if self._via_airflow else "driving"
        head = f"ALTER TABLE {self.table}: the thread {role} its job died ({why})"
        if job is None:
            return capped(f"{head}; no job was created for request {self.request.request_id}; nothing was changed")
        if self._via_airflow:
            return capped(f"{head}; job {job.id} is {job.state} and goes on in its DAG run; handle.state follows it")
        resume = f"RESUME ALTER TABLE COLUMN FROM {job.table_name}"
        if is_orphaned(job):
            return capped(f"{head}; job {job.id} stays {job.state} with nothing of it visible; {resume} drives it on")
        return capped(f"{head}; job {job.id} stays {job.state}, {runner_text(job)}; {resume} drives it on once that lease expires")

    def cancel(self) -> AlterJob:
        """Cancel the job (CANCEL ALTER TABLE COLUMN): its new index and pending version go, the
        table stays as it was. A finished job is refused in one line."""
        from alterflow.workflow import job_control

        job = self.job
        if job is None:
            raise job_control.JobControlRefused(f"ALTER TABLE {self.table}: the job does not exist yet; nothing was cancelled")
        self._cancelled_here = True
        try:
            cancelled = job_control.cancel_job(self._catalog, self._warehouse, job.id, "cancelled through the Python API")
        except BaseException:
            self._cancelled_here = False
            raise
        if self._driver is not None:
            self._driver.join()
        return cancelled

    def _timed_out(self, timeout) -> JobWaitTimeout:
        return JobWaitTimeout(f"ALTER TABLE {self.table}: job {self.id} is still {self.state} after {timeout:g} s; it goes on")

    def _drive(self, work) -> None:
        try:
            work()
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: kept for wait(), the thread has no one else to tell
            self._error = exc


def start_alter(catalog: Catalog, driver: AlterDriver, request: AlterRequest) -> AlterJobHandle:
    """Plan the request (a rejection raises here), then commit it or start its job, driven on in
    a thread of this process (or followed there while its DAG run drives it)."""
    started = driver.start(request)
    handle = AlterJobHandle(catalog, driver.warehouse, started.request, started.job_id)
    if started.finish is not None:
        handle._via_airflow = started.via_airflow
        handle._driver = threading.Thread(
            target=handle._drive, args=(started.finish,), name=f"alterflow-alter-{handle.table}", daemon=False
        )
        handle._driver.start()
    return handle
