"""Compaction and garbage collection end to end (SPEC §6), with real Spark, on a SQLite and a
PostgreSQL catalog: reads return exactly the same rows before and after, old versions become
collectable, origin indexes go after their retention, tables with an unfinished job are skipped,
and primary-key upserts keep ranking by commit order after compaction."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from alterflow.store.tablets import TXN_COLUMN
from alterflow.session import Session
from tests.support.gc import (
    disk_files,
    file_rows,
    gc,
    index_state,
    later,
    live_data_files,
    no_spark,
    referenced_files_exist,
    sql,
    start_heavy,
    version_rows,
    versions,
)
from alterflow.gc import steps as gc_steps
from alterflow.gc.runner import run_gc

pytestmark = pytest.mark.spark

TABLE = (
    "CREATE TABLE t (id INT NOT NULL, v STRING, w INT, d DECIMAL(9,2), PRIMARY KEY (id)) "
    "DISTRIBUTED BY HASH(id) BUCKETS 3 ORDER BY (id)"
)
EVERYTHING = "SELECT * FROM t ORDER BY id"


@pytest.fixture
def session(settings, spark):
    return Session(settings)


def evolve(session) -> None:
    """Files under four versions: an added column with a default, a dropped column, a widening and a
    rename, with upserts of the same keys across versions, several small files per tablet."""
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES (1, 'a', 10, 1.50), (2, 'b', 20, 2.50), (3, 'c', 30, NULL)")
    sql(session, "INSERT INTO t VALUES (4, 'd', 40, 4.00), (5, 'e', 50, 5.25)")
    sql(session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 7")
    sql(session, "INSERT INTO t VALUES (2, 'bb', 21, 2.75, 8), (6, 'f', 60, 6.00, NULL)")
    sql(session, "ALTER TABLE t DROP COLUMN w")
    sql(session, "INSERT INTO t VALUES (3, 'cc', 3.00, 9), (7, 'g', 7.00, 10)")
    sql(session, "ALTER TABLE t MODIFY COLUMN n BIGINT, MODIFY COLUMN d DECIMAL(12,3), RENAME COLUMN v TO label")
    sql(session, "INSERT INTO t VALUES (1, 'aa', 1.125, 11), (8, 'h', NULL, 12)")


def test_compaction_rewrites_old_versions_and_versions_are_collected(session, spark):
    evolve(session)
    before = sql(session, EVERYTHING)
    assert len(before) == 8
    assert versions(session, "t") == [1, 2, 3, 4]
    old_paths = {f.path for f in live_data_files(session, "t")}
    tablets_before = {f.tablet_id for f in live_data_files(session, "t")}

    result = gc(session, spark, retention_s=0)

    assert sql(session, EVERYTHING) == before
    files = live_data_files(session, "t")
    assert {f.schema_version for f in files} == {4}
    assert sorted(f.tablet_id for f in files) == sorted(tablets_before), "one file per tablet"
    assert not old_paths & {f.path for f in files}
    assert not old_paths & set(disk_files(session)), "replaced files left on disk"
    compacted = result["compact"]
    assert compacted["tablets_compacted"] == len(tablets_before)
    assert compacted["files_replaced"] == len(old_paths)
    assert compacted["rows_written"] == 8 and compacted["skipped_tables"] == [] and compacted["conflicts"] == []
    # The rewritten files carry the current columns by id, the dropped column gone, and each row's
    # original transaction.
    for f in files:
        data = pq.read_table(session.warehouse / f.path)
        assert data.column_names == ["id", "label", "d", "n", TXN_COLUMN]
        assert [fld.metadata[b"PARQUET:field_id"] for fld in data.schema if fld.name != TXN_COLUMN] == [b"1", b"2", b"4", b"5"]
        assert all(txn < f.txn_id for txn in data.column(TXN_COLUMN).to_pylist())
        ids = data.column("id").to_pylist()
        assert ids == sorted(ids), "rows in sort-key order"
    assert result["collect_versions"]["versions_deleted"] == 3
    assert versions(session, "t") == [4]
    assert sql(session, "DESCRIBE t") == (
        ("id", "INT", "NO", "true", None), ("label", "STRING", "YES", "false", None),
        ("d", "DECIMAL(12,3)", "YES", "false", None), ("n", "BIGINT", "YES", "false", "7"),
    )
    referenced_files_exist(session)

    # Primary-key upserts still rank by commit order: a later load wins over compacted rows, an
    # older row never comes back.
    sql(session, "INSERT INTO t VALUES (2, 'latest', 0.5, 1)")
    assert sql(session, "SELECT label FROM t WHERE id = 2") == (("latest",),)

    # Nothing left to do: a second run changes nothing and does not start Spark.
    again = run_gc(session.catalog, session.warehouse, no_spark, 0)
    assert again["compact"]["tablets_compacted"] == 0 and again["collect_versions"]["versions_deleted"] == 0
    assert set(file_rows(session).values()) == {"LIVE"}, "rows of replaced files are forgotten once gone"
    assert sql(session, "SELECT count(*) FROM t") == ((8,),)


def test_versions_survive_the_retention_period(session, spark):
    """A version superseded less than the retention ago stays (a load may still write under it),
    even when compaction left no file under it."""
    evolve(session)
    before = sql(session, EVERYTHING)
    result = gc(session, spark, retention_s=3600)
    assert result["compact"]["tablets_compacted"] > 0
    assert versions(session, "t") == [1, 2, 3, 4]
    assert result["collect_versions"]["versions_deleted"] == 0
    later_run = gc(session, spark, retention_s=3600, now=later())
    assert later_run["collect_versions"]["versions_deleted"] == 3
    assert versions(session, "t") == [4]
    assert sql(session, EVERYTHING) == before


def test_plain_table_without_primary_key_keeps_every_row(session, spark):
    sql(session, "CREATE TABLE p (a INT, b STRING)")
    for k in range(3):
        sql(session, f"INSERT INTO p VALUES ({k}, 'x'), ({k}, 'x')")
    sql(session, "ALTER TABLE p ADD COLUMN c DOUBLE DEFAULT 1.5")
    sql(session, "INSERT INTO p VALUES (9, 'y', 2.5)")
    before = sql(session, "SELECT * FROM p ORDER BY a, c")
    result = gc(session, spark)
    assert result["compact"]["tablets_compacted"] == 1 and result["compact"]["files_replaced"] == 4
    assert sql(session, "SELECT * FROM p ORDER BY a, c") == before
    assert len(before) == 7
    files = live_data_files(session, "p")
    assert len(files) == 1 and files[0].schema_version == 2
    assert TXN_COLUMN not in pq.read_table(session.warehouse / files[0].path).column_names


def test_pinned_view_keeps_its_version_and_its_rows(session, spark):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    sql(session, "CREATE VIEW pinned AS SELECT * FROM t")
    sql(session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 5")
    sql(session, "ALTER TABLE t ADD COLUMN m INT")
    sql(session, "INSERT INTO t VALUES (3, 'c', 6, 7)")
    view_before = sql(session, "SELECT * FROM pinned ORDER BY id")
    table_before = sql(session, "SELECT * FROM t ORDER BY id")

    result = gc(session, spark)
    assert result["compact"]["tablets_compacted"] == 1
    assert {f.schema_version for f in live_data_files(session, "t")} == {3}
    assert versions(session, "t") == [1, 3], "the view pins version 1; version 2 is collected"
    assert sql(session, "SELECT * FROM pinned ORDER BY id") == view_before
    assert sql(session, "SELECT * FROM t ORDER BY id") == table_before

    sql(session, "DROP VIEW pinned")
    assert gc(session, spark)["collect_versions"]["versions_deleted"] == 1
    assert versions(session, "t") == [3]


def test_swap_origin_is_dropped_after_retention(session, spark):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(session, "INSERT INTO t VALUES " + ", ".join(f"({k}, '{k * 3}')" for k in range(1, 11)))
    sql(session, "ALTER TABLE t MODIFY COLUMN v BIGINT")  # heavyweight: a shadow index is swapped in
    before = sql(session, EVERYTHING)
    job = session.catalog.jobs(session.catalog.table("t").id)[-1]
    assert job.kind == "HEAVY" and job.state == "FINISHED"
    origin_paths = {
        f.path for f in session.catalog.index_snapshot(job.table_id, job.origin_index_id, 1).files
    }
    assert origin_paths and origin_paths <= set(disk_files(session))

    first = gc(session, spark, retention_s=3600)
    assert first["drop_origin_indexes"]["dropped_indexes"] == []
    assert index_state(session, job.origin_index_id) == "RETIRED"
    assert origin_paths <= set(disk_files(session))
    assert versions(session, "t") == [1, 2], "the retained origin's files are still written under version 1"

    second = gc(session, spark, retention_s=3600, now=later())
    assert second["drop_origin_indexes"]["dropped_indexes"] == [job.origin_index_id]
    assert second["drop_origin_indexes"]["index_files_deleted"] == len(origin_paths)
    assert index_state(session, job.origin_index_id) == "DROPPED"
    assert not origin_paths & set(disk_files(session))
    assert not (session.warehouse / f"t{job.table_id}" / f"i{job.origin_index_id}").exists()
    assert versions(session, "t") == [2]
    assert sql(session, EVERYTHING) == before
    assert second["compact"]["tablets_compacted"] == 0, "the swapped index is already under version 2"
    referenced_files_exist(session)


def test_table_with_unfinished_job_is_skipped(session, spark):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, '1'), (2, '2')")
    sql(session, "ALTER TABLE t ADD COLUMN n INT")
    sql(session, "INSERT INTO t VALUES (3, '3', 3)")
    before_files = {f.path for f in live_data_files(session, "t")}
    job_id = start_heavy(session, "ALTER TABLE t MODIFY COLUMN v INT")

    result = run_gc(session.catalog, session.warehouse, no_spark, 0)
    assert result["compact"]["tablets_compacted"] == 0
    assert result["compact"]["skipped_tables"] == [
        {"table": "t", "table_id": session.catalog.table("t").id, "reason": f"alter job {job_id} is PENDING"}
    ]
    assert {f.path for f in live_data_files(session, "t")} == before_files
    assert versions(session, "t") == [1, 2], "version 1 still has live files; version 2 is the job's origin"

    sql(session, "CANCEL ALTER TABLE COLUMN FROM t")
    done = gc(session, spark)
    assert done["compact"]["tablets_compacted"] == 1 and done["compact"]["skipped_tables"] == []
    assert versions(session, "t") == [2]
    assert sql(session, EVERYTHING) == ((1, "1", None), (2, "2", None), (3, "3", 3))


def test_dropped_table_index_goes_after_retention(session, spark):
    sql(session, "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1), (2)")
    info = session.catalog.table("t")
    table_id = info.id
    sql(session, "DROP TABLE t")
    assert run_gc(session.catalog, session.warehouse, no_spark, 3600)["drop_origin_indexes"]["dropped_indexes"] == []
    result = run_gc(session.catalog, session.warehouse, no_spark, 3600, now=later())
    assert result["drop_origin_indexes"]["dropped_indexes"] == [info.current_index_id]
    assert set(file_rows(session).values()) == set(), "rows of the dropped table's files are forgotten"
    assert not (session.warehouse / f"t{table_id}").exists()
    assert version_rows(session, table_id) == [1]


def test_bad_retention_changes_nothing(session):
    sql(session, "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id))")
    sql(session, "ALTER TABLE t ADD COLUMN n INT")
    for bad in (-1, "10", 1.5, True):
        for call in (
            lambda: gc_steps.drop_origin_indexes(session.catalog, session.warehouse, bad),
            lambda: gc_steps.collect_versions(session.catalog, bad),
        ):
            with pytest.raises(ValueError) as err:
                call()
            assert "\n" not in str(err.value) and "retention" in str(err.value)
    assert versions(session, "t") == [1, 2]
