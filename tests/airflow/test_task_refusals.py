"""The Airflow tasks fail for good on a refusal and retry on anything else: the one rule is
`UserError`, the same class the CLI and the session catch, so no hand-written list can miss a
refusal (a bad value, a query error, a load's bad input) or take a bug for one; a `UserError` that
is `transient` (the catalog's server going away) is retried like any passing fault."""

from __future__ import annotations

import pytest
from airflow.sdk.exceptions import AirflowFailException

from alterflow.airflow import tasks
from alterflow.airflow.conf import BadRunConf
from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.load.inputs import LoadInputError
from alterflow.read.query_binding import QueryError
from alterflow.values.types import InvalidValue


@pytest.mark.parametrize(
    "refusal",
    [
        InvalidValue("value 'x' is not a valid INT"),
        QueryError("unknown column nope"),
        LoadInputError("bad CSV"),
        BadRunConf("param table: missing"),
        UnknownObject("unknown table t"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_refusal_fails_the_task_with_its_line(refusal):
    with pytest.raises(AirflowFailException) as failed, tasks.refusals_fail_the_task():
        raise refusal
    assert str(failed.value) == str(refusal)


def test_anything_else_is_left_for_the_retries():
    with pytest.raises(KeyError), tasks.refusals_fail_the_task():
        raise KeyError("no such thing")


def test_a_catalog_server_going_away_is_left_for_the_retries():
    """CatalogLost is a UserError (one line in the CLI) but transient: the task is retried."""
    from alterflow.catalog.catalog_errors import CatalogLost

    lost = CatalogLost("the catalog database stopped answering (connection failed: refused); ...", "connection failed: refused")
    with pytest.raises(CatalogLost), tasks.refusals_fail_the_task():
        raise lost
