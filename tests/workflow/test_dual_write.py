"""Dual write (docs/heavyweight.md, "Dual write"): while a job is between PENDING and the swap, every load writes its rows to
the origin index and, converted, to the shadow index, in one transaction. No committed row is lost
or doubled across the swap, whether it was loaded before, during (in this process between the
steps, and from a second process while Spark converts) or after the job."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time

import pytest

import alterflow.rewrite.tablet_conversion as tablet_conversion
from alterflow.bucketing import bucket_of
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.engine.session import LOAD_OVERTAKEN_TRIES, Session, StatementError
from tests.support.catalog_rows import transactions
from tests.support.gc import delete_dropped_files
from tests.support.heavy_jobs import (
    check,
    convert,
    describe,
    job,
    one_line,
    sql,
    start,
    subprocess_env,
    swap,
    to_validating,
    wait,
)

TABLE = "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
ALTER = "ALTER TABLE t MODIFY COLUMN v INT"

LOADER = textwrap.dedent(
    """
    import pathlib, re, sys, time
    from alterflow.engine.session import Session, StatementError
    from alterflow.settings import Settings

    stop, key = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    session = Session(Settings.from_env())
    while not stop.exists():
        try:
            done = list(session.run(f"INSERT INTO t VALUES ({key}, '{key}')"))[-1].message
        except StatementError as exc:
            print("retry", key, str(exc).replace(chr(10), " "), flush=True)
            time.sleep(0.05)
            continue
        txn = re.search(r"transaction (\\d+)", done).group(1)
        print("ok", key, txn, flush=True)
        key += 1
        time.sleep(0.25)  # a steady trickle: every load is a file in each index, and reads pay per file
    print("stopped", flush=True)
    """
)


class Loader:
    """A second process inserting one row per transaction in a loop (keys from `first` up)."""

    def __init__(self, session: Session, tmp_path, first: int):
        self.stop = tmp_path / "stop-loader"
        self.out = tmp_path / "loader.out"
        self.err = tmp_path / "loader.err"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", LOADER, str(self.stop), str(first)],
                env=subprocess_env(session.settings.home),
                stdout=out,
                stderr=err,
                start_new_session=True,
            )

    def lines(self) -> list[list[str]]:
        return [line.split(" ", 2) for line in self.out.read_text().splitlines() if line]

    def ok(self) -> list[tuple[int, int]]:
        return [(int(p[1]), int(p[2])) for p in self.lines() if p[0] == "ok"]

    def wait_for_more(self, n: int, timeout: float = 120) -> None:
        target = len(self.ok()) + n
        deadline = time.monotonic() + timeout
        while len(self.ok()) < target:
            assert self.proc.poll() is None, f"the loader died: {self.err.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"the loader made no progress: {self.err.read_text()[-2000:]}"
            time.sleep(0.05)

    def finish(self) -> None:
        self.stop.touch()
        try:
            self.proc.wait(60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.mark.spark
def test_every_row_loaded_before_during_and_after_the_job_is_there_exactly_once(session, spark, tmp_path, monkeypatch):
    sql(session, TABLE)
    expected = set(range(1, 41))
    sql(session, "INSERT INTO t VALUES " + ", ".join(f"({k}, '{k}')" for k in range(1, 21)))
    sql(session, "INSERT INTO t VALUES " + ", ".join(f"({k}, '{k}')" for k in range(21, 41)))
    assert len(session.catalog.tablets(session.catalog.table("t").current_index_id)) == 4  # every bucket exists

    def load(*keys):
        sql(session, "INSERT INTO t VALUES " + ", ".join(f"({k}, '{k}')" for k in keys))
        expected.update(keys)

    job_id = start(session, ALTER)
    load(101, 102)  # PENDING
    wait(session, job_id)
    load(103)  # RUNNING, before the conversion

    loader = Loader(session, tmp_path, first=10_000)
    try:
        loader.wait_for_more(2)
        # Hold the first tablet's commit until the second process has committed more loads: they
        # land while Spark is converting.
        real_commit = tablet_conversion.TabletConverter._commit_tablet
        held = []

        def commit_after_loads(self, *args, **kwargs):
            if not held:
                held.append(True)
                loader.wait_for_more(3)
            return real_commit(self, *args, **kwargs)

        monkeypatch.setattr(tablet_conversion.TabletConverter, "_commit_tablet", commit_after_loads)
        converted = convert(session, spark, job_id)
        assert held and converted.rows == 40  # history below the boundary only
        load(104)  # VALIDATING
        check(session, spark, job_id)
        load(105)  # VALIDATING, checked
        loader.wait_for_more(2)
        assert swap(session, job_id).state == "FINISHED"
        load(106)  # after the swap
        loader.wait_for_more(3)
    finally:
        loader.finish()

    outcome = loader.lines()
    assert outcome and outcome[-1] == ["stopped"], (outcome[-3:], loader.err.read_text()[-2000:])
    retries = [p for p in outcome if p[0] == "retry"]
    assert all("retry the load" in p[2] for p in retries), retries
    ok = loader.ok()
    keys = [k for k, _txn in ok]
    assert len(keys) == len(set(keys)) >= 10
    expected.update(keys)

    # Loads of the second process committed while the job was RUNNING (between the conversion's
    # first and last tablet commit) and after the swap.
    j = job(session, job_id)
    conversion_txns = sorted(t.txn_id for t in HeavyJobs(session.catalog).converted(job_id).values())
    assert any(j.boundary_txn < txn < conversion_txns[-1] for _k, txn in ok), (j.boundary_txn, conversion_txns, ok)

    assert describe(session, "t")["v"][0] == "INT"
    rows = sql(session, "SELECT id, v FROM t")
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)), "a row was doubled across the swap"
    assert set(ids) == expected, f"lost {sorted(expected - set(ids))[:10]}, unexpected {sorted(set(ids) - expected)[:10]}"
    assert all(v == k for k, v in rows), [r for r in rows if r[0] != r[1]][:5]
    assert len(rows) == len(expected)  # count(*) = count(DISTINCT id) = every committed key


@pytest.mark.spark  # the session fixture shares the run's SparkSession
def test_a_row_that_cannot_be_converted_fails_the_whole_load_during_a_job(session):
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES (1, '1'), (2, '2')")
    job_id = start(session, ALTER)
    j = job(session, job_id)
    files_before = sorted(p for p in session.warehouse.rglob("*") if p.is_file())
    snapshot_before = session.catalog.snapshot("t").files

    with pytest.raises(StatementError) as err:
        sql(session, "INSERT INTO t VALUES (3, '3'), (4, 'four'), (5, '5')")
    message = one_line(err.value)
    assert "column v" in message and "'four'" in message and f"job {job_id}" in message, message
    assert "nothing was loaded" in message

    # None of its rows is visible, in the origin or the shadow index, and no file is left behind.
    assert session.catalog.snapshot("t").files == snapshot_before
    assert session.catalog.index_snapshot(j.table_id, j.shadow_index_id, 2).files == ()
    assert sorted(p for p in session.warehouse.rglob("*") if p.is_file()) == files_before
    assert sum(f.row_count for f in session.catalog.snapshot("t").files) == 2
    # The job is unaffected and a good load still goes through, dual-written.
    assert job(session, job_id).state == "PENDING"
    sql(session, "INSERT INTO t VALUES (3, '3')")
    assert len(session.catalog.index_snapshot(j.table_id, j.shadow_index_id, 2).files) == 1


@pytest.mark.spark  # the session fixture shares the run's SparkSession
def test_the_first_bad_row_of_the_input_is_named_whichever_tablet_it_falls_in(session):
    """Dual write converts the origin's tablet slices one by one; the error still names the first
    bad row in input order, also when a tablet that starts earlier holds a later bad row."""
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES (0, '0')")
    job_id = start(session, ALTER)
    types = (session.catalog.schema_version(job(session, job_id).table_id, 1).column("id").type,)
    keys = list(range(1, 41))
    first_tablet = bucket_of((keys[0],), types, 4)
    early = next(k for k in keys[1:] if bucket_of((k,), types, 4) != first_tablet)  # in a later slice
    late = next(k for k in reversed(keys) if bucket_of((k,), types, 4) == first_tablet)  # in the first slice
    assert keys.index(early) < keys.index(late), (early, late)
    values = ", ".join(f"({k}, '{'bad' + str(k) if k in (early, late) else k}')" for k in keys)
    with pytest.raises(StatementError) as err:
        sql(session, f"INSERT INTO t VALUES {values}")
    message = one_line(err.value)
    assert f"value 'bad{early}' (row {keys.index(early) + 1})" in message, message
    assert sum(f.row_count for f in session.catalog.snapshot("t").files) == 1


@pytest.mark.spark
def test_with_on_cast_error_null_a_dual_written_bad_value_becomes_null_in_the_shadow(session, spark):
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES (1, '1'), (2, 'two')")
    job_id = start(session, ALTER, on_cast_error="null")
    sql(session, "INSERT INTO t VALUES (3, '3'), (4, 'four')")
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == ((1, "1"), (2, "two"), (3, "3"), (4, "four"))
    to_validating(session, spark, job_id)
    checked = check(session, spark, job_id)
    swap(session, job_id)
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == ((1, 1), (2, None), (3, 3), (4, None))
    msg = job(session, job_id).msg
    match = re.search(r"(\d+) values that could not be converted became NULL", msg)
    assert match, msg
    # Two values became NULL through this job: 'two' (history) and 'four' (dual-written).
    assert int(match.group(1)) == 2 and checked.nulled == 2, msg


def test_a_load_past_the_boundary_that_did_not_dual_write_is_refused_at_commit(settings, monkeypatch):
    session = Session(settings)
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES (1, '1')")
    job_id = start(session, ALTER)
    j = job(session, job_id)
    real = HeavyJobs.dual_write_target
    missing = [True]

    def missed(self, table_id):  # every try of the first INSERT misses the job (it runs again when overtaken)
        return None if missing else real(self, table_id)

    monkeypatch.setattr(HeavyJobs, "dual_write_target", missed)
    files_before = sorted(p for p in session.warehouse.rglob("*") if p.is_file())
    with pytest.raises(StatementError) as err:
        sql(session, "INSERT INTO t VALUES (2, '2')")
    message = one_line(err.value)
    assert f"job {job_id}" in message and "cannot commit" in message, message
    states = [state for _, state, _ in transactions(session, "t")]
    assert states.count("ABORTED") == LOAD_OVERTAKEN_TRIES and states[-LOAD_OVERTAKEN_TRIES:] == ["ABORTED"] * LOAD_OVERTAKEN_TRIES, states
    assert sum(f.row_count for f in session.catalog.snapshot("t").files) == 1
    missing.clear()
    delete_dropped_files(session)  # deferred: GC deletes the refused load's files after the retention
    assert sorted(p for p in session.warehouse.rglob("*") if p.is_file()) == files_before
    # The next load dual-writes and commits.
    sql(session, "INSERT INTO t VALUES (2, '2')")
    assert sum(f.row_count for f in session.catalog.snapshot("t").files) == 2
    assert sum(f.row_count for f in session.catalog.index_snapshot(j.table_id, j.shadow_index_id, 2).files) == 1


@pytest.mark.spark
def test_a_load_into_a_new_tablet_after_the_conversion_does_not_fail_validation(session, spark):
    """Origin tablets are created by the first load that writes one; a dual-written load into a
    bucket the history never used, landing after the conversion, is not history to convert."""
    sql(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 8")
    sql(session, "INSERT INTO t VALUES (1, '1')")
    version = session.catalog.current_schema("t")[1]
    id_type = version.column("id").type
    used = bucket_of((1,), (id_type,), 8)
    fresh = next(k for k in range(2, 100) if bucket_of((k,), (id_type,), 8) != used)
    job_id = start(session, ALTER)
    to_validating(session, spark, job_id)
    origin = job(session, job_id).origin_index_id
    assert len(session.catalog.tablets(origin)) == 1
    sql(session, f"INSERT INTO t VALUES ({fresh}, '{fresh}')")
    assert len(session.catalog.tablets(origin)) == 2
    check(session, spark, job_id)  # raises JobCancelled if the new tablet is counted as unconverted
    assert swap(session, job_id).state == "FINISHED"
    assert sql(session, "SELECT id, v FROM t ORDER BY id") == ((1, 1), (fresh, fresh))


@pytest.mark.spark
def test_a_null_loaded_during_the_job_into_a_column_becoming_not_null_is_refused(session, spark):
    """MODIFY ... NOT NULL: history is checked by validation; a NULL dual-written afterwards (here
    while the job waits in READY_TO_SWAP) cannot be converted to the new version and must fail the
    load, or the swapped table would hold a NULL in a NOT NULL column."""
    sql(session, TABLE)
    sql(session, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    done = sql(session, 'ALTER TABLE t MODIFY COLUMN v STRING NOT NULL PROPERTIES ("postpone_swap" = "true")')
    assert "READY_TO_SWAP" in done, done
    failure = None
    try:
        sql(session, "INSERT INTO t VALUES (3, NULL)")
    except Exception as exc:  # noqa: BLE001 - the kind of error is asserted below
        failure = exc
    # Nothing of the load is visible and the swapped table holds no NULL in v.
    assert sum(f.row_count for f in session.catalog.snapshot("t").files) == 2
    sql(session, "RESUME ALTER TABLE COLUMN FROM t")
    assert describe(session, "t")["v"][1] == "NO"
    assert sql(session, "SELECT id FROM t WHERE v IS NULL") == (), "NOT NULL column v holds a NULL after the swap"
    assert failure is not None, "the load with a NULL for v was accepted during the job"
    # The refusal is the session's one clear line naming the column, like any other bad row.
    assert isinstance(failure, StatementError), f"{type(failure).__module__}.{type(failure).__name__}: {failure}"
    assert "column v" in one_line(failure), failure
