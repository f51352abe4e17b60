"""Runner leases on alter jobs and load leases on transactions (docs/heavyweight.md), on SQLite and PostgreSQL:
taking a lease is a compare-and-set, every state change checks it (fencing), an expired load lease
aborts its transaction, and a load that lost its lease fails at commit with docs/heavyweight.md's line."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from alterflow.catalog.catalog import NewFile, utcnow
from alterflow.catalog.catalog_errors import LeaseHeld, LeaseLost, TransactionStateError
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.job_leases import JobLeases, is_orphaned, runner_text
from alterflow.engine.session import Session
from alterflow.held_leases import JobLease, TransactionLease
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest
from tests.support.catalog_rows import txn_state

ALTER = "ALTER TABLE t MODIFY COLUMN v INT"


@pytest.fixture
def any_session(settings):
    s = Session(settings)
    list(s.run("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"))
    list(s.run("INSERT INTO t VALUES (1, '1'), (2, '2')"))
    return s


def start_job(session, group: str = "driver A") -> int:
    request = AlterRequest("t", ALTER)
    validated = alter_steps.validate(session.catalog, request)
    return heavy_steps.start(session.catalog, request, validated, group=group).job_id


def test_a_job_is_born_with_its_starters_lease_and_another_driver_is_refused_until_it_expires(any_session):
    s = any_session
    job_id = start_job(s, "driver A")
    job = HeavyJobs(s.catalog).job(job_id)
    assert job.lease_group == "driver A" and job.lease_holder.count(":") == 2  # host:pid:uuid
    assert job.lease_expires_at > utcnow() and not is_orphaned(job)
    assert runner_text(job).startswith("driven by ") and "its lease expires in" in runner_text(job)

    leases = JobLeases(s.catalog)
    with pytest.raises(LeaseHeld) as err:
        leases.acquire(job_id, "other:1:x", "driver B", 30)
    text = str(err.value)
    host_pid = job.lease_holder.rsplit(":", 1)[0]
    assert text.startswith(f"job {job_id} is being driven by {host_pid} since ") and "its lease expires in" in text
    assert "\n" not in text
    assert HeavyJobs(s.catalog).job(job_id).lease_holder == job.lease_holder  # nothing changed

    # The same driver takes it back at once (the next task of the same DAG run).
    taken = leases.acquire(job_id, "same:2:y", "driver A", 30)
    assert taken.lease_holder == "same:2:y"
    # Past the expiry anybody may take it: orphaned until then.
    later = utcnow() + timedelta(seconds=31)
    assert is_orphaned(HeavyJobs(s.catalog).job(job_id), later)
    assert runner_text(HeavyJobs(s.catalog).job(job_id), later).startswith("no runner since ")
    assert leases.acquire(job_id, "other:1:x", "driver B", 30, now=later).lease_holder == "other:1:x"


def test_fencing_a_runner_that_lost_its_lease_writes_nothing(any_session):
    s = any_session
    job_id = start_job(s)
    heavy = HeavyJobs(s.catalog)
    first = heavy.job(job_id).lease_holder
    JobLeases(s.catalog).acquire(job_id, "successor:9:z", "driver B", 30, now=utcnow() + timedelta(seconds=60))
    before = heavy.job(job_id)
    with pytest.raises(LeaseLost) as err:
        heavy.advance(job_id, ("PENDING",), "WAITING_TXN", holder=first)
    assert "lost its lease to successor:9" in str(err.value)
    with pytest.raises(LeaseLost):
        heavy.swap(job_id, ("PENDING",), holder=first)
    with pytest.raises(LeaseLost):
        heavy.cancel(job_id, "validation failed", holder=first)
    assert heavy.note(job_id, holder=first, msg="stale") is False
    assert not JobLeases(s.catalog).renew(job_id, first, 30)
    after = heavy.job(job_id)
    assert (after.state, after.msg, after.lease_holder) == (before.state, before.msg, "successor:9:z")
    # The successor's writes go through.
    assert heavy.advance(job_id, ("PENDING",), "WAITING_TXN", holder="successor:9:z").state == "WAITING_TXN"


def test_two_runners_racing_for_an_orphaned_job_exactly_one_wins(any_session):
    s = any_session
    job_id = start_job(s)
    later = utcnow() + timedelta(seconds=60)  # the starter is long gone
    results: dict[str, object] = {}
    barrier = threading.Barrier(4)

    def race(name: str) -> None:
        barrier.wait()
        try:
            results[name] = JobLeases(s.catalog).acquire(job_id, f"{name}:1:u", f"driver {name}", 30, now=later)
        except LeaseHeld as exc:
            results[name] = exc

    threads = [threading.Thread(target=race, args=(n,)) for n in ("r1", "r2", "r3", "r4")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [n for n, r in results.items() if not isinstance(r, Exception)]
    assert len(winners) == 1, results
    assert HeavyJobs(s.catalog).job(job_id).lease_holder == f"{winners[0]}:1:u"
    for name, result in results.items():
        if name not in winners:
            assert f"is being driven by {winners[0]}:1 since" in str(result)


def test_the_renewal_keeps_a_lease_alive_and_notices_a_takeover(any_session, monkeypatch):
    s = any_session
    job_id = start_job(s)
    # Renewed every 0.5 s; watched for 4 s, longer than the lease, so only renewals keep it alive.
    # (A 0.6 s lease renewed every 0.1 s expired on a loaded 2-core host: a commit of SQLite with
    # synchronous=FULL, or the renewal thread's turn, can take longer than that.)
    lease = JobLease(s.catalog, job_id, "driver A", lease_s=3.0)
    with lease:
        for _ in range(8):
            threading.Event().wait(0.5)
            assert HeavyJobs(s.catalog).job(job_id).lease_expires_at > utcnow()
        JobLeases(s.catalog).acquire(job_id, "thief:1:t", "driver A", 30)  # same driver, new runner
        deadline = utcnow() + timedelta(seconds=5)
        while not lease.lost and utcnow() < deadline:
            threading.Event().wait(0.05)
        assert lease.lost
        with pytest.raises(LeaseLost):
            lease.ensure_held()
    assert HeavyJobs(s.catalog).job(job_id).lease_holder == "thief:1:t"  # the hand-off did not take it back


def test_an_expired_load_lease_is_aborted_by_whoever_looks_and_its_files_are_listed(any_session):
    s = any_session
    table = s.catalog.table("t")
    txn = s.catalog.begin_transaction(table.id, "a load that died", 3600, lease_s=30, holder="dead:1:d")
    tablet = s.catalog.ensure_tablets(table.current_index_id, [("[]", 0)])[("[]", 0)]
    s.catalog.register_files(txn, [NewFile(tablet, 1, f"t{table.id}/i1/b{tablet}/{txn}-" + "a" * 32 + ".parquet", 1, 0)])
    assert s.catalog.abort_expired_transactions(table.id) == []  # alive: nothing to do
    assert s.catalog.renew_transaction(txn, 30)
    later = utcnow() + timedelta(seconds=31)
    paths = s.catalog.abort_expired_transactions(table.id, now=later)
    assert len(paths) == 1 and paths[0].endswith(".parquet")
    assert txn_state(s, txn) == "ABORTED"
    assert not s.catalog.renew_transaction(txn, 30)
    with pytest.raises(TransactionStateError) as err:
        s.catalog.commit_transaction(txn)
    assert str(err.value) == f"transaction {txn} was aborted (its lease expired); retry the load"


def test_a_load_whose_lease_ran_out_fails_at_commit_even_if_nobody_looked(any_session):
    s = any_session
    table = s.catalog.table("t")
    txn = s.catalog.begin_transaction(table.id, "a paused load", 3600, lease_s=0.5, holder="paused:1:p")
    threading.Event().wait(0.7)
    assert not s.catalog.renew_transaction(txn, 0.5)  # a lease that ran out is gone
    with pytest.raises(TransactionStateError) as err:
        s.catalog.commit_transaction(txn)
    assert str(err.value) == f"transaction {txn} was aborted (its lease expired); retry the load"
    assert txn_state(s, txn) == "ABORTED"


def test_a_renewed_load_lease_outlives_its_first_expiry(any_session):
    s = any_session
    table = s.catalog.table("t")
    txn = s.catalog.begin_transaction(table.id, "a slow load", 3600, lease_s=0.6, holder="slow:1:s")
    with TransactionLease(s.catalog, txn, 0.6):
        threading.Event().wait(1.5)  # 2.5 leases
        assert s.catalog.abort_expired_transactions(table.id) == []
    s.catalog.commit_transaction(txn)
    assert txn_state(s, txn) == "COMMITTED"


def test_waiting_txn_names_each_blocking_transaction_with_its_age_and_lease(any_session):
    s = any_session
    table = s.catalog.table("t")
    leased = s.catalog.begin_transaction(table.id, "a live load", 3600, lease_s=30, holder="live:1:l")
    plain = s.catalog.begin_transaction(table.id, "a load without lease", 3600)
    job_id = start_job(s)
    boundary = HeavyJobs(s.catalog).job(job_id).boundary_txn
    # The clock is moved, not read: the ages are the same on a busy host as on a quiet one.
    first, second = s.catalog.blocking_transactions(table.id, boundary)
    now = second.created_at + timedelta(seconds=7)
    result = heavy_steps.wait_for_boundary(s.catalog, s.warehouse, job_id, heavy_steps.StepDriver(group="driver A"), now=now)
    assert result == heavy_steps.BoundaryWait(done=False, blocking=(leased, plain))
    msg = HeavyJobs(s.catalog).job(job_id).msg

    def seconds(delta: timedelta) -> int:
        return int(delta.total_seconds())

    assert msg == (
        f"waiting for transactions {leased}, {plain} (below boundary {boundary}): "
        f"{leased} open {seconds(now - first.created_at)} s, lease expires in {seconds(first.lease_expires_at - now)} s; "
        f"{plain} open 7 s, no lease, times out in {seconds(second.timeout_at - now)} s"
    )


def test_a_failing_process_lets_its_lease_go_and_an_airflow_run_hands_it_on_with_grace(any_session):
    from alterflow.held_leases import ORCHESTRATED_HAND_OFF_LEASES, airflow_run_group

    s = any_session
    job_id = start_job(s, "process that fails")
    with pytest.raises(RuntimeError):
        with JobLease(s.catalog, job_id, "process that fails", lease_s=30):
            raise RuntimeError("Spark died")
    job = HeavyJobs(s.catalog).job(job_id)
    assert is_orphaned(job, utcnow() + timedelta(milliseconds=1)), "a runner that gave up still looks alive"

    run = airflow_run_group("manual__1")
    with pytest.raises(RuntimeError):
        with JobLease(s.catalog, job_id, run, lease_s=30):
            raise RuntimeError("the task failed; Airflow retries it")
    job = HeavyJobs(s.catalog).job(job_id)
    left = (job.lease_expires_at - utcnow()).total_seconds()
    assert 30 * ORCHESTRATED_HAND_OFF_LEASES - 5 < left <= 30 * ORCHESTRATED_HAND_OFF_LEASES, left
    with pytest.raises(LeaseHeld):  # meanwhile no other driver takes it
        JobLeases(s.catalog).acquire(job_id, "gc:1:g", "another run", 30)
    assert JobLeases(s.catalog).acquire(job_id, "retry:1:r", run, 30).lease_holder == "retry:1:r"  # the retry does


@pytest.mark.parametrize("group", ["this process", "airflow run"])
def test_the_step_that_ends_a_job_lets_its_lease_go_instead_of_handing_it_on(any_session, group):
    """A job over (swapped, or cancelled by its runner) has no next step: a finished job showed a
    lease held for up to a lease after its end (the fleet test's "no lease left held")."""
    from alterflow.held_leases import airflow_run_group

    s = any_session
    driver = airflow_run_group("manual__1") if group == "airflow run" else "this process"
    job_id = start_job(s, driver)
    with JobLease(s.catalog, job_id, driver, lease_s=30) as lease:
        HeavyJobs(s.catalog).cancel(job_id, "the runner's validation failed", holder=lease.holder)
    job = HeavyJobs(s.catalog).job(job_id)
    assert job.state == "CANCELLED" and job.lease_expires_at <= utcnow(), job


def test_an_interrupt_between_taking_the_lease_and_renewing_it_lets_it_go(any_session, monkeypatch):
    """A SIGTERM or Ctrl-C lands after the catalog gave this runner the lease, before `with` could
    promise to release it (in CI: a GC interrupted right as it took an orphaned job over left the
    job leased for a whole lease): the lease goes at once all the same."""
    import alterflow.held_leases as leases

    s = any_session
    job_id = start_job(s, "process that is interrupted")
    JobLeases(s.catalog).release(job_id, HeavyJobs(s.catalog).job(job_id).lease_holder)  # orphaned, as GC finds it

    def interrupted(_renewal):
        assert JobLeases(s.catalog).holder(job_id) == lease.holder  # the catalog gave it: the window
        raise KeyboardInterrupt

    monkeypatch.setattr(leases.Renewal, "start", interrupted)
    lease = JobLease(s.catalog, job_id, "process that is interrupted", lease_s=30)
    with pytest.raises(KeyboardInterrupt):
        with lease:
            raise AssertionError("never entered")
    assert is_orphaned(HeavyJobs(s.catalog).job(job_id), utcnow() + timedelta(milliseconds=1)), "left leased for nobody"


@pytest.mark.parametrize(("fault", "traceback_shown"), [("lost", False), ("bug", True)])
def test_a_failed_renewal_is_one_line_when_the_catalog_went_away(fault, traceback_shown, caplog):
    """A renewal the catalog's server did not answer (a restart) is a warning of one line (a CLI
    prints warnings on stderr, above the command's own line); an unexpected error keeps its
    traceback. Both keep the lease, which is still ours until it expires."""
    import logging

    from alterflow.catalog.catalog_errors import CatalogLost
    from alterflow.held_leases import Renewal

    def renew() -> bool:
        if fault == "lost":
            raise CatalogLost("the catalog database stopped answering (Connection refused)", "Connection refused")
        raise RuntimeError("a bug in the renewal")

    with caplog.at_level(logging.WARNING, logger="alterflow.held_leases"):
        assert Renewal(renew, 5.0, "job 7").renew_once()  # kept: tried again at the next turn
    [record] = caplog.records
    assert record.getMessage().startswith("renewal of job 7 failed")
    assert ("stopped answering" in record.getMessage()) is not traceback_shown
    assert bool(record.exc_info) is traceback_shown
