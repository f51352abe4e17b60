"""A load its driver may run again writes its rows once (alterflow.load.load_once): a run that finds
its label committed writes nothing and reports that load's rows (a dual write's second copy, into
a heavyweight job's new index, not counted); an earlier run's transaction still open is aborted
first, so its writer can neither add a file nor commit. Both catalogs."""

from __future__ import annotations

import pyarrow as pa
import pytest
from sqlalchemy import func, select

from alterflow.api.connection import Connection
from alterflow.catalog.catalog_errors import TransactionStateError
from alterflow.catalog.labelled_loads import committed_load
from alterflow.catalog.models import DataFileRow, TabletRow
from alterflow.load.load_once import load_once
from tests.support.catalog_rows import txn_state
from tests.support.heavy_jobs import start, wait

LABEL = "airflow pipeline manual__1 load_orders"


@pytest.fixture
def af(settings):
    connection = Connection(settings)
    connection.sql("CREATE TABLE orders (id INT NOT NULL, code STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2")
    connection.sql("INSERT INTO orders VALUES (1, '10')")
    yield connection
    connection.close()


def rows(n: int, first: int = 100) -> pa.Table:
    return pa.table({"id": list(range(first, first + n)), "code": [str(i) for i in range(n)]})


def test_a_second_run_writes_nothing_and_reports_the_first(af):
    orders, table_id = af.table("orders"), af.catalog.table("orders").id
    calls = []

    def write():
        calls.append(1)
        done = orders.append(rows(40), label=LABEL)
        return done.txn_id, done.rows

    first = load_once(af.catalog, table_id, LABEL, write)
    again = load_once(af.catalog, table_id, LABEL, write)
    assert (first.rows, first.earlier, again.rows, again.earlier, again.txn_id) == (40, False, 40, True, first.txn_id)
    assert len(calls) == 1 and orders.scan(columns=["id"]).to_arrow().num_rows == 41


def test_an_earlier_runs_open_transaction_is_aborted_before_this_run_writes(af):
    table_id = af.catalog.table("orders").id
    stale = af.catalog.begin_transaction(table_id, LABEL, 3600)  # a lost run, or one still writing
    done = load_once(af.catalog, table_id, LABEL, lambda: (lambda r: (r.txn_id, r.rows))(af.table("orders").append(rows(5), label=LABEL)))
    assert txn_state(af.session, stale) == "ABORTED" and not done.earlier
    with pytest.raises(TransactionStateError):
        af.catalog.commit_transaction(stale)  # the earlier run's writer cannot commit any more


def test_a_dual_written_load_counts_its_rows_once(af):
    """A load above a heavyweight job's boundary writes each row twice (the table's index and the
    job's new one): the load is still its rows once."""
    job_id = start(af.session, "ALTER TABLE orders MODIFY COLUMN code INT")
    wait(af.session, job_id)  # RUNNING: loads from now on are dual-written
    done = af.table("orders").append(rows(30), label=LABEL)
    found = committed_load(af.catalog, af.catalog.table("orders").id, LABEL)
    assert (found.txn_id, found.rows) == (done.txn_id, done.rows) == (done.txn_id, 30)
    with af.catalog.db_session() as s:
        indexes = s.scalar(
            select(func.count(func.distinct(TabletRow.index_id)))
            .join(DataFileRow, DataFileRow.tablet_id == TabletRow.id)
            .where(DataFileRow.txn_id == done.txn_id)
        )
    assert indexes == 2  # it was dual-written indeed
