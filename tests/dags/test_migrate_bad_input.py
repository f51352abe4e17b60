"""Bad input to alterflow_migrate (docs/semantics.md, "Bad input"; docs/migrations.md): a missing directory, a bad `migrations_dir` or
`to` param, a file the core refuses, unknown lint rules, an applied file edited since: the `lint`
task fails with one line and nothing is applied. The `apply` task refuses, also in one line, when
the pending files are no longer those the lint read (and a person approved). The task bodies are
called as the DAG's tasks call them; tests/dags/test_migrate_runs.py runs the DAG."""

from __future__ import annotations

import pytest
from airflow.sdk.exceptions import AirflowFailException

from alterflow.airflow import migrate_tasks
from alterflow.engine.session import Session
from alterflow.migrate.status import migration_status
from tests.support.dags import alterflow_env

V1 = "CREATE TABLE orders (id INT NOT NULL, amount STRING, PRIMARY KEY (id));\nINSERT INTO orders VALUES (1, '10');\n"
V2 = "ALTER TABLE orders ADD COLUMN note STRING;\n"
V3 = "ALTER TABLE orders MODIFY COLUMN amount INT;\n"


@pytest.fixture
def project(monkeypatch, tmp_path):
    session = Session(alterflow_env(monkeypatch, tmp_path))
    directory = tmp_path / "project" / "migrations"
    directory.mkdir(parents=True)
    (tmp_path / "project" / "pyproject.toml").write_text('[tool.alterflow.lint]\nrewrite = "approve"\n')
    for name, text in {"V1__orders": V1, "V2__note": V2, "V3__amount_int": V3}.items():
        (directory / f"{name}.sql").write_text(text)
    return session, directory


def states(session: Session, directory) -> dict[str, str]:
    return {s.script: s.state for s in migration_status(session.catalog, directory).states}


def refused(call, *args) -> str:
    with pytest.raises(AirflowFailException) as raised:
        call(*args)
    line = str(raised.value)
    assert "\n" not in line and len(line) < 600, line
    return line


def test_bad_params_and_directories_fail_the_lint_with_one_line(project, tmp_path, monkeypatch):
    session, directory = project
    missing = tmp_path / "no-such-dir"
    assert refused(migrate_tasks.lint, {"migrations_dir": str(missing)}) == (
        f"migrations directory '{missing}' does not exist (--dir or ALTERFLOW_MIGRATIONS)"
    )
    assert refused(migrate_tasks.lint, {"migrations_dir": 7}) == "param migrations_dir: expected a directory path as text, got '7'"
    assert refused(migrate_tasks.lint, {"migrations_dir": str(directory), "to": "two"}) == (
        "param to: 'two' is not a version (numbers, dotted allowed, e.g. 3 or 1.2)"
    )
    assert refused(migrate_tasks.lint, {"migrations_dir": str(directory), "to": True}).startswith("param to: expected a version")
    assert refused(migrate_tasks.lint, {"migrations_dir": str(directory), "to": "9"}) == (
        f"param to: no migration file of {directory} has version 9 (its versions: '1, 2, 3')"
    )
    # Empty: ALTERFLOW_MIGRATIONS, relative to the worker's working directory.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ALTERFLOW_MIGRATIONS", "elsewhere")
    assert refused(migrate_tasks.lint, {"migrations_dir": ""}) == (
        f"migrations directory '{tmp_path / 'elsewhere'}' does not exist (--dir or ALTERFLOW_MIGRATIONS)"
    )
    monkeypatch.setenv("ALTERFLOW_MIGRATIONS", str(directory))
    summary, _report, _body = migrate_tasks.lint({"migrations_dir": "  "})
    assert summary["directory"] == str(directory)

    (directory / "V4 oops.sql").write_text(V2)
    assert refused(migrate_tasks.lint, {"migrations_dir": str(directory)}).startswith("'V4 oops.sql': not a migration file name")
    (directory / "V4 oops.sql").unlink()
    (directory.parent / "pyproject.toml").write_text('[tool.alterflow.lint]\nrewrites = "approve"\n')
    assert "unknown rule 'rewrites'" in refused(migrate_tasks.lint, {"migrations_dir": str(directory)})
    assert states(session, directory) == dict.fromkeys(("V1__orders.sql", "V2__note.sql", "V3__amount_int.sql"), "PENDING")


def test_to_limits_what_is_linted_and_applied(project):
    session, directory = project
    _summary, report, body = migrate_tasks.lint({"migrations_dir": str(directory)})  # V3 rewrites a table V1 makes
    assert report["statements"][-1]["kind"] == "HEAVY" and report["statements"][-1]["failed_casts"] is None
    assert "- **Analysis on today's data:** none: orders has no data yet (a pending statement before this one makes it)" in body
    summary, report, body = migrate_tasks.lint({"migrations_dir": str(directory), "to": 2})
    assert summary["files"].keys() == {"V1__orders.sql", "V2__note.sql"} and summary["approvals"] == 0
    assert [(s["script"], s["kind"]) for s in report["statements"]] == [
        ("V1__orders.sql", "LIGHT"),
        ("V1__orders.sql", "DATA"),
        ("V2__note.sql", "LIGHT"),
    ]
    assert "up to version 2, 2 file(s)" in body and "MODIFY COLUMN" not in body
    applied = migrate_tasks.apply(summary, "alice")
    assert (applied["applied"], applied["statements"], applied["tables"]) == (["V1__orders.sql", "V2__note.sql"], 3, ["orders"])
    assert states(session, directory) == {"V1__orders.sql": "APPLIED", "V2__note.sql": "APPLIED", "V3__amount_int.sql": "PENDING"}
    assert [e["extra"]["kind"] for e in applied["events"]] == ["CREATE", "LIGHT"]

    # The rest: the rewrite is to approve; its body shows the analysis on today's data.
    summary, report, body = migrate_tasks.lint({"migrations_dir": str(directory)})
    assert (summary["files"].keys(), summary["approvals"], summary["errors"]) == ({"V3__amount_int.sql"}, 1, 0)
    assert report["statements"][0]["failed_casts"] == 0 and "every value converts" in body


def test_apply_refuses_files_changed_since_the_lint(project):
    session, directory = project
    summary, _report, _body = migrate_tasks.lint({"migrations_dir": str(directory)})
    (directory / "V3__amount_int.sql").write_text("ALTER TABLE orders MODIFY COLUMN amount BIGINT;\n")
    assert refused(migrate_tasks.apply, summary, "alice") == (
        "migrate apply: the pending migrations changed since the lint (V3__amount_int.sql); nothing was applied: "
        "trigger a new run to lint and approve them as they are now"
    )
    (directory / "V3__amount_int.sql").write_text(V3)
    (directory / "V4__more.sql").write_text("ALTER TABLE orders ADD COLUMN more INT;\n")
    assert "(V4__more.sql)" in refused(migrate_tasks.apply, summary, "alice")
    assert set(states(session, directory).values()) == {"PENDING"}


def test_an_applied_file_edited_since_fails_the_lint(project):
    session, directory = project
    migrate_tasks.apply(migrate_tasks.lint({"migrations_dir": str(directory), "to": 1})[0], "alice")
    (directory / "V1__orders.sql").write_text(V1 + "-- a comment added later\n")
    _summary, report, _body = migrate_tasks.lint({"migrations_dir": str(directory)})
    failure = migrate_tasks.lint_failure(report)
    assert failure.startswith("migrate lint: 1 error(s), the first V1__orders.sql edited: V1__orders.sql was edited since it was applied")
    assert "\n" not in failure and failure.endswith("; nothing was applied (the report is in this task's log and XCom `report`)")
    assert states(session, directory)["V2__note.sql"] == "PENDING"


def test_a_statement_that_fails_in_apply_fails_the_task_with_one_line_and_its_file_is_failed(project):
    """Data that arrives between the lint and the apply: the rewrite's validation cancels its job."""
    session, directory = project
    migrate_tasks.apply(migrate_tasks.lint({"migrations_dir": str(directory), "to": 2})[0], "alice")
    summary, report, _body = migrate_tasks.lint({"migrations_dir": str(directory)})
    assert report["errors"] == 0 and report["statements"][0]["failed_casts"] == 0
    list(session.run("INSERT INTO orders VALUES (2, 'twenty', NULL)"))
    line = refused(migrate_tasks.apply, summary, "alice")
    assert line.startswith("V3__amount_int.sql:1: ") and line.endswith("(the file is FAILED)"), line
    [v3] = [s for s in migration_status(session.catalog, directory).states if s.script == "V3__amount_int.sql"]
    assert v3.state == "FAILED" and v3.error.startswith("V3__amount_int.sql:1: ")
    # The next run's lint fails, now that today's data holds the value.
    _summary, report, _body = migrate_tasks.lint({"migrations_dir": str(directory)})
    assert migrate_tasks.lint_failure(report).startswith(
        "migrate lint: 1 error(s), the first V3__amount_int.sql:1 failed_casts: 1 value(s)"
    )
