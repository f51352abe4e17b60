"""A warehouse belongs to one catalog (docs/gc.md), through the real CLI on SQLite and PostgreSQL.

The mistake this guards against: a worker whose ALTERFLOW_CATALOG_URL is missing opens a fresh
catalog, and `alterflow gc` there, against the real warehouse, deleted every committed file of the
real catalog as unreferenced. Now every command that writes or deletes files is refused in one
line naming both catalogs, before anything is touched; `alterflow db bind-warehouse` re-binds on
purpose; a warehouse moved with its catalog keeps working. The owner's rows are read back in this
process (`select`: the test run's SparkSession, not a JVM started by a CLI run per check)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from alterflow.engine.session import Session
from alterflow.errors import shown_path
from alterflow.settings import Settings
from alterflow.store.warehouse import MARKER
from tests.support.statements import sql

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
OWNER_LINE = re.compile(
    r"warehouse (\S+) belongs to catalog ([0-9a-f]{32}), not to this catalog ([0-9a-f]{32}): "
    r"check ALTERFLOW_CATALOG_URL and ALTERFLOW_WAREHOUSE; `alterflow db bind-warehouse` re-binds"
)


def run(home: pathlib.Path, catalog_url: str, warehouse: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(
        ALTERFLOW_HOME=str(home),
        ALTERFLOW_CATALOG_URL=catalog_url,
        ALTERFLOW_WAREHOUSE=str(warehouse),
        ALTERFLOW_SPARK_MASTER="local[1]",
        PYSPARK_PYTHON=sys.executable,
    )
    return subprocess.run([str(ALTERFLOW), *args], env=env, cwd=home.parent, capture_output=True, text=True, timeout=300)


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def refused(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0][len("error: ") :]


def select(home: pathlib.Path, catalog_url: str, warehouse: pathlib.Path, query: str) -> list[list]:
    """The rows of `query` through a Session of this process on that catalog and warehouse."""
    settings = Settings.from_env({"ALTERFLOW_HOME": str(home), "ALTERFLOW_CATALOG_URL": catalog_url, "ALTERFLOW_WAREHOUSE": str(warehouse)})
    return [list(row) for row in sql(Session(settings), query)]


def snapshot(warehouse: pathlib.Path) -> dict[str, int]:
    """Every file of the warehouse with its size: what must not change."""
    return {str(p.relative_to(warehouse)): p.stat().st_size for p in sorted(warehouse.rglob("*")) if p.is_file()}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def catalogs(request, tmp_path):
    """Two catalog URLs of the same kind: the owner's, and a fresh one."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'owner.db'}", f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    owner = request.getfixturevalue("pg_url")
    # A second PostgreSQL schema for the fresh catalog: pg_empty_url gives one per test, so make
    # another the same way, upgraded as `alterflow db upgrade` would.
    import uuid

    import sqlalchemy

    from alterflow.catalog.database import upgrade_catalog
    from tests.conftest import PG_ADMIN_URL

    schema = f"af_test_{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    fresh = f"{PG_ADMIN_URL}?options=-csearch_path%3D{schema}"
    upgrade_catalog(fresh)
    yield owner, fresh
    from alterflow.catalog.database import close_engine

    close_engine(fresh)
    with admin.connect() as conn:
        conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
    admin.dispose()


@pytest.mark.spark
def test_a_catalog_that_does_not_own_the_warehouse_deletes_and_writes_nothing(tmp_path, catalogs, spark):
    owner_url, fresh_url = catalogs
    home, warehouse = tmp_path / "home", tmp_path / "warehouse"
    home.mkdir()
    ok(
        run(
            home,
            owner_url,
            warehouse,
            "sql",
            "-e",
            "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)); INSERT INTO t VALUES (1, 'a'), (2, 'b');"
            "ALTER TABLE t ADD COLUMN n INT DEFAULT 3",
        )
    )
    marker = json.loads((warehouse / MARKER).read_text())
    owner_id = marker["catalog_id"]
    before = snapshot(warehouse)
    csv = tmp_path / "rows.csv"
    csv.write_text("id,v\n7,x\n")

    # The fresh catalog (a worker without ALTERFLOW_CATALOG_URL, or a second catalog on one path):
    # GC, a dry run, a load, an INSERT, a heavyweight ALTER and a re-bind without --force, refused.
    # CREATE TABLE is refused too; the fresh catalog's table is made against a warehouse of its own.
    create = ("sql", "-e", "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    assert OWNER_LINE.fullmatch(refused(run(home, fresh_url, warehouse, *create)))
    ok(run(home, fresh_url, tmp_path / "its-own", *create))
    for args in (
        ("gc", "--retention", "0"),
        ("gc", "--dry-run"),
        ("load", "t", str(csv)),
        ("sql", "-e", "INSERT INTO t VALUES (9, 'z')"),
        ("sql", "-e", "ALTER TABLE t MODIFY COLUMN v INT"),  # a heavyweight ALTER: refused before its job exists
    ):
        line = refused(run(home, fresh_url, warehouse, *args))
        match = OWNER_LINE.fullmatch(line)
        assert match, (args, line)
        assert match.group(1) == str(warehouse) and match.group(2) == owner_id and match.group(3) != owner_id
        assert len(line) < 300
    line = refused(run(home, fresh_url, warehouse, "db", "bind-warehouse"))
    assert re.fullmatch(
        rf"warehouse {re.escape(str(warehouse))} holds 1 data file\(s\) catalog [0-9a-f]{{32}} has no record of "
        rf"\(its owner's: {owner_id}\): --force re-binds anyway, and GC then deletes them",
        line,
    ), line
    assert snapshot(warehouse) == before, "nothing written or deleted"
    jobs = ok(run(home, fresh_url, warehouse, "sql", "--format", "json", "-e", "SHOW ALTER TABLE COLUMN FROM t"))
    assert json.loads(jobs)["rows"] == [], "no job was recorded"

    # The owner goes on as before, GC included, and its data is whole.
    assert select(home, owner_url, warehouse, "SELECT id, v, n FROM t ORDER BY id") == [[1, "a", 3], [2, "b", 3]]


@pytest.mark.spark
def test_an_unmarked_warehouse_is_claimed_only_by_a_catalog_that_knows_it(tmp_path, catalogs, spark):
    """A warehouse written before owners were recorded (no marker): a fresh catalog is refused the
    same way; the catalog whose tables are there claims it on its next write."""
    owner_url, fresh_url = catalogs
    home, warehouse = tmp_path / "home", tmp_path / "warehouse"
    home.mkdir()
    ok(run(home, owner_url, warehouse, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO t VALUES (1)"))
    (warehouse / MARKER).unlink()
    before = snapshot(warehouse)

    line = refused(run(home, fresh_url, warehouse, "gc", "--retention", "0"))
    assert re.fullmatch(
        rf"warehouse {re.escape(shown_path(warehouse))} is another catalog's warehouse: it holds 1 table folder\(s\) and this "
        r"catalog has none; check ALTERFLOW_CATALOG_URL and ALTERFLOW_WAREHOUSE; "
        r"`alterflow db bind-warehouse` re-binds",
        line,
    ), line
    assert snapshot(warehouse) == before and not (warehouse / MARKER).exists()

    ok(run(home, owner_url, warehouse, "sql", "-e", "INSERT INTO t VALUES (2)"))
    assert (warehouse / MARKER).exists()
    assert select(home, owner_url, warehouse, "SELECT id FROM t ORDER BY id") == [[1], [2]]


@pytest.mark.spark
def test_bind_warehouse_rebinds_on_purpose_and_a_moved_warehouse_keeps_working(tmp_path, catalogs, spark):
    owner_url, fresh_url = catalogs
    home, warehouse = tmp_path / "home", tmp_path / "warehouse"
    home.mkdir()
    ok(run(home, owner_url, warehouse, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO t VALUES (1)"))
    owner_id = json.loads((warehouse / MARKER).read_text())["catalog_id"]
    assert ok(run(home, owner_url, warehouse, "db", "bind-warehouse")) == f"warehouse {warehouse} is already bound to catalog {owner_id}\n"

    # Moved with its catalog: the marker names the catalog, not the path.
    moved = tmp_path / "moved"
    shutil.move(warehouse, moved)
    ok(run(home, owner_url, moved, "sql", "-e", "INSERT INTO t VALUES (2)"))
    assert select(home, owner_url, moved, "SELECT id FROM t ORDER BY id") == [[1], [2]]

    # A deliberate re-bind to the fresh catalog: refused while the owner's files are there, then
    # forced; after it the old owner is the one refused.
    before = snapshot(moved)
    assert "has no record of" in refused(run(home, fresh_url, moved, "db", "bind-warehouse"))
    assert snapshot(moved) == before
    out = ok(run(home, fresh_url, moved, "db", "bind-warehouse", "--force"))
    new_id = json.loads((moved / MARKER).read_text())["catalog_id"]
    assert out == f"warehouse {moved} bound to catalog {new_id} from catalog {owner_id}; 2 unknown file(s) left to GC\n"
    line = refused(run(home, owner_url, moved, "sql", "-e", "INSERT INTO t VALUES (3)"))
    assert OWNER_LINE.fullmatch(line) and f"belongs to catalog {new_id}, not to this catalog {owner_id}" in line


def test_a_bad_marker_is_one_line(tmp_path):
    home, warehouse = tmp_path / "home", tmp_path / "warehouse"
    home.mkdir()
    url = f"sqlite:///{tmp_path / 'c.db'}"
    ok(run(home, url, warehouse, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO t VALUES (1)"))
    (warehouse / MARKER).write_text("{not json")
    line = refused(run(home, url, warehouse, "sql", "-e", "INSERT INTO t VALUES (2)"))
    assert line == (
        f"warehouse {warehouse} has an unreadable owner marker {MARKER}: "
        "check ALTERFLOW_CATALOG_URL and ALTERFLOW_WAREHOUSE; `alterflow db bind-warehouse` re-binds"
    )
