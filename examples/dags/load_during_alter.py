"""Loads landing in a table while a heavyweight ALTER rewrites it: every row arrives once, converted.

After `reset_table` (re)creates the example's table `alterflow_example_sales` (id INT, amount
STRING) with two rows, three branches run side by side (with a scheduler and a LocalExecutor or
Celery workers, at the same time):

- `widen_amount`: `AlterflowSchemaChangeOperator`, `ALTER TABLE ... MODIFY COLUMN amount INT`, a
  rewrite of the table's history (STRING to INT);
- `export_file` writes a Parquet file and returns its path; `load_file` (`AlterflowLoadOperator`,
  `path=`) loads it. Big data goes by path: the file stays on storage every worker reads;
- `extract` returns a pandas DataFrame (through XCom: fine for thousands of rows, not millions);
  `load_frame` (`AlterflowLoadOperator`, `data=`) loads it.

A load that began before the ALTER's boundary makes it wait (deferred: no worker slot held); one
that begins after is written twice in its one transaction, into the table and, converted, into the
rewrite's new index. Either way `count_rows` finds every row once, with `amount` an INT. The loads'
events on the table's asset have `"event": "load"` in their extra, the ALTER's `"schema_change"`:
`load_listener.py` beside this file runs only on the loads.

Catalog and warehouse: the Airflow connection `alterflow_default` (type alterflow), else the
ALTERFLOW_* environment. Params: `rows` per load (default 1000), `drop_folder` for the Parquet
file (default: the system's temporary folder; it must be one every worker can read).
"""

from __future__ import annotations

import os
import tempfile

import pendulum
from airflow.sdk import Param, dag, task

from alterflow.airflow.hooks import AlterflowHook
from alterflow.airflow.operators import AlterflowLoadOperator, AlterflowSchemaChangeOperator

TABLE = "alterflow_example_sales"


@dag(
    dag_id="alterflow_example_load_during_alter",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    params={
        "rows": Param(1000, type="integer", minimum=1, title="Rows per load"),
        "drop_folder": Param(tempfile.gettempdir(), type="string", title="Folder of the exported Parquet file"),
    },
    tags=["alterflow", "example"],
)
def load_during_alter():
    @task
    def reset_table() -> None:
        with AlterflowHook().get_conn() as af:
            af.sql(
                f"DROP TABLE IF EXISTS {TABLE}; "
                f"CREATE TABLE {TABLE} (id INT NOT NULL, amount STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2; "
                f"INSERT INTO {TABLE} VALUES (1, '10'), (2, '25')"
            )

    @task
    def export_file(params=None, run_id=None) -> str:
        import pyarrow as pa
        import pyarrow.parquet as pq

        count = int(params["rows"])
        path = os.path.join(params["drop_folder"], f"{TABLE}-{run_id}.parquet".replace(":", "_").replace("+", "_"))
        rows = pa.table({"id": range(1000, 1000 + count), "amount": [str(n % 500) for n in range(count)]})
        pq.write_table(rows, path)
        return path

    @task
    def extract(params=None):
        import pandas as pd

        count = int(params["rows"])
        return pd.DataFrame({"id": range(100_000, 100_000 + count), "amount": [str(n % 700) for n in range(count)]})

    @task
    def count_rows() -> dict:
        with AlterflowHook().get_conn() as af:
            sales = af.table(TABLE)
            ids = sales.scan(columns=["id"]).to_arrow().column("id").to_pylist()  # an Arrow read: no Spark
            amount = {c.name: c.type.sql() for c in sales.schema().columns}["amount"]
        print(f"{TABLE}: {len(ids)} rows ({len(set(ids))} distinct ids), amount {amount}")
        return {"rows": len(ids), "distinct_ids": len(set(ids)), "amount": amount}

    reset = reset_table()
    widen = AlterflowSchemaChangeOperator(
        task_id="widen_amount", table=TABLE, statement=f"ALTER TABLE {TABLE} MODIFY COLUMN amount INT", retries=2
    )
    load_file = AlterflowLoadOperator(task_id="load_file", table=TABLE, path=export_file(), retries=2)
    load_frame = AlterflowLoadOperator(task_id="load_frame", table=TABLE, data=extract(), retries=2)
    reset >> [widen, load_file, load_frame]
    [widen, load_file, load_frame] >> count_rows()


load_during_alter()
