"""`dag.test()` of one run in a process of its own (Airflow's in-process task runner needs the main
thread, so a test that needs two runs at once starts the second here).

    python -m tests.support.dag_test_process DAG_ID CONF_JSON   ->  last line: RESULT {"state": ..., "tasks": {...}}
"""

from __future__ import annotations

import json
import sys

from tests.support.dags import load_dag


def main() -> int:
    dag_id, conf = sys.argv[1], json.loads(sys.argv[2])
    run = load_dag(dag_id).test(run_conf=conf)
    tasks = {ti.task_id: ti.state for ti in run.get_task_instances()}
    print("RESULT " + json.dumps({"state": str(run.state), "run_id": run.run_id, "tasks": tasks}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
