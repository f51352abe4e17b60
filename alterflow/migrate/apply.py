"""`alterflow migrate apply [--to V] [--dry-run]`, `baseline V` and `repair` (docs/migrations.md).

Apply runs the pending files in version order, each statement through the same path as
`alterflow sql` (`Session.execute`: the embedded runner, or a DAG run of alterflow_schema_change
when ALTERFLOW_AIRFLOW_URL is set), under the catalog's apply lease (one apply at a time).

No statement ever runs twice. Before a statement runs, its history row is written RUNNING with the
request id it runs under (an ALTER's job request and DAG run id, an INSERT's transaction label);
after, DONE with what it made. An apply that is killed in between leaves the row RUNNING, and the
next apply finds the statement's effect by that id instead of running it again: an ALTER's job is
resumed (after the dead runner's lease runs out, as RESUME does) or taken as done; a CREATE or
DROP is found in the catalog by name and time; an INSERT by its committed transaction's label.

Refused in one line, before anything runs: an applied file that was edited or deleted (until
`repair`), a file `repair` marked DELETED that is back (until `repair`), a FAILED file (fix it,
`repair`, apply again), a pending file below an applied version (unless out_of_order is on: then
it runs and is reported), a history version above every file when `future = "error"` (by default
a warning), a statement already done whose text changed, `--to` a version no file has, and any
pending statement the in-order plan rejects.
"""

from __future__ import annotations

import functools
import getpass
import pathlib
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from alterflow import sql as ast
from alterflow.catalog.catalog import Catalog
from alterflow.catalog.catalog_errors import LeaseHeld
from alterflow.catalog.job_leases import shown_holder
from alterflow.catalog.migration_history import (
    APPLIED,
    APPLYING,
    BASELINE,
    DELETED,
    DONE,
    FAILED,
    RUNNING,
    MigrationHistory,
    MigrationLeaseHeld,
    RecordedStatement,
)
from alterflow.catalog.repeatable_history import RepeatableHistory
from alterflow.catalog.schema import name_key
from alterflow.crash_points import crash_point
from alterflow.errors import UserError, first_line, raise_interrupt_behind
from alterflow.held_leases import Renewal, new_holder
from alterflow.migrate.config import MigrateConfig
from alterflow.migrate.migration_files import MigrationFile, version_key
from alterflow.migrate.plan import REJECTED, StatementPlan, plan_pending
from alterflow.migrate.repeatable import RepeatableStatus, created_views, parse_repeatable
from alterflow.migrate.status import MigrationStatus, migration_status
from alterflow.settings import RENEWALS_PER_LEASE

POLL_S = 1.0


class MigrationRefused(UserError):
    """apply, baseline or repair cannot go on; the line names the file. Nothing (more) changed."""


class MigrationFailed(UserError):
    """A statement failed: its file is FAILED with the error, the statements before it stay done."""


def installed_by() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def new_request_id() -> str:
    """A migration statement's request id: also a valid, unique Airflow DAG run id."""
    return f"alterflow__{uuid.uuid4().hex}"


@dataclass
class ApplyResult:
    applied: list[str] = field(default_factory=list)  # scripts finished by this apply
    statements: int = 0  # statements run (or found done after a kill) by this apply
    tables: set[str] = field(default_factory=set)  # tables a statement changed (asset events)
    planned: list[StatementPlan] = field(default_factory=list)  # dry run: what would run
    out_of_order: list[str] = field(default_factory=list)  # lines "applied out of order: V2.5 below applied V3"
    warnings: list[str] = field(default_factory=list)  # drift apply went past (future versions)


def _check_apply(status: MigrationStatus) -> None:
    """Refuse what an apply must not go over (see the module docstring)."""
    for drift in status.blocking():
        raise MigrationRefused(f"migrate apply: {drift.detail}; nothing was applied")
    for file in status.pending:
        recorded = status.recorded(file.version)
        if recorded is None:
            continue
        if recorded.state == FAILED:
            raise MigrationRefused(
                f"migrate apply: {file.script} FAILED: {recorded.error} — fix it, run `alterflow migrate repair`, then apply again; nothing was applied"
            )
        for done in recorded.statements:
            if done.state != DONE:
                continue
            now = file.statements[done.position - 1] if done.position <= len(file.statements) else None
            if now is None or now.text_hash != done.text_hash:
                raise MigrationRefused(
                    f"migrate apply: {file.script} statement {done.position} (line {done.line}) was already applied with another text; "
                    "a statement that ran must keep its text (put a change in a new file); nothing was applied"
                )


def _out_of_order_line(file: MigrationFile, status: MigrationStatus) -> str:
    return f"applied out of order: V{file.version} below applied V{status.out_of_order[file.script]}"


def _select_to(pending: list[MigrationFile], status: MigrationStatus, to: str | None) -> list[MigrationFile]:
    if to is None:
        return pending
    try:
        key = version_key(to)
    except ValueError:
        raise MigrationRefused(f"migrate apply: --to {to!r} is not a version (numbers, dotted allowed)") from None
    if not any(f.key == key for f in status.files):
        raise MigrationRefused(f"migrate apply: --to {to}: no migration file has version {to}")
    return [f for f in pending if f.key <= key]


def _refuse_rejected(plans: list[StatementPlan]) -> None:
    """Refuse the apply (and its dry run, with the same line) when the in-order plan rejects a
    pending statement."""
    rejected = next((p for p in plans if p.kind == REJECTED), None)
    if rejected is not None:
        raise MigrationRefused(f"migrate apply: {rejected.script} line {rejected.statement.line}: {rejected.reason}; nothing was applied")


# The statements that make or drop an object, with the words their line starts with and the
# migration history's question of whether that happened since a time.
OBJECT_RECORDS = {
    ast.CreateTable: ("CREATE TABLE", MigrationHistory.table_created_since),
    ast.DropTable: ("DROP TABLE", MigrationHistory.table_dropped_since),
    ast.CreateView: ("CREATE VIEW", MigrationHistory.view_created_since),
    ast.DropView: ("DROP VIEW", MigrationHistory.view_dropped_since),
}


class MigrationApply:
    """One `migrate apply`. `session` runs the statements (an `alterflow.engine.session.Session`)."""

    def __init__(
        self,
        session,
        directory: pathlib.Path,
        who: str | None = None,
        on_line: Callable[[str], None] = print,
        lease_s: float | None = None,
        approve_rules=None,
        config: MigrateConfig | None = None,
    ):
        self.session = session
        self.catalog: Catalog = session.catalog
        self.history = MigrationHistory(self.catalog)
        self.directory = directory
        self.who = who or installed_by()
        self.on_line = on_line
        self.lease_s = lease_s if lease_s is not None else session.settings.lease_s
        self.holder = new_holder()
        self._renewal: Renewal | None = None
        self.result = ApplyResult()
        self.approve_rules = approve_rules  # LintRules: print the findings this apply approves
        self.config = config  # [tool.alterflow.migrate] (None: read from the project's pyproject.toml)

    # -- entry -------------------------------------------------------------------------------
    def run(self, to: str | None = None, dry_run: bool = False) -> ApplyResult:
        status = migration_status(self.catalog, self.directory, self.config)
        self.config = status.config
        _check_apply(status)
        files = _select_to(status.pending, status, to)
        result = self.result = ApplyResult()
        for drift in status.warnings():
            result.warnings.append(drift.detail)
            self.on_line(f"warning: {drift.detail}")
        if dry_run:
            result.planned = plan_pending(self.catalog, files, self.session.warehouse, status.done_statements, status.pending_repeatables)
            result.out_of_order = [_out_of_order_line(f, status) for f in files if f.script in status.out_of_order]
            _refuse_rejected(result.planned)
            return result
        if not files and not status.pending_repeatables:
            return result
        self._take_lease()
        try:
            status = migration_status(self.catalog, self.directory, self.config)  # again, under the lease
            _check_apply(status)
            files = _select_to(status.pending, status, to)
            self._finish_running(status, files, result)
            status = migration_status(self.catalog, self.directory, self.config)
            plans = plan_pending(self.catalog, files, self.session.warehouse, status.done_statements, status.pending_repeatables)
            _refuse_rejected(plans)
            self._say_approved(plans)
            for file in files:
                self._apply_file(file, status, result)
                if file.script in status.out_of_order:
                    result.out_of_order.append(_out_of_order_line(file, status))
                    self.on_line(result.out_of_order[-1])
            RepeatableApply(self).run(status.repeatables)  # after the versioned files, as in Flyway
        finally:
            self._release_lease()
        return result

    def _say_approved(self, plans: list[StatementPlan]) -> None:
        """With `approve_rules` (the CLI): the person running apply is the approver of what the
        rules say needs one; each such finding is printed before anything runs, not asked."""
        if self.approve_rules is None:
            return
        from alterflow.migrate.lint import findings_of

        for plan in plans:
            for finding in findings_of(plan, self.approve_rules):
                if finding.level == "approve":
                    self.on_line(
                        f"{plan.script}:{plan.statement.line} approve {finding.rule}: {finding.message} "
                        f"(approved by {self.who}, who runs this apply)"
                    )

    # -- the lease ---------------------------------------------------------------------------
    def _take_lease(self) -> None:
        """Take the apply lease. While another apply holds it: wait while its expiry stays put
        (an apply that died: its lease runs out), refuse once it is renewed (one that lives)."""
        seen = None
        while True:
            state = self.history.acquire_lease(self.holder, self.lease_s)
            if state.holder == self.holder:
                break
            if seen is not None and state.expires_at != seen:
                raise MigrationLeaseHeld(
                    f"migrate apply: another apply is running on this catalog ({shown_holder(state.holder)}, "
                    f"lease until {state.expires_at:%H:%M:%S} UTC); nothing was applied"
                )
            if seen is None:
                self.on_line(
                    f"waiting for the apply lease of {shown_holder(state.holder)} (until {state.expires_at:%H:%M:%S} UTC): "
                    "an apply that stopped lets it run out"
                )
            seen = state.expires_at
            time.sleep(POLL_S)
        self._renewal = Renewal(
            lambda: self.history.renew_lease(self.holder, self.lease_s), self.lease_s / RENEWALS_PER_LEASE, "lease-migrate-apply"
        ).start()

    def _release_lease(self) -> None:
        if self._renewal is not None:
            self._renewal.stop()
            self._renewal = None
        self.history.release_lease(self.holder)

    def _ensure_lease(self) -> None:
        if self._renewal is not None and self._renewal.lost:
            raise MigrationRefused("migrate apply: this apply lost the catalog's apply lease (another apply took it); it stopped")

    # -- statements --------------------------------------------------------------------------
    def _finish_running(self, status: MigrationStatus, files: list[MigrationFile], result: ApplyResult) -> None:
        """Statements a killed apply left RUNNING: their effect found, or their job driven to its end."""
        for file in files:
            recorded = status.recorded(file.version)
            if recorded is None:
                continue
            for row in recorded.statements:
                if row.state == RUNNING:
                    self._ensure_lease()
                    statement = file.statements[row.position - 1]
                    self.on_line(f"{file.script}:{statement.line} was running when an apply stopped; finding what it did")
                    self._run_statement(recorded.id, file, statement.position, row)
                    result.statements += 1

    def _apply_file(self, file: MigrationFile, status: MigrationStatus, result: ApplyResult) -> None:
        recorded = status.recorded(file.version)
        migration_id = recorded.id if recorded is not None and recorded.state == APPLYING else None
        if migration_id is None:
            migration_id = self.history.begin_file(file.version, file.description, file.script, file.checksum, self.who)
        done = {(s.position) for s in recorded.statements if s.state == DONE} if recorded is not None else set()
        for statement in file.statements:
            if statement.position in done:
                continue
            self._ensure_lease()
            self._run_statement(migration_id, file, statement.position, None)
            result.statements += 1
        self.history.finish_file(migration_id)
        result.applied.append(file.script)
        self.on_line(f"{file.script} APPLIED ({len(file.statements)} statement(s))")

    def _run_statement(self, migration_id: int, file: MigrationFile, position: int, running: RecordedStatement | None) -> None:
        statement = file.statements[position - 1]
        where = f"{file.script}:{statement.line}"
        try:
            parsed = ast.parse_statements(statement.text)[0]
        except ast.SqlError as exc:
            self._failed(migration_id, position, f"{where}: {exc}", record_statement=running is not None)
        if running is None:
            request_id = new_request_id()
            self.history.start_statement(migration_id, position, statement.line, statement.text_hash, request_id)
            try:
                message = self._execute(parsed, request_id)
            except Exception as exc:  # the statement failed: its file is FAILED, the apply stops
                self._failed(migration_id, position, f"{where}: {first_line(exc)}", cause=exc)
        else:
            request_id = running.request_id
            try:
                message = self._resume(parsed, statement.text, running)
            except Exception as exc:
                self._failed(migration_id, position, f"{where}: {first_line(exc)}", cause=exc)
        crash_point("migrate_statement_ran")
        table, table_id, job_id, version = self._made(parsed, request_id)
        self.history.finish_statement(migration_id, position, table, table_id, job_id, version)
        crash_point("migrate_statement_recorded")
        if table is not None:
            self.result.tables.add(table)
        self.on_line(f"{where} {message}")

    def _failed(self, migration_id: int, position: int, line: str, cause: Exception | None = None, record_statement: bool = True) -> None:
        """The file FAILED at `position`, and MigrationFailed raised. An error that an interrupt
        caused (a Ctrl-C or SIGTERM that cut a catalog query: psycopg cancels it and raises its own
        error) is that interrupt instead: raised again, nothing recorded, the statement left RUNNING
        for the next apply to find, as after a kill."""
        if cause is not None:
            raise_interrupt_behind(cause)
        self.history.fail(migration_id, position if record_statement else None, line)
        if cause is not None and not isinstance(cause, UserError):
            raise MigrationFailed(f"{line} (the file is FAILED)") from cause
        raise MigrationFailed(f"{line} (the file is FAILED)")

    def _execute(self, parsed: ast.Statement, request_id: str) -> str:
        return self.session.execute(parsed, request_id=request_id).message

    def _made(self, parsed: ast.Statement, request_id: str) -> tuple[str | None, int | None, int | None, int | None]:
        """(table, table id, job id, schema version) a finished statement made."""
        if isinstance(parsed, ast.AlterTable):
            job = self.history.job_of_request(request_id)
            if job is not None:
                return job[2], job[1], job[0], job[3]
            return parsed.table, None, None, None
        if isinstance(parsed, ast.CreateTable):
            try:
                info = self.catalog.table(parsed.name)
            except UserError:
                return parsed.name, None, None, None
            return info.name, info.id, None, 1 if info.current_version == 1 else None
        if isinstance(parsed, ast.DropTable):
            return parsed.name, None, None, None
        if isinstance(parsed, ast.Insert):
            return parsed.table, None, None, None
        return None, None, None, None  # a view

    def _resume(self, parsed: ast.Statement, text: str, running: RecordedStatement) -> str:
        """What a statement left RUNNING by a killed apply did; run it only if it never ran."""
        if isinstance(parsed, ast.AlterTable):
            return self._resume_alter(parsed, text, running.request_id)
        done = self._found_done(parsed, running)
        return done if done is not None else self._execute(parsed, running.request_id)  # it never took effect: run it now

    @functools.singledispatchmethod
    def _found_done(self, parsed: ast.Statement, running: RecordedStatement) -> str | None:
        """The line of a statement that took effect since `running` started; None if it never did."""
        return None

    @_found_done.register(ast.CreateTable)
    @_found_done.register(ast.DropTable)
    @_found_done.register(ast.CreateView)
    @_found_done.register(ast.DropView)
    def _object_found(
        self, parsed: ast.CreateTable | ast.DropTable | ast.CreateView | ast.DropView, running: RecordedStatement
    ) -> str | None:
        """CREATE or DROP of a table or a view: the catalog's record of that object made (or
        dropped) since `running` started."""
        words, found_since = OBJECT_RECORDS[type(parsed)]
        found = found_since(self.history, name_key(parsed.name), running.started_at)
        return f"{words} {parsed.name} (found done)" if found else None

    @_found_done.register(ast.Insert)
    def _load_committed(self, parsed: ast.Insert, running: RecordedStatement) -> str | None:
        found = self.history.load_committed(running.request_id)
        return f"INSERT INTO {parsed.table} (found done: its transaction committed)" if found else None

    def _resume_alter(self, parsed: ast.AlterTable, text: str, request_id: str) -> str:
        from alterflow.catalog.states import JobState
        from alterflow.workflow.request import AlterRequest

        job = self.catalog.job_by_request(request_id)
        if job is not None and job.state == JobState.FINISHED:
            return f"ALTER TABLE {job.table_name}: job {job.id} FINISHED, schema version {job.to_version} (found done)"
        if job is not None and job.state == JobState.CANCELLED:
            raise MigrationFailed(f"ALTER TABLE {job.table_name}: job {job.id} was cancelled: {job.msg}")
        if job is None:  # never started (through Airflow: a trigger again finds its DAG run by the id)
            return self._execute(parsed, request_id)
        driver = self.session.alter_driver()
        request = AlterRequest(parsed.table, text, request_id=request_id, parsed=parsed)
        while True:  # the killed apply's runner lease on the job runs out first, as RESUME waits
            try:
                job = driver.resume_request(request)  # here, or its own DAG run waited for
                break
            except LeaseHeld as exc:
                self._ensure_lease()
                self.on_line(f"waiting: {first_line(exc)}")
                time.sleep(POLL_S * 2)
        if driver.via_airflow and job.state != JobState.FINISHED:
            raise MigrationFailed(
                f"ALTER TABLE {job.table_name}: job {job.id} is {job.state} after its Airflow run {request_id}: {job.msg}"
            )
        how = "its Airflow run ended" if driver.via_airflow else "resumed"
        return f"ALTER TABLE {job.table_name}: job {job.id} {job.state}, schema version {job.to_version} ({how})"


def baseline(catalog: Catalog, directory: pathlib.Path, version: str, who: str | None = None) -> str:
    """The catalog adopts migrations up to `version`: those files count as applied, unrun."""
    try:
        key = version_key(version)
    except ValueError:
        raise MigrationRefused(f"migrate baseline: {version!r} is not a version (numbers, dotted allowed)") from None
    files = migration_status(catalog, directory).files
    match = next((f for f in files if f.key == key), None)
    description = match.description if match else f"baseline at version {version}"
    MigrationHistory(catalog).baseline(version, description, who or installed_by())
    below = sum(1 for f in files if f.key <= key)
    return f"baseline at version {version}: {below} file(s) up to it count as applied; apply runs the ones above it"


def repair(catalog: Catalog, directory: pathlib.Path) -> list[str]:
    """Accept the current checksums of edited applied files (after review), clear FAILED (apply
    retries from the failed statement), adopt again a file marked DELETED that is back in the
    directory (its row back to APPLIED, or APPLYING when it had not finished, with the file's
    checksum), and for files deleted from the directory: forget those that never ran a statement,
    mark the others DELETED (kept in the history, no longer drift)."""
    status = migration_status(catalog, directory)
    history = MigrationHistory(catalog)
    lines = history.repair({f.version: f.checksum for f in status.files if status.recorded(f.version) is not None})
    for file in status.files:
        deleted = status.deleted_row(file.version)
        if deleted is None:
            continue
        state = history.readopt(deleted.version, file.checksum)
        lines.append(f"{file.script}: back in the directory; DELETED -> {state} in the history")
        if deleted.checksum != file.checksum:
            lines.append(f"{file.script}: its current checksum accepted")
    on_disk = {f.key for f in status.files}
    highest_file = max(on_disk, default=None)
    for recorded in status.history:
        if recorded.state in (BASELINE, DELETED) or version_key(recorded.version) in on_disk:
            continue
        if highest_file is None or version_key(recorded.version) > highest_file:
            continue  # FUTURE: a newer checkout's file, not a deleted one
        if any(s.state == DONE for s in recorded.statements) or recorded.state == APPLIED:
            history.mark_deleted(recorded.version)
            lines.append(f"{recorded.script}: deleted from the directory; marked DELETED in the history (what it did stays)")
        else:
            history.forget(recorded.version)
            lines.append(f"{recorded.script}: deleted before any statement of it ran; forgotten")
    return lines or ["nothing to repair"]


def set_applied(
    catalog: Catalog, directory: pathlib.Path, version: str, who: str | None = None, config: MigrateConfig | None = None
) -> list[str]:
    """`migrate set V` (Atlas `migrate set`, Liquibase `changelog-sync`): record every pending
    file up to and including V as APPLIED without running it, by `who`, now; a line per file and
    a last one. Refused in one line, recording nothing: V no file has; what apply refuses
    (blocking drift, which includes a pending file below an applied version: a hole `set` would
    hide); a FAILED file up to V, or an APPLYING one with a statement recorded (an apply ran part
    of it: `apply` finishes it). Under the apply lease, so no apply runs meanwhile."""
    try:
        key = version_key(version)
    except ValueError:
        raise MigrationRefused(f"migrate set: {version!r} is not a version (numbers, dotted allowed)") from None
    who = who or installed_by()
    history = MigrationHistory(catalog)
    holder = new_holder()
    state = history.acquire_lease(holder, 60.0)
    if state.holder != holder:
        raise MigrationLeaseHeld(
            f"migrate set: an apply is running on this catalog ({shown_holder(state.holder)}, "
            f"lease until {state.expires_at:%H:%M:%S} UTC); nothing was recorded"
        )
    try:
        status = migration_status(catalog, directory, config)
        target = next((f for f in status.files if f.key == key), None)
        if target is None:
            raise MigrationRefused(f"migrate set: no migration file has version {version}; nothing was recorded")
        for drift in status.blocking():
            raise MigrationRefused(f"migrate set: {drift.detail}; nothing was recorded")
        files = [f for f in status.pending if f.key <= key]
        for file in files:
            recorded = status.recorded(file.version)
            if recorded is None:
                continue
            if recorded.state == FAILED:
                raise MigrationRefused(
                    f"migrate set: {file.script} FAILED: {recorded.error} — set would skip a failed file; "
                    "fix it, `alterflow migrate repair`, then apply; nothing was recorded"
                )
            if recorded.statements:
                done = sum(1 for s in recorded.statements if s.state == DONE)
                raise MigrationRefused(
                    f"migrate set: {file.script} is APPLYING with {done} of {len(file.statements)} statement(s) done; "
                    "`alterflow migrate apply` finishes it; nothing was recorded"
                )
        if not files:
            return [f"nothing to record: every file up to version {version} is applied"]
        at = history.record_applied([(f.version, f.description, f.script, f.checksum) for f in files], who)
    finally:
        history.release_lease(holder)
    lines = [f"{f.script}: recorded as APPLIED without running it" for f in files]
    lines.append(
        f"set: {len(files)} file(s) up to version {version} recorded as applied by {who} at {at:%Y-%m-%d %H:%M:%S} UTC; no statement ran"
    )
    return lines


class RepeatableApply:
    """Applies pending repeatable files (`alterflow.migrate.repeatable`) for a `MigrationApply`
    (its session, history, lease and lines)."""

    def __init__(self, apply: MigrationApply):
        self.apply = apply
        self.history = RepeatableHistory(apply.catalog)

    def run(self, statuses: list[RepeatableStatus]) -> None:
        for status in statuses:
            if status.pending:
                self.apply._ensure_lease()
                self._apply_file(status)

    def _apply_file(self, status: RepeatableStatus) -> None:
        from alterflow.crash_points import crash_point
        from alterflow.errors import first_line

        apply, file = self.apply, status.file
        if status.last is not None and status.last.state == APPLYING:
            self.history.abandon(status.last.id, "an apply stopped inside it; the next apply applied the file again")
            apply.on_line(f"{file.script} was applying when an apply stopped; applying it again from its start")
        run_id = self.history.begin_run(file.description, file.script, file.checksum, apply.who)
        for name in reversed(created_views(file)):
            try:
                apply.session.execute(ast.DropView(name=name, if_exists=True))
            except UserError as exc:
                apply.history.fail(run_id, None, f"{file.script}: view {name} cannot be replaced: {first_line(exc)}")
                raise MigrationFailed(f"{file.script}: view {name} cannot be replaced: {first_line(exc)} (the file is FAILED)") from None
        crash_point("repeatable_views_dropped")
        for statement in file.statements:
            apply._ensure_lease()
            where = f"{file.script}:{statement.line}"
            request_id = new_request_id()
            apply.history.start_statement(run_id, statement.position, statement.line, statement.text_hash, request_id)
            try:
                stmt = parse_repeatable(statement.text)
                message = apply.session.execute(stmt, request_id=request_id).message
            except Exception as exc:  # the statement failed: this application is FAILED, the apply stops
                raise_interrupt_behind(exc)  # a Ctrl-C or SIGTERM that cut a query: the next apply applies the file again
                apply.history.fail(run_id, statement.position, f"{where}: {first_line(exc)}")
                raise MigrationFailed(f"{where}: {first_line(exc)} (the file is FAILED; the next apply applies it again)") from (
                    None if isinstance(exc, UserError) else exc
                )
            table = stmt.table if isinstance(stmt, ast.Insert) else None
            apply.history.finish_statement(run_id, statement.position, table, None, None, None)
            if table is not None:
                apply.result.tables.add(table)
            apply.result.statements += 1
            apply.on_line(f"{where} {message}")
        apply.history.finish_file(run_id)
        apply.result.applied.append(file.script)
        verb = "APPLIED again" if status.last is not None else "APPLIED"
        apply.on_line(f"{file.script} {verb} ({len(file.statements)} statement(s), repeatable)")
