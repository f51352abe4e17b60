"""AlterflowSchemaChangeOperator: one ALTER as a task of a DAG of one's own (`dag.test()` of
tests/dags/door/door_dags.py's `door_alter`), through the schema-change DAG's steps, with the
catalog of a configured Airflow connection `alterflow_default` (the ALTERFLOW_* environment points
at another, empty catalog that nothing may touch): a lightweight change commits; a heavyweight one
waits deferred (its trigger reads the connection too) for a load below its boundary, rewrites the
table in the worker and swaps; each emits the table's schema-change event. A retried task (the same
task instance run again) finds its job instead of running the ALTER twice."""

from __future__ import annotations

import json
import pathlib
import types
from datetime import UTC, datetime

import pytest

import alterflow
from alterflow.airflow import tasks as task_bodies
from alterflow.airflow.operators import AlterflowSchemaChangeOperator
from alterflow.schema_change_events import SCHEMA_CHANGES_ALIAS
from alterflow.settings import Settings
from tests.support.dags import DOOR_DAGS, LoadAbortedOnceWaitedFor, add_bundles, alterflow_env, asset_events, load_dag_from, run_dag

T = "alterflow://default/t"


@pytest.fixture
def connected(monkeypatch, tmp_path, airflow_db):
    """The catalog of the connection alterflow_default, with `t`; the environment's is another."""
    add_bundles(monkeypatch, door=DOOR_DAGS)
    alterflow_env(monkeypatch, tmp_path / "decoy")
    url, warehouse = f"sqlite:///{tmp_path / 'catalog.db'}", tmp_path / "warehouse"
    extra = {"catalog_url": url, "warehouse": str(warehouse)}
    monkeypatch.setenv("AIRFLOW_CONN_ALTERFLOW_DEFAULT", json.dumps({"conn_type": "alterflow", "extra": extra}))
    af = alterflow.connect(catalog_url=url, warehouse=warehouse)
    af.sql("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    af.sql("INSERT INTO t VALUES (1, '10'), (2, '20'), (3, '30')")
    yield af
    af.close()


def environment_untouched() -> bool:
    """Nothing went to the environment's catalog or warehouse (neither even exists)."""
    decoy = Settings.from_env()
    return not pathlib.Path(decoy.catalog_url.removeprefix("sqlite:///")).exists() and not decoy.warehouse.exists()


def test_a_light_change_commits_as_one_task_and_emits_its_event(connected):
    before = asset_events(T)
    state, tasks, run = run_dag(load_dag_from(DOOR_DAGS, "door_alter"), {"statement": "ALTER TABLE t ADD COLUMN n INT DEFAULT 7"})
    assert state == "success", tasks
    [job] = connected.table("t").jobs()
    assert (job.kind, job.state, job.to_version) == ("LIGHT", "FINISHED", 2)
    assert job.request_id == task_bodies.task_request_id("door_alter", run.run_id, "alter")
    assert asset_events(T)[len(before) :] == [
        (
            {
                "event": "schema_change",
                "from_version": 1,
                "to_version": 2,
                "statement": "ALTER TABLE t ADD COLUMN n INT DEFAULT 7",
                "kind": "LIGHT",
                "job_id": job.id,
            },
            run.run_id,
        )
    ]
    assert environment_untouched()


def test_a_heavy_change_waits_deferred_for_a_load_then_rewrites_and_swaps(connected):
    catalog = connected.catalog
    held = catalog.begin_transaction(catalog.table("t").id, "a slow load", 3600)
    before = asset_events(T)
    with LoadAbortedOnceWaitedFor(catalog, catalog.table("t").id, held) as watcher:
        state, tasks, run = run_dag(load_dag_from(DOOR_DAGS, "door_alter"), {"statement": "ALTER TABLE t MODIFY COLUMN v INT"})

    assert state == "success", tasks
    assert "waiting for transactions" in watcher.msg, watcher.msg  # it deferred while the load was open
    [job] = connected.table("t").jobs()
    assert (job.kind, job.state, job.from_version, job.to_version) == ("HEAVY", "FINISHED", 1, 2)
    assert connected.table("t").scan(columns=["id", "v"]).to_arrow().sort_by("id").to_pylist() == [
        {"id": 1, "v": 10},
        {"id": 2, "v": 20},
        {"id": 3, "v": 30},
    ]
    [(extra, source)] = asset_events(T)[len(before) :]
    assert source == run.run_id and (extra["event"], extra["kind"], extra["job_id"], extra["to_version"]) == (
        "schema_change",
        "HEAVY",
        job.id,
        2,
    )
    assert environment_untouched()


class OutletEvents(dict):
    """The alias events an execute() adds, as Airflow's accessor takes them."""

    def __missing__(self, key):
        added = self[key] = types.SimpleNamespace(events=[])
        added.add = lambda asset, extra=None: added.events.append((asset.uri, extra))
        return added


def context_of(run_id: str) -> dict:
    """What the operator reads of Airflow's context: the task instance, the run (its id, and when it
    was triggered: the order of its turn on the table) and the outlet events."""
    ti = types.SimpleNamespace(dag_id="door_alter", run_id=run_id, task_id="alter", map_index=-1)
    dag_run = types.SimpleNamespace(run_id=run_id, run_after=datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
    return {"ti": ti, "run_id": run_id, "dag_run": dag_run, "outlet_events": OutletEvents()}


@pytest.mark.parametrize("statement", ["ALTER TABLE t ADD COLUMN n INT", "ALTER TABLE t MODIFY COLUMN v INT"])
def test_a_retried_task_finds_its_job_and_changes_nothing_twice(connected, statement):
    operator = AlterflowSchemaChangeOperator(task_id="alter", table="t", statement=statement)
    first = operator.execute(context := context_of("manual__twice"))
    versions = [v.version for v in connected.table("t").versions()]
    again = operator.execute(retried := context_of("manual__twice"))

    assert (again["id"], again["state"]) == (first["id"], "FINISHED")
    assert [v.version for v in connected.table("t").versions()] == versions == [1, 2]
    assert len(connected.table("t").jobs()) == 1
    for ctx in (context, retried):  # each try that succeeds emits the event (Airflow records the successful one)
        [(uri, extra)] = ctx["outlet_events"][next(iter(ctx["outlet_events"]))].events
        assert uri == T and extra["job_id"] == first["id"] and extra["event"] == "schema_change"
    assert [o.name for o in operator.outlets] == [SCHEMA_CHANGES_ALIAS]
