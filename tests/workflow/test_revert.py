"""ALTER TABLE t REVERT TO VERSION n (docs/semantics.md, "Choices where no rule settles a case"): version n's columns (by id), keys and
layout again, as a new version. Lightweight when today's files present it by column id (a
dropped column's values come back; rows written after the drop read its initial default);
otherwise the heavyweight job's rewrite. Refused once GC has collected version n. On both
catalogs, with loads landing between the change and the revert."""

from __future__ import annotations

import pytest

from alterflow.engine.session import StatementError
from alterflow.gc.gc_steps import collect_versions
from tests.support.heavy_jobs import origin_state, sql

pytestmark = pytest.mark.spark


def _rows(session, table: str = "t") -> list[tuple]:
    return list(sql(session, f"SELECT * FROM {table} ORDER BY id"))


def _versions(session, table: str = "t") -> list[tuple]:
    return [(row[0], row[2]) for row in sql(session, f"SHOW SCHEMA VERSIONS FROM {table}")]


def _last_job(session, table: str = "t"):
    return session.catalog.jobs(session.catalog.table(table).id)[-1]


def test_lightweight_reverts_of_drop_rename_and_add_with_loads_between(catalog_session, spark):
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, n INT, PRIMARY KEY (id))")
    sql(s, "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20)")
    sql(s, "ALTER TABLE t DROP COLUMN v")  # version 2
    sql(s, "INSERT INTO t VALUES (3, 30), (1, 11)")  # id 1 replaced after the drop: its v is gone
    sql(s, "ALTER TABLE t RENAME COLUMN n TO m")  # version 3
    sql(s, "ALTER TABLE t ADD COLUMN w STRING DEFAULT 'w'")  # version 4
    sql(s, "INSERT INTO t VALUES (4, 40, 'x')")
    files_before = origin_state(s, "t")

    plan = {row[0]: row for row in sql(s, "EXPLAIN ALTER TABLE t REVERT TO VERSION 1")}
    assert plan["(statement)"][1] == "LIGHT"
    assert "brings back v (id 2)" in plan["REVERT TO VERSION 1"][2] and "drops w (id 4)" in plan["REVERT TO VERSION 1"][2]

    assert sql(s, "ALTER TABLE t REVERT TO VERSION 1") == "ALTER TABLE t: job 4 FINISHED, schema version 5"
    assert _rows(s) == [(1, None, 11), (2, "b", 20), (3, None, 30), (4, None, 40)]
    assert [r[0] for r in sql(s, "DESCRIBE t")] == ["id", "v", "n"]
    assert _versions(s)[-1] == (5, "ALTER TABLE t REVERT TO VERSION 1")
    assert origin_state(s, "t")[1:3] == files_before[1:3], "a lightweight revert touches no file (same index, same files)"

    # Loads under the reverted version, then back to version 4: w's values come back; rows written
    # while w was dropped read its initial default.
    sql(s, "INSERT INTO t VALUES (5, 'e', 50)")
    sql(s, "ALTER TABLE t REVERT TO VERSION 4")
    assert _rows(s) == [(1, 11, "w"), (2, 20, "w"), (3, 30, "w"), (4, 40, "x"), (5, 50, "w")]


def test_a_heavyweight_revert_of_a_type_change_rewrites_with_the_job_machinery(catalog_session, spark):
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, '10'), (2, '20')")
    sql(s, "ALTER TABLE t MODIFY COLUMN v BIGINT")  # heavy: version 2
    sql(s, "INSERT INTO t VALUES (3, 6000000000), (2, 21)")
    sql(s, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("on_cast_error" = "null")')  # heavy narrowing: version 3
    sql(s, "INSERT INTO t VALUES (4, 40)")

    plan = {row[0]: row for row in sql(s, "EXPLAIN ALTER TABLE t REVERT TO VERSION 1")}
    assert plan["(statement)"][1] == "HEAVY" and "INT -> STRING" in plan["REVERT TO VERSION 1"][2]
    sql(s, "ALTER TABLE t REVERT TO VERSION 1")
    job = _last_job(s)
    assert (job.kind, job.state, job.to_version) == ("HEAVY", "FINISHED", 4)
    assert _rows(s) == [(1, "10"), (2, "21"), (3, None), (4, "40")]
    assert [r[1] for r in sql(s, "DESCRIBE t")] == ["INT", "STRING"]

    # Back to BIGINT: a narrowing that cannot represent every row is refused with a count and a
    # sample (the job's validation), and the table stays as it was.
    sql(s, "INSERT INTO t VALUES (5, 'five')")
    before = origin_state(s, "t")
    [analysis] = list(s.run("EXPLAIN ANALYZE ALTER TABLE t REVERT TO VERSION 2"))
    revert_row = dict(zip(analysis.columns, analysis.rows[0]))
    assert (revert_row["Kind"], revert_row["FailedCasts"]) == ("HEAVY", 1) and '"value": "five"' in revert_row["Samples"]
    with pytest.raises(StatementError) as refused:
        sql(s, "ALTER TABLE t REVERT TO VERSION 2")
    assert "validation failed: 1 of " in str(refused.value) and " do not convert to " in str(refused.value), str(refused.value)
    assert "'five'" in str(refused.value)
    assert origin_state(s, "t") == before and _rows(s)[-1] == (5, "five")


def test_a_revert_is_refused_once_gc_collected_the_version_and_bad_reverts_change_nothing(catalog_session):
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")  # no rows: no file keeps a version
    sql(s, "ALTER TABLE t ADD COLUMN n INT")
    sql(s, "ALTER TABLE t ADD COLUMN m INT")
    sql(s, "ALTER TABLE t REVERT TO VERSION 2")  # within the retention: version 2 is kept
    assert [r[0] for r in sql(s, "DESCRIBE t")] == ["id", "v", "n"]
    collect_versions(s.catalog, retention_s=0)  # GC with no retention: every older version goes
    before = origin_state(s, "t")
    refusals = {
        "ALTER TABLE t REVERT TO VERSION 1": "cannot revert to version 1: garbage collection has collected it",
        "ALTER TABLE t REVERT TO VERSION 4": "cannot revert to version 4: it is the current version",
        "ALTER TABLE t REVERT TO VERSION 9": "cannot revert to version 9: the table's newest version is 4",
        "ALTER TABLE t REVERT TO VERSION 3, ADD COLUMN z INT": "REVERT TO VERSION is a statement of its own",
        "ALTER TABLE t REVERT TO VERSION 0": "REVERT TO VERSION",
        "ALTER TABLE t REVERT TO 3": "TO VERSION n after REVERT",
    }
    for statement, message in refusals.items():
        with pytest.raises(StatementError) as refused:
            sql(s, statement)
        assert message in str(refused.value) and "\n" not in str(refused.value), statement
    assert origin_state(s, "t") == before and len(_versions(s)) == 1


def test_a_column_cannot_come_back_not_null_after_a_version_let_it_hold_nulls(catalog_session, spark):
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, x INT NOT NULL DEFAULT 0, PRIMARY KEY (id))")
    sql(s, "INSERT INTO t VALUES (1, 1)")
    sql(s, "ALTER TABLE t MODIFY COLUMN x INT NULL")
    sql(s, "INSERT INTO t VALUES (2, NULL)")
    sql(s, "ALTER TABLE t DROP COLUMN x")
    before = origin_state(s, "t")
    with pytest.raises(StatementError) as refused:
        sql(s, "ALTER TABLE t REVERT TO VERSION 1")
    assert "column x comes back NOT NULL, but version 2 let it hold NULLs" in str(refused.value)
    assert origin_state(s, "t") == before
    sql(s, "ALTER TABLE t REVERT TO VERSION 2")  # nullable there: lightweight, its values back
    assert _rows(s) == [(1, 1), (2, None)]


def test_a_widening_is_reverted_lightweight_when_every_stored_value_fits(catalog_session, spark):
    """INT -> BIGINT, loads of BIGINT files whose values fit INT, REVERT: metadata only (the
    files' statistics say every value fits; readers narrow them). A value that does not fit makes
    the revert a rewrite, which refuses it with its count and sample."""
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, 10), (2, 20)")
    sql(s, "ALTER TABLE t MODIFY COLUMN v BIGINT")  # lightweight widening: version 2
    sql(s, "INSERT INTO t VALUES (3, 30), (2, -2147483648)")  # files of version 2, values INT holds
    files_before = origin_state(s, "t")
    plan = {row[0]: row for row in sql(s, "EXPLAIN ALTER TABLE t REVERT TO VERSION 1")}
    assert plan["(statement)"][1] == "LIGHT", plan
    assert "v: BIGINT -> INT, every stored value fits (file statistics)" in plan["REVERT TO VERSION 1"][2]
    assert sql(s, "ALTER TABLE t REVERT TO VERSION 1") == "ALTER TABLE t: job 2 FINISHED, schema version 3"
    assert _last_job(s).kind == "LIGHT"
    assert _rows(s) == [(1, 10), (2, -2147483648), (3, 30)]
    assert [r[1] for r in sql(s, "DESCRIBE t")] == ["INT", "INT"]
    assert origin_state(s, "t")[1:3] == files_before[1:3], "a lightweight revert touches no file"
    with pytest.raises(StatementError):  # loads follow INT again
        sql(s, "INSERT INTO t VALUES (4, 3000000000)")

    sql(s, "ALTER TABLE t MODIFY COLUMN v BIGINT")  # version 4
    sql(s, "INSERT INTO t VALUES (5, 6000000000)")
    plan = {row[0]: row for row in sql(s, "EXPLAIN ALTER TABLE t REVERT TO VERSION 3")}
    assert plan["(statement)"][1] == "HEAVY", plan
    before = origin_state(s, "t")
    with pytest.raises(StatementError) as refused:
        sql(s, "ALTER TABLE t REVERT TO VERSION 3")
    assert "validation failed: 1 of " in str(refused.value) and " do not convert to " in str(refused.value), str(refused.value)
    assert "'6000000000'" in str(refused.value)
    assert origin_state(s, "t") == before and _rows(s)[-1] == (5, 6000000000)


def test_a_load_that_ran_across_a_lightweight_narrowing_is_refused(catalog_session):
    """The revert checked the files committed until its commit; a load that began under the wider
    version and commits after it could hold values the narrower type cannot: refused, retry."""
    from alterflow.catalog.catalog import NewFile
    from alterflow.catalog.catalog_errors import TransactionStateError
    from alterflow.catalog.heavy_jobs import HeavyJobs

    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v INT)")
    sql(s, "INSERT INTO t VALUES (1, 10)")
    sql(s, "ALTER TABLE t MODIFY COLUMN v BIGINT")
    table = s.catalog.table("t")
    txn = s.catalog.begin_transaction(table.id, "a slow load", 600)
    tablets = s.catalog.ensure_tablets(table.current_index_id, {("", 0)})
    s.catalog.register_files(txn, [NewFile(tablets[("", 0)], 2, f"t{table.id}/slow.parquet", 1, 0)])
    assert sql(s, "ALTER TABLE t REVERT TO VERSION 1").endswith("FINISHED, schema version 3")
    with pytest.raises(TransactionStateError) as refused:
        HeavyJobs(s.catalog).commit_load(txn, {})
    assert str(refused.value) == (
        f"transaction {txn} cannot commit: column v of t became INT again (REVERT TO VERSION) while it ran; retry the load"
    )
    assert _rows(s) == [(1, 10)]

    # Also when the column was dropped after the narrowing: a later REVERT would bring it back.
    sql(s, "ALTER TABLE t MODIFY COLUMN v BIGINT")  # version 4
    txn = s.catalog.begin_transaction(table.id, "another slow load", 600)
    s.catalog.register_files(txn, [NewFile(tablets[("", 0)], 4, f"t{table.id}/slow2.parquet", 1, 0)])
    sql(s, "ALTER TABLE t REVERT TO VERSION 3")  # INT again (version 5), lightweight
    sql(s, "ALTER TABLE t DROP COLUMN v")  # version 6
    with pytest.raises(TransactionStateError, match="column v of t became INT again"):
        HeavyJobs(s.catalog).commit_load(txn, {})


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_a_revert_that_rewrites_also_brings_back_a_dropped_columns_values(catalog_session, spark, engine):
    """A type goes back by a rewrite and a dropped column comes back in the same revert: the
    rewrite reads the column by id from the files that still hold it; rows written after the
    drop (and loads during the job) read NULL."""
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, a STRING, b INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, '10', 100), (2, '20', 200)")
    sql(s, "ALTER TABLE t MODIFY COLUMN a INT")  # heavy: version 2, its files still hold b
    sql(s, "INSERT INTO t VALUES (3, 30, 300)")
    sql(s, "ALTER TABLE t DROP COLUMN b")  # version 3
    sql(s, "INSERT INTO t VALUES (4, 40), (2, 21)")  # after the drop: id 2's b is gone
    plan = {row[0]: row for row in sql(s, "EXPLAIN ALTER TABLE t REVERT TO VERSION 1")}
    assert plan["(statement)"][1] == "HEAVY" and "brings back b (id 3)" in plan["REVERT TO VERSION 1"][2], plan
    sql(s, f'ALTER TABLE t REVERT TO VERSION 1 PROPERTIES ("engine" = "{engine}")')
    job = _last_job(s)
    assert (job.kind, job.state, job.to_version) == ("HEAVY", "FINISHED", 4)
    assert _rows(s) == [(1, "10", 100), (2, "21", None), (3, "30", 300), (4, "40", None)]
    assert [(r[0], r[1]) for r in sql(s, "DESCRIBE t")] == [("id", "INT"), ("a", "STRING"), ("b", "INT")]


def test_a_returning_column_stored_wider_meanwhile_comes_back_only_when_its_values_fit(catalog_session, spark):
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, b INT)")
    sql(s, "INSERT INTO t VALUES (1, 1)")
    sql(s, "ALTER TABLE t MODIFY COLUMN b BIGINT")  # version 2
    sql(s, "INSERT INTO t VALUES (2, 2000000000)")  # a BIGINT file whose values fit INT
    sql(s, "ALTER TABLE t DROP COLUMN b")  # version 3
    sql(s, "ALTER TABLE t REVERT TO VERSION 1")  # version 4: b INT again, read from both files
    assert _last_job(s).kind == "LIGHT"
    assert _rows(s) == [(1, 1), (2, 2000000000)]
    sql(s, "ALTER TABLE t MODIFY COLUMN b BIGINT")  # version 5
    sql(s, "INSERT INTO t VALUES (3, 5000000000)")
    sql(s, "ALTER TABLE t DROP COLUMN b")  # version 6
    with pytest.raises(StatementError) as refused:
        sql(s, "ALTER TABLE t REVERT TO VERSION 4")
    assert "column b comes back, but version 2 stored it as BIGINT, and its stored values cannot be read as INT" in str(refused.value)
    assert [r[0] for r in sql(s, "DESCRIBE t")] == ["id"]
