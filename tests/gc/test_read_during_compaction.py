"""A query whose snapshot loses a file to compaction while it runs (SPEC §6: GC does not wait for
readers) is planned again on the new snapshot and answers exactly as before: neither an error
nor a missing row. Seen in the live Airflow test, where the hourly GC DAG's first run compacted
a table between a CLI SELECT's planning and its read."""

from __future__ import annotations

import pytest

from alterflow.gc import steps as gc_steps
from alterflow.session import Session, StatementError
from tests.support.gc import sql

pytestmark = pytest.mark.spark


def test_a_select_whose_file_is_compacted_away_midway_is_planned_again(session: Session, spark, monkeypatch):
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")
    sql(session, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    sql(session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 5")  # the file is now under an old version
    real_query = Session._query
    planned = []

    def plan_then_compact(self, text, names):
        frame = real_query(self, text, names)
        planned.append(frame)
        if len(planned) == 1:  # after planning, before reading: GC rewrites and deletes the file
            done = gc_steps.compact(session.catalog, session.warehouse, lambda: spark)
            assert done["tablets_compacted"] == 1
        return frame

    monkeypatch.setattr(Session, "_query", plan_then_compact)
    assert sql(session, "SELECT id, v, n FROM t ORDER BY id") == ((1, "a", 5), (2, "b", 5))
    assert len(planned) == 2  # planned again once
    sql(session, "INSERT INTO t SELECT id + 10, v, n FROM t")  # INSERT ... SELECT reads the same way
    monkeypatch.undo()
    assert sql(session, "SELECT count(*) FROM t") == ((4,),)


def test_a_file_that_is_simply_gone_is_still_an_error(session: Session, spark):
    """Not compaction: a data file deleted by hand. Three plans, then one clear error."""
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING)")
    sql(session, "INSERT INTO t VALUES (1, 'a')")
    for f in session.catalog.snapshot("t").files:
        (session.warehouse / f.path).unlink()
    with pytest.raises(StatementError) as err:
        sql(session, "SELECT * FROM t")
    assert "\n" not in str(err.value)
