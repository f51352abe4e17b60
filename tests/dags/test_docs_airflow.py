"""docs/python.md's Airflow examples run as they are written: the first block, a DAG file, in
`dag.test()` from a DAG folder of its own (a load from an upstream task's DataFrame, then a
heavyweight ALTER); the second, the listener, parsed and asked about a load and a schema change."""

from __future__ import annotations

import re
import types

from alterflow.engine.session import Session
from tests.support import REPO
from tests.support.dags import add_bundles, alterflow_env, asset_events, load_dag_from, run_dag, sql

DOC = REPO / "docs" / "python.md"


def airflow_blocks() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("\n## Airflow")
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start : end if end != -1 else len(text)], re.S)


def test_the_airflow_examples_of_the_docs_run(monkeypatch, tmp_path, airflow_db):
    pipeline, listener = airflow_blocks()[:2]
    folder = tmp_path / "docs-dags"
    folder.mkdir()
    (folder / "orders_pipeline.py").write_text(pipeline)
    (folder / "orders_loaded.py").write_text(listener)
    add_bundles(monkeypatch, docs=folder)
    monkeypatch.delenv("AIRFLOW_CONN_ALTERFLOW_DEFAULT", raising=False)
    session = Session(alterflow_env(monkeypatch, tmp_path))
    sql(session, "CREATE TABLE orders (id INT NOT NULL, amount STRING, PRIMARY KEY (id))")
    before = asset_events("alterflow://default/orders")

    state, tasks, run = run_dag(load_dag_from(folder, "orders_pipeline"), {})

    assert state == "success", tasks
    events = [extra for extra, source in asset_events("alterflow://default/orders")[len(before) :] if source == run.run_id]
    assert [(e["event"], e["kind"]) for e in events] == [("load", "load"), ("schema_change", "HEAVY")], events
    assert {row[0]: row[1] for row in sql(session, "DESCRIBE orders")}["amount"] == "INT"

    dag = load_dag_from(folder, "orders_loaded")
    (orders,) = dag.timetable.asset_condition.objects
    first, rows = dag.get_task("a_load_landed").python_callable, dag.get_task("rows_loaded").python_callable
    load, change = types.SimpleNamespace(extra=events[0]), types.SimpleNamespace(extra=events[1])
    assert first(triggering_asset_events={orders: [change]}) is False
    assert first(triggering_asset_events={orders: [change, load]}) is True
    assert rows(triggering_asset_events={orders: [change, load]}) == 3
