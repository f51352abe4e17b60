"""The one line a failed run of alterflow's DAGs failed with, kept where a user looks for it.

- In the task: a refusal (`UserError`, `tasks.refusals_fail_the_task`) is logged as that one line
  and pushed as the task's XCom `alterflow_failure` before the task fails.
- On the run: when a run of an alterflow DAG fails, the scheduler's listener (`on_dag_run_failed`,
  registered by the plugin) writes the line into the run's note, the text the Airflow UI shows on
  the run's page and in its list of runs. A note someone already wrote is left alone.
- On the Schema changes page: runs of `alterflow_schema_change` that failed before they made a job
  (at validate or plan: no job, so no row among the jobs) are listed with that line and a link to
  the run (`failed_runs_without_job`); every job an Airflow run made links to that run (a run's id
  is its job's request id: `runs_among`).

Reads and writes Airflow's metadata database: the api-server (the page) and the scheduler (the
listener) have it; a task reaches Airflow only through the Task SDK (the XCom push).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from airflow.listeners import hookimpl

log = logging.getLogger(__name__)

FAILURE_KEY = "alterflow_failure"  # the XCom a refused task leaves its line in
SCHEMA_CHANGE_DAG = "alterflow_schema_change"
ALTERFLOW_DAGS = frozenset({SCHEMA_CHANGE_DAG, "alterflow_migrate", "alterflow_gc"})
NOTE_LIMIT = 1000  # Airflow's dag_run_note.content is a String(1000)
FAILED_RUNS_SHOWN = 50  # the newest failed runs without a job the page lists
IN_LIST = 500  # ids per IN list


def record_failure(line: str) -> None:
    """Log `line` and, inside an Airflow task, push it as the task's `FAILURE_KEY` XCom (outside
    a task, as in a test calling a task body, only the log)."""
    from alterflow.airflow.task_context import running_task_instance

    log.error("%s", line)
    ti = running_task_instance()
    if ti is None:  # not in a task
        return
    try:
        ti.xcom_push(key=FAILURE_KEY, value=line)
    except Exception as exc:  # noqa: BLE001 - the refusal must still fail the task, not a failed push retry it
        log.warning("the failure line was not kept for the run's note: %s", exc)


def failure_lines(session, dag_id: str, run_ids: list[str]) -> dict[str, str]:
    """The line each of `run_ids` (runs of `dag_id`) failed with, where a task recorded one."""
    from airflow.models.xcom import XComModel
    from sqlalchemy import select

    if not run_ids:
        return {}
    rows = session.execute(
        select(XComModel.run_id, XComModel.value)
        .where(XComModel.dag_id == dag_id, XComModel.run_id.in_(run_ids), XComModel.key == FAILURE_KEY)
        .order_by(XComModel.timestamp)
    ).all()
    lines: dict[str, str] = {}
    for run_id, value in rows:
        lines.setdefault(run_id, str(XComModel.deserialize_value(_Stored(value))))
    return lines


@dataclass(frozen=True)
class _Stored:
    """What `XComModel.deserialize_value` reads: an object with the stored `value`."""

    value: object


@hookimpl
def on_dag_run_failed(dag_run, msg: str) -> None:
    """The listener: a failed run of an alterflow DAG gets its failure line as its note. In the
    scheduler the run is in the scheduler's session (which holds its row: a second session would
    wait for it) and the note goes with the scheduler's commit; a run handed over detached (as
    `dag.test()` does) is noted in a session of its own."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy.orm import object_session

    if dag_run.dag_id not in ALTERFLOW_DAGS:
        return
    session = object_session(dag_run)
    if session is not None:  # no savepoint: the scheduler forbids any commit, a nested one's too, in this section
        _note_failure(session, dag_run)
        return
    with create_session() as own:
        run = own.get(DagRun, dag_run.id)
        if run is not None:
            _note_failure(own, run)


def _note_failure(session, dag_run) -> None:
    if dag_run.note:  # someone's note stays
        return
    line = failure_lines(session, dag_run.dag_id, [dag_run.run_id]).get(dag_run.run_id)
    if line:
        dag_run.note = line if len(line) <= NOTE_LIMIT else line[: NOTE_LIMIT - 1] + "…"


@dataclass(frozen=True)
class FailedRun:
    """A run of `alterflow_schema_change` that failed before it made a job."""

    run_id: str
    table: str
    statement: str
    line: str  # the run's note, else its failure line, else what Airflow knows
    failed_at: datetime | None  # naive UTC, as the catalog's times


def _naive_utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


def _conf_text(conf: object, key: str) -> str:
    value = conf.get(key) if isinstance(conf, dict) else None
    return value if isinstance(value, str) else ""


def _run_table(conf: object) -> str:
    """The table a run of alterflow_schema_change alters: its `table`, else the one its statement names."""
    from alterflow.airflow.conf import BadRunConf, statement_table

    table = _conf_text(conf, "table").strip()
    if table or not _conf_text(conf, "statement").strip():
        return table
    try:
        return statement_table(_conf_text(conf, "statement"))
    except BadRunConf:
        return ""


def failed_runs_without_job(request_ids: set[str], table: str | None = None, limit: int = FAILED_RUNS_SHOWN) -> list[FailedRun]:
    """The newest failed runs of `alterflow_schema_change` whose id is no job's request id (they
    failed before making one), only `table`'s when given. A run that was to take an orphaned job
    over (`resume_job_id`) is left out: its job is the orphan, under the id of the run that made it."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from sqlalchemy import select
    from sqlalchemy.orm import selectinload

    with create_session() as session:
        found = session.scalars(
            select(DagRun)
            .where(DagRun.dag_id == SCHEMA_CHANGE_DAG, DagRun.state == DagRunState.FAILED)
            .options(selectinload(DagRun.dag_run_note))
            .order_by(DagRun.id.desc())
            .limit(limit + len(request_ids))
        ).all()
        runs = [(r, _run_table(r.conf)) for r in found if r.run_id not in request_ids and not (r.conf or {}).get("resume_job_id")]
        if table is not None:
            runs = [(r, name) for r, name in runs if name.lower() == table.lower()]
        runs = runs[:limit]
        lines = failure_lines(session, SCHEMA_CHANGE_DAG, [r.run_id for r, _name in runs])
        return [
            FailedRun(
                run.run_id,
                name,
                _conf_text(run.conf, "statement"),
                run.note or lines.get(run.run_id) or "failed before it made a job; the task logs say why",
                _naive_utc(run.end_date),
            )
            for run, name in runs
        ]


def runs_among(request_ids: list[str]) -> set[str]:
    """Which of `request_ids` are ids of `alterflow_schema_change` runs (the jobs they made link to them)."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    found: set[str] = set()
    with create_session() as session:
        for start in range(0, len(request_ids), IN_LIST):  # a bounded IN list (SQLite caps its variables)
            chunk = request_ids[start : start + IN_LIST]
            found |= set(session.scalars(select(DagRun.run_id).where(DagRun.dag_id == SCHEMA_CHANGE_DAG, DagRun.run_id.in_(chunk))))
    return found


MIGRATE_DAG = "alterflow_migrate"
MIGRATE_RUNS_READ = 20  # the newest alterflow_migrate runs whose directories the page lists


def migrate_directories(limit: int = MIGRATE_RUNS_READ) -> list[str]:
    """The migrations directories the newest `alterflow_migrate` runs read, newest first, each once:
    the absolute directory its lint task resolved and returned. A run whose lint refused its
    directory (a typo, a missing folder) names none: a run's conf alone never chooses what the
    api-server reads."""
    from airflow.models.dagrun import DagRun
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        recent = session.scalars(select(DagRun.run_id).where(DagRun.dag_id == MIGRATE_DAG).order_by(DagRun.id.desc()).limit(limit)).all()
        summaries = session.execute(
            select(XComModel.run_id, XComModel.value).where(
                XComModel.dag_id == MIGRATE_DAG,
                XComModel.task_id == "lint",
                XComModel.key == "return_value",
                XComModel.run_id.in_(recent),
            )
        ).all()
    read = {}
    for run_id, value in summaries:
        summary = XComModel.deserialize_value(_Stored(value))
        if isinstance(summary, dict) and isinstance(summary.get("directory"), str) and summary["directory"].startswith("/"):
            read[run_id] = summary["directory"]
    directories: list[str] = []
    for run_id in recent:
        if run_id in read and read[run_id] not in directories:
            directories.append(read[run_id])
    return directories
