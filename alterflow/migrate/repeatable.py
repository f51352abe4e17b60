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

This module reads the files and their state and says what a repeatable file may hold; they are
planned with the versioned statements (`plan.plan_repeatable`) and applied by `migrate apply`
(`apply.RepeatableApply`), which both import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from alterflow import sql as ast
from alterflow.catalog.catalog import Catalog
from alterflow.catalog.migration_history import APPLIED
from alterflow.catalog.repeatable_history import RepeatableHistory, RepeatableRun, description_key
from alterflow.catalog.schema import name_key
from alterflow.migrate.migration_files import RepeatableFile

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
