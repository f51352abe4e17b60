"""`alterflow.spark` in this process's SparkSession (issue 25): read_table gives what `alterflow sql`
SELECT gives over an evolved schema (a rename, widenings, added columns with defaults), at the
current and at an older version, also from a session configured as a user's (another time zone,
ANSI on, field-id reads off); write_table converts by the load's rules; and each bad input is one
`UserError` line that writes nothing. The spark-submit jobs (a write during a heavy ALTER, a kill)
are in test_spark_door_submit.py."""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import re
import sys

import pytest
from pyspark.sql import functions as F

import alterflow
from alterflow.catalog.models import TransactionRow
from alterflow.errors import UserError
from alterflow.load.spark_load import ARROW_CONF
from alterflow.spark import FIELD_ID_READ, SparkConfError, ensure_conf, read_table, write_table
from tests.support import REPO

pytestmark = pytest.mark.spark

TIME_ZONE, ANSI = "spark.sql.session.timeZone", "spark.sql.ansi.enabled"


@pytest.fixture
def af(tmp_path, spark):
    """A connection to a SQLite catalog under tmp_path (its SELECTs run on the test run's session)."""
    with alterflow.connect(env={"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_SPARK_MASTER": "local[2]"}) as connection:
        yield connection


@contextlib.contextmanager
def user_settings(spark, settings: dict[str, str]):
    """The session as a user's might be set up, then back as the test run's."""
    before = {key: spark.conf.get(key) for key in settings}
    try:
        for key, value in settings.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)


def select(af, text: str) -> list[tuple]:
    return sorted(tuple(row) for row in af.sql(text).rows)


def collected(frame) -> list[tuple]:
    return sorted(tuple(row) for row in frame.collect())


def evolved_table(af) -> None:
    """A table whose files are written under three versions, and a view pinned at the first."""
    af.sql("CREATE TABLE e (id INT NOT NULL, name VARCHAR(10), amount INT, day DATE, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3")
    af.sql("INSERT INTO e VALUES (1, 'one', 10, '2024-01-01'), (2, 'two', NULL, '2024-02-29'), (3, NULL, -7, NULL)")
    af.sql("INSERT INTO e VALUES (2, 'two again', 22, '2024-03-01')")  # an upsert: the later row wins
    af.sql("CREATE VIEW e_v1 AS SELECT id, name FROM e")  # keeps the old name after the rename
    af.sql("ALTER TABLE e RENAME COLUMN name TO label, MODIFY COLUMN amount BIGINT, MODIFY COLUMN day DATETIME")
    af.sql("INSERT INTO e VALUES (4, 'four', 40000, '2024-04-04 04:04:04'), (1, 'one again', 11, '2024-01-01 23:59:59')")
    af.sql("ALTER TABLE e ADD COLUMN note STRING DEFAULT 'n/a', ADD COLUMN at DATETIME DEFAULT '2024-06-30 22:30:00'")
    af.sql("ALTER TABLE e ADD COLUMN price DECIMAL(9,2) DEFAULT '12.50' AFTER id")
    af.sql("INSERT INTO e (id, label, note) VALUES (5, 'five', 'given')")


def test_read_table_gives_what_a_select_gives_over_an_evolved_schema(af, spark):
    evolved_table(af)
    current = read_table(spark, "e", connection=af)
    assert current.columns == ["id", "price", "label", "amount", "day", "note", "at"]
    assert dict(current.dtypes) == {
        "id": "int",
        "price": "decimal(9,2)",
        "label": "string",
        "amount": "bigint",
        "day": "timestamp_ntz",
        "note": "string",
        "at": "timestamp_ntz",
    }
    expected = select(af, "SELECT * FROM e")
    assert collected(current) == expected
    assert expected[0] == (
        1,
        decimal.Decimal("12.50"),
        "one again",
        11,
        dt.datetime(2024, 1, 1, 23, 59, 59),
        "n/a",
        dt.datetime(2024, 6, 30, 22, 30),
    )
    assert len(expected) == 5

    # Version 1 over today's rows: the old names and types, the later columns absent.
    first = read_table(spark, "e", version=1, connection=af)
    assert dict(first.dtypes) == {"id": "int", "name": "string", "amount": "int", "day": "date"}
    version_1 = [
        (1, "one again", 11, dt.date(2024, 1, 1)),
        (2, "two again", 22, dt.date(2024, 3, 1)),
        (3, None, -7, None),
        (4, "four", 40000, dt.date(2024, 4, 4)),
        (5, "five", None, None),
    ]
    assert collected(first) == version_1
    assert collected(first.select("id", "name")) == select(af, "SELECT * FROM e_v1")  # the view pinned at version 1

    # A session set up as a user's: another time zone, ANSI on, field-id reads off. read_table sets
    # the one setting it needs, leaves the others, and the rows are the same.
    with user_settings(spark, {TIME_ZONE: "Asia/Kathmandu", ANSI: "true", FIELD_ID_READ: "false"}):
        assert collected(read_table(spark, "e", connection=af)) == expected
        assert collected(read_table(spark, "e", version=1, connection=af)) == version_1
        assert spark.conf.get(FIELD_ID_READ) == "true"
        assert (spark.conf.get(TIME_ZONE), spark.conf.get(ANSI)) == ("Asia/Kathmandu", "true")

    # A value written since the widening that the older type cannot hold fails that read, by name.
    af.sql("INSERT INTO e (id, amount) VALUES (6, 4000000000)")
    with pytest.raises(Exception, match="column amount: a stored value does not fit INT"):
        read_table(spark, "e", version=1, connection=af).collect()


def test_write_table_matches_columns_by_name_and_converts_as_a_load(af, spark):
    af.sql(
        "CREATE TABLE w (id BIGINT NOT NULL, label VARCHAR(8), amount DECIMAL(9,2), at DATETIME, local DATETIME,"
        " n INT DEFAULT 7, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"
    )
    with user_settings(spark, {TIME_ZONE: "America/New_York"}):
        frame = spark.range(0, 1000, 1, 4).select(
            F.col("id").alias("ID"),  # names match case-insensitively
            F.concat(F.lit("r"), F.col("id").cast("string")).alias("label"),
            (F.col("id") / 4).alias("amount"),  # a double into DECIMAL(9,2), as a load converts it
            F.timestamp_seconds(F.col("id") * 3600).alias("at"),  # zoned: stored as its UTC time
            F.expr("CAST('2024-01-01 08:00:00' AS TIMESTAMP_NTZ)").alias("local"),  # stored as it is
            F.lit(None).alias("n"),  # a NULL column: NULL, not the default
        )
        arrow = {key: spark.conf.get(key) for key in ARROW_CONF}
        result = write_table(frame, "w", connection=af)
        later = write_table(spark.range(998, 1002).select("id"), "w", connection=af, label="the last four")
        assert {key: spark.conf.get(key) for key in ARROW_CONF} == arrow  # the load's batch settings were for its job only
    assert (result.table, result.rows, later.rows) == ("w", 1000, 4) and later.txn_id == result.txn_id + 1
    assert select(af, "SELECT count(*), count(DISTINCT id), sum(amount), min(label), max(label) FROM w") == [
        (1002, 1002, decimal.Decimal("124375.75"), "r0", "r997")
    ]
    assert select(af, "SELECT id, label, amount, at, local, n FROM w WHERE id IN (1, 999)") == [
        (1, "r1", decimal.Decimal("0.25"), dt.datetime(1970, 1, 1, 1), dt.datetime(2024, 1, 1, 8), None),
        (999, None, None, None, None, 7),  # the later write's row, with the column defaults
    ]
    with af.catalog.db_session() as s:
        labels = [r[0] for r in s.query(TransactionRow.label).order_by(TransactionRow.id)]
    assert labels[-2:] == ["write_table w", "the last four"]

    # A key twice in one write: the later row in the DataFrame's order (its later partition) wins.
    af.sql("CREATE TABLE k (id BIGINT NOT NULL, n BIGINT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    write_table(spark.range(0, 12, 1, 3).select((F.col("id") % 4).alias("id"), F.col("id").alias("n")), "k", connection=af)
    assert select(af, "SELECT id, n FROM k") == [(0, 8), (1, 9), (2, 10), (3, 11)]


def one_line(exc: UserError) -> str:
    message = str(exc)
    assert "\n" not in message and 0 < len(message) <= 300, message
    return message


def state(af, table: str):
    """What a refused write must leave as it was: the committed transactions and the rows."""
    with af.catalog.db_session() as s:
        committed = s.query(TransactionRow.id).filter(TransactionRow.state == "COMMITTED").count()
    return committed, select(af, f"SELECT count(*), sum(id) FROM {table}")


def test_bad_input_is_one_line_and_writes_nothing(af, spark, tmp_path):
    af.sql("CREATE TABLE b (id BIGINT NOT NULL, v INT, s VARCHAR(3), PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    af.sql("INSERT INTO b VALUES (1, 1, 'a')")
    af.sql("CREATE VIEW bv AS SELECT id FROM b")
    before = state(af, "b")
    ids = spark.range(0, 5000, 1, 3)
    values = F.when(F.col("id") == 3333, F.lit("zz")).otherwise(F.col("id").cast("string"))

    cases = {
        "unknown table (write)": (lambda: write_table(ids, "nope", connection=af), "unknown table nope"),
        "unknown table (read)": (lambda: read_table(spark, "nope", connection=af), "unknown table nope"),
        "a view (read)": (
            lambda: read_table(spark, "bv", connection=af),
            "read_table: bv is a view; read_table reads a table (query a view with connection.sql)",
        ),
        "an invalid name": (
            lambda: write_table(ids, "no-such", connection=af),
            "write_table: invalid name 'no-such': names match [A-Za-z_][A-Za-z0-9_]* up to 128 characters",
        ),
        "an extra column": (
            lambda: write_table(ids.select("id", F.lit(1).alias("extra")), "b", connection=af),
            "INSERT INTO b: unknown column extra",
        ),
        "a column twice": (
            lambda: write_table(ids.select("id", F.col("id").alias("ID")), "b", connection=af),
            "INSERT INTO b: column ID is named twice",
        ),
        "no key": (
            lambda: write_table(ids.select(F.col("id").alias("v")), "b", connection=af),
            "INSERT INTO b: column id is NOT NULL and has no default; give it a value",
        ),
        "a type no value of which converts": (
            lambda: write_table(ids.select("id", (F.col("id") > 5).alias("v")), "b", connection=af),
            "write_table b: column v is boolean in the DataFrame, and no boolean value converts to INT; cast it in Spark first",
        ),
        "a nested column": (
            lambda: write_table(ids.select("id", F.array("id").alias("v")), "b", connection=af),
            "write_table b: column v is array<bigint> in the DataFrame; a column takes numbers, strings, booleans, dates and timestamps",
        ),
        "an extra nested column": (
            lambda: write_table(ids.select("id", F.array("id").alias("tags")), "b", connection=af),
            "INSERT INTO b: unknown column tags",
        ),
        # Found by the tasks; named by its row in the DataFrame (collect()'s order), as a load names it.
        "a value that does not convert": (
            lambda: write_table(ids.select("id", values.alias("v")), "b", connection=af),
            "INSERT INTO b: column v: value 'zz' is not a valid INT (row 3334)",
        ),
        "a value too long": (
            lambda: write_table(ids.select("id", F.when(F.col("id") == 4999, F.lit("long")).alias("s")), "b", connection=af),
            "INSERT INTO b: column s: value 'long' does not fit VARCHAR(3) (row 5000)",
        ),
        "an unknown version": (
            lambda: read_table(spark, "b", version=9, connection=af),
            "read_table: table b has no schema version 9 (its versions: 1)",
        ),
        "a version that is not a number": (
            lambda: read_table(spark, "b", version="1", connection=af),
            "read_table: version is a schema version number, not '1'",
        ),
        "not a DataFrame": (lambda: write_table([(1, 2)], "b", connection=af), "write_table: df is a PySpark DataFrame, not list"),
        "not a session": (lambda: read_table("spark", "b", connection=af), "read_table: spark is a SparkSession, not str"),
        "not a connection": (
            lambda: write_table(ids, "b", connection="sqlite://"),
            "write_table: connection is an alterflow.Connection (alterflow.connect()), not str",
        ),
        "an empty label": (
            lambda: write_table(ids, "b", connection=af, label=" "),
            "write_table: label is 1 to 256 printable characters (no control characters), not ' '",
        ),
    }
    for case, (call, message) in cases.items():
        with pytest.raises(UserError) as caught:
            call()
        assert one_line(caught.value) == message, case
        assert state(af, "b") == before, case
    assert not list(af.warehouse.rglob("_load/l*")), "a refused write left staged files"

    closed = alterflow.connect(env={"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_SPARK_MASTER": "local[2]"})
    closed.close()
    for call in (lambda: write_table(ids, "b", connection=closed), lambda: read_table(spark, "b", connection=closed)):
        with pytest.raises(alterflow.ConnectionClosed) as caught:
            call()
        assert one_line(caught.value) == "the alterflow connection is closed; open another with alterflow.connect()"
    assert state(af, "b") == before


def test_without_a_connection_the_environment_names_the_catalog(af, spark, monkeypatch):
    af.sql("CREATE TABLE env_t (id BIGINT NOT NULL, PRIMARY KEY (id))")
    for name in ("ALTERFLOW_CATALOG_URL", "ALTERFLOW_WAREHOUSE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALTERFLOW_HOME", str(af.settings.home))
    assert write_table(spark.range(3), "env_t").rows == 3
    assert collected(read_table(spark, "env_t")) == [(0,), (1,), (2,)]


def test_a_setting_the_session_will_not_take_is_named_in_one_line(spark):
    with pytest.raises(SparkConfError) as caught:
        ensure_conf(spark, "spark.sql.warehouse.dir", "/elsewhere", "read_table")
    message = one_line(caught.value)
    assert message.startswith("read_table: the SparkSession needs spark.sql.warehouse.dir=/elsewhere and did not take it (")
    assert message.endswith("); start it with --conf spark.sql.warehouse.dir=/elsewhere")


BLOCKER = '''
import sys


class NoAlterflow:
    """Executors without alterflow: its import fails as in a Python where it is not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "alterflow" or name.startswith("alterflow."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoAlterflow())
'''


def test_executors_without_alterflow_are_named_in_one_line(af, spark, tmp_path):
    """The tasks' functions are alterflow's: a worker Python that cannot import it is the user's
    set-up to fix, said in one line. The workers of this one write run a Python whose
    sitecustomize hides alterflow (Spark starts workers per Python executable)."""
    af.sql("CREATE TABLE x (id BIGINT NOT NULL, PRIMARY KEY (id))")
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCKER)
    python = tmp_path / "python-without-alterflow"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={blocker}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    context = spark.sparkContext
    before = context.pythonExec
    context.pythonExec = str(python)
    try:
        with pytest.raises(SparkConfError) as caught:
            write_table(spark.range(10), "x", connection=af)
    finally:
        context.pythonExec = before
    assert one_line(caught.value) == (
        "write_table: the Spark executors' Python cannot import alterflow; give them a Python with alterflow installed "
        "(spark.pyspark.python, or PYSPARK_PYTHON)"
    )
    assert select(af, "SELECT count(*) FROM x") == [(0,)]
    assert write_table(spark.range(10), "x", connection=af).rows == 10  # the usual workers write it


def test_the_spark_example_of_the_docs_runs(spark, tmp_path, monkeypatch, capsys):
    """docs/python.md's Spark example, as written, on the test run's session (its getOrCreate)."""
    text = (REPO / "docs" / "python.md").read_text(encoding="utf-8")
    start = text.index("\n## Spark\n")
    section = text[start : text.index("\n## ", start + 1)]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    for name in ("ALTERFLOW_CATALOG_URL", "ALTERFLOW_WAREHOUSE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))  # made by connect()
    exec(compile(block, "docs/python.md (Spark)", "exec"), {"__name__": "example"})
    printed = capsys.readouterr().out
    assert "1000 rows in transaction 1" in printed
    assert "|  0| 0.00|2024-05-01 09:00:00|none|" in printed  # the current version: total, note
    assert "1000 ['id', 'amount', 'placed']" in printed  # version 1
