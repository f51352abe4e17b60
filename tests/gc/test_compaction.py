"""Compaction and garbage collection end to end (docs/gc.md), with real Spark, on a SQLite and a
PostgreSQL catalog: reads return exactly the same rows before and after, old versions become
collectable, origin indexes go after their retention, tables with an unfinished job are skipped,
and primary-key upserts keep ranking by commit order after compaction."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from alterflow.gc import gc_steps
from alterflow.gc.gc_runner import run_gc
from alterflow.store.tablets import TXN_COLUMN
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

pytestmark = pytest.mark.spark

TABLE = (
    "CREATE TABLE t (id INT NOT NULL, v STRING, w INT, d DECIMAL(9,2), PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3 ORDER BY (id)"
)
EVERYTHING = "SELECT * FROM t ORDER BY id"


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


def test_compaction_rewrites_old_versions_and_versions_are_collected(catalog_session, spark):
    evolve(catalog_session)
    before = sql(catalog_session, EVERYTHING)
    assert len(before) == 8
    assert versions(catalog_session, "t") == [1, 2, 3, 4]
    old_paths = {f.path for f in live_data_files(catalog_session, "t")}
    tablets_before = {f.tablet_id for f in live_data_files(catalog_session, "t")}

    result = gc(catalog_session, spark, retention_s=0)

    assert sql(catalog_session, EVERYTHING) == before
    files = live_data_files(catalog_session, "t")
    assert {f.schema_version for f in files} == {4}
    assert sorted(f.tablet_id for f in files) == sorted(tablets_before), "one file per tablet"
    assert not old_paths & {f.path for f in files}
    assert not old_paths & set(disk_files(catalog_session)), "replaced files left on disk"
    compacted = result["compact"]
    assert compacted.tablets_compacted == len(tablets_before)
    assert compacted.files_replaced == len(old_paths)
    assert compacted.rows_written == 8 and compacted.skipped_tables == () and compacted.conflicts == ()
    # The rewritten files carry the current columns by id, the dropped column gone, and each row's
    # original transaction.
    for f in files:
        data = pq.read_table(catalog_session.warehouse / f.path)
        assert data.column_names == ["id", "label", "d", "n", TXN_COLUMN]
        assert [fld.metadata[b"PARQUET:field_id"] for fld in data.schema if fld.name != TXN_COLUMN] == [b"1", b"2", b"4", b"5"]
        assert all(txn < f.txn_id for txn in data.column(TXN_COLUMN).to_pylist())
        ids = data.column("id").to_pylist()
        assert ids == sorted(ids), "rows in sort-key order"
    assert result["collect_versions"].versions_deleted == 3
    assert versions(catalog_session, "t") == [4]
    assert sql(catalog_session, "DESCRIBE t") == (
        ("id", "INT", "NO", "true", None),
        ("label", "STRING", "YES", "false", None),
        ("d", "DECIMAL(12,3)", "YES", "false", None),
        ("n", "BIGINT", "YES", "false", "7"),
    )
    referenced_files_exist(catalog_session)

    # Primary-key upserts still rank by commit order: a later load wins over compacted rows, an
    # older row never comes back.
    sql(catalog_session, "INSERT INTO t VALUES (2, 'latest', 0.5, 1)")
    assert sql(catalog_session, "SELECT label FROM t WHERE id = 2") == (("latest",),)

    # Nothing left to do: a second run changes nothing and does not start Spark.
    again = run_gc(catalog_session.catalog, catalog_session.warehouse, no_spark, 0)
    assert again["compact"].tablets_compacted == 0 and again["collect_versions"].versions_deleted == 0
    assert set(file_rows(catalog_session).values()) == {"LIVE"}, "rows of replaced files are forgotten once gone"
    assert sql(catalog_session, "SELECT count(*) FROM t") == ((8,),)


def test_versions_survive_the_retention_period(catalog_session, spark):
    """A version superseded less than the retention ago stays (a load may still write under it),
    even when compaction left no file under it."""
    evolve(catalog_session)
    before = sql(catalog_session, EVERYTHING)
    result = gc(catalog_session, spark, retention_s=3600)
    assert result["compact"].tablets_compacted > 0
    assert versions(catalog_session, "t") == [1, 2, 3, 4]
    assert result["collect_versions"].versions_deleted == 0
    later_run = gc(catalog_session, spark, retention_s=3600, now=later())
    assert later_run["collect_versions"].versions_deleted == 3
    assert versions(catalog_session, "t") == [4]
    assert sql(catalog_session, EVERYTHING) == before


def test_plain_table_without_primary_key_keeps_every_row(catalog_session, spark):
    sql(catalog_session, "CREATE TABLE p (a INT, b STRING)")
    for k in range(3):
        sql(catalog_session, f"INSERT INTO p VALUES ({k}, 'x'), ({k}, 'x')")
    sql(catalog_session, "ALTER TABLE p ADD COLUMN c DOUBLE DEFAULT 1.5")
    sql(catalog_session, "INSERT INTO p VALUES (9, 'y', 2.5)")
    before = sql(catalog_session, "SELECT * FROM p ORDER BY a, c")
    result = gc(catalog_session, spark)
    assert result["compact"].tablets_compacted == 1 and result["compact"].files_replaced == 4
    assert sql(catalog_session, "SELECT * FROM p ORDER BY a, c") == before
    assert len(before) == 7
    files = live_data_files(catalog_session, "p")
    assert len(files) == 1 and files[0].schema_version == 2
    assert TXN_COLUMN not in pq.read_table(catalog_session.warehouse / files[0].path).column_names


def test_pinned_view_keeps_its_version_and_its_rows(catalog_session, spark):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(catalog_session, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    sql(catalog_session, "CREATE VIEW pinned AS SELECT * FROM t")
    sql(catalog_session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 5")
    sql(catalog_session, "ALTER TABLE t ADD COLUMN m INT")
    sql(catalog_session, "INSERT INTO t VALUES (3, 'c', 6, 7)")
    view_before = sql(catalog_session, "SELECT * FROM pinned ORDER BY id")
    table_before = sql(catalog_session, "SELECT * FROM t ORDER BY id")

    result = gc(catalog_session, spark)
    assert result["compact"].tablets_compacted == 1
    assert {f.schema_version for f in live_data_files(catalog_session, "t")} == {3}
    assert versions(catalog_session, "t") == [1, 3], "the view pins version 1; version 2 is collected"
    assert sql(catalog_session, "SELECT * FROM pinned ORDER BY id") == view_before
    assert sql(catalog_session, "SELECT * FROM t ORDER BY id") == table_before

    sql(catalog_session, "DROP VIEW pinned")
    assert gc(catalog_session, spark)["collect_versions"].versions_deleted == 1
    assert versions(catalog_session, "t") == [3]


def test_swap_origin_is_dropped_after_retention(catalog_session, spark):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(catalog_session, "INSERT INTO t VALUES " + ", ".join(f"({k}, '{k * 3}')" for k in range(1, 11)))
    sql(catalog_session, "ALTER TABLE t MODIFY COLUMN v BIGINT")  # heavyweight: a shadow index is swapped in
    before = sql(catalog_session, EVERYTHING)
    job = catalog_session.catalog.jobs(catalog_session.catalog.table("t").id)[-1]
    assert job.kind == "HEAVY" and job.state == "FINISHED"
    origin_paths = {f.path for f in catalog_session.catalog.index_snapshot(job.table_id, job.origin_index_id, 1).files}
    assert origin_paths and origin_paths <= set(disk_files(catalog_session))

    first = gc(catalog_session, spark, retention_s=3600)
    assert first["drop_origin_indexes"].dropped_indexes == ()
    assert index_state(catalog_session, job.origin_index_id) == "RETIRED"
    assert origin_paths <= set(disk_files(catalog_session))
    assert versions(catalog_session, "t") == [1, 2], "the retained origin's files are still written under version 1"

    second = gc(catalog_session, spark, retention_s=3600, now=later())
    assert second["drop_origin_indexes"].dropped_indexes == (job.origin_index_id,)
    assert second["drop_origin_indexes"].index_files_dropped == len(origin_paths)
    assert index_state(catalog_session, job.origin_index_id) == "DROPPED"
    assert not origin_paths & set(disk_files(catalog_session))
    assert not (catalog_session.warehouse / f"t{job.table_id}" / f"i{job.origin_index_id}").exists()
    assert versions(catalog_session, "t") == [2]
    assert sql(catalog_session, EVERYTHING) == before
    assert second["compact"].tablets_compacted == 0, "the swapped index is already under version 2"
    referenced_files_exist(catalog_session)


def test_table_with_unfinished_job_is_skipped(catalog_session, spark):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(catalog_session, "INSERT INTO t VALUES (1, '1'), (2, '2')")
    sql(catalog_session, "ALTER TABLE t ADD COLUMN n INT")
    sql(catalog_session, "INSERT INTO t VALUES (3, '3', 3)")
    before_files = {f.path for f in live_data_files(catalog_session, "t")}
    job_id = start_heavy(catalog_session, "ALTER TABLE t MODIFY COLUMN v INT")

    result = run_gc(catalog_session.catalog, catalog_session.warehouse, no_spark, 0)
    assert result["compact"].tablets_compacted == 0
    assert result["compact"].skipped_tables == (
        gc_steps.SkippedTable("t", catalog_session.catalog.table("t").id, f"alter job {job_id} is PENDING"),
    )
    assert {f.path for f in live_data_files(catalog_session, "t")} == before_files
    assert versions(catalog_session, "t") == [1, 2], "version 1 still has live files; version 2 is the job's origin"

    sql(catalog_session, "CANCEL ALTER TABLE COLUMN FROM t")
    done = gc(catalog_session, spark)
    assert done["compact"].tablets_compacted == 1 and done["compact"].skipped_tables == ()
    assert versions(catalog_session, "t") == [2]
    assert sql(catalog_session, EVERYTHING) == ((1, "1", None), (2, "2", None), (3, "3", 3))


def test_dropped_table_index_goes_after_retention(catalog_session, spark):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id))")
    sql(catalog_session, "INSERT INTO t VALUES (1), (2)")
    info = catalog_session.catalog.table("t")
    table_id = info.id
    sql(catalog_session, "DROP TABLE t")
    assert run_gc(catalog_session.catalog, catalog_session.warehouse, no_spark, 3600)["drop_origin_indexes"].dropped_indexes == ()
    result = run_gc(catalog_session.catalog, catalog_session.warehouse, no_spark, 3600, now=later())
    assert result["drop_origin_indexes"].dropped_indexes == (info.current_index_id,)
    assert set(file_rows(catalog_session).values()) == set(), "rows of the dropped table's files are forgotten"
    assert not (catalog_session.warehouse / f"t{table_id}").exists()
    assert version_rows(catalog_session, table_id) == [1]


def test_bad_retention_changes_nothing(catalog_session):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id))")
    sql(catalog_session, "ALTER TABLE t ADD COLUMN n INT")
    for bad in (-1, "10", 1.5, True):
        for call in (
            lambda bad=bad: gc_steps.drop_origin_indexes(catalog_session.catalog, catalog_session.warehouse, bad),
            lambda bad=bad: gc_steps.collect_versions(catalog_session.catalog, bad),
        ):
            with pytest.raises(ValueError) as err:
                call()
            assert "\n" not in str(err.value) and "retention" in str(err.value)
    assert versions(catalog_session, "t") == [1, 2]
