"""`alterflow.workflow.alter_driver`: the settings choose the driver in one place; each door's
ALTER goes through it. In this process: a lightweight change is committed by `start` and `run`,
a rejected one raises before anything changes. Through Airflow: the request runs under a DAG
run's id, and a rejected statement is refused before Airflow is contacted (its URL leads nowhere
here). The DAG runs themselves are driven in tests/e2e/test_airflow_live.py."""

from __future__ import annotations

import pytest

from alterflow.catalog.states import JobKind, JobState
from alterflow.engine.session import Session
from alterflow.planner.rejections import AlterRejected
from alterflow.settings import Settings
from alterflow.workflow.alter_driver import AirflowAlterDriver, InProcessAlterDriver, alter_driver
from tests.support.ports import free_port

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"


@pytest.fixture
def session(tmp_path):
    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home")}))
    list(session.run(TABLE))
    return session


def versions(session: Session) -> tuple[int, list]:
    info = session.catalog.table("t")
    return info.current_version, session.catalog.jobs(info.id)


def test_the_settings_choose_the_driver(session, tmp_path):
    here = alter_driver(session.catalog, session.warehouse, session.settings)
    assert type(here) is InProcessAlterDriver and not here.via_airflow
    settings = Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_AIRFLOW_URL": "http://127.0.0.1:1"})
    there = alter_driver(session.catalog, session.warehouse, settings)
    assert type(there) is AirflowAlterDriver and there.via_airflow
    assert there.request("t", "ALTER TABLE t ADD COLUMN n INT").request_id.startswith("alterflow__")
    assert there.request("t", "ALTER TABLE t ADD COLUMN n INT", request_id="mine").request_id == "mine"


def test_start_commits_a_lightweight_change_and_leaves_nothing_to_finish(session):
    driver = session.alter_driver()
    started = driver.start(driver.request("t", "ALTER TABLE t ADD COLUMN n INT"))
    assert started.finish is None and not started.via_airflow
    job = session.catalog.job_by_request(started.request.request_id)
    assert job.id == started.job_id and job.kind == JobKind.LIGHT and job.state == JobState.FINISHED
    assert session.catalog.table("t").current_version == 2


def test_run_of_a_request_already_run_returns_its_job(session):
    driver = session.alter_driver()
    request = driver.request("t", "ALTER TABLE t ADD COLUMN n INT")
    first = driver.run(request)
    assert driver.run(request).id == first.id and session.catalog.table("t").current_version == 2


@pytest.mark.parametrize("through_airflow", [False, True])
def test_a_rejected_change_raises_before_anything_changes(session, tmp_path, through_airflow):
    env = {"ALTERFLOW_HOME": str(tmp_path / "home")}
    if through_airflow:  # nothing listens there: a refusal must come before any request to it
        env["ALTERFLOW_AIRFLOW_URL"] = f"http://127.0.0.1:{free_port()}"
    driver = alter_driver(session.catalog, session.warehouse, Settings.from_env(env))
    before = versions(session)
    with pytest.raises(AlterRejected):
        driver.start(driver.request("t", "ALTER TABLE t DROP COLUMN id"))
    assert versions(session) == before


def test_a_statement_is_parsed_once_in_this_process(session, monkeypatch):
    """`alterflow sql`'s ALTER and `Table.alter`: the steps plan the statement the door parsed;
    only a request that arrives as text (JSON, a DAG run's conf) is parsed again."""
    import alterflow
    from alterflow.workflow import alter_steps
    from alterflow.workflow.request import AlterRequest

    def refuse(text):
        raise AssertionError(f"parsed again: {text}")

    monkeypatch.setattr(alter_steps, "parse_statements", refuse)
    list(session.run("ALTER TABLE t ADD COLUMN n INT"))
    with alterflow.connect(env={"ALTERFLOW_HOME": str(session.settings.home)}) as af:
        af.table("t").alter("ADD COLUMN m INT").wait()
    info = session.catalog.table("t")
    assert [c.name for c in session.catalog.schema_version(info.id, info.current_version).columns] == ["id", "v", "n", "m"]
    arrived = AlterRequest.from_json(session.alter_driver().request("t", "ALTER TABLE t ADD COLUMN o INT").to_json())
    assert arrived.parsed is None
    with pytest.raises(AssertionError, match="parsed again"):
        alter_steps.parse_alter(arrived)
