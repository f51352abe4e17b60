"""The Schema changes page's Migrations section and `GET /alterflow/api/migrations` (docs/airflow.md, docs/migrations.md): the
files of the api-server's migrations directory (ALTERFLOW_MIGRATIONS, default ./migrations) with
their states, the drift, and the pending statements' lint; a directory that is missing or that the
core refuses is one line in the section, and the rest of the page is shown as always."""

from __future__ import annotations

import pytest

from alterflow.migrate.apply import MigrationApply
from tests.support.html_tree import parse
from tests.support.plugin_api import bearer
from tests.support.statements import sql

COOKIE = "_token"
V1 = "CREATE TABLE orders (id INT NOT NULL, amount STRING, note STRING, PRIMARY KEY (id));\nINSERT INTO orders VALUES (1, '10', 'a');\n"
V2 = "ALTER TABLE orders MODIFY COLUMN amount INT;\n"
V3 = "-- the notes moved elsewhere\nALTER TABLE orders DROP COLUMN note;\n"


def page(client, token: str, headers: dict | None = None):
    client.cookies.set(COOKIE, token)
    try:
        return client.get("/alterflow/", headers=headers or {})
    finally:
        client.cookies.clear()


@pytest.fixture
def project(tmp_path, monkeypatch, plugin_session, no_migrate_runs):
    """A project whose migrations directory the api-server reads: V1 applied, V2 and V3 pending."""
    directory = tmp_path / "project" / "migrations"
    directory.mkdir(parents=True)
    (tmp_path / "project" / "pyproject.toml").write_text('[tool.alterflow.lint]\nrewrite = "approve"\ndrop_column = "warning"\n')
    (directory / "V1__orders.sql").write_text(V1)
    MigrationApply(plugin_session, directory, who="alice@laptop", on_line=lambda _line: None).run()
    (directory / "V2__amount_int.sql").write_text(V2)
    (directory / "V3__drop_note.sql").write_text(V3)
    monkeypatch.setenv("ALTERFLOW_MIGRATIONS", str(directory))
    return directory


def test_the_section_lists_files_states_drift_and_the_pending_lint(plugin_session, project, client, mint):
    sql(plugin_session, "ALTER TABLE orders ADD COLUMN typed_at_a_prompt INT")  # a change outside migrations: drift
    answer = page(client, mint("alice", "admin"))
    assert answer.status_code == 200
    section = parse(answer.text).find("section", id="migrations")
    assert section.attrs["data-directory"] == str(project) and section.attrs["data-exists"] == "true"
    assert "1 applied · 2 pending" in section.find("p", class_="migrations-summary").text()
    files = {tr.attrs["data-script"]: tr for tr in section.find_all("tr", class_="migration")}
    assert [(s, tr.attrs["data-version"], tr.attrs["data-state"]) for s, tr in files.items()] == [
        ("V1__orders.sql", "1", "APPLIED"),
        ("V2__amount_int.sql", "2", "PENDING"),
        ("V3__drop_note.sql", "3", "PENDING"),
    ]
    v1 = {td.attrs["class"]: td.text() for td in files["V1__orders.sql"].find_all("td")}
    assert (v1["checksum"], v1["statements num"], v1["installed-by"]) == ("ok", "2/2", "alice@laptop")
    assert files["V2__amount_int.sql"].find("td", class_="statements").text() == "0/1"

    [drift] = section.find("ul", id="drift").find_all("li", class_="drift")
    assert drift.attrs["data-kind"] == "outside"
    assert "orders version 2 was made outside migrations: ALTER TABLE orders ADD COLUMN typed_at_a_prompt INT" in drift.text()

    assert section.find("p", id="lint-summary").text().startswith("2 pending statement(s): 0 error(s), 1 warning(s), 1 to approve")
    rows = section.find("table", id="pending-lint").find_all("tr", class_="pending")
    seen = [
        (
            tr.attrs["data-script"],
            tr.attrs["data-line"],
            tr.attrs["data-kind"],
            [(f.attrs["data-rule"], f.attrs["data-level"]) for f in tr.find_all("span", class_="finding")],
        )
        for tr in rows
    ]
    assert seen == [
        ("V2__amount_int.sql", "1", "HEAVY", [("rewrite", "approve")]),
        ("V3__drop_note.sql", "2", "LIGHT", [("drop_column", "warning")]),
    ]
    assert "STRING -> INT can fail and needs a rewrite" in rows[0].find("td", class_="reason").text()

    # The page's JSON API says the same, as `alterflow migrate status` and `lint --format json` do.
    api = client.get("/alterflow/api/migrations", headers=bearer(mint("alice", "admin")))
    assert api.status_code == 200
    data = api.json()
    assert (data["directory"], data["exists"], data["message"], data["lint_error"]) == (str(project), True, None, None)
    assert [(m["script"], m["state"], m["checksum_ok"]) for m in data["migrations"]] == [
        ("V1__orders.sql", "APPLIED", True),
        ("V2__amount_int.sql", "PENDING", True),
        ("V3__drop_note.sql", "PENDING", True),
    ]
    assert [d["kind"] for d in data["drift"]] == ["outside"]
    assert (data["lint"]["errors"], data["lint"]["warnings"], data["lint"]["approvals"]) == (0, 1, 1)
    assert [s["failed_casts"] for s in data["lint"]["statements"]] == [None, None]  # no analysis of the data here
    assert client.get("/alterflow/api/migrations").status_code == 401

    # The live refresh asks for the jobs and the history only: no lint on every refresh.
    refreshed = parse(page(client, mint("alice", "admin"), {"X-Alterflow-Refresh": "1"}).text)
    assert refreshed.find_all("section", id="migrations") == [] and refreshed.find("section", id="schema-history")


def test_an_edited_applied_file_and_a_bad_rule_are_shown_not_raised(plugin_session, project, client, mint):
    (project / "V1__orders.sql").write_text(V1 + "-- edited after it was applied\n")
    (project.parent / "pyproject.toml").write_text('[tool.alterflow.lint]\nrewrite = "ask"\n')
    section = parse(page(client, mint("alice", "admin")).text).find("section", id="migrations")
    v1 = section.find("tr", class_="migration", data_script="V1__orders.sql")
    assert (v1.attrs["data-state"], v1.attrs["data-checksum"]) == ("APPLIED", "edited")
    [drift] = section.find_all("li", class_="drift")
    assert drift.attrs["data-kind"] == "edited" and "V1__orders.sql was edited since it was applied" in drift.text()
    error = section.find("p", id="lint-error").text()
    assert "rule rewrite has unknown level 'ask'" in error and section.find_all("table", id="pending-lint") == []


def test_a_missing_or_refused_directory_is_one_line_and_the_page_still_shows(
    plugin_session, client, mint, tmp_path, monkeypatch, no_migrate_runs
):
    sql(plugin_session, "CREATE TABLE t (id INT)")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ALTERFLOW_MIGRATIONS", raising=False)
    answer = page(client, mint("alice", "admin"))
    assert answer.status_code == 200
    doc = parse(answer.text)
    section = doc.find("section", id="migrations")
    assert section.attrs["data-exists"] == "false"
    assert section.find("p", id="migrations-message").text() == (
        f"no migrations directory at {tmp_path / 'migrations'} (ALTERFLOW_MIGRATIONS of the api-server, default ./migrations)"
    )
    assert [c.attrs["data-table"] for c in doc.find_all("article", class_="table-card")] == ["t"]  # the rest of the page
    data = client.get("/alterflow/api/migrations", headers=bearer(mint("alice", "admin"))).json()
    assert (data["exists"], data["migrations"], data["lint"]) == (False, [], None)

    (tmp_path / "migrations").mkdir()
    (tmp_path / "migrations" / "V1__a.sql").write_text("CREATE TABLE a (id INT);\n")
    (tmp_path / "migrations" / "V1.0__b.sql").write_text("CREATE TABLE b (id INT);\n")
    section = parse(page(client, mint("alice", "admin")).text).find("section", id="migrations")
    assert section.find("p", id="migrations-message").text() == "V1.0__b.sql and V1__a.sql have the same version 1; versions must be unique"
    assert section.find_all("table", id="migrations-files") == []


def test_the_section_shows_the_directory_the_latest_migrate_run_read_with_the_rules_beside_it(
    plugin_session, client, mint, tmp_path, monkeypatch, no_migrate_runs
):
    """The api-server's own directory is missing; a run of alterflow_migrate applied another: the
    section shows that one, lists both, and lints with the rules beside it, not the api-server's
    working directory's."""
    from tests.support.dags import load_dag, run_dag

    monkeypatch.setenv("ALTERFLOW_MIGRATIONS", str(tmp_path / "api-server-migrations"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.alterflow.lint]\ndrop_column = "off"\n')  # not the project's
    team = tmp_path / "team" / "migrations"
    team.mkdir(parents=True)
    (team.parent / "pyproject.toml").write_text('[tool.alterflow.lint]\ndrop_column = "error"\n')
    (team / "V1__orders.sql").write_text(V1 + "ALTER TABLE orders ADD COLUMN tier INT;\n")
    state, _tasks, _run = run_dag(load_dag("alterflow_migrate"), {"migrations_dir": str(team)})
    assert state == "success"
    (team / "V2__drop_note.sql").write_text(V3)

    admin = mint("alice", "admin")
    doc = parse(page(client, admin).text)
    [job] = doc.find("table", id="jobs").find_all("tr", class_="job")  # the ALTER of V1 links to its file and line
    link = job.find("a", class_="migration-file")
    assert (link.text(), link.attrs["href"]) == ("V1__orders.sql:3", "#migration-1")
    section = doc.find("section", id="migrations")
    assert section.attrs["data-directory"] == str(team) and section.attrs["data-exists"] == "true"
    assert "the directory the latest alterflow_migrate run read" in section.text()
    listed = [a.text() for a in section.find("ul", id="migrations-directories").find_all("a")]
    assert listed == [str(team), str(tmp_path / "api-server-migrations")]
    [pending] = section.find("table", id="pending-lint").find_all("tr", class_="pending")
    assert [(f.attrs["data-rule"], f.attrs["data-level"]) for f in pending.find_all("span", class_="finding")] == [("drop_column", "error")]

    # The api-server's own directory, asked for; a directory nobody read is refused with one line.
    other = client.get("/alterflow/api/migrations", params={"directory": str(tmp_path / "api-server-migrations")}, headers=bearer(admin))
    assert other.status_code == 200 and other.json()["exists"] is False
    assert "ALTERFLOW_MIGRATIONS of the api-server" in other.json()["message"]
    refused = client.get("/alterflow/api/migrations", params={"directory": "/etc"}, headers=bearer(admin))
    assert refused.status_code == 400 and "neither the api-server's nor one an alterflow_migrate run read" in refused.json()["detail"]
