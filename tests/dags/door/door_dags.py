"""The DAGs of the operator tests (tests/airflow/test_load_operator.py, test_schema_change_operator.py):
a user's own DAG folder, a DAG bundle of the test run's Airflow (tests.support.dags.add_bundles).
Every DAG here works on the table `t` (id INT NOT NULL, v STRING) of the catalog the test sets up."""

from __future__ import annotations

import pendulum
from airflow.sdk import Param, dag, task

from alterflow.airflow.operators import AlterflowLoadOperator, AlterflowSchemaChangeOperator

START = pendulum.datetime(2026, 1, 1, tz="UTC")


@dag(dag_id="door_loads", schedule=None, start_date=START, catchup=False, params={"path": Param("", type="string")})
def door_loads():
    """A file's rows, a DataFrame's and a list of rows', each one load of `t`."""

    @task
    def frame():
        import pandas as pd

        return pd.DataFrame({"id": [10, 11, 12], "v": ["x", "y", None]})

    @task
    def rows() -> list[dict]:
        return [{"id": 20, "v": "r"}, {"id": 21, "v": "s"}]

    AlterflowLoadOperator(task_id="load_path", table="t", path="{{ params.path }}")
    AlterflowLoadOperator(task_id="load_frame", table="t", data=frame())
    AlterflowLoadOperator(task_id="load_rows", table="t", data=rows())


@dag(dag_id="door_bad_loads", schedule=None, start_date=START, catchup=False, params={"missing": Param("", type="string")})
def door_bad_loads():
    """Each load is refused: a table the catalog lacks, a path that is not there, a column `t` lacks."""

    @task
    def a_colour_too():
        import pandas as pd

        return pd.DataFrame({"id": [30], "v": ["z"], "colour": ["red"]})

    AlterflowLoadOperator(task_id="unknown_table", table="no_such_table", data=[{"id": 1, "v": "a"}])
    AlterflowLoadOperator(task_id="missing_path", table="t", path="{{ params.missing }}")
    AlterflowLoadOperator(task_id="extra_column", table="t", data=a_colour_too())


@dag(
    dag_id="door_alter",
    schedule=None,
    start_date=START,
    catchup=False,
    params={"statement": Param("", type="string")},
)
def door_alter():
    """One ALTER of `t` as one task of a DAG of one's own."""
    AlterflowSchemaChangeOperator(task_id="alter", table="t", statement="{{ params.statement }}")


door_loads()
door_bad_loads()
door_alter()
