"""The "Schema changes" page: reads the catalog into the page's model and renders the HTML
(`templates/schema_changes.html`, styled by `static/`). No Airflow import: `web.py` authenticates
the user and decides what they may do.

Stable hooks for tests and scripts: `<table id="jobs">` with one `<tr class="job" data-job-id=N
data-state=S data-table=T>` per job, `<section id="schema-history">` with one
`<article class="table-card" data-table=T>` per table, one `<details class="version"
data-version=N>` per schema version and one `<tr class="column" data-column-id=N>` per column;
action buttons are `<button data-action="cancel|resume|analyze" data-job-id=N>` and
`<button data-action="revert" data-table=T data-version=N>`. The Migrations section is
`<section id="migrations">` with one `<tr class="migration" data-version=V data-state=S
data-script=F>` per file, one `<li class="drift" data-kind=K>` per drift and one `<tr
class="pending" data-script=F data-line=N data-kind=K>` per pending statement of the lint, its
findings `<span class="finding" data-rule=R data-level=L>`.
"""

from __future__ import annotations

import pathlib
from datetime import datetime

import jinja2

from alterflow.airflow.page_data import API_SERVER_MIGRATIONS, jobs_json, migrations_json, table_json, version_json
from alterflow.catalog.catalog import Catalog, TableInfo, utcnow

HERE = pathlib.Path(__file__).resolve().parent
_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=jinja2.select_autoescape(default=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def duration_text(seconds: float) -> str:
    """12 s, 4 min 05 s, 3 h 02 min, 2 d 4 h."""
    total = int(seconds)
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def time_text(iso: str | None) -> str:
    """`2026-11-22T07:38:04Z` -> `2026-11-22 07:38:04`."""
    return "" if iso is None else iso.replace("T", " ").removesuffix("Z")


def column_changes(versions: list[dict]) -> None:
    """Mark what each version changed against the one before it: per column `change` (added,
    renamed, retyped, ...) and the version's `dropped` column names. Matched by column id."""
    previous: dict[int, dict] = {}
    for index, version in enumerate(versions):
        current = {c["id"]: c for c in version["columns"]}
        for column in version["columns"]:
            notes = []
            before = previous.get(column["id"])
            if index and before is None:
                notes.append("added")
            elif before is not None:
                if before["name"] != column["name"]:
                    notes.append(f"renamed from {before['name']}")
                if before["type"] != column["type"]:
                    notes.append(f"was {before['type']}")
                if before["nullable"] != column["nullable"]:
                    notes.append("was NULL" if before["nullable"] else "was NOT NULL")
                if before["default"] != column["default"]:
                    notes.append("default changed")
            column["change"] = ", ".join(notes)
        version["dropped"] = [c["name"] for cid, c in previous.items() if cid not in current] if index else []
        previous = current


def _table_model(catalog: Catalog, table: TableInfo) -> dict:
    model = table_json(table, catalog.active_job(table.id))
    versions = [version_json(v, table.current_version) for v in catalog.schema_versions(table.id)]
    column_changes(versions)
    model["versions"] = list(reversed(versions))  # newest first
    return model


def migration_of_jobs(catalog: Catalog) -> dict[int, dict]:
    """job id -> the migration file (script, version) and the line of the statement that made it."""
    from alterflow.catalog.migration_history import MigrationHistory

    return {
        statement.job_id: {"script": m.script, "version": m.version, "line": statement.line}
        for m in MigrationHistory(catalog).migrations()
        for statement in m.statements
        if statement.job_id is not None
    }


def page_model(
    catalog: Catalog,
    table: TableInfo | None,
    now: datetime | None = None,
    migrations: pathlib.Path | None = None,
    warehouse: pathlib.Path | None = None,
    migrations_source: str = API_SERVER_MIGRATIONS,
) -> dict:
    """Jobs (newest first) and tables with their versions; only `table`'s when given. With
    `migrations` (a directory), the Migrations section: its files, their states, the drift and the
    pending lint (`page_data.migrations_json`); None leaves it out (a live refresh of the jobs)."""
    now = now or utcnow()
    tables = [table] if table is not None else catalog.tables()
    jobs = jobs_json(catalog, list(reversed(catalog.jobs(table.id if table is not None else None))), now)
    made_by = migration_of_jobs(catalog)
    for job in jobs:
        job["duration"] = duration_text(job["duration_s"])
        job["migration"] = made_by.get(job["job_id"])
    return {
        "jobs": jobs,
        "tables": [_table_model(catalog, t) for t in tables],
        "all_tables": [t.name for t in catalog.tables()],
        "selected": table.name if table is not None else "",
        "active": any(j["actions"] for j in jobs),
        "now": now.isoformat(timespec="seconds") + "Z",
        "migrations": migrations_json(catalog, migrations, warehouse, migrations_source) if migrations is not None else None,
    }


def render_page(model: dict, base: str, user: str, *, may_cancel: bool, may_start: bool) -> str:
    """The page; Cancel buttons only when `may_cancel` (edit runs), Resume and Revert only when
    `may_start` (create runs): what Airflow lets the user do, as `web.py` asked it."""
    return _templates.get_template("schema_changes.html").render(
        **model, base=base, user=user, may_cancel=may_cancel, may_start=may_start, time_text=time_text
    )


def render_message(base: str, title: str, message: str, link: tuple[str, str] | None = None) -> str:
    """A page with one message (signed out, a bad filter): no catalog data."""
    return _templates.get_template("message.html").render(base=base, title=title, message=message, link=link)
