"""What the CLI imports for the statements people type most (issues 12 and 26): a lightweight ALTER,
DESCRIBE and SHOW import neither Spark, Great Expectations, pandas nor Arrow, nor sqlglot (the
parser reads plain statements itself, tests/sql/test_plain_tokens.py), and of SQLAlchemy only what
they use (SQLite's dialect for a SQLite catalog). Each statement runs in a fresh `alterflow sql` process that reports the
modules it imported; `python -X importtime -m alterflow.cli.command ...` shows where a new one comes from."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

# Top-level packages outside the standard library a light statement may import: ours, SQLAlchemy
# (and typing_extensions, which SQLAlchemy imports).
ALLOWED = {"alterflow", "sqlalchemy", "typing_extensions"}
NEVER = ("pyspark", "py4j", "great_expectations", "pandas", "pyarrow", "numpy", "scipy", "alembic", "httpx", "sqlglot")

REPORT = """
import json, sys
from alterflow.cli.command import main
code = main(sys.argv[1:])
print("MODULES " + json.dumps(sorted(sys.modules)))
sys.exit(code)
"""


def _modules(home: pathlib.Path, statement: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env["ALTERFLOW_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-c", REPORT, "sql", "-e", statement],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    line = [text for text in done.stdout.splitlines() if text.startswith("MODULES ")][-1]
    return set(json.loads(line.removeprefix("MODULES ")))


def _third_party(modules: set[str]) -> set[str]:
    tops = {name.split(".")[0] for name in modules}
    return {t for t in tops if t not in sys.stdlib_module_names and not t.startswith("_") and t != "cython_runtime"}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> pathlib.Path:
    home = tmp_path_factory.mktemp("imports")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env["ALTERFLOW_HOME"] = str(home)
    create = (
        "CREATE TABLE t (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2;"
        "CREATE TABLE plain (id BIGINT, v STRING); INSERT INTO plain VALUES (1, 'a'), (2, NULL)"
    )
    subprocess.run([sys.executable, "-m", "alterflow.cli.command", "sql", "-e", create], env=env, check=True, timeout=120)
    return home


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE t ADD COLUMN w INT",
        "ALTER TABLE t RENAME COLUMN v TO v2",
        "DESCRIBE t",
        "SHOW ALTER TABLE COLUMN",
        "SHOW SCHEMA VERSIONS FROM t",
    ],
)
def test_a_light_statement_imports_no_spark_expectations_pandas_or_arrow(home, statement):
    modules = _modules(home, statement)
    assert not [m for m in modules if m.split(".")[0] in NEVER], statement
    assert _third_party(modules) <= ALLOWED, f"{statement}: new packages {_third_party(modules) - ALLOWED}"
    dialects = {m.split(".")[2] for m in modules if m.startswith("sqlalchemy.dialects.") and not m.endswith("._typing")}
    assert dialects == {"sqlite"}, "a SQLite catalog imports no other SQL dialect"


def test_the_pin_notices_a_statement_that_writes_rows(home):
    """The same check sees Arrow come in with an INSERT: the pin above is not vacuous."""
    modules = _modules(home, "INSERT INTO t (id) VALUES (1)")
    assert "pyarrow" in modules


@pytest.mark.parametrize(
    "statement", ["SELECT * FROM t", "SELECT w, count(*) AS n FROM t GROUP BY w ORDER BY w", "EXPLAIN SELECT * FROM t"]
)
def test_a_small_query_imports_duckdb_and_no_spark_expectations_or_pandas(home, statement):
    """The local engine answers it: DuckDB (which merges a primary-key table's rows itself,
    tests/query/test_primary_key_scan.py) and sqlglot's Spark dialect, nothing heavier: no Arrow
    nor NumPy either."""
    modules = _modules(home, statement)
    heavy = ("pyspark", "py4j", "great_expectations", "pandas", "pyarrow", "numpy", "alembic", "httpx")
    assert not [m for m in modules if m.split(".")[0] in heavy], statement
    assert ("duckdb" in modules) == (not statement.startswith("EXPLAIN")), statement
    loaded = {m.split(".")[2] for m in modules if m.startswith("sqlglot.dialects.") and m.count(".") >= 2}
    assert loaded <= {"dialect", "spark", "spark2", "hive"}, f"{statement}: sqlglot dialects {loaded}"


@pytest.mark.parametrize("statement", ["SELECT * FROM plain", "SELECT v, count(*) AS n FROM plain GROUP BY v ORDER BY v"])
def test_a_small_query_of_a_plain_table_imports_neither_sqlalchemy_nor_arrow(home, statement):
    """On a SQLite catalog the names are bound through sqlite3 (catalog/snapshot_reads.py) and a
    table without a primary key is scanned by DuckDB itself (query/local_engine.parquet_scan), its
    rows fetched as Python values: the process imports DuckDB and sqlglot, and nothing of
    SQLAlchemy, Arrow or NumPy (0.16 s and 0.07 s of a 0.2 s process)."""
    modules = _modules(home, statement)
    assert "duckdb" in modules
    heavy = sorted({m.split(".")[0] for m in modules} & {"sqlalchemy", "pyarrow", "numpy", "pandas", "pyspark"})
    assert not heavy, f"{statement}: {heavy}"
