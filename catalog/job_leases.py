"""Runner leases on alter jobs (docs/heavyweight.md, "Leases: no job stranded, no load blocking"): the catalog side.

Whoever drives a heavyweight job holds its lease: `lease_holder` (`host:pid:uuid`, one per taking),
`lease_group` (the driver the holder belongs to across hand-offs: one Airflow DAG run, or one
process) and `lease_expires_at`. The driver renews it while it works (`alterflow.held_leases`).

- Taking it is a compare-and-set (`acquire`): it succeeds when the lease is free (never taken, or
  past its expiry) or already belongs to the same group (the next task of the same DAG run, a
  retried task). Otherwise `LeaseHeld` with one line naming the holder and the expiry.
- Renewing (`renew`) succeeds only for the current holder of an unfinished job.
- Every state change, tablet commit and swap checks the holder inside its own database
  transaction (`fence`), so a runner that lost its lease (a long pause, a takeover) writes nothing.
- An unfinished job that is not waiting for a user (READY_TO_SWAP) and whose lease expired is
  *orphaned*: RESUME, the same ALTER again, or GC takes it over.

Times are the writing process's UTC clock, like every other time in the catalog.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from alterflow.catalog.catalog import ACTIVE_JOB_STATES, AlterJob, Catalog, extend_lease, job_from_row, lock_job_row, utcnow
from alterflow.catalog.catalog_errors import JobStateError, LeaseHeld, LeaseLost
from alterflow.catalog.models import AlterJobRow
from alterflow.catalog.states import JobKind, JobState

# States in which a runner drives the job; READY_TO_SWAP waits for a user's RESUME instead.
DRIVEN_STATES = (JobState.PENDING, JobState.WAITING_TXN, JobState.RUNNING, JobState.VALIDATING)


def shown_holder(holder: str | None) -> str:
    """`host:pid` of a `host:pid:uuid` holder, as users see it."""
    if not holder:
        return "nobody"
    parts = holder.rsplit(":", 1)
    return parts[0] if len(parts) == 2 else holder


def _time(value: datetime) -> str:
    return value.isoformat(sep=" ", timespec="seconds")


def is_orphaned(job: AlterJob, now: datetime | None = None) -> bool:
    """An unfinished job that nobody drives: its lease expired (or was never taken)."""
    if job.kind != JobKind.HEAVY or job.state not in DRIVEN_STATES:
        return False
    return job.lease_expires_at is None or job.lease_expires_at < (now or utcnow())


def last_seen(job: AlterJob) -> datetime:
    """When a runner was last seen on the job: its last renewal, else its creation."""
    return job.lease_renewed_at or job.created_at


def runner_text(job: AlterJob, now: datetime | None = None) -> str:
    """Who drives the job, for SHOW ALTER and the Schema changes page: 'driven by host:pid since
    T; its lease expires in N s', 'no runner since T', or '' when no runner is needed."""
    now = now or utcnow()
    if job.kind != JobKind.HEAVY or job.state not in DRIVEN_STATES:
        return ""
    if is_orphaned(job, now):
        return f"no runner since {_time(last_seen(job))}"
    return _driven_by(job, now)


def _driven_by(job: AlterJobRow | AlterJob, now: datetime) -> str:
    since = job.lease_acquired_at or job.created_at
    left = max(0, int((job.lease_expires_at - now).total_seconds() + 0.999))
    return f"driven by {shown_holder(job.lease_holder)} since {_time(since)}; its lease expires in {left} s"


def held_message(job: AlterJobRow | AlterJob, now: datetime) -> str:
    return f"job {job.id} is being {_driven_by(job, now)}"


def ensure_not_driven(job: AlterJobRow | AlterJob, group: str | None = None, now: datetime | None = None) -> None:
    """Raise `LeaseHeld` when a runner of another driver than `group` holds an unexpired lease."""
    now = now or utcnow()
    if job.lease_expires_at is not None and job.lease_expires_at >= now and (group is None or job.lease_group != group):
        raise LeaseHeld(held_message(job, now))


def fence(row: AlterJobRow, holder: str | None) -> None:
    """Inside a write's own transaction (the job row locked): refuse a runner that lost its lease.
    `holder` None is a user's action (CANCEL, RESUME of a postponed swap), which needs no lease."""
    if holder is not None and row.lease_holder != holder:
        raise LeaseLost(f"alter job {row.id}: this runner lost its lease to {shown_holder(row.lease_holder)}; it stopped without writing")


class JobLeases:
    """Taking and renewing the runner lease of alter jobs; each method one database transaction."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def _session(self) -> Session:
        return self.catalog.db_session()

    def acquire(self, job_id: int, holder: str, group: str, lease_s: float, now: datetime | None = None) -> AlterJob:
        """Take the job's lease for `holder` (compare-and-set). Raises `LeaseHeld` with one line
        while a runner of another group holds an unexpired lease, `JobStateError` when the job is over."""
        now = now or utcnow()
        with self._session() as s, s.begin():
            row = lock_job_row(s, job_id)
            if row.state not in ACTIVE_JOB_STATES:
                raise JobStateError(f"alter job {job_id} is {row.state}; there is nothing to drive")
            ensure_not_driven(row, group, now)  # a holder's own group always passes
            if row.lease_holder != holder:
                row.lease_acquired_at = now
            row.lease_holder = holder
            row.lease_group = group
            row.lease_renewed_at = now
            row.lease_expires_at = now + timedelta(seconds=lease_s)
            return job_from_row(row)

    def holder(self, job_id: int) -> str | None:
        """Who holds the job's lease now (expired or not)."""
        with self._session() as s:
            return s.scalar(select(AlterJobRow.lease_holder).where(AlterJobRow.id == job_id))

    def renew(self, job_id: int, holder: str, lease_s: float, now: datetime | None = None) -> bool:
        """Extend the holder's lease; False once another runner took it or the job is over."""
        now = now or utcnow()
        still_held = (AlterJobRow.lease_holder == holder, AlterJobRow.state.in_(ACTIVE_JOB_STATES))
        with self._session() as s, s.begin():
            return extend_lease(s, AlterJobRow, job_id, still_held, now + timedelta(seconds=lease_s), lease_renewed_at=now)

    def release(self, job_id: int, holder: str, now: datetime | None = None) -> bool:
        """The holder lets its lease go (it expires now); False if it was not the holder."""
        now = now or utcnow()
        with self._session() as s, s.begin():
            result = s.execute(
                update(AlterJobRow).where(AlterJobRow.id == job_id, AlterJobRow.lease_holder == holder).values(lease_expires_at=now)
            )
            return result.rowcount == 1

    def orphaned(self, now: datetime | None = None) -> list[AlterJob]:
        """Every orphaned job, oldest first."""
        now = now or utcnow()
        with self._session() as s:
            rows = s.scalars(
                select(AlterJobRow).where(AlterJobRow.kind == JobKind.HEAVY, AlterJobRow.state.in_(DRIVEN_STATES)).order_by(AlterJobRow.id)
            )
            return [job for job in map(job_from_row, rows) if is_orphaned(job, now)]
