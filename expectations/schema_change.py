"""The Great Expectations suites a heavyweight change is validated with (SPEC §4, VALIDATING).

They are derived from the change:
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


def tablet_counts_suite(on_cast_error: str) -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name="alterflow_tablet_counts")
    suite.add_expectation(gx.expectations.ExpectColumnValuesToNotBeNull(column="rows_out"))  # every tablet converted
    suite.add_expectation(gx.expectations.ExpectColumnPairValuesToBeEqual(column_A="rows_in", column_B="rows_out"))
    if on_cast_error == "fail":
        suite.add_expectation(gx.expectations.ExpectColumnValuesToBeBetween(column="failed_casts", min_value=0, max_value=0))
    return suite


def shadow_rows_suite(new: SchemaVersion) -> gx.ExpectationSuite | None:
    suite = gx.ExpectationSuite(name="alterflow_shadow_rows")
    for column in new.columns:
        if not column.nullable:
            suite.add_expectation(gx.expectations.ExpectColumnValuesToNotBeNull(column=column.name))
    return suite if suite.expectations else None


def converted_keys_suite(new: SchemaVersion) -> gx.ExpectationSuite | None:
    if not new.primary_key:
        return None
    suite = gx.ExpectationSuite(name="alterflow_converted_keys")
    names = new.names(new.primary_key)
    if len(names) == 1:
        suite.add_expectation(gx.expectations.ExpectColumnValuesToBeUnique(column=names[0]))
    else:
        suite.add_expectation(gx.expectations.ExpectCompoundColumnsToBeUnique(column_list=names))
    return suite


def sort_order_suite(new: SchemaVersion) -> gx.ExpectationSuite | None:
    if not new.sort_key:
        return None
    suite = gx.ExpectationSuite(name="alterflow_sort_order")
    suite.add_expectation(gx.expectations.ExpectColumnValuesToBeInSet(column="in_order", value_set=[True]))
    return suite
