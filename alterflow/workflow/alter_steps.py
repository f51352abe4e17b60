"""The steps of an ALTER. Each takes the catalog and the request (plus what `validate` answered, a
`ValidatedPlan`, which a driver passes between processes as its JSON) and returns a frozen dataclass
(`ValidatedPlan`, `CommittedJob`), whose `to_json()` is what a DAG task passes on through XCom.

validate  parse and plan against the current version; reject with one line, changing nothing.
          The same text as an orphaned heavyweight job's ALTER takes that job over instead (docs/heavyweight.md).
commit    (light) make the planned version current in one catalog transaction, with its job.

A change that loses a race (another change committed first) is planned again on the new version
and tried again when the statement names no `expected_version` (`retry_on_table_moved`).
"""

from __future__ import annotations

import logging
import pathlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from alterflow.catalog.catalog import AlterContext, AlterJob, Catalog
from alterflow.catalog.catalog_errors import TableMoved, UnknownObject
from alterflow.catalog.job_leases import DRIVEN_STATES, ensure_not_driven, is_orphaned, runner_text
from alterflow.catalog.records import JobSpec, TableInfo
from alterflow.catalog.schema import SchemaVersion, name_key
from alterflow.catalog.states import Engine, JobKind
from alterflow.errors import UserError
from alterflow.planner import AlterPlan, AlterRejected, TableContext, Verdict, plan_alter
from alterflow.rewrite.engines import local_refusal
from alterflow.sql import AlterTable, SqlError, parse_statements
from alterflow.values.types import integer_range
from alterflow.workflow.request import AlterRequest
from alterflow.workflow.validated_plan import ValidatedPlan

if TYPE_CHECKING:  # reading file footers needs pyarrow, which a light statement never imports
    from collections.abc import Callable

    from alterflow.store.file_statistics import FileRanges

T = TypeVar("T")
# As Iceberg retries a commit that lost a race on the table's new metadata (commit.retry.num-retries,
# 4): a change without expected_version is planned at most this many times in all.
PLAN_ATTEMPTS = 5

LIGHT_STEPS = ("validate", "commit")

log = logging.getLogger(__name__)  # what a step did, in a task's log


class HeavyChangeUnavailable(UserError):
    """A heavyweight change was planned but this build has no executor for it."""


@dataclass(frozen=True)
class CommittedJob:
    """`commit`'s result: the lightweight job, its state (FINISHED) and the version it made current."""

    job_id: int
    state: str
    version: int

    def to_json(self) -> dict:
        return {"job_id": self.job_id, "state": self.state, "version": self.version}


def parse_alter(request: AlterRequest) -> AlterTable:
    """The request's statement, with the request's properties over its own: the one it was made
    with (`request.parsed`), or its text parsed (a request that came from JSON or the catalog)."""
    stmt = request.parsed if request.parsed is not None else _parsed_text(request)
    if stmt.explain:
        raise AlterRejected(f"ALTER TABLE {request.table}: the statement must be exactly one ALTER TABLE statement")
    if name_key(stmt.table) != name_key(request.table):
        raise AlterRejected(f"ALTER TABLE {request.table}: the statement alters {stmt.table}, not {request.table}")
    if request.properties:
        stmt = replace(stmt, properties={**stmt.properties, **{k.lower(): str(v) for k, v in request.properties.items()}})
    return stmt


def _parsed_text(request: AlterRequest) -> AlterTable:
    try:
        statements = parse_statements(request.statement)
    except SqlError as exc:
        raise AlterRejected(f"ALTER TABLE {request.table}: {exc}") from None
    if len(statements) != 1 or not isinstance(statements[0], AlterTable):
        raise AlterRejected(f"ALTER TABLE {request.table}: the statement must be exactly one ALTER TABLE statement")
    return statements[0]


def _alter_context(catalog: Catalog, table: str) -> AlterContext:
    try:
        return catalog.alter_context(table)
    except UnknownObject:
        raise AlterRejected(f"ALTER TABLE {table}: unknown table {table}") from None


def table_context(
    catalog: Catalog, table: str, version: SchemaVersion | None = None, warehouse: pathlib.Path | None = None
) -> TableContext:
    """What the planner needs to know about a table (at its current version unless given).
    Without the `warehouse` the files' statistics are unknown (a REVERT of a widening rewrites)."""
    context = _alter_context(catalog, table)
    return planner_context(catalog, context, version or context.current, warehouse)


def same_statement(a: str, b: str) -> bool:
    """Whether two ALTER texts are the same statement (white space and a final `;` aside)."""

    def norm(text: str) -> str:
        return " ".join(text.split()).rstrip(";").rstrip()

    return norm(a) == norm(b)


def resumable_job(context: AlterContext, request: AlterRequest, group: str | None = None) -> AlterJob | None:
    """The table's unfinished heavyweight job when `request` is the same ALTER again and nobody
    else drives it (docs/heavyweight.md: the same statement issued again takes over an orphaned job). While a
    live runner of another driver holds it, `LeaseHeld` says who, in one line.

    A request that names the job it takes over (`resume_job_id`) takes that one or nothing: once
    the job is finished or cancelled, it is refused instead of running the ALTER again."""
    job = context.active_job
    if request.resume_job_id is not None:
        if job is None or job.id != request.resume_job_id or job.state not in DRIVEN_STATES:
            state = "over" if job is None or job.id != request.resume_job_id else job.state
            raise AlterRejected(
                f"ALTER TABLE {request.table}: job {request.resume_job_id} is {state}; there is no orphaned job to take over"
            )
        if not same_statement(job.statement, request.statement):
            raise AlterRejected(f"ALTER TABLE {request.table}: the statement is not job {job.id}'s, which this run was to take over")
    elif job is None or job.kind != JobKind.HEAVY or job.state not in DRIVEN_STATES:
        return None
    elif not same_statement(job.statement, request.statement):
        return None
    ensure_not_driven(job, group)
    return job


def _file_ranges(warehouse: pathlib.Path) -> FileRanges:
    from alterflow.store.file_statistics import FileRanges

    return FileRanges(warehouse)


def planner_context(
    catalog: Catalog,
    context: AlterContext,
    version: SchemaVersion,
    warehouse: pathlib.Path | None = None,
    ranges: FileRanges | None = None,
) -> TableContext:
    job = context.active_job
    table_id = context.table.id
    if ranges is None and warehouse is not None:
        ranges = _file_ranges(warehouse)

    kept: list[dict[int, SchemaVersion]] = []  # read once, on first use

    def kept_version(number: int) -> SchemaVersion | None:  # read only by REVERT TO VERSION
        """The committed version `number` (not a cancelled job's), None once GC collected it."""
        if not kept:
            kept.append({v.version: v for v in catalog.schema_versions(table_id)})
        return kept[0].get(number)

    snapshots = []

    def stored_range(column_id: int):  # read only by a REVERT of a widening
        if ranges is None:
            return None
        for attempt in range(2):  # a file compacted away meanwhile: once more, on a fresh snapshot
            if attempt or not snapshots:
                snapshots[:] = [catalog.snapshot_by_id(table_id)]
            try:
                return ranges.of_snapshot(snapshots[0], column_id)
            except FileNotFoundError:
                continue
        return None  # unknown: a rewrite

    return TableContext(
        name=context.table.name,
        current=version,
        next_column_id=context.table.next_column_id,
        view_uses=context.view_uses,
        active_job=_unfinished(job) if job else None,
        versions=kept_version,
        stored_range=stored_range,
    )


def _unfinished(job: AlterJob) -> str:
    """How the planner names the table's unfinished job: an orphan says how to take it over."""
    if is_orphaned(job):
        return f"job {job.id} ({job.state}, {runner_text(job)}; RESUME ALTER TABLE COLUMN FROM {job.table_name} drives it on)"
    return f"job {job.id} ({job.state})"


def plan(catalog: Catalog, request: AlterRequest, version: SchemaVersion | None = None, warehouse: pathlib.Path | None = None) -> AlterPlan:
    stmt = parse_alter(request)
    return plan_alter(table_context(catalog, request.table, version, warehouse), stmt)


def validate(catalog: Catalog, request: AlterRequest, group: str | None = None, warehouse: pathlib.Path | None = None) -> ValidatedPlan:
    """The plan, or a rejection. With `job_id`: the request takes over that orphaned job."""
    context = _alter_context(catalog, request.table)
    job = resumable_job(context, request, group)
    if job is not None:
        return ValidatedPlan(JobKind.HEAVY, job.from_version, job.to_version, job_id=job.id)
    result = plan_alter(planner_context(catalog, context, context.current, warehouse), parse_alter(request))
    result.raise_if_rejected()
    if result.kind is Verdict.HEAVY and warehouse is not None:  # a rewrite writes files: refused before its job exists
        from alterflow.store.warehouse_kinds import open_warehouse

        open_warehouse(warehouse, catalog).check_owner(claim=False)
    if result.kind is Verdict.HEAVY and result.properties.engine == Engine.LOCAL:
        refusal = local_refusal(*catalog.table_stats(context.table.id))
        if refusal:
            raise AlterRejected(f"ALTER TABLE {request.table}: {refusal}; nothing was changed")
    return ValidatedPlan(
        JobKind(result.kind.value),
        result.old.version,
        result.new.version,
        tuple((c.text, c.verdict.value, c.reason) for c in result.clauses),
    )


def replan(
    catalog: Catalog,
    request: AlterRequest,
    validated: ValidatedPlan,
    kind: Verdict,
    step: str,
    warehouse: pathlib.Path | None = None,
    ranges: FileRanges | None = None,
):
    """(table, plan) planned again against the version `validate` saw: a step may run in another
    process, and the compare-and-set on that version refuses it if the table moved meanwhile."""
    # One catalog read: the table, the version validated against and the planner's context.
    context = catalog.alter_context(request.table, validated.from_version)
    result = plan_alter(planner_context(catalog, context, context.base, warehouse, ranges), parse_alter(request))
    result.raise_if_rejected()
    if result.kind is not kind:
        # The plan can only change kind with the files (a REVERT of a widening): run it again.
        raise AlterRejected(
            f"ALTER TABLE {request.table}: it is a {result.kind.value.lower()}weight change now (the table's files changed "
            f"since it was planned), but the {step} step runs {kind.value.lower()}weight ones; run it again; nothing was applied"
        )
    return context.table, result


def commit(catalog: Catalog, request: AlterRequest, validated: ValidatedPlan, warehouse: pathlib.Path | None = None) -> CommittedJob:
    """Commit a lightweight change planned against `validated.from_version` (compare-and-set)."""
    job = commit_job(catalog, request, validated, warehouse)
    log.info("job %s committed as metadata only: version %s of %s is current (%s)", job.id, job.to_version, job.table_name, job.statement)
    return CommittedJob(job.id, job.state, job.to_version)


def _narrowed_values_fit(ranges: FileRanges | None, table: str, plan: AlterPlan):
    """The commit's check of a plan that reads columns narrower than the files store them: every
    stored value still fits (a load may have committed since the plan)."""

    def check(snapshot) -> None:
        for column_id in plan.narrowed:
            column = plan.new.column_by_id(column_id)
            stored = ranges.of_snapshot(snapshot, column_id) if ranges is not None else None
            low, high = integer_range(column.type)
            if stored is None or (stored[0] is not None and not (low <= stored[0] and stored[1] <= high)):
                raise AlterRejected(
                    f"ALTER TABLE {table}: column {column.name} now holds values that {column.type.sql()} cannot (a load committed "
                    "them since the statement was planned); run it again: it becomes a rewrite. Nothing was applied"
                )

    return check if plan.narrowed else None


def job_spec(request: AlterRequest, table: TableInfo, plan: AlterPlan) -> JobSpec:
    """What the job of `request` is recorded with, as `replan` planned it on `table`."""
    return JobSpec(
        request_id=request.request_id,
        table_id=table.id,
        table_name=table.name,
        old_version=plan.old.version,
        new=plan.new,
        next_column_id=plan.next_column_id,
        properties=plan.properties,
        timeout_s=plan.properties.timeout,
    )


def commit_job(catalog: Catalog, request: AlterRequest, validated: ValidatedPlan, warehouse: pathlib.Path | None = None) -> AlterJob:
    """`commit`, returning the job itself (the embedded runner needs no second read of it)."""
    existing = catalog.job_by_request(request.request_id)
    if existing is not None:
        return existing

    def attempt(plan: ValidatedPlan) -> AlterJob:
        ranges = _file_ranges(warehouse) if warehouse is not None else None  # footers read once, before the lock
        info, result = replan(catalog, request, plan, Verdict.LIGHT, "commit", warehouse, ranges)
        return catalog.commit_light_alter(
            job_spec(request, info, result), steps=LIGHT_STEPS, check_files=_narrowed_values_fit(ranges, info.name, result)
        )

    return retry_on_table_moved(catalog, request, validated, "commit", attempt, warehouse)


def retry_on_table_moved(
    catalog: Catalog,
    request: AlterRequest,
    validated: ValidatedPlan,
    step: str,
    attempt: Callable[[ValidatedPlan], T],
    warehouse: pathlib.Path | None = None,
    group: str | None = None,
) -> T:
    """`attempt(validated)`. When another change committed first (TableMoved), the statement is
    validated again on the table's current version and tried again, as long as it still applies
    and is still of the kind `step` runs, up to PLAN_ATTEMPTS plans in all: five ADD COLUMNs
    triggered at once all commit, one after another. A statement with `expected_version` fails
    instead: it asked for exactly that version."""
    planned = 1
    while True:
        try:
            return attempt(validated)
        except TableMoved:
            if planned == PLAN_ATTEMPTS or "expected_version" in {k.lower() for k in parse_alter(request).properties}:
                raise
        planned += 1
        log.info("ALTER TABLE %s: another change committed first; planned again on the current version", request.table)
        kind, validated = validated.kind, validate(catalog, request, group, warehouse)
        if validated.job_id is not None:  # the table's job now is this very ALTER's, orphaned: it is not started twice
            raise AlterRejected(
                f"ALTER TABLE {request.table}: another change committed first, and job {validated.job_id} of the same statement "
                f"is unfinished with nobody driving it; RESUME ALTER TABLE COLUMN FROM {request.table} drives it on; nothing was applied"
            )
        if validated.kind is not kind:
            raise AlterRejected(
                f"ALTER TABLE {request.table}: another change committed first, and on the new version this is a "
                f"{validated.kind.value.lower()}weight change, but the {step} step runs {kind.value.lower()}weight ones; "
                "run it again; nothing was applied"
            )
