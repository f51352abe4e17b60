"""The process's Spark session (alterflow/spark_session.py): what starting it leaves in place."""

from __future__ import annotations

import signal

import pytest

from alterflow.spark_session import _own_sigint_handler_kept


def pyspark_handler(_signum, _frame):
    raise KeyboardInterrupt()


@pytest.fixture
def sigint_handler_restored():
    before = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, before)


def test_a_handler_that_cancels_spark_jobs_itself_is_put_back_after_pyspark_replaced_it(sigint_handler_restored):
    def commands_handler(_signum, _frame):
        raise KeyboardInterrupt()

    commands_handler.cancels_spark_jobs = True
    signal.signal(signal.SIGINT, commands_handler)
    with _own_sigint_handler_kept():
        signal.signal(signal.SIGINT, pyspark_handler)  # what SparkContext's start does in the main thread
    assert signal.getsignal(signal.SIGINT) is commands_handler


@pytest.mark.parametrize("other", [signal.default_int_handler, lambda _signum, _frame: None], ids=["python", "notebook"])
def test_any_other_handler_gives_way_to_pysparks(sigint_handler_restored, other):
    signal.signal(signal.SIGINT, other)
    with _own_sigint_handler_kept():
        signal.signal(signal.SIGINT, pyspark_handler)
    assert signal.getsignal(signal.SIGINT) is pyspark_handler
