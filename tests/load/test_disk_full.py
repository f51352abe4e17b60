"""A full disk under a load, through the real `alterflow` command on both catalogs: a warehouse on a
2 MB tmpfs, and a SQLite catalog on one. Each failure is one line (no "internal error", no log),
nothing of the load is visible, and a later `alterflow gc` leaves only the files the catalog names."""

from __future__ import annotations

import os
import pathlib
import time

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.models import DataFileRow
from tests.support.cli_lines import one_line, run
from tests.support.mounts import fill, tmpfs

SETUP = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2; INSERT INTO t VALUES (1, 'a')"
LOAD_ABORTED = "load into t: no space left on device: the load was aborted and nothing of it is visible; `alterflow gc` deletes its files"
CATALOG_FULL = "the catalog database cannot be written: its disk is full; nothing was committed. Free space and run the command again"


def big_csv(folder: pathlib.Path) -> pathlib.Path:
    """About 5 MB of rows that compress poorly: more than a 2 MB warehouse holds."""
    import random
    import string

    rng = random.Random(35)
    path = folder / "big.csv"
    with open(path, "w") as out:
        out.write("id,v\n")
        for i in range(2, 100_002):
            out.write(f"{i},{''.join(rng.choices(string.ascii_letters, k=40))}\n")
    return path


def rows(home: pathlib.Path, **env: str) -> str:
    proc = run(home, "sql", "-e", "SELECT count(*) AS n FROM t", "--format", "json", **env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def live_files(catalog_url: str) -> set[str]:
    with Catalog(catalog_url).db_session() as s:
        return {row.path for row in s.query(DataFileRow).filter(DataFileRow.state == "LIVE")}


def age_orphans(catalog_url: str, warehouse: pathlib.Path) -> None:
    """Files no live row names, four days old: GC deletes an orphan only past the orphan retention
    (docs/gc.md), and the test moves their clock instead of waiting."""
    live, then = live_files(catalog_url), time.time() - 4 * 24 * 3600
    for path in warehouse.rglob("*.parquet*"):
        if str(path.relative_to(warehouse)) not in live:
            os.utime(path, (then, then))


def assert_only_named_files(catalog_url: str, warehouse: pathlib.Path) -> None:
    """What the warehouse holds is the marker and the files the catalog names as live, nothing else."""
    live = live_files(catalog_url)
    on_disk = {str(p.relative_to(warehouse)) for p in warehouse.rglob("*") if p.is_file() and p.name != "_alterflow_warehouse.json"}
    assert on_disk == live, (on_disk, live)


def test_a_full_warehouse_fails_a_load_and_an_insert_in_one_line_and_gc_cleans_up(catalog_url, tmp_path):
    csv = big_csv(tmp_path)
    with tmpfs(tmp_path / "warehouse", "2m") as warehouse:
        home = tmp_path / "home"
        env = {"ALTERFLOW_CATALOG_URL": catalog_url, "ALTERFLOW_WAREHOUSE": str(warehouse)}
        assert run(home, "sql", "-e", SETUP, **env).returncode == 0
        before = rows(home, **env)
        assert one_line(run(home, "load", "t", str(csv), **env)) == LOAD_ABORTED
        assert rows(home, **env) == before
        fill(warehouse)
        assert one_line(run(home, "sql", "-e", "INSERT INTO t VALUES (2, 'b')", **env)) == LOAD_ABORTED
        assert rows(home, **env) == before
        assert not (home / "logs").exists() or not any((home / "logs").glob("internal-error-*"))
        (warehouse / "filler").unlink()
        age_orphans(catalog_url, warehouse)
        gc = run(home, "gc", "--retention", "0", **env)
        assert gc.returncode == 0, gc.stderr
        assert_only_named_files(catalog_url, warehouse)
        assert rows(home, **env) == before
        assert one_line(run(home, "load", "t", str(csv), **env)) == LOAD_ABORTED  # still too big: the same line again
        assert rows(home, **env) == before


def test_a_full_sqlite_catalog_is_one_line_and_nothing_commits(tmp_path):
    with tmpfs(tmp_path / "home", "2m") as home:
        warehouse = tmp_path / "warehouse"
        env = {"ALTERFLOW_WAREHOUSE": str(warehouse)}
        catalog_url = f"sqlite:///{home / 'catalog.db'}"
        assert run(home, "sql", "-e", SETUP, **env).returncode == 0
        before = rows(home, **env)
        versions = run(home, "sql", "-e", "SHOW SCHEMA VERSIONS FROM t", **env).stdout
        fill(home)
        for statement in ("INSERT INTO t VALUES (2, 'b')", "CREATE TABLE u (a INT)", "ALTER TABLE t ADD COLUMN c INT"):
            assert one_line(run(home, "sql", "-e", statement, **env)) == CATALOG_FULL
        assert one_line(run(home, "load", "t", str(big_csv(tmp_path)), **env)) == CATALOG_FULL
        (home / "filler").unlink()  # a SQLite catalog whose write-ahead log cannot grow is not read either
        assert rows(home, **env) == before
        assert run(home, "sql", "-e", "SHOW SCHEMA VERSIONS FROM t", **env).stdout == versions
        age_orphans(catalog_url, warehouse)
        gc = run(home, "gc", "--retention", "0", **env)
        assert gc.returncode == 0, gc.stderr
        assert_only_named_files(catalog_url, warehouse)
        assert rows(home, **env) == before
        assert run(home, "sql", "-e", "INSERT INTO t VALUES (2, 'b')", **env).returncode == 0  # room again: it works
