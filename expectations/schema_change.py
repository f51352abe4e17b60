"""The Great Expectations suites a heavyweight change is validated with (docs/heavyweight.md, VALIDATING).

They are generated from `alterflow.rewrite.validation_checks.validation_checks` (the list the
analysis of today's data, EXPLAIN ANALYZE and `migrate lint --analyze`, is generated from too):
- `tablet_counts_suite`: one row per origin tablet holding data below the boundary: it was
  converted, the rows read equal the rows written to the shadow index plus the rows quarantined
  (`on_cast_error = quarantine`), and with `on_cast_error = fail` no value was lost to a failed cast.
- `shadow_rows_suite`: over the shadow index as readers will see it after the swap: NOT NULL
  columns hold no NULL.
- `converted_keys_suite`: over the converted rows: the primary key is unique.
- `sort_order_suite`: one row per converted file: its rows are in sort-key order.
"""

from __future__ import annotations

import great_expectations as gx

from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.states import OnCastError
from alterflow.rewrite.validation_checks import CheckKind, Suite, ValidationCheck, validation_checks


def expectations_of(check: ValidationCheck, meta: dict | None = None) -> list:
    """The Great Expectations expectation(s) that run `check` over its suite's rows, carrying
    `meta` (the validation reads back which check a failed expectation runs from it)."""
    E = gx.expectations
    match check.kind:
        case CheckKind.TABLET_CONVERTED:
            return [E.ExpectColumnValuesToNotBeNull(column="rows_out", meta=meta)]
        case CheckKind.ROWS_ACCOUNTED:
            return [E.ExpectColumnPairValuesToBeEqual(column_A="rows_in", column_B="rows_out", meta=meta)]
        case CheckKind.FAILED_CASTS:
            return [E.ExpectColumnValuesToBeBetween(column="failed_casts", min_value=0, max_value=0, meta=meta)]
        case CheckKind.NOT_NULL:
            return [E.ExpectColumnValuesToNotBeNull(column=check.columns[0], meta=meta)]
        case CheckKind.UNIQUE_KEY:
            if len(check.columns) == 1:
                return [E.ExpectColumnValuesToBeUnique(column=check.columns[0], meta=meta)]
            return [E.ExpectCompoundColumnsToBeUnique(column_list=list(check.columns), meta=meta)]
        case CheckKind.SORT_ORDER:
            return [E.ExpectColumnValuesToBeInSet(column="in_order", value_set=[True], meta=meta)]
    raise ValueError(check.kind)


def suite_of(suite: Suite, checks: tuple[ValidationCheck, ...]) -> gx.ExpectationSuite | None:
    """The suite `suite` of `checks`: None when no check belongs to it. Each expectation's meta
    `check` is its check's index in `checks`."""
    mine = [(i, c) for i, c in enumerate(checks) if c.suite is suite]
    if not mine:
        return None
    built = gx.ExpectationSuite(name=suite.value)
    for index, check in mine:
        for expectation in expectations_of(check, {"check": index}):
            built.add_expectation(expectation)
    return built


def tablet_counts_suite(new: SchemaVersion, on_cast_error: OnCastError) -> gx.ExpectationSuite:
    return suite_of(Suite.TABLET_COUNTS, validation_checks(new, on_cast_error))


def shadow_rows_suite(new: SchemaVersion, on_cast_error: OnCastError) -> gx.ExpectationSuite | None:
    return suite_of(Suite.SHADOW_ROWS, validation_checks(new, on_cast_error))


def converted_keys_suite(new: SchemaVersion, on_cast_error: OnCastError) -> gx.ExpectationSuite | None:
    return suite_of(Suite.CONVERTED_KEYS, validation_checks(new, on_cast_error))


def sort_order_suite(new: SchemaVersion, on_cast_error: OnCastError) -> gx.ExpectationSuite | None:
    return suite_of(Suite.SORT_ORDER, validation_checks(new, on_cast_error))
