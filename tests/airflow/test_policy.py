"""alterflow's cluster policy (alterflow.airflow.policy, the `airflow.policy` entry point): a run
whose ALTER is lightweight for certain gets `validate` at a weight above every task's own, so a free
slot goes to it first; any other run, DAG or task keeps its weight, and a conf the hook cannot read
changes nothing and raises nothing (the scheduler calls it for every task instance)."""

from __future__ import annotations

import types

import pytest

import alterflow
from alterflow.airflow.dags import ENDING_STEP
from alterflow.airflow.policy import LIGHT_FIRST_WEIGHT, statement_is_light, task_instance_mutation_hook
from tests.support.dags import SCHEMA_CHANGE, alterflow_env, load_dag, run_dag


@pytest.mark.parametrize(
    ("statement", "light"),
    [
        ("ALTER TABLE t ADD COLUMN a INT", True),
        ("ALTER TABLE t ADD COLUMN a INT NOT NULL DEFAULT 0, DROP COLUMN b, RENAME COLUMN c TO d", True),
        ("ALTER TABLE t ADD COLUMN (a INT, b STRING)", True),
        ("ALTER TABLE t ALTER COLUMN c SET DEFAULT 1, ALTER COLUMN d DROP DEFAULT", True),
        ("ALTER TABLE t MODIFY COLUMN v SMALLINT", False),  # a narrowing rewrites; a widening may not: judged by the planner
        ('ALTER TABLE t ADD COLUMN a INT PROPERTIES ("rewrite" = "true")', False),
        ("ALTER TABLE t ADD COLUMN a INT, MODIFY COLUMN v SMALLINT", False),
        ("ALTER TABLE t ORDER BY (id)", False),
    ],
)
def test_a_statement_is_light_by_its_clauses_alone(statement, light):
    assert statement_is_light({"statement": statement}, "run") is light


def test_a_light_statement_asking_for_a_rewrite_in_the_conf_is_not_light():
    assert not statement_is_light({"statement": "ALTER TABLE t ADD COLUMN a INT", "properties": {"rewrite": "true"}}, "run")


def _ti(dag_id: str = SCHEMA_CHANGE, task_id: str = "validate", weight: int = 4):
    return types.SimpleNamespace(dag_id=dag_id, task_id=task_id, priority_weight=weight)


def _run(conf):
    return types.SimpleNamespace(conf=conf, run_id="manual__1")


@pytest.mark.parametrize(
    "conf",
    [None, {}, {"statement": "SELECT 1"}, {"statement": 7}, "not a mapping", {"statement": "ALTER TABLE t ADD COLUMN"}],
)
def test_a_conf_the_hook_cannot_read_keeps_the_weight_and_raises_nothing(conf):
    ti = _ti()
    task_instance_mutation_hook(task_instance=ti, dag_run=_run(conf))
    assert ti.priority_weight == 4


def test_other_tasks_dags_and_runs_without_a_dag_run_keep_their_weight():
    light = _run({"statement": "ALTER TABLE t ADD COLUMN a INT"})
    for ti in (_ti(task_id="plan"), _ti(dag_id="some_other_dag")):
        task_instance_mutation_hook(task_instance=ti, dag_run=light)
        assert ti.priority_weight == 4
    ti = _ti()
    task_instance_mutation_hook(task_instance=ti, dag_run=None)
    assert ti.priority_weight == 4
    task_instance_mutation_hook(task_instance=ti, dag_run=light)
    assert ti.priority_weight == LIGHT_FIRST_WEIGHT > ENDING_STEP["priority_weight"]


def test_airflow_creates_a_light_runs_validate_at_the_higher_weight(monkeypatch, tmp_path, airflow_db):
    """Through Airflow itself (the policy loaded from the installed entry point, the run's task
    instances created by Airflow): a light run's `validate` weighs LIGHT_FIRST_WEIGHT, a heavy one's
    its own."""
    settings = alterflow_env(monkeypatch, tmp_path)
    with alterflow.connect(settings.catalog_url, settings.warehouse) as af:
        af.sql("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
        af.sql("INSERT INTO t VALUES (1, '1')")
    weights = {}
    for statement in ("ALTER TABLE t ADD COLUMN a INT", "ALTER TABLE t MODIFY COLUMN v INT"):
        state, tasks, run = run_dag(load_dag(SCHEMA_CHANGE), {"statement": statement})
        assert (state, tasks["validate"]) == ("success", "success"), tasks
        (validate,) = [ti for ti in run.get_task_instances() if ti.task_id == "validate"]
        weights[statement.split()[3]] = validate.priority_weight
    assert weights == {"ADD": LIGHT_FIRST_WEIGHT, "MODIFY": ENDING_STEP["priority_weight"]}
