"""Loads (docs/semantics.md, "Concepts": Transaction, Data file; "Bad input"): one transaction each, visible all at once or never,
no orphan file, increasing ids, Parquet field ids = column ids, paths built from ids only.
No Spark: loads and lightweight ALTERs are catalog work and Arrow writes."""

from __future__ import annotations

import logging
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from datetime import timedelta
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import select

import alterflow.load.local_load as load_module
from alterflow.catalog.catalog import Catalog, utcnow
from alterflow.catalog.database import make_engine
from alterflow.catalog.models import DataFileRow, TransactionRow
from alterflow.engine.session import Session, StatementError
from alterflow.gc import gc_steps
from alterflow.store.tablets import TXN_COLUMN
from alterflow.store.warehouse import MARKER
from tests.support.statements import sql

ORDERS = (
    "CREATE TABLE customer_orders (order_id INT NOT NULL, region VARCHAR(8) NOT NULL, amount DECIMAL(8,2),"
    " note STRING, PRIMARY KEY (order_id, region)) PARTITION BY (region) DISTRIBUTED BY HASH(order_id) BUCKETS 4"
)
PATH_RE = re.compile(r"t(\d+)/i(\d+)/b(\d+)/(\d+)-\d{24}-[0-9a-f]{32}\.parquet")


def orders(n: int, start: int = 0) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "order_id": ids,
            "region": ["eu" if i % 2 else "us" for i in ids],
            "amount": [str(Decimal(i) / 4) for i in ids],
            "note": [f"order {i}" for i in ids],
        }
    )


@pytest.fixture
def orders_session(catalog_session):
    """`catalog_session` with the ORDERS table; no Spark."""
    sql(catalog_session, ORDERS)
    return catalog_session


def other_catalog(session: Session) -> Catalog:
    """Another process's view of the same catalog: its own engine and connections."""
    return Catalog(engine=make_engine(session.settings.catalog_url))


def files_on_disk(session: Session) -> list[str]:
    """Every file of the warehouse but its owner marker."""
    return sorted(str(p.relative_to(session.warehouse)) for p in session.warehouse.rglob("*") if p.is_file() and p.name != MARKER)


def gc_files(session: Session) -> None:
    """GC's file step with no retention: what a run an hour later deletes."""
    gc_steps.delete_files(session.catalog, session.warehouse, 0)


def transactions(session: Session) -> list[tuple[int, str, str | None]]:
    with session.catalog.db_session() as s:
        return [
            tuple(r) for r in s.execute(select(TransactionRow.id, TransactionRow.state, TransactionRow.reason).order_by(TransactionRow.id))
        ]


def txn_of(done) -> int:
    return int(re.search(r"\(transaction (\d+)\)", done.message).group(1))


def test_a_load_becomes_visible_all_at_once(orders_session, monkeypatch):
    reader = other_catalog(orders_session)
    commit = orders_session.catalog.commit_transaction
    seen = {}

    def observed_commit(txn_id, *args, **kwargs):
        # every file is written, none is visible yet, to this process or to another one
        seen["disk"] = files_on_disk(orders_session)
        seen["visible"] = (orders_session.catalog.snapshot("customer_orders").files, reader.snapshot("customer_orders").files)
        seen["stats"] = reader.table_stats(reader.table("customer_orders").id)
        return commit(txn_id, *args, **kwargs)

    monkeypatch.setattr(orders_session.catalog, "commit_transaction", observed_commit)
    done = orders_session.load("customer_orders", orders(40), label="test", by_name=True)
    assert seen["visible"] == ((), ()) and seen["stats"] == (0, 0)
    assert len(seen["disk"]) == 8  # 2 regions x 4 buckets, all on disk before the commit

    snap = reader.snapshot("customer_orders")
    assert len(snap.files) == 8 and {f.txn_id for f in snap.files} == {txn_of(done)}
    assert sorted(f.path for f in snap.files) == seen["disk"] == files_on_disk(orders_session)
    assert reader.table_stats(snap.table.id)[0] == 40 == sum(f.row_count for f in snap.files)
    assert all(f.byte_size == (orders_session.warehouse / f.path).stat().st_size for f in snap.files)
    assert transactions(orders_session) == [(txn_of(done), "COMMITTED", None)]


def test_a_failed_write_aborts_and_leaves_no_file(orders_session, monkeypatch):
    real_write = load_module.write_parquet
    calls = []

    def flaky_write(warehouse, relative, data):
        calls.append(relative)
        if len(calls) == 1:
            return real_write(warehouse, relative, data)
        path = pathlib.Path(warehouse) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_name(path.name + ".tmp").write_bytes(b"half a parquet file")  # died mid-write
        raise OSError("disk full (test)")

    monkeypatch.setattr(load_module, "write_parquet", flaky_write)
    with pytest.raises(OSError, match="disk full"):
        orders_session.load("customer_orders", orders(40), label="test", by_name=True)
    assert len(calls) >= 2  # the writer threads may have begun a few more files before the failure showed
    ((txn_id, state, reason),) = transactions(orders_session)
    assert state == "ABORTED" and "disk full" in reason
    assert orders_session.catalog.snapshot("customer_orders").files == ()
    assert orders_session.catalog.table_stats(orders_session.catalog.table("customer_orders").id) == (0, 0)
    with orders_session.catalog.db_session() as s:
        states = set(s.scalars(select(DataFileRow.state).where(DataFileRow.txn_id == txn_id)))
    assert states == {"DELETED"}
    assert files_on_disk(orders_session), "deferred: GC deletes an aborted load's files after the retention"
    gc_files(orders_session)
    assert files_on_disk(orders_session) == []  # neither the written file nor the .tmp stays behind

    # the table is fine afterwards, through INSERT as well
    monkeypatch.setattr(load_module, "write_parquet", real_write)
    done = list(orders_session.run("INSERT INTO customer_orders VALUES (1, 'eu', 1.25, 'x'), (2, 'us', NULL, NULL)"))[-1]
    assert txn_of(done) > txn_id
    assert orders_session.catalog.table_stats(orders_session.catalog.table("customer_orders").id)[0] == 2


def test_a_load_aborted_behind_its_back_fails_and_leaves_nothing(orders_session, monkeypatch):
    """Between registering its files and committing, the transaction is aborted by someone else (the
    timeout sweep of another process). The load fails with a clear line; nothing becomes visible,
    and the files it wrote after the abort do not stay behind."""
    other = other_catalog(orders_session)
    register = orders_session.catalog.register_files
    swept = []

    def register_then_time_out(txn_id, files):
        register(txn_id, files)
        if not swept:  # after the first files are recorded (a load records files before writing them)
            later = utcnow() + timedelta(seconds=orders_session.settings.txn_timeout_s + 60)
            swept.extend(other.abort_expired_transactions(now=later))
            assert sorted(swept) == sorted(f.path for f in files)  # the other process deletes these paths
            assert not any((orders_session.warehouse / path).exists() for path in swept)  # none is written yet

    monkeypatch.setattr(orders_session.catalog, "register_files", register_then_time_out)
    values = ", ".join(f"({i}, '{'eu' if i % 2 else 'us'}', {i}.5, 'n{i}')" for i in range(40))
    with pytest.raises(StatementError) as info:
        list(orders_session.run(f"INSERT INTO customer_orders VALUES {values}"))
    message = str(info.value)
    assert "\n" not in message and "ABORTED" in message and "timed out" in message, message
    ((_txn, state, _reason),) = transactions(orders_session)
    assert state == "ABORTED"
    assert orders_session.catalog.snapshot("customer_orders").files == ()
    assert other.table_stats(other.table("customer_orders").id) == (0, 0)
    gc_files(orders_session)
    assert files_on_disk(orders_session) == [], "files written after the abort are orphaned: GC takes them"


def test_transaction_ids_increase(orders_session, monkeypatch):
    list(orders_session.run("CREATE TABLE other_table (a INT)"))
    ids = [txn_of(orders_session.load("customer_orders", orders(3), label="a", by_name=True))]
    ids.append(txn_of(list(orders_session.run("INSERT INTO other_table VALUES (1)"))[-1]))

    def failing_write(*_args):
        raise OSError("no space (test)")

    monkeypatch.setattr(load_module, "write_parquet", failing_write)
    with pytest.raises(OSError):
        orders_session.load("customer_orders", orders(3, start=100), label="b", by_name=True)
    monkeypatch.undo()
    aborted = transactions(orders_session)[-1]
    assert aborted[1] == "ABORTED"
    ids.append(aborted[0])
    ids.append(txn_of(list(orders_session.run("INSERT INTO customer_orders VALUES (7, 'eu', 1, 'x')"))[-1]))
    ids.append(txn_of(orders_session.load("other_table", pa.table({"a": [5, 6]}), label="c", by_name=True)))
    assert ids == sorted(ids) and len(set(ids)) == len(ids), ids  # one increasing sequence over all tables
    assert [t[0] for t in transactions(orders_session)] == ids


def test_data_files_carry_field_ids_and_id_only_paths(orders_session):
    list(
        orders_session.run("""
        CREATE TABLE secret_customer_table (alpha INT, beta STRING, gamma DOUBLE);
        INSERT INTO secret_customer_table VALUES (1, 'b', 1.5);
        ALTER TABLE secret_customer_table DROP COLUMN beta;
        ALTER TABLE secret_customer_table ADD COLUMN delta DATE;
        ALTER TABLE secret_customer_table RENAME COLUMN alpha TO alpha_renamed;
        INSERT INTO secret_customer_table VALUES (2, 2.5, '2024-01-01');
        ALTER TABLE secret_customer_table ADD COLUMN beta STRING DEFAULT 'new';
        INSERT INTO secret_customer_table (alpha_renamed) VALUES (3);
    """)
    )
    snap = orders_session.catalog.snapshot("secret_customer_table")
    expected_ids = {c.name: c.id for c in snap.current.columns}
    assert expected_ids == {"alpha_renamed": 1, "gamma": 3, "delta": 4, "beta": 5}  # ids never reused
    by_version = {}
    for f in snap.files:
        match = PATH_RE.fullmatch(f.path)
        assert match, f.path
        assert (int(match[1]), int(match[2]), int(match[4])) == (snap.table.id, snap.table.current_index_id, f.txn_id)
        assert int(match[3]) == f.tablet_id
        for word in ("secret", "customer", "alpha", "beta", "gamma", "delta"):
            assert word not in f.path
        schema = pq.read_schema(orders_session.warehouse / f.path)
        by_version[f.schema_version] = {field.name: int(field.metadata[b"PARQUET:field_id"]) for field in schema}
        assert TXN_COLUMN not in schema.names  # no primary key, no hidden column
    assert by_version == {
        1: {"alpha": 1, "beta": 2, "gamma": 3},
        4: {"alpha_renamed": 1, "gamma": 3, "delta": 4},
        5: {"alpha_renamed": 1, "gamma": 3, "delta": 4, "beta": 5},
    }


def test_primary_key_files_carry_the_hidden_txn_column(orders_session):
    done = orders_session.load("customer_orders", orders(10), label="test", by_name=True)
    snap = orders_session.catalog.snapshot("customer_orders")
    assert snap.files
    for f in snap.files:
        assert PATH_RE.fullmatch(f.path) and "customer" not in f.path and "order" not in f.path
        data = pq.read_table(orders_session.warehouse / f.path)
        assert data.column_names == ["order_id", "region", "amount", "note", TXN_COLUMN]
        assert set(data.column(TXN_COLUMN).to_pylist()) == {txn_of(done)}
        ids = {field.name: field.metadata[b"PARQUET:field_id"] for field in data.schema if field.name != TXN_COLUMN}
        assert ids == {"order_id": b"1", "region": b"2", "amount": b"3", "note": b"4"}


LIGHT_SCRIPT = (
    "CREATE TABLE light (id INT NOT NULL, v VARCHAR(5), PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2;"
    " INSERT INTO light VALUES (1, 'a'), (2, 'b');"
    " ALTER TABLE light ADD COLUMN w INT DEFAULT 7, MODIFY COLUMN v VARCHAR(10), RENAME COLUMN v TO v2;"
    " ALTER TABLE light DROP COLUMN w;"
    " DESCRIBE light; SHOW SCHEMA VERSIONS FROM light; SHOW ALTER TABLE COLUMN FROM light;"
    " EXPLAIN ALTER TABLE light ADD COLUMN z INT"
)


def test_lightweight_work_starts_no_jvm(tmp_path):
    """DDL, INSERT ... VALUES, lightweight ALTERs, DESCRIBE and SHOW never import pyspark. Java is made
    unusable (JAVA_HOME points nowhere), so starting Spark would fail; a SELECT proves that it does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(tmp_path / "cli"), JAVA_HOME=str(tmp_path / "no-java"), SPARK_HOME=str(tmp_path / "no-spark"))
    cli = subprocess.run(
        [str(pathlib.Path(sys.executable).parent / "alterflow"), "sql", "-e", LIGHT_SCRIPT],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert cli.returncode == 0 and cli.stderr == "", cli.stderr
    assert "| v2 " in cli.stdout and "| w " not in cli.stdout

    snippet = textwrap.dedent(f"""
        import sys
        from alterflow.engine.session import Session
        from alterflow import spark_session
        results = list(Session().run({LIGHT_SCRIPT!r}))
        print(len(results), "pyspark" in sys.modules, spark_session.spark_started())
        try:
            list(Session().run("SET engine = spark; SELECT 1 AS one"))  # a small query alone runs in the process
            print("control: spark started")
        except BaseException as exc:
            print("control: spark could not start:", type(exc).__name__)
    """)
    env["ALTERFLOW_HOME"] = str(tmp_path / "py")
    proc = subprocess.run([sys.executable, "-c", snippet], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "8 False False", proc.stdout
    assert lines[-1].startswith("control: spark could not start"), proc.stdout


@pytest.mark.parametrize("failures", [1, load_module.ABORT_TRIES])
def test_a_failed_loads_abort_is_tried_again_after_a_catalog_error(catalog_session, monkeypatch, failures):
    """A load refused at commit aborts its transaction; a catalog error in that abort (a lock
    conflict on a busy catalog) is tried again, so the transaction does not wait for its lease to
    end. When every try fails the load still fails with its own line, nothing of it visible, and
    the lease's end lets the next look abort it."""
    from sqlalchemy.exc import OperationalError

    from alterflow.catalog.catalog_errors import TransactionStateError
    from alterflow.catalog.heavy_jobs import HeavyJobs

    s = catalog_session
    sql(s, "CREATE TABLE t (id BIGINT, v INT)")
    monkeypatch.setattr(load_module, "ABORT_PAUSE_S", 0.01)
    real_abort, aborts = Catalog.abort_transaction, []

    def flaky_abort(self, txn_id, reason):
        aborts.append(txn_id)
        if len(aborts) <= failures:
            raise OperationalError("UPDATE af_transactions", {}, Exception("deadlock detected"))
        return real_abort(self, txn_id, reason)

    def refused_commit(self, txn_id, *args, **kwargs):
        raise TransactionStateError(f"transaction {txn_id} cannot commit: refused by the test")

    monkeypatch.setattr(Catalog, "abort_transaction", flaky_abort)
    monkeypatch.setattr(HeavyJobs, "commit_load", refused_commit)
    with pytest.raises(TransactionStateError, match="cannot commit: refused by the test"):
        s.load("t", pa.table({"id": pa.array([1, 2], pa.int64()), "v": pa.array([1, 2], pa.int32())}), label="refused")
    with s.catalog.db_session() as db:
        [state] = db.scalars(select(TransactionRow.state).where(TransactionRow.label == "refused")).all()
    assert str(state) == ("ABORTED" if failures < load_module.ABORT_TRIES else "PREPARE")
    assert len(aborts) == min(failures + 1, load_module.ABORT_TRIES)
    monkeypatch.undo()
    assert sql(s, "SELECT count(*) FROM t") == ((0,),)


def test_a_failed_loads_abort_on_a_catalog_that_went_away_adds_no_line(catalog_session, monkeypatch, caplog):
    """The catalog's server going away (a restart) fails the load and, most likely, its abort too:
    the abort is tried ABORT_TRIES times, then the transaction is left PREPARE for its lease's end
    with an INFO record only, so that the command shows the load's one line and no second one (a
    CLI prints warnings on stderr)."""
    from alterflow.catalog.catalog_errors import CatalogLost, TransactionStateError
    from alterflow.catalog.heavy_jobs import HeavyJobs

    s = catalog_session
    sql(s, "CREATE TABLE t (id BIGINT, v INT)")
    monkeypatch.setattr(load_module, "ABORT_PAUSE_S", 0.01)
    aborts = []

    def lost_abort(self, txn_id, reason):
        aborts.append(txn_id)
        raise CatalogLost("the catalog database stopped answering (Connection refused)", "Connection refused")

    def refused_commit(self, txn_id, *args, **kwargs):
        raise TransactionStateError(f"transaction {txn_id} cannot commit: refused by the test")

    monkeypatch.setattr(Catalog, "abort_transaction", lost_abort)
    monkeypatch.setattr(HeavyJobs, "commit_load", refused_commit)
    with caplog.at_level(logging.INFO, logger=load_module.log.name), pytest.raises(TransactionStateError, match="refused by the test"):
        s.load("t", pa.table({"id": pa.array([1], pa.int64()), "v": pa.array([1], pa.int32())}), label="lost")
    assert len(aborts) == load_module.ABORT_TRIES
    assert [r.levelno for r in caplog.records if r.name == load_module.log.name] == [logging.INFO], caplog.text
    assert "stays PREPARE until its lease runs out" in caplog.text
    with s.catalog.db_session() as db:
        [state] = db.scalars(select(TransactionRow.state).where(TransactionRow.label == "lost")).all()
    assert str(state) == "PREPARE"
