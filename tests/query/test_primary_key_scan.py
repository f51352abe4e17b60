"""A primary-key table on the local engine's fast path (issue 37): DuckDB picks the latest row per
key over the Parquet files inside the query (`local_engine.parquet_scan`), and its rows equal the
evolved Arrow read's (`arrow_read.read_snapshot_arrow`, the merge-on-read it replaces) and Spark's:
over many loads replacing rows, added, dropped and renamed columns, a view
pinned to an older version, ties between transactions broken by file name and row position, and
transactions the snapshot does not know. A query on such a table runs without pyarrow or NumPy."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys

import duckdb
import pytest

from alterflow.engine.session import ResultSet, Session
from alterflow.query import local_engine
from alterflow.read.arrow_read import read_snapshot_arrow

LOADS = 12  # more than 9: file names "10-..." sort before "2-...", commit order must still win


def _values(rng: random.Random, keys: list[tuple[int, str]], load: int, with_v: bool = True) -> str:
    rows = []
    for k, s in keys:
        n = "NULL" if rng.random() < 0.2 else str(rng.randint(-(10**12), 10**12))
        d = "NULL" if rng.random() < 0.2 else f"{rng.randint(-99999, 99999) / 100:.2f}"
        v = ("NULL" if rng.random() < 0.2 else f"'load {load} {k}'") if with_v else None
        rows.append(f"({k}, '{s}', " + (f"{v}, " if with_v else "") + f"{n}, {d})")
    return ", ".join(rows)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    """A composite-key table loaded LOADS times (each load replacing some keys, some of them twice
    in one statement), its schema evolved between loads, and a view pinned before the evolution."""
    from alterflow.settings import Settings

    home = tmp_path_factory.mktemp("pk") / "home"
    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[2]"}))
    rng = random.Random(37)

    def run(text: str):
        return list(session.run(text))[-1]

    run(
        "CREATE TABLE p (k INT NOT NULL, s STRING NOT NULL, v STRING, n BIGINT, d DECIMAL(10,2), PRIMARY KEY (k, s))"
        " DISTRIBUTED BY HASH(k) BUCKETS 3"
    )
    universe = [(k, s) for k in range(60) for s in ("a", "b", "ü")]
    for load in range(LOADS):
        keys = rng.sample(universe, 40) + rng.sample(universe, 5)  # a key twice in one load: its last row
        if load == 3:
            run("CREATE VIEW pinned AS SELECT k, s, n, d FROM p")
        if load == 5:
            run("ALTER TABLE p RENAME COLUMN v TO label")  # key columns keep their names (renaming one is refused)
            run("ALTER TABLE p ADD COLUMN extra VARCHAR(10) DEFAULT 'x'")
        if load == 8:
            run("ALTER TABLE p DROP COLUMN label")
            run("ALTER TABLE p RENAME COLUMN n TO amount")
        with_v = load < 8
        columns = "k, s" + ((", label" if load >= 5 else ", v") if with_v else "") + (", amount" if load >= 8 else ", n") + ", d"
        run(f"INSERT INTO p ({columns}) VALUES {_values(rng, keys, load, with_v)}")
    assert len({f.txn_id for f in session.catalog.snapshot("p").files}) == LOADS
    return session


def _key_positions(version) -> list[int]:
    return [version.columns.index(version.column_by_id(cid)) for cid in version.primary_key]


def _scan_and_read(session: Session, snapshot, version, positions: list[int]):
    """The rows of the DuckDB scan and of the Arrow read, each sorted by key."""
    source = local_engine._Source("t0", snapshot, version)
    scan = local_engine.parquet_scan(session.warehouse, source, positions)
    assert scan is not None, "the scan must run for this table"
    scanned = duckdb.connect().sql(scan).fetchall()
    names = [version.columns[i].name for i in positions]
    table = read_snapshot_arrow(session.warehouse, snapshot, version, columns=names)
    read = [tuple(row.values()) for row in table.to_pylist()]
    keys = [positions.index(k) for k in _key_positions(version) if k in positions]

    def order(rows):
        return sorted(rows, key=lambda r: tuple(r[i] for i in keys)) if keys else sorted(rows, key=repr)

    return order(scanned), order(read)


@pytest.mark.parametrize("which", ["all", "values only", "keys only", "one key column"])
def test_the_scan_keeps_the_rows_the_arrow_read_keeps(keyed, which):
    snapshot = keyed.catalog.snapshot("p")
    version = snapshot.current
    everything = list(range(len(version.columns)))
    keys = _key_positions(version)
    positions = {
        "all": everything,
        "values only": [i for i in everything if i not in keys],
        "keys only": keys,
        "one key column": keys[1:],
    }[which]
    scanned, read = _scan_and_read(keyed, snapshot, version, positions)
    assert scanned == read
    assert len(read) > 100  # one row per key, whichever columns are read


def test_the_scan_of_an_older_version_keeps_the_arrow_read_s_rows(keyed):
    snapshot = keyed.catalog.snapshot("p")
    for number, version in sorted(snapshot.versions.items()):
        scanned, read = _scan_and_read(keyed, snapshot, version, list(range(len(version.columns))))
        assert scanned == read, f"version {number}"


@pytest.mark.parametrize("seqs", ["all equal", "unknown transactions", "none known", "reversed"])
def test_ties_and_unknown_transactions_rank_as_the_arrow_read_ranks_them(keyed, seqs):
    """Transactions of equal commit order (as when one load writes several files into a tablet,
    or a rewrite carries rows of many) fall to the file name and then the row position; one the
    snapshot does not know ranks below every known one."""
    snapshot = keyed.catalog.snapshot("p")
    known = dict(snapshot.commit_seqs)
    changed = {
        "all equal": {t: 7 for t in known},
        "unknown transactions": {t: s for t, s in known.items() if t % 3 != 0},
        "none known": {},
        "reversed": {t: -s for t, s in known.items()},
    }[seqs]
    altered = dataclasses.replace(snapshot, commit_seqs=changed)
    scanned, read = _scan_and_read(keyed, altered, altered.current, list(range(len(altered.current.columns))))
    assert scanned == read
    if seqs != "reversed":
        assert scanned != _scan_and_read(keyed, snapshot, snapshot.current, list(range(len(snapshot.current.columns))))[0]


def _result(session: Session, query: str) -> ResultSet:
    return list(session.run(query))[-1]


QUERIES = [
    "SELECT * FROM p ORDER BY k, s",
    "SELECT s, count(*) AS c, sum(amount) AS total, max(d) AS top FROM p GROUP BY s ORDER BY s",
    "SELECT extra, count(*) AS c FROM p GROUP BY extra ORDER BY extra",
    "SELECT count(*) AS c FROM p",
    "SELECT * FROM pinned ORDER BY k, s",
    "SELECT a.k, a.s, b.amount FROM p a JOIN p b ON a.k = b.k AND a.s <> b.s WHERE a.s = 'a' ORDER BY 1, 2, 3",
]


@pytest.mark.parametrize("query", QUERIES)
def test_a_query_through_the_session_scans_and_equals_the_arrow_read(keyed, query, monkeypatch):
    scans = []
    original = local_engine.parquet_scan

    def counted(*args):
        scans.append(original(*args))
        return scans[-1]

    monkeypatch.setattr(local_engine, "parquet_scan", counted)
    assert _result(keyed, f"EXPLAIN {query}").rows[0][0] == "local"
    scanned = _result(keyed, query)
    assert scans and all(scan is not None for scan in scans)
    monkeypatch.setattr(local_engine, "parquet_scan", lambda *args: None)
    read = _result(keyed, query)
    assert (scanned.columns, scanned.types, scanned.rows) == (read.columns, read.types, read.rows)
    assert scanned.rows


@pytest.mark.parametrize("query", QUERIES[:2] + QUERIES[4:5])
def test_a_sample_equals_spark_s_answer(keyed, query, spark):
    local = _result(keyed, query)
    list(keyed.run("SET engine = spark"))
    try:
        answer = _result(keyed, query)
    finally:
        list(keyed.run("SET engine = auto"))
    assert (local.columns, local.types, local.rows) == (answer.columns, answer.types, answer.rows)


def test_a_widened_column_still_reads_through_arrow(tmp_path):
    """A column some file stores narrower than the version reads it: the Arrow read converts it
    (value by value), and the scan stands aside for that table."""
    from alterflow.settings import Settings

    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_SPARK_MASTER": "local[2]"}))
    for statement in [
        "CREATE TABLE w (id INT NOT NULL, n INT, PRIMARY KEY (id))",
        "INSERT INTO w VALUES (1, 10), (2, 20)",
        "ALTER TABLE w MODIFY COLUMN n BIGINT",
        "INSERT INTO w VALUES (2, 30000000000), (3, NULL)",
    ]:
        list(session.run(statement))
    snapshot = session.catalog.snapshot("w")
    source = local_engine._Source("t0", snapshot, snapshot.current)
    assert local_engine.parquet_scan(session.warehouse, source, [0, 1]) is None
    assert local_engine.parquet_scan(session.warehouse, source, [0]) is not None  # the key alone scans
    assert _result(session, "SELECT * FROM w ORDER BY id").rows == ((1, 10), (2, 30000000000), (3, None))
    assert _result(session, "SELECT id FROM w ORDER BY id").rows == ((1,), (2,), (3,))


REPORT = """
import json, sys
from alterflow.cli.command import main
code = main(sys.argv[1:])
print("MODULES " + json.dumps(sorted(sys.modules)))
sys.exit(code)
"""


@pytest.mark.parametrize("statement", ["SELECT * FROM p ORDER BY k, s", "SELECT s, count(*) AS c FROM p GROUP BY s ORDER BY s"])
def test_a_query_of_a_primary_key_table_imports_neither_arrow_nor_numpy(keyed, statement):
    """Through the CLI in a fresh process: DuckDB merges the rows, nothing loads pyarrow or NumPy."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env["ALTERFLOW_HOME"] = str(keyed.settings.home)
    done = subprocess.run([sys.executable, "-c", REPORT, "sql", "-e", statement], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    modules = set(json.loads([line for line in done.stdout.splitlines() if line.startswith("MODULES ")][-1].removeprefix("MODULES ")))
    assert "duckdb" in modules
    heavy = sorted({m.split(".")[0] for m in modules} & {"pyarrow", "numpy", "pandas", "pyspark"})
    assert not heavy, f"{statement}: {heavy}"


def test_a_table_without_files_scans_as_no_rows_of_its_types(tmp_path):
    from alterflow.settings import Settings

    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_SPARK_MASTER": "local[2]"}))
    list(session.run("CREATE TABLE e (id BIGINT NOT NULL, v STRING, d DECIMAL(12,3), PRIMARY KEY (id))"))
    snapshot = session.catalog.snapshot("e")
    scan = local_engine.parquet_scan(session.warehouse, local_engine._Source("t0", snapshot, snapshot.current), [0, 1, 2])
    described = duckdb.connect().sql(scan)
    assert (described.columns, [str(t) for t in described.types], described.fetchall()) == (
        ["c0", "c1", "c2"],
        ["BIGINT", "VARCHAR", "DECIMAL(12,3)"],
        [],
    )
    result = _result(session, "SELECT v, count(*) AS c, sum(d) AS s FROM e GROUP BY v")
    assert (result.columns, result.types, result.rows) == (("v", "c", "s"), ("string", "bigint", "decimal(22,3)"), ())
    assert _result(session, "SELECT count(*) AS c FROM e").rows == ((0,),)
