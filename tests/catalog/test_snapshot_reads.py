"""catalog/snapshot_reads.py: the reads a query binds its names with, written once in SQL and run by
two drivers. Through sqlite3 they return what the Catalog (SQLAlchemy) returns, and a session on a
SQLite catalog answers a query without opening the Catalog at all."""

from __future__ import annotations

import sqlite3

import pytest

from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.catalog.snapshot_reads import SqliteSnapshotReads, sqlite_snapshot_reads
from alterflow.engine.session import Session
from alterflow.settings import Settings

SETUP = """
CREATE TABLE t (id INT, v STRING);
INSERT INTO t VALUES (1, 'a'), (2, 'b');
ALTER TABLE t ADD COLUMN n BIGINT DEFAULT 5;
INSERT INTO t VALUES (3, 'c', 6);
CREATE TABLE k (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2;
INSERT INTO k VALUES (1, 'x');
INSERT INTO k VALUES (1, 'y');
CREATE VIEW v1 AS SELECT id, v FROM t;
CREATE VIEW v2 AS SELECT id FROM v1;
"""


@pytest.fixture
def home(tmp_path):
    settings = Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home")})
    session = Session(settings)
    list(session.run(SETUP))
    return settings, session.catalog


def test_sqlite_reads_equal_the_catalog_s(home):
    settings, catalog = home
    reads = sqlite_snapshot_reads(settings.catalog_url)
    assert isinstance(reads, SqliteSnapshotReads)
    for name in ("t", "T", "k", "v1", "v2", "nothing"):
        assert reads.object_kind(name) == catalog.object_kind(name), name
    for name in ("t", "k"):
        snapshot = reads.snapshot(name)
        assert snapshot == catalog.snapshot(name)
        assert reads.snapshot_by_id(snapshot.table.id) == catalog.snapshot_by_id(snapshot.table.id)
        assert reads.schema_version(snapshot.table.id, 1) == catalog.schema_version(snapshot.table.id, 1)
    assert reads.snapshot("k").commit_seqs and len(reads.snapshot("t").versions) == 2
    for name in ("v1", "v2"):
        view = reads.view(name)
        assert view == catalog.view(name) and reads.view_by_id(view.id) == catalog.view_by_id(view.id)


def test_sqlite_reads_refuse_what_the_catalog_refuses(home):
    settings, catalog = home
    reads = sqlite_snapshot_reads(settings.catalog_url)
    calls = [
        ("snapshot", ("nothing",)),
        ("snapshot_by_id", (999,)),
        ("schema_version", (1, 99)),
        ("view", ("nothing",)),
        ("view_by_id", (999,)),
    ]
    for method, args in calls:
        with pytest.raises(UnknownObject) as by_sqlite:
            getattr(reads, method)(*args)
        with pytest.raises(UnknownObject) as by_catalog:
            getattr(catalog, method)(*args)
        assert str(by_sqlite.value) == str(by_catalog.value), method


def test_only_a_plain_sqlite_catalog_at_this_release_is_read_through_sqlite3(home, tmp_path):
    settings, _catalog = home
    path = settings.catalog_url.removeprefix("sqlite:///")
    assert sqlite_snapshot_reads("postgresql://127.0.0.1/x") is None
    assert sqlite_snapshot_reads(f"sqlite:///{tmp_path / 'absent.db'}") is None
    assert sqlite_snapshot_reads(f"sqlite:///{path}?timeout=5") is None
    assert sqlite_snapshot_reads("sqlite:///:memory:") is None
    (tmp_path / "empty.db").write_bytes(b"")
    assert sqlite_snapshot_reads(f"sqlite:///{tmp_path / 'empty.db'}") is None  # no alterflow tables: the Catalog creates them
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '0001'")
    assert sqlite_snapshot_reads(settings.catalog_url) is None  # outdated: the Catalog migrates it first


def test_a_query_on_a_sqlite_catalog_leaves_the_catalog_closed(home):
    settings, _catalog = home
    session = Session(settings)
    result = list(session.run("SELECT id, n FROM t ORDER BY id; SELECT * FROM v2 ORDER BY id; SELECT * FROM k"))
    assert [r.rows for r in result] == [((1, 5), (2, 5), (3, 6)), ((1,), (2,), (3,)), ((1, "y"),)]
    assert session._catalog is None, "a query opened the SQLAlchemy catalog"
    list(session.run("INSERT INTO t VALUES (4, 'd', 7)"))  # a write opens it, and queries then read through it
    assert session.reads is session.catalog
    assert list(session.run("SELECT count(*) AS c FROM t"))[0].rows == ((4,),)
