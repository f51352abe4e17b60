"""Triggers the schema-change DAG's deferred tasks wait on, in the triggerer (no worker slot held):
a run's turn on its table (`TurnTrigger`), a heavyweight job's boundary (`BoundaryTrigger`) and its
postponed swap (`ResumeTrigger`). Each polls one core call in a thread (`asyncio.to_thread`: the
catalog is synchronous SQLAlchemy) and fires one event: the payload of the look that ended the
wait, or {"error": message} when the core refused (the job was cancelled by CANCEL ALTER, a failed
check or its timeout; the table was dropped). The catalog and warehouse are
those of the alterflow connection `conn_id` the deferring task used (`AlterflowHook`, read in the
triggerer; without that connection, or for a trigger serialized before it had a `conn_id`, the
triggerer's ALTERFLOW_* environment), as in every task.

A trigger glances every `poll_seconds` (1 s: the wait ends within a second of what it waits for)
with a read-only query; the full look, which writes (the job's lease and Msg), runs when the
glance says the wait may be over, and at least every REFRESH_SECONDS (5 s) to renew the lease and
refresh the Msg. So a waiting job costs one small SELECT a second and the writes it always did.
A catalog server that stops answering (a PostgreSQL restart) is waited out, polling on, for up to
LOST_PATIENCE_S (5 minutes), then the trigger fails (the task's retries apply); the first look after
it renews the lease and the run's place at once. A restart of seconds so costs the waiting task
neither a retry nor its place; a run's place in its table's line lapses after four leases (2
minutes by default) without a look, so a longer outage may let a later run through first."""

from __future__ import annotations

import abc
import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from alterflow.airflow.hooks import AlterflowHook
from alterflow.catalog.catalog import Catalog
from alterflow.catalog.catalog_errors import CatalogLost, UnknownObject
from alterflow.catalog.states import JobState
from alterflow.errors import UserError
from alterflow.held_leases import airflow_run_group
from alterflow.settings import DEFAULT_LEASE_S, Settings
from alterflow.workflow import heavy_steps, table_turns
from alterflow.workflow.heavy_steps import JobCancelled
from alterflow.workflow.request import AlterRequest

POLL_SECONDS = 1.0
REFRESH_SECONDS = 5.0
# A catalog server that stops answering (a restart, a failover) is waited out this long, the
# trigger polling on; then the trigger fails and the task's retries apply.
LOST_PATIENCE_S = 300.0


class CatalogTrigger(BaseTrigger):
    """Polls `look(catalog, warehouse)` until it returns a payload, or the end of what it waits
    for (a cancelled job, a dropped table) ends the wait with {"error": its line}; anything else
    it raises fails the trigger, and the task's retries apply."""

    def __init__(self, poll_seconds: float = POLL_SECONDS, conn_id: str | None = None):
        super().__init__()
        self.poll_seconds = float(poll_seconds)
        self.conn_id = conn_id  # the alterflow connection; None: the environment (triggers from before it)
        self.lease_s = DEFAULT_LEASE_S  # of a look that takes the run's lease: the connection's, once run() read it

    def settings(self) -> Settings:
        """The settings of the deferring task's alterflow connection (blocking: run it in a thread,
        where Airflow lets a connection be read synchronously)."""
        if self.conn_id is None:
            return Settings.from_env()
        return AlterflowHook(self.conn_id).get_settings()

    @abc.abstractmethod
    def look(self, catalog: Catalog, warehouse) -> dict | None:
        """One look: the event's payload when the wait is over, else None."""

    def may_be_over(self, catalog: Catalog) -> bool:
        """A read-only glance: whether a full look now could end the wait."""
        return True

    async def run(self) -> AsyncIterator[TriggerEvent]:
        try:
            settings = await asyncio.to_thread(self.settings)
            self.lease_s = settings.lease_s
            catalog = await self._open(settings.catalog_url)
        except UserError as exc:  # the connection or the catalog refused: the task fails with the line
            if getattr(exc, "transient", False):  # no catalog server for 5 minutes: the task's retries apply
                raise
            yield TriggerEvent({"error": str(exc)})
            return
        looked = None  # monotonic time of the last full look
        lost_since = None  # monotonic time the catalog's server stopped answering, while it does not
        try:
            while True:
                now = asyncio.get_running_loop().time()
                try:
                    if (
                        looked is None
                        or now - looked >= max(REFRESH_SECONDS, self.poll_seconds)
                        or await asyncio.to_thread(self.may_be_over, catalog)
                    ):
                        looked = now
                        try:
                            payload = await asyncio.to_thread(self.look, catalog, settings.warehouse)
                        except (JobCancelled, UnknownObject) as exc:  # for good: the task fails with the line
                            yield TriggerEvent({"error": str(exc)})
                            return
                        if payload is not None:
                            yield TriggerEvent(payload)
                            return
                        self._answering_again(lost_since)  # a full look went through
                        lost_since = None
                except CatalogLost as exc:
                    lost_since = self._still_patient(lost_since, now, exc)
                    looked = None  # the first look once it answers is a full one: the lease and place renewed
                await asyncio.sleep(self.poll_seconds)
        finally:
            catalog.engine.dispose()

    async def _open(self, catalog_url: str) -> Catalog:
        """The catalog, opened once its server answers (within LOST_PATIENCE_S)."""
        lost_since = None
        while True:
            try:
                catalog = await asyncio.to_thread(Catalog, catalog_url)
                self._answering_again(lost_since)
                return catalog
            except CatalogLost as exc:
                lost_since = self._still_patient(lost_since, asyncio.get_running_loop().time(), exc)
            await asyncio.sleep(self.poll_seconds)

    def _still_patient(self, lost_since: float | None, now: float, lost: CatalogLost) -> float:
        """When the catalog's server stopped answering: a restart is waited out, polling on; after
        LOST_PATIENCE_S the trigger fails with the line (the task's retries apply)."""
        if lost_since is None:
            self.log.warning("the catalog database is not answering (%s); looking again every %.0f s", lost.reason, self.poll_seconds)
            return now
        if now - lost_since > LOST_PATIENCE_S:
            raise lost
        return lost_since

    def _answering_again(self, lost_since: float | None) -> None:
        if lost_since is not None:
            self.log.info("the catalog database answers again")


class JobTrigger(CatalogTrigger):
    """Waits on one job: cancelled (by CANCEL ALTER, a failed check or its timeout), it fails the task."""

    def __init__(self, job_id: int, poll_seconds: float = POLL_SECONDS, group: str | None = None, conn_id: str | None = None):
        super().__init__(poll_seconds, conn_id)
        self.job_id = int(job_id)
        self.group = group  # the DAG run's lease group: a look that writes drives the job as the run

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{type(self).__module__}.{type(self).__qualname__}", {
            "job_id": self.job_id,
            "poll_seconds": self.poll_seconds,
            "group": self.group,
            "conn_id": self.conn_id,
        }


class BoundaryTrigger(JobTrigger):
    """Fires once every transaction below the job's boundary has committed or aborted. Each look
    takes the run's lease, renewing it while the task is deferred (a deferred job is not orphaned)."""

    def look(self, catalog: Catalog, warehouse) -> dict | None:
        result = heavy_steps.wait_for_boundary(
            catalog, warehouse, self.job_id, heavy_steps.StepDriver(group=self.group, lease_s=self.lease_s)
        )
        return result.to_json() if result.done else None

    def may_be_over(self, catalog: Catalog) -> bool:
        return heavy_steps.boundary_may_be_reached(catalog, self.job_id)


class ResumeTrigger(JobTrigger):
    """Fires once a READY_TO_SWAP job was swapped by RESUME ALTER TABLE COLUMN (FINISHED)."""

    def look(self, catalog: Catalog, warehouse) -> dict | None:
        job = heavy_steps.ensure_alive(catalog, warehouse, self.job_id)
        return {"state": job.state} if job.state == JobState.FINISHED else None

    def may_be_over(self, catalog: Catalog) -> bool:
        return heavy_steps.job_state(catalog, self.job_id) != JobState.READY_TO_SWAP


class TurnTrigger(CatalogTrigger):
    """Fires once an ALTER's run may go on with its table (docs/airflow.md#runs-on-one-table): no
    job of the table unfinished, no run triggered before it still waiting. Its look renews the
    run's place in the table's line, so a run whose triggerer is alive never lapses."""

    def __init__(self, request: dict, triggered_at: str, poll_seconds: float = POLL_SECONDS, conn_id: str | None = None):
        super().__init__(poll_seconds, conn_id)
        self.request = dict(request)
        self.triggered_at = triggered_at  # ISO text, UTC

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{type(self).__module__}.{type(self).__qualname__}", {
            "request": self.request,
            "triggered_at": self.triggered_at,
            "poll_seconds": self.poll_seconds,
            "conn_id": self.conn_id,
        }

    def look(self, catalog: Catalog, warehouse) -> dict | None:
        request, when = AlterRequest.from_json(self.request), datetime.fromisoformat(self.triggered_at)
        group = airflow_run_group(request.request_id)
        turn = table_turns.take_turn(catalog, request, when, table_turns.hold_seconds(self.lease_s), group)
        return {"go": True} if turn.go else None

    def may_be_over(self, catalog: Catalog) -> bool:
        return table_turns.may_go(catalog, AlterRequest.from_json(self.request), datetime.fromisoformat(self.triggered_at))
