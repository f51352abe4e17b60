"""Spark's floating-point aggregates as the local engine computes them (alterflow/query/spark_moments.py):
the exact double sum and where it hands the sum to Spark; the moments in one task, in two tasks,
and the hand-off where the two disagree."""

from __future__ import annotations

import math

import pytest

from alterflow.query import spark_moments as sm

# Spark's golden test linear-regression.sql: (k, y, x), which Spark reads from its inline table in
# two tasks, rows 0-1 and 2-4.
GOLDEN = [(1, 10, None), (2, 10, 11), (2, 20, 22), (2, 25, None), (2, 30, 35)]
YS = [float(y) for _k, y, _x in GOLDEN]
XS = [None if x is None else float(x) for _k, _y, x in GOLDEN]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1.0, 2.5, None, -0.25], 3.25),
        ([None, None], None),
        ([-0.0, -0.0], 0.0),  # Spark's sum starts from 0.0: never -0.0
        ([1.0, math.nan, 2.0], math.nan),
        ([math.inf, 1.0, -math.inf], math.nan),
        ([-math.inf, 1e308, 1e308], -math.inf),
        ([2.0**1000, -(2.0**1000), 2.0**999], 2.0**999),
    ],
)
def test_a_double_sum_no_order_of_addition_changes(values, expected):
    result = sm.double_sum(values)
    if expected is None or not math.isnan(expected):
        assert result == expected and (result is None or math.copysign(1.0, result) == math.copysign(1.0, expected))
    else:
        assert math.isnan(result)


@pytest.mark.parametrize("values", [[0.1, 0.2, 0.3], [1e16, 1.0, -1e16], [1e308, 1e308, -1e308], [2.0**1000, -(2.0**1000), 2.0**-50]])
def test_a_double_sum_whose_partial_sums_round_goes_to_spark(values):
    with pytest.raises(sm.NeedsSpark):
        sm.double_sum(values)


def test_a_double_average_is_the_exact_sum_over_the_count():
    assert sm.double_average([1.0, 2.0, None, 2.0]) == 5.0 / 3.0
    assert sm.double_average([None]) is None


def test_spark_s_two_task_answer_is_reproduced_and_differs_from_one_task():
    """corr of the golden rows: Spark's recorded answer is the two-task one; in one task the last
    bit differs, so the local engine hands it to Spark."""
    corr = sm.accumulator("corr")
    rows = list(zip(YS, XS))
    assert sm.answer_in_tasks(corr, [rows[:2], rows[2:]]) == 0.9988445981121533  # Spark's golden answer
    assert sm.answer_in_tasks(corr, [rows]) == 0.9988445981121532
    with pytest.raises(sm.NeedsSpark):
        sm.spark_moment("corr", YS, XS)


def test_a_moment_every_layout_agrees_on_is_answered():
    assert sm.spark_moment("regr_syy", YS, XS) == 200.0  # Spark's golden answer
    assert sm.spark_moment("var_pop", [0.0, -4.0, 4.0, 6.0], [0.0, -4.0, 4.0, 6.0]) == 14.75


def test_regr_r2_is_null_for_a_constant_x_and_one_for_a_constant_y():
    assert sm.spark_moment("regr_r2", [1.0, 2.0, 3.0], [5.0, 5.0, 5.0]) is None
    assert sm.spark_moment("regr_r2", [5.0, 5.0, 5.0], [1.0, 2.0, 4.0]) == 1.0


def test_regr_slope_skips_a_pair_with_a_null_y():
    assert sm.spark_moment("regr_slope", [1.0, None, 3.0], [1.0, 2.0, 3.0]) == 1.0


def test_past_the_checked_rows_spark_answers():
    values = [float(i % 3) for i in range(sm.MAX_CHECKED_ROWS + 1)]
    with pytest.raises(sm.NeedsSpark):
        sm.spark_moment("var_pop", values, values)


def test_sample_statistics_of_one_value_are_null():
    assert sm.spark_moment("var_samp", [2.0], [2.0]) is None
    assert sm.spark_moment("stddev_pop", [2.0], [2.0]) == 0.0
    assert sm.spark_moment("skewness", [2.0, 2.0], [2.0, 2.0]) is None
