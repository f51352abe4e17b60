"""The schema-change DAG's task bodies read their alterflow connection once per task try
(`AlterflowHook.get_settings`): a light ALTER's `validate` opens the catalog seven times, and each
reading of the connection is a few round trips through the task's supervisor. A new try reads it
again, so a connection changed between two runs is the one the second run uses; outside a task
every call reads."""

from __future__ import annotations

import json

import pytest

import alterflow
from alterflow.airflow import tasks as task_bodies
from alterflow.airflow.hooks import AlterflowHook
from tests.support.dags import SCHEMA_CHANGE, add_bundles, alterflow_env, load_dag, load_dag_from, run_dag


def _connection(monkeypatch, url: str, warehouse) -> None:
    extra = {"catalog_url": url, "warehouse": str(warehouse)}
    monkeypatch.setenv("AIRFLOW_CONN_ALTERFLOW_DEFAULT", json.dumps({"conn_type": "alterflow", "extra": extra}))


@pytest.fixture
def readings(monkeypatch, tmp_path, airflow_db):
    """Two catalogs, each with a table `t`; the connection alterflow_default names the first. Yields
    the list each reading of an alterflow connection appends its catalog URL to, and both catalogs."""
    alterflow_env(monkeypatch, tmp_path / "environment")
    catalogs = []
    for name in ("first", "second"):
        url, warehouse = f"sqlite:///{tmp_path / name}.db", tmp_path / f"{name}-warehouse"
        with alterflow.connect(catalog_url=url, warehouse=warehouse) as af:
            af.sql("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
        catalogs.append((url, warehouse))
    _connection(monkeypatch, *catalogs[0])
    seen = []
    read_settings = AlterflowHook._read_settings

    def noted(hook):
        settings = read_settings(hook)
        seen.append(settings.catalog_url)
        return settings

    monkeypatch.setattr(AlterflowHook, "_read_settings", noted)
    return seen, catalogs


def _versions(url: str, warehouse) -> list[int]:
    with alterflow.connect(catalog_url=url, warehouse=warehouse) as af:
        return [version.version for version in af.table("t").versions()]


def test_a_task_try_reads_its_connection_once_and_the_next_try_reads_it_again(readings, monkeypatch):
    seen, (first, second) = readings
    dag = load_dag(SCHEMA_CHANGE)
    state, tasks, _run = run_dag(dag, {"statement": "ALTER TABLE t ADD COLUMN a INT"})
    assert (state, tasks["validate"]) == ("success", "success"), tasks
    assert seen == [first[0]]  # one reading for the seven catalog openings of `validate`
    _connection(monkeypatch, *second)  # the connection edited between two runs
    state, tasks, _run = run_dag(load_dag(SCHEMA_CHANGE), {"statement": "ALTER TABLE t ADD COLUMN b INT"})
    assert (state, tasks["validate"]) == ("success", "success"), tasks
    assert seen == [first[0], second[0]]
    assert _versions(*first) == [1, 2] and _versions(*second) == [1, 2]


def test_outside_a_task_every_opening_reads_the_connection(readings):
    seen, (first, _second) = readings
    for _ in range(3):
        task_bodies.open_catalog()
    assert seen == [first[0]] * 3


HOOK_DAG = """
from airflow.sdk import dag, task

from alterflow.airflow.hooks import AlterflowHook


@task
def three_uses() -> int:
    for _ in range(2):
        with AlterflowHook().get_conn() as af:
            assert af.tables() == ["t"]
    return len(AlterflowHook().get_settings().catalog_url)


@dag(dag_id="hook_reads_once", schedule=None)
def hook_reads_once():
    three_uses() >> three_uses.override(task_id="next_task")()


hook_reads_once()
"""


def test_any_task_using_the_hook_reads_the_connection_once_per_try(readings, monkeypatch, tmp_path):
    """The rule is the hook's, so a task of a user's DAG (the load operator, a task of its own)
    gains too: three uses in one task read once; the next task reads again."""
    seen, (first, _second) = readings
    folder = tmp_path / "hook_dags"
    folder.mkdir()
    (folder / "hook_reads_once.py").write_text(HOOK_DAG, encoding="utf-8")
    add_bundles(monkeypatch, hook=folder)
    state, tasks, _run = run_dag(load_dag_from(folder, "hook_reads_once"), {})
    assert (state, tasks) == ("success", {"three_uses": "success", "next_task": "success"}), tasks
    assert seen == [first[0], first[0]]  # once a task, not three times
