"""The steps of a heavyweight ALTER (docs/heavyweight.md), after `alter_steps.validate`:

start              PENDING: job, new version (not current), shadow index and tablets, boundary.
wait_for_boundary  WAITING_TXN: every transaction below the boundary has committed or aborted
                   (expired ones are aborted); Msg names the ones it waits for.
convert            RUNNING: Spark (or, for a small table, Arrow in this process) converts history
                   into the shadow index, tablet by tablet.
check              VALIDATING: the Great Expectations suites; a failure cancels the job.
swap               the shadow index and the new version become current (FINISHED), or the job
                   waits in READY_TO_SWAP with `postpone_swap`.

Each step is idempotent: run again after a kill, it picks up where the job's record says it is.
Every step first checks the job is still alive: cancelled jobs stop, timed-out ones are cancelled.
Each returns a frozen dataclass (`StartedJob`, `BoundaryWait`, the converter's `ConversionResult`,
`CheckResult`, `SwapResult`, or `StepSkipped` when the job is past the step); its `to_json()` is the
JSON a DAG task passes on through XCom.

Every step drives the job under its runner lease (`alterflow.held_leases.JobLease`), as its
`StepDriver` says: a caller that drives several steps passes the lease it holds; otherwise the
step takes one for itself, for the driver's `group` (an Airflow DAG run; by default this process)
and `lease_s` (the caller's `Settings.lease_s`), and hands it off when it ends. Each write checks
the lease in the catalog, so a runner that lost it stops without writing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import pathlib
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from alterflow.catalog.catalog import AlterJob, Catalog, OpenTransaction, utcnow
from alterflow.catalog.heavy_jobs import HeavyJobs, JobStateError
from alterflow.catalog.states import Engine, JobState, OnCastError
from alterflow.crash_points import crash_point
from alterflow.errors import UserError
from alterflow.held_leases import JobLease, new_holder, process_group
from alterflow.planner import Verdict
from alterflow.rewrite.progress import ConversionProgress, tablet_sizes
from alterflow.settings import DEFAULT_LEASE_S
from alterflow.workflow import alter_steps
from alterflow.workflow.request import AlterRequest
from alterflow.workflow.validated_plan import ValidatedPlan

if TYPE_CHECKING:  # the converter imports pyarrow; `convert` imports it when it runs
    from alterflow.rewrite.tablet_conversion import ConversionResult

log = logging.getLogger(__name__)  # the job's story, in a task's log (the CLI shows none of it)
# READY_TO_SWAP's Msg, after the validation's: a postponed job waits for a person, and says how to end the wait.
WAITING_FOR_SWAP = "waiting for someone to swap it: RESUME ALTER TABLE COLUMN FROM {table}, or Resume on the Schema changes page"


def swapped_msg(msg: str) -> str:
    """A postponed job's Msg once someone swapped it: the validation's note, without the wait."""
    head, _waiting, _rest = msg.partition(WAITING_FOR_SWAP.split(":")[0])
    return head.removesuffix("; ")


HEAVY_STEPS = ("validate", "start", "wait_for_boundary", "convert", "check", "swap")


class JobCancelled(UserError):
    """The job was cancelled (by a user, a failed validation or its timeout); Msg says why."""


def cancel(catalog: Catalog, warehouse: pathlib.Path, job_id: int, reason: str, holder: str | None = None) -> AlterJob:
    """The job cancelled; its shadow's files are GC's to delete after the retention period."""
    job, _paths = HeavyJobs(catalog).cancel(job_id, reason, holder=holder)
    return job


def ensure_alive(catalog: Catalog, warehouse: pathlib.Path, job_id: int, now: datetime | None = None) -> AlterJob:
    """The job, unless it was cancelled or has run past its timeout (then it is cancelled now).
    `now` is the catalog's clock (`utcnow()`) unless given."""
    job = HeavyJobs(catalog).job(job_id)
    if job.state == JobState.CANCELLED:
        raise JobCancelled(f"ALTER TABLE {job.table_name}: job {job.id} was cancelled: {job.msg}")
    if job.state != JobState.FINISHED and (now or utcnow()) > job.created_at + timedelta(seconds=job.timeout_s):
        job = cancel(catalog, warehouse, job_id, f"timeout: the job ran past its timeout of {job.timeout_s} s")
        raise JobCancelled(f"ALTER TABLE {job.table_name}: job {job.id} was cancelled: {job.msg}")
    return job


@dataclasses.dataclass(frozen=True)
class StepDriver:
    """Who drives a step: the embedded runner passes the `lease` it holds for all of them; an
    Airflow task names its run (`group`) and the lease length, and the step takes a lease for itself."""

    lease: JobLease | None = None
    group: str | None = None
    lease_s: float = DEFAULT_LEASE_S

    @contextlib.contextmanager
    def driving(self, catalog: Catalog, job_id: int) -> Iterator[JobLease]:
        """The lease the step drives the job under: the caller's, or one taken for this step."""
        if self.lease is not None:
            self.lease.ensure_held()
            yield self.lease
            return
        with JobLease(catalog, job_id, self.group, lease_s=self.lease_s) as own:
            yield own


THIS_PROCESS = StepDriver()  # a step that takes a lease of the default length for this process


@dataclasses.dataclass(frozen=True)
class StartedJob:
    """`start`'s result: the job's id and its boundary transaction (the history the conversion reads
    lies below it)."""

    job_id: int
    boundary: int

    def to_json(self) -> dict:
        return {"job_id": self.job_id, "boundary": self.boundary}


@dataclasses.dataclass(frozen=True)
class BoundaryWait:
    """One look of `wait_for_boundary`: `done` once no transaction below the boundary is open (or
    the job is past the wait), else the ids of the open ones, in `blocking`."""

    done: bool
    blocking: tuple[int, ...] = ()

    def to_json(self) -> dict:
        return {"done": self.done, "blocking": list(self.blocking)}


BOUNDARY_REACHED = BoundaryWait(done=True)
VALIDATED_ALREADY = "validated already"  # `check`'s StepSkipped.reason for a job that passed the check before


@dataclasses.dataclass(frozen=True)
class StepSkipped:
    """A step that found nothing to do: `reason` is the job's state (past the step), or
    VALIDATED_ALREADY; `msg` is the job's Msg where the step reports it."""

    reason: str
    msg: str | None = None

    def to_json(self) -> dict:
        return {"skipped": self.reason} if self.msg is None else {"skipped": self.reason, "msg": self.msg}


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """`check`'s result: the expectations that passed, the values that became NULL (on_cast_error
    null) and the rows quarantined so far (on_cast_error quarantine)."""

    expectations: int
    nulled: int
    quarantined: int

    def to_json(self) -> dict:
        return {"expectations": self.expectations, "nulled": self.nulled, "quarantined": self.quarantined}


@dataclasses.dataclass(frozen=True)
class SwapResult:
    """`swap`'s result: the job's state after it (FINISHED, or READY_TO_SWAP with `postpone_swap`)."""

    state: str

    def to_json(self) -> dict:
        return {"state": self.state}


def conversion_json(result: ConversionResult | StepSkipped) -> dict:
    """`convert`'s result as JSON: the converter's counts, or the skip."""
    return result.to_json() if isinstance(result, StepSkipped) else dataclasses.asdict(result)


def start(
    catalog: Catalog, request: AlterRequest, validated: ValidatedPlan, group: str | None = None, lease_s: float = DEFAULT_LEASE_S
) -> StartedJob:
    """Record the job. When `validate` found the same ALTER's orphaned job (`job_id`), take it
    over instead: its lease now belongs to this driver."""
    existing = catalog.job_by_request(request.request_id)
    if existing is None and validated.job_id is not None:
        existing = HeavyJobs(catalog).job(validated.job_id)
        lease = JobLease(catalog, existing.id, group, lease_s=lease_s)
        lease.acquire()  # LeaseHeld while another driver's runner holds it
        lease.hand_off()  # the driver's next step takes it from here
        log.info("job %s (%s) takes over from its runner, which is gone: it is %s", existing.id, existing.statement, existing.state)
    elif existing is None:

        def attempt(plan: ValidatedPlan):
            info, result = alter_steps.replan(catalog, request, plan, Verdict.HEAVY, "start")
            if result.properties.on_cast_error == OnCastError.QUARANTINE:  # before the job: loads dual-write into it from then on
                from alterflow.store.quarantine_table import ensure_quarantine_table

                ensure_quarantine_table(catalog, info.name, result.old)
            return HeavyJobs(catalog).start(
                alter_steps.job_spec(request, info, result), lease=(new_holder(), group or process_group(), lease_s)
            )

        existing = alter_steps.retry_on_table_moved(catalog, request, validated, "start", attempt, group=group)
        log.info(
            "job %s started: %s: version %s -> %s, shadow index %s, boundary transaction %s",
            *(existing.id, existing.statement, existing.from_version, existing.to_version),
            *(existing.shadow_index_id, existing.boundary_txn),
        )
    crash_point("after_start")
    return StartedJob(existing.id, existing.boundary_txn)


def _age(seconds: float) -> str:
    return f"{max(0, int(seconds))} s"


def waiting_message(boundary: int, blocking: list[OpenTransaction], now: datetime) -> str:
    """WAITING_TXN's Msg: the transactions, each with its age and when its lease (or, without
    one, its timeout) runs out."""
    parts = []
    for txn in blocking:
        if txn.lease_expires_at is not None:
            until = f"lease expires in {_age((txn.lease_expires_at - now).total_seconds())}"
        else:
            until = f"no lease, times out in {_age((txn.timeout_at - now).total_seconds())}"
        parts.append(f"{txn.id} open {_age((now - txn.created_at).total_seconds())}, {until}")
    ids = ", ".join(str(t.id) for t in blocking)
    return f"waiting for transactions {ids} (below boundary {boundary}): {'; '.join(parts)}"


def job_state(catalog: Catalog, job_id: int) -> str:
    """The job's state as recorded (read-only: no timeout is applied here, see `ensure_alive`)."""
    return HeavyJobs(catalog).job(job_id).state


def boundary_may_be_reached(catalog: Catalog, job_id: int) -> bool:
    """A read-only glance for pollers: False while the job waits for open transactions below its
    boundary; True when `wait_for_boundary` now could end the wait (or the job moved on)."""
    job = HeavyJobs(catalog).job(job_id)
    if job.state not in (JobState.PENDING, JobState.WAITING_TXN):
        return True
    return not catalog.blocking_transactions(job.table_id, job.boundary_txn)


def wait_for_boundary(
    catalog: Catalog,
    warehouse: pathlib.Path,
    job_id: int,
    driver: StepDriver = THIS_PROCESS,
    now: datetime | None = None,
) -> BoundaryWait:
    """One look (`BoundaryWait`). Drivers call it until it is done.
    `now`, when given, is the time the job's and the transactions' timeouts are judged at (the
    catalog's clock otherwise)."""
    job = ensure_alive(catalog, warehouse, job_id, now)
    heavy = HeavyJobs(catalog)
    if job.state not in (JobState.PENDING, JobState.WAITING_TXN):
        return BOUNDARY_REACHED
    with driver.driving(catalog, job_id) as held:
        if job.state == JobState.PENDING:
            heavy.advance(job_id, (JobState.PENDING,), JobState.WAITING_TXN, holder=held.holder)
            crash_point("waiting_txn")
        catalog.abort_expired_transactions(job.table_id, now)  # their files go after the retention (GC)
        blocking = catalog.blocking_transactions(job.table_id, job.boundary_txn)
        if blocking:
            waiting = waiting_message(job.boundary_txn, blocking, now or utcnow())
            heavy.note(job_id, holder=held.holder, msg=waiting)
            log.info("job %s is %s", job_id, waiting)
            return BoundaryWait(done=False, blocking=tuple(t.id for t in blocking))
        heavy.advance(job_id, (JobState.WAITING_TXN,), JobState.RUNNING, holder=held.holder, step="wait_for_boundary", msg="")
        log.info("job %s: every transaction below boundary %s has ended: RUNNING", job_id, job.boundary_txn)
        # Progress from the first moment of RUNNING (docs/heavyweight.md): what the conversion will read.
        heavy.note(job_id, holder=held.holder, progress=ConversionProgress(tablet_sizes(catalog, job), frozenset()).text())
        crash_point("running")
    return BOUNDARY_REACHED


def conversion_engine(catalog: Catalog, job_id: int) -> Engine:
    """`Engine.SPARK` or `Engine.LOCAL`: what converts (and validates) the job's history, from its `engine`
    property and the size of the origin files below its boundary (`alterflow.rewrite.engines`).
    From RUNNING on, the same answer every time it is asked: those files no longer change. Asked
    while the job waits, it may change when a load below the boundary commits (the DAG's route
    after `start` is a guess its worker tasks correct: each converts on the engine this says)."""
    from alterflow.rewrite.engines import choose_engine

    heavy = HeavyJobs(catalog)
    job = heavy.job(job_id)
    files = [f for fs in heavy.origin_files_below_boundary(job).values() for f in fs]
    return choose_engine(job.properties.engine, sum(f.row_count for f in files), sum(f.byte_size for f in files))


def convert(
    spark,
    catalog: Catalog,
    warehouse: pathlib.Path,
    job_id: int,
    parallelism: int = 2,
    driver: StepDriver = THIS_PROCESS,
) -> ConversionResult | StepSkipped:
    """RUNNING: convert the history, on the job's engine (`spark` may be None for the local one)."""
    from alterflow.rewrite.tablet_conversion import ConversionStopped, TabletConverter

    job = ensure_alive(catalog, warehouse, job_id)
    if job.state != JobState.RUNNING:
        return StepSkipped(job.state)
    engine = conversion_engine(catalog, job_id)
    with driver.driving(catalog, job_id) as held:
        try:
            result = TabletConverter(spark, catalog, warehouse, job_id, held, parallelism, engine).run()
        except (ConversionStopped, JobStateError):
            ensure_alive(catalog, warehouse, job_id)  # cancelled meanwhile: JobCancelled with its reason
            raise
        HeavyJobs(catalog).advance(job_id, (JobState.RUNNING,), JobState.VALIDATING, holder=held.holder, step="convert")
        crash_point("validating")
    return result


def check(
    spark,
    catalog: Catalog,
    warehouse: pathlib.Path,
    job_id: int,
    driver: StepDriver = THIS_PROCESS,
) -> CheckResult | StepSkipped:
    """The validation suites, on Spark or, for a job the local engine converts, on pandas
    (`spark` may be None then). A job that passed them already (a runner killed before its swap)
    is not validated again."""
    job = ensure_alive(catalog, warehouse, job_id)
    if job.state != JobState.VALIDATING:
        return StepSkipped(job.state)
    heavy = HeavyJobs(catalog)
    if "check" in job.steps:
        return StepSkipped(VALIDATED_ALREADY, job.msg)
    from alterflow.expectations.validation import validate_job

    with driver.driving(catalog, job_id) as held:
        local = conversion_engine(catalog, job_id) == Engine.LOCAL
        report = validate_job(None if local else spark, catalog, warehouse, job_id)
        if not report.success:
            job = cancel(catalog, warehouse, job_id, report.message, holder=held.holder)
            log.info("job %s cancelled: %s", job_id, report.message)
            raise JobCancelled(f"ALTER TABLE {job.table_name}: job {job.id} was cancelled: {job.msg}")
        note = f"{report.expectations} expectations passed"
        nulled = quarantined = 0
        if job.properties.on_cast_error == OnCastError.QUARANTINE:
            from alterflow.store.quarantine import quarantine_table_name

            quarantined = heavy.quarantined(job_id)
            if quarantined:
                rows = (
                    "1 row that could not be converted was" if quarantined == 1 else f"{quarantined} rows that could not be converted were"
                )
                note += f"; {rows} quarantined in {quarantine_table_name(job.table_name)} so far"  # loads may add more
        else:
            nulled = sum(t.failed_casts for t in heavy.converted(job_id).values()) + heavy.dual_write_nulled(job_id)
            if nulled:
                note += f"; {nulled} values that could not be converted became NULL"
        heavy.advance(job_id, (JobState.VALIDATING,), JobState.VALIDATING, holder=held.holder, step="check", msg=note)
        log.info("job %s validated on %s: %s", job_id, "pandas" if local else "Spark", note)
        crash_point("before_swap")
    return CheckResult(report.expectations, nulled, quarantined)


def swap(
    catalog: Catalog,
    warehouse: pathlib.Path,
    job_id: int,
    driver: StepDriver = THIS_PROCESS,
) -> SwapResult:
    job = ensure_alive(catalog, warehouse, job_id)
    heavy = HeavyJobs(catalog)
    if job.state != JobState.VALIDATING:  # READY_TO_SWAP is left only by RESUME ALTER TABLE COLUMN
        return SwapResult(job.state)
    with driver.driving(catalog, job_id) as held:
        if job.properties.postpone_swap:
            waiting = (
                f"{job.msg}; {WAITING_FOR_SWAP.format(table=job.table_name)}" if job.msg else WAITING_FOR_SWAP.format(table=job.table_name)
            )
            job = heavy.advance(job_id, (JobState.VALIDATING,), JobState.READY_TO_SWAP, holder=held.holder, msg=waiting)
            log.info("job %s is READY_TO_SWAP (postpone_swap): %s", job_id, WAITING_FOR_SWAP.format(table=job.table_name))
        else:
            job = heavy.swap(job_id, (JobState.VALIDATING,), holder=held.holder)
            log.info("job %s swapped: version %s of %s is current (FINISHED)", job_id, job.to_version, job.table_name)
    return SwapResult(job.state)
