"""A heavyweight job's states (docs/heavyweight.md), one step at a time: validate → start (PENDING) →
wait_for_boundary (WAITING_TXN → RUNNING) → convert (VALIDATING) → check → swap (FINISHED), and
`postpone_swap` (READY_TO_SWAP) + RESUME. Readers see the origin until the swap."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs, JobStateError
from alterflow.engine.session import StatementError
from alterflow.rewrite.tablet_conversion import ConversionResult
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.alter_runner import run_alter
from alterflow.workflow.heavy_steps import HEAVY_STEPS, JobCancelled
from tests.support.heavy_jobs import (
    describe,
    index_state,
    job,
    one_line,
    request,
    show_job,
    sql,
    start,
    version_state,
    versions,
)

pytestmark = pytest.mark.spark

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"
ROWS = "INSERT INTO t VALUES (1, '10'), (2, '20'), (3, '30')"
OLD_ROWS = ((1, "10"), (2, "20"), (3, "30"))


def select_all(session):
    return sql(session, "SELECT id, v FROM t ORDER BY id")


def assert_readers_see_origin(session, rows=OLD_ROWS, with_select=True):
    assert describe(session, "t")["v"][0] == "STRING"
    assert versions(session, "t") == [1]
    if with_select:
        assert select_all(session) == rows


def test_each_step_moves_the_job_one_state_and_readers_see_the_origin_until_swap(session, spark):
    sql(session, TABLE)
    sql(session, ROWS)
    catalog = session.catalog
    info = catalog.table("t")
    late = []  # soft findings, asserted at the end so the whole walk is checked

    # validate: planning only, nothing recorded.
    req = request("ALTER TABLE t MODIFY COLUMN v INT")
    validated = alter_steps.validate(catalog, req)
    assert validated.kind == "HEAVY" and validated.from_version == 1 and validated.to_version == 2
    assert catalog.jobs(info.id) == [] and catalog.job_by_request(req.request_id) is None

    # start: PENDING, new version recorded but not current, shadow index created, boundary taken.
    started = heavy_steps.start(catalog, req, validated)
    job_id = started.job_id
    j = job(session, job_id)
    assert (j.state, j.kind, j.msg, j.progress, j.steps) == ("PENDING", "HEAVY", "", "", ("validate", "start"))
    assert j.boundary_txn == started.boundary and j.boundary_txn > 1  # above the load's transaction (1)
    assert (j.from_version, j.to_version, j.origin_index_id) == (1, 2, info.current_index_id)
    assert version_state(session, info.id, 2) == "PENDING"
    assert index_state(session, j.shadow_index_id) == "SHADOW"
    assert catalog.table("t").current_version == 1
    assert heavy_steps.start(catalog, req, validated) == started  # idempotent per request
    shown = show_job(session, "t", job_id)
    assert (shown["Kind"], shown["SchemaVersion"], shown["TransactionId"], shown["State"]) == ("HEAVY", 2, j.boundary_txn, "PENDING")
    assert shown["FinishTime"] is None and shown["Timeout"] == 86400
    assert_readers_see_origin(session)

    # RESUME of a job its runner (here: this process, which started it) still holds: one line
    # naming the runner and its lease, nothing changes.
    with pytest.raises(StatementError) as err:
        sql(session, "RESUME ALTER TABLE COLUMN FROM t")
    assert f"job {job_id} is being driven by " in one_line(err.value) and "its lease expires in" in err.value.args[0]
    assert job(session, job_id).state == "PENDING"

    # wait_for_boundary: nothing below the boundary is open, so WAITING_TXN passes straight to RUNNING.
    assert heavy_steps.wait_for_boundary(catalog, session.warehouse, job_id) == heavy_steps.BOUNDARY_REACHED
    j = job(session, job_id)
    tablets = len(catalog.tablets(j.origin_index_id))
    # Progress from the first moment of RUNNING: what the conversion will read, nothing done yet.
    assert (j.state, j.msg, j.progress) == ("RUNNING", "", f"tablets 0/{tablets}, rows 0/3, - MB/s, ETA -")
    assert j.steps == ("validate", "start", "wait_for_boundary")
    assert show_job(session, "t", job_id)["State"] == "RUNNING"
    assert_readers_see_origin(session, with_select=False)
    assert heavy_steps.wait_for_boundary(catalog, session.warehouse, job_id) == heavy_steps.BOUNDARY_REACHED

    # convert: every origin tablet converted, progress counts tablets, rows, throughput and ETA.
    done = re.compile(rf"tablets {tablets}/{tablets}, rows 3/3, [0-9]+\.[0-9] MB/s, ETA 0:00:00")
    result = heavy_steps.convert(spark, catalog, session.warehouse, job_id)
    assert result == ConversionResult(tablets_total=tablets, tablets_done=tablets, rows=3, failed_casts=0)
    j = job(session, job_id)
    assert (j.state, j.msg) == ("VALIDATING", "") and done.fullmatch(j.progress), j.progress
    assert j.steps == ("validate", "start", "wait_for_boundary", "convert")
    assert set(HeavyJobs(catalog).converted(job_id)) == set(catalog.tablets(j.origin_index_id))
    assert heavy_steps.convert(spark, catalog, session.warehouse, job_id) == heavy_steps.StepSkipped("VALIDATING")
    shown = show_job(session, "t", job_id)
    assert shown["State"] == "VALIDATING" and shown["Progress"] == j.progress
    assert_readers_see_origin(session, with_select=False)

    # check: the suites pass; still VALIDATING (the swap is the next step), Msg says so.
    checked = heavy_steps.check(spark, catalog, session.warehouse, job_id)
    assert checked.nulled == 0 and checked.expectations >= 3
    j = job(session, job_id)
    assert (j.state, j.msg) == ("VALIDATING", f"{checked.expectations} expectations passed")
    assert done.fullmatch(j.progress), j.progress
    if "check" not in j.steps:
        late.append(f"after a successful check step the job's steps are {j.steps}: 'check' is only recorded by swap")
    with pytest.raises(StatementError) as err:
        sql(session, "RESUME ALTER TABLE COLUMN FROM t")
    assert f"job {job_id} is being driven by " in one_line(err.value)
    assert_readers_see_origin(session)

    # swap: FINISHED; the new version and the shadow index are what readers see now.
    assert heavy_steps.swap(catalog, session.warehouse, job_id).state == "FINISHED"
    j = job(session, job_id)
    assert j.state == "FINISHED" and j.finished_at is not None
    assert j.steps == HEAVY_STEPS
    info2 = catalog.table("t")
    assert (info2.current_version, info2.current_index_id) == (2, j.shadow_index_id)
    assert index_state(session, j.shadow_index_id) == "ACTIVE" and index_state(session, j.origin_index_id) == "RETIRED"
    assert version_state(session, info.id, 2) == "COMMITTED"
    assert describe(session, "t")["v"][0] == "INT"
    assert versions(session, "t") == [1, 2]
    assert select_all(session) == ((1, 10), (2, 20), (3, 30))
    shown = show_job(session, "t", job_id)
    assert (shown["Kind"], shown["SchemaVersion"], shown["TransactionId"], shown["State"]) == ("HEAVY", 2, j.boundary_txn, "FINISHED")
    assert shown["FinishTime"] is not None
    assert heavy_steps.swap(catalog, session.warehouse, job_id).state == "FINISHED"  # idempotent

    # A finished job can be neither resumed nor cancelled: one line each, nothing changes.
    for statement in ("RESUME ALTER TABLE COLUMN FROM t", "CANCEL ALTER TABLE COLUMN FROM t"):
        with pytest.raises(StatementError) as err:
            sql(session, statement)
        assert "t" in one_line(err.value)
    with pytest.raises(JobStateError):
        heavy_steps.cancel(catalog, session.warehouse, job_id, "too late")
    assert job(session, job_id).state == "FINISHED" and catalog.table("t").current_version == 2
    assert not late, late


def test_postpone_swap_stops_at_ready_to_swap_and_resume_swaps(session, spark):
    sql(session, TABLE)
    sql(session, ROWS)
    done = sql(session, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("postpone_swap" = "true")')
    match = re.fullmatch(r"ALTER TABLE t: job (\d+) READY_TO_SWAP, schema version 2", done)
    assert match, done
    job_id = int(match.group(1))
    j = job(session, job_id)
    assert j.state == "READY_TO_SWAP" and j.steps == ("validate", "start", "wait_for_boundary", "convert", "check")
    assert re.fullmatch(
        r"\d+ expectations passed; waiting for someone to swap it: RESUME ALTER TABLE COLUMN FROM t, or Resume on the Schema changes page",
        j.msg,
    ), j.msg
    assert j.ready_to_swap_at is not None and j.swap_wait_s == 0.0
    shown = show_job(session, "t", job_id)
    assert (shown["State"], shown["TransactionId"], shown["Kind"]) == ("READY_TO_SWAP", j.boundary_txn, "HEAVY")
    assert_readers_see_origin(session)

    # Loads keep dual-writing while the job waits for RESUME.
    shadow_before = len(HeavyJobs(session.catalog).converted(job_id))
    assert HeavyJobs(session.catalog).dual_write_target(j.table_id).job_id == job_id
    sql(session, "INSERT INTO t VALUES (4, '40')")
    assert select_all(session) == OLD_ROWS + ((4, "40"),)
    shadow_txns = {f.txn_id for f in session.catalog.index_snapshot(j.table_id, j.shadow_index_id, 2).files}
    origin_txns = {f.txn_id for f in session.catalog.snapshot("t").files}
    assert max(origin_txns) in shadow_txns  # the INSERT's transaction wrote into both indexes
    assert len(HeavyJobs(session.catalog).converted(job_id)) == shadow_before

    # One job per table: a second ALTER, light or heavy, is rejected naming the job; nothing changes.
    for statement in ("ALTER TABLE t ADD COLUMN x INT", "ALTER TABLE t MODIFY COLUMN v BIGINT"):
        with pytest.raises(StatementError) as err:
            sql(session, statement)
        assert f"job {job_id}" in one_line(err.value)
    assert len(session.catalog.jobs(j.table_id)) == 1 and versions(session, "t") == [1]

    done = sql(session, "RESUME ALTER TABLE COLUMN FROM t")
    assert done == f"RESUME ALTER TABLE COLUMN FROM t: job {job_id} FINISHED, schema version 2"
    j = job(session, job_id)
    assert j.state == "FINISHED" and j.steps[-1] == "swap"
    assert 0 < j.swap_wait_s <= (j.finished_at - j.ready_to_swap_at).total_seconds() + 1e-6  # the wait, kept
    assert re.fullmatch(r"\d+ expectations passed", j.msg), j.msg  # it waits no more
    assert describe(session, "t")["v"][0] == "INT" and versions(session, "t") == [1, 2]
    assert select_all(session) == ((1, 10), (2, 20), (3, 30), (4, 40))

    with pytest.raises(StatementError) as err:
        sql(session, "RESUME ALTER TABLE COLUMN FROM t")
    assert "no unfinished job" in one_line(err.value)
    with pytest.raises(StatementError) as err:
        sql(session, "CANCEL ALTER TABLE COLUMN FROM t")
    assert "no unfinished alter job" in one_line(err.value)
    assert job(session, job_id).state == "FINISHED" and versions(session, "t") == [1, 2]
    # After the job, ALTERs are allowed again.
    assert "FINISHED" in sql(session, "ALTER TABLE t ADD COLUMN x INT")
    assert versions(session, "t") == [1, 2, 3]


def test_running_the_steps_again_does_not_swap_a_postponed_job(session, spark):
    """The runner resumes an unfinished request by running its steps again (an idempotent retry,
    an Airflow task retry); a job waiting in READY_TO_SWAP must keep waiting for RESUME."""
    sql(session, TABLE)
    sql(session, ROWS)
    req = request("ALTER TABLE t MODIFY COLUMN v INT", postpone_swap="true")
    first = run_alter(session.catalog, req, session.warehouse, lambda: spark)
    assert first.state == "READY_TO_SWAP"
    again = run_alter(session.catalog, req, session.warehouse, lambda: spark)
    assert again.id == first.id
    assert again.state == "READY_TO_SWAP", "retrying the request swapped the postponed job without RESUME"
    assert_readers_see_origin(session, with_select=False)
    assert heavy_steps.swap(session.catalog, session.warehouse, first.id).state == "READY_TO_SWAP"
    assert job(session, first.id).state == "READY_TO_SWAP"


def test_a_job_past_its_timeout_is_cancelled_by_its_next_step(session):
    sql(session, TABLE)
    sql(session, ROWS)
    job_id = start(session, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("timeout" = "60")')
    created = job(session, job_id).created_at
    assert job(session, job_id).timeout_s == 60
    # The clock is moved instead of waited out: a second before the timeout the job is alive...
    within = heavy_steps.ensure_alive(session.catalog, session.warehouse, job_id, now=created + timedelta(seconds=59))
    assert within.state == "PENDING"
    # ... and the first step past it cancels the job.
    with pytest.raises(JobCancelled) as err:
        heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id, now=created + timedelta(seconds=61))
    assert "timeout" in one_line(err.value)
    j = job(session, job_id)
    assert j.state == "CANCELLED" and "timeout" in j.msg and j.finished_at is not None
    assert version_state(session, j.table_id, 2) is None
    assert index_state(session, j.shadow_index_id) == "DROPPED"
    assert describe(session, "t")["v"][0] == "STRING" and versions(session, "t") == [1]
