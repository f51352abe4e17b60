"""Concurrent triggers on one table: DAG runs (or CLI runs) validate at the same moment, then run
their next step (commit or start) at once, each on its own engine (its own connections, as Airflow
workers have). One job per table: of two heavyweight changes one gets its job, the other is
refused with one line and leaves nothing behind. A change that finds the table moved on (another
committed first) is planned again on the new version and applies if it still does, unless it
names `expected_version` (docs/semantics.md#concurrent-changes). On SQLite and on PostgreSQL."""

from __future__ import annotations

import threading

import pytest

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.catalog_errors import ConcurrentChange
from alterflow.catalog.database import make_engine
from alterflow.engine.session import Session
from alterflow.planner import AlterRejected
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest

HEAVY_A = "ALTER TABLE t MODIFY COLUMN v INT"
HEAVY_B = "ALTER TABLE t ORDER BY (v)"
LIGHT = "ALTER TABLE t ADD COLUMN n{round} INT DEFAULT 0"  # a new column each round


def race(catalog_url: str, statements: list[str], properties: dict[str, str] | None = None) -> dict[str, str]:
    """Validate every statement first, then run each one's next step (commit or start) at once."""
    barrier = threading.Barrier(len(statements))
    outcomes: dict[str, str] = {}

    def attempt(statement: str) -> None:
        mine = Catalog(engine=make_engine(catalog_url))
        try:
            request = AlterRequest("t", statement, dict(properties or {}))
            validated = alter_steps.validate(mine, request)
            barrier.wait(30)
            try:
                if validated.kind == "LIGHT":
                    alter_steps.commit(mine, request, validated)
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
        new_jobs = session.catalog.jobs(info.id)[jobs_before:]
        assert sorted(j.statement for j in new_jobs) == sorted(won), "a refused run left a job behind"
        after = session.catalog.table("t").current_version
        if len(won) == 2:  # the light change committed first; the heavy one was planned again on its version
            assert statements == [LIGHT, HEAVY_A] and new_jobs[0].statement == light, outcomes
            assert (after, new_jobs[1].from_version) == (before + 1, before + 1)
            continue
        assert len(won) == 1, outcomes
        lost = next(outcome for s, outcome in outcomes.items() if s != won[0])
        assert lost.startswith("ALTER TABLE t: ") and "one job per table" in lost, lost
        assert after == (before + 1 if won[0] == light else before), "only a light winner moves the version"


FIVE = [f"ALTER TABLE t ADD COLUMN c{n} INT DEFAULT {n}" for n in range(5)]


def test_five_add_columns_at_once_all_commit_one_version_each(settings):
    """As Iceberg retries a commit on the new metadata: each loser plans again and commits."""
    session = Session(settings)
    list(session.run("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"))
    before = session.catalog.table("t").current_version
    outcomes = race(settings.catalog_url, FIVE)
    assert set(outcomes.values()) == {"ok"}, outcomes
    info = session.catalog.table("t")
    assert info.current_version == before + 5
    jobs = session.catalog.jobs(info.id)[-5:]
    assert sorted(j.to_version for j in jobs) == list(range(before + 1, before + 6))
    current = next(v for v in session.catalog.schema_versions(info.id) if v.version == info.current_version)
    columns = {c.name for c in current.columns}
    assert columns == {"id", "v", *(f"c{n}" for n in range(5))}


def test_with_expected_version_the_loser_fails_and_changes_nothing(settings):
    session = Session(settings)
    list(session.run("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"))
    before = session.catalog.table("t").current_version
    outcomes = race(settings.catalog_url, FIVE[:2], {"expected_version": str(before)})
    lost = [outcome for outcome in outcomes.values() if outcome != "ok"]
    assert (
        len(lost) == 1
        and lost[0]
        == f"ALTER TABLE t: the table changed since this statement was planned (version {before} is no longer current); nothing was applied"
    ), outcomes
    assert session.catalog.table("t").current_version == before + 1


def test_a_loser_that_no_longer_applies_is_refused_by_its_new_plan(settings):
    """Both add the same column: the second, planned again, finds it there and says so."""
    session = Session(settings)
    list(session.run("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"))
    before = session.catalog.table("t").current_version
    outcomes = race(settings.catalog_url, ["ALTER TABLE t ADD COLUMN c INT", "ALTER TABLE t ADD COLUMN c INT DEFAULT 1"])
    lost = [outcome for outcome in outcomes.values() if outcome != "ok"]
    assert lost == ["ALTER TABLE t: cannot add column c: duplicate column name (column c already exists)"], outcomes
    assert session.catalog.table("t").current_version == before + 1
