"""A file load that a schema change overtook between reading the table's schema and beginning its
transaction (a heavyweight ALTER swapped, or started, meanwhile): its commit is refused, as it
must be (its rows went to the old index only), and the load of files runs again by itself on the
table as it now is; every row once (docs/semantics.md#loads-during-a-schema-change)."""

from __future__ import annotations

import pytest

from alterflow.engine.session import Session
from alterflow.load.inputs import LoadInput, open_input
from tests.support.catalog_rows import transactions
from tests.support.statements import sql


@pytest.mark.parametrize(
    ("statement", "tries"),
    [
        ("ALTER TABLE t MODIFY COLUMN v SMALLINT", 2),  # swapped: the first try is refused, the second writes the new index
        ('ALTER TABLE t MODIFY COLUMN v SMALLINT PROPERTIES ("postpone_swap" = "true")', 1),  # started: the load dual-writes
    ],
)
def test_a_file_load_a_schema_change_overtook_before_it_began_runs_again_on_the_table_as_it_is(
    catalog_session, tmp_path, monkeypatch, statement, tries
):
    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, 1), (2, 2)")
    other = Session(s.settings)
    original = LoadInput.batches
    altered, reads = [], []

    def batches(self):
        reads.append(1)

        def overtaken():
            if not altered:  # read after the load read the table's schema, before its transaction begins
                altered.append(sql(other, statement))
            yield from original(self)

        return overtaken()

    monkeypatch.setattr(LoadInput, "batches", batches)
    path = tmp_path / "rows.csv"
    path.write_text("id,v\n" + "".join(f"{i},{i % 100}\n" for i in range(100, 200)))
    result = s.load_input_result("t", open_input(path), "the overtaken load")
    assert (result.rows, len(altered), len(reads)) == (100, 1, tries)
    mine = [(txn_id, state) for txn_id, state, label in transactions(s, "t") if label == "the overtaken load"]
    assert [state for _, state in mine] == ["ABORTED"] * (tries - 1) + ["COMMITTED"], mine  # the refused try committed nothing
    assert mine[-1][0] == result.txn_id
    assert sql(s, "SELECT count(*), count(DISTINCT id), sum(id) FROM t") == ((102, 102, 3 + sum(range(100, 200))),)
    if tries == 1:  # the postponed job swaps: the rows the load dual-wrote are in the index it swaps to
        sql(s, "RESUME ALTER TABLE COLUMN FROM t")
        assert sql(s, "SELECT count(*), count(DISTINCT id), sum(id) FROM t") == ((102, 102, 3 + sum(range(100, 200))),)
    assert sql(s, "DESCRIBE t")[1][:2] == ("v", "SMALLINT")


class _AlteredOnFirstRead(list):
    """Batches in memory whose first read runs `statement` in another session: after the load read
    the table's schema, before its transaction began."""

    def __init__(self, batches, other: Session, statement: str):
        super().__init__(batches)
        self.other, self.statement, self.reads = other, statement, 0

    def __iter__(self):
        self.reads += 1
        if self.reads == 1:
            sql(self.other, self.statement)
        return super().__iter__()


def test_data_in_memory_a_schema_change_overtook_is_written_again_and_a_stream_is_refused(catalog_session):
    import pyarrow as pa

    s = catalog_session
    sql(s, "CREATE TABLE t (id INT NOT NULL, v INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(s, "INSERT INTO t VALUES (1, 1), (2, 2)")
    rows = pa.table({"id": pa.array(range(100, 200), pa.int32()), "v": pa.array([i % 100 for i in range(100, 200)], pa.int32())})
    batches = _AlteredOnFirstRead([rows], Session(s.settings), "ALTER TABLE t MODIFY COLUMN v SMALLINT")
    result = s.load_result("t", batches, "in memory")
    assert (result.rows, batches.reads) == (100, 2)
    assert sql(s, "SELECT count(*), count(DISTINCT id), sum(id) FROM t") == ((102, 102, 3 + sum(range(100, 200))),)

    # A one-pass stream cannot be read again: the refusal reaches the caller, and nothing of it committed.
    from alterflow.catalog.catalog_errors import LoadOvertaken

    stream = _AlteredOnFirstRead(
        [rows.set_column(0, "id", pa.array(range(300, 400), pa.int32()))], Session(s.settings), "ALTER TABLE t MODIFY COLUMN v TINYINT"
    )

    def one_pass(batches):  # a generator: its batches are read once the load runs
        yield from batches

    with pytest.raises(LoadOvertaken, match="retry the load"):
        s.load_result("t", one_pass(stream), "a stream")
    assert sql(s, "SELECT count(*) FROM t") == ((102,),)
