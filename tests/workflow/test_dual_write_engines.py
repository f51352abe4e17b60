"""Bulk loads during a heavyweight job, on both load engines (issue 11): streamed local loads and
Spark loads dual-write the same rows, keys repeated inside and across loads; after the swap every
key is there exactly once with the value of its last load, and the shadow matches the model."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import alterflow.load.inputs as loading
from alterflow.engine.session import Session
from alterflow.load.inputs import open_input
from tests.support.heavy_jobs import check, convert, job, sql, start, swap, wait

TABLE = "CREATE TABLE t (id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
ALTERS = {
    # A re-bucketing and a narrowing at once: the shadow's tablets differ from the origin's.
    "rebucket": ("ALTER TABLE t MODIFY COLUMN grp SMALLINT, DISTRIBUTED BY HASH(id) BUCKETS 3", {0, 1, 2}),
    # A narrowing alone: each shadow file is spliced from its origin file (store/column_splice.py).
    "narrowing": ("ALTER TABLE t MODIFY COLUMN grp SMALLINT", {0, 1, 2, 3}),
}


@pytest.fixture
def dual_write_session(settings, spark, monkeypatch):
    monkeypatch.setattr(loading, "BLOCK_BYTES", 128 << 10)
    monkeypatch.setattr(loading, "WHOLE_CSV_BYTES", 0)  # stream even these small files
    s = Session(dataclasses.replace(settings, target_file_mb=1, load_buffer_mb=2))
    sql(s, TABLE)
    return s


def csv_of(path, ids: np.ndarray, tag: int):
    pacsv.write_csv(pa.table({"id": ids.astype(str), "grp": np.full(len(ids), tag).astype(str), "v": [f"{tag}:{i}" for i in ids]}), path)
    return open_input(path)


@pytest.mark.spark
@pytest.mark.parametrize("alter", sorted(ALTERS))
def test_loads_on_both_engines_stay_exact_across_the_swap(dual_write_session, spark, tmp_path, alter):
    statement, buckets = ALTERS[alter]
    model: dict[int, int] = {}

    def load(ids: np.ndarray, tag: int, engine: str) -> None:
        dual_write_session.load_input("t", csv_of(tmp_path / f"{tag}.csv", ids, tag), label=f"load {tag}", engine=engine)
        model.update((int(i), tag) for i in ids)

    load(np.arange(20_000), 1, "local")  # history
    job_id = start(dual_write_session, statement)
    wait(dual_write_session, job_id)
    # dual-written, each key twice in the same load (the later copy wins), both engines
    load(np.concatenate([np.arange(15_000, 40_000), np.arange(30_000, 35_000)]), 2, "local")
    load(np.concatenate([np.arange(38_000, 60_000), np.arange(10_000, 12_000)]), 3, "spark")
    convert(dual_write_session, spark, job_id)
    load(np.arange(5_000, 7_000), 4, "spark")
    check(dual_write_session, spark, job_id)
    load(np.arange(59_000, 61_000), 5, "local")
    assert swap(dual_write_session, job_id).state == "FINISHED"
    assert job(dual_write_session, job_id).state == "FINISHED"

    rows = sql(dual_write_session, "SELECT id, grp, v FROM t")
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)), "a key is there twice"
    assert {r[0]: r[1] for r in rows} == model
    assert all(v == f"{grp}:{i}" for i, grp, v in rows)
    # the new distribution holds: every file of the swapped-in index lies in a tablet of the new buckets
    info = dual_write_session.catalog.table("t")
    assert {b for _p, b in dual_write_session.catalog.tablets(info.current_index_id).values()} <= buckets
