"""One ALTER driver for every door: plans a request and drives its job to the end, in this process
(`InProcessAlterDriver`: the embedded runner, `alter_runner.run_alter`) or as a DAG run of
`alterflow_schema_change` (`AirflowAlterDriver`: `airflow_submission.submit_alter`), chosen in one
place, `alter_driver`, from the settings (ALTERFLOW_AIRFLOW_URL; docs/airflow.md). `alterflow sql`,
the Python API (which runs `StartedAlter.finish` in a thread of its own), `migrate apply` and
RESUME all ask it; inside Airflow the DAG's tasks run the same steps (docs/architecture.md).

- `run(request)`: plan, then drive until FINISHED or READY_TO_SWAP; a request already run returns
  its job, an unfinished one goes on.
- `start(request)`: plan now (a rejection raises here, nothing changed) and return the job with
  what drives it on (`finish`), for a caller that drives it elsewhere (a background thread).
- `resume_request(request)`: the unfinished job of a request another process began (a killed
  `migrate apply`): driven on here, or its own DAG run waited for.
- `resume_job(job)`: RESUME ALTER TABLE COLUMN of a postponed swap or an orphaned job.
"""

from __future__ import annotations

import abc
import dataclasses
import pathlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from alterflow.catalog.states import JobKind, JobState
from alterflow.settings import Settings
from alterflow.workflow import alter_steps, heavy_steps, job_control
from alterflow.workflow.request import AlterRequest, new_request_id

if TYPE_CHECKING:  # pragma: no cover
    from alterflow.catalog.catalog import AlterJob, Catalog
    from alterflow.sql.ast import AlterTable


@dataclasses.dataclass(frozen=True)
class StartedAlter:
    """A planned ALTER: its request (with the id it runs under), its job where it exists already
    (None until a DAG run creates it), and `finish`, which drives it to its end (None: nothing is
    left, a lightweight change was committed)."""

    request: AlterRequest
    job_id: int | None
    finish: Callable[[], AlterJob] | None
    via_airflow: bool


class AlterDriver(abc.ABC):
    """Where an ALTER's steps run. `spark_factory` starts (or returns) the SparkSession a
    heavyweight conversion may need; it is called only when one does."""

    via_airflow = False

    def __init__(self, catalog: Catalog, warehouse: pathlib.Path | None, settings: Settings, spark_factory: Callable | None):
        self.catalog, self.warehouse, self.settings, self.spark_factory = catalog, warehouse, settings, spark_factory

    def request(
        self,
        table: str,
        statement: str,
        properties: dict[str, str] | None = None,
        request_id: str | None = None,
        parsed: AlterTable | None = None,
    ) -> AlterRequest:
        """A new request, under `request_id` (a caller's own idempotency key) or a fresh one;
        `parsed`: the statement already parsed (its text is `statement`), not parsed again here."""
        request = AlterRequest(table, statement, dict(properties or {}), parsed=parsed)
        return dataclasses.replace(request, request_id=request_id or self.new_request_id())

    def new_request_id(self) -> str:
        return new_request_id()

    @abc.abstractmethod
    def run(self, request: AlterRequest) -> AlterJob:
        """Plan `request` and drive it until FINISHED or READY_TO_SWAP."""

    @abc.abstractmethod
    def start(self, request: AlterRequest) -> StartedAlter:
        """Plan `request` now; `finish` drives it on."""

    @abc.abstractmethod
    def resume_request(self, request: AlterRequest) -> AlterJob:
        """The unfinished job of `request`, begun by another process, to its end."""

    @abc.abstractmethod
    def resume_job(self, job: AlterJob) -> AlterJob:
        """RESUME of an unfinished job (a postponed swap, or an orphaned job taken over)."""


class InProcessAlterDriver(AlterDriver):
    """The embedded runner: the steps in this thread, the job under this process's runner lease."""

    def run(self, request: AlterRequest) -> AlterJob:
        from alterflow.workflow.alter_runner import run_alter

        return run_alter(self.catalog, request, self.warehouse, self.spark_factory, self.settings.lease_s)

    def start(self, request: AlterRequest) -> StartedAlter:
        from alterflow.workflow.alter_runner import run_heavy

        validated = alter_steps.validate(self.catalog, request, warehouse=self.warehouse)
        if validated.kind == JobKind.LIGHT:
            return StartedAlter(request, alter_steps.commit_job(self.catalog, request, validated, self.warehouse).id, None, False)
        job_id = validated.job_id
        if job_id is None:
            job_id = heavy_steps.start(self.catalog, request, validated, lease_s=self.settings.lease_s).job_id

        def finish() -> AlterJob:
            return run_heavy(self.catalog, self.warehouse, job_id, self.spark_factory, lease_s=self.settings.lease_s)

        return StartedAlter(request, job_id, finish, False)

    def resume_request(self, request: AlterRequest) -> AlterJob:
        return self.run(request)  # run_alter finds the request's job and drives it on

    def resume_job(self, job: AlterJob) -> AlterJob:
        return job_control.resume_job(self.catalog, self.warehouse, job.id, self.spark_factory, self.settings.lease_s)


class AirflowAlterDriver(AlterDriver):
    """A DAG run of alterflow_schema_change per request, whose run id is the request's id, waited
    for through Airflow's REST API; the statement is planned here first, so a rejected one is
    refused before anything is sent."""

    via_airflow = True

    def new_request_id(self) -> str:
        from alterflow.airflow_client import new_run_id

        return new_run_id()

    def run(self, request: AlterRequest) -> AlterJob:
        from alterflow.workflow.airflow_submission import submit_alter

        with self._client() as client:
            return submit_alter(client, self.catalog, request, self.warehouse)

    def start(self, request: AlterRequest) -> StartedAlter:
        validated = alter_steps.validate(self.catalog, request, warehouse=self.warehouse)
        return StartedAlter(request, validated.job_id, lambda: self.run(request), True)

    def resume_request(self, request: AlterRequest) -> AlterJob:
        with self._client() as client:
            client.wait(request.request_id)
        return self.catalog.job_by_request(request.request_id)

    def resume_job(self, job: AlterJob) -> AlterJob:
        if job.state == JobState.READY_TO_SWAP:  # only the swap is left: a catalog commit, done here
            return job_control.resume_job(self.catalog, self.warehouse, job.id, self.spark_factory, self.settings.lease_s)
        # a DAG run of the job's own statement, which takes the job over
        return self.run(AlterRequest(job.table_name, job.statement, resume_job_id=job.id, request_id=self.new_request_id()))

    def _client(self):
        from alterflow.airflow_client import AirflowClient

        return AirflowClient.from_settings(self.settings)


def alter_driver(
    catalog: Catalog, warehouse: pathlib.Path | None, settings: Settings, spark_factory: Callable | None = None
) -> AlterDriver:
    """The driver the settings choose: through Airflow when ALTERFLOW_AIRFLOW_URL is set, else here."""
    kind = AirflowAlterDriver if settings.airflow_url else InProcessAlterDriver
    return kind(catalog, warehouse, settings, spark_factory)
