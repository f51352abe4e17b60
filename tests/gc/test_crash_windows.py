"""Crash windows of garbage collection and compaction (docs/gc.md): a run killed between its catalog
commit and its file deletion, or between writing and committing, leaves no catalog row pointing at
a missing file and only unreferenced files, which a later run removes; reads never change. Also
what happens when a load, an ALTER or another compaction lands in the middle of a compaction."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from alterflow.catalog.catalog import utcnow
from alterflow.catalog.catalog_errors import ConcurrentChange
from alterflow.catalog.garbage import GarbageCollection
from alterflow.engine.session import Session
from alterflow.gc import compaction, gc_steps
from alterflow.gc.gc_runner import run_gc
from tests.support import child_pythonpath
from tests.support.gc import (
    LATER,
    disk_files,
    file_rows,
    gc,
    later,
    live_data_files,
    no_spark,
    referenced_files_exist,
    sql,
    start_heavy,
    txn_state,
    versions,
)

pytestmark = pytest.mark.spark
EVERYTHING = "SELECT * FROM t ORDER BY id"


def old_table(session) -> None:
    """One tablet with three files under two versions."""
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    sql(session, "INSERT INTO t VALUES (2, 'b2'), (3, 'c')")
    sql(session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 0")
    sql(session, "INSERT INTO t VALUES (4, 'd', 4)")


def only_target(session):
    targets = GarbageCollection(session.catalog).compaction_targets()
    assert len(targets) == 1, targets
    return targets[0]


def test_killed_between_commit_and_file_deletion(catalog_session, spark):
    old_table(catalog_session)
    before = sql(catalog_session, EVERYTHING)
    old_paths = [f.path for f in live_data_files(catalog_session, "t")]
    compacted = compaction.write_compacted(spark, catalog_session.catalog, catalog_session.warehouse, only_target(catalog_session))
    compaction.commit_compacted(catalog_session.catalog, catalog_session.warehouse, compacted)
    # -- killed here: the catalog says REPLACED, the files are still on disk
    assert set(old_paths) <= set(disk_files(catalog_session))
    assert {file_rows(catalog_session)[p] for p in old_paths} == {"REPLACED"}
    assert sql(catalog_session, EVERYTHING) == before
    referenced_files_exist(catalog_session)

    result = run_gc(catalog_session.catalog, catalog_session.warehouse, no_spark, 0)
    assert result["delete_files"].files_deleted == len(old_paths)
    assert not set(old_paths) & set(disk_files(catalog_session))
    assert not set(old_paths) & set(file_rows(catalog_session))
    assert result["compact"].tablets_compacted == 0
    assert versions(catalog_session, "t") == [2]
    assert sql(catalog_session, EVERYTHING) == before
    referenced_files_exist(catalog_session)


def test_killed_between_write_and_commit(catalog_session, spark):
    old_table(catalog_session)
    before = sql(catalog_session, EVERYTHING)
    old_paths = {f.path for f in live_data_files(catalog_session, "t")}
    crashed = compaction.write_compacted(spark, catalog_session.catalog, catalog_session.warehouse, only_target(catalog_session))
    # -- killed here: a PREPARE transaction with its file registered and in place, a staging folder
    assert txn_state(catalog_session, crashed.txn_id) == "PREPARE"
    assert crashed.path in disk_files(catalog_session) and (catalog_session.warehouse / crashed.staging).exists()
    assert sql(catalog_session, EVERYTHING) == before, "an uncommitted compaction is invisible"

    # The next run compacts again, and leaves the crashed attempt alone while it may still be running.
    rerun = gc(catalog_session, spark)
    assert rerun["compact"].tablets_compacted == 1
    assert rerun["collect_versions"].versions_deleted == 0, "a PREPARE transaction holds versions back"
    assert crashed.path in disk_files(catalog_session) and (catalog_session.warehouse / crashed.staging).exists()
    assert sql(catalog_session, EVERYTHING) == before
    assert not old_paths & set(disk_files(catalog_session))

    # Past its timeout the crashed transaction is aborted; its file and staging folder go.
    final = gc(catalog_session, spark, now=utcnow() + LATER)
    assert txn_state(catalog_session, crashed.txn_id) == "ABORTED"
    assert crashed.path not in disk_files(catalog_session) and not (catalog_session.warehouse / crashed.staging).exists()
    assert final["collect_versions"].versions_deleted == 1
    assert versions(catalog_session, "t") == [2]
    assert sql(catalog_session, EVERYTHING) == before
    assert len(live_data_files(catalog_session, "t")) == 1
    referenced_files_exist(catalog_session)


def test_killed_between_index_drop_and_file_deletion(catalog_session, spark):
    sql(catalog_session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(catalog_session, "INSERT INTO t VALUES (1, '10'), (2, '20')")
    sql(catalog_session, "ALTER TABLE t MODIFY COLUMN v INT")
    before = sql(catalog_session, EVERYTHING)
    job = catalog_session.catalog.jobs()[-1]
    origin = [f.path for f in catalog_session.catalog.index_snapshot(job.table_id, job.origin_index_id, 1).files]
    gcol = GarbageCollection(catalog_session.catalog)
    assert gcol.drop_index(job.origin_index_id, later()) == origin
    # -- killed here: the index is DROPPED and its files DELETED in the catalog, still on disk
    assert set(origin) <= set(disk_files(catalog_session))
    assert gcol.drop_index(job.origin_index_id, later()) == [], "dropping again does nothing"
    result = gc_steps.delete_files(catalog_session.catalog, catalog_session.warehouse, 3600, now=later())
    assert result.files_deleted == len(origin)
    assert not set(origin) & set(disk_files(catalog_session))
    assert sql(catalog_session, EVERYTHING) == before
    assert versions(catalog_session, "t") == [1, 2], "version 1 is collected only after the retention"
    assert run_gc(catalog_session.catalog, catalog_session.warehouse, no_spark, 3600, now=later())["collect_versions"].versions_deleted == 1
    referenced_files_exist(catalog_session)


def test_load_committing_during_compaction_is_kept_and_wins(catalog_session, spark):
    old_table(catalog_session)
    compacted = compaction.write_compacted(spark, catalog_session.catalog, catalog_session.warehouse, only_target(catalog_session))
    # Loads commit while the compaction is written but not committed: an upsert of a compacted key
    # and a new key, in the same tablet.
    sql(catalog_session, "INSERT INTO t VALUES (1, 'during', 1), (9, 'new', 9)")
    compaction.commit_compacted(catalog_session.catalog, catalog_session.warehouse, compacted)
    gc_steps.delete_files(catalog_session.catalog, catalog_session.warehouse, 0)
    assert sql(catalog_session, EVERYTHING) == (
        (1, "during", 1),
        (2, "b2", 0),
        (3, "c", 0),
        (4, "d", 4),
        (9, "new", 9),
    )
    sql(catalog_session, "INSERT INTO t VALUES (2, 'after', 2)")
    assert sql(catalog_session, "SELECT v FROM t WHERE id = 2") == (("after",),)
    referenced_files_exist(catalog_session)


def test_alter_job_started_during_compaction_refuses_the_commit(catalog_session, spark):
    old_table(catalog_session)
    before = sql(catalog_session, EVERYTHING)
    inputs = {f.path for f in live_data_files(catalog_session, "t")}
    compacted = compaction.write_compacted(spark, catalog_session.catalog, catalog_session.warehouse, only_target(catalog_session))
    start_heavy(catalog_session, "ALTER TABLE t MODIFY COLUMN v INT")
    with pytest.raises(ConcurrentChange) as err:
        compaction.commit_compacted(catalog_session.catalog, catalog_session.warehouse, compacted)
    assert "started meanwhile" in str(err.value) and "\n" not in str(err.value)
    assert txn_state(catalog_session, compacted.txn_id) == "ABORTED"
    assert not (catalog_session.warehouse / compacted.staging).exists()
    assert compacted.path in disk_files(catalog_session), "deferred: GC deletes it after the retention"
    gc_steps.delete_files(catalog_session.catalog, catalog_session.warehouse, 0)
    assert compacted.path not in disk_files(catalog_session)
    assert {f.path for f in live_data_files(catalog_session, "t")} == inputs
    assert sql(catalog_session, EVERYTHING) == before
    referenced_files_exist(catalog_session)


def test_two_compactions_of_one_tablet(catalog_session, spark):
    old_table(catalog_session)
    before = sql(catalog_session, EVERYTHING)
    target = only_target(catalog_session)
    first = compaction.write_compacted(spark, catalog_session.catalog, catalog_session.warehouse, target)
    second = compaction.write_compacted(spark, catalog_session.catalog, catalog_session.warehouse, target)
    compaction.commit_compacted(catalog_session.catalog, catalog_session.warehouse, first)
    with pytest.raises(ConcurrentChange) as err:
        compaction.commit_compacted(catalog_session.catalog, catalog_session.warehouse, second)
    assert "input files changed" in str(err.value)
    gc_steps.delete_files(catalog_session.catalog, catalog_session.warehouse, 0)
    assert [f.path for f in live_data_files(catalog_session, "t")] == [first.path]
    assert second.path not in disk_files(catalog_session)
    assert sql(catalog_session, EVERYTHING) == before
    # Nothing is left to compact.
    assert compaction.write_compacted(spark, catalog_session.catalog, catalog_session.warehouse, target) is None


KILLED = textwrap.dedent("""
    import os, pathlib, signal, sys
    from alterflow.gc import compaction
    from alterflow.settings import Settings
    from alterflow.spark_session import get_spark
    from alterflow.catalog.catalog import Catalog
    from alterflow.catalog.garbage import GarbageCollection

    settings = Settings.from_env({**os.environ, "ALTERFLOW_SPARK_MASTER": "local[1]"})
    catalog = Catalog(settings.catalog_url)
    spark = get_spark(settings)
    target = GarbageCollection(catalog).compaction_targets()[0]
    compacted = compaction.write_compacted(spark, catalog, settings.warehouse, target)
    if sys.argv[1] == "after-commit":
        compaction.commit_compacted(catalog, settings.warehouse, compacted)
    print(compacted.txn_id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # no cleanup of any kind runs
""")


@pytest.mark.parametrize("window", ["after-write", "after-commit"])
def test_sigkilled_compaction_converges(tmp_path, spark, window):
    from alterflow.settings import Settings

    home = tmp_path / "home"
    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[2]"}))
    old_table(session)
    before = sql(session, EVERYTHING)
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(home), PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    env["PYTHONPATH"] = child_pythonpath(env.get("PYTHONPATH"))
    proc = subprocess.run([sys.executable, str(script), window], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    txn_id = int(proc.stdout.split()[-1])
    assert txn_state(session, txn_id) == ("COMMITTED" if window == "after-commit" else "PREPARE")
    assert sql(session, EVERYTHING) == before
    referenced_files_exist(session)

    gc(session, spark, now=later())  # past the crashed transaction's timeout and the retention
    assert sql(session, EVERYTHING) == before
    assert versions(session, "t") == [2]
    files = live_data_files(session, "t")
    assert len(files) == 1 and files[0].schema_version == 2
    assert disk_files(session) == [files[0].path], "only the live file is left in the warehouse"
    gc(session, spark, now=later())  # and the next run forgets the rows of the files now gone
    assert file_rows(session) == {files[0].path: "LIVE"}
    assert sql(session, EVERYTHING) == before
    referenced_files_exist(session)


def test_compact_step_reports_changes_that_got_there_first(catalog_session, spark):
    """Spark is started after the tablets to compact are listed: what happens meanwhile (an alter job
    starting, a table dropped) leaves the tablet for the next run, reported, with nothing changed."""
    old_table(catalog_session)
    before = sql(catalog_session, EVERYTHING)
    inputs = {f.path for f in live_data_files(catalog_session, "t")}

    def start_job_then_spark():
        start_heavy(catalog_session, "ALTER TABLE t MODIFY COLUMN v INT")
        return spark

    result = gc_steps.compact(catalog_session.catalog, catalog_session.warehouse, start_job_then_spark)
    assert result.tablets_compacted == 0
    [conflict] = result.conflicts
    assert conflict.table == "t" and "started meanwhile" in conflict.reason
    assert {f.path for f in live_data_files(catalog_session, "t")} == inputs
    assert sql(catalog_session, EVERYTHING) == before
    gc_steps.delete_files(catalog_session.catalog, catalog_session.warehouse, 0)
    assert set(disk_files(catalog_session)) == inputs, "the refused compaction's file and staging folder are gone"
    sql(catalog_session, "CANCEL ALTER TABLE COLUMN FROM t")

    def drop_then_spark():
        sql(catalog_session, "DROP TABLE t")
        return spark

    dropped = gc_steps.compact(catalog_session.catalog, catalog_session.warehouse, drop_then_spark)
    assert dropped.tablets_compacted == 0
    assert "unknown table" in dropped.conflicts[0].reason
