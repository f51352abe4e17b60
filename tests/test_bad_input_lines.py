"""Every bad input gets one short line and changes nothing (docs/semantics.md, "Bad input"), through the real `alterflow`
command: huge names and literals are shortened, control characters escaped, a `-f` file that is not
UTF-8 text (or not a file) is refused, every numeric setting and argument is range-checked, and an
expression too deep for sqlglot or Spark is refused by the parser before anything runs.

For each: exit status 1, stderr exactly one line starting `error: `, at most MAX_LINE characters
after it, no raw control character, and the catalog and the warehouse as they were. None of these
starts Spark (which would print its own lines on stderr)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from alterflow.cli import command as cli_module
from alterflow.errors import MAX_LINE, MAX_NESTING, MAX_OPERATIONS, MAX_PATH, capped, escaped, first_line, shown, shown_path
from alterflow.settings import MAX_MEGABYTES, MAX_SECONDS

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
HUGE = "x" * 100_000
DIGITS = "9" * 5000
SETUP = (
    "CREATE TABLE t (k INT NOT NULL, s STRING, v VARCHAR(10), PRIMARY KEY (k)) DISTRIBUTED BY HASH(k) BUCKETS 2;"
    " ALTER TABLE t ADD COLUMN n INT"
)


def _env(home: pathlib.Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update({"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[1]", "PYSPARK_PYTHON": sys.executable, **extra})
    return env


def run(home: pathlib.Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ALTERFLOW), *args], env=_env(home, **env), cwd=home.parent, capture_output=True, text=True, timeout=300)


def one_short_line(code: int, out: str, err: str) -> str:
    """The message of the one `error: ` line on stderr, checked: exit 1, one line, short, escaped."""
    assert code == 1, (code, out, err[:500])
    assert err.endswith("\n") and err.count("\n") == 1, f"stderr is not one line: {err[:500]!r}"
    line = err[:-1]
    assert line.startswith("error: "), line[:500]
    message = line[len("error: ") :]
    assert len(message) <= MAX_LINE, f"{len(message)} characters: {message[:500]}"
    assert message.isprintable(), f"raw control characters: {message!r}"
    assert "Traceback" not in message and "internal error" not in message, message
    return message


def refused(proc: subprocess.CompletedProcess) -> str:
    return one_short_line(proc.returncode, proc.stdout, proc.stderr)


def state(home: pathlib.Path) -> tuple:
    """What a refused input must leave as it was: the catalog database and the warehouse's files."""
    files = sorted(
        (str(p.relative_to(home)), p.stat().st_size if p.is_file() else None)
        for p in home.rglob("*")
        if "logs" not in p.parts and not p.name.endswith(("-wal", "-shm"))
    )
    import sqlite3

    with sqlite3.connect(home / "catalog.db") as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        rows = {name: db.execute(f'SELECT * FROM "{name}" ORDER BY 1').fetchall() for name in tables}
    return files, rows


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> pathlib.Path:
    home = tmp_path_factory.mktemp("bad_lines") / "home"
    proc = run(home, "sql", "-e", SETUP)
    assert proc.returncode == 0, proc.stderr
    return home


@pytest.fixture
def unchanged(home):
    before = state(home)
    yield home
    assert state(home) == before, "a refused input changed the catalog or the warehouse"


# -- the helpers -----------------------------------------------------------------------------------
def test_shown_shortens_and_escapes():
    assert shown("abc") == "'abc'"
    assert shown("a" * 100_000) == "'" + "a" * 60 + "…' (100000 characters)"
    assert shown("red\x1b[31m\x00\n\u2028") == "'red\\x1b[31m\\x00\\n\\u2028'"
    assert escaped("tab\there\x7f") == "tab\\there\\x7f"
    line = capped("y" * 10_000)
    assert len(line) == MAX_LINE and line.endswith("y (shortened from 10000 characters)") and line.startswith("yyy")
    # The start (what failed) and the end (what to do) stay; the middle (a long path, say) is cut.
    long = f"warehouse /{'deep/' * 80}wh is another catalog's; `alterflow db bind-warehouse` re-binds"
    line = capped(long)
    assert len(line) == MAX_LINE and line.startswith("warehouse /deep/deep/") and "…" in line
    assert line.endswith(f"`alterflow db bind-warehouse` re-binds (shortened from {len(long)} characters)"), line
    # A warehouse's path in a message: whole up to MAX_PATH, else its start and its end (its own name).
    assert shown_path("/w/h") == "/w/h"
    deep = "/" + "deep/" * 50 + "warehouse"
    assert len(shown_path(deep)) == MAX_PATH and shown_path(deep).startswith("/deep/") and shown_path(deep).endswith("/deep/warehouse")
    assert first_line(ValueError("\n first \x1b\nsecond")) == "first \\x1b"
    assert len(first_line(ValueError("z" * 10_000))) == MAX_LINE


# -- huge names and literals, control characters ----------------------------------------------------
LONG_OR_RAW = [
    pytest.param(f"CREATE TABLE {HUGE} (a INT)", "invalid name 'xxx", id="huge-table-name"),
    pytest.param(f"CREATE TABLE `a{HUGE}` (a INT)", "(100001 characters)", id="huge-quoted-name"),
    pytest.param(f"ALTER TABLE t ADD COLUMN {HUGE} INT", "ALTER TABLE t", id="huge-column-name"),
    pytest.param(f"ALTER TABLE {HUGE[:60000]}.{HUGE[:60000]} ADD COLUMN a INT", "qualified", id="huge-qualified-name"),
    pytest.param(f"ALTER TABLE t ADD COLUMN z VARCHAR(3) DEFAULT '{HUGE}'", "VARCHAR(3)", id="huge-default"),
    pytest.param(f"INSERT INTO t (k, v) VALUES (1, '{HUGE}')", "VARCHAR(10)", id="huge-insert-value"),
    pytest.param(f"ALTER TABLE t ADD COLUMN z INT PROPERTIES ('{HUGE}' = '1')", "unknown property", id="huge-property-key"),
    pytest.param(f"ALTER TABLE t ADD COLUMN z INT PROPERTIES ('timeout' = '{HUGE}')", "timeout", id="huge-property-value"),
    pytest.param(f"ALTER TABLE t ADD COLUMN z {HUGE}", "unknown type", id="huge-type"),
    pytest.param(f"FROB {HUGE[:60000]} {HUGE[:60000]}", "unsupported statement", id="huge-unsupported"),
    pytest.param(f"ALTER TABLE t ADD COLUMN z INT {HUGE}", "syntax error", id="huge-syntax-error"),
    pytest.param(f"SELECT '{HUGE}", "unterminated", id="huge-unterminated"),
    pytest.param("CREATE TABLE `a\x1b[2J\x1b]0;pwned\x07b` (a INT)", "\\x1b[2J", id="escape-in-name"),
    pytest.param("ALTER TABLE t ADD COLUMN z INT DEFAULT 'a\x1b[31m\rb'", "\\x1b[31m", id="escape-in-default"),
    pytest.param("INSERT INTO t (k, v) VALUES (1, 'a\x1b[31m\x7f\u2028b\x1c-----')", "\\x1b[31m", id="escape-in-value"),
    pytest.param("ALTER TABLE t ADD COLUMN z INT PROPERTIES ('\x1b[2J' = '1')", "\\x1b[2", id="escape-in-property"),
]


@pytest.mark.parametrize(("sql", "fragment"), LONG_OR_RAW)
def test_a_huge_or_raw_name_or_literal_is_one_short_escaped_line(unchanged, sql, fragment):
    message = refused(run(unchanged, "sql", "-e", sql))
    assert fragment in message, message


def test_a_nul_and_other_controls_from_a_file_are_escaped(unchanged):
    script = unchanged.parent / "controls.sql"
    script.write_text("CREATE TABLE `a\x00\x01\x1b\x9bb` (a INT)")
    message = refused(run(unchanged, "sql", "-f", str(script)))
    assert "'a\\x00\\x01\\x1b\\x9bb'" in message, message


# -- the -f file -------------------------------------------------------------------------------------
def test_a_file_that_is_not_utf8_is_one_line(unchanged):
    script = unchanged.parent / "latin1.sql"
    script.write_bytes("ALTER TABLE t ADD COLUMN z INT COMMENT 'café'".encode("latin-1"))
    message = refused(run(unchanged, "sql", "-f", str(script)))
    assert message == f"{shown(str(script), 200)} is not UTF-8 text: byte 0xe9 at offset 43", message


@pytest.mark.parametrize("which", ["missing", "directory"])
def test_a_file_that_cannot_be_read_is_one_line(unchanged, which):
    path = unchanged.parent / "nope.sql" if which == "missing" else unchanged.parent
    message = refused(run(unchanged, "sql", "-f", str(path)))
    reason = "No such file or directory" if which == "missing" else "Is a directory"
    assert message == f"cannot read {shown(str(path), 200)}: {reason}", message


# -- settings ----------------------------------------------------------------------------------------
NUMERIC = {
    "ALTERFLOW_TXN_TIMEOUT": f"a whole number of seconds from 1 to {MAX_SECONDS}",
    "ALTERFLOW_GC_RETENTION": f"a whole number of seconds from 0 to {MAX_SECONDS}",
    "ALTERFLOW_LEASE_S": "a number of seconds from 0.5 to 86400",
    "ALTERFLOW_TARGET_FILE_MB": f"a whole number of megabytes from 1 to {MAX_MEGABYTES}",
    "ALTERFLOW_LOAD_BUFFER_MB": f"a whole number of megabytes from 1 to {MAX_MEGABYTES}",
    "ALTERFLOW_SPARK_LOAD_MB": f"a whole number of megabytes from 0 to {MAX_MEGABYTES}",
    "ALTERFLOW_SPARK_DRIVER_MEMORY": "an amount of memory as Spark writes it, such as 2g or 512m",
}
BAD_VALUES = ["abc", "-1", "1e300", "9" * 30, DIGITS, "²", "nan", "inf", "1\x1b[2J"]


@pytest.mark.parametrize("name", sorted(NUMERIC))
def test_every_bad_numeric_setting_names_the_variable(name, tmp_path, monkeypatch, capsys):
    """Each variable, each bad value, through the command's entry point; then one real process."""
    home = tmp_path / "home"
    for other in [k for k in os.environ if k.startswith("ALTERFLOW_")]:
        monkeypatch.delenv(other)
    monkeypatch.setenv("ALTERFLOW_HOME", str(home))
    for value in BAD_VALUES:
        if name == "ALTERFLOW_SPARK_DRIVER_MEMORY" and value == "9" * 30:
            continue  # digits only is a number of bytes to Spark; thirty of them are refused below
        monkeypatch.setenv(name, value)
        code = cli_module.main(["sql", "-e", "CREATE TABLE t (a INT)"])
        captured = capsys.readouterr()
        message = one_short_line(code, captured.out, captured.err)
        assert message.startswith(f"{name} must be {NUMERIC[name]}, not '"), message
        assert shown(value) in message, message
    assert not home.exists(), "a bad setting created the home"
    message = refused(run(home, "sql", "-e", "CREATE TABLE t (a INT)", **{name: "abc"}))
    assert message == f"{name} must be {NUMERIC[name]}, not 'abc'"
    assert not home.exists()


def test_good_numeric_settings_are_taken():
    from alterflow.settings import Settings

    settings = Settings.from_env(
        {
            "ALTERFLOW_HOME": "/tmp/h",
            "ALTERFLOW_TXN_TIMEOUT": f" {MAX_SECONDS} ",
            "ALTERFLOW_GC_RETENTION": "0",
            "ALTERFLOW_LEASE_S": "0.5",
            "ALTERFLOW_TARGET_FILE_MB": "1",
            "ALTERFLOW_LOAD_BUFFER_MB": str(MAX_MEGABYTES),
            "ALTERFLOW_SPARK_LOAD_MB": "0",
            "ALTERFLOW_SPARK_DRIVER_MEMORY": "512m",
        }
    )
    assert (settings.txn_timeout_s, settings.gc_retention_s, settings.lease_s) == (MAX_SECONDS, 0, 0.5)
    assert (settings.target_file_mb, settings.load_buffer_mb, settings.spark_load_mb) == (1, MAX_MEGABYTES, 0)
    assert settings.spark_driver_memory == "512m"


# -- absurd numbers in arguments and statements -------------------------------------------------------
@pytest.mark.parametrize("value", ["1e300", "9" * 30, DIGITS, "²", "-5"])
def test_an_absurd_gc_retention_is_one_line(unchanged, value):
    message = refused(run(unchanged, "gc", "--retention", value))
    assert message.startswith(f"alterflow gc: --retention must be a whole number of seconds from 0 to {MAX_SECONDS}, not '"), message


ABSURD = [
    pytest.param(f"CREATE TABLE u (a DECIMAL({DIGITS},2))", "number too large", id="decimal-precision-digits"),
    pytest.param("CREATE TABLE u (a DECIMAL(99999999999,2))", "number too large", id="decimal-precision"),
    pytest.param("CREATE TABLE u (a DECIMAL(2147483647,2))", "precision must be 1..38", id="decimal-precision-int"),
    pytest.param("CREATE TABLE u (a DECIMAL(10,99999999999))", "number too large", id="decimal-scale"),
    pytest.param("CREATE TABLE u (a VARCHAR(99999999999999999999))", "number too large", id="varchar-length"),
    pytest.param("CREATE TABLE u (a VARCHAR(2147483647))", "length must be 1..65533", id="varchar-length-int"),
    pytest.param(f"CREATE TABLE u (a CHAR({DIGITS}))", "number too large", id="char-length"),
    pytest.param("CREATE TABLE u (a INT) DISTRIBUTED BY HASH(a) BUCKETS 99999999999999999999", "number too large", id="buckets"),
    pytest.param("CREATE TABLE u (a INT) DISTRIBUTED BY HASH(a) BUCKETS 2147483647", "between 1 and 1024", id="buckets-int"),
    pytest.param("ALTER TABLE t DISTRIBUTED BY HASH(k) BUCKETS 99999999999999999999", "number too large", id="alter-buckets"),
    pytest.param(f"ALTER TABLE t REVERT TO VERSION {DIGITS}", "number too large", id="revert-digits"),
    pytest.param("ALTER TABLE t REVERT TO VERSION 9223372036854775808", "number too large", id="revert-2-63"),
    pytest.param("ALTER TABLE t REVERT TO VERSION 9223372036854775807", "cannot revert", id="revert-largest"),
    pytest.param("ALTER TABLE t ADD COLUMN z INT PROPERTIES ('timeout' = '99999999999999999999')", "at most", id="timeout"),
    pytest.param("ALTER TABLE t ADD COLUMN z INT PROPERTIES ('timeout' = '1e300')", "at most", id="timeout-float"),
    pytest.param(f"ALTER TABLE t ADD COLUMN z INT PROPERTIES ('expected_version' = '{DIGITS}')", "at most", id="expected-version"),
    pytest.param(f"INSERT INTO t (k) VALUES ({DIGITS})", "number too large", id="insert-digits"),
    pytest.param(f"ALTER TABLE t ADD COLUMN z DECIMAL(38,0) DEFAULT {DIGITS}", "number too large", id="default-digits"),
    pytest.param("INSERT INTO t (k) VALUES (1e400)", "does not fit INT", id="insert-1e400"),
]


QUERY_ENGINE = [
    pytest.param("SET engine = fast", "SET engine: unknown value 'fast'; use one of auto, local, spark", id="set-engine-value"),
    pytest.param(f"SET engine = {HUGE}", "SET engine: unknown value 'xxx", id="set-engine-huge"),
    pytest.param("SET speed = 1", "SET: unknown setting 'speed'; the settings are engine", id="set-unknown"),
    pytest.param("SET engine local", "expected '=' after the setting's name", id="set-no-equals"),
    pytest.param(
        "SET engine = local; SELECT regexp_extract(s, 'a', 0) AS r FROM t",
        "engine = local cannot run this query: function regexp_extract",
        id="local-unsupported",
    ),
    pytest.param("EXPLAIN SELECT * FROM nope", "unknown table or view nope", id="explain-unknown"),
    pytest.param("EXPLAIN DROP TABLE t", "only these can be explained", id="explain-other"),
]


@pytest.mark.parametrize(("sql", "fragment"), QUERY_ENGINE)
def test_a_bad_engine_setting_or_explain_is_one_line(unchanged, sql, fragment):
    message = refused(run(unchanged, "sql", "-e", sql))
    assert fragment in message, message


def test_a_bad_query_engine_variable_is_one_line(unchanged):
    message = refused(run(unchanged, "sql", "-e", "SELECT 1 AS one", ALTERFLOW_QUERY_ENGINE="fast"))
    assert message == "ALTERFLOW_QUERY_ENGINE must be one of auto, local, spark, not 'fast'", message


@pytest.mark.parametrize(("sql", "fragment"), ABSURD)
def test_an_absurd_number_in_a_statement_is_one_line(unchanged, sql, fragment):
    message = refused(run(unchanged, "sql", "-e", sql))
    assert fragment in message, message


# -- expressions too deep ------------------------------------------------------------------------------
CHAIN = "1" + "+1" * 10_000
DEEP = [
    pytest.param(f"SELECT {CHAIN} AS x", id="plus-chain"),
    pytest.param("SELECT k FROM t WHERE " + " AND ".join(["k = 1"] * 10_000), id="and-chain"),
    pytest.param("SELECT " + "NOT " * 10_000 + "TRUE", id="not-chain"),
    pytest.param("SELECT " + "CASE WHEN k = 1 THEN " * 2000 + "1" + " END" * 2000 + " FROM t", id="nested-case"),
    pytest.param("SELECT " + "- " * 10_000 + "1", id="unary-minus"),
    pytest.param("SELECT 1" + "+1" * (MAX_OPERATIONS + 1) + " AS x", id="just-over-the-limit"),
    pytest.param(f"SELECT ({CHAIN}) + ({CHAIN})", id="chains-in-parentheses"),
    pytest.param(f"CREATE VIEW w AS SELECT {CHAIN} AS x FROM t", id="view"),
    pytest.param(f"INSERT INTO t (k) SELECT {CHAIN}", id="insert-select"),
    pytest.param("SELECT " + "abs(" * 5000 + "1" + ")" * 5000, id="nested-calls"),
]


@pytest.mark.parametrize("sql", DEEP)
def test_an_expression_too_deep_is_refused_before_it_runs(unchanged, sql):
    message = refused(run(unchanged, "sql", "-e", sql))
    assert message.startswith(f"expression too deep: more than {MAX_OPERATIONS} nested operations at line 1, column ") or (
        message.startswith(f"statement nested too deeply: more than {MAX_NESTING} levels of parentheses")
    ), message


def test_operations_side_by_side_are_not_nested():
    """The limit is on depth: a long select list or IN list, or many expressions each below the
    limit, parse (they are not refused as too deep)."""
    from alterflow.sql import parse_statements

    wide = ", ".join(f"a + {i} * 2 - 1 AS c{i}" for i in range(2000))
    (select,) = parse_statements(f"SELECT {wide} FROM t WHERE a IN ({', '.join(map(str, range(5000)))})")
    assert select.tables == ("t",)
    (at_the_limit,) = parse_statements("SELECT 1" + "+1" * MAX_OPERATIONS)
    assert at_the_limit.tables == ()
    rows = ", ".join(f"({-i}, 'x')" for i in range(3000))
    (insert,) = parse_statements(f"INSERT INTO t VALUES {rows}")
    assert len(insert.rows) == 3000


# -- alterflow load's arguments --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("table", "path", "fragment"),
    [
        ("t", "/nope\x1b[2J" + "p" * 5000, "File name too long"),
        ("T" * 50_000, "catalog.db", "(50000 characters)"),
        ("t\x1b[2J", "catalog.db", "'t\\x1b[2J'"),
        ("t", "/nope\x1b[2J.csv", "'/nope\\x1b[2J.csv' does not exist"),
    ],
    ids=["huge-path", "huge-table", "escape-in-table", "escape-in-path"],
)
def test_a_bad_load_argument_is_one_short_line(unchanged, table, path, fragment):
    path = str(unchanged / path) if path == "catalog.db" else path  # a file that exists
    message = refused(run(unchanged, "load", table, path, "--format", "csv"))
    assert fragment in message, message


# -- NUL where the catalog keeps text; control characters in printed values, both catalogs -------------
NUL_KEPT = [
    ("ALTER TABLE t ADD COLUMN z STRING DEFAULT 'a\x00b'", "ALTER TABLE t"),
    ("ALTER TABLE t MODIFY COLUMN s STRING COMMENT 'c\x00'", "ALTER TABLE t"),
    ("EXPLAIN ALTER TABLE t ADD COLUMN z STRING DEFAULT 'a\x00b'", "ALTER TABLE t"),
    ("CREATE TABLE u (a INT COMMENT 'a\x00')", "CREATE TABLE u"),
    ("CREATE TABLE u (a STRING DEFAULT '\x00')", "CREATE TABLE u"),
    ("CREATE VIEW w AS SELECT k, 'a\x00b' AS c FROM t", "CREATE VIEW w"),
]


def test_a_nul_where_the_catalog_keeps_text_is_one_line_and_data_may_hold_one(catalog_url, tmp_path):
    """PostgreSQL text cannot hold NUL (it raised an internal DataError; SQLite took it): a CREATE
    TABLE, ALTER TABLE or CREATE VIEW with one is refused on both catalogs, and nothing changes.
    A NUL in a data value goes to Parquet and is printed escaped."""
    home = tmp_path / "home"
    db = {"ALTERFLOW_CATALOG_URL": catalog_url}
    assert run(home, "sql", "-e", SETUP, **db).returncode == 0
    versions = run(home, "sql", "-e", "SHOW SCHEMA VERSIONS FROM t", **db).stdout
    script = tmp_path / "nul.sql"
    for sql, subject in NUL_KEPT:
        script.write_text(sql)  # a NUL cannot be an argument: through -f, as a file would carry it
        message = refused(run(home, "sql", "-f", str(script), **db))
        assert message == (
            f"{subject}: a NUL character (\\x00) cannot be kept in the catalog (its statements, defaults, comments, views); "
            "data values may hold one"
        ), message
    assert run(home, "sql", "-e", "SHOW SCHEMA VERSIONS FROM t", **db).stdout == versions
    for name in ("u", "w"):
        assert f"unknown table or view {name}" in refused(run(home, "sql", "-e", f"SELECT * FROM {name}", **db))

    script.write_text("INSERT INTO t (k, s) VALUES (1, 'a\x00b\x1b]0;owned\x07\x1b[2J\x9b\u2028\x7fc')")
    assert run(home, "sql", "-f", str(script), **db).returncode == 0
    shown_value = "a\\x00b\\x1b]0;owned\\x07\\x1b[2J\\x9b\\u2028\\x7fc"
    table = run(home, "sql", "-e", "SELECT k, s FROM t", **db)
    assert table.returncode == 0 and table.stderr == "", table.stderr
    assert all(line.isprintable() for line in table.stdout.splitlines()), repr(table.stdout)
    assert f"| 1 | {shown_value} |" in table.stdout, table.stdout
    as_json = run(home, "sql", "-e", "SELECT k, s FROM t", "--format", "json", **db)
    assert as_json.stdout.endswith("\n") and as_json.stdout[:-1].isprintable(), repr(as_json.stdout)
    assert json.loads(as_json.stdout)["rows"] == [[1, "a\x00b\x1b]0;owned\x07\x1b[2J\x9b\u2028\x7fc"]]


def test_alterflow_load_of_a_long_path_labels_its_load_with_a_label_the_catalog_keeps(catalog_url, tmp_path):
    """`alterflow load`'s label is `load <path>`: a path past 256 characters (PostgreSQL refused
    the label, SQLite kept it whole) or with a control character is cut with a digest and escaped."""
    home = tmp_path / "home"
    db = {"ALTERFLOW_CATALOG_URL": catalog_url}
    assert run(home, "sql", "-e", SETUP, **db).returncode == 0
    deep = tmp_path.joinpath(*["d" * 100] * 3, "e\x1b[2J")
    deep.mkdir(parents=True)
    (deep / "rows.csv").write_text("k,s\n1,x\n")
    loaded = run(home, "load", "t", str(deep / "rows.csv"), **db)
    assert loaded.returncode == 0 and loaded.stderr == "", loaded.stderr
    from alterflow.catalog.catalog import Catalog
    from alterflow.catalog.models import TransactionRow

    with Catalog(catalog_url).db_session() as s:
        (label,) = [row.label for row in s.query(TransactionRow)]
    assert len(label) == 256 and label.isprintable() and label.startswith(f"load {tmp_path}"), label


# -- a home or warehouse that cannot be a folder this process writes -------------------------------------
def test_a_home_or_warehouse_that_is_a_file_or_under_one_is_one_line(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    cases = [
        ({"ALTERFLOW_HOME": str(afile)}, f"ALTERFLOW_HOME '{afile}' cannot be a folder: it is a file"),
        ({"ALTERFLOW_HOME": str(afile / "sub")}, f"ALTERFLOW_HOME '{afile}/sub' cannot be a folder: '{afile}' is a file"),
        ({"ALTERFLOW_WAREHOUSE": str(afile)}, f"the warehouse (ALTERFLOW_WAREHOUSE) '{afile}' cannot be a folder: it is a file"),
        (
            {"ALTERFLOW_WAREHOUSE": str(afile / "w")},
            f"the warehouse (ALTERFLOW_WAREHOUSE) '{afile}/w' cannot be a folder: '{afile}' is a file",
        ),
    ]
    home = tmp_path / "home"
    for env, line in cases:
        for args in (["sql", "-e", "CREATE TABLE t (a INT); INSERT INTO t VALUES (1)"], ["gc"], ["db", "upgrade"]):
            assert refused(run(home, *args, **env)) == line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"], "a refused home or warehouse left folders behind"
    assert afile.read_text() == "not a folder"


def test_a_read_only_home_or_warehouse_is_one_line(catalog_url, tmp_path):
    """Read-only by its mount (chmod does not stop root): the home itself, a home to be made in
    it, and a warehouse, on both catalogs."""
    from tests.support.mounts import tmpfs

    with tmpfs(tmp_path / "ro", "1m", read_only=True) as ro:
        home = tmp_path / "home"
        db = {"ALTERFLOW_CATALOG_URL": catalog_url}
        assert run(home, "sql", "-e", SETUP, **db).returncode == 0
        files = sorted(home.rglob("*"))
        cases = [
            ({"ALTERFLOW_HOME": str(ro)}, f"ALTERFLOW_HOME '{ro}' is not writable: read-only file system"),
            ({"ALTERFLOW_HOME": str(ro / "h")}, f"ALTERFLOW_HOME '{ro}/h' cannot be a folder: read-only file system"),
            ({"ALTERFLOW_WAREHOUSE": str(ro)}, f"the warehouse (ALTERFLOW_WAREHOUSE) '{ro}' is not writable: read-only file system"),
        ]
        for env, line in cases:
            for args in (["sql", "-e", "INSERT INTO t (k) VALUES (1)"], ["gc"]):
                assert refused(run(home, *args, **db, **env)) == line
        assert sorted(home.rglob("*")) == files and not any(ro.iterdir())
        assert "0 rows" in run(home, "sql", "-e", "SELECT * FROM t", **db).stdout


def test_migrate_apply_prints_a_statements_control_characters_escaped(tmp_path):
    """The dry run quotes each statement and apply prints a line per statement: a raw ESC/OSC/BEL
    in a migration file reaches the terminal as `\\x1b`, `\\x07`."""
    (tmp_path / "migrations").mkdir()
    (tmp_path / "migrations" / "V1__m.sql").write_text("CREATE TABLE m (a INT COMMENT 'x\x1b]0;owned\x07y');\n")
    home = tmp_path / "home"
    dry_run = run(home, "migrate", "apply", "--dry-run", ALTERFLOW_MIGRATIONS=str(tmp_path / "migrations"))
    assert dry_run.returncode == 0 and dry_run.stderr == "", dry_run.stderr
    assert "would run V1__m.sql:1  CREATE TABLE m (a INT COMMENT 'x\\x1b]0;owned\\x07y')\n" in dry_run.stdout, dry_run.stdout
    applied = run(home, "migrate", "apply", ALTERFLOW_MIGRATIONS=str(tmp_path / "migrations"))
    assert applied.returncode == 0 and applied.stderr == "", applied.stderr
    assert all(line.isprintable() for line in dry_run.stdout.splitlines() + applied.stdout.splitlines())
