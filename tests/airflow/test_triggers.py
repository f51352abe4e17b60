"""The triggers a deferred task waits on (issue 12): a `BoundaryTrigger` fires within a second of
the last transaction below the boundary ending, while its writing look (lease and Msg) runs no more
often than every REFRESH_SECONDS; a `ResumeTrigger` fires once RESUME swaps the job, and both end
with the job's reason when it is cancelled. Run with asyncio in this process, on both catalogs."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import pytest

from alterflow.airflow import triggers
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest
from tests.support import point_alterflow_env_at
from tests.support.statements import sql

ALTER = "ALTER TABLE t MODIFY COLUMN v INT"


def start(session, statement: str) -> int:
    """validate + start of a heavyweight ALTER: the job id (PENDING)."""
    request = AlterRequest("t", statement)
    validated = alter_steps.validate(session.catalog, request)
    return heavy_steps.start(session.catalog, request, validated).job_id


def job(session, job_id: int):
    return HeavyJobs(session.catalog).job(job_id)


class CountingBoundaryTrigger(triggers.BoundaryTrigger):
    looks = 0

    def look(self, catalog, warehouse):
        type(self).looks += 1
        return super().look(catalog, warehouse)


async def _first_event(trigger, act, act_after: float):
    """The trigger's first event, with `act()` run (in a thread) after `act_after` seconds; also the
    seconds from the act's end to the event."""
    events = trigger.run()
    acted = {}

    async def later():
        await asyncio.sleep(act_after)
        await asyncio.to_thread(act)
        acted["at"] = time.monotonic()

    task = asyncio.create_task(later())
    event = await asyncio.wait_for(events.__anext__(), timeout=act_after + 30)
    await task
    await events.aclose()
    return event.payload, time.monotonic() - acted["at"]


def test_the_boundary_trigger_fires_within_a_second_of_the_last_commit_and_writes_every_5_s(plugin_session):
    s = plugin_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, '1')")
    held = s.catalog.begin_transaction(s.catalog.table("t").id, "a slow load", 3600)
    job_id = start(s, ALTER)
    CountingBoundaryTrigger.looks = 0
    trigger = CountingBoundaryTrigger(job_id)

    payload, latency = asyncio.run(_first_event(trigger, lambda: s.catalog.commit_transaction(held), act_after=7))
    assert payload == {"done": True, "blocking": []}
    assert latency < 2.0, latency  # within a second of it, with room for a loaded machine
    # 7 s of waiting: the first look, one refresh at 5 s, and the look that ended the wait.
    assert CountingBoundaryTrigger.looks == 3, CountingBoundaryTrigger.looks
    assert job(s, job_id).state == "RUNNING"


def test_a_trigger_ends_with_the_reason_when_the_job_is_cancelled(plugin_session):
    s = plugin_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    held = s.catalog.begin_transaction(s.catalog.table("t").id, "a slow load", 3600)
    job_id = start(s, ALTER)
    trigger = triggers.BoundaryTrigger(job_id)

    def cancel():
        sql(s, "CANCEL ALTER TABLE COLUMN FROM t")

    payload, latency = asyncio.run(_first_event(trigger, cancel, act_after=1))
    assert "cancelled" in payload["error"] and f"job {job_id}" in payload["error"], payload
    assert latency < 2.0, latency  # within a second of it, with room for a loaded machine
    s.catalog.abort_transaction(held, "done with it")


def test_the_resume_trigger_fires_once_resume_swaps_the_job(plugin_session):
    s = plugin_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, '1'), (2, '2')")
    sql(s, ALTER + ' PROPERTIES ("postpone_swap" = "true")')
    job_id = [j for j in s.catalog.jobs(s.catalog.table("t").id) if j.kind == "HEAVY"][-1].id
    assert heavy_steps.job_state(s.catalog, job_id) == "READY_TO_SWAP"
    trigger = triggers.ResumeTrigger(job_id)

    payload, latency = asyncio.run(_first_event(trigger, lambda: sql(s, "RESUME ALTER TABLE COLUMN FROM t"), act_after=1.5))
    assert payload == {"state": "FINISHED"}
    assert latency < 2.0, latency  # within a second of it, with room for a loaded machine


def test_the_turn_trigger_fires_within_a_second_of_the_tables_job_ending_and_keeps_the_runs_place(plugin_session):
    """A run behind an unfinished job (docs/airflow.md#runs-on-one-table): the trigger renews its
    place while it waits, fires within a second of the job's end (its cancel, here) and lets the
    run through; the trigger serializes to what it is rebuilt from."""
    from alterflow.catalog.alter_turns import AlterTurns

    s = plugin_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    held = s.catalog.begin_transaction(s.catalog.table("t").id, "a slow load", 3600)
    job_id = start(s, ALTER)
    request = AlterRequest("t", "ALTER TABLE t ADD COLUMN n INT").to_json()
    trigger = triggers.TurnTrigger(request, "2026-11-30T12:00:00")
    path, kwargs = trigger.serialize()
    assert path == "alterflow.airflow.triggers.TurnTrigger" and triggers.TurnTrigger(**kwargs).serialize() == (path, kwargs)

    def cancel():
        deadline = time.monotonic() + 20  # the trigger's first look puts the run in line (a moment, or more on a loaded host)
        while AlterTurns(s.catalog).line(s.catalog.table("t").id) != [request["request_id"]]:
            assert time.monotonic() < deadline, AlterTurns(s.catalog).line(s.catalog.table("t").id)
            time.sleep(0.1)
        sql(s, "CANCEL ALTER TABLE COLUMN FROM t")

    payload, latency = asyncio.run(_first_event(trigger, cancel, act_after=1.5))
    assert payload == {"go": True}
    # Within a glance (1 s) of it, plus the turn's own check (it plans the statement and takes the
    # table's line under a lock), with room for a loaded machine.
    assert latency < trigger.poll_seconds + 2.0, latency
    assert heavy_steps.job_state(s.catalog, job_id) == "CANCELLED"
    turn = AlterTurns(s.catalog).take("someone else", s.catalog.table("t").id, datetime(2026, 11, 30, 12, 0, 1), 60)
    assert (turn.go, turn.behind) == (False, f"run {request['request_id']} (let through, making its job)")
    s.catalog.abort_transaction(held, "done with it")


@pytest.mark.postgres
def test_a_trigger_waits_out_a_catalog_restart_and_fires_once_the_wait_is_over(private_pg, tmp_path, monkeypatch):
    """The catalog's PostgreSQL restarted (3 s refusing connections) while a BoundaryTrigger waits:
    it polls on instead of failing (a failed trigger costs the task a retry), and fires within a
    second of the last transaction below the boundary committing after the restart."""
    from alterflow.catalog.database import close_engine, upgrade_catalog
    from alterflow.engine.session import Session
    from alterflow.settings import Settings

    upgrade_catalog(private_pg.url)
    settings = Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_CATALOG_URL": private_pg.url})
    point_alterflow_env_at(settings, monkeypatch)
    s = Session(settings)
    try:
        sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
        sql(s, "INSERT INTO t VALUES (1, '1')")
        held = s.catalog.begin_transaction(s.catalog.table("t").id, "a slow load", 3600)
        job_id = start(s, ALTER)
        trigger = triggers.BoundaryTrigger(job_id)

        def restart_then_commit():
            private_pg.restart(down_s=3.0)
            s.catalog.commit_transaction(held)

        payload, latency = asyncio.run(_first_event(trigger, restart_then_commit, act_after=2))
        assert payload == {"done": True, "blocking": []}
        assert latency < 2.0, latency
        assert job(s, job_id).state == "RUNNING"
    finally:
        s.catalog.engine.dispose()
        close_engine(private_pg.url)


@pytest.mark.postgres
def test_a_trigger_whose_catalog_stays_away_past_its_patience_fails_for_the_tasks_retries(private_pg, tmp_path, monkeypatch):
    """No catalog server for longer than LOST_PATIENCE_S: the trigger raises the transient
    CatalogLost (Airflow fails the trigger and the task's retries apply), not an error event that
    would fail the task for good."""
    from alterflow.catalog.catalog_errors import CatalogLost
    from alterflow.catalog.database import close_engine, upgrade_catalog

    upgrade_catalog(private_pg.url)
    close_engine(private_pg.url)
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", private_pg.url)
    monkeypatch.setattr(triggers, "LOST_PATIENCE_S", 0.5)
    private_pg.stop()

    async def first_event():
        return await triggers.BoundaryTrigger(1, poll_seconds=0.1).run().__anext__()

    started = time.monotonic()
    with pytest.raises(CatalogLost) as lost:
        asyncio.run(first_event())
    assert lost.value.transient and 0.5 <= time.monotonic() - started < 10
