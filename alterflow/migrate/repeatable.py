"""Repeatable migrations, as Flyway has them: `R__<description>.sql` files applied after every
pending versioned file, in the order of their descriptions, whenever their checksum differs from
the one last applied (the first time: when the history has none).

A repeatable file runs again, so it may hold only statements whose second run leaves what the
first left:

    CREATE VIEW v AS ...              the view is replaced: dropped when it exists, created again
    CREATE OR REPLACE VIEW v AS ...   the same (Flyway's repeatable files are written so)
    DROP VIEW IF EXISTS v
    INSERT INTO t ... VALUES ...      into a table with a primary key: an upsert of literal rows

Anything else is rejected naming the file and line, and lint and apply refuse it as they refuse
any rejected statement. An application drops the file's existing views first (the last created
first, so a view of the file that reads another goes before it), then runs the statements in
order. Every step runs again harmlessly, so an apply killed anywhere inside converges: the next
apply marks the stopped application FAILED and applies the whole file again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from alterflow import sql as ast
from alterflow.catalog.catalog import Catalog
from alterflow.catalog.migration_history import APPLIED, APPLYING
from alterflow.catalog.repeatable_history import RepeatableHistory, RepeatableRun, description_key
from alterflow.catalog.schema import name_key
from alterflow.errors import UserError
from alterflow.migrate.files import FileStatement, RepeatableFile

if TYPE_CHECKING:
    from alterflow.migrate.apply import MigrationApply
    from alterflow.migrate.plan import NextSchema, StatementPlan

PENDING, OUTDATED = "PENDING", "OUTDATED"
REPLACE_VIEW = re.compile(r"CREATE\s+OR\s+REPLACE\s+VIEW\b", re.IGNORECASE)
ALLOWED_HINT = (
    "put it in a versioned file (a repeatable file takes CREATE [OR REPLACE] VIEW, DROP VIEW IF EXISTS, "
    "INSERT ... VALUES into a table with a primary key)"
)


@dataclass(frozen=True)
class RepeatableStatus:
    """A repeatable file on disk and its latest application."""

    file: RepeatableFile
    last: RepeatableRun | None

    @property
    def state(self) -> str:
        """PENDING (never applied), APPLIED (this checksum), OUTDATED (applied with another
        checksum: applied again), APPLYING (an apply stopped inside it), FAILED."""
        if self.last is None:
            return PENDING
        if self.last.state == APPLIED:
            return APPLIED if self.last.checksum == self.file.checksum else OUTDATED
        return self.last.state

    @property
    def pending(self) -> bool:
        return self.state != APPLIED


def repeatable_status(catalog: Catalog, files: list[RepeatableFile]) -> list[RepeatableStatus]:
    latest = RepeatableHistory(catalog).latest_runs() if files else {}
    return [RepeatableStatus(f, latest.get(description_key(f.description))) for f in files]


def parse_repeatable(text: str) -> ast.Statement:
    """A statement of a repeatable file: `CREATE OR REPLACE VIEW` is read as `CREATE VIEW` (which
    replaces in a repeatable file). SqlError when it does not parse, or is more than one."""
    match = REPLACE_VIEW.match(text)
    if match is not None:
        text = "CREATE VIEW" + text[match.end() :]
    parsed = ast.parse_statements(text)
    if len(parsed) != 1:
        raise ast.SqlError("not one statement")
    return parsed[0]


def refusal(stmt: ast.Statement) -> str | None:
    """Why `stmt` cannot be in a repeatable file (None: it can)."""
    if isinstance(stmt, ast.CreateView):
        return None
    if isinstance(stmt, ast.DropView):
        return None if stmt.if_exists else f"DROP VIEW {stmt.name} fails when run again: write DROP VIEW IF EXISTS {stmt.name}"
    if isinstance(stmt, ast.Insert):
        if stmt.rows is None:
            return f"INSERT INTO {stmt.table} ... SELECT may load other rows each time it runs; write INSERT ... VALUES, or put it in a versioned file"
        return None
    words = {ast.CreateTable: "CREATE TABLE", ast.DropTable: "DROP TABLE", ast.AlterTable: "ALTER TABLE"}
    what = words.get(type(stmt), type(stmt).__name__)
    return f"{what} cannot run again: {ALLOWED_HINT}"


def created_views(file: RepeatableFile) -> list[str]:
    """The views the file creates, in order (statements that do not parse name none)."""
    names: list[str] = []
    for statement in file.statements:
        try:
            stmt = parse_repeatable(statement.text)
        except ast.SqlError:
            continue
        if isinstance(stmt, ast.CreateView) and name_key(stmt.name) not in {name_key(n) for n in names}:
            names.append(stmt.name)
    return names


def plan_repeatable(schema: NextSchema, file: RepeatableFile) -> list[StatementPlan]:
    """Every statement of `file` planned on `schema` (a `NextSchema`, after the pending versioned
    statements), as an application runs it: the file's existing views dropped first, then each
    statement in order."""
    from alterflow.migrate.plan import DATA, REJECTED, StatementPlan

    history = RepeatableHistory(schema.catalog)
    mine = {name_key(n) for n in created_views(file)}
    replaced: set[str] = set()
    blocked: dict[str, str] = {}
    for name in created_views(file):
        if not schema.view_exists(name):
            continue
        others = [v for v in history.views_using_view(name) if name_key(v) not in mine]
        if others:
            blocked[name_key(name)] = (
                f"view {name} cannot be replaced: view {', '.join(others)} uses it and is not made by this file "
                "(make both in one repeatable file, or drop it first)"
            )
        else:
            schema.views[name_key(name)] = None  # dropped by the application before its statements
            replaced.add(name_key(name))
    plans = []
    for statement in file.statements:

        def result(kind: str, reason: str, statement: FileStatement = statement, **more) -> StatementPlan:
            return StatementPlan(file, statement, kind, reason, **more)

        try:
            stmt = parse_repeatable(statement.text)
        except ast.SqlError as exc:
            plans.append(result(REJECTED, str(exc)))
            continue
        why = refusal(stmt)
        if why is None and isinstance(stmt, ast.CreateView):
            why = blocked.get(name_key(stmt.name))
        if why is not None:
            plans.append(result(REJECTED, why))
            continue
        plan = schema.plan_parsed(stmt, result)
        if plan.kind == DATA:
            table = schema.table(stmt.table)
            if not table.context.current.primary_key:
                plan = result(
                    REJECTED,
                    f"INSERT INTO {table.name}: the table has no primary key, so each run would add the rows again; put it in a versioned file",
                    table=table.name,
                )
            else:
                plan = result(
                    DATA, f"an upsert of {len(stmt.rows)} row(s) into {table.name} by primary key, one transaction", table=table.name
                )
        elif isinstance(stmt, ast.CreateView) and plan.kind != REJECTED and name_key(stmt.name) in replaced:
            plan = result(
                plan.kind, f"view {stmt.name} replaced: dropped and created again, pinned to today's table versions; metadata only"
            )
        plans.append(plan)
    return plans


class RepeatableApply:
    """Applies pending repeatable files for a `MigrationApply` (its session, history, lease and
    lines)."""

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
        from alterflow.migrate.apply import MigrationFailed, new_request_id

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
