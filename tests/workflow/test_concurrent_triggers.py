"""One job per table under concurrent triggers: two DAG runs (or CLI runs) of one table validate
at the same moment, both see no job, then run their next step at once, each on its own engine
(its own connections, as two Airflow workers have). Exactly one gets its job; the other is
refused with one line and leaves nothing behind. On SQLite and on PostgreSQL."""

from __future__ import annotations

import threading

import pytest

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.database import make_engine
from alterflow.catalog.errors import ConcurrentChange
from alterflow.cli.session import Session
from alterflow.planner import AlterRejected
from alterflow.workflow import heavy_steps, steps
from alterflow.workflow.request import AlterRequest

HEAVY_A = "ALTER TABLE t MODIFY COLUMN v INT"
HEAVY_B = "ALTER TABLE t ORDER BY (v)"
LIGHT = "ALTER TABLE t ADD COLUMN n{round} INT DEFAULT 0"  # a new column each round


def race(catalog_url: str, statements: list[str]) -> dict[str, str]:
    """Validate every statement first, then run each one's next step (commit or start) at once."""
    barrier = threading.Barrier(len(statements))
    outcomes: dict[str, str] = {}

    def attempt(statement: str) -> None:
        mine = Catalog(engine=make_engine(catalog_url))
        try:
            request = AlterRequest("t", statement)
            validated = steps.validate(mine, request)
            barrier.wait(30)
            try:
                if validated.kind == "LIGHT":
                    steps.commit(mine, request, validated)
                else:
                    heavy_steps.start(mine, request, validated)
                outcomes[statement] = "ok"
            except (ConcurrentChange, AlterRejected) as exc:
                assert "\n" not in str(exc)
                outcomes[statement] = str(exc)
        finally:
            mine.engine.dispose()

    threads = [threading.Thread(target=attempt, args=(s,)) for s in statements]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(outcomes) == len(statements), outcomes
    return outcomes


@pytest.mark.parametrize("statements", [[HEAVY_A, HEAVY_B], [LIGHT, HEAVY_A]], ids=["heavy-heavy", "light-heavy"])
def test_two_triggers_at_once_make_one_job(settings, statements):
    session = Session(settings)
    list(session.run("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"))
    for round_number in range(3):  # a few rounds: the winner differs from round to round
        info = session.catalog.table("t")
        if session.catalog.active_job(info.id) is not None:  # the last round's heavy winner
            list(session.run("CANCEL ALTER TABLE COLUMN FROM t"))
        before = session.catalog.table("t").current_version
        jobs_before = len(session.catalog.jobs(info.id))

        light = LIGHT.format(round=round_number)
        outcomes = race(settings.catalog_url, [light if s == LIGHT else s for s in statements])

        won = [s for s, outcome in outcomes.items() if outcome == "ok"]
        assert len(won) == 1, outcomes
        lost = next(outcome for s, outcome in outcomes.items() if s != won[0])
        assert lost.startswith("ALTER TABLE t: ") and ("one job per table" in lost or "no longer current" in lost), lost
        new_jobs = session.catalog.jobs(info.id)[jobs_before:]
        assert [j.statement for j in new_jobs] == won, "the refused run left a job behind"
        after = session.catalog.table("t").current_version
        assert after == (before + 1 if won[0] == light else before), "only a light winner moves the version"
