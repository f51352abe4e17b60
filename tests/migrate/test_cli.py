"""`alterflow migrate ...` as a user runs it: subprocesses, ALTERFLOW_HOME under tmp_path, the
project's pyproject.toml next to the migrations directory."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from tests.migrate.conftest import ORDERS

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"


def _cli(project: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(project / "home"), ALTERFLOW_SPARK_MASTER="local[2]", PYSPARK_PYTHON=sys.executable)
    return subprocess.run([str(ALTERFLOW), *args], env=env, cwd=project, capture_output=True, text=True, timeout=300)


def _error(proc) -> str:
    assert proc.returncode == 1, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture
def project(tmp_path) -> pathlib.Path:
    (tmp_path / "migrations").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.alterflow.lint]\ndrop_column = "error"\n')
    (tmp_path / "migrations" / "V1__orders.sql").write_text(ORDERS + "INSERT INTO orders VALUES (1, 10, '5'), (2, 20, 'b');\n")
    (tmp_path / "migrations" / "V2__region.sql").write_text("ALTER TABLE orders ADD COLUMN region VARCHAR(8);\n")
    return tmp_path


def test_status_lint_apply_from_the_command_line(project):
    status = _cli(project, "migrate", "status", "--format", "json")
    assert status.returncode == 0, status.stderr
    assert [(m["script"], m["state"], m["checksum_ok"]) for m in json.loads(status.stdout)["migrations"]] == [
        ("V1__orders.sql", "PENDING", True),
        ("V2__region.sql", "PENDING", True),
    ]
    dry = _cli(project, "migrate", "apply", "--dry-run")
    assert dry.returncode == 0 and dry.stdout.strip().endswith("dry run: 3 statement(s) would run; nothing was changed")
    applied = _cli(project, "migrate", "apply", "--to", "1")
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines() == [
        "V1__orders.sql:1 CREATE TABLE orders",
        "V1__orders.sql:2 2 rows loaded into orders (transaction 1)",
        "V1__orders.sql APPLIED (2 statement(s))",
        "applied 1 file(s), 2 statement(s)",
    ]
    # a rewrite (approve: printed, not asked, in the CLI) and a dropped column (an error by the project's rule)
    (project / "migrations" / "V3__retype.sql").write_text(
        "ALTER TABLE orders MODIFY COLUMN note INT;\nALTER TABLE orders DROP COLUMN amount;\n"
    )
    lint = _cli(project, "migrate", "lint", "--format", "json", "--analyze")
    assert lint.returncode == 1, lint.stderr
    report = json.loads(lint.stdout)
    assert (report["errors"], report["warnings"], report["approvals"]) == (2, 0, 1)
    by_line = {(s["script"], s["line"]): s for s in report["statements"]}
    retype = by_line[("V3__retype.sql", 1)]
    assert retype["kind"] == "HEAVY" and retype["failed_casts"] == 1 and retype["samples"][0]["value"] == "b"
    assert {(f["rule"], f["level"]) for f in retype["findings"]} == {("rewrite", "approve"), ("failed_casts", "error")}
    assert by_line[("V2__region.sql", 1)]["failed_casts"] is None
    assert [(f["rule"], f["level"]) for f in by_line[("V3__retype.sql", 2)]["findings"]] == [("drop_column", "error")]
    github = _cli(project, "migrate", "lint", "--format", "github")
    assert github.returncode == 1
    assert "::error file=migrations/V3__retype.sql,line=2,title=drop_column::drops column amount of orders" in github.stdout
    assert "::notice file=migrations/V3__retype.sql,line=1,title=rewrite::" in github.stdout
    text = _cli(project, "migrate", "lint")
    assert "V3__retype.sql:1  ALTER TABLE orders MODIFY COLUMN note INT" in text.stdout
    assert text.stdout.strip().endswith("3 pending statement(s): 1 error(s), 0 warning(s), 1 to approve")
    # the status table
    shown = _cli(project, "migrate", "status")
    assert shown.returncode == 0 and "APPLIED" in shown.stdout and "no drift" in shown.stdout


def test_new_baseline_repair(project):
    created = _cli(project, "migrate", "new", "add", "a", "region")
    assert created.returncode == 0 and created.stdout.strip() == "created migrations/V3__add_a_region.sql"
    assert (
        _error(_cli(project, "migrate", "status"))
        == "error: V3__add_a_region.sql holds no statement; write the change into it, or delete it"
    )
    (project / "migrations" / "V3__add_a_region.sql").unlink()
    base = _cli(project, "migrate", "baseline", "1")
    assert base.returncode == 0 and base.stdout.startswith("baseline at version 1: 1 file(s)")
    repaired = _cli(project, "migrate", "repair")
    assert repaired.returncode == 0 and repaired.stdout.strip() == "nothing to repair"


@pytest.mark.parametrize(
    ("setup", "args", "expected"),
    [
        (
            None,
            ("migrate", "--dir", "nowhere", "status"),
            "error: migrations directory 'nowhere' does not exist (--dir or ALTERFLOW_MIGRATIONS)",
        ),
        (("V1__a.sql", "V1.0__b.sql"), ("migrate", "lint"), "V1.0__b.sql and V1__a.sql have the same version 1; versions must be unique"),
        (("Vfirst__a.sql",), ("migrate", "apply"), "'Vfirst__a.sql': not a migration file name"),
        (None, ("migrate", "apply", "--to", "7"), "error: migrate apply: --to 7: no migration file has version 7"),
        (None, ("migrate", "frobnicate"), "error: alterflow migrate: argument action: invalid choice: 'frobnicate'"),
        (None, ("migrate", "lint", "--format", "xml"), "invalid choice: 'xml'"),
        ("rules", ("migrate", "lint"), "unknown rule 'rewrites'"),
        ("parse", ("migrate", "apply"), "error: migrate apply: V3__bad.sql line 2: "),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(project, setup, args, expected):
    migrations = project / "migrations"
    if isinstance(setup, tuple):
        for name in setup:
            (migrations / name).write_text("DROP TABLE IF EXISTS x;")
    elif setup == "rules":
        (project / "pyproject.toml").write_text('[tool.alterflow.lint]\nrewrites = "error"\n')
    elif setup == "parse":
        (migrations / "V3__bad.sql").write_text("ALTER TABLE orders ADD COLUMN ok INT;\nALTER TABLE orders ADD COLUMN;\n")
    line = _error(_cli(project, *args))
    assert expected in line and len(line) <= 310
    status = _cli(project, "migrate", "--dir", str(migrations), "status", "--format", "json")
    if status.returncode == 0:
        assert {m["state"] for m in json.loads(status.stdout)["migrations"]} <= {"PENDING"}
    assert not (project / "home" / "warehouse").exists() or not any((project / "home" / "warehouse").rglob("*.parquet"))
