"""The bodies of the `alterflow_migrate` DAG's tasks (docs/airflow.md, docs/migrations.md): each calls the Airflow-free core
in `alterflow.migrate` with the catalog and warehouse of the alterflow connection (`AlterflowHook`:
`alterflow_default`, else the ALTERFLOW_* environment) and passes small JSON
between tasks. A refusal of the core or of the run's params is one line, and fails the task for
good (`AirflowFailException`, no retry), as in the schema-change DAG (`tasks.refusals_fail_the_task`).

    lint            the pending files up to `to`, planned in order and analysed on today's data
                    (`lint_migrations(analyze=True)`), checked against the project's rules; the
                    report in the log and in XCom (`report`), and the approval's body (`approval_body`)
    needs_approval  whether a finding says "approve" (else the approval step is skipped)
    approval        Airflow's ApprovalOperator: a person approves or rejects what the lint showed
    apply           `MigrationApply.run(to=...)`, only if the pending files are still those the
                    lint read (same scripts, same checksums), with the embedded runner

The `apply` task emits an asset event for every statement it ran that made a schema version: an
ALTER's is the one the schema-change DAG's `done` task emits for its job, a CREATE TABLE's says
kind CREATE and version 1; both name the migration file in `extra["migration"]`.
"""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Mapping

from alterflow import schema_change_events as events
from alterflow.airflow.tasks import refusals_fail_the_task, settings_of, wait_for_first_events
from alterflow.errors import UserError, capped, shown
from alterflow.migrate.migration_files import MigrationFile, migrations_dir, version_key
from alterflow.migrate.plan import HEAVY
from alterflow.settings import Settings, migrations_from_env

# The approval's body stays short, so a person reads it and finds Approve and Reject below it: the
# statements to approve in full (at most MAX_DETAILED_STATEMENTS, of at most MAX_DETAILED_LINES
# lines each), the others one line each (at most MAX_LISTED_STATEMENTS, cut at MAX_LINE_STATEMENT
# characters), the drift (at most MAX_LISTED_DRIFT lines); what does not fit is counted.
MAX_DETAILED_STATEMENTS = 5
MAX_DETAILED_LINES = 30  # of a statement shown in full
MAX_LISTED_STATEMENTS = 30
MAX_LINE_STATEMENT = 100
MAX_LISTED_DRIFT = 5


class BadMigrateParams(UserError):
    """A param of an `alterflow_migrate` run is unusable; the message names it."""


def default_dir() -> str:
    """The `migrations_dir` param's default: ALTERFLOW_MIGRATIONS, else `migrations`."""
    return migrations_from_env()


def _settings() -> Settings:
    """The alterflow connection's settings, never submitting to Airflow: inside a task every
    statement runs in this process (the embedded runner), even where ALTERFLOW_AIRFLOW_URL is set."""
    return dataclasses.replace(settings_of(), airflow_url=None)


# -- params -------------------------------------------------------------------------------------
def directory_param(params: Mapping, default: str) -> pathlib.Path:
    """`migrations_dir`: a directory path (relative: to the worker's working directory); empty means
    `default` (ALTERFLOW_MIGRATIONS, else `migrations`). Returned absolute, so every task reads the
    same one."""
    value = params.get("migrations_dir")
    if value is not None and not isinstance(value, str):
        raise BadMigrateParams(f"param migrations_dir: expected a directory path as text, got {shown(value)}")
    directory = migrations_dir((value or "").strip() or None, default)
    return directory.absolute()


def to_param(params: Mapping) -> str | None:
    """`to`: the last version to apply (numbers, dotted allowed), or empty for every pending file."""
    value = params.get("to")
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise BadMigrateParams(f"param to: expected a version such as 3 or 1.2, got {shown(value)}")
    text = str(value).strip()
    try:
        version_key(text)
    except ValueError:
        raise BadMigrateParams(f"param to: {shown(text)} is not a version (numbers, dotted allowed, e.g. 3 or 1.2)") from None
    return text


def check_to(files: list[MigrationFile], directory: pathlib.Path, to: str | None) -> tuple[int, ...] | None:
    """The key of version `to`, which a file of the directory must have."""
    if to is None:
        return None
    key = version_key(to)
    if not any(f.key == key for f in files):
        versions = ", ".join(f.version for f in files) or "none"
        raise BadMigrateParams(f"param to: no migration file of {directory} has version {to} (its versions: {shown(versions, 120)})")
    return key


def _up_to(files: list[MigrationFile], key: tuple[int, ...] | None) -> list[MigrationFile]:
    return [f for f in files if key is None or f.key <= key]


# -- lint ---------------------------------------------------------------------------------------
def lint(params: Mapping) -> tuple[dict, dict, str]:
    """(summary, report JSON, approval body) of the pending files up to `to`, changing nothing.
    The summary names the directory and each pending file's checksum: what `apply` checks that it
    still applies. What apply would refuse (a FAILED file, an edited or deleted applied one, a
    statement already done whose text changed) is refused here, before anyone is asked."""
    from alterflow.engine.session import Session
    from alterflow.migrate.apply import MigrationApply
    from alterflow.migrate.lint import lint_migrations
    from alterflow.migrate.rules import load_rules
    from alterflow.migrate.status import migration_status
    from alterflow.spark_session import get_spark

    with refusals_fail_the_task():
        settings = _settings()
        directory = directory_param(params, settings.migrations)
        to = to_param(params)
        session = Session(settings)
        catalog = session.catalog
        status = migration_status(catalog, directory)  # a missing directory: one line
        key = check_to(status.files, directory, to)
        rules = load_rules(directory, from_cwd=False)  # the rules beside the directory, not the worker's
        # Only the files up to `to` are planned and analysed (the drift stays that of the whole
        # directory). The analysis reads today's data: on the local engine in this process, and on
        # Spark (ALTERFLOW_SPARK_MASTER) only for a table over the local engine's limit.
        upto = dataclasses.replace(status, files=_up_to(status.files, key))
        report = lint_migrations(
            catalog, directory, rules, settings.warehouse, analyze=True, spark=lambda: get_spark(settings), status=upto
        )
        print(report.text(), flush=True)
        if not report.errors:  # apply's own refusals, as a dry run (it changes nothing)
            MigrationApply(session, directory, on_line=print).run(to=to, dry_run=True)
    summary = {
        "directory": str(directory),
        "to": to,
        "files": {f.script: f.checksum for f in [*upto.pending, *upto.pending_repeatables]},
        "statements": len(report.statements),
        "errors": report.errors,
        "warnings": report.warnings,
        "approvals": report.approvals,
    }
    return summary, report.as_json(), approval_body(report.as_json(), summary)


def lint_failure(report: dict) -> str | None:
    """The one line a lint with errors fails its task with (None: no error)."""
    if not report["errors"]:
        return None
    first = next(
        (
            f"{s['script']}:{s['line']} {f['rule']}: {f['message']}"
            for s in report["statements"]
            for f in s["findings"]
            if f["level"] == "error"
        ),
        None,
    )
    if first is None:
        first = next(f"{d['script']} {d['rule']}: {d['message']}" for d in report["drift_findings"] if d["level"] == "error")
    return (
        f"migrate lint: {report['errors']} error(s), the first {capped(first, 160)}; nothing was applied "
        "(the report is in this task's log and XCom `report`)"
    )


def _fenced(text: str) -> str:
    """`text` as a Markdown code block whose fence no backtick run inside it can close."""
    longest = max((len(run) for run in text.split("\n") for run in _backtick_runs(run)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}sql\n{text.strip()}\n{fence}"


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for char in line:
        if char == "`":
            current += char
        elif current:
            runs.append(current)
            current = ""
    return [*runs, current] if current else runs


def _plain(text: str) -> str:
    """Text for a Markdown line: one line, with Markdown's emphasis and link characters escaped."""
    one_line = " ".join(str(text).split())
    return "".join(f"\\{c}" if c in "\\`*_[]<#|" else c for c in one_line)


def _code(text: str) -> str:
    """Text as written, as a Markdown code span: nothing inside one is escaped (a `\\_` would show
    as typed). Its delimiter is one backtick more than the longest run inside, and a space pads
    each side when the text starts or ends with a backtick or a space (CommonMark strips one
    space from each side of a span). A line break, which a span shows as a space, is a space."""
    one_line = str(text).replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    longest = max((len(run) for run in _backtick_runs(one_line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one_line[:1] in ("`", " ") or one_line[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


def _rules_source(source: str) -> str:
    """Where the lint rules came from: a pyproject.toml's path (as written, a code span), or the defaults."""
    return "the defaults" if source == "defaults" else _code(source)


def approval_body(report: dict, summary: dict) -> str:
    """The approval's Markdown, short enough that Approve and Reject stay near: what applying would
    do, the statements a rule asks approval for in full (plan, analysis on today's data, findings),
    every other statement on one line, then the drift the lint saw. The whole report is in the
    `lint` task's log and XCom `report`."""
    statements = report["statements"]
    scope = f"up to version {summary['to']}" if summary["to"] else "every pending file"
    lines = [
        f"**{len(statements)} pending statement(s)** in {_code(summary['directory'])} ({scope}, "
        f"{len(summary['files'])} file(s)): **{report['approvals']} to approve**, {report['errors']} error(s), "
        f"{report['warnings']} warning(s). Rules: {_rules_source(report['rules_from'])}.",
        "",
        "*Approve* applies them in version order, each statement as a tracked schema change; *Reject* ends this run and applies nothing.",
    ]
    to_approve = [s for s in statements if any(f["level"] == "approve" for f in s["findings"])]
    detailed = {id(s) for s in to_approve[:MAX_DETAILED_STATEMENTS]}
    for s in to_approve[:MAX_DETAILED_STATEMENTS]:
        lines += _detailed(s)
    others = [s for s in statements if id(s) not in detailed]
    if others:
        lines += ["", "#### The other statements" if to_approve else "#### The statements"]
        lines += _first([_one_line(s) for s in others], MAX_LISTED_STATEMENTS, ": every one is in the `lint` task's log and XCom `report`.")
    if report["drift"]:
        lines += ["", "#### Drift"]
        lines += _first([f"- {d['kind']}: {_plain(d['detail'])}" for d in report["drift"]], MAX_LISTED_DRIFT, ", in the `lint` task's log.")
    return "\n".join(lines)


def _first(items: list[str], limit: int, where_the_rest_is: str) -> list[str]:
    """At most `limit` list items, then one that counts the rest and says where they are."""
    if len(items) <= limit:
        return items
    return [*items[:limit], f"- … and {len(items) - limit} more{where_the_rest_is}"]


def _detailed(s: Mapping) -> list[str]:
    """A statement to approve, in full: its text, plan, analysis on today's data and findings."""
    levels = sorted({f["level"] for f in s["findings"]})
    text = s["statement"].strip().split("\n")
    if len(text) > MAX_DETAILED_LINES:  # a long statement (a CREATE TABLE of many columns) is cut
        text = [*text[: MAX_DETAILED_LINES - 1], f"-- … {len(text) - MAX_DETAILED_LINES + 1} more line(s), in the lint's report"]
    lines = ["", f"#### {_code(s['script'])} line {s['line']}: {s['kind']} ({', '.join(levels)})", _fenced("\n".join(text)), ""]
    rows = f"; {s['rows']} rows of {_plain(s['table'])} today" if s["kind"] == HEAVY else ""
    lines.append(f"- **Plan:** {_plain(s['reason'])}{rows}")
    if s["failed_casts"] is not None:
        samples = "; ".join(
            f"{_plain(x.get('column'))} {_code(repr(x.get('value')))}"
            + (f" ({_code(', '.join(f'{k}={v!r}' for k, v in x['key'].items()))})" if x.get("key") else "")
            for x in s["samples"]
        )
        failed = "every value converts" if not s["failed_casts"] else f"**{s['failed_casts']} value(s) would fail to convert**: {samples}"
        lines.append(f"- **Analysis on today's data:** {failed}; about {s['est_seconds']} s to convert")
    elif s["kind"] == HEAVY:
        lines.append(
            f"- **Analysis on today's data:** none: {_plain(s['table'])} has no data yet (a pending statement before this one makes it)"
        )
    lines += [f"- **{f['level']}** {f['rule']}: {_plain(f['message'])}" for f in s["findings"]]
    return lines


def _one_line(s: Mapping) -> str:
    """A statement in one list item: where it is, its kind, its text (cut when long), its findings
    and, for a rewrite, how many values would fail to convert."""
    text = " ".join(s["statement"].split())
    text = text if len(text) <= MAX_LINE_STATEMENT else text[: MAX_LINE_STATEMENT - 1] + "…"
    notes = [f"{f['level']} {f['rule']}" for f in s["findings"]]
    if s["failed_casts"]:
        notes.append(f"**{s['failed_casts']} value(s) would fail to convert**")
    return f"- {_code(s['script'])} line {s['line']}: {s['kind']} {_code(text)}" + (f" ({'; '.join(notes)})" if notes else "")


# -- apply --------------------------------------------------------------------------------------
def who(triggering_user: str | None, run_id: str, approval: Mapping | None) -> str:
    """Who the history records as applying: the user who triggered the run (else the run), and
    who approved it when the approval step asked."""
    name = triggering_user or f"airflow run {run_id}"
    user = (approval or {}).get("responded_by_user") or {}
    if user.get("name"):
        name += f" (approved by {user['name']})"
    return name


def check_unchanged(status, summary: Mapping) -> None:
    """Every file pending now (up to `to`) is one the lint read (and a person approved), with the
    same text. Files applied since are no longer pending: a retried apply continues the rest."""
    key = version_key(summary["to"]) if summary["to"] else None
    linted = summary["files"]
    pending = [*_up_to(status.pending, key), *status.pending_repeatables]  # repeatables: applied after them
    changed = [f.script for f in pending if linted.get(f.script) != f.checksum]
    if not changed:
        return
    raise BadMigrateParams(
        f"migrate apply: the pending migrations changed since the lint ({', '.join(changed[:3])}); "
        "nothing was applied: trigger a new run to lint and approve them as they are now"
    )


def apply(summary: Mapping, applied_by: str) -> dict:
    """`MigrationApply.run(to=...)` on the directory the lint read, with the embedded runner; the
    asset events of what it made (`events`: [{"uri", "extra"}])."""
    from alterflow.catalog.migration_history import DONE, MigrationHistory
    from alterflow.engine.session import Session
    from alterflow.migrate.apply import MigrationApply
    from alterflow.migrate.status import migration_status

    with refusals_fail_the_task():
        session = Session(_settings())
        directory = pathlib.Path(summary["directory"])
        check_unchanged(migration_status(session.catalog, directory), summary)
        history = MigrationHistory(session.catalog)
        done_before = {s.request_id for m in history.migrations() for s in m.statements if s.state == DONE}
        result = MigrationApply(session, directory, who=applied_by, on_line=lambda line: print(line, flush=True)).run(to=summary["to"])
    made = made_events(session, directory, done_before)
    wait_for_first_events(session.catalog, [e.uri for e in made])
    print(
        f"applied {len(result.applied)} file(s), {result.statements} statement(s); tables changed: {', '.join(sorted(result.tables)) or 'none'}"
    )
    return {
        "applied": result.applied,
        "statements": result.statements,
        "tables": sorted(result.tables),
        "who": applied_by,
        "events": [{"uri": e.uri, "extra": e.extra} for e in made],
    }


def made_events(session, directory: pathlib.Path, done_before: set[str]) -> list[events.SchemaChangeEvent]:
    """The asset events of the statements done since `done_before` that made a schema version."""
    from alterflow.catalog.heavy_jobs import HeavyJobs
    from alterflow.catalog.migration_history import DONE, MigrationHistory
    from alterflow.migrate.migration_files import read_directory

    catalog_name = session.settings.catalog_name
    files = {f.key: f for f in read_directory(directory)}
    found = []
    for migration in MigrationHistory(session.catalog).migrations():
        for s in migration.statements:
            if s.state != DONE or s.request_id in done_before or s.schema_version is None or s.table_name is None:
                continue
            if s.job_id is not None:
                event = events.schema_change_event(HeavyJobs(session.catalog).job(s.job_id), catalog_name)
                if event is None:
                    continue
                extra = event.extra
            else:  # a CREATE TABLE: the table's first version
                file = files.get(version_key(migration.version))
                text = file.statements[s.position - 1].text if file and s.position <= len(file.statements) else ""
                extra = {
                    "event": events.SCHEMA_CHANGE,
                    "from_version": None,
                    "to_version": s.schema_version,
                    "statement": " ".join(text.split()),
                    "kind": "CREATE",
                    "job_id": None,
                }
            found.append(
                events.SchemaChangeEvent(
                    events.table_asset_uri(catalog_name, s.table_name),
                    {**extra, "migration": migration.script, "migration_version": migration.version},
                )
            )
    return found
