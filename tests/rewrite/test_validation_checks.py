"""The one list of validation checks (`alterflow.rewrite.validation_checks`): the Great Expectations
suites are made from it, the analysis of today's data evaluates each of its checks (or says why no
data can fail it), and the primary-key check counts keys a retype makes equal, as validation would."""

from __future__ import annotations

import dataclasses

import pytest

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.rewrite.cast_analysis import analyze_local, analyze_spark
from alterflow.rewrite.validation_checks import (
    BY_CONSTRUCTION,
    ON_DATA,
    CheckFailure,
    CheckKind,
    FailedSample,
    Suite,
    validation_checks,
)
from alterflow.values.types import parse_type
from tests.support.heavy_jobs import sql

VERSION = SchemaVersion(
    table_id=1,
    version=2,
    columns=(
        Column(1, "id", parse_type("BIGINT"), nullable=False),
        Column(2, "v", parse_type("INT"), nullable=False),
        Column(3, "w", parse_type("STRING")),
        Column(4, "region", parse_type("STRING"), nullable=False),
    ),
    primary_key=(1, 4),
    distributed_by=(1,),
    sort_key=(3, 1),
)


def test_every_kind_is_read_from_the_data_or_holds_by_construction():
    assert set(ON_DATA).isdisjoint(BY_CONSTRUCTION)
    assert set(ON_DATA) | set(BY_CONSTRUCTION) == set(CheckKind)


@pytest.mark.parametrize("on_cast_error", ["fail", "null", "quarantine"])
def test_the_suites_validation_runs_are_made_of_the_list(on_cast_error):
    from alterflow.expectations import schema_change, validation

    validation._gx_context()  # Great Expectations builds suites only once a context exists, as validate_job does
    checks = validation_checks(VERSION, on_cast_error)
    assert [(c.kind, c.columns) for c in checks] == [
        (CheckKind.TABLET_CONVERTED, ()),
        (CheckKind.ROWS_ACCOUNTED, ()),
        *([(CheckKind.FAILED_CASTS, ())] if on_cast_error == "fail" else []),
        (CheckKind.NOT_NULL, ("id",)),
        (CheckKind.NOT_NULL, ("v",)),
        (CheckKind.NOT_NULL, ("region",)),
        (CheckKind.UNIQUE_KEY, ("id", "region")),
        (CheckKind.SORT_ORDER, ("w", "id")),
    ]
    built = {
        Suite.TABLET_COUNTS: schema_change.tablet_counts_suite(VERSION, on_cast_error),
        Suite.SHADOW_ROWS: schema_change.shadow_rows_suite(VERSION, on_cast_error),
        Suite.CONVERTED_KEYS: schema_change.converted_keys_suite(VERSION, on_cast_error),
        Suite.SORT_ORDER: schema_change.sort_order_suite(VERSION, on_cast_error),
    }
    shown = {suite: [(e.expectation_type, dict(e.configuration.kwargs)) for e in built[suite].expectations] for suite in built}
    assert shown[Suite.TABLET_COUNTS] == [
        ("expect_column_values_to_not_be_null", {"column": "rows_out"}),
        ("expect_column_pair_values_to_be_equal", {"column_A": "rows_in", "column_B": "rows_out"}),
        *(
            [("expect_column_values_to_be_between", {"column": "failed_casts", "min_value": 0, "max_value": 0})]
            if on_cast_error == "fail"
            else []
        ),
    ]
    assert shown[Suite.SHADOW_ROWS] == [("expect_column_values_to_not_be_null", {"column": c}) for c in ("id", "v", "region")]
    assert shown[Suite.CONVERTED_KEYS] == [("expect_compound_columns_to_be_unique", {"column_list": ["id", "region"]})]
    assert shown[Suite.SORT_ORDER] == [("expect_column_values_to_be_in_set", {"column": "in_order", "value_set": [True]})]
    # each expectation names its check by its index in the list (a failure is read back by it)
    checks = validation_checks(VERSION, on_cast_error)
    for suite, built_suite in built.items():
        assert [checks[e.meta["check"]].suite for e in built_suite.expectations] == [suite] * len(built_suite.expectations)
    # a version without NOT NULL columns, key or sort key has no such suite
    bare = SchemaVersion(table_id=1, version=1, columns=(Column(1, "a", parse_type("INT")),))
    assert schema_change.shadow_rows_suite(bare, on_cast_error) is None and schema_change.converted_keys_suite(bare, on_cast_error) is None


def test_an_unknown_on_cast_error_is_refused():
    with pytest.raises(ValueError, match="on_cast_error must be one of fail, null, quarantine, not 'skip'"):
        validation_checks(VERSION, "skip")


def _retyped_key(session):
    """A table keyed by text, and the version that would make its key INT: '01' and '1' become
    the same key, 'x' fails to convert (the planner refuses to retype a key column; the check
    counts what validation would, whatever version it is given)."""
    sql(session, "CREATE TABLE k (code STRING NOT NULL, n INT, PRIMARY KEY (code)) DISTRIBUTED BY HASH(code) BUCKETS 2")
    sql(session, "INSERT INTO k VALUES ('01', 1), ('1', 2), ('x', 3), ('2', 4)")
    snapshot = session.catalog.snapshot("k")
    old = snapshot.current
    columns = tuple(dataclasses.replace(c, type=parse_type("INT")) if c.name == "code" else c for c in old.columns)
    return snapshot, old, dataclasses.replace(old, version=old.version + 1, columns=columns)


def _duplicates(analysis):
    [unique] = [c for c in analysis.checks if c.check.kind is CheckKind.UNIQUE_KEY]
    return unique.count, sorted((s.key["code"], s.value) for s in unique.found.samples)


@pytest.mark.parametrize("on_cast_error", ["fail", "quarantine"])
def test_keys_a_retype_makes_equal_are_counted_with_their_original_keys_locally(catalog_session, on_cast_error):
    snapshot, old, new = _retyped_key(catalog_session)
    analysis = analyze_local(catalog_session.warehouse, snapshot, old, new, on_cast_error)
    assert _duplicates(analysis) == (2, [("01", "1"), ("1", "1")])
    assert sum(f.count for f in analysis.failures.values()) == 1
    # with quarantine the row of 'x' leaves: no NULL key in what stays; with fail its key is NULL
    [not_null] = [c for c in analysis.checks if c.check.kind is CheckKind.NOT_NULL and c.check.columns == ("code",)]
    assert not_null.count == (1 if on_cast_error == "fail" else 0)
    # the key unchanged: nothing to count
    same = analyze_local(catalog_session.warehouse, snapshot, old, dataclasses.replace(old, version=old.version + 1), on_cast_error)
    assert _duplicates(same) == (0, [])


@pytest.mark.spark
def test_keys_a_retype_makes_equal_are_counted_on_spark(session, spark):
    snapshot, old, new = _retyped_key(session)
    analysis = analyze_spark(spark, session.warehouse, snapshot, old, new, "fail")
    assert _duplicates(analysis) == (2, [("01", "1"), ("1", "1")])
    assert [(c.check.columns, c.count) for c in analysis.checks if c.check.kind is CheckKind.NOT_NULL] == [(("code",), 1)]


def test_a_failed_check_reads_in_the_users_words():
    checks = {}
    for check in validation_checks(VERSION, "fail"):
        checks.setdefault(check.kind, check)  # the first of a kind: NOT NULL column id
    failed_casts = CheckFailure(
        checks[CheckKind.FAILED_CASTS],
        10000,
        10000,
        (FailedSample({"id": "1"}, "cust1", "v"), FailedSample({"id": "2"}, "NULL", "v")),
        converting=(("v", "BIGINT"),),
    )
    assert failed_casts.line() == "10000 of 10000 values of v do not convert to BIGINT, e.g. 'cust1' (id=1), NULL (id=2)"
    two_columns = dataclasses.replace(failed_casts, count=3, converting=(("v", "INT"), ("w", "DATE")))
    assert two_columns.line() == "3 values do not convert (10000 rows read), e.g. v 'cust1' (id=1), v NULL (id=2)"
    not_null = CheckFailure(checks[CheckKind.NOT_NULL], 2, 5, (FailedSample({"id": "3", "region": "eu"}),))
    assert not_null.line() == "2 of 5 rows would hold NULL in NOT NULL column id, e.g. (id=3, region=eu)"
    assert (
        CheckFailure(checks[CheckKind.UNIQUE_KEY], 2, 9).line()
        == "2 of 9 converted rows share their primary key (id, region) with another row"
    )
    unordered = CheckFailure(checks[CheckKind.SORT_ORDER], 1, 4, (FailedSample({}, "t/i2/b0/f.parquet"),))
    assert unordered.line() == "1 of 4 converted files are not in (w, id) order, e.g. t/i2/b0/f.parquet"
    every_line = [CheckFailure(c, 1, 2).line() for c in checks.values()]
    assert not [line for line in every_line if "expect" in line or "_" in line.replace("NOT NULL", "")], every_line
