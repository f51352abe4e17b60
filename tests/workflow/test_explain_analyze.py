"""EXPLAIN ANALYZE ALTER TABLE (docs/semantics.md, "Choices where no rule settles a case"): per clause the values a rewrite would fail to
convert, up to five of them with their primary key, and an estimate of the rewrite's seconds; on
the engine the rewrite would use; changing nothing. Its counts equal what the real rewrite then
reports, on both catalogs and both engines."""

from __future__ import annotations

import json

import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.engine.session import StatementError
from tests.support.heavy_jobs import origin_state, sql

pytestmark = pytest.mark.spark

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, d STRING, n INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3"
LOADS = (
    "INSERT INTO t VALUES (1, '10', '2024-01-01', 1), (2, 'x', '2024-13-01', 2), (3, '30', NULL, 3), (4, 'y', 'nope', 4)",
    "INSERT INTO t VALUES (5, NULL, '2024-02-02', 5), (6, ' 6 ', '20240606', 6), (7, '7.5', '24/07/07', 7)",
    "INSERT INTO t VALUES (2, 'z', '2024-02-30', 2), (8, '99999999999', '2024-08-08', 8)",  # id 2 again: the latest row counts
)


def _analyze(session, statement: str) -> dict[str, dict]:
    [result] = list(session.run(f"EXPLAIN ANALYZE {statement}"))
    return {row[0]: dict(zip(result.columns, row)) for row in result.rows}


def _table(session) -> None:
    sql(session, TABLE)
    for load in LOADS:
        sql(session, load)


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_counts_and_samples_equal_what_the_rewrite_reports_and_nothing_changes(catalog_session, spark, engine):
    s = catalog_session
    _table(s)
    before = origin_state(s, "t")
    statement = f'ALTER TABLE t MODIFY COLUMN v INT, MODIFY COLUMN d DATE, ADD COLUMN e INT PROPERTIES ("engine" = "{engine}")'
    plan = _analyze(s, statement)

    assert list(plan) == ["MODIFY COLUMN v INT", "MODIFY COLUMN d DATE", "ADD COLUMN e INT", "(statement)"]
    v, d, add, whole = plan.values()
    # v: 'x' was replaced by 'z' (id 2), 'y', '7.5' and an INT overflow fail; NULL does not
    assert v["FailedCasts"] == 4
    assert sorted(json.loads(v["Samples"]), key=lambda x: int(x["key"]["id"])) == [
        {"key": {"id": "2"}, "value": "z"},
        {"key": {"id": "4"}, "value": "y"},
        {"key": {"id": "7"}, "value": "7.5"},
        {"key": {"id": "8"}, "value": "99999999999"},
    ]
    assert d["FailedCasts"] == 2  # 'nope' and 2024-02-30; 20240606 and 24/07/07 are date texts of docs/semantics.md
    assert {x["value"] for x in json.loads(d["Samples"])} == {"nope", "2024-02-30"}
    assert (add["Kind"], add["FailedCasts"], add["Samples"], add["EstSeconds"]) == ("LIGHT", 0, "[]", 0.0)
    assert whole["FailedCasts"] == 6 and len(json.loads(whole["Samples"])) == 5
    assert whole["Engine"].startswith(engine) and whole["Rows"] == 8 + 1  # stored rows, before the merge by key
    assert whole["EstSeconds"] >= 0
    assert origin_state(s, "t") == before and s.catalog.jobs(s.catalog.table("t").id) == []

    # The rewrite itself (failed values become NULL) counts the same failures.
    sql(s, statement.replace("PROPERTIES (", 'PROPERTIES ("on_cast_error" = "null", '))
    job = s.catalog.jobs(s.catalog.table("t").id)[-1]
    assert job.state == "FINISHED"
    assert sum(t.failed_casts for t in HeavyJobs(s.catalog).converted(job.id).values()) == whole["FailedCasts"]


def test_the_estimate_comes_from_the_measured_conversion_throughput(catalog_session):
    s = catalog_session
    _table(s)
    heavy = HeavyJobs(s.catalog)
    assert heavy.conversion_throughput("local") is None
    sql(s, 'ALTER TABLE t MODIFY COLUMN n BIGINT, ORDER BY (n, id) PROPERTIES ("engine" = "local")')
    throughput = heavy.conversion_throughput("local")
    assert throughput and throughput > 0
    plan = _analyze(s, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("engine" = "local")')
    rows = plan["(statement)"]["Rows"]
    assert plan["(statement)"]["EstSeconds"] == round(rows / throughput, 1) == plan["MODIFY COLUMN v INT"]["EstSeconds"]
    assert heavy.conversion_throughput("spark") is None  # per engine


def test_a_lightweight_or_rejected_statement_scans_nothing(catalog_session):
    s = catalog_session
    _table(s)
    light = _analyze(s, "ALTER TABLE t ADD COLUMN e INT")
    assert [(r["Kind"], r["FailedCasts"], r["EstSeconds"]) for r in light.values()] == [("LIGHT", 0, 0.0)] * 2
    rejected = _analyze(s, "ALTER TABLE t MODIFY COLUMN v INT, DROP COLUMN id")
    assert rejected["(statement)"]["Kind"] == "REJECTED" and rejected["(statement)"]["FailedCasts"] == 0


@pytest.mark.parametrize(
    "statement,error",
    [
        ("EXPLAIN ANALYZE SELECT 1", "EXPLAIN: expected ALTER TABLE (EXPLAIN ANALYZE takes an ALTER TABLE only)"),
        ("EXPLAIN ANALYZE ALTER TABLE nope MODIFY COLUMN v INT", "unknown table nope"),
        ('EXPLAIN ANALYZE ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("engine" = "gpu")', "engine"),
    ],
)
def test_bad_statements_get_one_line_and_change_nothing(catalog_session, statement, error):
    s = catalog_session
    _table(s)
    before = origin_state(s, "t")
    try:
        results = list(s.run(statement))
    except StatementError as exc:
        assert error in str(exc) and "\n" not in str(exc)
    else:  # a rejected property is a REJECTED plan, as in EXPLAIN
        assert error in results[-1].rows[-1][2]
    assert origin_state(s, "t") == before


def test_a_clause_after_renames_in_the_same_statement_counts_its_own_column(catalog_session):
    s = catalog_session
    _table(s)
    plan = _analyze(s, 'ALTER TABLE t RENAME COLUMN v TO w, RENAME COLUMN d TO v, MODIFY COLUMN v DATE PROPERTIES ("engine" = "local")')
    modify = plan["MODIFY COLUMN v DATE"]
    assert modify["FailedCasts"] == 2 and {x["value"] for x in json.loads(modify["Samples"])} == {"nope", "2024-02-30"}
