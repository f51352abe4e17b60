"""The local engine through the session: which engine runs a query and why (EXPLAIN SELECT, SET
engine, the threshold), INSERT ... SELECT and CREATE VIEW on it, and a query that never starts a
JVM. On both catalogs (SQLite, PostgreSQL)."""

from __future__ import annotations

import datetime
import subprocess
import sys
import textwrap
from decimal import Decimal

import pytest

from alterflow.engine.session import ResultSet, StatementError
from alterflow.query import engine_choice


@pytest.fixture
def sql(catalog_session):
    def run(text: str):
        results = list(catalog_session.run(text))
        last = results[-1]
        return last if isinstance(last, ResultSet) else last.message

    run("CREATE TABLE t (id INT NOT NULL, v STRING, n BIGINT); INSERT INTO t VALUES (1, 'a', 10), (2, 'b', NULL), (3, NULL, 30)")
    return run


def test_explain_select_names_the_local_engine_and_the_sizes(sql):
    result = sql("EXPLAIN SELECT v, count(*) AS c FROM t GROUP BY v")
    assert result.columns == ("Engine", "Reason")
    engine, reason = result.rows[0]
    assert engine == "local" and reason.startswith("local: 3 rows in ") and reason.endswith("within 1000000 rows and 64 MiB"), reason


def test_explain_select_names_the_construct_spark_runs(sql):
    engine, reason = sql("EXPLAIN SELECT regexp_extract(v, 'a', 0) AS r FROM t").rows[0]
    assert (engine, reason) == ("spark", "spark: function regexp_extract is not in the local engine's set, which runs on Spark only")


def test_over_the_threshold_auto_picks_spark(sql, monkeypatch):
    monkeypatch.setattr(engine_choice, "LOCAL_AUTO_ROWS", 2)
    engine, reason = sql("EXPLAIN SELECT * FROM t").rows[0]
    assert engine == "spark" and reason.endswith("over 2 rows and 64 MiB"), reason


def test_set_engine_changes_the_choice_for_the_session(sql):
    assert sql("SET engine = spark") == "SET engine = spark"
    assert sql("EXPLAIN SELECT * FROM t").rows[0] == ("spark", "spark (engine = spark)")
    sql("SET engine = 'LOCAL'")
    engine, reason = sql("EXPLAIN SELECT * FROM t").rows[0]
    assert engine == "local" and reason.startswith("local (engine = local): 3 rows")


def test_a_local_select_gives_rows_names_and_spark_types(sql):
    result = sql("SELECT id, v, n * 2 AS twice, count(*) OVER (PARTITION BY v IS NULL) AS c FROM t ORDER BY v DESC")
    assert result.columns == ("id", "v", "twice", "c")
    assert result.types == ("int", "string", "bigint", "bigint")
    assert result.rows == ((2, "b", None, 2), (1, "a", 20, 2), (3, None, 60, 1))


def test_a_local_query_never_fetches_a_duckdb_extension(sql, monkeypatch):
    """DuckDB installs and loads httpfs from the internet for an s3:// or https:// path unless told
    not to: every connection of the local engine tells it (docs/semantics.md)."""
    import duckdb

    configs = []
    real_connect = duckdb.connect

    def connect(*args, config=None, **kwargs):
        configs.append(config)
        return real_connect(*args, config=config, **kwargs)

    monkeypatch.setattr(duckdb, "connect", connect)
    assert sql("SELECT count(*) AS n FROM t").rows == ((3,),)
    assert len(configs) == 1
    with real_connect(config=configs[0]) as same:  # what that configuration does with a remote path
        with pytest.raises(duckdb.Error, match="requires the extension httpfs to be loaded"):
            same.sql("SELECT * FROM read_parquet('https://example.invalid/x.parquet')").fetchall()


def test_insert_select_runs_locally_with_the_load_s_checks(sql):
    sql("CREATE TABLE u (id INT NOT NULL, v VARCHAR(1))")
    assert sql("INSERT INTO u SELECT id, v FROM t WHERE v IS NOT NULL").startswith("2 rows loaded into u")
    assert sql("SELECT * FROM u ORDER BY id").rows == ((1, "a"), (2, "b"))
    for engine in ("local", "spark"):  # the same line from both engines
        sql(f"SET engine = {engine}")
        with pytest.raises(StatementError, match=r"^INSERT INTO u: column id is NOT NULL but row 1 has NULL$"):
            sql("INSERT INTO u SELECT CAST(NULL AS INT) AS id, v FROM t WHERE id = 1")
        with pytest.raises(StatementError, match=r"^INSERT INTO u: column v: value 'long' does not fit VARCHAR\(1\) \(row 1\)$"):
            sql("INSERT INTO u SELECT id, 'long' AS v FROM t WHERE id = 1")
    sql("SET engine = auto")
    with pytest.raises(StatementError, match="^INSERT INTO u: 2 columns are named but the query returns 3$"):
        sql("INSERT INTO u SELECT id, v, n FROM t")
    assert sql("SELECT count(*) FROM u").rows == ((2,),)


def test_a_view_checked_and_read_locally_is_pinned(sql):
    assert sql("CREATE VIEW w AS SELECT id, v FROM t WHERE n IS NOT NULL") == "CREATE VIEW w"
    sql("ALTER TABLE t ADD COLUMN extra INT DEFAULT 5")
    sql("ALTER TABLE t RENAME COLUMN v TO label")
    result = sql("SELECT * FROM w ORDER BY id")
    assert (result.columns, result.rows) == (("id", "v"), ((1, "a"), (3, None)))
    assert sql("EXPLAIN SELECT * FROM w").rows[0][0] == "local"


def test_a_query_spark_refuses_is_refused_in_spark_s_line_without_spark(sql):
    wrong_count = r"^\[WRONG_NUM_ARGS.WITHOUT_SUGGESTION\] The `abs` requires 1 parameters but the actual number is 2\. .* line 1 pos 7$"
    with pytest.raises(StatementError, match=wrong_count):
        sql("SELECT abs(id, 1) AS a FROM t")
    with pytest.raises(StatementError, match=wrong_count):
        sql("EXPLAIN SELECT abs(id, 1) AS a FROM t")
    with pytest.raises(StatementError, match=r"^CREATE VIEW w: \[WRONG_NUM_ARGS.WITHOUT_SUGGESTION\] The `nvl` requires 2 "):
        sql("CREATE VIEW w AS SELECT nvl(id) AS a FROM t")
    with pytest.raises(
        StatementError, match=r"^\[ORDER_BY_POS_OUT_OF_RANGE\] ORDER BY position 4 is not in select list \(valid range is \[1, 3\]\)"
    ):
        sql("SELECT * FROM t ORDER BY 4")
    with pytest.raises(StatementError, match=r"^\[UNRESOLVED_ROUTINE\] Cannot resolve routine `gcd` on search path"):
        sql("SELECT gcd(id, 2) AS g FROM t")


def test_a_view_and_an_insert_over_a_query_sqlglot_cannot_read_run_on_spark(sql, catalog_session, spark):
    """sqlglot cannot parse corr(DISTINCT ...): Spark's parser says which relations the view
    reads (t, not the words u or n), Spark answers it; a text Spark cannot parse either is its line."""
    query = "SELECT corr(DISTINCT id, n) AS c, count(*) AS k FROM t WHERE EXISTS (SELECT 1 FROM t AS u WHERE u.id = t.id)"
    assert sql(f"CREATE VIEW cv AS {query}") == "CREATE VIEW cv"
    view = catalog_session.catalog.view("cv")
    assert [(d.ref_name, len(d.column_ids)) for d in view.dependencies] == [("t", 3)], view.dependencies
    assert sql("SELECT * FROM cv").rows == ((1.0, 3),)
    sql("CREATE TABLE r (c DOUBLE, k BIGINT)")
    assert "2 rows loaded into r" in sql(f"INSERT INTO r {query} UNION ALL SELECT corr(DISTINCT n, id), 0 FROM t")
    with pytest.raises(StatementError, match=r"^CREATE VIEW g: \[PARSE_SYNTAX_ERROR\] Syntax error"):
        sql("CREATE VIEW g AS SELECT * FROM t garbage garbage")
    assert catalog_session.catalog.object_kind("g") is None


def test_a_date_beyond_year_9999_is_one_line(sql):
    with pytest.raises(StatementError, match="^a DATE or DATETIME of the result is outside the years 1 to 9999"):
        sql("SELECT date_add(DATE '9999-12-31', id) AS d FROM t")


def test_a_small_select_never_starts_a_jvm(tmp_path):
    code = textwrap.dedent(
        """
        from alterflow.engine.session import Session
        from alterflow.settings import Settings
        from alterflow.spark_session import spark_started
        session = Session(Settings.from_env({"ALTERFLOW_HOME": HOME_PATH}))
        for r in session.run("CREATE TABLE t (a INT); INSERT INTO t VALUES (1), (2); CREATE VIEW v AS SELECT a FROM t;"
                             " CREATE TABLE u (a INT); INSERT INTO u SELECT a + 1 AS a FROM v; SELECT sum(a) AS s FROM u"):
            last = r
        print(last.rows, spark_started())
        """
    ).replace("HOME_PATH", repr(str(tmp_path / "home")))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "((5,),) False", "")


def test_duckdb_scan_reads_an_evolved_table_as_the_arrow_read_does(catalog_session, monkeypatch):
    """The Parquet scan (columns by field id, renamed, dropped, added with an initial default of
    every kind) gives the rows the evolved Arrow read gives, and is the one that ran."""
    from alterflow.query import local_engine

    statements = [
        "CREATE TABLE e (id INT, name STRING, gone INT, amount DECIMAL(10,2))",
        "INSERT INTO e VALUES (1, 'a', 7, 1.50), (2, NULL, NULL, NULL)",
        "ALTER TABLE e RENAME COLUMN name TO label",
        "ALTER TABLE e DROP COLUMN gone",
        "ALTER TABLE e ADD COLUMN s VARCHAR(20) DEFAULT 'it''s'",
        "ALTER TABLE e ADD COLUMN d DATE DEFAULT '2024-02-29'",
        "ALTER TABLE e ADD COLUMN ts DATETIME DEFAULT '2024-02-29 23:59:59.123456'",
        "ALTER TABLE e ADD COLUMN f FLOAT DEFAULT 0.1",
        "ALTER TABLE e ADD COLUMN x DOUBLE DEFAULT -2.5e-10",
        "ALTER TABLE e ADD COLUMN b BOOLEAN DEFAULT true",
        "ALTER TABLE e ADD COLUMN m DECIMAL(20,4) DEFAULT -12.3400",
        "ALTER TABLE e ADD COLUMN n BIGINT",
        "INSERT INTO e (id, label, s, n) VALUES (3, 'c', NULL, 9)",
    ]
    for statement in statements:
        list(catalog_session.run(statement))
    query = "SELECT * FROM e ORDER BY id"
    scans = []
    original = local_engine.parquet_scan

    def counted(*args):
        scans.append(original(*args))
        return scans[-1]

    monkeypatch.setattr(local_engine, "parquet_scan", counted)
    scanned = list(catalog_session.run(query))[0]
    assert scans and all(scan is not None for scan in scans)
    monkeypatch.setattr(local_engine, "parquet_scan", lambda *args: None)
    read = list(catalog_session.run(query))[0]
    assert scanned == read and scanned.types == read.types
    assert scanned.rows[0][1:] == (
        "a",
        Decimal("1.50"),
        "it's",
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 2, 29, 23, 59, 59, 123456),
        pytest.approx(0.1),
        -2.5e-10,
        True,
        Decimal("-12.3400"),
        None,
    )
    assert scanned.rows[2][:4] == (3, "c", None, None) and scanned.rows[2][-1] == 9  # written after the ADDs


def test_a_data_file_deleted_under_the_duckdb_scan_is_one_line(catalog_session):
    list(catalog_session.run("CREATE TABLE g (id INT); INSERT INTO g VALUES (1)"))
    snapshot = catalog_session.catalog.snapshot("g")
    (catalog_session.warehouse / snapshot.files[0].path).unlink()
    with pytest.raises(StatementError, match=r"^a data file the query read is gone: IO Error: No files found"):
        list(catalog_session.run("SELECT * FROM g"))
