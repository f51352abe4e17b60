"""`Table.alter` and its `AlterJobHandle`: a lightweight change done on return, a heavyweight one
driven in a thread (state, progress, wait, a postponed swap, cancel, a timeout), and refusals that
change nothing."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

import alterflow
from alterflow.api.alter_job_handle import JobWaitTimeout

ROWS = 200_000


@pytest.fixture
def orders(api):
    api.sql("CREATE TABLE orders (id BIGINT NOT NULL, code STRING, amount INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4")
    t = api.table("orders")
    t.append(pa.table({"id": range(ROWS), "code": [str(i % 1000) for i in range(ROWS)], "amount": range(ROWS)}))
    return t


def test_a_light_change_is_finished_on_return(orders):
    job = orders.alter("ADD COLUMN note STRING DEFAULT 'n'", timeout=60)
    assert (job.state, job.done, job.progress) == ("FINISHED", True, "")
    assert job.wait().to_version == 2 and job.job.kind == "LIGHT"
    assert orders.scan(columns=["note"], where="id = 5").to_arrow().to_pylist() == [{"note": "n"}]
    whole = orders.alter("ALTER TABLE Orders RENAME COLUMN note TO remark;")
    assert whole.wait().to_version == 3


def test_a_heavy_change_runs_on_and_is_waited_for(orders):
    job = orders.alter("MODIFY COLUMN code INT")
    seen = set()
    while not job.done:
        seen.add(job.state)
        time.sleep(0.02)
    done = job.wait(timeout=0)
    assert done.state == "FINISHED" and done.kind == "HEAVY", done.msg
    assert seen <= {"PENDING", "WAITING_TXN", "RUNNING", "VALIDATING", "FINISHED"} and seen & {"PENDING", "RUNNING", "VALIDATING"}
    assert job.progress.startswith("tablets 4/4, rows 200.0K/200.0K")
    got = orders.scan(columns=["code"], where="id IN (1, 999, 1001)").to_arrow()
    assert got.schema.field("code").type == pa.int32() and sorted(got.column("code").to_pylist()) == [1, 1, 999]


def test_a_postponed_swap_waits_for_resume(orders, api):
    job = orders.alter("MODIFY COLUMN code INT", postpone_swap=True)
    assert job.wait().state == "READY_TO_SWAP"
    assert orders.schema().column("code").type.sql() == "STRING"
    api.sql("RESUME ALTER TABLE COLUMN FROM orders")
    assert job.state == "FINISHED" and orders.schema().column("code").type.sql() == "INT"


def test_cancel_and_timeout(orders):
    job = orders.alter("MODIFY COLUMN code INT")
    with pytest.raises(JobWaitTimeout, match=r"^ALTER TABLE orders: job \d+ is still \w+ after 0.001 s; it goes on$"):
        job.wait(timeout=0.001)
    cancelled = job.cancel()
    assert cancelled.state == "CANCELLED" and cancelled.msg == "cancelled through the Python API"
    assert job.wait().state == "CANCELLED"  # cancelled here: not an error
    assert orders.schema().version == 1 and orders.scan(where="id = 3").to_arrow().column("code").to_pylist() == ["3"]
    with pytest.raises(alterflow.UserError, match=r"is CANCELLED; only an unfinished job can be cancelled"):
        job.cancel()
    with pytest.raises(alterflow.UserError, match=r"^wait: timeout is a number of seconds, not -1$"):
        job.wait(timeout=-1)


@pytest.mark.parametrize(
    "statement, properties, message",
    [
        ("DROP COLUMN id", {}, "ALTER TABLE orders: cannot drop column id: it is a primary-key column"),
        ("ALTER TABLE other ADD COLUMN c INT", {}, "alter of orders: the statement alters other, not orders"),
        ("ADD COLUMN c INT; ADD COLUMN d INT", {}, "alter of orders: give one ALTER TABLE statement or its clauses"),
        ("EXPLAIN ALTER TABLE orders ADD COLUMN c INT", {}, "alter of orders: give one ALTER TABLE statement or its clauses"),
        ("", {}, "alter of orders: give an ALTER TABLE statement or its clauses"),
        ("FROB c", {}, "syntax error"),
        ("ADD COLUMN c INT", {"timeout": "soon"}, 'property "timeout" must be a positive integer'),
        ("ADD COLUMN c INT", {"nope": 1}, "nope"),
        ("ADD COLUMN c INT", {"timeout": [1]}, "alter: property timeout takes text, a number or a boolean, not list"),
    ],
)
def test_a_refused_change_is_one_line_and_changes_nothing(orders, api, statement, properties, message):
    api.sql("CREATE TABLE other (x INT)")
    with pytest.raises(alterflow.UserError) as caught:
        orders.alter(statement, **properties)
    assert message in str(caught.value) and "\n" not in str(caught.value), str(caught.value)
    assert orders.schema().version == 1 and orders.jobs() == []


def test_explain_changes_nothing(orders):
    plan = orders.explain("MODIFY COLUMN code INT")
    assert plan.columns[:2] == ("Clause", "Kind") and plan.rows[0][:2] == ("MODIFY COLUMN code INT", "HEAVY")
    analyzed = orders.explain("MODIFY COLUMN code INT", analyze=True)
    assert analyzed.rows and orders.jobs() == [] and orders.schema().version == 1


def test_a_job_cancelled_elsewhere_is_done_and_wait_raises_its_line(orders, api):
    job = orders.alter("MODIFY COLUMN code INT")
    while job.state == "PENDING":
        time.sleep(0.01)
    api.sql("CANCEL ALTER TABLE COLUMN FROM orders")  # another user's hand, not this handle's
    deadline = time.monotonic() + 60
    while not job.done:
        assert time.monotonic() < deadline, job
        time.sleep(0.02)
    assert job.state == "CANCELLED"
    with pytest.raises(alterflow.UserError) as caught:
        job.wait()
    assert str(caught.value) == f"ALTER TABLE orders: job {job.id} was cancelled: cancelled by CANCEL ALTER TABLE COLUMN"
    assert orders.schema().version == 1
