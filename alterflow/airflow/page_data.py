"""Alter jobs, tables, schema versions and the migrations directory as JSON-ready dicts: what the
"Schema changes" page shows and what its JSON API returns (one shape for both). No Airflow import.

Times are UTC, ISO 8601 with a `Z`; durations are seconds (a running job's duration so far).
"""

from __future__ import annotations

import pathlib
import re
from datetime import datetime

from alterflow.catalog.catalog import AlterJob, Catalog, TableInfo
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.job_leases import DRIVEN_STATES, is_orphaned, runner_text, shown_holder
from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.states import JobKind, JobState, OnCastError
from alterflow.errors import UserError, first_line
from alterflow.store.quarantine import quarantine_table_name
from alterflow.values.types import format_value
from alterflow.workflow.job_control import can_cancel, can_resume

_TABLETS = re.compile(r"tablets (\d+)/(\d+)")
_RATE_AND_ETA = re.compile(r", [^,]* MB/s, ETA .*$")


def utc_text(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="seconds") + "Z"


def tablets_progress(progress: str) -> dict | None:
    """`tablets 3/4, rows 1.2M/3.0M, 41.0 MB/s, ETA 0:00:44` -> {"done": 3, "total": 4}; None
    before the job is RUNNING."""
    found = _TABLETS.search(progress or "")
    if found is None:
        return None
    return {"done": int(found.group(1)), "total": int(found.group(2))}


def jobs_json(catalog: Catalog, jobs: list[AlterJob], now: datetime) -> list[dict]:
    """`job_json` of each job, with the rows each quarantining job has quarantined (one query)."""
    quarantining = [j.id for j in jobs if j.properties.on_cast_error == OnCastError.QUARANTINE]
    counts = HeavyJobs(catalog).quarantined_by_job(quarantining)
    return [job_json(j, now, counts.get(j.id, 0) if j.id in quarantining else None) for j in jobs]


def shown_progress(job: AlterJob) -> str:
    """The job's progress as the page shows it: once the job has ended, without the rate and the
    ETA ("tablets 3/4, rows 1.2M/3.0M"), and "stopped at ..." for a cancelled job."""
    if job.finished_at is None or not job.progress:
        return job.progress
    done = _RATE_AND_ETA.sub("", job.progress)
    return f"stopped at {done}" if job.state == JobState.CANCELLED else done


def job_json(job: AlterJob, now: datetime, quarantined: int | None = None) -> dict:
    """One job; `quarantined`: the rows it has quarantined so far (None: it does not quarantine).
    Its duration leaves out the time it waited for a person's swap (READY_TO_SWAP); a runner and
    a lease only while a runner drives it; tablets (the progress bar) not for a cancelled job."""
    end = job.finished_at or now
    driven = job.state in DRIVEN_STATES
    analyzable = job.kind == JobKind.HEAVY and job.finished_at is None  # EXPLAIN ANALYZE of its conversion
    actions = [name for name, allowed in (("cancel", can_cancel(job)), ("resume", can_resume(job)), ("analyze", analyzable)) if allowed]
    return {
        "job_id": job.id,
        "request_id": job.request_id,  # an Airflow run's id, for the jobs a run of alterflow_schema_change made
        "table": job.table_name,
        "table_id": job.table_id,
        "kind": job.kind,
        "state": job.state,
        "statement": job.statement,
        "from_version": job.from_version,
        "schema_version": job.to_version,
        "boundary_txn": job.boundary_txn,
        "msg": job.msg,
        "progress": shown_progress(job),
        "tablets": None if job.state == JobState.CANCELLED else tablets_progress(job.progress),
        "steps": list(job.steps),
        "properties": job.properties.to_json(),
        "timeout_s": job.timeout_s,
        "created_at": utc_text(job.created_at),
        "finished_at": utc_text(job.finished_at),
        "duration_s": max(0.0, round((end - job.created_at).total_seconds() - job.waiting_for_swap_s(end), 3)),
        # A postponed swap: since when the job waits for someone to swap it, and how long it waited in all.
        "waiting_for_swap_since": utc_text(job.ready_to_swap_at) if job.state == JobState.READY_TO_SWAP else None,
        "swap_wait_s": round(job.waiting_for_swap_s(end), 3),
        "actions": actions,
        # Who drives the job (docs/heavyweight.md): "driven by host:pid since ...", "no runner since ...", or "".
        "runner": runner_text(job, now),
        "orphaned": is_orphaned(job, now),
        "lease_holder": shown_holder(job.lease_holder) if driven and job.lease_holder else None,
        "lease_expires_at": utc_text(job.lease_expires_at) if driven else None,
        # on_cast_error = quarantine: the quarantine table and the rows this job has put there.
        "quarantine": None if quarantined is None else {"table": quarantine_table_name(job.table_name), "rows": quarantined},
    }


def table_json(table: TableInfo, unfinished_job: AlterJob | None) -> dict:
    return {
        "table": table.name,
        "table_id": table.id,
        "current_version": table.current_version,
        "created_at": utc_text(table.created_at),
        "unfinished_job_id": unfinished_job.id if unfinished_job is not None else None,
    }


def _default(value, column) -> str | None:
    return None if value is None else format_value(value, column.type)


def column_json(version: SchemaVersion, column) -> dict:
    roles = [
        role
        for role, ids in (
            ("primary key", version.primary_key),
            ("partition", version.partition_by),
            ("distribution", version.distributed_by),
            ("sort", version.sort_key),
        )
        if column.id in ids
    ]
    return {
        "id": column.id,
        "name": column.name,
        "type": column.type.sql(),
        "nullable": column.nullable,
        "key": column.id in version.primary_key,
        "roles": roles,
        "default": _default(column.write_default, column),
        "initial_default": _default(column.initial_default, column),
        "comment": column.comment,
    }


def version_json(version: SchemaVersion, current_version: int) -> dict:
    return {
        "version": version.version,
        "current": version.version == current_version,
        "created_at": utc_text(version.created_at),
        "statement": version.statement,
        "columns": [column_json(version, c) for c in version.columns],
        "primary_key": version.names(version.primary_key),
        "partition_by": version.names(version.partition_by),
        "distributed_by": version.names(version.distributed_by),
        "buckets": version.buckets,
        "sort_key": version.names(version.sort_key),
    }


API_SERVER_MIGRATIONS = "ALTERFLOW_MIGRATIONS of the api-server, default ./migrations"


def migrations_json(
    catalog: Catalog, directory: pathlib.Path, warehouse: pathlib.Path | None = None, source: str = API_SERVER_MIGRATIONS
) -> dict:
    """The migrations directory as the Migrations section shows it: every file with its state and
    the drift (`alterflow migrate status --format json`), and the pending statements planned in
    order with the project's rules (`alterflow migrate lint --format json`, without the analysis,
    which reads the tables' data). A directory that is not there, or that the core refuses (a bad
    file name, an unknown rule), is one line in `message` or `lint_error`; nothing is raised."""
    from alterflow.migrate.lint import lint_migrations
    from alterflow.migrate.rules import load_rules
    from alterflow.migrate.status import migration_status

    model = {
        "directory": str(directory),
        "path": str(directory.absolute()),
        "source": source,  # where the directory comes from: the latest alterflow_migrate run, or the api-server's setting
        "exists": directory.is_dir(),
        "message": None,
        "migrations": [],
        "drift": [],
        "baseline": None,
        "lint": None,
        "lint_error": None,
    }
    if not model["exists"]:
        model["message"] = f"no migrations directory at {model['path']} ({source})"
        return model
    try:
        status = migration_status(catalog, directory)
    except UserError as exc:
        model["message"] = first_line(exc)
        return model
    model.update(status.as_json())
    try:
        rules = load_rules(directory, from_cwd=False)  # the rules beside the directory, not the api-server's
        model["lint"] = lint_migrations(catalog, directory, rules, warehouse, status=status).as_json()
    except UserError as exc:
        model["lint_error"] = first_line(exc)
    return model
