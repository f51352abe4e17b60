"""`dag.test()` runs in a process of their own (Airflow's in-process task runner needs the main
thread, so a test that needs two runs at once starts the second here), one after the other.

    python -m tests.support.dag_test_process DAG_ID CONF_JSON   ->  last line: RESULT {"state": ..., "tasks": {...}}
    python -m tests.support.dag_test_process DAG_ID < CONFS_JSON   (a JSON list of confs: one run each)

Before each run a line `DAG_TEST_RUN <n>`, after it its RESULT line: between the two, what the run
printed (its task logs).
"""

from __future__ import annotations

import json
import sys

from tests.support.dags import load_dag

RUN_MARKER = "DAG_TEST_RUN"


def main() -> int:
    dag_id = sys.argv[1]
    confs = [json.loads(sys.argv[2])] if len(sys.argv) > 2 else json.load(sys.stdin)
    for n, conf in enumerate(confs):
        print(f"{RUN_MARKER} {n}", flush=True)
        # A fresh DAG per run: dag.test() runs every task on the same operator objects, and the
        # task runner merges a run's conf into them (a worker parses anew).
        run = load_dag(dag_id).test(run_conf=conf)
        tasks = {ti.task_id: ti.state for ti in run.get_task_instances()}
        print("RESULT " + json.dumps({"state": str(run.state), "run_id": run.run_id, "tasks": tasks}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
