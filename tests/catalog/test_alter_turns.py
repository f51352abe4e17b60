"""The line of Airflow runs on one table (alterflow.catalog.alter_turns): trigger order, one run let
through at a time until its job exists, an unfinished job holds everyone, a run that lapsed or
left frees its place. On SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from alterflow.catalog.alter_turns import AlterTurns
from alterflow.catalog.catalog import utcnow
from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.engine.session import Session
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest

HOLD_S = 120.0
T0 = datetime(2026, 11, 30, 12, 0, 0)


@pytest.fixture
def session(settings):
    session = Session(settings)
    list(session.run("CREATE TABLE t (id INT NOT NULL, v INT, PRIMARY KEY (id))"))
    return session


def table_id(session) -> int:
    return session.catalog.table("t").id


def commit_light(session, request_id: str, column: str) -> None:
    request = AlterRequest("t", f"ALTER TABLE t ADD COLUMN {column} INT", request_id=request_id)
    alter_steps.commit(session.catalog, request, alter_steps.validate(session.catalog, request))


def start_heavy(session, request_id: str) -> int:
    request = AlterRequest("t", "ALTER TABLE t MODIFY COLUMN v SMALLINT", request_id=request_id)
    return heavy_steps.start(session.catalog, request, alter_steps.validate(session.catalog, request)).job_id


def test_runs_go_one_at_a_time_in_trigger_order(session):
    turns, table = AlterTurns(session.catalog), table_id(session)
    later = turns.take("b", table, T0 + timedelta(seconds=1), HOLD_S)  # the later run looks first
    assert later.go  # nobody ahead: it is let through
    first = turns.take("a", table, T0, HOLD_S)
    assert (first.go, first.behind) == (False, "run b (let through, making its job)")
    commit_light(session, "b", "c1")  # b's job exists: its place is over
    assert turns.take("a", table, T0, HOLD_S).go
    assert turns.line(table) == ["a"]


def test_an_unfinished_job_holds_every_run_and_the_earliest_goes_after_it(session):
    turns, table = AlterTurns(session.catalog), table_id(session)
    job_id = start_heavy(session, "heavy")
    waiting = {name: turns.take(name, table, T0 + timedelta(seconds=n), HOLD_S) for n, name in enumerate(["x", "y", "z"])}
    assert {name: turn.behind for name, turn in waiting.items()} == dict.fromkeys("xyz", f"job {job_id} (PENDING) on t")
    assert turns.take("heavy", table, T0, HOLD_S).go  # a run whose own job it is goes on (a retried task)
    turns.leave("heavy")
    list(session.run("CANCEL ALTER TABLE COLUMN FROM t"))
    assert turns.glance("z", table, T0 + timedelta(seconds=2)) is False  # x and y are ahead
    assert turns.take("z", table, T0 + timedelta(seconds=2), HOLD_S).behind == "run x (triggered before it)"
    assert turns.take("x", table, T0, HOLD_S).go
    assert turns.take("y", table, T0 + timedelta(seconds=1), HOLD_S).behind == "run x (let through, making its job)"
    assert turns.line(table) == ["x", "y", "z"]


def test_a_run_that_stops_renewing_lapses_and_one_that_leaves_frees_its_place_at_once(session):
    turns, table = AlterTurns(session.catalog), table_id(session)
    now = utcnow()
    assert turns.take("gone", table, T0, HOLD_S, now=now).go  # let through, then its worker died
    assert not turns.take("next", table, T0 + timedelta(seconds=1), HOLD_S, now=now).go
    later = now + timedelta(seconds=HOLD_S + 1)
    assert turns.take("next", table, T0 + timedelta(seconds=1), HOLD_S, now=later).go
    assert turns.line(table, now=later) == ["next"]
    assert not turns.take("third", table, T0 + timedelta(seconds=2), HOLD_S, now=later).go
    turns.leave("next")  # refused at its plan
    assert turns.take("third", table, T0 + timedelta(seconds=2), HOLD_S, now=later).go


def test_a_dropped_table_has_no_line(session):
    turns, table = AlterTurns(session.catalog), table_id(session)
    list(session.run("DROP TABLE t"))
    with pytest.raises(UnknownObject, match="unknown table"):
        turns.take("a", table, T0, HOLD_S)


def test_a_run_let_through_goes_again_when_an_earlier_run_joined_since(session):
    """Its turn came: an earlier-triggered run that joins afterwards (its task started late, or
    came back after its place lapsed) waits behind it, and neither waits for the other."""
    turns, table = AlterTurns(session.catalog), table_id(session)
    assert turns.take("b", table, T0 + timedelta(seconds=1), HOLD_S).go  # let through
    assert turns.take("a", table, T0, HOLD_S).behind == "run b (let through, making its job)"
    assert turns.take("b", table, T0 + timedelta(seconds=1), HOLD_S).go  # its task resumes: it still goes
    assert turns.take("a", table, T0, HOLD_S).behind == "run b (let through, making its job)"


def test_making_the_job_ends_the_runs_place_in_the_same_transaction(session):
    turns, table = AlterTurns(session.catalog), table_id(session)
    assert turns.take("light", table, T0, HOLD_S).go
    commit_light(session, "light", "c1")
    assert turns.take("heavy", table, T0 + timedelta(seconds=1), HOLD_S).go
    start_heavy(session, "heavy")
    with session.catalog.db_session() as s:
        from alterflow.catalog.models import AlterTurnRow

        assert s.query(AlterTurnRow).count() == 0


def test_light_runs_go_side_by_side_and_a_heavy_one_goes_alone(session):
    """Light changes overlap (their commits plan again on a lost race); a heavy one neither goes
    beside a light one let through nor lets a light one go beside it, and an earlier heavy one
    waiting holds the light ones behind it."""
    turns, table = AlterTurns(session.catalog), table_id(session)
    assert turns.take("light1", table, T0, HOLD_S, heavy=False).go
    assert turns.take("light2", table, T0 + timedelta(seconds=1), HOLD_S, heavy=False).go  # beside light1
    assert turns.take("heavy", table, T0 + timedelta(seconds=2), HOLD_S, heavy=True).behind == "run light1 (let through, making its job)"
    assert turns.take("light3", table, T0 + timedelta(seconds=3), HOLD_S, heavy=False).behind == "run heavy (triggered before it)"
    commit_light(session, "light1", "c1")
    commit_light(session, "light2", "c2")
    assert turns.take("heavy", table, T0 + timedelta(seconds=2), HOLD_S, heavy=True).go
    assert turns.take("light3", table, T0 + timedelta(seconds=3), HOLD_S, heavy=False).behind == "run heavy (let through, making its job)"
    start_heavy(session, "heavy")
    assert turns.take("light3", table, T0 + timedelta(seconds=3), HOLD_S, heavy=False).behind.startswith("job ")
