"""An example downstream DAG: it runs whenever the table `orders` of the catalog `default` changes
schema, and prints what changed and the new schema.

alterflow's `alterflow_schema_change` DAG emits an event on the table's asset,
`alterflow://<catalog name>/<table>` (ALTERFLOW_CATALOG_NAME, default `default`; the table's name in
lower case), each time an ALTER finishes. Loads through `AlterflowLoadOperator` emit on the same
asset, with `"event": "load"` in their extra: this DAG skips a run that only loads triggered.
Copy this file into your DAG folder and change the table.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import Asset, dag, task
from airflow.sdk.exceptions import AirflowSkipException

ORDERS = Asset("alterflow://default/orders")


@dag(
    dag_id="orders_schema_changed",
    schedule=[ORDERS],
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["alterflow", "example"],
)
def orders_schema_changed():
    @task
    def print_new_schema(triggering_asset_events=None) -> list[list]:
        from alterflow.airflow.assets import is_schema_change
        from alterflow.engine.result_text import to_table
        from alterflow.engine.session import Session

        changes = [event for event in (triggering_asset_events or {}).get(ORDERS, []) if is_schema_change(event)]
        if not changes:
            raise AirflowSkipException("only loads of orders: no schema change")
        for event in changes:
            extra = event.extra
            print(
                f"orders: schema version {extra['from_version']} -> {extra['to_version']} "
                f"({extra['kind']}, job {extra['job_id']}): {extra['statement']}"
            )
        [described] = list(Session().run("DESCRIBE orders"))
        print(to_table(described))
        return [list(row) for row in described.rows]

    print_new_schema()


orders_schema_changed()
