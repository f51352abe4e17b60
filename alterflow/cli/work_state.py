"""What an interrupted `alterflow` command leaves, read back from the catalog, and the command that
continues it: the rest of the line `alterflow.cli.signals.interrupted` prints. Each function is
called after the work has unwound (a load's transaction aborted, a job's lease released)."""

from __future__ import annotations

import pathlib

from alterflow import sql as ast
from alterflow.catalog.states import JobKind, JobState, TransactionState
from alterflow.cli.signals import again, holder_prefix
from alterflow.errors import shown

_QUERIES = (ast.Select, ast.ExplainSelect, ast.Describe, ast.ShowAlter, ast.ShowSchemaVersions, ast.SetOption)


def sql_state(session, number: int, total: int, text: str) -> str:
    """`alterflow sql` stopped in its statement `number` (`text`) of `total`."""
    said = [f"the {number - 1} statement(s) before it are done"] if number > 1 else []
    said += [f"the {total - number} after it did not run"] if number < total else []
    after = ", ".join(said) or "it was the only statement"
    try:
        statement = ast.parse_statements(text)[0]
    except ast.SqlError:
        return f"statement {number} had not started: nothing of it changed; {after}"
    if isinstance(statement, _QUERIES) or (isinstance(statement, ast.AlterTable) and statement.explain):
        return f"statement {number} only reads: nothing of it changed; {after}"
    if not session.catalog_opened:  # stopped in its imports, say
        return f"statement {number} stopped before it changed anything; run it again; {after}"
    if isinstance(statement, ast.AlterTable | ast.ResumeAlter):
        return f"{_alter_state(session, statement)}; {after}"
    if isinstance(statement, ast.Insert):
        name = session.catalog.table(statement.table).name
        return f"statement {number}: {load_outcome(session, name, f'insert into {name}', 'the INSERT')}; {after}"
    return (
        f"statement {number} takes effect whole or not at all (one catalog transaction): see whether it did "
        f"(SHOW, DESCRIBE) before running it again; {after}"
    )


def _alter_state(session, statement) -> str:
    from alterflow.catalog.job_leases import DRIVEN_STATES

    catalog = session.catalog
    info = catalog.table(statement.table)
    name = info.name
    resume = f'alterflow sql -e "RESUME ALTER TABLE COLUMN FROM {name}"'
    request = session.alter_request
    job = None
    if isinstance(statement, ast.AlterTable) and request is not None and request.table == statement.table:
        job = catalog.job_by_request(request.request_id)
    job = job or catalog.active_job(info.id)
    if job is None:
        return f"ALTER TABLE {name} stopped before it changed anything; run it again"
    if session.settings.airflow_url and job.state in DRIVEN_STATES:
        return (
            f"ALTER TABLE {name}: job {job.id} goes on in its Airflow DAG run ({job.state}); SHOW ALTER TABLE COLUMN FROM {name} follows it"
        )
    if job.kind == JobKind.LIGHT or job.state == JobState.FINISHED:
        return f"ALTER TABLE {name}: job {job.id} {job.state} before the interrupt, schema version {job.to_version}; nothing to run again"
    if job.state == JobState.READY_TO_SWAP:
        return f"ALTER TABLE {name}: job {job.id} is READY_TO_SWAP, nothing of it visible yet; swap it with: {resume}"
    if job.state == JobState.CANCELLED:
        return f"ALTER TABLE {name}: job {job.id} is CANCELLED, nothing of it is visible"
    _release_own_lease(catalog, job)
    return (
        f"ALTER TABLE {name}: job {job.id} stopped in {job.state} with its lease released, nothing of it visible yet; "
        f"continue it with: {resume} (or CANCEL ALTER TABLE COLUMN FROM {name})"
    )


def _release_own_lease(catalog, job) -> None:
    """A lease this process still holds on `job` (taken by the step that started it, before the
    runner's own): let it go, so RESUME takes the job over at once."""
    from alterflow.catalog.job_leases import JobLeases

    holder = job.lease_holder
    if holder is not None and holder.startswith(holder_prefix()):
        JobLeases(catalog).release(job.id, holder)


def load_outcome(session, table: str, label: str, what: str) -> str:
    """Whether this process's load of `table` labelled `label` committed or was aborted."""
    from alterflow.catalog.labelled_loads import loads_by_holder

    catalog = session.catalog
    loads = loads_by_holder(catalog, catalog.table(table).id, label, holder_prefix())
    if not loads:
        return f"{what} into {table} had not begun, nothing of it is visible; run it again"
    txn_id, state = loads[-1]
    if state == TransactionState.COMMITTED:
        return f"{what} into {table} committed (transaction {txn_id}) before the interrupt, its rows are visible; do not run it again"
    if state == TransactionState.PREPARE:  # its own abort did not happen (a second signal): abort it now
        catalog.abort_transaction(txn_id, "the load was interrupted")
    return f"{what} into {table} was aborted (transaction {txn_id}), none of its rows are visible; run it again"


def load_state(session, table: str, label: str) -> str:
    """`alterflow load` stopped."""
    if not session.catalog_opened:
        return f"the load into {table} had not begun, nothing of it is visible; run it again: {again()}"
    return f"{load_outcome(session, session.catalog.table(table).name, label, 'the load')}: {again()}"


def apply_state(session, directory: pathlib.Path) -> str:
    """`alterflow migrate apply` stopped: which statement was running; apply again continues."""
    from alterflow.catalog.migration_history import RUNNING
    from alterflow.migrate.status import migration_status

    status = migration_status(session.catalog, directory)
    if not status.pending:
        return "every migration file is applied; nothing to run again"
    running = next((f"{m.script} line {s.line} was running; " for m in status.history for s in m.statements if s.state == RUNNING), "")
    return f"migrate apply stopped; {running}what it finished stays applied and nothing is half visible; continue with: {again()}"


def gc_state(last_step: str | None) -> str:
    """`alterflow gc` stopped after `last_step` (None: before its first step ended)."""
    where = f"after its step {shown(last_step)}" if last_step else "in its first step"
    return f"alterflow gc stopped {where}; what it finished stays done and nothing is half visible; run it again: {again()}"
