"""GC never deletes what might be live (docs/gc.md: "Orphans wait", "Claims need proof", "Links are
not followed"), each mistake as an operator makes it, through the real CLI on SQLite and
PostgreSQL: a deleted marker, a restored catalog, a clone beside the original, links of every kind,
a marker gone bad. Every case ends with the real catalog's rows all readable and GC (its dry run
too) having deleted nothing it should not; a leftover older than the orphan retention still goes
(the clock is moved by ageing the file, not by sleeping)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import uuid

import pytest

from alterflow.errors import shown_path
from alterflow.store.warehouse import MARKER
from tests.store.test_warehouse_binding import catalogs, ok, refused, run, select, snapshot  # noqa: F401 (catalogs: a fixture)

CREATE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)); INSERT INTO t VALUES (1, 'a'), (2, 'b')"
BEHIND = re.compile(
    r"catalog [0-9a-f]{32} is behind warehouse \S+: .*; GC deletes nothing; `alterflow db bind-warehouse --force` makes it the owner"
)
FOUR_DAYS = 4 * 24 * 3600
COPIES: list[str] = []  # PostgreSQL schemas `copy_catalog` made, dropped after each test


def data_files(warehouse) -> list[str]:
    return sorted(str(p.relative_to(warehouse)) for p in warehouse.rglob("*.parquet") if p.is_file() and not p.is_symlink())


def age(path, seconds: int = FOUR_DAYS) -> None:
    """Move the clock for one file: its modification time `seconds` back."""
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


def copy_catalog(url: str, tmp_path) -> str:
    """A restore of the catalog's backup, or a clone: the same database under another name
    (SQLite: the file copied; PostgreSQL: pg_dump of its schema into a new one, through psql)."""
    if url.startswith("sqlite:///"):
        source = url.removeprefix("sqlite:///")
        target = tmp_path / f"copy-{uuid.uuid4().hex[:6]}.db"
        for suffix in ("", "-wal"):  # the file as it is, with its write-ahead log: what a copy of the folder holds
            if os.path.exists(source + suffix):
                shutil.copyfile(source + suffix, f"{target}{suffix}")
        return f"sqlite:///{target}"
    from tests.conftest import PG_ADMIN_URL

    schema = re.search(r"search_path%3D(\w+)", url).group(1)
    copy = f"af_copy_{uuid.uuid4().hex[:10]}"
    COPIES.append(copy)
    dump = subprocess.run(
        ["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "-n", schema, "--no-owner", "test"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    restored = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-q", "test"],
        input=dump.replace(schema, copy),
        capture_output=True,
        text=True,
    )
    assert restored.returncode == 0, restored.stderr
    return f"{PG_ADMIN_URL}?options=-csearch_path%3D{copy}"


@pytest.fixture
def owner(tmp_path, catalogs):  # noqa: F811 (the fixture imported above)
    """The real catalog with table t of two rows, its home and warehouse; and a fresh catalog."""
    owner_url, fresh_url = catalogs
    home, warehouse = tmp_path / "home", tmp_path / "warehouse"
    home.mkdir()
    ok(run(home, owner_url, warehouse, "sql", "-e", CREATE))
    yield home, warehouse, owner_url, fresh_url
    if owner_url.startswith("postgresql"):
        import sqlalchemy

        from tests.conftest import PG_ADMIN_URL

        admin = sqlalchemy.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            while COPIES:
                conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {COPIES.pop()} CASCADE")
        admin.dispose()


def rows(home, url, warehouse) -> list[list]:
    return select(home, url, warehouse, "SELECT id, v FROM t ORDER BY id")


@pytest.mark.spark
def test_a_deleted_marker_and_a_fresh_catalog_delete_nothing(owner, spark):
    home, warehouse, owner_url, fresh_url = owner
    (warehouse / MARKER).unlink()
    before = snapshot(warehouse)
    # The worker that lost ALTERFLOW_CATALOG_URL: its first table and its GC are both refused.
    for args in (("sql", "-e", "CREATE TABLE anything (id INT)"), ("gc", "--retention", "0"), ("gc", "--dry-run")):
        line = refused(run(home, fresh_url, warehouse, *args))
        assert "is another catalog's warehouse" in line and len(line) <= 300, (args, line)
    assert snapshot(warehouse) == before and not (warehouse / MARKER).exists()

    # A fresh catalog that made a table elsewhere first (its table 1 is a folder here too) is
    # still refused: the files here are none of its own.
    ok(run(home, fresh_url, home / "elsewhere", "sql", "-e", "CREATE TABLE anything (id INT); INSERT INTO anything VALUES (1)"))
    for args in (("gc", "--retention", "0"), ("gc", "--dry-run"), ("sql", "-e", "INSERT INTO anything VALUES (2)")):
        line = refused(run(home, fresh_url, warehouse, *args))
        assert re.fullmatch(
            rf"warehouse {re.escape(shown_path(warehouse))} has no owner marker and this catalog has no record of 1 file\(s\) or folder\(s\) "
            r"there: check ALTERFLOW_CATALOG_URL and ALTERFLOW_WAREHOUSE; `alterflow db bind-warehouse` re-binds",
            line,
        ), (args, line)
    assert snapshot(warehouse) == before

    # The real catalog proves the warehouse is its own and claims it back; its rows are whole.
    ok(run(home, owner_url, warehouse, "gc", "--retention", "0"))
    assert json.loads((warehouse / MARKER).read_text())["catalog_id"]
    assert rows(home, owner_url, warehouse) == [[1, "a"], [2, "b"]]


@pytest.mark.spark
def test_a_warehouse_copied_without_its_marker_is_claimed_by_its_catalog_only(owner, spark):
    home, warehouse, owner_url, fresh_url = owner
    copied = home / "copied"
    shutil.copytree(warehouse, copied)
    (copied / MARKER).unlink()
    assert "another catalog's warehouse" in refused(run(home, fresh_url, copied, "gc", "--retention", "0"))
    ok(run(home, owner_url, copied, "sql", "-e", "INSERT INTO t VALUES (3, 'c')"))
    assert rows(home, owner_url, copied) == [[1, "a"], [2, "b"], [3, "c"]]


@pytest.mark.spark
def test_a_restored_catalog_deletes_nothing_of_the_newer_commits(owner, tmp_path, spark):
    """...and writes nothing either: the backup has a tablet to compact (files of two versions),
    and its GC is refused before it compacts (its compacted file would be one the real catalog
    never committed, holding the real catalog's GC back in turn)."""
    home, warehouse, owner_url, _fresh = owner
    ok(run(home, owner_url, warehouse, "sql", "-e", "ALTER TABLE t ADD COLUMN n INT DEFAULT 0; INSERT INTO t VALUES (5, 'e', 1)"))
    restored = copy_catalog(owner_url, tmp_path)  # the backup
    ok(run(home, owner_url, warehouse, "sql", "-e", "INSERT INTO t VALUES (3, 'c', 2)"))  # committed after it
    before = snapshot(warehouse)
    for args in (("gc", "--retention", "0", "--orphan-retention", "0"), ("gc", "--dry-run", "--retention", "0")):
        proc = run(home, restored, warehouse, *args)
        line = refused(proc)
        assert BEHIND.fullmatch(line) and "1 file(s) there are of transactions it never committed" in line, line
        assert len(line) <= 300
    assert snapshot(warehouse) == before
    assert rows(home, owner_url, warehouse) == [[1, "a"], [2, "b"], [3, "c"], [5, "e"]]
    out = ok(run(home, owner_url, warehouse, "gc", "--retention", "0"))  # the real catalog's GC is not held back
    assert "1 tablet compacted" in out, out
    assert rows(home, owner_url, warehouse) == [[1, "a"], [2, "b"], [3, "c"], [5, "e"]]


@pytest.mark.spark
def test_a_restore_older_than_a_gc_run_is_behind_by_the_marker(owner, tmp_path, spark):
    """The files committed after the backup are gone (a table dropped and collected since): the
    marker's high water (the newest transaction a GC of the owner saw) still tells."""
    home, warehouse, owner_url, _fresh = owner
    restored = copy_catalog(owner_url, tmp_path)
    ok(run(home, owner_url, warehouse, "sql", "-e", "CREATE TABLE u (id INT); INSERT INTO u VALUES (1); DROP TABLE u"))
    ok(run(home, owner_url, warehouse, "gc", "--retention", "0"))
    marker = json.loads((warehouse / MARKER).read_text())
    assert marker["high_water"] >= 2
    line = refused(run(home, restored, warehouse, "gc", "--retention", "0"))
    assert BEHIND.fullmatch(line) and f"GC saw transaction {marker['high_water']} there, its newest is 1" in line, line
    assert rows(home, owner_url, warehouse) == [[1, "a"], [2, "b"]]


@pytest.mark.spark
def test_a_clone_beside_the_original_stops_both_gcs_until_one_is_bound(owner, tmp_path, spark):
    home, warehouse, owner_url, _fresh = owner
    clone = copy_catalog(owner_url, tmp_path)
    first = set(data_files(warehouse))
    ok(run(home, clone, warehouse, "sql", "-e", "INSERT INTO t VALUES (10, 'clone')"))
    [clone_file] = set(data_files(warehouse)) - first
    ok(run(home, owner_url, warehouse, "sql", "-e", "INSERT INTO t VALUES (3, 'c')"))
    before = snapshot(warehouse)
    for url in (clone, owner_url):  # each sees a file of a transaction id it committed with other files
        assert BEHIND.fullmatch(refused(run(home, url, warehouse, "gc", "--retention", "0", "--orphan-retention", "0")))
    assert snapshot(warehouse) == before

    # The operator keeps the original: a forced bind gives it a new id, so the clone is refused.
    assert "--force re-binds anyway" in refused(run(home, owner_url, warehouse, "db", "bind-warehouse"))
    out = ok(run(home, owner_url, warehouse, "db", "bind-warehouse", "--force"))
    assert "1 unknown file(s) left to GC" in out, out
    assert "belongs to catalog" in refused(run(home, clone, warehouse, "sql", "-e", "INSERT INTO t VALUES (11, 'x')"))
    # The clone's file is a leftover now: it waits for the orphan retention, then goes.
    out = ok(run(home, owner_url, warehouse, "gc", "--retention", "0"))
    assert "1 unreferenced file kept until the orphan retention has passed" in out, out
    assert set(data_files(warehouse)) == {p for p in before if p.endswith(".parquet")}
    age(warehouse / clone_file)
    out = ok(run(home, owner_url, warehouse, "gc", "--retention", "0"))
    assert "1 unreferenced file deleted" in out, out
    assert not (warehouse / clone_file).exists()
    assert rows(home, owner_url, warehouse) == [[1, "a"], [2, "b"], [3, "c"]]


@pytest.mark.spark
def test_a_crash_leftover_waits_for_the_orphan_retention_then_goes(owner, spark):
    from alterflow.catalog.catalog import Catalog

    home, warehouse, owner_url, _fresh = owner
    catalog = Catalog(owner_url)
    table_id = catalog.table("t").id
    txn = catalog.begin_transaction(table_id, "crashed", 3600)
    catalog.abort_transaction(txn, "killed")
    tablet = next(p for p in warehouse.rglob("b*") if p.is_dir())
    leftover = tablet / f"{txn}-{uuid.uuid4().hex}.parquet"
    leftover.write_bytes(b"PAR1 torn")
    out = ok(run(home, owner_url, warehouse, "gc", "--dry-run", "--retention", "0"))
    assert re.search(rf"waits \S+{leftover.name}: no catalog row names it; \d+ s old, deletable from ", out), out
    assert "1 unreferenced file(s) wait for the orphan retention" in out
    ok(run(home, owner_url, warehouse, "gc", "--retention", "0"))
    assert leftover.exists()
    # Shorter than the retention or the lease, the orphan retention is not: 10 s asked, 3600 s kept.
    out = ok(run(home, owner_url, warehouse, "gc", "--dry-run", "--retention", "3600", "--orphan-retention", "10"))
    assert "(orphan retention 3600 s)" in out, out
    age(leftover)
    assert f"would delete {leftover.relative_to(warehouse)}: no catalog row names it" in ok(
        run(home, owner_url, warehouse, "gc", "--dry-run")
    )
    out = ok(run(home, owner_url, warehouse, "gc", "--retention", "0"))
    assert "1 unreferenced file deleted" in out and not leftover.exists()
    assert rows(home, owner_url, warehouse) == [[1, "a"], [2, "b"]]


@pytest.mark.spark
def test_links_are_never_followed(owner, tmp_path, spark):
    home, warehouse, owner_url, _fresh = owner
    ok(run(home, owner_url, warehouse, "sql", "-e", "CREATE TABLE other (id INT); INSERT INTO other VALUES (7)"))
    live = data_files(warehouse)
    other_file = next(p for p in live if p.startswith("t2/"))
    tablet = warehouse / next(p for p in live if p.startswith("t1/")).rsplit("/", 1)[0]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.parquet").write_bytes(b"outside")
    (outside / f"5-{uuid.uuid4().hex}.parquet").write_bytes(b"outside, named as a data file")
    links = {
        f"{tablet.relative_to(warehouse)}/9-{uuid.uuid4().hex}.parquet": warehouse / other_file,  # to another table's live file
        f"{tablet.relative_to(warehouse)}/8-{uuid.uuid4().hex}.parquet": outside / "keep.parquet",  # to a file outside
        f"{tablet.parent.relative_to(warehouse)}/b999": outside,  # a tablet folder pointing outside
    }
    for link, target in links.items():
        (warehouse / link).symlink_to(target)
        age(warehouse / link)
    os.mkfifo(tablet / f"7-{uuid.uuid4().hex}.parquet")  # a special file
    before = snapshot(warehouse)

    dry = ok(run(home, owner_url, warehouse, "gc", "--dry-run", "--retention", "0", "--orphan-retention", "0"))
    for link in links:
        assert re.search(
            rf"skips {re.escape(link)}: a symbolic link (pointing outside the warehouse|to another place in the warehouse)", dry
        ), dry
    assert "not a regular file: left alone" in dry and "would delete" not in dry, dry
    out = ok(run(home, owner_url, warehouse, "gc", "--retention", "0", "--orphan-retention", "0"))
    assert out.count("\n") == 6 and "skipped" in out.splitlines()[-1], out  # every step ran
    assert snapshot(warehouse) == before and all(os.path.lexists(warehouse / link) for link in links)
    assert sorted(p.name for p in outside.iterdir()) == sorted(["keep.parquet", *(p.name for p in outside.glob("5-*"))])
    assert (warehouse / other_file).read_bytes()[:4] == b"PAR1"
    assert rows(home, owner_url, warehouse) == [[1, "a"], [2, "b"]]
    assert select(home, owner_url, warehouse, "SELECT id FROM other") == [[7]]

    # A write never goes through a linked folder either: the tablet itself a link.
    real_tablet = tablet.with_name(tablet.name + ".real")
    tablet.rename(real_tablet)
    tablet.symlink_to(outside)
    line = refused(run(home, owner_url, warehouse, "sql", "-e", "INSERT INTO t VALUES (5, 'e')"))
    assert "is a symbolic link or not a folder: alterflow writes through no link" in line and len(line) <= 300, line
    assert sorted(p.name for p in outside.iterdir()) == sorted(["keep.parquet", *(p.name for p in outside.glob("5-*"))])
    tablet.unlink()
    real_tablet.rename(tablet)


@pytest.mark.spark
def test_a_linked_warehouse_root_keeps_working(tmp_path, catalogs, spark):  # noqa: F811
    owner_url, _fresh = catalogs
    home, real = tmp_path / "home", tmp_path / "real"
    home.mkdir()
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    link = tmp_path / "link"
    ok(run(home, owner_url, link, "sql", "-e", CREATE))
    out = ok(run(home, owner_url, link, "gc", "--retention", "0"))
    assert "skipped" not in out, out
    assert rows(home, owner_url, link) == [[1, "a"], [2, "b"]]
    assert (real / MARKER).exists() and data_files(real)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda m: m.write_bytes(b"\xff\xfe{\x00"), id="not-utf8"),
        pytest.param(lambda m: m.write_bytes(b""), id="empty"),
        pytest.param(lambda m: (m.unlink(), m.mkdir(), (m / "inner").write_text("x")), id="folder"),
        pytest.param(lambda m: m.write_text("{not json"), id="not-json"),
    ],
)
def test_a_bad_marker_is_one_line_and_bind_force_repairs_it(tmp_path, damage):
    home, warehouse = tmp_path / "home", tmp_path / "warehouse"
    home.mkdir()
    url = f"sqlite:///{tmp_path / 'c.db'}"
    ok(run(home, url, warehouse, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO t VALUES (1)"))
    owner_id = json.loads((warehouse / MARKER).read_text())["catalog_id"]
    damage(warehouse / MARKER)
    unreadable = f"warehouse {warehouse} has an unreadable owner marker {MARKER}: "
    for args in (("sql", "-e", "INSERT INTO t VALUES (2)"), ("gc", "--retention", "0"), ("gc", "--dry-run")):
        assert refused(run(home, url, warehouse, *args)).startswith(unreadable), args
    out = ok(run(home, url, warehouse, "db", "bind-warehouse", "--force"))
    assert out.startswith(f"warehouse {warehouse} bound to catalog {owner_id} (its marker was unreadable)"), out
    assert json.loads((warehouse / MARKER).read_text())["catalog_id"] == owner_id
    ok(run(home, url, warehouse, "sql", "-e", "INSERT INTO t VALUES (2)"))
    assert ok(run(home, url, warehouse, "sql", "--format", "json", "-e", "SELECT id FROM t ORDER BY id")).count('"rows"') == 1
