"""A DAG that runs on the loads of a table and not on its schema changes.

Both land on the table's asset, `alterflow://<catalog name>/<table>`: every `AlterflowLoadOperator`
load emits an event whose extra has `"event": "load"` (and the table, its rows and transaction);
every finished ALTER one with `"event": "schema_change"`. Airflow schedules this DAG on either, and
may hand one run several events at once, so its first task looks at them: with no load among them
it returns False and the run ends there (`count_loaded_rows` skipped); otherwise the next task
sees only the loads.

`load_during_alter.py` beside this file loads the table it listens to while an ALTER rewrites it.
Copy this file into your DAG folder and change the table.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, task

from alterflow.airflow.assets import is_load, table_asset

SALES = table_asset("alterflow_example_sales")  # alterflow://default/alterflow_example_sales


@dag(
    dag_id="alterflow_example_sales_loaded",
    schedule=[SALES],
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["alterflow", "example"],
)
def sales_loaded():
    @task.short_circuit
    def a_load_landed(triggering_asset_events=None) -> bool:
        events = (triggering_asset_events or {}).get(SALES, [])
        for event in events:
            print(f"{SALES.uri}: {event.extra.get('event')} {event.extra}")
        return any(is_load(event) for event in events)

    @task
    def count_loaded_rows(triggering_asset_events=None) -> dict:
        loads = [event.extra for event in triggering_asset_events[SALES] if is_load(event)]
        rows = sum(load["rows"] for load in loads)
        print(f"{len(loads)} load(s) into {SALES.uri}: {rows} rows, transactions {[load['transaction'] for load in loads]}")
        return {"loads": len(loads), "rows": rows, "transactions": [load["transaction"] for load in loads]}

    a_load_landed() >> count_loaded_rows()


sales_loaded()
