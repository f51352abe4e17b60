"""alterflow's Airflow cluster policy (the `airflow.policy` entry point, which Airflow's processes
load at start): a schema-change run whose statement is lightweight for certain gets its first
task's slot first.

Airflow's priority weights belong to a DAG's tasks, not to its runs: every run's `validate` weighs
the same (`dags.ENDING_STEP`), so when a burst of runs wants more slots than the workers have, a
light ALTER (one task, about a second) waits behind heavy ones' `validate` in no set order. The
scheduler creates each run's task instances with the run at hand, and calls this hook on each
(`task_instance_mutation_hook`, with `dag_run`); this one raises the weight of `validate` in an
`alterflow_schema_change` run whose statement only adds, drops or renames columns or sets or drops a
default (and asks for no rewrite): those ALTERs commit metadata only, whatever the table
(docs/semantics.md#lightweight-heavyweight-rejected). Others (MODIFY COLUMN, a new sort key or
distribution, REVERT) may or may not rewrite, so they keep the task's weight. A weight orders who
waits, nothing else: a statement misjudged here runs as it would have, in another order.

The hook runs inside the scheduler's loop, for every task instance of every DAG: it returns at once
for any other task, reads only the run's conf (no database), and never raises (a conf it cannot read
keeps the weight; the task refuses it in one line)."""

from __future__ import annotations

import logging

from airflow.policies import hookimpl

from alterflow.airflow.runs import SCHEMA_CHANGE_DAG

log = logging.getLogger(__name__)

FIRST_TASK = "validate"
LIGHT_FIRST_WEIGHT = 5  # above every task's own weight (dags.ENDING_STEP's 4 the highest)


def _say_the_hook_is_there() -> None:
    """Airflow 3.3 creates a run's task instances through the mutation hook only when
    `airflow.settings.task_instance_mutation_hook.is_noop` is False, which it sets after importing
    an `airflow_local_settings` module that holds a hook, not for a hook of an `airflow.policy`
    plugin such as this one: without this, the hook would reach only task instances created again
    (a cleared task), never a new run's."""
    import airflow.settings

    airflow.settings.task_instance_mutation_hook.is_noop = False


_say_the_hook_is_there()


@hookimpl
def task_instance_mutation_hook(task_instance, dag_run) -> None:
    """A lightweight ALTER's `validate` weighs LIGHT_FIRST_WEIGHT (see the module)."""
    if dag_run is None or task_instance.dag_id != SCHEMA_CHANGE_DAG or task_instance.task_id != FIRST_TASK:
        return
    try:
        light = statement_is_light(dag_run.conf, dag_run.run_id)
    except Exception as exc:  # noqa: BLE001 - the scheduler must go on; the task refuses a bad conf itself
        log.debug("run %s keeps validate's weight: %s", dag_run.run_id, exc)
        return
    if light:
        task_instance.priority_weight = LIGHT_FIRST_WEIGHT


def statement_is_light(conf, run_id: str) -> bool:
    """Whether the run conf's ALTER is lightweight for certain, judged from its text alone: only
    column additions, drops, renames and defaults, and no rewrite asked for. A conf `validate`
    would refuse is not light (`conf.alter_request` raises)."""
    from alterflow.airflow.conf import alter_request
    from alterflow.planner.properties import parse_properties
    from alterflow.sql.ast import AddColumn, AddColumns, DropColumn, DropDefault, RenameColumn, SetDefault
    from alterflow.workflow.alter_steps import parse_alter

    statement = parse_alter(alter_request(conf or {}, run_id))
    if parse_properties(statement.table, statement.properties).rewrite:  # the planner's reading of them
        return False
    light_clauses = (AddColumn, AddColumns, DropColumn, DropDefault, RenameColumn, SetDefault)
    return bool(statement.clauses) and all(isinstance(clause, light_clauses) for clause in statement.clauses)
