"""An orchestrated ALTER's turn on its table (docs/airflow.md#runs-on-one-table): an Airflow run
whose table has an unfinished job, or runs triggered before it still waiting, waits for its turn
instead of being refused as "one job per table"; the CLI and the Python API still refuse at once.
A rewrite goes alone; light changes go side by side (their commits retry on a lost race).

take_turn   join the table's line, or renew the run's place; whether it goes now
may_go      the same answer, read-only (a waiting trigger's frequent look)
leave_turn  out of the line: the run was refused (its plan, commit or start)
"""

from __future__ import annotations

from datetime import datetime

from alterflow.catalog.alter_turns import AlterTurns, Turn
from alterflow.catalog.catalog import AlterContext, Catalog
from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.errors import UserError
from alterflow.held_leases import ORCHESTRATED_HAND_OFF_LEASES
from alterflow.planner import Verdict, plan_alter
from alterflow.workflow.alter_steps import parse_alter, planner_context, resumable_job
from alterflow.workflow.request import AlterRequest


def hold_seconds(lease_s: float) -> float:
    """How long a run keeps its place without renewing it (its trigger gone, or let through and
    planning): the grace a DAG run's lease has between two tasks."""
    return lease_s * ORCHESTRATED_HAND_OFF_LEASES


def _needs_no_turn(catalog: Catalog, request: AlterRequest) -> bool:
    """A run that takes over an orphaned job (that job is the table's), or whose job exists (a
    retried or cleared task), goes on at once."""
    return request.resume_job_id is not None or catalog.job_by_request(request.request_id) is not None


def take_turn(catalog: Catalog, request: AlterRequest, triggered_at: datetime, hold_s: float, group: str | None = None) -> Turn:
    """Also at once: a run whose statement is the table's orphaned job's takes that job over
    (`alter_steps.resumable_job`; LeaseHeld, in one line, while a live runner of another driver holds
    it). A run of a table that is gone leaves the line and gets UnknownObject."""
    if _needs_no_turn(catalog, request):
        return Turn(True)
    try:
        context = catalog.alter_context(request.table)
        if resumable_job(context, request, group) is not None:
            return Turn(True)
        return AlterTurns(catalog).take(request.request_id, context.table.id, triggered_at, hold_s, _rewrites(catalog, context, request))
    except UnknownObject:
        leave_turn(catalog, request.request_id)
        raise


def _rewrites(catalog: Catalog, context: AlterContext, request: AlterRequest) -> bool:
    """Whether the run's change is a rewrite (a heavyweight job), as planned on the current version
    without the warehouse's files: a change only the files could show to be light (a REVERT of a
    widening) counts as one, and goes alone. A statement that does not plan goes as a light one:
    its plan task refuses it."""
    try:
        planned = plan_alter(planner_context(catalog, context, context.current), parse_alter(request))
    except UserError:
        return False
    return planned.properties.rewrite or any(clause.verdict is Verdict.HEAVY for clause in planned.clauses)


def may_go(catalog: Catalog, request: AlterRequest, triggered_at: datetime) -> bool:
    """Whether `take_turn` may let the run through now, changing nothing (an orphaned job the run
    would take over is seen by the next `take_turn`, every few seconds)."""
    if _needs_no_turn(catalog, request):
        return True
    return AlterTurns(catalog).glance(request.request_id, catalog.table(request.table).id, triggered_at)


def leave_turn(catalog: Catalog, request_id: str) -> None:
    AlterTurns(catalog).leave(request_id)
