"""`"on_cast_error" = "quarantine"` (docs/semantics.md): rows with a value that cannot be converted go,
unconverted, into `t__quarantine` (the original columns as STRING, `_job_id`, `_column`,
`_reason`); the job finishes, Msg counts them, and the converted table holds every other row.
Converted plus quarantined rows equal the origin's, with dual-written loads that hold bad values
too, on both engines and both catalogs; a cancel takes the quarantined rows back."""

from __future__ import annotations

import pathlib
import re

import pytest

from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.engine.session import StatementError
from alterflow.workflow import heavy_steps
from tests.support.heavy_jobs import check, job, one_line, short_leases, sql, start, swap, to_validating

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, d DATE) DISTRIBUTED BY HASH(id) BUCKETS 3"
ALTER = "ALTER TABLE t MODIFY COLUMN v INT"
HISTORY = "INSERT INTO t VALUES (1, '1', '2024-01-01'), (2, 'two', '2024-01-02'), (3, '3', NULL), (4, 'x''4', NULL), (5, NULL, NULL)"


def _quarantine(session) -> list[tuple]:
    return list(sql(session, "SELECT id, v, d, _job_id, _column, _reason FROM t__quarantine ORDER BY id"))


def _run_job(session, spark, engine: str, loads: list[str]) -> int:
    """The ALTER with quarantine through the job's steps, with `loads` dual-written before its conversion."""
    job_id = start(session, ALTER, on_cast_error="quarantine", engine=engine)
    for load in loads:
        sql(session, load)
    to_validating(session, spark if engine == "spark" else None, job_id)
    check(session, spark if engine == "spark" else None, job_id)
    swap(session, job_id)
    return job_id


@pytest.mark.spark
@pytest.mark.parametrize("engine", ["local", "spark"])
def test_rows_that_cannot_be_converted_go_to_the_quarantine_table(catalog_session, spark, engine):
    session = catalog_session
    sql(session, TABLE)
    sql(session, HISTORY)
    job_id = _run_job(session, spark, engine, ["INSERT INTO t VALUES (6, '6', NULL), (7, 'seven', '2024-01-07')"])
    assert job(session, job_id).state == "FINISHED"
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == ((1, 1), (3, 3), (5, None), (6, 6))
    quarantined = _quarantine(session)
    assert [(r[0], r[1], r[2]) for r in quarantined] == [("2", "two", "2024-01-02"), ("4", "x'4", None), ("7", "seven", "2024-01-07")]
    assert {r[3] for r in quarantined} == {job_id} and {r[4] for r in quarantined} == {"v"}
    assert quarantined[0][5] == "v: 'two' cannot be converted to INT", quarantined[0]
    # Converted plus quarantined rows: every row of the origin, exactly once.
    assert len(sql(session, "SELECT id FROM t")) + len(quarantined) == 7
    msg = job(session, job_id).msg
    assert re.search(r"3 rows that could not be converted were quarantined in t__quarantine", msg), msg
    assert HeavyJobs(session.catalog).quarantined(job_id) == 3
    # An ordinary table: its schema is the origin's columns as STRING, then the job's columns.
    assert [c.name + " " + c.type.sql() for c in session.catalog.current_schema("t__quarantine")[1].columns] == [
        "id STRING",
        "v STRING",
        "d STRING",
        "_job_id BIGINT",
        "_column STRING",
        "_reason STRING",
    ]


@pytest.mark.spark
def test_a_second_job_adds_the_columns_the_quarantine_table_lacks_and_users_can_drop_it(session, spark):
    sql(session, TABLE)
    sql(session, HISTORY)
    first = _run_job(session, spark, "local", [])
    sql(session, "ALTER TABLE t ADD COLUMN w STRING")
    sql(session, "INSERT INTO t VALUES (8, 8, NULL, 'eight')")
    second_start = start(session, "ALTER TABLE t MODIFY COLUMN w BIGINT", on_cast_error="quarantine", engine="local")
    to_validating(session, None, second_start)
    check(session, None, second_start)
    swap(session, second_start)
    rows = sql(session, "SELECT id, w, _job_id FROM t__quarantine ORDER BY _job_id, id")
    assert rows == (("2", None, first), ("4", None, first), ("8", "eight", second_start)), rows
    assert sql(session, "SELECT id, w FROM t ORDER BY id") == ((1, None), (3, None), (5, None))
    # GC leaves the quarantined files as they are (written under version 1 and 2): each keeps its job.
    from alterflow.gc.gc_runner import run_gc

    run_gc(session.catalog, session.warehouse, lambda: spark, 0)
    assert (HeavyJobs(session.catalog).quarantined(first), HeavyJobs(session.catalog).quarantined(second_start)) == (2, 1)
    assert len(sql(session, "SELECT id FROM t__quarantine")) == 3
    sql(session, "DROP TABLE t__quarantine")
    assert session.catalog.object_kind("t__quarantine") is None


def test_a_cancel_takes_the_quarantined_rows_back(catalog_session):
    """On both catalogs: the conversion's and a dual-written load's quarantined rows leave with the
    job; the origin still holds them."""
    session = catalog_session
    sql(session, TABLE)
    sql(session, HISTORY)
    job_id = start(session, ALTER, on_cast_error="quarantine", engine="local")
    sql(session, "INSERT INTO t VALUES (7, 'seven', NULL)")
    to_validating(session, None, job_id)
    assert len(_quarantine(session)) == 3
    sql(session, "CANCEL ALTER TABLE COLUMN FROM t")
    assert _quarantine(session) == []
    assert sql(session, "SELECT id, v FROM t WHERE id IN (2, 7) ORDER BY id") == ((2, "two"), (7, "seven"))


def test_the_whole_statement_through_the_cli_runner(catalog_session):
    session = catalog_session
    sql(session, TABLE)
    sql(session, HISTORY)
    sql(session, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("on_cast_error" = "quarantine", "engine" = "local")')
    assert sql(session, "SELECT count(*) FROM t") == ((3,),)
    assert sql(session, "SELECT count(*) FROM t__quarantine") == ((2,),)
    (row,) = [r for r in sql(session, "SHOW ALTER TABLE COLUMN FROM t") if r[7] == "FINISHED" and r[4] == "HEAVY"]
    assert "2 rows that could not be converted were quarantined in t__quarantine" in row[8], row


def test_a_table_of_that_name_that_is_not_a_quarantine_table_is_refused_and_nothing_changes(catalog_session):
    session = catalog_session
    sql(session, TABLE)
    sql(session, HISTORY)
    sql(session, "CREATE TABLE t__quarantine (id INT)")
    with pytest.raises(StatementError) as err:
        sql(session, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("on_cast_error" = "quarantine")')
    message = one_line(err.value)
    assert message == (
        "ALTER TABLE t: on_cast_error quarantine: table t__quarantine exists but is not a quarantine table "
        "(it needs _job_id BIGINT); drop or rename it"
    ), message
    assert HeavyJobs(session.catalog).catalog.jobs(session.catalog.table("t").id) == [] or all(
        j.kind == "LIGHT" for j in session.catalog.jobs(session.catalog.table("t").id)
    )
    assert session.catalog.current_schema("t")[0].current_version == 1


def test_a_column_named_like_the_quarantine_columns_is_refused(catalog_session):
    session = catalog_session
    sql(session, "CREATE TABLE q (id INT, _reason STRING)")
    with pytest.raises(StatementError) as err:
        sql(session, 'ALTER TABLE q MODIFY COLUMN _reason INT PROPERTIES ("on_cast_error" = "quarantine")')
    assert "column _reason clashes with the quarantine table's own column" in one_line(err.value)
    assert session.catalog.object_kind("q__quarantine") is None


def test_an_unknown_on_cast_error_names_the_three_values(catalog_session):
    session = catalog_session
    sql(session, TABLE)
    with pytest.raises(StatementError) as err:
        sql(session, 'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("on_cast_error" = "keep")')
    assert one_line(err.value) == 'ALTER TABLE t: property "on_cast_error" must be fail, null or quarantine, got "keep"'


def test_a_keyed_table_quarantines_history_but_refuses_a_bad_row_while_loading(catalog_session):
    """Without row deletes the shadow index would keep an older row of a key whose newer row is
    quarantined: a dual-written bad row of a keyed table fails its load, and nothing of it lands."""
    session = catalog_session
    sql(session, "CREATE TABLE k (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(session, "INSERT INTO k VALUES (1, '1'), (2, 'two')")
    job_id = start(session, "ALTER TABLE k MODIFY COLUMN v INT", on_cast_error="quarantine", engine="local")
    with pytest.raises(StatementError) as err:
        sql(session, "INSERT INTO k VALUES (1, 'one'), (3, '3')")
    assert "value 'one' (row 1) cannot be converted to INT for schema change job" in one_line(err.value)
    assert "nothing was loaded" in one_line(err.value)
    sql(session, "INSERT INTO k VALUES (3, '3')")
    to_validating(session, None, job_id)
    check(session, None, job_id)
    swap(session, job_id)
    assert sql(session, "SELECT id, v FROM k ORDER BY id") == ((1, 1), (3, 3))
    assert sql(session, "SELECT id, v, _column FROM k__quarantine") == (("2", "two", "v"),)


def test_a_quarantine_table_in_a_heavyweight_change_of_its_own_refuses_new_quarantined_rows(catalog_session):
    session = catalog_session
    sql(session, TABLE)
    sql(session, HISTORY)
    job_id = start(session, ALTER, on_cast_error="quarantine", engine="local")
    other = start(session, "ALTER TABLE t__quarantine MODIFY COLUMN _job_id STRING")
    with pytest.raises(StatementError) as err:
        sql(session, "INSERT INTO t VALUES (7, 'seven', NULL)")
    assert "quarantine table t__quarantine is in schema change job" in one_line(err.value)
    assert sql(session, "SELECT count(*) FROM t") == ((5,),)
    heavy_steps.cancel(session.catalog, session.warehouse, other, "test")
    sql(session, "INSERT INTO t VALUES (7, 'seven', NULL)")
    assert HeavyJobs(session.catalog).quarantined(job_id) == 1


@pytest.mark.spark
@pytest.mark.parametrize("load_engine", ["local", "spark"])
def test_dual_written_loads_on_both_engines_quarantine_their_bad_rows(session, spark, tmp_path, load_engine):
    """A 30,000-row CSV with every 7th value bad, loaded while the job dual-writes: converted plus
    quarantined rows are the origin's, row for row."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from alterflow.load.inputs import open_input

    sql(session, "CREATE TABLE t (id BIGINT NOT NULL, v STRING) DISTRIBUTED BY HASH(id) BUCKETS 4")
    sql(session, "INSERT INTO t VALUES (-1, 'bad'), (-2, '2')")
    job_id = start(session, "ALTER TABLE t MODIFY COLUMN v INT", on_cast_error="quarantine", engine="local")
    ids = np.arange(30_000)
    values = [f"n{i}" if i % 7 == 0 else str(i) for i in ids]
    path = tmp_path / "in.csv"
    pacsv.write_csv(pa.table({"id": ids.astype(str), "v": values}), path)
    session.load_input("t", open_input(path), label="bad rows", engine=load_engine)
    to_validating(session, None, job_id)
    check(session, None, job_id)
    swap(session, job_id)
    bad = {int(i) for i in ids if i % 7 == 0} | {-1}
    kept = dict(sql(session, "SELECT id, v FROM t"))
    assert set(kept) == {-2} | {int(i) for i in ids} - bad
    assert all(kept[i] == i for i in kept if i >= 0) and kept[-2] == 2
    quarantined = sql(session, "SELECT id, v, _job_id FROM t__quarantine")
    assert sorted(int(r[0]) for r in quarantined) == sorted(bad)
    assert all(r[1] == ("bad" if r[0] == "-1" else f"n{r[0]}") and r[2] == job_id for r in quarantined)
    assert HeavyJobs(session.catalog).quarantined(job_id) == len(bad)


LEASE_S = 2.0


@pytest.mark.spark
@pytest.mark.parametrize(
    ("engine", "crash_at"),
    [("local", "quarantined"), ("spark", "quarantined"), ("spark", "tablet_1"), ("local", "validating")],
)
def test_a_runner_killed_while_quarantining_resumes_and_every_row_is_in_exactly_one_table(session, monkeypatch, engine, crash_at):
    """`alterflow sql` killed with SIGKILL mid-job (quarantined rows written but not committed,
    a tablet committed, the conversion done); loads with bad rows land while nobody drives the
    job; RESUME finishes it: each row is either converted in t or in t__quarantine, once."""
    import signal
    import subprocess
    import sys
    import time

    from tests.support.heavy_jobs import subprocess_env

    short_leases(session, monkeypatch, LEASE_S)
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING) DISTRIBUTED BY HASH(id) BUCKETS 4")
    model = {i: (str(i) if i % 5 else f"bad{i}") for i in range(1, 201)}
    sql(session, "INSERT INTO t VALUES " + ", ".join(f"({i}, '{v}')" for i, v in model.items()))
    statement = f'ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ("on_cast_error" = "quarantine", "engine" = "{engine}")'
    env = subprocess_env(session.settings.home)
    env.update(
        ALTERFLOW_CATALOG_URL=session.settings.catalog_url,
        ALTERFLOW_LEASE_S=str(LEASE_S),
        ALTERFLOW_SPARK_MASTER="local[1]",
        ALTERFLOW_CRASH_AT=crash_at,
    )
    alterflow = str(pathlib.Path(sys.executable).parent / "alterflow")
    runner = subprocess.run(
        [alterflow, "sql", "-e", statement], env=env, cwd=session.settings.home, capture_output=True, text=True, timeout=300
    )
    assert runner.returncode == -signal.SIGKILL, runner.stderr
    [killed] = [j for j in session.catalog.jobs(session.catalog.table("t").id) if j.kind == "HEAVY"]
    assert killed.state in ("RUNNING", "VALIDATING"), killed
    sql(session, "INSERT INTO t VALUES (201, '201'), (202, 'bad202')")  # dual-written while orphaned
    model.update({201: "201", 202: "bad202"})
    time.sleep(LEASE_S + 0.5)
    assert f"job {killed.id} FINISHED" in sql(session, "RESUME ALTER TABLE COLUMN FROM t")
    kept = sql(session, "SELECT id, v FROM t ORDER BY id")
    quarantined = sql(session, "SELECT id, v, _job_id FROM t__quarantine ORDER BY id")
    assert kept == tuple((i, int(v)) for i, v in sorted(model.items()) if not v.startswith("bad"))
    assert sorted((int(i), v) for i, v, _job in quarantined) == sorted((i, v) for i, v in model.items() if v.startswith("bad"))
    assert {job for _i, _v, job in quarantined} == {killed.id}
    assert HeavyJobs(session.catalog).quarantined(killed.id) == 41


def test_a_load_that_commits_across_the_swap_keeps_its_quarantined_rows(catalog_session):
    """A load that began while the job dual-wrote and commits after the swap: its good rows are in
    the swapped-in index, its bad rows stay in the quarantine table."""
    from alterflow.load.local_load import load_batches

    session = catalog_session
    sql(session, TABLE)
    sql(session, HISTORY)
    job_id = start(session, ALTER, on_cast_error="quarantine", engine="local")
    to_validating(session, None, job_id)
    check(session, None, job_id)
    info, version = session.catalog.current_schema("t")

    def batches():
        import pyarrow as pa

        from alterflow.load.rows import rows_from_arrow

        yield rows_from_arrow(version, "t", pa.table({"id": ["8", "9"], "v": ["8", "nine"], "d": [None, None]}))
        swap(session, job_id)  # the swap lands while the load is still writing
        yield rows_from_arrow(version, "t", pa.table({"id": ["10"], "v": ["10"], "d": [None]}))

    load_batches(session.catalog, session.warehouse, info, version, batches(), "across the swap")
    assert job(session, job_id).state == "FINISHED"
    assert sql(session, "SELECT id, v FROM t WHERE id >= 8 ORDER BY id") == ((8, 8), (10, 10))
    assert sorted(int(r[0]) for r in sql(session, "SELECT id FROM t__quarantine")) == [2, 4, 9]


def test_a_dropped_quarantine_table_is_made_again_and_its_rows_cannot_be_rewritten_away(catalog_session):
    session = catalog_session
    sql(session, TABLE)
    sql(session, HISTORY)
    job_id = start(session, ALTER, on_cast_error="quarantine", engine="local")
    sql(session, "INSERT INTO t VALUES (7, 'seven', NULL)")
    with pytest.raises(StatementError) as err:  # a rewrite would drop the rows' job marks
        sql(session, "ALTER TABLE t__quarantine MODIFY COLUMN _job_id STRING")
    assert "it holds rows quarantined by unfinished job" in one_line(err.value)
    sql(session, "DROP TABLE t__quarantine")  # users may drop it, also while the job runs
    sql(session, "INSERT INTO t VALUES (8, 'eight', NULL)")
    to_validating(session, None, job_id)
    check(session, None, job_id)
    swap(session, job_id)
    assert sorted(int(r[0]) for r in sql(session, "SELECT id FROM t__quarantine")) == [2, 4, 8]


def test_a_null_for_a_column_becoming_not_null_is_named_by_its_input_row_after_quarantined_rows(catalog_session):
    session = catalog_session
    sql(session, "CREATE TABLE n (id INT NOT NULL, v STRING)")
    sql(session, "INSERT INTO n VALUES (1, '1')")
    start(session, "ALTER TABLE n MODIFY COLUMN v INT NOT NULL", on_cast_error="quarantine", engine="local")
    with pytest.raises(StatementError) as err:
        sql(session, "INSERT INTO n VALUES (2, 'two'), (3, 'three'), (4, NULL)")
    assert "becomes NOT NULL in schema change job 1 but row 3 has NULL; nothing was loaded" in one_line(err.value)
    assert sql(session, "SELECT count(*) FROM n") == ((1,),)
    assert sql(session, "SELECT count(*) FROM n__quarantine") == ((0,),)


@pytest.mark.spark
def test_a_tablet_whose_rows_all_fail_or_all_convert_finishes_on_spark(session, spark):
    """Each of the two tablets sends every row one way, so one write of each has no rows: Spark may
    plan it as an empty relation that never runs its observation (PySpark's Observation.get then
    failed with "assertion failed"). Converted plus quarantined is still every row once."""
    sql(session, "CREATE TABLE ty (id INT NOT NULL, s STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    sql(session, "INSERT INTO ty VALUES (1, 'x'), (2, '5')")
    done = sql(session, 'ALTER TABLE ty MODIFY COLUMN s INT PROPERTIES ("engine" = "spark", "on_cast_error" = "quarantine")')
    assert "FINISHED" in done, done
    assert sql(session, "SELECT id, s FROM ty ORDER BY id") == ((2, 5),)
    assert sql(session, "SELECT id, s, _column FROM ty__quarantine ORDER BY id") == (("1", "x", "s"),)
