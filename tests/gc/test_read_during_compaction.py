"""A query, or an INSERT ... SELECT, planned before a compaction commits and reading after it
answers exactly as before, in one plan: the files the compaction replaced stay on disk for the
retention period (deferred deletes, docs/gc.md). Seen first in the live Airflow test, where the
hourly GC DAG's first run compacted a table between a CLI SELECT's planning and its read. A file
that is gone anyway (deleted by hand) is still planned again, then one clear error."""

from __future__ import annotations

import pytest

from alterflow.engine.session import Session, StatementError
from alterflow.gc import gc_steps
from tests.support.gc import sql

pytestmark = pytest.mark.spark


def test_reads_planned_before_a_compaction_finish_after_it(session: Session, spark, monkeypatch):
    session.query_engine = "spark"  # Spark plans (_query) and reads (collect) in two steps
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    sql(session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 5")  # the file is now under an old version
    real_query = Session._query
    planned = []

    def plan_then_compact(self, text, names):
        frame = real_query(self, text, names)
        planned.append(frame)
        # After planning, before reading: GC compacts (the files read become REPLACED) and then
        # deletes whatever its retention allows (the default hour: nothing of this).
        done = gc_steps.compact(session.catalog, session.warehouse, lambda: spark)
        assert done.tablets_compacted == 1
        assert gc_steps.delete_files(session.catalog, session.warehouse).files_deleted == 0
        return frame

    monkeypatch.setattr(Session, "_query", plan_then_compact)
    assert sql(session, "SELECT id, v, n FROM t ORDER BY id") == ((1, "a", 5), (2, "b", 5))
    assert len(planned) == 1, "one plan: the replaced files were still there"
    sql(session, "ALTER TABLE t ADD COLUMN m INT DEFAULT 7")  # old again: the next read's plan is compacted too
    sql(session, "INSERT INTO t SELECT id + 10, v, n, m FROM t")
    assert len(planned) == 2
    monkeypatch.undo()
    assert sql(session, "SELECT id, v, n, m FROM t ORDER BY id") == (
        (1, "a", 5, 7),
        (2, "b", 5, 7),
        (11, "a", 5, 7),
        (12, "b", 5, 7),
    )
    # Once the retention period has passed, the replaced files go.
    assert gc_steps.delete_files(session.catalog, session.warehouse, 0).files_deleted >= 2


@pytest.mark.parametrize("key", [", PRIMARY KEY (id)", ""], ids=["arrow read", "duckdb scan"])
def test_a_local_read_planned_before_a_compaction_finishes_after_it(session: Session, spark, monkeypatch, key):
    """The local engine plans (the snapshot) and reads (arrow_read, or DuckDB's scan for a table
    without a primary key) in two steps too."""
    from alterflow.query import local_engine

    sql(session, f"CREATE TABLE t (id INT NOT NULL, v STRING{key})")
    sql(session, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    sql(session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 5")
    real_run = local_engine.run_local
    runs = []

    def compact_then_run(warehouse, plan, as_rows=False):
        runs.append(plan)
        if len(runs) == 1:
            assert gc_steps.compact(session.catalog, session.warehouse, lambda: spark).tablets_compacted == 1
        return real_run(warehouse, plan, as_rows)

    monkeypatch.setattr(local_engine, "run_local", compact_then_run)
    assert sql(session, "EXPLAIN SELECT id, v, n FROM t")[0][0] == "local"
    assert sql(session, "SELECT id, v, n FROM t ORDER BY id") == ((1, "a", 5), (2, "b", 5))
    assert len(runs) == 1, "one plan: the replaced files were still there"


@pytest.mark.parametrize("engine", ["spark", "local"])
def test_a_file_that_is_simply_gone_is_still_an_error(session: Session, spark, engine):
    """Not compaction: a data file deleted by hand. Three plans, then one clear error."""
    session.query_engine = engine
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING)")
    sql(session, "INSERT INTO t VALUES (1, 'a')")
    for f in session.catalog.snapshot("t").files:
        (session.warehouse / f.path).unlink()
    with pytest.raises(StatementError) as err:
        sql(session, "SELECT * FROM t")
    assert "\n" not in str(err.value)
