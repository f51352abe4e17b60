"""The Great Expectations suites a heavyweight change is validated with (SPEC §4, VALIDATING).

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
from alterflow.rewrite.validation_checks import CheckKind, Suite, ValidationCheck, validation_checks


def expectations_of(check: ValidationCheck) -> list:
    """The Great Expectations expectation(s) that run `check` over its suite's rows."""
    E = gx.expectations
    match check.kind:
        case CheckKind.TABLET_CONVERTED:
            return [E.ExpectColumnValuesToNotBeNull(column="rows_out")]
        case CheckKind.ROWS_ACCOUNTED:
            return [E.ExpectColumnPairValuesToBeEqual(column_A="rows_in", column_B="rows_out")]
        case CheckKind.FAILED_CASTS:
            return [E.ExpectColumnValuesToBeBetween(column="failed_casts", min_value=0, max_value=0)]
        case CheckKind.NOT_NULL:
            return [E.ExpectColumnValuesToNotBeNull(column=check.columns[0])]
        case CheckKind.UNIQUE_KEY:
            if len(check.columns) == 1:
                return [E.ExpectColumnValuesToBeUnique(column=check.columns[0])]
            return [E.ExpectCompoundColumnsToBeUnique(column_list=list(check.columns))]
        case CheckKind.SORT_ORDER:
            return [E.ExpectColumnValuesToBeInSet(column="in_order", value_set=[True])]
    raise ValueError(check.kind)


def suite_of(suite: Suite, checks: tuple[ValidationCheck, ...]) -> gx.ExpectationSuite | None:
    """The suite `suite` of `checks`: None when no check belongs to it."""
    mine = [c for c in checks if c.suite is suite]
    if not mine:
        return None
    built = gx.ExpectationSuite(name=suite.value)
    for check in mine:
        for expectation in expectations_of(check):
            built.add_expectation(expectation)
    return built


def tablet_counts_suite(new: SchemaVersion, on_cast_error: str) -> gx.ExpectationSuite:
    return suite_of(Suite.TABLET_COUNTS, validation_checks(new, on_cast_error))


def shadow_rows_suite(new: SchemaVersion, on_cast_error: str) -> gx.ExpectationSuite | None:
    return suite_of(Suite.SHADOW_ROWS, validation_checks(new, on_cast_error))


def converted_keys_suite(new: SchemaVersion, on_cast_error: str) -> gx.ExpectationSuite | None:
    return suite_of(Suite.CONVERTED_KEYS, validation_checks(new, on_cast_error))


def sort_order_suite(new: SchemaVersion, on_cast_error: str) -> gx.ExpectationSuite | None:
    return suite_of(Suite.SORT_ORDER, validation_checks(new, on_cast_error))
