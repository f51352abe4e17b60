"""The DAG files import without errors, have the shape the issue asks for, and survive Airflow 3's
serialization round trip (what the DAG processor stores and the scheduler reads)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from airflow.serialization.serialized_objects import DagSerialization

from tests.support import child_pythonpath
from tests.support.dags import SCHEMA_CHANGE, dag_bag

HEAVY_PATH = ("start", "wait_for_boundary", "convert", "check", "swap")


def test_dag_folder_imports_without_errors():
    bag = dag_bag()
    assert bag.import_errors == {}
    assert {"alterflow_schema_change", "alterflow_gc", "alterflow_migrate"} <= set(bag.dag_ids)


def test_dags_round_trip_through_serialization():
    bag = dag_bag()
    for dag_id in ("alterflow_schema_change", "alterflow_gc", "alterflow_migrate"):
        dag = bag.dags[dag_id]
        restored = DagSerialization.deserialize_dag(DagSerialization.serialize_dag(dag))
        assert restored.dag_id == dag_id
        assert restored.description and len(restored.description) <= 140, dag_id  # one line in the Dags list
        assert set(restored.task_dict) == set(dag.task_dict)
        for task_id, task in dag.task_dict.items():
            assert restored.task_dict[task_id].upstream_task_ids == task.upstream_task_ids, task_id


def test_schema_change_dag_shape_and_trigger_form():
    dag = dag_bag().dags[SCHEMA_CHANGE]
    assert dag.timetable.can_be_scheduled is False  # schedule=None: runs only when triggered
    tasks = dag.task_dict
    assert tasks["plan"].upstream_task_ids == {"validate"}
    assert type(tasks["validate"]).__name__ == "ValidateRunOperator"  # and the run's turn on its table, deferred
    assert tasks["branch"].downstream_task_ids == {"commit", "start"}
    for upstream, downstream in zip(HEAVY_PATH, HEAVY_PATH[1:]):
        assert downstream in tasks[upstream].downstream_task_ids, (upstream, downstream)
    assert tasks["start"].downstream_task_ids == {"wait_for_boundary", "rewrite_in_worker"}  # start branches by engine
    assert type(tasks["rewrite_in_worker"]).__name__ == "RewriteInWorkerOperator"
    assert {"commit", "swap", "rewrite_in_worker"} <= tasks["done"].upstream_task_ids
    assert tasks["done"].trigger_rule == "none_failed_min_one_success"
    assert type(tasks["convert"]).__name__ == "ConvertHistoryOperator"
    assert tasks["convert"]._conn_id == "spark_default"
    for task_id, task in tasks.items():  # every step is idempotent, so a transient error retries it
        assert task.retries >= 1, task_id
    assert max(tasks[t].retry_delay.total_seconds() for t in ("validate", "plan", "branch", "commit", "done")) <= 2
    # The trigger form: the statement and its properties, nothing internal; a toggle is a toggle.
    assert list(dag.params) == ["statement", "postpone_swap", "on_cast_error", "engine", "timeout", "properties", "dry_run"]
    for name in dag.params:
        param = dag.params.get_param(name)
        assert param.schema.get("title") and param.description, name
        required = "null" not in param.schema["type"] if isinstance(param.schema["type"], list) else True
        assert required == (name == "statement"), name  # the form marks only the statement required
    assert dag.params.get_param("postpone_swap").schema["type"] == ["null", "boolean"]


def test_a_free_slot_goes_to_a_step_that_ends_a_run_then_to_a_run_under_way_then_to_conversions():
    """Airflow's priority weights, as given ("absolute"): under a team's load a light ALTER (its
    run is its `validate`) goes before the rest of a run under way, and that before another
    table's rewrite or GC."""
    dags = dag_bag().dags
    tasks = dags[SCHEMA_CHANGE].task_dict
    assert {str(task.weight_rule) for task in tasks.values()} == {"absolute"}  # each weight as given, not summed
    weights = {task_id: task.priority_weight for task_id, task in tasks.items()}
    ending, under_way = {"validate", "commit", "swap", "done"}, {"plan", "branch", "start", "wait_for_boundary"}
    long = {"rewrite_in_worker", "convert", "check"}
    assert ending | under_way | long == set(tasks)
    levels = [[weights[t] for t in level] for level in (ending, under_way, long)]
    assert all(min(higher) > max(lower) for higher, lower in zip(levels, levels[1:])), weights
    gc = dags["alterflow_gc"].task_dict.values()
    assert {(str(t.weight_rule), t.priority_weight) for t in gc} == {("absolute", min(levels[-1]))}
    # Nor does the DAG cap its runs or tasks at once below what a team triggers and a fleet runs
    # (Airflow's defaults, 16 and 16): runs of one table take turns, deferred, in `validate`.
    schema_change = dags[SCHEMA_CHANGE]
    assert schema_change.max_active_runs >= 10_000 and schema_change.max_active_tasks >= 10_000


def test_the_long_steps_take_their_slots_from_the_pool_alterflow_airflow_long_pool_names():
    """Parsed in a process of its own (the pool is read when alterflow.airflow.dags is first
    imported): with ALTERFLOW_AIRFLOW_LONG_POOL the conversions, checks, rewrites in the worker and
    GC's steps take slots from that pool and every short step from Airflow's default pool; without
    it, every task from the default pool."""
    script = (
        "from tests.support.dags import dag_bag; dags = dag_bag().dags; "
        "print(sorted({(t.task_id, t.pool) for d in ('alterflow_schema_change', 'alterflow_gc') for t in dags[d].tasks}))"
    )
    long = {"rewrite_in_worker", "convert", "check"}
    for value, pool in (("team_long", "team_long"), ("", "default_pool")):
        env = {**os.environ, "ALTERFLOW_AIRFLOW_LONG_POOL": value, "PYTHONPATH": child_pythonpath()}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        pools = dict(ast.literal_eval(done.stdout.strip().splitlines()[-1]))
        gc_steps = set(dag_bag().dags["alterflow_gc"].task_ids)
        short = set(pools) - long - gc_steps
        assert short >= {"validate", "plan", "commit", "swap", "done"}, pools
        assert {pools[task] for task in long | gc_steps} == {pool}, pools
        assert {pools[task] for task in short} == {"default_pool"}, pools


def test_gc_dag_is_hourly_one_run_at_a_time_one_task_per_step_in_order():
    from alterflow.airflow.gc_tasks import DAG_TASKS, STEP_ORDER

    assert "resume_orphaned_jobs" in STEP_ORDER

    dag = dag_bag().dags["alterflow_gc"]
    assert dag.max_active_runs == 1 and dag.catchup is False
    assert dag.schedule == "@hourly" and dag.timetable.expression in ("@hourly", "0 * * * *")
    assert [t.task_id for t in dag.topological_sort()] == list(DAG_TASKS)


def test_migrate_dag_lints_then_asks_approval_only_when_needed_then_applies():
    from airflow.providers.standard.operators.hitl import ApprovalOperator

    from alterflow.schema_change_events import SCHEMA_CHANGES_ALIAS

    dag = dag_bag().dags["alterflow_migrate"]
    assert dag.timetable.can_be_scheduled is False and dag.max_active_runs == 1  # triggered; one apply at a time
    assert [t.task_id for t in dag.topological_sort()] == ["lint", "needs_approval", "approval", "apply"]
    tasks = dag.task_dict
    assert tasks["needs_approval"].upstream_task_ids == {"lint"}
    assert tasks["needs_approval"].ignore_downstream_trigger_rules is False  # skips the approval only
    assert isinstance(tasks["approval"], ApprovalOperator) and tasks["approval"].upstream_task_ids == {"needs_approval"}
    assert tasks["approval"].options == ["Approve", "Reject"] and "approval_body" in tasks["approval"].body
    assert tasks["apply"].upstream_task_ids == {"lint", "approval"}
    assert tasks["apply"].trigger_rule == "none_failed"  # runs when the approval is skipped, not after a failure
    assert [o.name for o in tasks["apply"].outlets] == [SCHEMA_CHANGES_ALIAS]
    assert tasks["lint"].retries >= 1 and tasks["apply"].retries >= 1  # a transient error retries; a refusal does not
    for name in ("migrations_dir", "to"):
        param = dag.params.get_param(name)
        assert param.schema.get("title") and param.description, name
    assert dag.params.get_param("migrations_dir").schema["type"] == "string"
    assert "ApprovalOperator" in dag.doc_md and "Reject" in dag.doc_md


def test_migrate_dags_default_directory_is_alterflow_migrations_when_parsed():
    """Parsed in a process of its own: the default is read from ALTERFLOW_MIGRATIONS when
    alterflow.airflow.dags is first imported."""
    script = "from tests.support.dags import dag_bag; print(repr(dag_bag().dags['alterflow_migrate'].params['migrations_dir']))"
    for value, expected in (("/srv/project/migrations", "/srv/project/migrations"), ("", "migrations")):
        env = {**os.environ, "ALTERFLOW_MIGRATIONS": value, "PYTHONPATH": child_pythonpath()}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1] == repr(expected), done.stdout


def test_a_runs_conf_set_on_one_parse_is_not_the_next_parses_default():
    """Airflow writes a run's conf into the DAG's Param objects (`dag.test()` in this process, a
    worker parsing the file again): each parse has Params of its own."""
    first, second = dag_bag().dags["alterflow_migrate"], dag_bag().dags["alterflow_migrate"]
    change = dag_bag().dags[SCHEMA_CHANGE]
    try:
        first.params["to"] = 2
        assert second.params["to"] is None and dag_bag().dags["alterflow_migrate"].params["to"] is None
        change.params["dry_run"] = True
        assert dag_bag().dags[SCHEMA_CHANGE].params["dry_run"] is False
    finally:  # were the Params shared after all, the next tests would not inherit these
        first.params["to"], change.params["dry_run"] = None, False
