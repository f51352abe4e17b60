"""What a rewrite produces (docs/semantics.md, docs/heavyweight.md): a new sort key sorts every file of the new index; a new
distribution puts every row into the bucket `bucket_of` computes; values and counts are kept; a
primary-key table keeps the latest row per key, and an upsert dual-written during the job wins
over the converted older row."""

from __future__ import annotations

from collections import Counter

import pyarrow.parquet as pq
import pytest

from alterflow.bucketing import bucket_of
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.store.layout import absolute
from tests.support.heavy_jobs import check, convert, describe, job, sql, start, swap, wait

pytestmark = pytest.mark.spark


@pytest.fixture(params=["spark", "local"])
def engine(request) -> str:
    """Each rewrite runs on both engines: they sort and bucket alike."""
    return request.param


TABLE = "CREATE TABLE r (id INT NOT NULL, k STRING, v INT) DISTRIBUTED BY HASH(id) BUCKETS 2 ORDER BY (id)"
ROWS = [(i, f"k{i % 7}", (i * 37) % 61) for i in range(1, 121)]
EXTRA = [(500, "k3", 7), (501, "new", 3), (502, "k1", 60)]


def load(session, rows):
    sql(session, "INSERT INTO r VALUES " + ", ".join(f"({i}, '{k}', {v})" for i, k, v in rows))


def stored_files(session, files):
    """(file, its rows as (id, k, v)) for catalog files."""
    for f in files:
        data = pq.read_table(absolute(session.warehouse, f.path))
        yield f, list(zip(*(data.column(n).to_pylist() for n in ("id", "k", "v"))))


def test_a_new_sort_key_sorts_every_file_of_the_new_index(session, spark, engine):
    """Two loads, so each origin tablet has two files; the new version has two buckets."""
    sql(session, TABLE)
    load(session, ROWS[:60])
    load(session, ROWS[60:])
    job_id = start(session, "ALTER TABLE r ORDER BY (v)", engine=engine)
    load(session, EXTRA)  # dual-written
    wait(session, job_id)
    convert(session, spark, job_id)
    j = job(session, job_id)
    unsorted = [
        f.path
        for f, rows in stored_files(session, session.catalog.index_snapshot(j.table_id, j.shadow_index_id, 2).files)
        if [v for _i, _k, v in rows] != sorted(v for _i, _k, v in rows)
    ]
    assert unsorted == [], f"shadow files not sorted by the new key v: {unsorted}"
    check(session, spark, job_id)
    assert swap(session, job_id).state == "FINISHED"
    version = session.catalog.current_schema("r")[1]
    assert tuple(version.names(version.sort_key)) == ("v",)
    assert Counter(sql(session, "SELECT id, k, v FROM r")) == Counter(ROWS + EXTRA)


def test_a_new_sort_key_on_an_empty_table_finishes(session, spark, engine):
    """No file to check the order of: the validation's sort-order suite sees an empty frame."""
    sql(session, TABLE)
    job_id = start(session, "ALTER TABLE r ORDER BY (v)", engine=engine)
    wait(session, job_id)
    convert(session, spark, job_id)
    check(session, spark, job_id)
    assert swap(session, job_id).state == "FINISHED"
    load(session, EXTRA)
    assert Counter(sql(session, "SELECT id, k, v FROM r")) == Counter(EXTRA)


def test_a_new_distribution_puts_every_row_in_the_bucket_bucket_of_says(session, spark, engine):
    # No sort key here: a table with one fails the same way as the test above (its rewritten files
    # are not in sort-key order when the new version has more than one bucket).
    sql(session, TABLE.replace(" ORDER BY (id)", ""))
    load(session, ROWS[:60])
    load(session, ROWS[60:])
    job_id = start(session, "ALTER TABLE r DISTRIBUTED BY HASH(k) BUCKETS 5", engine=engine)
    load(session, EXTRA)  # dual-written
    wait(session, job_id)
    convert(session, spark, job_id)
    check(session, spark, job_id)
    assert swap(session, job_id).state == "FINISHED"

    j = job(session, job_id)
    info, version = session.catalog.current_schema("r")
    assert info.current_index_id == j.shadow_index_id
    assert (version.buckets, tuple(version.names(version.distributed_by)), tuple(version.sort_key)) == (5, ("k",), ())
    k_type = version.column("k").type
    tablets = session.catalog.tablets(info.current_index_id)
    stored, buckets = [], set()
    for f, rows in stored_files(session, session.catalog.snapshot("r").files):
        bucket = tablets[f.tablet_id][1]
        buckets.add(bucket)
        for i, k, _v in rows:
            assert bucket_of((k,), (k_type,), 5) == bucket, (i, k, bucket, f.path)
        stored += rows
    assert len(buckets) > 1
    assert Counter(stored) == Counter(ROWS + EXTRA)  # values and counts unchanged
    assert Counter(sql(session, "SELECT id, k, v FROM r")) == Counter(ROWS + EXTRA)


def test_primary_key_keeps_the_latest_row_and_a_dual_written_upsert_wins(session, spark, engine):
    sql(session, "CREATE TABLE p (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(session, "INSERT INTO p VALUES (1, '1'), (2, '2'), (3, '3'), (4, '4')")
    sql(session, "INSERT INTO p VALUES (1, '11'), (2, '12')")  # upserts before the job
    sql(session, "INSERT INTO p VALUES (1, '21')")
    job_id = start(session, "ALTER TABLE p MODIFY COLUMN v BIGINT", engine=engine)
    sql(session, "INSERT INTO p VALUES (2, '32')")  # PENDING: dual-written, newer than history
    wait(session, job_id)
    sql(session, "INSERT INTO p VALUES (3, '33'), (5, '35')")  # RUNNING, before the conversion
    result = convert(session, spark, job_id)
    assert result.rows == 4  # one row per key of the history
    sql(session, "INSERT INTO p VALUES (4, '44')")  # after the conversion
    check(session, spark, job_id)
    swap(session, job_id)

    assert describe(session, "p")["v"][0] == "BIGINT"
    assert sql(session, "SELECT id, v FROM p ORDER BY id") == ((1, 21), (2, 32), (3, 33), (4, 44), (5, 35))
    # The converted history holds each key once: only the latest of the upserts before the job.
    txns = {t.txn_id for t in HeavyJobs(session.catalog).converted(job_id).values()}
    converted = []
    for f in session.catalog.snapshot("p").files:
        if f.txn_id in txns:
            data = pq.read_table(absolute(session.warehouse, f.path))
            converted += zip(data.column("id").to_pylist(), data.column("v").to_pylist())
    assert sorted(converted) == [(1, 21), (2, 12), (3, 3), (4, 4)]
