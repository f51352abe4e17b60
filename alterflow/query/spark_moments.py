"""Spark's floating-point aggregates (ANSI mode off) computed as Spark computes them, in doubles:
the central moments (stddev, variance, skewness, kurtosis), covariance, correlation and the linear
regression functions (regr_sxx, regr_sxy, regr_syy, regr_slope, regr_intercept, regr_r2), and the
exact sum of doubles.

A moment's last bits depend on the order rows are accumulated. Spark updates one buffer per group
row by row within a task (`CentralMomentAgg`, `Covariance`, `PearsonCorrelation`: Welford-style
updates), then its final aggregation merges each task's buffer into a fresh one. Here the values
come in the order of the rows of the one file the query reads (docs/semantics.md, "Queries: two
engines"), are updated in that order, and the buffer is merged once into a fresh buffer, with
Spark's expressions in Spark's order of operations: IEEE doubles give the same bits.

A sum of doubles is answered only where its order does not matter: every value a multiple of the
smallest power of two among them and the magnitudes summing within 2**53 of that power, so that
every partial sum, in any order and split, is exact. Elsewhere the query runs on Spark.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

FALLBACK = "af$spark"  # the same marker as expression_core.FALLBACK (no import: this module stays leaf)


class NeedsSpark(Exception):
    def __init__(self):
        super().__init__(FALLBACK)


def _divide(a: float, b: float) -> float | None:
    """Spark's Divide of doubles with ANSI mode off: NULL where the divisor is 0."""
    return None if b == 0.0 else a / b


# -- central moments (CentralMomentAgg) ------------------------------------------------------------


@dataclass(frozen=True)
class Moments:
    n: float = 0.0
    avg: float = 0.0
    m2: float = 0.0
    m3: float = 0.0
    m4: float = 0.0


def moments_update(b: Moments, x: float, order: int) -> Moments:
    n = b.n + 1.0
    delta = x - b.avg
    delta_n = delta / n
    avg = b.avg + delta_n
    m2 = b.m2 + delta * (delta - delta_n)
    delta2 = delta * delta
    delta_n2 = delta_n * delta_n
    m3 = b.m3 - 3.0 * delta_n * m2 + delta * (delta2 - delta_n2) if order >= 3 else 0.0
    m4 = b.m4 - 4.0 * delta_n * m3 - 6.0 * delta_n2 * m2 + delta * (delta * delta2 - delta_n * delta_n2) if order >= 4 else 0.0
    return Moments(n, avg, m2, m3, m4)


def moments_merge(a: Moments, b: Moments, order: int) -> Moments:
    n1, n2 = a.n, b.n
    n = n1 + n2
    delta = b.avg - a.avg
    delta_n = 0.0 if n == 0.0 else delta / n
    avg = a.avg + delta_n * n2
    m2 = a.m2 + b.m2 + delta * delta_n * n1 * n2
    m3 = a.m3 + b.m3 + delta_n * delta_n * delta * n1 * n2 * (n1 - n2) + 3.0 * delta_n * (n1 * b.m2 - n2 * a.m2) if order >= 3 else 0.0
    m4 = (
        a.m4
        + b.m4
        + delta_n * delta_n * delta_n * delta * n1 * n2 * (n1 * n1 - n1 * n2 + n2 * n2)
        + 6.0 * delta_n * delta_n * (n1 * n1 * b.m2 + n2 * n2 * a.m2)
        + 4.0 * delta_n * (n1 * b.m3 - n2 * a.m3)
        if order >= 4
        else 0.0
    )
    return Moments(n, avg, m2, m3, m4)


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0.0 or math.isnan(x) else math.nan  # Java's Math.sqrt: NaN below 0


def _var_pop(b: Moments) -> float | None:
    return None if b.n == 0.0 else _divide(b.m2, b.n)


def _var_samp(b: Moments) -> float | None:
    return None if b.n <= 1.0 else _divide(b.m2, b.n - 1.0)


def _stddev_pop(b: Moments) -> float | None:
    v = _var_pop(b)
    return None if v is None else _sqrt(v)


def _stddev_samp(b: Moments) -> float | None:
    v = _var_samp(b)
    return None if v is None else _sqrt(v)


def _skewness(b: Moments) -> float | None:
    if b.n == 0.0 or b.m2 == 0.0:
        return None
    return _divide(_sqrt(b.n) * b.m3, _sqrt(b.m2 * b.m2 * b.m2))


def _kurtosis(b: Moments) -> float | None:
    if b.n == 0.0 or b.m2 == 0.0:
        return None
    q = _divide(b.n * b.m4, b.m2 * b.m2)
    return None if q is None else q - 3.0


def _sum_of_squares(b: Moments) -> float | None:
    return None if b.n == 0.0 else b.m2


# name -> (moment order, evaluation)
MOMENT_FUNCTIONS: dict[str, tuple[int, Callable[[Moments], float | None]]] = {
    "var_pop": (2, _var_pop),
    "var_samp": (2, _var_samp),
    "stddev_pop": (2, _stddev_pop),
    "stddev_samp": (2, _stddev_samp),
    "skewness": (3, _skewness),
    "kurtosis": (4, _kurtosis),
    "regr_sxx": (2, _sum_of_squares),
    "regr_syy": (2, _sum_of_squares),
}


# -- co-moments (Covariance, PearsonCorrelation) ---------------------------------------------------


@dataclass(frozen=True)
class CoMoments:
    n: float = 0.0
    x_avg: float = 0.0
    y_avg: float = 0.0
    ck: float = 0.0
    x_mk: float = 0.0
    y_mk: float = 0.0


def co_moments_update(b: CoMoments, x: float, y: float, pearson: bool) -> CoMoments:
    """Covariance's update (`pearson` False: its x average is x_avg + dx / n, no x_mk, y_mk) or
    PearsonCorrelation's."""
    n = b.n + 1.0
    dx = x - b.x_avg
    dy = y - b.y_avg
    dy_n = dy / n
    if not pearson:
        x_avg = b.x_avg + dx / n
        y_avg = b.y_avg + dy_n
        return CoMoments(n, x_avg, y_avg, b.ck + dx * (y - y_avg))
    dx_n = dx / n
    x_avg = b.x_avg + dx_n
    y_avg = b.y_avg + dy_n
    ck = b.ck + dx * (y - y_avg)
    return CoMoments(n, x_avg, y_avg, ck, b.x_mk + dx * (x - x_avg), b.y_mk + dy * (y - y_avg))


def co_moments_merge(a: CoMoments, b: CoMoments, pearson: bool) -> CoMoments:
    n1, n2 = a.n, b.n
    n = n1 + n2
    dx = b.x_avg - a.x_avg
    dx_n = 0.0 if n == 0.0 else dx / n
    dy = b.y_avg - a.y_avg
    dy_n = 0.0 if n == 0.0 else dy / n
    merged = CoMoments(n, a.x_avg + dx_n * n2, a.y_avg + dy_n * n2, a.ck + b.ck + dx * dy_n * n1 * n2)
    if not pearson:
        return merged
    return replace(merged, x_mk=a.x_mk + b.x_mk + dx * dx_n * n1 * n2, y_mk=a.y_mk + b.y_mk + dy * dy_n * n1 * n2)


def _covar_pop(b: CoMoments) -> float | None:
    return None if b.n == 0.0 else _divide(b.ck, b.n)


def _covar_samp(b: CoMoments) -> float | None:
    return None if b.n <= 1.0 else _divide(b.ck, b.n - 1.0)


def _corr(b: CoMoments) -> float | None:
    return None if b.n <= 1.0 else _divide(b.ck, _sqrt(b.x_mk * b.y_mk))


def _regr_sxy(b: CoMoments) -> float | None:
    return None if b.n == 0.0 else b.ck


def _regr_r2(b: CoMoments) -> float | None:
    """regr_r2(y, x) over the PearsonCorrelation buffer of (y, x): NULL where x is constant (its
    moment is the buffer's y_mk), 1 where y is."""
    if b.y_mk == 0.0:
        return None
    if b.x_mk == 0.0:
        return 1.0
    corr = _divide(b.ck, _sqrt(b.x_mk * b.y_mk))
    return None if corr is None else corr * corr


# name -> (Pearson's buffer, evaluation); each reads (x, y) as Spark's class does
CO_MOMENT_FUNCTIONS: dict[str, tuple[bool, Callable[[CoMoments], float | None]]] = {
    "covar_pop": (False, _covar_pop),
    "covar_samp": (False, _covar_samp),
    "corr": (True, _corr),
    "regr_sxy": (False, _regr_sxy),
    "regr_r2": (True, _regr_r2),
}


@dataclass(frozen=True)
class _Accumulator:
    """One of Spark's aggregate buffers: fresh, updated by a row (first, second), merged, evaluated."""

    fresh: object
    update: Callable[[object, float | None, float | None], object]
    merge: Callable[[object, object], object]
    evaluate: Callable[[object], float | None]


def _moments_of(function: str) -> _Accumulator:
    order, evaluate = MOMENT_FUNCTIONS[function]

    def update(b: Moments, first: float | None, second: float | None) -> Moments:
        # regr_sxx(y, x) reads x, regr_syy(y, x) reads y, each where neither is NULL
        value = second if function == "regr_sxx" else first
        if value is None or function in ("regr_sxx", "regr_syy") and (first is None or second is None):
            return b
        return moments_update(b, value, order)

    return _Accumulator(Moments(), update, lambda a, b: moments_merge(a, b, order), evaluate)


def _co_moments_of(function: str) -> _Accumulator:
    pearson, evaluate = CO_MOMENT_FUNCTIONS[function]

    def update(b: CoMoments, first: float | None, second: float | None) -> CoMoments:
        if first is None or second is None:
            return b
        return co_moments_update(b, first, second, pearson)

    return _Accumulator(CoMoments(), update, lambda a, b: co_moments_merge(a, b, pearson), evaluate)


def _regression_line_of(function: str) -> _Accumulator:
    """regr_slope(y, x), regr_intercept(y, x): CovPopulation(x, y) beside VariancePop(x), each
    over the rows where neither is NULL."""

    def update(b: tuple[CoMoments, Moments], y: float | None, x: float | None) -> tuple[CoMoments, Moments]:
        covariance, variance = b
        if x is None or y is None:
            return b
        return co_moments_update(covariance, x, y, False), moments_update(variance, x, 2)

    def merge(a: tuple[CoMoments, Moments], b: tuple[CoMoments, Moments]) -> tuple[CoMoments, Moments]:
        return co_moments_merge(a[0], b[0], False), moments_merge(a[1], b[1], 2)

    def evaluate(b: tuple[CoMoments, Moments]) -> float | None:
        covariance, variance = b
        if variance.m2 == 0.0:
            return None
        slope = _divide(covariance.ck, variance.m2)
        if function == "regr_slope" or slope is None:
            return slope
        return covariance.y_avg - slope * covariance.x_avg

    return _Accumulator((CoMoments(), Moments()), update, merge, evaluate)


def accumulator(function: str) -> _Accumulator:
    if function in MOMENT_FUNCTIONS:
        return _moments_of(function)
    if function in CO_MOMENT_FUNCTIONS:
        return _co_moments_of(function)
    if function in ("regr_slope", "regr_intercept"):
        return _regression_line_of(function)
    raise ValueError(f"no Spark accumulation for {function}")


SPARK_MOMENTS = (*MOMENT_FUNCTIONS, *CO_MOMENT_FUNCTIONS, "regr_slope", "regr_intercept")

# The layouts checked grow as the square of the rows: past this many, Spark answers.
MAX_CHECKED_ROWS = 64

Row = tuple[float | None, float | None]


def answer_in_tasks(acc: _Accumulator, tasks: Sequence[Sequence[Row]]) -> float | None:
    """Spark's answer when each task updates a buffer with its rows in order and the final
    aggregation merges the tasks' buffers, in the order given, into a fresh one."""
    final = acc.fresh
    for rows in tasks:
        partial = acc.fresh
        for first, second in rows:
            partial = acc.update(partial, first, second)
        final = acc.merge(final, partial)
    return acc.evaluate(final)


def _bits(value: float | None) -> object:
    return None if value is None else ("nan" if math.isnan(value) else struct.pack(">d", value))


def spark_moment(function: str, first: list[float | None], second: list[float | None]) -> float | None:
    """`function` of the values in row order (`first` its first argument's, `second` its second's,
    the same list for a function of one value), as Spark answers it reading them in one task. The
    answer stands only where reading them in two tasks of consecutive rows, merged in either order,
    gives the same bits; elsewhere (and past MAX_CHECKED_ROWS rows) NeedsSpark."""
    acc = accumulator(function)
    rows = [(f, s) for f, s in zip(first, second, strict=True) if acc.update(acc.fresh, f, s) is not acc.fresh]
    if len(rows) > MAX_CHECKED_ROWS:
        raise NeedsSpark()
    answer = answer_in_tasks(acc, [rows])
    for cut in range(1, len(rows)):
        for tasks in ([rows[:cut], rows[cut:]], [rows[cut:], rows[:cut]]):
            if _bits(answer_in_tasks(acc, tasks)) != _bits(answer):
                raise NeedsSpark()
    return answer


# -- sums of doubles -------------------------------------------------------------------------------


def _exact_sum(values: Sequence[float]) -> float:
    """The sum of finite doubles where every order of addition gives it exactly; NeedsSpark elsewhere.
    With `unit` the smallest power of two whose 2**53 multiples exceed the sum of the magnitudes,
    values that are all multiples of `unit` keep every partial sum, in any order, a multiple of it
    below 2**53 units: a double holds it exactly. (fsum rounds correctly; a rounding up only makes
    `unit` larger, the test stricter.)"""
    nonzero = [v for v in values if v != 0.0]
    if not nonzero:
        return 0.0
    try:
        magnitude = math.fsum(map(abs, nonzero))
    except OverflowError:
        raise NeedsSpark() from None
    if math.isinf(magnitude):
        raise NeedsSpark()
    unit = max(math.ldexp(1.0, math.frexp(magnitude)[1] - 53), math.ldexp(1.0, -1074))
    if any(map(unit.__rmod__, nonzero)):  # v % unit is exact: 0.0 for a multiple
        raise NeedsSpark()
    return math.fsum(nonzero) + 0.0


def double_sum(values: list[float | None]) -> float | None:
    """Spark's sum of doubles, where the order of addition cannot change it: NULL without a value,
    NaN with a NaN or both infinities, an infinity with one, else the exact sum (never -0.0: Spark
    starts from 0.0)."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    if any(math.isnan(v) for v in present) or (math.inf in present and -math.inf in present):
        return math.nan
    if math.inf in present or -math.inf in present:
        return math.inf if math.inf in present else -math.inf
    return _exact_sum(present)


def double_average(values: list[float | None]) -> float | None:
    """Spark's Average of doubles: the double sum divided by the count, in doubles."""
    present = [v for v in values if v is not None]
    total = double_sum(present)
    return None if total is None else total / float(len(present))
