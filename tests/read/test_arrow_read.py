"""The local engine's reader (`arrow_read.read_snapshot_arrow`) reads what Spark's evolved read
reads: the same rows, values and types, through added, dropped, renamed, widened and re-added
columns, merged primary keys across loads, streamed loads (several files per transaction) and
files a Spark conversion rewrote (rows of many transactions in one file)."""

from __future__ import annotations

import dataclasses

import pytest

import alterflow.load.inputs as loading
from alterflow.engine.session import ResultSet, Session
from alterflow.read.arrow_read import read_snapshot_arrow
from tests.support.values import strict

pytestmark = pytest.mark.spark


def spark_rows(session, table: str) -> list[tuple]:
    (last,) = [r for r in session.run(f"SELECT * FROM {table}") if isinstance(r, ResultSet)]
    return sorted((tuple(r) for r in last.rows), key=strict)


def arrow_rows(session, table: str) -> list[tuple]:
    snapshot = session.catalog.snapshot(table)
    rows = read_snapshot_arrow(session.warehouse, snapshot).to_pylist()
    names = [c.name for c in snapshot.current.columns]
    return sorted((tuple(r[n] for n in names) for r in rows), key=strict)


def same_rows(session, table: str) -> None:
    expected, got = spark_rows(session, table), arrow_rows(session, table)
    assert [strict(r) for r in got] == [strict(r) for r in expected], f"\narrow {got}\nspark {expected}"


def run(session, text: str) -> None:
    list(session.run(text))


def test_a_primary_key_table_through_every_kind_of_evolution(session):
    run(
        session,
        "CREATE TABLE t (id INT NOT NULL, a INT, b STRING, c DECIMAL(5,2), d DATE, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3",
    )
    run(
        session,
        "INSERT INTO t VALUES (1, 10, 'one', 1.50, '2024-01-02'), (2, 20, 'two', NULL, NULL), (3, NULL, 'three', 3.25, '2024-03-04')",
    )
    run(session, "ALTER TABLE t ADD COLUMN e BIGINT DEFAULT '7'")
    run(session, "INSERT INTO t VALUES (2, 21, 'two again', 2.00, '2024-02-02', 8), (4, 40, 'four', 4.00, NULL, NULL)")
    same_rows(session, "t")
    run(session, "ALTER TABLE t MODIFY COLUMN a BIGINT")  # widened: old files read cast
    run(session, "ALTER TABLE t RENAME COLUMN b TO bb")
    run(session, "ALTER TABLE t DROP COLUMN c")
    run(session, "INSERT INTO t VALUES (1, 11, 'one again', '2025-01-01', 9), (5, 50, 'five', NULL, 10)")
    run(session, "ALTER TABLE t ADD COLUMN c STRING DEFAULT 'new c'")  # a new column under an old name
    run(session, "INSERT INTO t VALUES (3, 31, 'three again', NULL, 11, 'c3')")
    same_rows(session, "t")
    assert len(arrow_rows(session, "t")) == 5


def test_a_table_without_a_key_keeps_every_row(session):
    run(session, "CREATE TABLE p (id INT, v VARCHAR(5)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    run(session, "INSERT INTO p VALUES (1, 'a'), (1, 'a'), (2, NULL)")
    run(session, "ALTER TABLE p MODIFY COLUMN v VARCHAR(10)")
    run(session, "INSERT INTO p VALUES (1, 'longer one'), (3, 'c')")
    same_rows(session, "p")
    assert len(arrow_rows(session, "p")) == 5


def test_a_streamed_load_and_a_spark_rewrite_merge_as_spark_merges_them(session, monkeypatch, tmp_path):
    """A streamed load writes a tablet's rows in several files of one transaction (the later file
    wins); a Spark conversion writes rows of many transactions into one file (the later commit
    wins)."""
    monkeypatch.setattr(loading, "BLOCK_BYTES", 64 << 10)
    monkeypatch.setattr(loading, "WHOLE_CSV_BYTES", 0)
    small = Session(dataclasses.replace(session.settings, target_file_mb=1, load_buffer_mb=2))
    run(small, "CREATE TABLE s (id BIGINT NOT NULL, v STRING, n INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    csv = tmp_path / "in.csv"
    lines = ["id,v,n"] + [f"{i % 20000},{'x' * 40}{i},{i % 100}" for i in range(60000)]  # every key three times
    csv.write_text("\n".join(lines) + "\n")
    from alterflow.load.inputs import open_input

    small.load_input("s", open_input(csv), label="streamed")
    files = small.catalog.snapshot("s").files
    assert len(files) > 2 and len({f.txn_id for f in files}) == 1
    same_rows(small, "s")
    run(small, "INSERT INTO s VALUES (7, 'seven', 7)")
    run(small, 'ALTER TABLE s MODIFY COLUMN n SMALLINT PROPERTIES ("engine" = "spark")')  # rewritten by Spark
    assert small.catalog.active_job(small.catalog.table("s").id) is None
    run(small, "INSERT INTO s VALUES (8, 'eight', 8), (19999, 'last', 9)")
    same_rows(small, "s")
    rows = {r[0]: r[1] for r in arrow_rows(small, "s")}
    assert len(rows) == 20000 and rows[7] == "seven" and rows[8] == "eight" and rows[19999] == "last"
    assert rows[5] == "x" * 40 + "40005"  # the last of rows 5, 20005 and 40005


def test_a_row_loaded_during_a_job_beats_the_older_row_its_conversion_commits_later(session, spark):
    """The conversion's file sorts after the dual-written load's file (its transaction began
    later) but carries the rows' original, older transactions: the commit order of each row's
    transaction decides, not the file's name."""
    from alterflow.workflow import alter_steps, heavy_steps
    from alterflow.workflow.request import AlterRequest

    run(session, "CREATE TABLE j (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    run(session, "INSERT INTO j VALUES (1, '1'), (2, '2'), (3, '3')")
    request = AlterRequest("j", "ALTER TABLE j MODIFY COLUMN v INT", {"engine": "spark"})
    job_id = heavy_steps.start(session.catalog, request, alter_steps.validate(session.catalog, request)).job_id
    run(session, "INSERT INTO j VALUES (2, '20'), (4, '40')")  # dual-written, before the conversion
    catalog, warehouse = session.catalog, session.warehouse
    assert heavy_steps.wait_for_boundary(catalog, warehouse, job_id).done
    heavy_steps.convert(spark, catalog, warehouse, job_id)
    heavy_steps.check(spark, catalog, warehouse, job_id)
    assert heavy_steps.swap(catalog, warehouse, job_id).state == "FINISHED"
    assert arrow_rows(session, "j") == [(1, 1), (2, 20), (3, 3), (4, 40)]
    same_rows(session, "j")
