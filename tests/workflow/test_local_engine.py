"""The local engine (docs/heavyweight.md, "Engines: Spark or in-process", issue 12): a small table's history is converted in this
process with Arrow, and the result is the one Spark gives: the same rows and values, the same
per-tablet counts and samples, the same job states, Msg and validation. `auto` picks it under the
threshold in docs/heavyweight.md; `local` is refused over a hard limit; EXPLAIN says which engine would run; and
the runner starts no SparkSession for it."""

from __future__ import annotations

import pytest

import alterflow.rewrite.engines as engines
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.engine.session import Session, StatementError
from alterflow.rewrite.engines import choose_engine
from alterflow.workflow.alter_runner import run_alter
from alterflow.workflow.request import AlterRequest
from tests.support.heavy_jobs import describe, job, one_line, origin_state, sql

pytestmark = pytest.mark.spark  # the Spark twin of every case runs on the test run's SparkSession

TABLE = (
    "CREATE TABLE {name} (id BIGINT NOT NULL, grp INT, v STRING, d DECIMAL(9,3), day DATE, "
    "PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3"
)
LOADS = (
    "INSERT INTO {name} VALUES (1, 1, '10', 1.500, '2024-01-02'), (2, 2, 'twenty', NULL, NULL), "
    "(3, 300, ' 30 ', 12345.678, '2024-03-04'), (4, NULL, NULL, -0.001, '1999-12-31')",
    "INSERT INTO {name} VALUES (2, 20, '20', 2.000, '2024-02-02'), (5, 40000, '9999999999', 5.125, '2030-01-01')",
    "INSERT INTO {name} VALUES (6, 6, '-6', 6.000, '2024-06-06'), (7, 7, 'x7', 7.000, '2024-07-07'), (1, 11, '11', 1.250, '2024-01-01')",
)
CHANGES = [
    pytest.param("MODIFY COLUMN v INT", "null", id="string-to-int-with-failures"),
    pytest.param("MODIFY COLUMN grp SMALLINT", "null", id="narrowing-overflow"),
    pytest.param("MODIFY COLUMN d DECIMAL(6,1)", "null", id="decimal-rescale"),
    pytest.param("MODIFY COLUMN d STRING", "fail", id="decimal-to-text"),
    pytest.param("MODIFY COLUMN grp STRING", "fail", id="int-to-text"),
    pytest.param("ORDER BY (grp, id)", "fail", id="re-sort"),
    pytest.param("DISTRIBUTED BY HASH(id) BUCKETS 5", "fail", id="re-bucket"),
    pytest.param("MODIFY COLUMN v BIGINT, DROP COLUMN day", "null", id="two-clauses"),
]


def _alter(session: Session, name: str, change: str, on_cast_error: str, engine: str) -> str:
    return sql(
        session,
        f'ALTER TABLE {name} {change} PROPERTIES ("on_cast_error" = "{on_cast_error}", "engine" = "{engine}")',
    )


def _job_record(session: Session, name: str) -> tuple:
    """What a job leaves besides the rows: state, Msg, and each origin tablet's counts and samples
    (tablets in order; their ids differ between the two tables)."""
    j = session.catalog.jobs(session.catalog.table(name).id)[-1]
    converted = HeavyJobs(session.catalog).converted(j.id)
    samples = lambda t: sorted((s[0], s[1], tuple(sorted(s[2].items()))) for s in t.samples)  # noqa: E731  [column, value, key]
    tablets = [(t.rows_in, t.rows_out, t.failed_casts, samples(t)) for _id, t in sorted(converted.items())]
    return j.state, j.msg, sorted(tablets)


@pytest.mark.parametrize("change,on_cast_error", CHANGES)
def test_the_local_engine_gives_what_spark_gives(session, change, on_cast_error):
    for name in ("by_spark", "by_local"):
        sql(session, TABLE.format(name=name))
        for load in LOADS:
            sql(session, load.format(name=name))
    done_spark = _alter(session, "by_spark", change, on_cast_error, "spark")
    done_local = _alter(session, "by_local", change, on_cast_error, "local")
    assert "FINISHED" in done_spark and "FINISHED" in done_local, (done_spark, done_local)
    assert _job_record(session, "by_local") == _job_record(session, "by_spark")
    assert describe(session, "by_local") == describe(session, "by_spark")
    assert sql(session, "SELECT * FROM by_local ORDER BY id") == sql(session, "SELECT * FROM by_spark ORDER BY id")
    # The local engine's files are in the new sort order and the new buckets, like Spark's.
    for name in ("by_spark", "by_local"):
        snapshot = session.catalog.snapshot(name)
        assert {f.schema_version for f in snapshot.files} == {snapshot.current.version}


def test_a_failed_cast_cancels_the_job_with_the_same_message_on_both_engines(session):
    messages = []
    for name, engine in (("by_spark", "spark"), ("by_local", "local")):
        sql(session, TABLE.format(name=name))
        for load in LOADS:
            sql(session, load.format(name=name))
        before = origin_state(session, name)
        with pytest.raises(StatementError) as err:
            _alter(session, name, "MODIFY COLUMN v INT", "fail", engine)
        assert origin_state(session, name) == before
        messages.append(one_line(err.value).replace(name, "T"))
    # Job ids differ; everything else is the same (the samples name the values, not the engine).
    spark_msg, local_msg = (m.split(" was cancelled: ", 1)[1] for m in messages)
    assert local_msg == spark_msg and "x7" in local_msg, messages


def test_auto_picks_local_under_the_threshold_and_explain_says_so(session, monkeypatch):
    sql(session, TABLE.format(name="t"))
    sql(session, LOADS[0].format(name="t"))
    explain = {r[0]: r for r in sql(session, "EXPLAIN ALTER TABLE t MODIFY COLUMN v INT")}
    assert explain["(statement)"][5].startswith("local: 4 rows in "), explain
    forced = {r[0]: r for r in sql(session, 'EXPLAIN ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("engine" = "spark")')}
    assert forced["(statement)"][5] == 'spark ("engine" = "spark")'
    light = {r[0]: r for r in sql(session, "EXPLAIN ALTER TABLE t ADD COLUMN w INT")}
    assert light["(statement)"][5] == ""
    monkeypatch.setattr(engines, "LOCAL_AUTO_ROWS", 3)
    over = {r[0]: r for r in sql(session, "EXPLAIN ALTER TABLE t MODIFY COLUMN v INT")}
    assert over["(statement)"][5].startswith("spark: 4 rows in ") and "over 3 rows" in over["(statement)"][5], over
    assert choose_engine("auto", 3, 10) == "local" and choose_engine("auto", 4, 10) == "spark"
    assert choose_engine("auto", 1, engines.LOCAL_AUTO_BYTES + 1) == "spark"


def test_local_is_refused_over_its_hard_limit_in_one_line_changing_nothing(session, monkeypatch):
    sql(session, TABLE.format(name="t"))
    sql(session, LOADS[0].format(name="t"))
    before = origin_state(session, "t")
    monkeypatch.setattr(engines, "LOCAL_MAX_ROWS", 3)
    with pytest.raises(StatementError) as err:
        sql(session, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("engine" = "local")')
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith('ALTER TABLE t: "engine" = "local" converts at most 3 rows'), message
    assert "the table holds 4 rows" in message and message.endswith("nothing was changed"), message
    assert origin_state(session, "t") == before
    assert session.catalog.jobs(session.catalog.table("t").id) == []


def test_an_unknown_engine_is_one_line(session):
    sql(session, TABLE.format(name="t"))
    with pytest.raises(StatementError) as err:
        sql(session, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("engine" = "gpu")')
    assert str(err.value) == 'ALTER TABLE t: property "engine" must be auto, spark or local, got "gpu"'


def test_the_runner_starts_no_spark_for_a_local_job(sqlite_settings):
    session = Session(sqlite_settings)
    sql(session, TABLE.format(name="t"))
    sql(session, LOADS[0].format(name="t"))

    def no_spark():
        raise AssertionError("a local job asked for a SparkSession")

    done = run_alter(
        session.catalog,
        AlterRequest("t", 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("on_cast_error" = "null")'),
        session.warehouse,
        no_spark,
    )
    assert done.state == "FINISHED" and "1 values that could not be converted became NULL" in job(session, done.id).msg
    assert describe(session, "t")["v"][0] == "INT"
