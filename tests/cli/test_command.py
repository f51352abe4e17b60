"""The `alterflow` command (docs/semantics.md, "The CLI's output and errors"), run as a subprocess with ALTERFLOW_HOME under tmp_path.

Few invocations start Spark (the JSON rendering of every column type, a load and a heavy ALTER
through Spark, whose terminal must stay quiet); everything else uses statements that do not start
Spark, and checks the catalog in-process where that is cheaper. A run that succeeds writes nothing
on stderr (`ok`): no JVM or library warnings, whatever engine a statement ran on (docs/semantics.md)."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import re
import subprocess
import sys
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.catalog.catalog import Catalog
from alterflow.engine.session import Session
from alterflow.settings import Settings

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"


def documented_columns(statement: str) -> list[str]:
    """The columns docs/semantics.md's statement list gives for `statement`: the comment after it
    and the comment lines that continue it."""
    lines = (pathlib.Path(__file__).parents[2] / "docs" / "semantics.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(statement))
    text = lines[start].split("--", 1)[1]
    for line in lines[start + 1 :]:
        if not line.lstrip().startswith("--"):
            break
        text += line.split("--", 1)[1]
    return [name.strip() for name in text.split(",") if name.strip()]


TIMEOUT = 300


def _env(home: pathlib.Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(home), ALTERFLOW_SPARK_MASTER="local[2]", PYSPARK_PYTHON=sys.executable)
    return env


def cli(home: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(ALTERFLOW), *args],
        env=_env(home),
        cwd=home.parent,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def cli_many(home: pathlib.Path, *calls: tuple[str, ...]) -> list[subprocess.CompletedProcess]:
    """Independent invocations at the same time (the catalog must already exist: no two first-time
    migrations race)."""
    procs = [
        (
            call,
            subprocess.Popen(
                [str(ALTERFLOW), *call], env=_env(home), cwd=home.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            ),
        )
        for call in calls
    ]
    done = []
    for call, proc in procs:
        out, err = proc.communicate(timeout=TIMEOUT)
        done.append(subprocess.CompletedProcess(call, proc.returncode, out, err))
    return done


def settings(home: pathlib.Path) -> Settings:
    return Settings.from_env({"ALTERFLOW_HOME": str(home)})


def error_of(proc: subprocess.CompletedProcess) -> str:
    """The one `error: <message>` line on stderr (nothing else there), exit code 1."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, f"stderr is not one line: {proc.stderr!r}"
    assert lines[0].startswith("error: "), lines[0]
    message = lines[0][len("error: ") :]
    assert message.strip() and "Traceback" not in message
    return message


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr == "", f"a run that succeeded wrote on stderr: {proc.stderr[:2000]!r}"
    return proc.stdout


def json_lines(stdout: str) -> list[dict]:
    lines = stdout.splitlines()
    results = [json.loads(line) for line in lines]
    for result in results:
        assert isinstance(result, dict) and list(result) == ["columns", "rows"], result
        assert all(isinstance(row, list) and len(row) == len(result["columns"]) for row in result["rows"])
    return results


def text_tables(stdout: str) -> list[tuple[list[str], list[list[str]]]]:
    """The text tables in `stdout`: (header, rows), checking the frame and the row count line."""
    lines = stdout.splitlines()
    tables, i = [], 0
    rule = re.compile(r"^\+(-+\+)+$")
    while i < len(lines):
        if not rule.match(lines[i]):
            i += 1
            continue
        frame = lines[i]
        assert lines[i + 2] == frame and lines[i + 1].startswith("| "), lines[i : i + 3]
        header = [c.strip() for c in lines[i + 1].strip("|").split("|")]
        j = i + 3
        rows = []
        while lines[j] != frame:
            assert len(lines[j]) == len(frame) and lines[j].startswith("| ") and lines[j].endswith(" |"), lines[j]
            rows.append([c.strip() for c in lines[j].strip("|").split("|")])
            j += 1
        count = lines[j + 1]
        assert count == f"{len(rows)} row{'s' if len(rows) != 1 else ''}", count
        tables.append((header, rows))
        i = j + 2
    return tables


# -- sql ------------------------------------------------------------------------------------------


def test_sql_e_runs_several_statements_in_order_as_text_tables(tmp_path):
    home = tmp_path / "home"
    out = ok(
        cli(
            home,
            "sql",
            "-e",
            "CREATE TABLE t (id INT NOT NULL, name VARCHAR(10), PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2;"
            " INSERT INTO t VALUES (1, 'a'), (2, NULL);"
            " ALTER TABLE t ADD COLUMN score DOUBLE DEFAULT 1.5;"
            " DESCRIBE t;"
            "SHOW SCHEMA VERSIONS FROM t",
        )
    )
    lines = out.splitlines()
    assert lines[0] == "CREATE TABLE t"
    assert lines[1].startswith("2 rows loaded into t")
    assert lines[2].startswith("ALTER TABLE t") and "FINISHED" in lines[2]
    (describe, versions) = text_tables(out)
    assert describe == (
        ["Field", "Type", "Null", "Key", "Default"],
        [["id", "INT", "NO", "true", "NULL"], ["name", "VARCHAR(10)", "YES", "false", "NULL"], ["score", "DOUBLE", "YES", "false", "1.5"]],
    )
    assert versions[0] == documented_columns("SHOW SCHEMA VERSIONS")
    assert [r[0] for r in versions[1]] == ["1", "2"]
    assert versions[1][1][2] == "ALTER TABLE t ADD COLUMN score DOUBLE DEFAULT 1.5"
    assert out.index("| Field ") < out.index("| Version ")  # in statement order


def test_sql_f_file_json_one_object_per_result(tmp_path):
    home = tmp_path / "home"
    script = tmp_path / "script.sql"
    script.write_text(
        "-- a script with comments, blank lines and statements over several lines\n"
        "CREATE TABLE t (\n  id INT NOT NULL,\n  amount DECIMAL(6,2),\n  PRIMARY KEY (id)\n);\n\n"
        "INSERT INTO t VALUES (1, 2.50), (2, NULL);\n"
        "ALTER TABLE t ADD COLUMN note VARCHAR(20) DEFAULT 'none; really';\n"
        "DESCRIBE t;\n"
        "EXPLAIN ALTER TABLE t DROP COLUMN id, ADD COLUMN x INT;\n"
        "SHOW ALTER TABLE COLUMN FROM t;\n"
        "SHOW SCHEMA VERSIONS FROM t;\n",
        encoding="utf-8-sig",  # with a byte-order mark, as editors on Windows write: not part of the text
    )
    out = ok(cli(home, "sql", "-f", str(script), "--format", "json"))
    describe, explain, jobs, versions = json_lines(out)  # exactly 4: DDL and loads print nothing
    assert describe == {
        "columns": ["Field", "Type", "Null", "Key", "Default"],
        "rows": [
            ["id", "INT", "NO", "true", None],
            ["amount", "DECIMAL(6,2)", "YES", "false", None],
            ["note", "VARCHAR(20)", "YES", "false", "none; really"],
        ],
    }
    assert explain["columns"] == ["Clause", "Kind", "Reason", "Rows", "Bytes", "Engine"]
    by_clause = {r[0]: r for r in explain["rows"]}
    assert by_clause["DROP COLUMN id"][1] == "REJECTED" and "primary-key" in by_clause["DROP COLUMN id"][2]
    assert by_clause["(statement)"][1] == "REJECTED"
    assert all(type(r[3]) is int and type(r[4]) is int for r in explain["rows"])  # numbers, not strings
    assert jobs["columns"] == documented_columns("SHOW ALTER TABLE COLUMN")
    (job,) = jobs["rows"]
    assert type(job[0]) is int and job[1] == "t" and job[4] == "LIGHT" and job[5] == 2 and job[7] == "FINISHED"
    assert type(job[10]) is int
    dt.datetime.fromisoformat(job[2])
    dt.datetime.fromisoformat(job[3])
    assert [r[0] for r in versions["rows"]] == [1, 2]  # the EXPLAIN changed nothing
    assert versions["rows"][1][2] == "ALTER TABLE t ADD COLUMN note VARCHAR(20) DEFAULT 'none; really'"


@pytest.fixture(scope="module")
def select_json(tmp_path_factory):
    """The one Spark-starting invocation: a table of every kind of column, read back as JSON."""
    home = tmp_path_factory.mktemp("cli_json") / "home"
    proc = cli(
        home,
        "sql",
        "--format",
        "json",
        "-e",
        """
        CREATE TABLE ty (i INT, b BIGINT, d DOUBLE, m DECIMAL(10,2), s STRING, dt DATE, ts DATETIME,
                         f BOOLEAN, li LARGEINT, ti TINYINT, fl FLOAT, c CHAR(3), vc VARCHAR(8));
        INSERT INTO ty VALUES
            (1, 9007199254740993, 1.5, '12.30', 'x"y\u00e9', '2024-02-29', '2024-02-29 13:14:15', true,
             12345678901234567890123, -5, 0.25, 'ab', 'q'),
            (2, -1, -2.5e10, '-0.05', '', '1970-01-01', '1999-12-31 23:59:59', false, -7, 127, -0.5, 'abc', 'hello'),
            (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        SELECT * FROM ty ORDER BY i NULLS LAST;
        SELECT count(*) AS n, count(i) AS n_i, sum(m) AS total, max(dt) AS last_day, max(ts) AS last_ts FROM ty
    """,
    )
    return proc


def test_json_renders_every_type(select_json):
    out = ok(select_json)
    assert len(out.splitlines()) == 2  # two SELECTs, one line each; CREATE / INSERT print nothing
    rows_result, agg = json_lines(out)
    assert rows_result["columns"] == ["i", "b", "d", "m", "s", "dt", "ts", "f", "li", "ti", "fl", "c", "vc"]
    first, second, nulls = rows_result["rows"]
    assert nulls == [None] * 13
    i, b, d, m, s, day, ts, f, _li, ti, fl, c, vc = first
    assert (i, b, d, ti, fl) == (1, 9007199254740993, 1.5, -5, 0.25)
    assert all(type(v) is int for v in (i, b, ti)) and all(type(v) is float for v in (d, fl))
    assert "9007199254740993" in out.splitlines()[0]  # an exact JSON number, not rounded through a double
    assert m == "12.30" and second[3] == "-0.05"  # DECIMAL: a string, scale kept
    assert s == 'x"y\u00e9' and second[4] == ""
    assert day == "2024-02-29" and second[5] == "1970-01-01"
    assert re.fullmatch(r"2024-02-29[T ]13:14:15", ts), ts
    assert dt.datetime.fromisoformat(second[6]) == dt.datetime(1999, 12, 31, 23, 59, 59)
    assert f is True and second[7] is False
    assert (c, vc) == ("ab", "q") and (second[11], second[12]) == ("abc", "hello")
    assert (second[0], second[1], second[2], second[9], second[10]) == (2, -1, -2.5e10, 127, -0.5)
    assert agg["columns"] == ["n", "n_i", "total", "last_day", "last_ts"]
    assert agg["rows"] == [[3, 2, "12.25", "2024-02-29", agg["rows"][0][4]]]
    assert dt.datetime.fromisoformat(agg["rows"][0][4]) == dt.datetime(2024, 2, 29, 13, 14, 15)


def test_json_largeint_is_a_number(select_json):
    """docs/semantics.md: numbers are JSON numbers; only DECIMAL is a string. LARGEINT is an integer type."""
    rows_result, _ = json_lines(ok(select_json))
    first, second, _nulls = rows_result["rows"]
    assert (first[8], second[8]) == (12345678901234567890123, -7)
    assert type(first[8]) is int and type(second[8]) is int


SPARK_LOG_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (WARN|ERROR) \S+: ", re.MULTILINE)  # log4j2.properties' pattern


def test_spark_statements_keep_the_terminal_quiet_and_log_to_the_home(tmp_path):
    """docs/semantics.md: no statement prints JVM or library warnings on the user's terminal. A heavy ALTER
    on Spark, then queries, then a query Spark refuses: stderr holds that refusal's one line and
    nothing else; the JVM's output and Spark's log went to $ALTERFLOW_HOME/logs/spark.log."""
    home = tmp_path / "home"
    proc = cli(
        home,
        "sql",
        "-e",
        "CREATE TABLE h (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2;"
        " INSERT INTO h VALUES (1, '10'), (2, '20'), (3, '30');"
        ' ALTER TABLE h MODIFY COLUMN v INT PROPERTIES ("engine" = "spark");'
        " CREATE TABLE g (id INT, v INT); INSERT INTO g SELECT id, v + 1 FROM h;"
        " SELECT sum(v) AS total FROM g;"
        " SELECT nope FROM h",
    )
    message = error_of(proc)  # exactly one line on stderr: the refusal of the last statement
    assert "nope" in message, message
    assert re.search(r"ALTER TABLE h: job \d+ FINISHED", proc.stdout), proc.stdout
    assert re.search(r"\| 63 +\|", proc.stdout), proc.stdout  # 11 + 21 + 31: the SELECT's answer
    catalog = Catalog(settings(home).catalog_url)
    job = catalog.jobs(catalog.table("h").id)[-1]
    assert (job.kind, job.state) == ("HEAVY", "FINISHED"), job
    log = (home / "logs" / "spark.log").read_text(errors="replace")
    assert "alterflow's Spark session starts (master local[2])" in log, log[:2000]
    assert SPARK_LOG_LINE.search(log), log[:2000]  # Spark's own log, at WARN and up


def test_a_jvm_that_does_not_start_is_one_line_naming_the_log(tmp_path):
    home = tmp_path / "home"
    ok(cli(home, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)); INSERT INTO t VALUES (1, '2')"))
    env = {**_env(home), "JAVA_HOME": str(tmp_path / "no java here")}
    alter = 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("engine" = "spark")'
    proc = subprocess.run([str(ALTERFLOW), "sql", "-e", alter], env=env, capture_output=True, text=True, timeout=TIMEOUT)
    message = error_of(proc)
    log = home / "logs" / "spark.log"
    assert message.startswith("Spark did not start on local[2]: ") and message.endswith(f"(details in {log})"), message
    assert "no java here" in message and "no java here" in log.read_text()


def test_first_failing_statement_stops_the_run(tmp_path):
    home = tmp_path / "home"
    proc = cli(
        home,
        "sql",
        "-e",
        "CREATE TABLE t (a INT); ALTER TABLE t ADD COLUMN b INT; ALTER TABLE t DROP COLUMN nope;"
        " ALTER TABLE t ADD COLUMN c INT; CREATE TABLE never (x INT)",
    )
    assert error_of(proc) == "ALTER TABLE t: unknown column nope"
    assert proc.stdout.splitlines()[0] == "CREATE TABLE t"
    assert len(proc.stdout.splitlines()) == 2 and "schema version 2" in proc.stdout
    # a second invocation: the two statements before the failure stay done, the ones after never ran
    check = cli(home, "sql", "--format", "json", "-e", "DESCRIBE t; SHOW SCHEMA VERSIONS FROM t; DESCRIBE never")
    assert error_of(check) == "unknown table never"
    describe, versions = json_lines(check.stdout)
    assert [r[0] for r in describe["rows"]] == ["a", "b"]
    assert [r[0] for r in versions["rows"]] == [1, 2]


def test_syntax_error_in_the_third_statement_runs_the_first_two(tmp_path):
    home = tmp_path / "home"
    proc = cli(
        home, "sql", "-e", "CREATE TABLE t (a INT); INSERT INTO t VALUES (1), (2); ALTER TABLE t FROB COLUMN a; INSERT INTO t VALUES (3)"
    )
    message = error_of(proc)
    assert "syntax error" in message and "FROB" in message
    catalog = Catalog(settings(home).catalog_url)
    info = catalog.table("t")
    assert catalog.table_stats(info.id)[0] == 2  # the first INSERT only
    assert info.current_version == 1


def test_unterminated_string_in_a_later_statement(tmp_path):
    """A statement the tokenizer cannot finish is still one error line, and the ones before it run."""
    home = tmp_path / "home"
    proc = cli(home, "sql", "-e", "CREATE TABLE t (a INT, s STRING); INSERT INTO t VALUES (1, 'x'); INSERT INTO t VALUES (2, 'oops)")
    message = error_of(proc)
    assert "unterminated" in message
    catalog = Catalog(settings(home).catalog_url)
    assert catalog.table_stats(catalog.table("t").id)[0] == 1


def test_cli_bad_input_is_one_line(tmp_path):
    home = tmp_path / "home"
    Session(settings(home))  # the catalog exists before the invocations run side by side
    missing = tmp_path / "no such dir" / "script.sql"
    p_missing, p_insert = cli_many(
        home,
        ("sql", "-f", str(missing)),
        ("sql", "-e", "CREATE TABLE t (a TINYINT NOT NULL); INSERT INTO t VALUES (1), (300); CREATE TABLE never (x INT)"),
    )
    assert str(missing) in error_of(p_missing) and p_missing.stdout == ""
    message = error_of(p_insert)
    assert "INSERT INTO t" in message and "300" in message and "TINYINT" in message
    catalog = Catalog(settings(home).catalog_url)
    assert catalog.object_kind("never") is None
    assert catalog.snapshot("t").files == () and not list((home / "warehouse").rglob("*.parquet"))


# -- load -----------------------------------------------------------------------------------------

EVENTS = (
    "CREATE TABLE events (id INT NOT NULL, name VARCHAR(10), amount DECIMAL(8,2), day DATE,"
    " PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3"
)


def _events_home(tmp_path) -> tuple[pathlib.Path, Session]:
    home = tmp_path / "home"
    session = Session(settings(home))
    list(session.run(EVENTS))
    return home, session


def _visible_rows(session: Session, table: str) -> list[tuple]:
    """The table's visible rows, read from its committed files with pyarrow (no Spark)."""
    snap = session.catalog.snapshot(table)
    names = [c.name for c in snap.current.columns]
    out = []
    for f in snap.files:
        data = pq.read_table(session.warehouse / f.path)
        out += list(zip(*(data.column(n).to_pylist() for n in names)))
    return sorted(out, key=repr)


def test_load_csv_parquet_json_and_a_directory(tmp_path):
    from decimal import Decimal

    home, session = _events_home(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.csv").write_text("id,name,amount,day\n1,ann,1.50,2024-01-01\n2,,NULL,2024-01-02\n3,cy,-3,\n")
    pq.write_table(
        pa.table(
            {
                "day": pa.array([dt.date(2024, 2, 1), None]),
                "id": pa.array([10, 11], pa.int64()),
                "name": ["pq", None],
                "amount": pa.array([Decimal("2.25"), Decimal("7")], pa.decimal128(10, 3)),
            }
        ),
        data / "b.parquet",
    )
    (data / "c.jsonl").write_text('{"id": 20, "name": "js", "amount": 1.5, "day": "2024-03-01"}\n{"id": 21}\n')
    folder = data / "parts"
    folder.mkdir()
    (folder / "p1.csv").write_text("name,id\nd1,30\nd2,31\n")
    (folder / "p2.csv").write_text("name,id\nd3,32\nd4,33\n")
    (folder / "_SUCCESS").write_text("")
    procs = cli_many(
        home,
        ("load", "events", str(data / "a.csv")),
        ("load", "events", str(data / "b.parquet")),
        ("load", "events", str(data / "c.jsonl"), "--format", "json"),
        ("load", "events", str(folder), "--format", "csv"),
    )
    for proc, rows in zip(procs, (3, 2, 2, 4)):
        assert re.fullmatch(rf"{rows} rows loaded into events \(transaction \d+\)\n", ok(proc)), proc.stdout
    snap = session.catalog.snapshot("events")
    assert session.catalog.table_stats(snap.table.id)[0] == 11
    per_txn = Counter()
    for f in snap.files:
        per_txn[f.txn_id] += f.row_count
    assert sorted(per_txn.values()) == [2, 2, 3, 4]  # one transaction per load, a directory included
    assert _visible_rows(session, "events") == sorted(
        [
            (1, "ann", Decimal("1.50"), dt.date(2024, 1, 1)),
            (2, None, None, dt.date(2024, 1, 2)),
            (3, "cy", Decimal("-3.00"), None),
            (10, "pq", Decimal("2.25"), dt.date(2024, 2, 1)),
            (11, None, Decimal("7.00"), None),
            (20, "js", Decimal("1.50"), dt.date(2024, 3, 1)),
            (21, None, None, None),
            (30, "d1", None, None),
            (31, "d2", None, None),
            (32, "d3", None, None),
            (33, "d4", None, None),
        ],
        key=repr,
    )


def test_a_labelled_load_run_again_writes_nothing_and_a_bad_label_is_one_line(tmp_path):
    """`--label`, as Doris's load labels: the second run of a load whose label committed writes
    nothing and says which transaction did; another label loads again; a label that is empty, too
    long or holds a control character is one line, before anything is written."""
    home, session = _events_home(tmp_path)
    data = tmp_path / "day.csv"
    data.write_text("id,name\n1,a\n2,b\n")
    first = ok(cli(home, "load", "events", str(data), "--label", "day 2024-01-01"))
    txn = int(re.fullmatch(r"2 rows loaded into events \(transaction (\d+)\)\n", first).group(1))
    again = ok(cli(home, "load", "EVENTS", str(data), "--label", "day 2024-01-01"))  # the table's own spelling, as a load says it
    assert again == f"events: label 'day 2024-01-01' was loaded already (transaction {txn}, 2 rows); nothing written\n"
    snap = session.catalog.snapshot("events")
    assert len({f.txn_id for f in snap.files}) == 1
    before = (snap.files, sorted(str(p) for p in session.warehouse.rglob("*")))
    for label, shown in (("", "''"), ("x\ty", "'x\\ty'"), ("l" * 257, "'" + "l" * 60 + "…' (257 characters)")):
        message = error_of(cli(home, "load", "events", str(data), "--label", label))
        assert message == f"load: label {shown} is not 1 to 256 printable characters (no control characters)", message
    assert error_of(cli(home, "load", "nope", str(data), "--label", "z")) == "unknown table nope"
    fresh = tmp_path / "fresh-home"  # a bad label is refused before a home or a catalog is made
    assert error_of(cli(fresh, "load", "events", str(data), "--label", "")).startswith("load: label '' is not")
    assert not fresh.exists()
    assert (session.catalog.snapshot("events").files, sorted(str(p) for p in session.warehouse.rglob("*"))) == before
    ok(cli(home, "load", "events", str(data), "--label", "day 2024-01-01, second"))
    assert len({f.txn_id for f in session.catalog.snapshot("events").files}) == 2


def test_bad_loads_are_one_line_and_add_nothing(tmp_path):
    home, session = _events_home(tmp_path)
    list(session.run("INSERT INTO events VALUES (1, 'a', 1.00, '2024-01-01'), (2, 'b', 2.00, '2024-01-02')"))
    files = tmp_path / "in"
    files.mkdir()
    (files / "colour.csv").write_text("id,name,colour\n5,e,red\n")
    (files / "long.csv").write_text("id,name\n5,e\n6,abcdefghijklmnop\n")
    (files / "null_id.csv").write_text("id,name\n5,e\n,f\n")
    mixed = files / "mixed"
    mixed.mkdir()
    (mixed / "1.csv").write_text("id,day\n7,2024-05-01\n8,2024-05-02\n")
    (mixed / "2.csv").write_text("id,day\n9,2024-02-30\n")

    def state():
        snap = session.catalog.snapshot("events")
        disk = sorted(str(p) for p in session.warehouse.rglob("*"))
        return snap.current.version, snap.files, session.catalog.table_stats(snap.table.id), disk

    before = state()
    procs = cli_many(
        home,
        ("load", "events", str(files / "colour.csv")),
        ("load", "events", str(files / "long.csv")),
        ("load", "events", str(files / "null_id.csv")),
        ("load", "events", str(mixed)),
        ("load", "events", str(files / "missing.csv")),
    )
    expected = [
        ("colour",),
        ("name", "abcdefghijklmnop", "VARCHAR(10)"),
        ("id", "NOT NULL"),
        ("day", "2024-02-30", "DATE"),
        ("missing.csv",),
    ]
    for proc, words in zip(procs, expected):
        message = error_of(proc)
        assert proc.stdout == ""
        for word in words:
            assert word in message, (word, message)
        assert "events" in message or words == ("missing.csv",), message
    assert state() == before


def test_load_through_spark_gives_what_a_local_load_gives(tmp_path):
    home, session = _events_home(tmp_path)
    list(session.run(EVENTS.replace("events", "events_local", 1)))
    data = tmp_path / "data.csv"
    data.write_text("id,name,amount,day\n1,ann,1.50,2024-01-01\n2,,NULL,240102\n3,cy,-3,\n2,bo,2,2024/01/03\n")
    spark_run, local_run = cli_many(
        home,
        ("load", "events", str(data), "--engine", "spark"),
        ("load", "events_local", str(data), "--engine", "local"),
    )
    assert re.fullmatch(r"\d rows loaded into events \(transaction \d+\)\n", ok(spark_run)), spark_run.stdout
    assert re.fullmatch(r"\d rows loaded into events_local \(transaction \d+\)\n", ok(local_run)), local_run.stdout
    assert _visible_rows(session, "events") == _visible_rows(session, "events_local")
    assert len(_visible_rows(session, "events")) >= 3
    bad = cli(home, "load", "events", str(data), "--engine", "fast")
    assert bad.returncode == 2 and "invalid choice: 'fast'" in bad.stderr and bad.stdout == ""


def test_explain_analyze_through_the_cli_json_and_it_changes_nothing(tmp_path):
    home = tmp_path / "home"
    setup = cli(
        home, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)); INSERT INTO t VALUES (1, '1'), (2, 'two')"
    )
    assert setup.returncode == 0, setup.stderr
    result = cli(home, "sql", "--format", "json", "-e", 'EXPLAIN ANALYZE ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("engine" = "local")')
    assert result.returncode == 0, result.stderr
    [answer] = [json.loads(line) for line in result.stdout.splitlines()]
    statement = dict(zip(answer["columns"], answer["rows"][-1]))
    assert statement["FailedCasts"] == 1 and json.loads(statement["Samples"]) == [{"key": {"id": "2"}, "value": "two"}]
    described = cli(home, "sql", "-e", "DESCRIBE t")
    assert re.search(r"\| v\s+\| STRING", described.stdout), described.stdout
