"""An orchestrated ALTER's turn (alterflow.workflow.table_turns): who goes at once without a place
in the line (a run taking over an orphaned job, one whose job exists), and a run of a dropped
table leaving the line. On SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from alterflow.catalog.alter_turns import AlterTurns
from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.engine.session import Session
from alterflow.workflow import alter_steps, heavy_steps, table_turns
from alterflow.workflow.request import AlterRequest

HEAVY = "ALTER TABLE t MODIFY COLUMN v SMALLINT"
WHEN = datetime(2026, 11, 30, 12, 0, 0)


@pytest.fixture
def session(settings):
    session = Session(settings)
    list(session.run("CREATE TABLE t (id INT NOT NULL, v INT, PRIMARY KEY (id))"))
    return session


def orphaned_job(session) -> int:
    """A heavyweight job whose runner let its lease go (as a killed or interrupted one does)."""
    request = AlterRequest("t", HEAVY)
    started = heavy_steps.start(session.catalog, request, alter_steps.validate(session.catalog, request), lease_s=1)
    from alterflow.catalog.job_leases import JobLeases

    job = session.catalog.job_by_request(request.request_id)
    JobLeases(session.catalog).release(started.job_id, job.lease_holder)
    return started.job_id


def test_the_same_statement_as_an_orphaned_job_goes_at_once_to_take_it_over(session):
    job_id = orphaned_job(session)
    other = AlterRequest("t", "ALTER TABLE t ADD COLUMN n INT")
    turn = table_turns.take_turn(session.catalog, other, WHEN, 60, "run x")
    assert (turn.go, turn.behind) == (False, f"job {job_id} (PENDING) on t")
    same = AlterRequest("t", HEAVY)
    assert table_turns.take_turn(session.catalog, same, WHEN, 60, "run y").go
    assert AlterTurns(session.catalog).line(session.catalog.table("t").id) == [other.request_id]  # no place for the taker


def test_a_run_whose_job_exists_goes_and_a_dropped_tables_run_leaves_the_line(session):
    request = AlterRequest("t", "ALTER TABLE t ADD COLUMN n INT")
    assert table_turns.take_turn(session.catalog, request, WHEN, 60).go
    alter_steps.commit(session.catalog, request, alter_steps.validate(session.catalog, request))
    assert table_turns.take_turn(session.catalog, request, WHEN, 60).go  # a retried task
    assert table_turns.may_go(session.catalog, request, WHEN)
    waiting = AlterRequest("t", "ALTER TABLE t ADD COLUMN m INT")
    table = session.catalog.table("t").id
    heavy_steps.start(session.catalog, AlterRequest("t", HEAVY), alter_steps.validate(session.catalog, AlterRequest("t", HEAVY)))
    assert not table_turns.take_turn(session.catalog, waiting, WHEN, 60).go
    list(session.run("CANCEL ALTER TABLE COLUMN FROM t"))
    list(session.run("DROP TABLE t"))
    with pytest.raises(UnknownObject, match="unknown table"):
        table_turns.take_turn(session.catalog, waiting, WHEN, 60)
    assert AlterTurns(session.catalog).line(table) == []


def test_a_runs_change_is_heavy_when_it_rewrites_as_planned_now(session):
    """The kind each run joins the line with, from its plan on the current version: five ADD
    COLUMNs go side by side, a narrowing waits for them."""
    table = session.catalog.table("t").id
    for n in range(3):
        assert table_turns.take_turn(session.catalog, AlterRequest("t", f"ALTER TABLE t ADD COLUMN c{n} INT"), WHEN, 60).go
    turn = table_turns.take_turn(session.catalog, AlterRequest("t", HEAVY), WHEN, 60)
    assert not turn.go and turn.behind.endswith("(let through, making its job)")
    refused = AlterRequest("t", "ALTER TABLE t ADD COLUMN c0 INT, ADD COLUMN c0 INT")  # its plan task refuses it
    earlier = WHEN - timedelta(seconds=1)  # not behind the rewrite (at WHEN, the run ids would order them)
    assert table_turns.take_turn(session.catalog, refused, earlier, 60).go
    assert len(AlterTurns(session.catalog).line(table)) == 5
