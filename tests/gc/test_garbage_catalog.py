"""Garbage collection's catalog rules and its file sweep, without Spark, on SQLite and PostgreSQL:
which schema versions may go, and which files are provably unreferenced (never the files of an
open load transaction or the staging files of a running job)."""

from __future__ import annotations

import os
import re
import time
import uuid

import pyarrow as pa

from alterflow.catalog.catalog import NewFile
from alterflow.catalog.garbage import CollectedVersions, GarbageCollection
from alterflow.gc import gc_steps
from alterflow.gc.gc_runner import run_gc
from alterflow.store.layout import data_file_path, index_dir
from alterflow.store.tablets import write_parquet
from tests.support.gc import disk_files, file_rows, later, no_spark, sql, start_heavy, txn_state, versions


def put(session, relative: str, text: str = "x") -> str:
    path = session.warehouse / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return relative


def test_sweep_deletes_only_provably_unreferenced_files(catalog_session):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(catalog_session, "INSERT INTO t VALUES (1, 'a')")
    info = catalog_session.catalog.table("t")
    live = catalog_session.catalog.snapshot("t").files[0]
    tablet = live.tablet_id
    folder = f"{index_dir(info.id, info.current_index_id)}/b{tablet}"

    # An open load transaction: its file registered and written, plus the temporary of another.
    txn = catalog_session.catalog.begin_transaction(info.id, "open load", 3600)
    open_file = data_file_path(info.id, info.current_index_id, tablet, txn)
    open_tmp = data_file_path(info.id, info.current_index_id, tablet, txn)
    catalog_session.catalog.register_files(txn, [NewFile(tablet, 1, open_file, 1, 0), NewFile(tablet, 1, open_tmp, 1, 0)])
    write_parquet(catalog_session.warehouse, open_file, pa.table({"id": [2]}))
    put(catalog_session, open_tmp + ".tmp")

    # Files no row names, of a transaction of this catalog that never committed (a crash after an
    # abort's rows went): older than the orphan retention (by their own modification time) they
    # go; a younger one waits, listed with when it may go.
    crashed = catalog_session.catalog.begin_transaction(info.id, "crashed load", 3600)
    catalog_session.catalog.abort_transaction(crashed, "test")
    orphans = [
        put(catalog_session, f"{folder}/{crashed}-{uuid.uuid4().hex}.parquet"),
        put(catalog_session, f"{folder}/{crashed}-{uuid.uuid4().hex}.parquet.tmp"),
    ]
    four_days_ago = time.time() - 4 * 24 * 3600
    for orphan in orphans:
        os.utime(catalog_session.warehouse / orphan, (four_days_ago, four_days_ago))
    young = put(catalog_session, f"{folder}/{crashed}-{uuid.uuid4().hex}.parquet")
    staging_over = put(catalog_session, f"{index_dir(info.id, info.current_index_id)}/_staging/o{tablet}/part-0.parquet")
    compact_running = put(catalog_session, f"{index_dir(info.id, info.current_index_id)}/_compact/x{txn}/part-0.parquet")
    compact_over = put(catalog_session, f"{index_dir(info.id, info.current_index_id)}/_compact/x{live.txn_id}/part-0.parquet")
    foreign = [
        put(catalog_session, "README.txt"),
        put(catalog_session, f"t{info.id}/notes.txt"),
        put(catalog_session, f"{folder}/keep.csv"),
    ]

    # A running heavyweight job: its shadow index's staging folder is in use.
    sql(catalog_session, "CREATE TABLE s (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(catalog_session, "INSERT INTO s VALUES (1, '1')")
    job_id = start_heavy(catalog_session, "ALTER TABLE s MODIFY COLUMN v INT")
    job = catalog_session.catalog.jobs()[-1]
    assert job.id == job_id
    staging_running = put(catalog_session, f"{index_dir(job.table_id, job.shadow_index_id)}/_staging/o1/part-0.parquet")

    listed = {d["path"]: d for d in gc_steps.dry_run(catalog_session.catalog, catalog_session.warehouse, 3600)}
    assert set(orphans) <= set(listed) and listed[young].get("wait")
    assert re.fullmatch(
        r"no catalog row names it; \d+ s old, deletable from \S+ \S+ \(orphan retention 259200 s\)", listed[young]["why"]
    ), listed[young]
    result = gc_steps.delete_files(catalog_session.catalog, catalog_session.warehouse, 3600)
    assert sorted(result.orphan_files) == sorted(orphans)
    assert [w.path for w in result.orphans_waiting] == [young]
    assert sorted(result.staging_dirs_deleted) == sorted(
        [
            f"{index_dir(info.id, info.current_index_id)}/_staging",
            f"{index_dir(info.id, info.current_index_id)}/_compact/x{live.txn_id}",
        ]
    )
    on_disk = set(disk_files(catalog_session))
    assert not set(orphans) & on_disk
    assert staging_over not in on_disk and compact_over not in on_disk
    for kept in (live.path, young, open_file, open_tmp + ".tmp", compact_running, staging_running, *foreign):
        assert kept in on_disk, kept

    # Past its timeout the open transaction is aborted, and then its files are unreferenced.
    expired = gc_steps.abort_expired_loads(catalog_session.catalog, catalog_session.warehouse, now=later())
    assert expired.expired_transaction_files == 2
    assert txn_state(catalog_session, txn) == "ABORTED"
    # Deferred: within the retention period after the abort, its files stay.
    kept = gc_steps.delete_files(catalog_session.catalog, catalog_session.warehouse, 3600)
    assert kept.files_deleted == 0 and kept.files_kept_for_retention == 2
    assert open_file in set(disk_files(catalog_session))
    gc_steps.delete_files(catalog_session.catalog, catalog_session.warehouse, 3600, now=later())
    on_disk = set(disk_files(catalog_session))
    assert open_file not in on_disk and open_tmp + ".tmp" not in on_disk and compact_running not in on_disk
    assert live.path in on_disk and set(foreign) <= on_disk
    assert open_file not in file_rows(catalog_session)


def test_cancelled_shadow_index_leftovers_are_removed(catalog_session):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(catalog_session, "INSERT INTO t VALUES (1, '1')")
    start_heavy(catalog_session, "ALTER TABLE t MODIFY COLUMN v INT")
    job = catalog_session.catalog.jobs()[-1]
    sql(catalog_session, "INSERT INTO t VALUES (2, '2')")  # dual-written into the shadow index
    shadow = index_dir(job.table_id, job.shadow_index_id)
    staging = put(catalog_session, f"{shadow}/_staging/o1/part-0.parquet")
    sql(catalog_session, "CANCEL ALTER TABLE COLUMN FROM t")
    assert staging in disk_files(catalog_session)
    result = run_gc(catalog_session.catalog, catalog_session.warehouse, no_spark, 0)
    assert result["delete_files"].staging_dirs_deleted == (f"{shadow}/_staging",)
    assert not (catalog_session.warehouse / shadow).exists(), "the dropped shadow index's folder is gone"
    assert [r for r in sql(catalog_session, "SHOW ALTER TABLE COLUMN FROM t")][-1][7] == "CANCELLED"


def test_versions_nothing_needs_are_deleted(catalog_session):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, a INT, PRIMARY KEY (id))")
    sql(catalog_session, "INSERT INTO t VALUES (1, 1)")  # a live file under version 1
    for column in ("b", "c", "d"):
        sql(catalog_session, f"ALTER TABLE t ADD COLUMN {column} INT")
    assert versions(catalog_session, "t") == [1, 2, 3, 4]

    assert gc_steps.collect_versions(catalog_session.catalog).versions_deleted == 0, "within the retention"
    # An open load transaction holds every version of its table back.
    txn = catalog_session.catalog.begin_transaction(catalog_session.catalog.table("t").id, "open", 3600)
    assert gc_steps.collect_versions(catalog_session.catalog, 0).versions_deleted == 0
    catalog_session.catalog.abort_transaction(txn, "test")

    result = gc_steps.collect_versions(catalog_session.catalog, 3600, now=later())
    assert result == gc_steps.VersionsCollected(2, (CollectedVersions(catalog_session.catalog.table("t").id, "t", (2, 3)),))
    assert versions(catalog_session, "t") == [1, 4], "version 1 still has a live file; 4 is current"
    assert sql(catalog_session, "DESCRIBE t")[-1][0] == "d"
    assert gc_steps.collect_versions(catalog_session.catalog, 0) == gc_steps.VersionsCollected(0, ())

    # An unfinished job uses its origin version; its pending version is never collected.
    sql(catalog_session, "ALTER TABLE t ADD COLUMN e INT")
    start_heavy(catalog_session, "ALTER TABLE t MODIFY COLUMN a TINYINT")
    job = catalog_session.catalog.jobs()[-1]
    assert gc_steps.collect_versions(catalog_session.catalog, 0).versions_deleted == 1  # version 4
    assert versions(catalog_session, "t") == [1, 5]
    assert job.from_version == 5
    sql(catalog_session, "CANCEL ALTER TABLE COLUMN FROM t")
    # The next ALTER gets the cancelled job's number: versions stay consecutive.
    sql(catalog_session, "ALTER TABLE t ADD COLUMN f INT")
    assert versions(catalog_session, "t") == [1, 5, 6]


def test_drop_index_never_touches_a_live_index(catalog_session):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id))")
    sql(catalog_session, "INSERT INTO t VALUES (1)")
    info = catalog_session.catalog.table("t")
    gcol = GarbageCollection(catalog_session.catalog)
    assert gcol.expired_indexes(later()) == []
    assert gcol.drop_index(info.current_index_id, later()) == []
    assert catalog_session.catalog.snapshot("t").files
