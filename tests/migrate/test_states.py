"""States and repair through `alterflow migrate ...` (in-process, both catalogs): a file `repair`
marked DELETED that comes back (`restored`), history versions above every file (FUTURE), `migrate
set V`, and the out-of-order opt-in (`out_of_order = true`, `--out-of-order`)."""

from __future__ import annotations

import json
import os
import pathlib
from dataclasses import dataclass

import pytest

from alterflow.cli.migrate_command import main

ORDERS = "CREATE TABLE orders (id BIGINT NOT NULL, amount INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2;\n"
REGION = "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n"
CHANNEL = "ALTER TABLE orders ADD COLUMN channel VARCHAR(8);\n"
NOTE = "ALTER TABLE orders ADD COLUMN note VARCHAR(8);\n"


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str

    @property
    def error(self) -> str:
        """The one line of a refusal."""
        assert self.code == 1, self
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, self.err
        return lines[0]

    @property
    def json(self) -> dict:
        return json.loads(self.out)


class Project:
    def __init__(self, root: pathlib.Path, capsys):
        self.root = root
        self.migrations = root / "migrations"
        self.migrations.mkdir(parents=True)
        self.capsys = capsys

    def write(self, name: str, text: str) -> pathlib.Path:
        path = self.migrations / name
        path.write_text(text, encoding="utf-8")
        return path

    def config(self, text: str) -> None:
        (self.root / "pyproject.toml").write_text(text, encoding="utf-8")

    def run(self, *args: str) -> Ran:
        self.capsys.readouterr()
        code = main(list(args))
        out, err = self.capsys.readouterr()
        return Ran(code, out, err)

    def status(self, *flags: str) -> dict:
        ran = self.run("status", "--format", "json", *flags)
        assert ran.code == 0, ran
        return ran.json

    def states(self, *flags: str) -> dict[str, str]:
        return {m["script"]: m["state"] for m in self.status(*flags)["migrations"]}

    def drift(self, *flags: str) -> list[tuple[str, str]]:
        return [(d["kind"], d["script"]) for d in self.status(*flags)["drift"]]

    def columns(self) -> list[str]:
        from alterflow.engine.session import Session

        return [c.name for c in Session().catalog.current_schema("orders")[1].columns]


@pytest.fixture
def project(tmp_path, catalog_url, monkeypatch, capsys) -> Project:
    for name in list(os.environ):
        if name.startswith("ALTERFLOW_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", catalog_url)
    root = tmp_path / "project"
    project = Project(root, capsys)
    project.config("[tool.alterflow.lint]\n")  # the project's own file, not the repository's
    monkeypatch.chdir(root)
    return project


def _applied(project: Project, *names_and_texts: tuple[str, str]) -> None:
    for name, text in names_and_texts:
        project.write(name, text)
    ran = project.run("apply")
    assert ran.code == 0, ran


# -- restored ---------------------------------------------------------------------------------
def test_a_restored_deleted_file_blocks_everything_until_repair_adopts_it(project):
    _applied(project, ("V1__orders.sql", ORDERS), ("V2__region.sql", REGION), ("V3__channel.sql", CHANNEL))
    kept = (project.migrations / "V2__region.sql").read_text()
    (project.migrations / "V2__region.sql").unlink()
    assert project.run("repair").out.splitlines() == [
        "V2__region.sql: deleted from the directory; marked DELETED in the history (what it did stays)"
    ]
    project.write("V2__region.sql", kept)  # back, unchanged
    project.write("V4__note.sql", NOTE)
    assert project.states() == {
        "V1__orders.sql": "APPLIED",
        "V2__region.sql": "DELETED",
        "V3__channel.sql": "APPLIED",
        "V4__note.sql": "PENDING",
    }
    assert project.drift() == [("restored", "V2__region.sql")]
    lint = project.run("lint", "--format", "json")
    assert lint.code == 1
    assert [(f["script"], f["rule"], f["level"]) for f in lint.json["drift_findings"]] == [("V2__region.sql", "restored", "error")]
    assert [s["script"] for s in lint.json["statements"]] == ["V4__note.sql"]  # the restored file is not planned to run again
    refusal = "error: migrate apply: V2__region.sql is back in the directory but DELETED in the history; review it"
    dry = project.run("apply", "--dry-run")
    assert dry.error.startswith(refusal) and dry.error.endswith("nothing was applied")
    assert project.run("apply").error == dry.error
    assert project.columns() == ["id", "amount", "region", "channel"]  # V4 did not run
    assert project.run("repair").out.splitlines() == ["V2__region.sql: back in the directory; DELETED -> APPLIED in the history"]
    assert project.states()["V2__region.sql"] == "APPLIED" and project.drift() == []
    applied = project.run("apply")
    assert applied.code == 0 and applied.out.splitlines()[-1] == "applied 1 file(s), 1 statement(s)"
    assert project.columns() == ["id", "amount", "region", "channel", "note"]


def test_a_restored_file_that_was_edited_is_also_edited_drift(project):
    _applied(project, ("V1__orders.sql", ORDERS), ("V2__region.sql", REGION), ("V3__channel.sql", CHANNEL))
    (project.migrations / "V2__region.sql").unlink()
    assert project.run("repair").code == 0
    project.write("V2__region.sql", "-- reviewed\n" + REGION)
    assert project.drift() == [("restored", "V2__region.sql"), ("edited", "V2__region.sql")]
    (migration,) = [m for m in project.status()["migrations"] if m["script"] == "V2__region.sql"]
    assert (migration["state"], migration["checksum_ok"]) == ("DELETED", False)
    assert project.run("lint").code == 1
    assert "is back in the directory but DELETED" in project.run("apply").error
    assert project.run("repair").out.splitlines() == [
        "V2__region.sql: back in the directory; DELETED -> APPLIED in the history",
        "V2__region.sql: its current checksum accepted",
    ]
    assert project.drift() == [] and project.status()["migrations"][1]["checksum_ok"] is True
    assert project.run("apply").out.strip() == "nothing to apply: every migration file is applied"


def test_deleting_the_highest_file_makes_it_future_and_restoring_it_needs_no_repair(project):
    """Flyway's rule: an applied version above every file is a newer checkout's, not a deleted one."""
    _applied(project, ("V1__orders.sql", ORDERS), ("V2__region.sql", REGION))
    kept = (project.migrations / "V2__region.sql").read_text()
    (project.migrations / "V2__region.sql").unlink()
    assert project.run("repair").out.strip() == "nothing to repair"
    assert project.states()["V2__region.sql"] == "FUTURE"
    project.write("V2__region.sql", kept)
    assert project.states()["V2__region.sql"] == "APPLIED" and project.drift() == []


# -- future -----------------------------------------------------------------------------------
def test_versions_above_every_file_are_future_a_warning_by_default(project):
    _applied(project, ("V1__orders.sql", ORDERS), ("V2__region.sql", REGION), ("V3__channel.sql", CHANNEL))
    (project.migrations / "V3__channel.sql").unlink()  # an older checkout: it knows V1 and V2
    (project.migrations / "V2__region.sql").unlink()
    assert project.states() == {"V1__orders.sql": "APPLIED", "V2__region.sql": "FUTURE", "V3__channel.sql": "FUTURE"}
    assert project.drift() == [("future", "V2__region.sql"), ("future", "V3__channel.sql")]
    status = project.run("status")
    assert status.code == 0 and "future: V3__channel.sql (APPLIED) is in the history above every file" in status.out
    lint = project.run("lint", "--format", "json")
    assert lint.code == 0 and (lint.json["errors"], lint.json["warnings"]) == (0, 2)
    assert project.run("lint", "--format", "github").out.startswith("::warning file=migrations/V2__region.sql,title=future::")
    applied = project.run("apply")
    assert applied.code == 0, applied
    assert applied.out.splitlines() == [
        'warning: V2__region.sql (APPLIED) is in the history above every file in the directory (an older checkout?); apply goes on with the pending files (future = "warning")',
        'warning: V3__channel.sql (APPLIED) is in the history above every file in the directory (an older checkout?); apply goes on with the pending files (future = "warning")',
        "nothing to apply: every migration file is applied",
    ]
    assert project.run("repair").out.strip() == "nothing to repair"  # a future version is not a deleted file
    assert project.states()["V3__channel.sql"] == "FUTURE"
    # ... and the apply goes on with what is pending: here a file below the future versions, with the opt-in
    project.write("V1.5__note.sql", NOTE)
    ran = project.run("apply", "--out-of-order")
    assert ran.code == 0 and "applied out of order: V1.5 below applied V3" in ran.out.splitlines()
    assert project.columns() == ["id", "amount", "region", "channel", "note"]


def test_future_is_an_error_by_configuration(project):
    _applied(project, ("V1__orders.sql", ORDERS), ("V2__region.sql", REGION))
    (project.migrations / "V2__region.sql").unlink()
    project.config('[tool.alterflow.migrate]\nfuture = "error"\n')
    assert project.drift() == [("future", "V2__region.sql")]
    lint = project.run("lint", "--format", "json")
    assert lint.code == 1 and [(f["rule"], f["level"]) for f in lint.json["drift_findings"]] == [("future", "error")]
    refusal = 'error: migrate apply: V2__region.sql (APPLIED) is in the history above every file in the directory (an older checkout?); apply refuses (future = "error"'
    assert project.run("apply", "--dry-run").error.startswith(refusal)
    assert project.run("apply").error.startswith(refusal)


def test_a_file_deleted_below_the_highest_file_is_still_deleted_drift(project):
    _applied(project, ("V1__orders.sql", ORDERS), ("V2__region.sql", REGION), ("V3__channel.sql", CHANNEL))
    (project.migrations / "V2__region.sql").unlink()
    assert project.states()["V2__region.sql"] == "APPLIED"
    assert project.drift() == [("deleted", "V2__region.sql")]
    assert "V2__region.sql is APPLIED in the history but no longer in the directory" in project.run("apply").error


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[tool.alterflow.migrate]\nfutures = 'error'\n", "[tool.alterflow.migrate]: unknown key 'futures' (known: out_of_order, future)"),
        ("[tool.alterflow.migrate]\nfuture = 'ignore'\n", "[tool.alterflow.migrate]: future must be one of warning, error, not 'ignore'"),
        ("[tool.alterflow.migrate]\nout_of_order = 'yes'\n", "[tool.alterflow.migrate]: out_of_order must be true or false, not 'yes'"),
        ("[tool.alterflow]\nmigrate = 3\n", "[tool.alterflow.migrate] must be a table of key = value"),
    ],
)
@pytest.mark.parametrize("command", [("status",), ("lint",), ("apply",), ("apply", "--dry-run"), ("set", "1")])
def test_a_bad_migrate_section_is_one_line_and_changes_nothing(project, toml, expected, command):
    project.write("V1__orders.sql", ORDERS)
    project.config(toml)
    assert project.run(*command).error.endswith(expected)
    project.config("")
    assert project.states() == {"V1__orders.sql": "PENDING"}


# -- set --------------------------------------------------------------------------------------
def test_set_records_files_as_applied_without_running_them(project):
    project.write("V1__orders.sql", ORDERS)
    project.write("V2__region.sql", REGION)
    project.write("V3__channel.sql", CHANNEL)
    from alterflow.engine.session import Session

    list(Session().run(ORDERS + REGION))  # the catalog already has what V1 and V2 make (adoption)
    ran = project.run("set", "2")
    assert ran.code == 0, ran
    lines = ran.out.splitlines()
    assert lines[:2] == ["V1__orders.sql: recorded as APPLIED without running it", "V2__region.sql: recorded as APPLIED without running it"]
    assert lines[2].startswith("set: 2 file(s) up to version 2 recorded as applied by ") and lines[2].endswith(" UTC; no statement ran")
    by_script = {m["script"]: m for m in project.status()["migrations"]}
    assert [(by_script[s]["state"], by_script[s]["statements_done"]) for s in ("V1__orders.sql", "V2__region.sql", "V3__channel.sql")] == [
        ("APPLIED", 0),
        ("APPLIED", 0),
        ("PENDING", 0),
    ]
    assert by_script["V1__orders.sql"]["installed_by"] and by_script["V1__orders.sql"]["installed_at"]
    assert project.run("set", "2").out.strip() == "nothing to record: every file up to version 2 is applied"
    applied = project.run("apply")
    assert applied.code == 0 and applied.out.splitlines()[-1] == "applied 1 file(s), 1 statement(s)"
    assert project.columns() == ["id", "amount", "region", "channel"]


@pytest.mark.parametrize(
    ("version", "expected"),
    [("9", "error: migrate set: no migration file has version 9; nothing was recorded"), ("x", "error: migrate set: 'x' is not a version")],
)
def test_set_refuses_a_version_without_a_file(project, version, expected):
    project.write("V1__orders.sql", ORDERS)
    assert project.run("set", version).error.startswith(expected)
    assert project.states() == {"V1__orders.sql": "PENDING"}


def test_set_refuses_while_an_apply_holds_the_lease(project):
    from alterflow.catalog.migration_history import MigrationHistory
    from alterflow.engine.session import Session
    from alterflow.held_leases import new_holder

    project.write("V1__orders.sql", ORDERS)
    history = MigrationHistory(Session().catalog)
    holder = new_holder()
    history.acquire_lease(holder, 60.0)  # what a running apply holds
    assert project.run("set", "1").error.startswith("error: migrate set: an apply is running on this catalog (")
    assert project.states() == {"V1__orders.sql": "PENDING"}
    history.release_lease(holder)
    assert project.run("set", "1").code == 0 and project.states() == {"V1__orders.sql": "APPLIED"}


def test_set_refuses_to_skip_a_failed_or_part_applied_file(project):
    _applied(project, ("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10);\n"))
    project.write("V2__retype.sql", REGION + "INSERT INTO orders VALUES (1, 11);\n")  # two values for three columns: it fails
    project.write("V3__channel.sql", CHANNEL)
    assert project.run("apply").code == 1
    assert project.states()["V2__retype.sql"] == "FAILED"
    refused = project.run("set", "3").error
    assert refused.startswith("error: migrate set: V2__retype.sql FAILED: ") and "set would skip a failed file" in refused
    assert project.run("repair").code == 0  # FAILED cleared: APPLYING with its first statement done
    assert project.run("set", "3").error == (
        "error: migrate set: V2__retype.sql is APPLYING with 1 of 2 statement(s) done; "
        "`alterflow migrate apply` finishes it; nothing was recorded"
    )
    assert project.states() == {"V1__orders.sql": "APPLIED", "V2__retype.sql": "APPLYING", "V3__channel.sql": "PENDING"}


def test_set_refuses_an_out_of_order_hole_unless_out_of_order_is_on(project):
    _applied(project, ("V1__orders.sql", ORDERS), ("V3__channel.sql", CHANNEL))
    project.write("V2__region.sql", REGION)
    refused = project.run("set", "2").error
    assert refused.startswith("error: migrate set: V2__region.sql is pending but a higher version is already applied")
    assert project.states()["V2__region.sql"] == "PENDING"
    project.config("[tool.alterflow.migrate]\nout_of_order = true\n")
    assert project.run("set", "2").out.splitlines()[0] == "V2__region.sql: recorded as APPLIED without running it"
    assert project.states()["V2__region.sql"] == "APPLIED" and project.columns() == ["id", "amount", "channel"]


# -- out of order -----------------------------------------------------------------------------
def test_out_of_order_is_refused_by_default_and_applied_and_reported_when_opted_in(project):
    _applied(project, ("V1__orders.sql", ORDERS), ("V3__channel.sql", CHANNEL))
    project.write("V2.5__region.sql", REGION)
    assert project.drift() == [("out_of_order", "V2.5__region.sql")]
    assert project.run("lint").code == 1
    assert "V2.5__region.sql is pending but a higher version is already applied" in project.run("apply", "--dry-run").error
    assert "V2.5__region.sql is pending but a higher version is already applied" in project.run("apply").error
    assert project.columns() == ["id", "amount", "channel"]
    # the flag: status, lint and apply agree
    (drift,) = project.status("--out-of-order")["drift"]
    assert drift["detail"] == "V2.5__region.sql is pending below applied V3; apply runs it out of order (out_of_order is on)"
    lint = project.run("lint", "--out-of-order")
    assert lint.code == 0 and "drift    out_of_order: V2.5__region.sql is pending below applied V3" in lint.out
    dry = project.run("apply", "--dry-run", "--out-of-order")
    assert dry.code == 0 and "would be applied out of order: V2.5 below applied V3" in dry.out.splitlines()
    applied = project.run("apply", "--out-of-order")
    assert applied.code == 0, applied
    assert applied.out.splitlines()[-3:] == [
        "V2.5__region.sql APPLIED (1 statement(s))",
        "applied out of order: V2.5 below applied V3",
        "applied 1 file(s), 1 statement(s)",
    ]
    assert project.columns() == ["id", "amount", "channel", "region"] and project.drift() == []
    # the setting: the same without the flag
    project.config("[tool.alterflow.migrate]\nout_of_order = true\n")
    project.write("V2.7__note.sql", NOTE)
    assert project.run("lint").code == 0
    assert "applied out of order: V2.7 below applied V3" in project.run("apply").out.splitlines()
    assert project.states()["V2.7__note.sql"] == "APPLIED"
