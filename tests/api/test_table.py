"""`Table`: schema versions and jobs, scans (evolved reads, conditions, streaming, primary-key
merges), appends of every kind of data, and bad input that writes nothing. Both catalogs."""

from __future__ import annotations

import types

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import alterflow
from alterflow.catalog.models import TransactionRow
from alterflow.errors import MAX_LINE


def committed_txns(api) -> int:
    with api.catalog.db_session() as s:
        return s.query(TransactionRow).filter(TransactionRow.state == "COMMITTED").count()


@pytest.fixture
def evolved(api):
    """A table through four versions: a rename, a widening, an added column with a default, a drop."""
    api.sql("CREATE TABLE t (id INT NOT NULL, v INT, s STRING, gone STRING)")
    t = api.table("t")
    t.append(pa.table({"id": [1, 2], "v": [10, 20], "s": ["a", "b"], "gone": ["x", "y"]}))
    for change in ("RENAME COLUMN v TO amount", "MODIFY COLUMN amount BIGINT", "ADD COLUMN flag INT DEFAULT '7'", "DROP COLUMN gone"):
        assert t.alter(change).wait().state == "FINISHED"
    t.append(pa.table({"id": [3], "amount": [30], "s": ["c"]}))
    return t


def test_schema_versions_and_jobs(evolved):
    t = evolved
    assert [c.name for c in t.schema().columns] == ["id", "amount", "s", "flag"]
    assert [c.name for c in t.schema(version=1).columns] == ["id", "v", "s", "gone"]
    assert [v.version for v in t.versions()] == [1, 2, 3, 4, 5]
    assert t.schema().version == 5
    assert [(j.kind, j.state, j.to_version) for j in t.jobs()] == [("LIGHT", "FINISHED", v) for v in (2, 3, 4, 5)]


def test_a_scan_reads_every_version_by_field_id(evolved):
    t = evolved
    rows = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows == [
        {"id": 1, "amount": 10, "s": "a", "flag": 7},
        {"id": 2, "amount": 20, "s": "b", "flag": 7},
        {"id": 3, "amount": 30, "s": "c", "flag": 7},
    ]
    assert t.scan().schema.field("amount").type == pa.int64()
    old = sorted(t.scan(version=1).to_arrow().to_pylist(), key=lambda r: r["id"])
    assert old[0] == {"id": 1, "v": 10, "s": "a", "gone": "x"}
    assert old[2]["gone"] is None  # written after the drop
    picked = t.scan(columns=["FLAG", "id"], where="amount > 15 AND s <> 'c'").to_arrow()
    assert picked.column_names == ["flag", "id"] and picked.to_pylist() == [{"flag": 7, "id": 2}]
    frame = t.scan(where=pc.field("amount") >= 20).to_pandas()
    assert isinstance(frame, pd.DataFrame) and sorted(frame["id"]) == [2, 3]
    t.append(pa.table({"id": [4], "amount": [2**40]}))  # no INT: version 1 cannot read it
    with pytest.raises(alterflow.UserError, match=r"column v does not read as INT \(written as BIGINT\)$"):
        t.scan(version=1).to_arrow()


def test_to_batches_streams_one_file_at_a_time(api):
    api.sql("CREATE TABLE log (id BIGINT, msg STRING)")
    t = api.table("log")
    for start in range(0, 5000, 1000):
        t.append(pa.table({"id": range(start, start + 1000), "msg": ["m"] * 1000}))
    batches = t.scan(columns=["id"]).to_batches()
    assert isinstance(batches, types.GeneratorType)  # nothing read yet
    first = next(batches)
    assert 0 < first.num_rows <= 1000
    rest = list(batches)
    assert sorted(v for b in [first, *rest] for v in b.column(0).to_pylist()) == list(range(5000))
    assert t.scan(where="id < 0").to_arrow().num_rows == 0
    assert t.scan(where="id < 0").to_arrow().schema.names == ["id", "msg"]


def test_a_primary_key_scan_keeps_the_latest_row_per_key(api):
    api.sql("CREATE TABLE kv (k BIGINT NOT NULL, v STRING, PRIMARY KEY (k)) DISTRIBUTED BY HASH(k) BUCKETS 4")
    t = api.table("kv")
    model: dict[int, str] = {}
    for round_ in range(4):
        keys = list(range(round_ * 50, round_ * 50 + 300))
        t.append(pa.table({"k": keys, "v": [f"{round_}-{k}" for k in keys]}))
        model.update({k: f"{round_}-{k}" for k in keys})
    got = t.scan().to_arrow()
    assert got.num_rows == len(model)
    assert dict(zip(got.column("k").to_pylist(), got.column("v").to_pylist())) == model
    assert sorted(t.scan(columns=["v"], where="k BETWEEN 10 AND 12").to_arrow().column("v").to_pylist()) == ["0-10", "0-11", "0-12"]


@pytest.mark.parametrize(
    "make",
    [
        lambda d: d,
        lambda d: d.to_batches()[0],
        lambda d: pa.RecordBatchReader.from_batches(d.schema, d.to_batches(max_chunksize=2)),
        lambda d: d.to_batches(max_chunksize=1),
        lambda d: (b for b in d.to_batches(max_chunksize=2)),
        lambda d: d.to_pandas(),
    ],
    ids=["table", "batch", "reader", "list", "generator", "pandas"],
)
def test_append_takes_every_kind_of_data_in_one_transaction(api, make):
    api.sql("CREATE TABLE t (id INT NOT NULL, amount DECIMAL(10,2), day DATE, note STRING DEFAULT 'none')")
    data = pa.table({"ID": [1, 2, 3], "amount": ["1.5", "2", None], "day": ["2024-01-01", "2024-02-29", "2024-03-01"]})
    before = committed_txns(api)
    result = api.table("t").append(make(data), label="nightly")
    assert (result.table, result.rows) == ("t", 3)
    assert committed_txns(api) == before + 1
    rows = sorted(api.table("t").scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [str(r["amount"]) if r["amount"] is not None else None for r in rows] == ["1.50", "2.00", None]
    assert [r["note"] for r in rows] == ["none"] * 3
    with api.catalog.db_session() as s:
        assert s.get(TransactionRow, result.txn_id).label == "nightly"


@pytest.mark.parametrize(
    "data, message",
    [
        (pa.table({"id": [1], "extra": [2]}), "INSERT INTO t: unknown column extra"),
        (pa.table({"id": ["x"]}), "INSERT INTO t: column id: value 'x' is not a valid INT (row 1)"),
        (pa.table({"v": ["a"]}), "column id"),
        (pd.DataFrame({"id": [1, 2**40]}), "(row 2)"),
        (
            5,
            "append into t: data is a pyarrow Table, RecordBatch or RecordBatchReader, an iterable of them, or a pandas DataFrame, not int",
        ),
        ("id\n1", "not str"),
        ([pa.table({"id": [1]}), {"id": 2}], "append into t: item 2 of the data is a dict, not a pyarrow Table or RecordBatch"),
        (pd.DataFrame({"id": [1, "x"]}), "append into t: the DataFrame does not convert to Arrow"),
    ],
)
def test_bad_data_is_one_line_and_writes_nothing(api, data, message):
    api.sql("CREATE TABLE t (id INT NOT NULL, v STRING)")
    t = api.table("t")
    t.append(pa.table({"id": [0], "v": ["keep"]}))
    before = committed_txns(api)
    with pytest.raises(alterflow.UserError) as caught:
        t.append(data)
    text = str(caught.value)
    assert message in text and "\n" not in text, text
    assert committed_txns(api) == before
    assert t.scan().to_arrow().to_pylist() == [{"id": 0, "v": "keep"}]


def test_bad_scans_and_labels_are_one_line(api):
    api.sql("CREATE TABLE t (id INT NOT NULL)")
    t = api.table("t")
    for call, message in [
        (lambda: t.scan(columns=["nope"]), "scan of t: unknown column 'nope' in version 1"),
        (lambda: t.scan(columns="id"), "scan of t: columns is a list of column names"),
        (lambda: t.scan(version=2), "t has no schema version 2; its versions are 1 to 1"),
        (lambda: t.scan(version="1"), "t: a schema version is a whole number, not '1'"),
        (lambda: t.scan(where=5), "scan of t: where is a SQL condition or a pyarrow.compute.Expression, not int"),
        (lambda: t.scan(where="nope = 1"), "scan of t: where: unknown column 'nope'"),
        (
            lambda: t.append(pa.table({"id": [1]}), label=" "),
            "append into t: label ' ' is not 1 to 256 printable characters (no control characters)",
        ),
    ]:
        with pytest.raises(alterflow.UserError) as caught:
            call()
        assert str(caught.value) == message
    assert t.scan().to_arrow().num_rows == 0


def all_txns(api) -> int:
    from sqlalchemy import func, select

    with api.catalog.db_session() as s:
        return s.scalar(select(func.count()).select_from(TransactionRow))


@pytest.mark.parametrize(
    ("label", "shown_as"),
    [
        ("l" * 100_000, "'" + "l" * 60 + "…' (100000 characters)"),
        ("l" * 257, "'" + "l" * 60 + "…' (257 characters)"),
        ("a\x00b", "'a\\x00b'"),
        ("a\x1b]0;x\x07b", "'a\\x1b]0;x\\x07b'"),
        ("two\nlines", "'two\\nlines'"),
    ],
    ids=["100k", "257", "nul", "osc", "newline"],
)
def test_a_label_the_catalog_cannot_keep_is_one_line_and_writes_nothing(api, label, shown_as):
    """PostgreSQL refused a NUL (DataError) and SQLite kept 100,000 characters in a 256 column:
    both now refuse before a transaction begins."""
    api.sql("CREATE TABLE t (id INT NOT NULL)")
    t = api.table("t")
    with pytest.raises(alterflow.UserError) as caught:
        t.append(pa.table({"id": [1]}), label=label)
    assert str(caught.value) == f"append into t: label {shown_as} is not 1 to 256 printable characters (no control characters)"
    assert all_txns(api) == 0 and t.scan().to_arrow().num_rows == 0
    assert t.append(pa.table({"id": [1]}), label="l" * 256).rows == 1  # the longest label is kept


@pytest.mark.parametrize("name", ["a" * 2_000_000, "a\x00", "t\x1b[2J"], ids=["2MB", "nul", "escape"])
def test_a_table_name_that_cannot_be_a_name_is_one_short_line(api, name):
    api.sql("CREATE TABLE t (id INT)")
    with pytest.raises(alterflow.UserError) as caught:
        api.table(name)
    message = str(caught.value)
    assert message.startswith("table: invalid name '") and message.endswith(": names match [A-Za-z_][A-Za-z0-9_]* up to 128 characters")
    assert len(message) <= MAX_LINE and message.isprintable(), message[:400]


def test_a_scan_of_a_table_dropped_and_created_again_says_so(api):
    api.sql("CREATE TABLE t (id INT)")
    scan = api.table("t").scan()
    api.sql("DROP TABLE t; CREATE TABLE t (id INT)")
    with pytest.raises(alterflow.UserError, match="the table was dropped and created again since the scan was made"):
        scan.to_arrow()


def test_a_scan_that_outlives_the_retention_is_one_line_not_a_file_not_found(api, settings):
    """A stream handed out its first batch; meanwhile the table was dropped and `alterflow gc
    --retention 0` (another process, as an operator runs it) deleted its files. The rest of the
    stream is one line (it was a raw FileNotFoundError); the rows handed out stand."""
    import os
    import subprocess
    import sys

    api.sql("CREATE TABLE t (id INT, v STRING)")
    for i in (1, 2, 3):
        api.sql(f"INSERT INTO t VALUES ({i}, 'v{i}')")
    stream = api.table("t").scan().to_batches()
    first = next(stream)
    api.sql("DROP TABLE t")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(settings.home), ALTERFLOW_CATALOG_URL=settings.catalog_url, ALTERFLOW_WAREHOUSE=str(settings.warehouse))
    gc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "alterflow"), "gc", "--retention", "0"], env=env, capture_output=True, text=True
    )
    assert gc.returncode == 0 and "delete_files: 3 files that left their tables deleted" in gc.stdout, gc.stdout + gc.stderr
    with pytest.raises(alterflow.UserError) as caught:
        list(stream)
    assert str(caught.value) == (
        "scan of t: a data file it read is gone (GC deleted it: the scan ran longer than the retention period, "
        "ALTERFLOW_GC_RETENTION) after rows were handed out; run the scan again"
    )
    assert first.num_rows == 1
