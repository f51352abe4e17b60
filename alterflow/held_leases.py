"""Leases this process holds in the catalog and renews while it works (docs/heavyweight.md, "Leases: no job stranded, no load blocking"):

- `JobLease`: a runner's hold on an alter job. Taken by compare-and-set (`catalog.job_leases`),
  renewed by a background thread, handed off (renewed once more) when a step ends so the next step
  of the same driver has a whole lease to start in. Every write the runner makes checks it in the
  catalog (fencing); `ensure_held` lets long work stop early once the renewal saw it lost.
- `TransactionLease`: a load's hold on its PREPARE transaction, renewed the same way. Once it
  expires, whoever looks first aborts the transaction; the load then fails at commit.

A lease lives `lease_s` seconds (`Settings.lease_s`: ALTERFLOW_LEASE_S, 30 by default), passed
down by the caller, and is renewed every sixth of that (5 s by default).
A renewal that fails for a passing reason (the database briefly unreachable) is tried again at the
next tick; only the catalog's answer "not yours any more" ends it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from alterflow.catalog.catalog import AlterJob, Catalog
from alterflow.catalog.catalog_errors import CatalogUnavailable, LeaseLost
from alterflow.catalog.job_leases import JobLeases, shown_holder
from alterflow.errors import first_line
from alterflow.settings import RENEWALS_PER_LEASE

log = logging.getLogger(__name__)

_GROUP: tuple[int, str] | None = None


def new_holder() -> str:
    """A holder name for one taking of a lease: `host:pid:uuid`."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


# Airflow retries a failed task itself and runs a DAG run's tasks one after another: a lease that
# belongs to a DAG run is handed from task to task with this many leases of grace, so the gap
# between two tasks (scheduling, a retry's delay) never looks like a dead runner.
ORCHESTRATED_HAND_OFF_LEASES = 4
_AIRFLOW_RUN = "airflow run "


def airflow_run_group(run_id: str) -> str:
    """The lease group of one Airflow DAG run: every task of the run drives its job as one driver."""
    return f"{_AIRFLOW_RUN}{run_id}"


def airflow_run_of(group: str | None) -> str | None:
    """The DAG run id of an Airflow run's lease group (`airflow_run_group`); None for any other driver."""
    if group is None or not group.startswith(_AIRFLOW_RUN):
        return None
    return group[len(_AIRFLOW_RUN) :]


def process_group() -> str:
    """This process as a driver: every step it runs belongs to the same group (a new one after a fork)."""
    global _GROUP
    pid = os.getpid()
    if _GROUP is None or _GROUP[0] != pid:
        _GROUP = (pid, f"process {new_holder()}")
    return _GROUP[1]


class _Renewer:
    """The process's renewal scheduler: one thread wakes when a registered lease is due and hands
    its renewal to a small pool, one renewal in flight per lease, so holding a lease costs a load a
    dictionary entry, not a thread, and one slow renewal (a busy catalog) never delays the others.
    Started on first use (again in a forked child)."""

    WORKERS = 8

    def __init__(self):
        self._lock = threading.Condition()
        self._leases: dict[int, Renewal] = {}
        self._pid: int | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._wake_at = 0.0  # when the scheduler thread looks next

    def add(self, renewal: Renewal) -> None:
        with self._lock:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._leases = {}
                self._pool = ThreadPoolExecutor(self.WORKERS, thread_name_prefix="lease-renewal")
                threading.Thread(target=self._loop, name="lease-renewer", daemon=True).start()
            renewal.next_due = time.monotonic() + renewal.every_s
            self._leases[id(renewal)] = renewal
            if renewal.next_due < self._wake_at:  # wake the scheduler only if it would look too late
                self._lock.notify()

    def remove(self, renewal: Renewal) -> None:
        with self._lock:
            self._leases.pop(id(renewal), None)

    def _loop(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                idle = [r for r in self._leases.values() if not r.in_flight]
                due = [r for r in idle if r.next_due <= now]
                if not due:
                    # In-flight ones too: each was given its next turn when it was handed out.
                    nearest = min((r.next_due for r in self._leases.values()), default=now + 60.0)
                    self._wake_at = min(now + 60.0, max(now + 0.01, nearest))
                    self._lock.wait(self._wake_at - now)
                    continue
                for renewal in due:
                    renewal.next_due = now + renewal.every_s
                    renewal.in_flight = True
                pool = self._pool
            for renewal in due:  # a renewal is a catalog transaction: never under the lock
                pool.submit(self._renew, renewal)

    def _renew(self, renewal: Renewal) -> None:
        try:
            kept = renewal.renew_once()
        finally:
            with self._lock:
                renewal.in_flight = False
        if not kept:
            self.remove(renewal)


_RENEWER = _Renewer()


class Renewal:
    """Calls `renew()` every `every_s` seconds (in the process's renewal thread) until stopped or
    until it answers False: the lease is gone (`lost`)."""

    def __init__(self, renew: Callable[[], bool], every_s: float, name: str):
        self._renew = renew
        self.every_s = every_s
        self.name = name
        self.next_due = 0.0
        self.in_flight = False
        self.lost = False
        self._stopped = False
        self._last_renewed = time.monotonic()

    def start(self) -> Renewal:
        _RENEWER.add(self)
        return self

    def renew_once(self) -> bool:
        """One renewal; False once the lease is gone (or this renewal was stopped)."""
        if self._stopped:
            return False
        try:
            kept = self._renew()
        except Exception as fault:  # a passing fault: the lease is still ours until it expires
            if time.monotonic() - self._last_renewed < self.every_s * RENEWALS_PER_LEASE:
                # The catalog's server away (a restart): its one line; anything else with its traceback.
                lost = isinstance(fault, CatalogUnavailable)
                reason = f": {first_line(fault)}" if lost else ""
                log.warning("renewal of %s failed%s; trying again in %.1f s", self.name, reason, self.every_s, exc_info=not lost)
                return True
            kept = False  # not renewed for a whole lease: it has expired
        if kept:
            self._last_renewed = time.monotonic()
        elif not self._stopped:
            self.lost = True
        return kept

    def stop(self) -> None:
        self._stopped = True
        _RENEWER.remove(self)


class JobLease:
    """A runner's lease on one alter job, for a `with` block:

        with JobLease(catalog, job_id, group, lease_s=settings.lease_s) as lease:
            heavy.advance(..., holder=lease.holder)

    `group` names the driver across hand-offs (an Airflow DAG run); by default, this process."""

    def __init__(self, catalog: Catalog, job_id: int, group: str | None = None, *, lease_s: float):
        self.catalog = catalog
        self.job_id = int(job_id)
        self.group = group or process_group()
        self.lease_s = lease_s
        self.holder = new_holder()
        self._renewal: Renewal | None = None
        # An Airflow run hands its lease on with grace; a process that stops lets it go at once on failure.
        self.orchestrated = self.group.startswith(_AIRFLOW_RUN)

    def acquire(self) -> AlterJob:
        """Take the lease (LeaseHeld while another driver's runner holds it) and keep renewing it."""
        job = JobLeases(self.catalog).acquire(self.job_id, self.holder, self.group, self.lease_s)
        self._renewal = Renewal(self._renew, self.lease_s / RENEWALS_PER_LEASE, f"lease-job-{self.job_id}").start()
        return job

    def _renew(self) -> bool:
        return JobLeases(self.catalog).renew(self.job_id, self.holder, self.lease_s)

    @property
    def lost(self) -> bool:
        return self._renewal is not None and self._renewal.lost

    def ensure_held(self, ask_catalog: bool = False) -> None:
        """Raise LeaseLost once the lease is known to be taken over (by the renewal, or with
        `ask_catalog` by a read of the job now): stop before more work."""
        holder = JobLeases(self.catalog).holder(self.job_id) if ask_catalog else self.holder
        if self.lost or holder != self.holder:
            taker = f" to {shown_holder(holder)}" if holder != self.holder else ""
            raise LeaseLost(f"alter job {self.job_id}: this runner lost its lease{taker}; it stopped without writing")

    def hand_off(self) -> None:
        """Stop renewing; renew once more so the driver's next step starts inside a whole lease
        (an Airflow run's next task: inside several, see ORCHESTRATED_HAND_OFF_LEASES). A job that
        is over (its swap or cancel was this step) has no next step: its lease is let go, so no
        finished job shows a lease held."""
        if self._renewal is None:
            return
        self._renewal.stop()
        if self._renewal.lost:  # the renewal found the job over (or taken over): nothing to hand on
            self._let_go()  # a no-op unless this runner still holds it
        else:
            seconds = self.lease_s * (ORCHESTRATED_HAND_OFF_LEASES if self.orchestrated else 1)
            try:
                if not JobLeases(self.catalog).renew(self.job_id, self.holder, seconds):
                    self._let_go()  # the job is over (or another runner took it: then a no-op)
            except Exception:
                log.warning("could not renew the lease on job %s at hand-off", self.job_id, exc_info=True)
        self._renewal = None

    def release(self) -> None:
        """Stop renewing and let the lease go now: the job is orphaned at once (RESUME takes it)."""
        if self._renewal is None:
            return
        self._renewal.stop()
        self._renewal = None
        self._let_go()

    def _let_go(self) -> None:
        """Expire the lease now if this runner holds it (compare-and-set on the holder: a no-op
        when it never took it)."""
        try:
            JobLeases(self.catalog).release(self.job_id, self.holder)
        except Exception:
            log.warning("could not release the lease on job %s", self.job_id, exc_info=True)

    def __enter__(self) -> JobLease:
        try:
            self.acquire()
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM) once the catalog gave the lease but before `with` could
            # promise to let it go: let go here, or the job would wait a whole lease for nobody.
            if self._renewal is not None:
                self._renewal.stop()
                self._renewal = None
            if not self.orchestrated:
                self._let_go()
            raise
        return self

    def __exit__(self, exc_type, _exc, _tb) -> None:
        if exc_type is not None and not self.orchestrated:
            self.release()  # this process gives up: nobody should wait a lease for it
        else:
            self.hand_off()


class TransactionLease:
    """A load's lease on its PREPARE transaction, renewed while the load works:

    with TransactionLease(catalog, txn_id, lease_s):
        ... write files, commit ...
    """

    def __init__(self, catalog: Catalog, txn_id: int, lease_s: float):
        self.catalog = catalog
        self.txn_id = txn_id
        self.lease_s = lease_s
        self._renewal = Renewal(lambda: catalog.renew_transaction(txn_id, lease_s), lease_s / RENEWALS_PER_LEASE, f"lease-txn-{txn_id}")

    def start(self) -> TransactionLease:
        self._renewal.start()
        return self

    def stop(self) -> None:
        self._renewal.stop()

    def __enter__(self) -> TransactionLease:
        return self.start()

    def __exit__(self, *_exc) -> None:
        self.stop()
