"""Every finished ALTER emits an asset event on its table's asset (docs/airflow.md):
`alterflow://<catalog name>/<table>`, through the `done` task's asset alias, with from/to version,
statement, kind and job id in its extra; a cancelled job emits nothing. The example downstream DAG
is scheduled on one table's asset."""

from __future__ import annotations

import types

import pytest

from alterflow.catalog.first_asset_events import FirstAssetEvents
from alterflow.catalog.models import FirstAssetEventRow
from alterflow.engine.session import Session
from tests.support import REPO
from tests.support.dags import SCHEMA_CHANGE, alterflow_env, asset_events, jobs, load_dag, run_dag, sql

pytestmark = pytest.mark.spark


@pytest.fixture
def alterflow(monkeypatch, tmp_path, airflow_db, spark):
    session = Session(alterflow_env(monkeypatch, tmp_path))
    sql(session, "CREATE TABLE Orders (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(session, "INSERT INTO Orders VALUES (1, '10'), (2, '20')")
    return session


def test_a_light_and_a_heavy_alter_each_emit_one_event_on_the_tables_asset(alterflow, monkeypatch):
    uri = "alterflow://default/orders"
    before = asset_events(uri)
    waits = []
    wait_s = FirstAssetEvents.wait_s

    def recorded(first, uri, spacing_s=None, **kwargs):  # what each event would wait with a 10-minute spacing; no sleep
        waits.append(wait_s(first, uri, 600.0, **kwargs))
        return 0.0

    monkeypatch.setattr(FirstAssetEvents, "wait_s", recorded)
    state, tasks, light = run_dag(load_dag(SCHEMA_CHANGE), {"table": "orders", "statement": "ALTER TABLE orders ADD COLUMN n INT"})
    assert state == "success", tasks
    state, tasks, heavy = run_dag(load_dag(SCHEMA_CHANGE), {"table": "orders", "statement": "ALTER TABLE orders MODIFY COLUMN v INT"})
    assert state == "success" and (tasks["validate"], tasks["rewrite_in_worker"]) == ("success", "skipped"), tasks  # in validate
    first, second = jobs(alterflow, "orders")
    assert asset_events(uri)[len(before) :] == [
        (
            {
                "event": "schema_change",
                "from_version": 1,
                "to_version": 2,
                "statement": "ALTER TABLE orders ADD COLUMN n INT",
                "kind": "LIGHT",
                "job_id": first.id,
            },
            light.run_id,
        ),
        (
            {
                "event": "schema_change",
                "from_version": 2,
                "to_version": 3,
                "statement": "ALTER TABLE orders MODIFY COLUMN v INT",
                "kind": "HEAVY",
                "job_id": second.id,
            },
            heavy.run_id,
        ),
    ]
    # The heavy ALTER's event came within the spacing after the table's first, but the task that
    # emitted the first had succeeded (Airflow made the asset then): it would not have waited.
    assert waits == [0.0, 0.0], waits
    with alterflow.catalog.db_session() as s:
        row = s.get(FirstAssetEventRow, uri)
        assert (row.dag_id, row.run_id, row.task_id) == (SCHEMA_CHANGE, light.run_id, "validate")


def test_a_cancelled_job_emits_nothing(alterflow):
    uri = "alterflow://default/orders"
    sql(alterflow, "INSERT INTO orders VALUES (3, 'not a number')")
    before = asset_events(uri)
    state, tasks, _run = run_dag(load_dag(SCHEMA_CHANGE), {"table": "orders", "statement": "ALTER TABLE orders MODIFY COLUMN v INT"})
    assert state == "failed" and tasks["done"] != "success", tasks
    [job] = jobs(alterflow, "orders")
    assert job.state == "CANCELLED"
    assert asset_events(uri) == before


def test_the_catalog_name_is_the_uris_authority(alterflow, monkeypatch):
    monkeypatch.setenv("ALTERFLOW_CATALOG_NAME", "sales")
    state, tasks, run = run_dag(load_dag(SCHEMA_CHANGE), {"table": "orders", "statement": "ALTER TABLE orders ADD COLUMN n INT"})
    assert state == "success", tasks
    assert [run_id for _extra, run_id in asset_events("alterflow://sales/orders")] == [run.run_id]


def test_the_example_downstream_dag_is_scheduled_on_one_tables_asset_and_prints_its_schema(alterflow, capsys):
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "examples"))
    assert not bag.import_errors, bag.import_errors
    dag = bag.dags["orders_schema_changed"]
    assert [asset.uri for asset in dag.timetable.asset_condition.objects] == ["alterflow://default/orders"]
    # Its task, given what the scheduler hands it: the events of the ALTER that triggered the run.
    extra = {
        "event": "schema_change",
        "from_version": 1,
        "to_version": 2,
        "statement": "ALTER TABLE orders ADD COLUMN n INT",
        "kind": "LIGHT",
        "job_id": 1,
    }
    sql(alterflow, extra["statement"])
    (orders,) = dag.timetable.asset_condition.objects
    described = dag.get_task("print_new_schema").python_callable(triggering_asset_events={orders: [types.SimpleNamespace(extra=extra)]})
    assert [row[0] for row in described] == ["id", "v", "n"]
    out = capsys.readouterr().out
    assert "orders: schema version 1 -> 2 (LIGHT, job 1): ALTER TABLE orders ADD COLUMN n INT" in out
    assert "| n " in out  # DESCRIBE orders, as a table


def test_an_unanswered_question_about_the_first_events_task_waits_out_the_spacing(monkeypatch):
    """Airflow asked whether the task that emitted a table's first event succeeded, and not
    answering (an API error): no, with one warning line, so the event waits as it always could."""
    from alterflow.airflow import tasks
    from alterflow.catalog.first_asset_events import EmittingTask

    class Unanswered:
        def get_task_states(self, **_kwargs):
            raise RuntimeError("503 Service Unavailable")

    class Answered:
        def get_task_states(self, dag_id, task_ids, run_ids):
            return {run_ids[0]: {task_ids[0]: "success"}}

    warnings = []
    monkeypatch.setattr(tasks, "log", types.SimpleNamespace(warning=lambda message, *args: warnings.append(message % args)))
    first = EmittingTask(SCHEMA_CHANGE, "run_1", "validate")
    assert tasks._task_succeeded(Answered(), first) is True
    assert tasks._task_succeeded(Unanswered(), first) is False
    assert warnings == [f"could not ask Airflow whether {first} succeeded (503 Service Unavailable): the event waits out the spacing"]
