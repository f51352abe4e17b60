"""A scan in this process reads what Spark's SELECT reads: the same rows and values, on a
primary-key table whose history spans a heavyweight rewrite, a rename, a widening, an added column
with a default, upserts and rows dual-written during the rewrite."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pytest


@pytest.fixture
def sqlite_only(catalog_url):
    if not catalog_url.startswith("sqlite"):
        pytest.skip("Spark reads the same files whatever the catalog; one catalog is enough here")


def test_scan_equals_select(api, spark, sqlite_only):
    api.sql("CREATE TABLE t (k BIGINT NOT NULL, code STRING, amount DECIMAL(9,2), n INT, PRIMARY KEY (k)) DISTRIBUTED BY HASH(k) BUCKETS 3")
    t = api.table("t")
    keys = list(range(3000))
    t.append(pa.table({"k": keys, "code": [str(k % 97) for k in keys], "amount": [decimal.Decimal(k) / 4 for k in keys], "n": keys}))
    job = t.alter("MODIFY COLUMN code INT", postpone_swap=True)
    assert job.wait().state == "READY_TO_SWAP"
    t.append(pa.table({"k": keys[::7], "code": ["5"] * len(keys[::7]), "n": [-1] * len(keys[::7])}))  # dual written upserts
    api.sql("RESUME ALTER TABLE COLUMN FROM t")
    for change in ("RENAME COLUMN n TO m", "MODIFY COLUMN m BIGINT", "ADD COLUMN flag STRING DEFAULT 'y'"):
        t.alter(change).wait()
    t.append(pa.table({"k": [5, 10**6], "code": [None, 1], "m": [2**40, 0]}))

    ours = t.scan().to_arrow().sort_by("k")
    theirs = api.sql("SELECT * FROM t ORDER BY k")
    assert list(theirs.columns) == ours.column_names == ["k", "code", "amount", "m", "flag"]
    assert [tuple(r.values()) for r in ours.to_pylist()] == [tuple(r) for r in theirs.rows]
    picked = t.scan(columns=["k", "m"], where="code = 5 AND m < 0").to_arrow().sort_by("k")
    expected = api.sql("SELECT k, m FROM t WHERE code = 5 AND m < 0 ORDER BY k")
    assert [tuple(r.values()) for r in picked.to_pylist()] == [tuple(r) for r in expected.rows] and picked.num_rows > 100
