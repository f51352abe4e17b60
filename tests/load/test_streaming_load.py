"""Streaming loads (issue 11): the input is read batch by batch, each tablet's rows roll into files
of a target size, memory stays bounded; the load stays one transaction, the last row of a primary
key wins across files, and a bad value late in the input leaves nothing behind."""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import alterflow.load.inputs as loading
import alterflow.store.column_splice as column_splice
from alterflow.arrow_schema import arrow_schema
from alterflow.engine.session import Session, StatementError
from alterflow.load.inputs import open_input
from alterflow.store.warehouse import MARKER
from tests.support.gc import delete_dropped_files
from tests.support.heavy_jobs import index_files, read_file

TABLE = "CREATE TABLE events (id BIGINT NOT NULL, grp INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
PLAIN = "CREATE TABLE plain (id BIGINT NOT NULL, grp INT, v STRING) DISTRIBUTED BY HASH(id) BUCKETS 3"
ROWS = 90_000


def write_csv(path: pathlib.Path, ids: np.ndarray, grp: np.ndarray | None = None, v: list | None = None) -> pathlib.Path:
    grp = ids % 7 if grp is None else grp
    v = [f"value {i} " + "x" * 50 for i in ids] if v is None else v
    pacsv.write_csv(pa.table({"id": pa.array(ids.astype(str)), "grp": pa.array(grp.astype(str)), "v": v}), path)
    return path


@pytest.fixture
def streaming_session(settings, monkeypatch):
    """Tiny batches and files, so a 60,000-row input streams through many of each."""
    monkeypatch.setattr(loading, "BLOCK_BYTES", 64 << 10)
    monkeypatch.setattr(loading, "WHOLE_CSV_BYTES", 0)  # stream even these small files
    s = Session(dataclasses.replace(settings, target_file_mb=1, load_buffer_mb=2))
    list(s.run(TABLE))
    list(s.run(PLAIN))
    return s


def files_of(session: Session, table: str):
    return session.catalog.snapshot(table).files


def test_a_big_input_streams_into_many_files_as_one_transaction(streaming_session, tmp_path, spark):
    ids = np.arange(ROWS, dtype=np.int64)
    csv = write_csv(tmp_path / "in.csv", ids)
    source = open_input(csv)
    assert len(list(source.batches())) > 5  # really streamed
    done = streaming_session.load_input("plain", source, label="big")
    assert done.message.startswith(f"{ROWS} rows loaded into plain")
    files = files_of(streaming_session, "plain")
    assert len({f.txn_id for f in files}) == 1
    per_tablet = {}
    for f in files:
        per_tablet.setdefault(f.tablet_id, []).append(f)
    assert len(per_tablet) == 3 and all(len(fs) > 1 for fs in per_tablet.values())  # files rolled
    assert sum(f.row_count for f in files) == ROWS
    rows = list(streaming_session.run("SELECT id, grp, v FROM plain"))[0].rows
    assert sorted(rows) == [(int(i), int(i % 7), f"value {i} " + "x" * 50) for i in ids]


def test_the_last_row_of_a_key_wins_across_files(streaming_session, tmp_path, spark):
    # every key three times, far apart in the input: each copy lands in a different file
    ids = np.concatenate([np.arange(ROWS // 3)] * 3).astype(np.int64)
    grp = np.repeat(np.arange(3), ROWS // 3)
    csv = write_csv(tmp_path / "dups.csv", ids, grp=grp, v=[f"copy {g} " + "x" * 50 for g in grp])
    streaming_session.load_input("events", open_input(csv), label="dups")
    files = files_of(streaming_session, "events")
    assert len(files) > 4
    rows = list(streaming_session.run("SELECT id, grp, v FROM events"))[0].rows
    assert sorted(rows) == [(i, 2, "copy 2 " + "x" * 50) for i in range(ROWS // 3)]

    # a later load still wins over every file of the earlier one
    write_csv(tmp_path / "later.csv", np.arange(10, dtype=np.int64), grp=np.full(10, 9), v=["later"] * 10)
    streaming_session.load_input("events", open_input(tmp_path / "later.csv"), label="later")
    rows = dict((r[0], r[1:]) for r in list(streaming_session.run("SELECT id, grp, v FROM events"))[0].rows)
    assert len(rows) == ROWS // 3
    assert all(rows[i] == (9, "later") for i in range(10)) and rows[10] == (2, "copy 2 " + "x" * 50)


def test_a_bad_value_late_in_the_input_leaves_nothing(streaming_session, tmp_path):
    ids = np.arange(ROWS, dtype=np.int64)
    grp = (ids % 7).astype(str).astype(object)
    grp[ROWS - 5] = "12x"
    pacsv.write_csv(pa.table({"id": ids.astype(str), "grp": pa.array(grp.tolist()), "v": ["x"] * ROWS}), tmp_path / "bad.csv")
    source = open_input(tmp_path / "bad.csv")
    with pytest.raises(StatementError) as caught:
        streaming_session.load_input("events", source, label="bad")
    assert str(caught.value) == f"INSERT INTO events: column grp: value '12x' is not a valid INT (row {ROWS - 4})"
    assert files_of(streaming_session, "events") == ()
    delete_dropped_files(streaming_session)  # deferred: GC takes the aborted load's files after the retention
    on_disk = [p for p in streaming_session.warehouse.rglob("*") if p.is_file() and p.name != MARKER]
    assert on_disk == []  # the files written before the bad batch are gone too
    with streaming_session.catalog.db_session() as s:
        from sqlalchemy import select

        from alterflow.catalog.models import TransactionRow

        states = [tuple(r) for r in s.execute(select(TransactionRow.state, TransactionRow.reason))]
    assert len(states) == 1 and states[0][0] == "ABORTED" and f"row {ROWS - 4}" in states[0][1]


def test_a_bad_value_in_the_first_batch_begins_no_transaction(streaming_session, tmp_path):
    csv = tmp_path / "bad.csv"
    csv.write_text("id,grp,v\n1,2,a\n2,x,b\n")
    with pytest.raises(StatementError, match=r"column grp: value 'x' is not a valid INT \(row 2\)"):
        streaming_session.load_input("events", open_input(csv), label="bad")
    with streaming_session.catalog.db_session() as s:
        from sqlalchemy import func, select

        from alterflow.catalog.models import TransactionRow

        assert s.scalar(select(func.count()).select_from(TransactionRow)) == 0


def test_a_directory_loads_file_after_file_and_later_files_win(streaming_session, tmp_path, spark):
    folder = tmp_path / "dir"
    folder.mkdir()
    write_csv(folder / "a.csv", np.arange(100, dtype=np.int64), v=["a"] * 100)
    write_csv(folder / "b.csv", np.arange(50, 150, dtype=np.int64), v=["b"] * 100)
    (folder / "_SUCCESS").write_text("")
    done = streaming_session.load_input("events", open_input(folder), label="dir")
    assert "rows loaded into events" in done.message
    rows = dict((r[0], r[1]) for r in list(streaming_session.run("SELECT id, v FROM events"))[0].rows)
    assert len(rows) == 150
    assert {rows[i] for i in range(50)} == {"a"} and {rows[i] for i in range(50, 150)} == {"b"}


def test_an_unknown_engine_is_one_line(streaming_session, tmp_path):
    csv = write_csv(tmp_path / "x.csv", np.arange(3, dtype=np.int64))
    with pytest.raises(StatementError, match=r"^load: unknown engine 'fast'; use one of auto, local, spark$"):
        streaming_session.load_input("events", open_input(csv), label="x", engine="fast")


def test_a_streamed_dual_write_is_exact_and_names_the_first_bad_row(streaming_session, tmp_path, spark, monkeypatch):
    """The dual write runs one batch behind on its own thread: over many batches the shadow gets
    every row, and when its batch and the next one both fail, the earlier row is the one named."""
    spliced = []

    def splice_and_count(*args):
        pieces = real_splice(*args)
        spliced.append(pieces is not None)
        return pieces

    real_splice = column_splice.splice
    monkeypatch.setattr(column_splice, "splice", splice_and_count)
    list(streaming_session.run("INSERT INTO events VALUES (-1, 1, 'before')"))
    list(streaming_session.run('ALTER TABLE events MODIFY COLUMN grp SMALLINT PROPERTIES ("postpone_swap" = "true")'))
    ids = np.arange(ROWS, dtype=np.int64)
    repeated = np.concatenate([ids, ids[:1000]])  # the last 1,000 rows repeat keys: within a load the later row wins
    streaming_session.load_input("events", open_input(write_csv(tmp_path / "ok.csv", repeated)), label="ok")
    assert len(list(open_input(tmp_path / "ok.csv").batches())) > 5
    # Same tablets, key and sort order: each origin file flushed yields the shadow's file of the
    # same rows (deduplicated alike), instead of a second buffering of every batch.
    job = streaming_session.catalog.active_job(streaming_session.catalog.table("events").id)
    load_txn = max(f.txn_id for f in index_files(streaming_session, job, job.origin_index_id))
    origin = [f.row_count for f in index_files(streaming_session, job, job.origin_index_id) if f.txn_id == load_txn]
    shadow = [f.row_count for f in index_files(streaming_session, job, job.shadow_index_id) if f.txn_id == load_txn]
    assert len(origin) > 4 and sorted(origin) == sorted(shadow) and sum(shadow) == ROWS + 1000  # stored; reads merge by key
    # Each shadow file is its origin file's rows converted, made from the origin's encoded chunks
    # of the unchanged columns (alterflow.store.column_splice).
    assert len(spliced) == len(origin) and all(spliced)
    origin_files = {
        read_file(streaming_session, f.path)["id"][0].as_py(): read_file(streaming_session, f.path)
        for f in index_files(streaming_session, job, job.origin_index_id)
        if f.txn_id == load_txn
    }
    version = streaming_session.catalog.schema_version(job.table_id, job.to_version)
    for f in index_files(streaming_session, job, job.shadow_index_id):
        if f.txn_id == load_txn:
            shadow_rows = read_file(streaming_session, f.path)
            origin_rows = origin_files[shadow_rows["id"][0].as_py()]
            assert shadow_rows.schema.remove(3).equals(arrow_schema(version), check_metadata=True)
            assert shadow_rows.drop_columns(["grp"]).equals(origin_rows.drop_columns(["grp"]))
            assert shadow_rows["grp"].equals(origin_rows["grp"].cast(pa.int16()))

    grp = (ids % 7).astype(str).astype(object)
    grp[ROWS // 2] = "40000"  # an INT, but no SMALLINT: only the dual write refuses it
    bad = tmp_path / "bad.csv"
    pacsv.write_csv(pa.table({"id": (ids + ROWS).astype(str), "grp": pa.array(grp.tolist()), "v": ["x"] * ROWS}), bad)
    ends = np.cumsum([b.num_rows for b in open_input(bad).batches()])
    next_batch = int(ends[np.searchsorted(ends, ROWS // 2, side="right")])  # first row of the batch after
    grp[next_batch] = "x"  # no INT at all, in the very next batch (same length: the batches stay)
    pacsv.write_csv(pa.table({"id": (ids + ROWS).astype(str), "grp": pa.array(grp.tolist()), "v": ["x"] * ROWS}), bad)
    assert np.cumsum([b.num_rows for b in open_input(bad).batches()]).tolist() == ends.tolist()
    roomy = Session(dataclasses.replace(streaming_session.settings, load_buffer_mb=256))  # no flush joins the lane early
    with pytest.raises(StatementError) as caught:
        roomy.load_input("events", open_input(bad), label="bad")
    assert str(caught.value).startswith(
        f"INSERT INTO events: column grp: value 40000 (row {ROWS // 2 + 1}) cannot be converted to SMALLINT for schema change job"
    ), str(caught.value)

    list(streaming_session.run("RESUME ALTER TABLE COLUMN FROM events"))
    rows = list(streaming_session.run("SELECT id, grp, v FROM events"))[0].rows
    assert sorted(rows) == [(-1, 1, "before")] + [(int(i), int(i % 7), f"value {i} " + "x" * 50) for i in ids]
    described = {r[0]: r[1] for r in list(streaming_session.run("DESCRIBE events"))[0].rows}
    assert described["grp"] == "SMALLINT"
