"""`alterflow migrate lint`'s controls, through the CLI (in-process `migrate_command.main`) on both
catalogs: the backward_incompatible rule (a column rename, naming the views that read the column;
a dropped column) and `-- alterflow:nolint RULE...` suppression, with its refusals. The DAG readers
the rule names from Airflow are tested against Airflow's API app in test_lint_dag_readers.py."""

from __future__ import annotations

import json
import os
import pathlib
from dataclasses import dataclass

import pytest

from alterflow.cli.migrate_command import main
from alterflow.migrate.rules import DEFAULTS
from tests.migrate.conftest import ORDERS
from tests.support.ports import free_port


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def report(self) -> dict:
        return json.loads(self.out)

    @property
    def error_line(self) -> str:
        assert self.code == 1, self
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, self.err
        return lines[0]


class Project:
    """A team's repository: pyproject.toml, migrations/, and the CLI run in it on a catalog."""

    def __init__(self, root: pathlib.Path, catalog_url: str, monkeypatch, capsys):
        self.root, self.monkeypatch, self.capsys = root, monkeypatch, capsys
        (root / "migrations").mkdir(parents=True)
        self.rules("")
        for name in [k for k in os.environ if k.startswith("ALTERFLOW_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("ALTERFLOW_HOME", str(root / "home"))
        monkeypatch.setenv("ALTERFLOW_CATALOG_URL", catalog_url)
        monkeypatch.chdir(root)

    def rules(self, section: str) -> None:
        (self.root / "pyproject.toml").write_text(f"[tool.alterflow.lint]\n{section}\n", encoding="utf-8")

    def write(self, name: str, text: str) -> None:
        (self.root / "migrations" / name).write_text(text, encoding="utf-8")

    def cli(self, *args: str) -> Run:
        self.capsys.readouterr()
        code = main(list(args))
        out, err = self.capsys.readouterr()
        return Run(code, out, err)

    def lint(self, *args: str) -> Run:
        return self.cli("lint", "--format", "json", *args)

    def applied(self) -> None:
        done = self.cli("apply")
        assert done.code == 0, done.err


@pytest.fixture
def project(tmp_path, catalog_url, monkeypatch, capsys) -> Project:
    return Project(tmp_path / "project", catalog_url, monkeypatch, capsys)


def by_line(report: dict) -> dict[tuple[str, int], dict]:
    return {(s["script"], s["line"]): s for s in report["statements"]}


def rules_of(statement: dict, key: str = "findings") -> list[tuple[str, str]]:
    return [(f["rule"], f["level"]) for f in statement[key]]


VIEWS = (
    ORDERS
    + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, 'b');\n"
    + "CREATE VIEW notes AS SELECT id, note FROM orders;\n"
    + "CREATE VIEW ids AS SELECT id FROM orders;\n"
)


# -- backward_incompatible -----------------------------------------------------------------------
def test_a_rename_is_backward_incompatible_and_names_the_views_that_read_the_column(project):
    project.write("V1__orders.sql", VIEWS)
    project.applied()
    project.write(
        "V2__renames.sql",
        "ALTER TABLE orders RENAME COLUMN note TO remark;\n"  # view notes (in the catalog) reads it, ids does not
        "CREATE VIEW amounts AS SELECT id, amount FROM orders;\n"
        "ALTER TABLE orders RENAME COLUMN amount TO total;\n"  # read by the view created just before
        "DROP VIEW amounts;\n"
        "ALTER TABLE orders RENAME COLUMN total TO amount_total;\n",  # that view is gone: no reader known
    )
    lint = project.lint()
    assert lint.code == 0, lint  # a warning by default, as Atlas reports BC findings
    found = by_line(lint.report)
    first = found[("V2__renames.sql", 1)]["findings"]
    assert [(f["rule"], f["level"]) for f in first] == [("backward_incompatible", "warning")]
    assert first[0]["readers"] == {"views": ["notes"], "dags": [], "asset": None}
    assert first[0]["message"].startswith("renames column note to remark of orders: readers alterflow knows: view notes")
    third = found[("V2__renames.sql", 3)]["findings"]
    assert third[0]["readers"]["views"] == ["amounts"], third
    fifth = found[("V2__renames.sql", 5)]["findings"]
    assert fifth[0]["readers"]["views"] == [] and "alterflow knows none: no view uses it" in fifth[0]["message"], fifth
    assert lint.report["warnings"] == 3 and lint.report["rules"]["backward_incompatible"] == "warning"
    text = project.cli("lint")
    assert "  warning  backward_incompatible: renames column note to remark of orders" in text.out
    github = project.cli("lint", "--format", "github")
    assert "::warning file=migrations/V2__renames.sql,line=1,title=backward_incompatible::renames column note to remark" in github.out


def test_the_rule_takes_the_projects_level(project):
    project.write("V1__orders.sql", VIEWS)
    project.applied()
    project.write("V2__rename.sql", "ALTER TABLE orders RENAME COLUMN note TO remark;\n")
    project.rules('backward_incompatible = "error"')
    lint = project.lint()
    assert lint.code == 1 and rules_of(lint.report["statements"][0]) == [("backward_incompatible", "error")]
    project.rules('backward_incompatible = "off"')
    lint = project.lint()
    assert lint.code == 0 and lint.report["statements"][0]["findings"] == []
    project.rules('backward_incompatible = "fatal"')
    assert "rule backward_incompatible has unknown level 'fatal'" in project.lint().error_line


def test_a_drop_without_a_known_reader_is_drop_column_only_and_one_a_view_reads_is_rejected(project):
    project.write("V1__orders.sql", VIEWS)
    project.applied()
    project.write("V2__drops.sql", "ALTER TABLE orders DROP COLUMN amount;\nALTER TABLE orders DROP COLUMN note;\n")
    lint = project.lint()
    found = by_line(lint.report)
    assert rules_of(found[("V2__drops.sql", 1)]) == [("drop_column", "warning")]
    assert rules_of(found[("V2__drops.sql", 2)]) == [("rejected", "error")]  # view notes uses it: apply would refuse
    assert "it is used by view notes" in found[("V2__drops.sql", 2)]["findings"][0]["message"]


def test_an_unreachable_airflow_is_one_warning_line_and_lint_goes_on(project):
    project.write("V1__orders.sql", VIEWS)
    project.applied()
    project.write("V2__rename.sql", "ALTER TABLE orders RENAME COLUMN note TO remark;\n")
    url = f"http://127.0.0.1:{free_port()}"
    project.monkeypatch.setenv("ALTERFLOW_AIRFLOW_URL", url)
    text = project.cli("lint")
    assert text.code == 0 and text.err == ""
    warned = [line for line in text.out.splitlines() if line.startswith("warning  ")]
    assert len(warned) == 1 and f"cannot reach Airflow at {url}" in warned[0] and "findings name no DAG" in warned[0], text.out
    assert text.out.strip().endswith("1 pending statement(s): 0 error(s), 2 warning(s), 0 to approve")
    report = project.lint().report
    assert report["warnings"] == 2 and f"cannot reach Airflow at {url}" in report["airflow_warning"]
    assert report["statements"][0]["findings"][0]["readers"] == {"views": ["notes"], "dags": [], "asset": None}
    github = project.cli("lint", "--format", "github")
    assert [line for line in github.out.splitlines() if line.startswith("::warning title=airflow::")], github.out
    # Without a statement that renames or drops a column, Airflow is not asked at all.
    project.write("V2__rename.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n")
    quiet = project.lint().report
    assert quiet["warnings"] == 0 and quiet["airflow_warning"] is None


# -- nolint -------------------------------------------------------------------------------------
NOLINT = (
    "-- alterflow:nolint drop_column\n"
    "ALTER TABLE orders DROP COLUMN amount;\n"
    "ALTER TABLE orders RENAME COLUMN note TO remark;  -- alterflow:nolint backward_incompatible, missing_expected_version\n"
    "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n"
    "ALTER TABLE orders\n"
    "    MODIFY COLUMN remark INT; -- alterflow:nolint\n"
    "INSERT INTO orders (id, region) VALUES (3, '-- alterflow:nolint');\n"
    "ALTER TABLE orders DROP COLUMN region;\n"
)


def test_nolint_suppresses_the_rules_it_names_for_its_statement_and_lists_them(project):
    project.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, 'b');\n")
    project.applied()
    project.write("V2__changes.sql", NOLINT)
    project.rules('missing_expected_version = "warning"\nrewrite = "error"\nfailed_casts = "error"')
    lint = project.lint("--analyze")
    found = by_line(lint.report)
    drop = found[("V2__changes.sql", 2)]  # the directive on the line before
    assert rules_of(drop) == [("missing_expected_version", "warning")]
    assert [(f["rule"], f["nolint_line"]) for f in drop["suppressed"]] == [("drop_column", 1)]
    rename = found[("V2__changes.sql", 3)]  # the directive on its line, two rules
    assert rules_of(rename) == [] and [f["rule"] for f in rename["suppressed"]] == ["missing_expected_version", "backward_incompatible"]
    assert rename["suppressed"][1]["readers"]["views"] == []
    # the next statement: a trailing directive is not the line before it
    assert rules_of(found[("V2__changes.sql", 4)]) == [("missing_expected_version", "warning")]
    retype = found[("V2__changes.sql", 5)]  # bare, on the statement's last line: every rule, the analysis's too
    assert retype["kind"] == "HEAVY" and retype["failed_casts"] == 2 and rules_of(retype) == []
    assert {(f["rule"], f["level"], f["nolint_line"]) for f in retype["suppressed"]} == {
        ("rewrite", "error", 6),
        ("failed_casts", "error", 6),
        ("missing_expected_version", "warning", 6),
    }
    insert = found[("V2__changes.sql", 7)]  # the words inside a string are no directive
    assert insert["suppressed"] == []
    assert rules_of(found[("V2__changes.sql", 8)]) == [("drop_column", "warning"), ("missing_expected_version", "warning")]
    report = lint.report
    assert (report["errors"], report["warnings"], report["approvals"], report["suppressed"]) == (0, 4, 0, 6)
    assert lint.code == 0  # the rewrite and its failed casts would be errors: suppressed, not counted
    text = project.cli("lint")  # without --analyze: no failed_casts finding, so one suppressed fewer
    assert "  nolint   drop_column (warning, suppressed at line 1): drops column amount of orders" in text.out
    assert text.out.strip().endswith("6 pending statement(s): 0 error(s), 4 warning(s), 0 to approve, 5 suppressed by alterflow:nolint")
    github = project.cli("lint", "--format", "github")
    assert "title=drop_column" not in github.out.split("line=8")[0]  # only the unsuppressed drop of line 8 is annotated
    assert "line=8,title=drop_column" in github.out
    assert github.out.strip().endswith("0 error(s), 4 warning(s), 0 to approve, 5 suppressed by alterflow:nolint")


def test_a_bare_nolint_never_suppresses_rejected(project):
    project.write("V1__orders.sql", ORDERS)
    project.applied()
    project.write("V2__bad.sql", "-- alterflow:nolint\nALTER TABLE orders DROP COLUMN nope;\n")
    lint = project.lint()
    assert lint.code == 1
    statement = lint.report["statements"][0]
    assert rules_of(statement) == [("rejected", "error")] and statement["suppressed"] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "ALTER TABLE orders DROP COLUMN amount; -- alterflow:nolint drop_colum\n",
            "V2__x.sql:1: -- alterflow:nolint names unknown rule 'drop_colum' (known: ",
        ),
        (
            "ALTER TABLE orders ADD COLUMN c INT;\n\n-- alterflow:nolint rejected\nALTER TABLE orders ADD COLUMN d INT;\n",
            "V2__x.sql:3: -- alterflow:nolint cannot suppress rule rejected: a rejected statement cannot be applied",
        ),
        (
            "-- alterflow:nolint drop_column\n\nALTER TABLE orders DROP COLUMN amount;\n",
            "V2__x.sql:1: -- alterflow:nolint applies to no statement; put it on the statement's line or on the line before it",
        ),
    ],
)
def test_a_bad_nolint_is_one_line_naming_the_file_and_line(project, text, expected):
    project.write("V1__orders.sql", ORDERS)
    project.applied()
    project.write("V2__x.sql", text)
    for args in (["lint"], ["lint", "--format", "json"], ["lint", "--format", "github"], ["apply"]):
        run = project.cli(*args)
        assert run.error_line.startswith(f"error: {expected}"), (args, run)
        assert run.out == "", (args, run.out)
    status = project.cli("status", "--format", "json").report  # apply refused before it ran anything
    assert [m["state"] for m in status["migrations"]] == ["APPLIED", "PENDING"]


@pytest.mark.parametrize("rule", [rule for rule in DEFAULTS if rule != "rejected"])
def test_every_rule_of_the_defaults_can_be_named(project, rule):
    """The directive knows the rules of DEFAULTS, so rules added there later are known too."""
    project.write("V1__orders.sql", ORDERS + f"ALTER TABLE orders ADD COLUMN c INT; -- alterflow:nolint {rule}\n")
    lint = project.lint()
    assert lint.code == 0 and lint.err == "", lint
