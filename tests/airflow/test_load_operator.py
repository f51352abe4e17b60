"""AlterflowLoadOperator in a DAG of one's own (`dag.test()`, tests/dags/door/door_dags.py): a
file's rows and an upstream task's DataFrame and rows each loaded once, each load an event on the
table's asset with `"event": "load"`; a retried task writes nothing twice; bad input fails the
task with one line and writes nothing. The catalog comes from the ALTERFLOW_* environment here
(no Airflow connection alterflow_default: the hook's fallback)."""

from __future__ import annotations

import collections
import types

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk.exceptions import AirflowFailException

import alterflow
from alterflow.airflow import load_tasks
from alterflow.airflow.operators import AlterflowLoadOperator
from alterflow.engine.session import Session
from tests.support.catalog_rows import transactions
from tests.support.dags import DOOR_DAGS, EXAMPLE_DAGS, add_bundles, alterflow_env, asset_events, load_dag_from, run_dag, sql

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"
T = "alterflow://default/t"


@pytest.fixture
def alterflow_t(monkeypatch, tmp_path, airflow_db):
    add_bundles(monkeypatch, door=DOOR_DAGS, examples=EXAMPLE_DAGS)
    monkeypatch.delenv("AIRFLOW_CONN_ALTERFLOW_DEFAULT", raising=False)
    session = Session(alterflow_env(monkeypatch, tmp_path))
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES (1, 'a')")
    return session


def rows_of_t() -> list[tuple]:
    with alterflow.connect() as af:
        scanned = af.table("t").scan(columns=["id", "v"]).to_arrow().to_pylist()
    return sorted((r["id"], r["v"]) for r in scanned)


def test_a_file_a_dataframe_and_rows_are_each_loaded_once_with_a_load_event(alterflow_t, tmp_path):
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": list(range(100, 150)), "v": [f"p{n}" for n in range(50)]}), path)
    before = asset_events(T)

    state, tasks, run = run_dag(load_dag_from(DOOR_DAGS, "door_loads"), {"path": str(path)})

    assert state == "success", tasks
    expected = [(1, "a")] + [(n, f"p{n - 100}") for n in range(100, 150)] + [(10, "x"), (11, "y"), (12, None), (20, "r"), (21, "s")]
    assert rows_of_t() == sorted(expected)
    committed = [(txn, label) for txn, state, label in transactions(alterflow_t, "t") if state == "COMMITTED"]
    events = [extra for extra, source in asset_events(T)[len(before) :] if source == run.run_id]
    assert sorted((e["rows"], e["transaction"]) for e in events) == sorted(
        (rows, txn)
        for txn, label in committed
        for task, rows in (("load_path", 50), ("load_frame", 3), ("load_rows", 2))
        if label.endswith(f" {task}")
    )
    assert all(e["event"] == "load" and e["kind"] == "load" and e["table"] == "t" for e in events), events
    labels = {label for _txn, label in committed}
    assert {f"airflow door_loads {run.run_id} {task}" for task in ("load_path", "load_frame", "load_rows")} <= labels


def context_of(task_id: str, run_id: str = "manual__retried") -> dict:
    """What an operator's execute() reads of its context: the task instance and the outlet events."""
    ti = types.SimpleNamespace(dag_id="door_loads", run_id=run_id, task_id=task_id, map_index=-1)
    return {"ti": ti, "outlet_events": collections.defaultdict(lambda: types.SimpleNamespace(extra={}))}


def test_a_retried_load_task_finds_its_earlier_load_and_writes_nothing_again(alterflow_t):
    """The second try of the task instance (its first try committed, then was lost before Airflow
    recorded it) loads nothing; an earlier try still open in PREPARE is aborted, not joined."""
    operator = AlterflowLoadOperator(task_id="load_rows", table="t", data=[{"id": 7, "v": "seven"}])
    label = load_tasks.task_label("door_loads", "manual__retried", "load_rows")
    catalog = alterflow_t.catalog
    stale = catalog.begin_transaction(catalog.table("t").id, label, 3600)  # a lost try's open load

    first = operator.execute(context := context_of("load_rows"))
    assert context["outlet_events"][operator.asset].extra == first
    again = operator.execute(context_of("load_rows"))

    assert again == first and first["rows"] == 1 and first["event"] == "load"
    assert rows_of_t() == [(1, "a"), (7, "seven")]
    mine = [(txn, state) for txn, state, lab in transactions(alterflow_t, "t") if lab == label]
    assert mine == [(stale, "ABORTED"), (first["transaction"], "COMMITTED")]


BAD = [
    ("unknown_table", "unknown table no_such_table"),
    ("missing_path", "does not exist"),
    ("extra_column", "unknown column colour"),
]


def test_bad_input_fails_each_load_task_with_its_line_and_writes_nothing(alterflow_t, tmp_path, capfd):
    before = (rows_of_t(), transactions(alterflow_t, "t"), asset_events(T))
    missing = tmp_path / "not-there.parquet"

    state, tasks, _run = run_dag(load_dag_from(DOOR_DAGS, "door_bad_loads"), {"missing": str(missing)})

    printed = capfd.readouterr().out
    assert state == "failed", tasks
    for task_id, message in BAD:
        assert tasks[task_id] == "failed", tasks
        assert message in printed, (task_id, printed[-3000:])
    assert (rows_of_t(), transactions(alterflow_t, "t"), asset_events(T)) == before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"table": "no_such_table", "data": [{"id": 1}]}, "unknown table no_such_table"),
        ({"table": "t", "path": "/nonexistent/in.parquet"}, "/nonexistent/in.parquet does not exist"),
        ({"table": "t", "path": "   "}, "path must be a file or folder path"),
        ({"table": "t", "data": [{"id": 30, "v": "z", "colour": "red"}]}, "unknown column colour"),
        ({"table": "t", "data": [{"id": "thirty", "v": "z"}]}, "thirty"),
        ({"table": "t", "data": [{"id": 1}, {"id": "x"}]}, "does not convert to Arrow"),
        ({"table": "t", "data": None}, "the upstream task returned nothing"),
        ({"table": "t", "data": {"id": 3}}, "maps each column name to a list"),
        ({"table": "t", "data": 42}, "not int"),
        ({"table": "t", "data": [{"id": 1}], "engine": "turbo"}, "unknown engine 'turbo'"),
    ],
)
def test_each_refusal_is_one_line_and_writes_nothing(alterflow_t, kwargs, message):
    before = (rows_of_t(), transactions(alterflow_t, "t"))
    with pytest.raises(AirflowFailException) as raised:
        load_tasks.load(label="airflow door_loads manual__bad load", **kwargs)
    text = str(raised.value)
    assert message in text and "\n" not in text and len(text) <= 300, text
    assert (rows_of_t(), transactions(alterflow_t, "t")) == before


def test_the_operator_wants_a_path_or_data_and_a_table_name():
    with pytest.raises(load_tasks.BadLoadInput, match="give path or data"):
        AlterflowLoadOperator(task_id="both", table="t", path="/x", data=[{"id": 1}])
    with pytest.raises(load_tasks.BadLoadInput, match="give path or data"):
        AlterflowLoadOperator(task_id="neither", table="t")
    with pytest.raises(alterflow.UserError, match="names match"):
        AlterflowLoadOperator(task_id="bad_name", table="t; DROP TABLE t", path="/x")
    operator = AlterflowLoadOperator(task_id="ok", table="Orders", path="/x", catalog_name="sales")
    assert [o.uri for o in operator.outlets] == ["alterflow://sales/orders"]


def test_the_example_listener_goes_on_for_loads_only(monkeypatch, airflow_db):
    add_bundles(monkeypatch, examples=EXAMPLE_DAGS)
    dag = load_dag_from(EXAMPLE_DAGS, "alterflow_example_sales_loaded")
    (sales,) = dag.timetable.asset_condition.objects
    assert sales.uri == "alterflow://default/alterflow_example_sales"
    first = dag.get_task("a_load_landed").python_callable
    change = types.SimpleNamespace(extra={"event": "schema_change", "kind": "HEAVY", "from_version": 1, "to_version": 2})
    old_change = types.SimpleNamespace(extra={"kind": "LIGHT", "from_version": 2, "to_version": 3})  # before events said which
    load = types.SimpleNamespace(extra={"event": "load", "kind": "load", "table": "alterflow_example_sales", "rows": 5, "transaction": 9})
    assert first(triggering_asset_events={sales: [change, old_change]}) is False
    assert first(triggering_asset_events={sales: [change, load]}) is True
    counted = dag.get_task("count_loaded_rows").python_callable(triggering_asset_events={sales: [change, load, load]})
    assert counted == {"loads": 2, "rows": 10, "transactions": [9, 9]}


def test_the_example_dag_loads_while_a_heavy_alter_runs_every_row_once(alterflow_t, tmp_path):
    """examples/dags/load_during_alter.py in dag.test(): its tasks run one at a time here (under a
    scheduler the loads and the ALTER run side by side, as the live test runs them)."""
    sales = "alterflow://default/alterflow_example_sales"
    before = asset_events(sales)
    dag = load_dag_from(EXAMPLE_DAGS, "alterflow_example_load_during_alter")

    state, tasks, run = run_dag(dag, {"rows": 300, "drop_folder": str(tmp_path)})

    assert state == "success", tasks
    counted = run.get_task_instance("count_rows").xcom_pull(task_ids="count_rows")
    assert counted == {"rows": 602, "distinct_ids": 602, "amount": "INT"}
    events = [extra for extra, source in asset_events(sales)[len(before) :] if source == run.run_id]
    assert sorted((e["event"], e["kind"], e.get("rows")) for e in events) == [
        ("load", "load", 300),
        ("load", "load", 300),
        ("schema_change", "HEAVY", None),
    ]


def test_a_path_through_the_spark_engine_is_loaded_once(alterflow_t, tmp_path, spark, capsys):
    """engine="spark": the same load through Spark's tasks (the test run's SparkSession); a retry
    with the same task-instance label finds it and writes nothing again."""
    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({"id": list(range(1000, 3000)), "v": [f"s{n}" for n in range(2000)]}), path)
    label = load_tasks.task_label("door_loads", "manual__spark", "load_path")

    extra = load_tasks.load("t", label, path=str(path), engine="spark")
    again = load_tasks.load("t", label, path=str(path), engine="spark")

    assert (extra["event"], extra["rows"]) == ("load", 2000) and again == extra
    assert "an earlier try of this task loaded it" in capsys.readouterr().out
    got = rows_of_t()
    assert len(got) == 2001 and got[-1] == (2999, "s1999")
    assert [label for _txn, state, label in transactions(alterflow_t, "t") if state == "COMMITTED"].count(label) == 1
