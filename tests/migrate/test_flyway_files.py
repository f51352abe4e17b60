"""Files teams already have (issue 36): a UTF-8 byte-order mark, Flyway's names (`V1_1__x.sql`,
`V2__add order channel.sql`, `V3.sql`), repeatable `R__` files and undo `U` files, through the
`alterflow migrate` command on both catalogs (in this process, as `alterflow` runs it; the kill -9
case as a real process)."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys

import pytest

# Imported when the module is collected, not inside a test: importing Airflow configures its logging
# handlers on the stream stderr is then, and a test's capsys stream is closed after it (the later
# tests' catalog upgrades then log into a closed file).
from alterflow.airflow.migrate_tasks import BadMigrateParams, check_unchanged, lint
from alterflow.catalog.migration_history import APPLIED, FAILED, REPEATABLE, MigrationHistory
from alterflow.catalog.models import MigrationRow
from alterflow.cli.command import main
from alterflow.migrate.migration_files import checksum
from tests.migrate.conftest import ORDERS
from tests.support.heavy_jobs import subprocess_env

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
BOM = "\ufeff"
VIEWS = (
    "-- views of orders, re-created whenever this file changes\n"
    "CREATE OR REPLACE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 10;\n"
    "CREATE VIEW big_ids AS SELECT id FROM big_orders;\n"
    "INSERT INTO channels VALUES ('web', 'Web shop'), ('pos', 'Point of sale');\n"
)
CHANNELS = "CREATE TABLE channels (code VARCHAR(8) NOT NULL, label STRING, PRIMARY KEY (code));\n"


class Project:
    """A migrations directory and the `alterflow migrate` command on the test's catalog."""

    def __init__(self, root: pathlib.Path, catalog_url: str, monkeypatch, capsys):
        self.root, self.catalog_url, self.capsys = root, catalog_url, capsys
        self.dir = root / "migrations"
        self.dir.mkdir()
        for name in [k for k in os.environ if k.startswith("ALTERFLOW_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("ALTERFLOW_HOME", str(root / "home"))
        monkeypatch.setenv("ALTERFLOW_CATALOG_URL", catalog_url)

    def write(self, name: str, text: str) -> pathlib.Path:
        (self.dir / name).write_text(text, encoding="utf-8")
        return self.dir / name

    def run(self, *args: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main(["migrate", "--dir", str(self.dir), *args])
        out, err = self.capsys.readouterr()
        return code, out, err

    def ok(self, *args: str) -> str:
        code, out, err = self.run(*args)
        assert code == 0 and err == "", (code, out, err)
        return out

    def error(self, *args: str) -> str:
        """The one line a refusal prints (exit 1)."""
        code, out, err = self.run(*args)
        assert code == 1 and err.count("\n") == 1 and err.startswith("error: "), (code, out, err)
        return err.strip()

    def status(self) -> dict:
        return json.loads(self.ok("status", "--format", "json"))

    def states(self) -> dict[str, tuple[str, str]]:
        return {m["script"]: (m["version"], m["state"]) for m in self.status()["migrations"]}

    def query(self, sql: str) -> list[list]:
        """The rows of one SELECT, sorted, as `alterflow sql --format json` prints them."""
        self.capsys.readouterr()
        assert main(["sql", "--format", "json", "-e", sql]) == 0
        (result,) = [json.loads(line) for line in self.capsys.readouterr().out.splitlines() if line.strip()]
        return sorted(result["rows"])


@pytest.fixture
def project(tmp_path, catalog_url, monkeypatch, capsys) -> Project:
    return Project(tmp_path, catalog_url, monkeypatch, capsys)


def _catalog(project: Project):
    from alterflow.catalog.catalog import Catalog

    return Catalog(project.catalog_url)


def _repeatable_rows(project: Project) -> list[tuple[str, str, str]]:
    """(script, state, checksum) of each application of a repeatable file, oldest first."""
    from sqlalchemy import select

    with _catalog(project).db_session() as s:
        rows = s.scalars(select(MigrationRow).where(MigrationRow.kind == REPEATABLE).order_by(MigrationRow.id))
        return [(r.script, r.state, r.checksum) for r in rows]


# -- the byte-order mark ----------------------------------------------------------------------
def test_a_byte_order_mark_is_ignored_in_statements_and_checksum(project):
    project.write("V1__orders.sql", BOM + ORDERS)
    lint = project.ok("lint")
    assert "V1__orders.sql:1  CREATE TABLE orders" in lint and "0 error(s)" in lint
    assert "V1__orders.sql:1 CREATE TABLE orders" in project.ok("apply")
    # a file applied without a mark keeps matching once an editor adds one, and the other way round
    project.write("V2__region.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n")
    project.ok("apply")
    project.write("V2__region.sql", BOM + "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n")
    project.write("V1__orders.sql", ORDERS)
    status = project.status()
    assert [(m["script"], m["state"], m["checksum_ok"]) for m in status["migrations"]] == [
        ("V1__orders.sql", "APPLIED", True),
        ("V2__region.sql", "APPLIED", True),
    ]
    assert status["drift"] == []
    recorded = {m.script: m.checksum for m in MigrationHistory(_catalog(project)).migrations()}
    assert recorded == {
        "V1__orders.sql": checksum(ORDERS),
        "V2__region.sql": checksum("ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n"),
    }
    assert project.ok("apply").strip() == "nothing to apply: every migration file is applied"


# -- Flyway's names ---------------------------------------------------------------------------
def test_flyway_names_underscore_versions_spaces_and_no_description(project):
    project.write("V1_1__orders.sql", ORDERS)
    project.write("V2__add order channel.sql", "ALTER TABLE orders ADD COLUMN channel VARCHAR(8);\n")
    project.write("V3.sql", "ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n")
    project.write("V1_10__note.sql", "ALTER TABLE orders MODIFY COLUMN note VARCHAR(30);\n")
    status = project.status()
    assert [(m["version"], m["description"], m["script"], m["state"]) for m in status["migrations"]] == [
        ("1.1", "orders", "V1_1__orders.sql", "PENDING"),
        ("1.10", "note", "V1_10__note.sql", "PENDING"),
        ("2", "add order channel", "V2__add order channel.sql", "PENDING"),
        ("3", "", "V3.sql", "PENDING"),
    ]
    assert project.ok("lint").strip().endswith("4 pending statement(s): 0 error(s), 0 warning(s), 0 to approve")
    out = project.ok("apply", "--to", "1_10")  # --to takes Flyway's spelling too
    assert out.splitlines()[-1] == "applied 2 file(s), 2 statement(s)"
    out = project.ok("apply")
    assert "V2__add order channel.sql APPLIED (1 statement(s))" in out and "V3.sql APPLIED (1 statement(s))" in out
    assert {m.version: m.description for m in MigrationHistory(_catalog(project)).migrations()} == {
        "1.1": "orders",
        "1.10": "note",
        "2": "add order channel",
        "3": "",
    }
    assert [c.name for c in _catalog(project).current_schema("orders")[1].columns] == ["id", "amount", "note", "channel", "region"]


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (("V1_1__a.sql", "V1.1__b.sql"), "error: V1.1__b.sql and V1_1__a.sql have the same version 1.1; versions must be unique"),
        (
            ("V1__a.sql", "v2__b.sql"),
            "error: 'v2__b.sql': the prefix must be an upper-case V (as in Flyway, whose prefixes are case-sensitive)",
        ),
        (
            ("V1__a.sql", "U1__a.sql"),
            "error: 'U1__a.sql': an undo migration (Flyway's U prefix); alterflow does not run undo files: "
            "undo a change with a new versioned file, e.g. ALTER TABLE t REVERT TO VERSION n, then delete this one",
        ),
        (("V1__a.sql", "R1__views.sql"), "error: 'R1__views.sql': a repeatable migration has no version; use R__<description>.sql"),
        (("R__views.sql", "R__Views.sql"), "have the same description"),
        (("V1__a.sql", "R__.sql"), "error: 'R__.sql': a repeatable migration needs a description"),
        (("V1__a.sql", "V1_x__b.sql"), "error: 'V1_x__b.sql': not a migration file name; use V<version>__<description>.sql"),
    ],
)
def test_names_flyway_refuses_are_one_line_and_change_nothing(project, names, expected):
    for name in names:
        project.write(name, "CREATE VIEW v AS SELECT 1 AS one;\n" if name.startswith("R") else ORDERS)
    assert expected in project.error("status")
    assert expected in project.error("apply")
    assert _catalog(project).object_kind("orders") is None and _catalog(project).object_kind("v") is None
    assert MigrationHistory(_catalog(project)).migrations() == [] and _repeatable_rows(project) == []


# -- repeatable migrations --------------------------------------------------------------------
def test_repeatables_run_after_the_versioned_files_in_name_order_and_again_when_changed(project):
    project.write("V1__orders.sql", ORDERS + CHANNELS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c');\n")
    project.write("R__views.sql", VIEWS)
    project.write("R__a_first.sql", "DROP VIEW IF EXISTS gone;\n")
    assert project.states() == {
        "V1__orders.sql": ("1", "PENDING"),
        "R__a_first.sql": ("", "PENDING"),
        "R__views.sql": ("", "PENDING"),
    }
    lint = json.loads(project.ok("lint", "--format", "json"))
    assert [(s["script"], s["line"], s["kind"]) for s in lint["statements"]][-4:] == [
        ("R__a_first.sql", 1, "LIGHT"),
        ("R__views.sql", 2, "LIGHT"),
        ("R__views.sql", 3, "LIGHT"),
        ("R__views.sql", 4, "DATA"),
    ]
    assert lint["errors"] == 0 and lint["statements"][-1]["version"] is None
    lines = project.ok("apply").splitlines()
    assert lines == [
        "V1__orders.sql:1 CREATE TABLE orders",
        "V1__orders.sql:2 CREATE TABLE channels",
        "V1__orders.sql:3 3 rows loaded into orders (transaction 1)",
        "V1__orders.sql APPLIED (3 statement(s))",
        "R__a_first.sql:1 view gone does not exist, skipped",
        "R__a_first.sql APPLIED (1 statement(s), repeatable)",
        "R__views.sql:2 CREATE VIEW big_orders",
        "R__views.sql:3 CREATE VIEW big_ids",
        "R__views.sql:4 2 rows loaded into channels (transaction 2)",
        "R__views.sql APPLIED (3 statement(s), repeatable)",
        "applied 3 file(s), 7 statement(s)",
    ]
    assert project.query("SELECT id FROM big_ids") == [[2], [3]]
    # unchanged: nothing to run
    assert project.ok("apply").strip() == "nothing to apply: every migration file is applied"
    # changed: OUTDATED in status, re-created (the view's new query, its rows upserted, not added)
    project.write("R__views.sql", VIEWS.replace("amount > 10", "amount > 0").replace("'Web shop'", "'Web'"))
    status = {m["script"]: m for m in project.status()["migrations"]}
    assert (status["R__views.sql"]["state"], status["R__views.sql"]["checksum_ok"], status["R__views.sql"]["kind"]) == (
        "OUTDATED",
        False,
        "REPEATABLE",
    )
    assert status["R__a_first.sql"]["state"] == "APPLIED" and status["R__a_first.sql"]["checksum_ok"]
    assert "repeatable OUTDATED        changed" in project.ok("status")
    dry = project.ok("apply", "--dry-run")
    assert "view big_orders replaced: dropped and created again" in dry and dry.strip().endswith(
        "dry run: 3 statement(s) would run; nothing was changed"
    )
    out = project.ok("apply")
    assert "R__views.sql APPLIED again (3 statement(s), repeatable)" in out and "R__a_first" not in out
    assert project.query("SELECT id FROM big_ids") == [[1], [2], [3]]
    assert project.query("SELECT code, label FROM channels") == [["pos", "Point of sale"], ["web", "Web"]]
    rows = _repeatable_rows(project)
    assert [(script, state) for script, state, _ in rows] == [
        ("R__a_first.sql", APPLIED),
        ("R__views.sql", APPLIED),
        ("R__views.sql", APPLIED),
    ]
    assert rows[2][2] == checksum(project.dir.joinpath("R__views.sql").read_text()) != rows[1][2]
    assert {m["script"]: m["state"] for m in project.status()["migrations"]}["R__views.sql"] == "APPLIED"


@pytest.mark.parametrize(
    ("repeatable", "expected"),
    [
        (
            "ALTER TABLE orders ADD COLUMN x INT;",
            "R__bad.sql line 2: ALTER TABLE cannot run again: put it in a versioned file (a repeatable file takes CREATE [OR REPLACE] VIEW",
        ),
        ("CREATE TABLE t (a INT);", "R__bad.sql line 2: CREATE TABLE cannot run again"),
        ("DROP VIEW big_orders;", "R__bad.sql line 2: DROP VIEW big_orders fails when run again: write DROP VIEW IF EXISTS big_orders"),
        ("INSERT INTO events VALUES (9, 'x');", "R__bad.sql line 2: INSERT INTO events: the table has no primary key"),
        ("INSERT INTO channels SELECT 'x', 'y';", "R__bad.sql line 2: INSERT INTO channels ... SELECT may load other rows each time"),
    ],
)
def test_a_statement_that_cannot_run_again_is_refused_naming_file_and_line(project, repeatable, expected):
    project.write("V1__orders.sql", ORDERS + CHANNELS + "CREATE TABLE events (id INT, v STRING);\n")
    project.write("R__bad.sql", "-- a repeatable file\n" + repeatable + "\n")
    code, out, _err = project.run("lint")
    assert code == 1 and "R__bad.sql:2" in out and "1 error(s)" in out
    line = project.error("apply")
    assert expected in line and line.endswith("nothing was applied")
    assert _catalog(project).object_kind("orders") is None and _repeatable_rows(project) == []


def test_a_view_another_view_reads_is_not_replaced_behind_its_back(project):
    project.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, 'b');\n")
    project.write("R__views.sql", "CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 10;\n")
    project.ok("apply")
    assert main(["sql", "-e", "CREATE VIEW outside AS SELECT id FROM big_orders"]) == 0
    project.write("R__views.sql", "CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 0;\n")
    line = project.error("apply")
    assert line == (
        "error: migrate apply: R__views.sql line 1: view big_orders cannot be replaced: view outside uses it and is not made by "
        "this file (make both in one repeatable file, or drop it first); nothing was applied"
    )
    assert project.query("SELECT id FROM big_orders") == [[2]]
    assert [state for _script, state, _sum in _repeatable_rows(project)] == [APPLIED]


def test_a_failed_repeatable_is_applied_again_once_fixed(project):
    project.write("V1__orders.sql", ORDERS + CHANNELS)
    project.write(
        "R__codes.sql", "INSERT INTO channels VALUES ('web', 'Web');\nINSERT INTO channels VALUES ('far too long a code', 'x');\n"
    )
    code, out, err = project.run("apply")
    assert code == 1 and err.startswith("error: R__codes.sql:2: ") and "the next apply applies it again" in err
    status = {m["script"]: m for m in project.status()["migrations"]}
    assert status["R__codes.sql"]["state"] == FAILED and status["V1__orders.sql"]["state"] == APPLIED
    project.write("R__codes.sql", "INSERT INTO channels VALUES ('web', 'Web');\nINSERT INTO channels VALUES ('pos', 'x');\n")
    assert "R__codes.sql APPLIED again (2 statement(s), repeatable)" in project.ok("apply")
    assert project.query("SELECT code, label FROM channels") == [["pos", "x"], ["web", "Web"]]
    assert [state for _script, state, _sum in _repeatable_rows(project)] == [FAILED, APPLIED]


def test_an_apply_killed_inside_a_repeatable_converges(project):
    """SIGKILL after the file's views were dropped and before they are made again: the views are
    gone, the application is APPLYING; the next apply applies the whole file again."""
    project.write("V1__orders.sql", ORDERS + CHANNELS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c');\n")
    project.write("R__views.sql", VIEWS)
    project.ok("apply")
    project.write("R__views.sql", VIEWS.replace("amount > 10", "amount > 20"))
    env = subprocess_env(project.root / "home")
    # a short apply lease: the next apply waits for the dead one's to run out
    env.update(ALTERFLOW_CATALOG_URL=project.catalog_url, ALTERFLOW_CRASH_AT="repeatable_views_dropped", ALTERFLOW_LEASE_S="2")
    killed = subprocess.run(
        [str(ALTERFLOW), "migrate", "--dir", str(project.dir), "apply"], env=env, capture_output=True, text=True, timeout=120
    )
    assert killed.returncode == -signal.SIGKILL, killed
    assert _catalog(project).object_kind("big_orders") is None and _catalog(project).object_kind("big_ids") is None
    assert {m["script"]: m["state"] for m in project.status()["migrations"]}["R__views.sql"] == "APPLYING"
    out = project.ok("apply")
    assert "R__views.sql was applying when an apply stopped; applying it again from its start" in out
    assert "R__views.sql APPLIED again (3 statement(s), repeatable)" in out
    assert project.query("SELECT id FROM big_ids") == [[3]]
    assert project.query("SELECT code FROM channels") == [["pos"], ["web"]]
    assert [state for _script, state, _sum in _repeatable_rows(project)] == [APPLIED, FAILED, APPLIED]
    assert project.status()["drift"] == []


def test_the_dag_applies_no_repeatable_file_changed_since_its_approval(project):
    """The alterflow_migrate DAG's lint names every pending file it planned (repeatables too), and
    its apply refuses once one of them changed since the person approved it."""
    from alterflow.migrate.status import migration_status

    project.write("V1__orders.sql", ORDERS + "INSERT INTO orders VALUES (1, 10, 'a'), (2, 20, 'b');\n")
    project.write("R__views.sql", "CREATE VIEW big_orders AS SELECT id FROM orders WHERE amount > 10;\n")
    summary, _report, _body = lint({"migrations_dir": str(project.dir)})
    assert set(summary["files"]) == {"V1__orders.sql", "R__views.sql"}
    check_unchanged(migration_status(_catalog(project), project.dir), summary)  # as approved: no refusal
    project.write("R__views.sql", "CREATE VIEW big_orders AS SELECT id FROM orders;\n")
    with pytest.raises(BadMigrateParams, match=r"the pending migrations changed since the lint \(R__views.sql\)"):
        check_unchanged(migration_status(_catalog(project), project.dir), summary)
