"""Loads through Spark (issue 11): `alterflow load --engine spark` and INSERT ... SELECT convert,
bucket and write in Spark tasks with the local load's own code, as one transaction; the table they
give equals a local load's, and a bad value leaves nothing visible with the local load's error."""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from sqlalchemy import select

import alterflow.load.inputs as loading
import alterflow.load.spark_load as spark_load
from alterflow.catalog.models import TransactionRow
from alterflow.engine.session import Session, StatementError
from alterflow.load.inputs import open_input
from alterflow.store.layout import LinkInWarehouse
from alterflow.store.warehouse import MARKER
from tests.support.gc import delete_dropped_files

KEYED = (
    "CREATE TABLE {name} (id BIGINT NOT NULL, region VARCHAR(4) NOT NULL, amount DECIMAL(9,2), day DATE, note STRING,"
    " PRIMARY KEY (id, region)) PARTITION BY (region) DISTRIBUTED BY HASH(id) BUCKETS 3 ORDER BY (amount)"
)
ROWS = 30_000


def input_csv(path: pathlib.Path, start: int, n: int, tag: str) -> pathlib.Path:
    ids = np.arange(start, start + n) % (ROWS // 2)  # keys repeat inside the file and across files
    amount = [None if i % 11 == 0 else f"{i % 1000}.{i % 100:02d}" for i in range(start, start + n)]
    note = [("NULL" if i % 13 == 0 else "\\N" if i % 17 == 0 else f"{tag} ü{i}") for i in range(start, start + n)]
    day = [f"24{(i % 12) + 1:02d}{(i % 28) + 1:02d}" for i in range(start, start + n)]  # %y%m%d
    table = pa.table(
        {
            "ID": ids.astype(str),
            "region": np.where(ids % 2 == 0, "eu", "us"),
            "amount": pa.array(amount, pa.string()),
            "day": day,
            "note": note,
        }
    )
    pacsv.write_csv(table, path)
    return path


@pytest.fixture
def spark_load_session(settings, spark, monkeypatch):
    monkeypatch.setattr(loading, "BLOCK_BYTES", 256 << 10)
    monkeypatch.setattr(loading, "WHOLE_CSV_BYTES", 0)  # stream even these small files
    monkeypatch.setattr(spark_load, "SPLIT_MAX_BYTES", 200 << 10)  # several Spark tasks per file,
    monkeypatch.setattr(spark_load, "SPLIT_MIN_BYTES", 1)  # cutting lines anywhere
    s = Session(dataclasses.replace(settings, target_file_mb=1))
    for name in ("by_spark", "by_arrow"):
        list(s.run(KEYED.format(name=name)))
    return s


def table_rows(session: Session, name: str) -> list[tuple]:
    return sorted(list(session.run(f"SELECT id, region, amount, day, note FROM {name}"))[0].rows)


def transactions(session: Session) -> list[tuple]:
    with session.catalog.db_session() as s:
        return [tuple(r) for r in s.execute(select(TransactionRow.id, TransactionRow.state).order_by(TransactionRow.id))]


def test_a_spark_load_and_a_local_load_give_the_same_table(spark_load_session, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    input_csv(folder / "a.csv", 0, ROWS, "a")
    input_csv(folder / "b.csv", ROWS // 3, ROWS, "b")  # overlaps a.csv's keys: b's rows win
    for engine, name in (("spark", "by_spark"), ("local", "by_arrow")):
        done = spark_load_session.load_input(name, open_input(folder), label=engine, engine=engine)
        assert "rows loaded into" in done.message
    spark_rows, arrow_rows = table_rows(spark_load_session, "by_spark"), table_rows(spark_load_session, "by_arrow")
    assert spark_rows == arrow_rows
    assert len(spark_rows) == ROWS // 2
    assert all(r[4] is None or r[4].startswith("b ") for r in spark_rows)  # the last file's rows won
    assert any(r[4] is None for r in spark_rows) and any(r[2] is None for r in spark_rows)
    files = spark_load_session.catalog.snapshot("by_spark").files
    assert len({f.txn_id for f in files}) == 1 and all("_load" not in f.path for f in files)
    assert not list(spark_load_session.warehouse.rglob("_load/*"))  # staging cleaned up
    # every written file carries field ids and the hidden transaction column
    schema = pq.read_schema(spark_load_session.warehouse / files[0].path)
    assert schema.field("id").metadata[b"PARQUET:field_id"] == b"1" and "af$txn" in schema.names


def test_a_bad_value_through_spark_leaves_nothing_and_names_the_row(spark_load_session, tmp_path):
    path = input_csv(tmp_path / "bad.csv", 0, ROWS, "x")
    table = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types={"amount": pa.string()}))
    amounts = table.column("amount").to_pylist()
    amounts[ROWS - 7] = "12.345"  # a third decimal: does not fit DECIMAL(9,2)
    pacsv.write_csv(table.set_column(2, "amount", pa.array(amounts, pa.string())), path)
    errors = {}
    for engine, name in (("spark", "by_spark"), ("local", "by_arrow")):
        with pytest.raises(StatementError) as caught:
            spark_load_session.load_input(name, open_input(path), label=engine, engine=engine)
        errors[engine] = str(caught.value).replace("by_spark", "T").replace("by_arrow", "T")
    assert errors["spark"] == errors["local"]
    assert errors["spark"] == f"INSERT INTO T: column amount: value '12.345' does not fit DECIMAL(9,2) (row {ROWS - 6})"
    assert spark_load_session.catalog.snapshot("by_spark").files == ()
    assert [state for _id, state in transactions(spark_load_session)] == ["ABORTED", "ABORTED"]
    delete_dropped_files(spark_load_session)  # deferred: GC takes the aborted loads' files after the retention
    assert [p for p in spark_load_session.warehouse.rglob("*") if p.is_file() and p.name != MARKER] == []


def test_insert_select_writes_through_spark_without_collecting(spark_load_session, tmp_path, monkeypatch):
    spark_load_session.load_input("by_arrow", open_input(input_csv(tmp_path / "a.csv", 0, ROWS, "a")), label="a", engine="local")
    from pyspark.sql import DataFrame

    def refuse(self, *args, **kwargs):
        raise AssertionError("INSERT ... SELECT collected its result to the driver")

    monkeypatch.setattr(DataFrame, "toArrow", refuse)
    monkeypatch.setattr(DataFrame, "toPandas", refuse)
    done = list(spark_load_session.run("INSERT INTO by_spark SELECT * FROM by_arrow WHERE region = 'eu'"))[0]
    assert done.message.startswith(f"{ROWS // 4} rows loaded into by_spark")
    expected = [r for r in table_rows(spark_load_session, "by_arrow") if r[1] == "eu"]
    assert table_rows(spark_load_session, "by_spark") == expected


def test_insert_select_with_a_bad_value_names_it_and_changes_nothing(spark_load_session):
    list(spark_load_session.run("CREATE TABLE src (id BIGINT, region STRING, amount STRING)"))
    list(spark_load_session.run("INSERT INTO src VALUES (1, 'eu', '1.5'), (2, 'toolong', '2'), (3, 'us', '3')"))
    with pytest.raises(
        StatementError, match=r"^INSERT INTO by_spark: column region: value 'toolong' does not fit VARCHAR\(4\) \(row \d\)$"
    ):
        list(spark_load_session.run("INSERT INTO by_spark (id, region, amount) SELECT id, region, amount FROM src"))
    assert spark_load_session.catalog.snapshot("by_spark").files == ()
    with pytest.raises(StatementError, match=r"^INSERT INTO by_spark: 2 columns are named but the query returns 3$"):
        list(spark_load_session.run("INSERT INTO by_spark (id, region) SELECT id, region, amount FROM src"))


def test_insert_select_assigns_typed_values_to_text_columns_as_their_text(spark_load_session):
    """As in PostgreSQL and Spark: a number or a date into a STRING column is its text; a DOUBLE is
    refused, with the line that says what to do."""
    list(spark_load_session.run("CREATE TABLE src (id BIGINT, d DATE, price DECIMAL(6,2), x DOUBLE)"))
    list(spark_load_session.run("INSERT INTO src VALUES (7, '2024-01-02', 1.5, 0.5)"))
    list(spark_load_session.run("INSERT INTO by_spark (id, region, note) SELECT id, 'eu', concat_ws('|', d, price) FROM src"))
    list(spark_load_session.run("INSERT INTO by_spark (id, region, note) SELECT id + 1, 'eu', price FROM src"))
    list(spark_load_session.run("INSERT INTO by_spark (id, region, note) VALUES (9, 'eu', 42), (10, 'eu', TRUE)"))
    rows = list(spark_load_session.run("SELECT id, note FROM by_spark ORDER BY id"))[0].rows
    assert rows == ((7, "2024-01-02|1.50"), (8, "1.50"), (9, "42"), (10, "true"))
    with pytest.raises(StatementError, match=r"^INSERT INTO by_spark: column note: value 0\.5 is not a valid STRING \(row 1\)$"):
        list(spark_load_session.run("INSERT INTO by_spark (id, region, note) SELECT id, 'us', x FROM src"))


def test_a_linked_staging_folder_refuses_a_spark_load_in_one_line(spark_load_session, tmp_path):
    """A Spark task's write through a folder that is a symbolic link is refused as a local write
    is: the task reports it, the driver raises it as it is (no task traceback), nothing is written
    at the link's target and the load's transaction is aborted."""
    path = input_csv(tmp_path / "in.csv", 0, 1000, "x")
    table = spark_load_session.catalog.table("by_spark")
    index = spark_load_session.warehouse / f"t{table.id}" / f"i{table.current_index_id}"
    index.mkdir(parents=True, exist_ok=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (index / "_load").symlink_to(outside)
    with pytest.raises(LinkInWarehouse) as caught:
        spark_load_session.load_input("by_spark", open_input(path), label="linked", engine="spark")
    line = str(caught.value)
    assert "\n" not in line and "is a symbolic link or not a folder: alterflow writes through no link" in line, line
    assert [p for p in outside.rglob("*") if p.is_file()] == []
    assert spark_load_session.catalog.snapshot("by_spark").files == ()
    assert [state for _id, state in transactions(spark_load_session)] == ["ABORTED"]
