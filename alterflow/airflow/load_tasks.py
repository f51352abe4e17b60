"""The body of `AlterflowLoadOperator`: a path (as `alterflow load` takes it) or data from an upstream
task loaded into a table as one transaction, through the Python API's connection of an alterflow
connection (`AlterflowHook`).

The transaction's label names the task instance (`airflow <dag> <run> <task>[ map index]`), so a
retried task finds the load its earlier try committed and writes nothing again
(`alterflow.load.load_once`). A refusal (an unknown table, a missing path, a column the table
lacks, a value that does not convert) is one line and writes nothing: the first batch is converted
before the transaction begins, and a bad value later aborts it."""

from __future__ import annotations

import pathlib
from typing import Any

from alterflow import schema_change_events as events
from alterflow.airflow.hooks import DEFAULT_CONN_ID, AlterflowHook
from alterflow.airflow.tasks import refusals_fail_the_task
from alterflow.errors import UserError, shown
from alterflow.load.load_once import fitted_label, load_once

__all__ = ["BadLoadInput", "load", "task_label", "as_appendable"]

ENGINES = ("auto", "local", "spark")


class BadLoadInput(UserError):
    """What AlterflowLoadOperator was given to load cannot be loaded; nothing was written."""


def task_label(dag_id: str, run_id: str, task_id: str, map_index: int | None = None) -> str:
    """The load's transaction label: the task instance, which every try of it shares."""
    return fitted_label(f"airflow {dag_id} {run_id} {task_id}" + (f" [{map_index}]" if map_index is not None and map_index >= 0 else ""))


def as_appendable(data: Any, table: str) -> Any:
    """What an upstream task handed over (through XCom), as `Table.append` takes it: a pandas
    DataFrame or Arrow data as they are; JSON-friendly rows (a list of objects) or columns (an
    object of lists) as an Arrow table. Anything else is for `append` to refuse in one line."""
    import pyarrow as pa

    if data is None:
        raise BadLoadInput(
            f"load into {table}: data is None (the upstream task returned nothing); return a pandas DataFrame, "
            "a list of rows as dicts or a dict of column lists"
        )
    try:
        if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
            return pa.Table.from_pylist(data)
        if isinstance(data, dict) and data and all(isinstance(column, list) for column in data.values()):
            return pa.table(data)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise BadLoadInput(f"load into {table}: the data does not convert to Arrow: {shown(first, 150, quote='')}") from None
    if isinstance(data, dict):
        raise BadLoadInput(f"load into {table}: a dict of data maps each column name to a list of its values")
    return data


def load(
    table: str,
    label: str,
    *,
    path: str | None = None,
    data: Any = None,
    file_format: str | None = None,
    engine: str = "auto",
    conn_id: str = DEFAULT_CONN_ID,
) -> dict:
    """Load `path` or `data` into `table` once (see the module); the asset event's extra."""
    with refusals_fail_the_task():
        if engine not in ENGINES:
            raise BadLoadInput(f"load into {table}: unknown engine {shown(engine)}; use one of {', '.join(ENGINES)}")
        with AlterflowHook(conn_id).get_conn() as af:
            target = af.table(table)  # an unknown table: one line, nothing written
            table_id = af.catalog.table(target.name).id
            if path is not None:
                from alterflow.load.inputs import open_input

                if not isinstance(path, str | pathlib.Path) or not str(path).strip():
                    raise BadLoadInput(f"load into {target.name}: path must be a file or folder path, not {shown(path)}")
                source = open_input(pathlib.Path(path), file_format)  # a missing path: one line, before anything is written

                def write() -> tuple[int, int]:
                    done = af.session.load_input_result(target.name, source, label, engine)
                    return done.txn_id, done.rows
            else:
                appendable = as_appendable(data, target.name)

                def write() -> tuple[int, int]:
                    done = target.append(appendable, label=label)
                    return done.txn_id, done.rows

            result = load_once(af.catalog, table_id, label, write)
    if result.earlier:
        print(f"{target.name}: an earlier try of this task loaded it (transaction {result.txn_id}, {result.rows} rows); nothing written")
    else:
        print(f"{result.rows} rows loaded into {target.name} (transaction {result.txn_id})")
    return events.load_extra(target.name, result.rows, result.txn_id)
