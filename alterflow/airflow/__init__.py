"""Airflow glue for alterflow's DAGs: run conf parsing (`conf`), task bodies (`tasks`), deferrable
operators (`operators`) and the triggers they defer to (`triggers`). The DAG files in `dags/` stay
thin and the core (catalog, planner, workflow steps) never imports Airflow.

For DAGs of one's own (docs/python.md#airflow): the connection type `alterflow` (`provider`) and
`AlterflowHook` (`hooks`), through which every task, trigger and the Schema changes page find the
catalog; `AlterflowLoadOperator` and `AlterflowSchemaChangeOperator` (`operators`); a table's asset
and what its events are (`assets`).

Airflow puts `plugins/` on sys.path in every component; `plugins/.airflowignore` keeps its plugin
loader from importing this package's modules as top-level plugin files."""

import logging as _logging

# A task's log tells the job's story in alterflow's words (alterflow.workflow: the job, its engine,
# tablets, progress, the boundary, the swap): py4j's connection notices are for debugging only
# (Great Expectations' chatter is quieted where it is imported, `alterflow.expectations`).
_logging.getLogger("py4j").setLevel(_logging.WARNING)
