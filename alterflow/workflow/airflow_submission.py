"""An ALTER run by Airflow instead of this process (docs/airflow.md): the other driver beside
`alter_runner.run_alter`. The statement is planned here first (`alter_steps.validate`), so a rejected one fails
with the planner's line before anything is submitted (the DAG plans it again when it runs); then
it becomes a run of the `alterflow_schema_change` DAG (`AirflowClient`: Airflow's REST API) whose
run id is the request's id, so its job is found in the catalog by it; then the run is waited for.

The wait ends when the run ends or when the job is READY_TO_SWAP (`postpone_swap`: the run then
waits for RESUME, the statement returns as it does in-process)."""

from __future__ import annotations

import pathlib

from alterflow.airflow_client import DAG_ID, AirflowClient, AirflowRequestError
from alterflow.catalog.catalog import AlterJob, Catalog
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.states import JobState
from alterflow.workflow import alter_steps
from alterflow.workflow.heavy_steps import JobCancelled
from alterflow.workflow.request import AlterRequest


def submit_alter(client: AirflowClient, catalog: Catalog, request: AlterRequest, warehouse: pathlib.Path | None = None) -> AlterJob:
    """Run `request` as a DAG run and return its job once it is FINISHED or READY_TO_SWAP."""
    taken_over = alter_steps.validate(catalog, request, warehouse=warehouse).job_id  # an orphaned job the run takes over
    client.check_dag()
    client.trigger(request.request_id, request.run_conf())

    def run_job() -> AlterJob | None:
        job = catalog.job_by_request(request.request_id)
        if job is None and taken_over is not None:
            job = HeavyJobs(catalog).job(taken_over)
        return job

    def ready_to_swap() -> bool:
        job = run_job()
        return job is not None and job.state == JobState.READY_TO_SWAP

    state = client.wait(request.request_id, stop=ready_to_swap)
    job = run_job()
    if job is not None and job.state == JobState.CANCELLED:
        raise JobCancelled(f"ALTER TABLE {job.table_name}: job {job.id} was cancelled: {job.msg}")
    if state == "failed" or job is None:
        where = ", ".join(client.failed_tasks(request.request_id)) or "unknown"
        known = f"; job {job.id} is {job.state}" + (f": {job.msg}" if job.msg else "") if job is not None else ""
        raise AirflowRequestError(
            f"ALTER TABLE {request.table}: Airflow run {request.request_id} of {DAG_ID} failed at task {where}{known}; "
            f"its log is in Airflow"
        )
    return job
