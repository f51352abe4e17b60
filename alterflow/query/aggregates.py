"""Aggregate functions beyond count/sum/avg/min/max, with Spark's answers (ANSI off): the boolean
aggregates (every, bool_and, any, some, bool_or, count_if), FILTER (WHERE ...) on an aggregate,
grouping()/grouping_id() under GROUPING SETS/CUBE/ROLLUP, and the exact percentile (percentile,
median, percentile_cont), which sorts the values and interpolates as Spark's Percentile does; the
floating-point moments (stddev, variance, skewness, kurtosis, corr, covar_pop/covar_samp,
regr_sxx/sxy/syy/slope/intercept/r2), computed by Spark's own accumulation over the values in the
order Spark reads the rows (`spark_moments`), where the query reads one table of one file; and
regr_count, regr_avgx, regr_avgy.

Left to Spark, each with its reason: moments over a join or a table Spark reads in several tasks;
first/last/any_value and max_by/min_by, whose answer depends on the order of the input.
"""

from __future__ import annotations

import re

from sqlglot import exp

from alterflow.query import sql_types as st
from alterflow.query.expression_core import (
    ANONYMOUS_RULES,
    FALLBACK,
    ExpressionContext,
    NotLocal,
    Value,
    aggregate_arg,
    aggregated_value,
    average_of,
    dispatch_rule,
    translate,
)


def _text(node: exp.Expression) -> str | None:
    return node.root().meta.get("sql")


def _written(node: exp.Expression) -> str | None:
    """The function's name as the query spells it, lower case (sqlglot folds several spellings,
    some of which Spark does not know, into one class); None when the text is not known."""
    text, start, end = _text(node), node.meta.get("start"), node.meta.get("end")
    if text is None or start is None or end is None:
        return None
    return text[start : end + 1].lower()


def _spelled(node: exp.Expression, *names: str) -> str:
    written = _written(node)
    if written not in names:
        raise NotLocal(f"the function {written or type(node).__name__.lower()} (Spark knows {' or '.join(names)})")
    return written


def _boolean_arg(node: exp.Expression, ctx: ExpressionContext, what: str) -> Value:
    value = aggregate_arg(node, ctx, what)
    if value.type.name == "void":
        return Value(f"CAST({value.sql} AS BOOLEAN)", st.BOOLEAN, value.name)
    if value.type != st.BOOLEAN:
        raise NotLocal(f"{what} of a {value.type}")
    return value


def _all_or_any(node: exp.Expression, arg: exp.Expression, ctx: ExpressionContext, name: str, function: str) -> Value:
    value = _boolean_arg(arg, ctx, name)
    return aggregated_value(f"{function}({value.sql})", st.BOOLEAN, None if value.name is None else f"{name}({value.name})")


@dispatch_rule.register
def _logical_and(node: exp.LogicalAnd, ctx: ExpressionContext) -> Value:
    return _all_or_any(node, node.this, ctx, _spelled(node, "bool_and", "every"), "bool_and")


@dispatch_rule.register
def _logical_or(node: exp.LogicalOr, ctx: ExpressionContext) -> Value:
    return _all_or_any(node, node.this, ctx, _spelled(node, "bool_or", "some", "any"), "bool_or")


@dispatch_rule.register
def _any(node: exp.Any, ctx: ExpressionContext) -> Value:
    # sqlglot reads Spark's any(x) as ANY (x); `= ANY (subquery)` is another construct
    if not isinstance(node.this, exp.Paren) or isinstance(node.parent, exp.Predicate):
        raise NotLocal("ANY over a subquery")
    return _all_or_any(node, node.this.this, ctx, "any", "bool_or")


@dispatch_rule.register
def _count_if(node: exp.CountIf, ctx: ExpressionContext) -> Value:
    _spelled(node, "count_if")
    value = _boolean_arg(node.this, ctx, "count_if")
    name = None if value.name is None else f"count_if({value.name})"
    return aggregated_value(f"count(CASE WHEN {value.sql} THEN 1 END)", st.BIGINT, name)


def _boolean_function(node: exp.Anonymous, ctx: ExpressionContext) -> Value:
    name = node.name.lower()
    if len(node.expressions) != 1:
        raise NotLocal(f"{name} of {len(node.expressions)} values")
    return _all_or_any(node, node.expressions[0], ctx, name, "bool_and" if name == "every" else "bool_or")


def _order_dependent(node: exp.Expression, ctx: ExpressionContext) -> Value:
    name = _written(node) or type(node).__name__.lower()
    raise NotLocal(f"{name} (Spark's answer depends on the order of the input rows)")


# -- moments, covariance, correlation, linear regression ------------------------------------------

# The name as written -> the function Spark computes (spark_moments)
_MOMENTS = {
    "stddev": "stddev_samp",
    "stddev_samp": "stddev_samp",
    "stddev_pop": "stddev_pop",
    "variance": "var_samp",
    "var_samp": "var_samp",
    "var_pop": "var_pop",
    "skewness": "skewness",
    "kurtosis": "kurtosis",
}
_PAIR_MOMENTS = {
    name: name
    for name in ("corr", "covar_pop", "covar_samp", "regr_sxx", "regr_sxy", "regr_syy", "regr_slope", "regr_intercept", "regr_r2")
}


def _double_arg(node: exp.Expression | None, ctx: ExpressionContext, what: str) -> Value:
    """An argument Spark casts to DOUBLE: an integer or a floating-point number (a DECIMAL's
    conversion is not reproduced), or NULL."""
    if node is None or isinstance(node, exp.Distinct):
        raise NotLocal(f"{what} of DISTINCT values or without an argument")
    value = aggregate_arg(node, ctx, what)
    if not (value.type.integral or value.type.fractional or value.type.name == "void"):
        raise NotLocal(f"{what} of a {value.type}")
    return Value(f"CAST({value.sql} AS DOUBLE)", st.DOUBLE, value.name)


def _function_name(node: exp.Expression) -> str:
    return _written(node) or (node.name if isinstance(node, exp.Anonymous) else type(node).__name__).lower()


def _in_row_order(value: Value, ctx: ExpressionContext, what: str) -> str:
    if ctx.row_order is None:
        raise NotLocal(f"{what} (its floating-point result depends on the order of accumulation) over more than one table")
    return f"list({value.sql} ORDER BY {ctx.row_order()})"


def _moment(node: exp.Expression, ctx: ExpressionContext) -> Value:
    """stddev, variance, skewness, kurtosis: Spark's accumulation over the rows in order."""
    written = _function_name(node)
    if written not in _MOMENTS:
        raise NotLocal(f"the function {written}")
    value = _double_arg(node.this, ctx, written)
    values = _in_row_order(value, ctx, written)
    sql = f"af_spark_moment('{_MOMENTS[written]}', {values}, {values})"
    return aggregated_value(sql, st.DOUBLE, value.name and f"{written}({value.name})")


def _pair_moment(node: exp.Expression, ctx: ExpressionContext) -> Value:
    """corr, covar_pop, covar_samp and regr_sxx ... regr_r2 of (y, x)."""
    written = _function_name(node)
    if written not in _PAIR_MOMENTS:
        raise NotLocal(f"the function {written}")
    y, x = _double_arg(node.this, ctx, written), _double_arg(node.expression, ctx, written)
    sql = f"af_spark_moment('{_PAIR_MOMENTS[written]}', {_in_row_order(y, ctx, written)}, {_in_row_order(x, ctx, written)})"
    name = None if y.name is None or x.name is None else f"{written}({y.name}, {x.name})"
    return aggregated_value(sql, st.DOUBLE, name)


for _cls in (exp.Stddev, exp.StddevSamp, exp.StddevPop, exp.Variance, exp.VariancePop, exp.Skewness, exp.Kurtosis):
    dispatch_rule.register(_cls)(_moment)
for _cls in (exp.Corr, exp.CovarPop, exp.CovarSamp, exp.RegrSxx, exp.RegrSxy, exp.RegrSyy, exp.RegrSlope, exp.RegrIntercept, exp.RegrR2):
    dispatch_rule.register(_cls)(_pair_moment)


def _numeric_pair(node: exp.Expression, ctx: ExpressionContext, what: str) -> tuple[Value, Value]:
    values = []
    for arg in (node.this, node.expression):
        if arg is None or isinstance(arg, exp.Distinct):
            raise NotLocal(f"{what} of DISTINCT values or without an argument")
        value = aggregate_arg(arg, ctx, what)
        if not (value.type.numeric or value.type.name == "void"):
            raise NotLocal(f"{what} of a {value.type}")
        values.append(value)
    return values[0], values[1]


@dispatch_rule.register
def _regr_count(node: exp.RegrCount, ctx: ExpressionContext) -> Value:
    y, x = _numeric_pair(node, ctx, "regr_count")
    name = None if y.name is None or x.name is None else f"regr_count({y.name}, {x.name})"
    return aggregated_value(f"count(CASE WHEN {y.sql} IS NOT NULL AND {x.sql} IS NOT NULL THEN 1 END)", st.BIGINT, name)


def _regr_average(node: exp.Expression, ctx: ExpressionContext, what: str, of_x: bool) -> Value:
    """regr_avgx(y, x), regr_avgy(y, x): Spark's avg of x (of y) where neither is NULL."""
    y, x = _numeric_pair(node, ctx, what)
    averaged = x if of_x else y
    if averaged.type.name == "void":
        raise NotLocal(f"{what} of NULL")
    masked = Value(f"(CASE WHEN {y.sql} IS NOT NULL AND {x.sql} IS NOT NULL THEN {averaged.sql} END)", averaged.type, None)
    name = None if y.name is None or x.name is None else f"{what}({y.name}, {x.name})"
    return average_of(masked, "", name)


dispatch_rule.register(exp.RegrAvgx)(lambda node, ctx: _regr_average(node, ctx, "regr_avgx", True))
dispatch_rule.register(exp.RegrAvgy)(lambda node, ctx: _regr_average(node, ctx, "regr_avgy", False))
for _cls in (exp.First, exp.Last, exp.FirstValue, exp.LastValue, exp.AnyValue, exp.ArgMax, exp.ArgMin, exp.IgnoreNulls, exp.RespectNulls):
    dispatch_rule.register(_cls)(_order_dependent)


# -- FILTER (WHERE ...) ----------------------------------------------------------------------------


@dispatch_rule.register
def _filter(node: exp.Filter, ctx: ExpressionContext) -> Value:
    where = node.expression
    if not isinstance(where, exp.Where) or not ctx.aggregates or ctx.in_aggregate or ctx.aggregate_filter is not None:
        raise NotLocal("FILTER other than on an aggregate")
    inner = ExpressionContext(**{**ctx.__dict__, "in_aggregate": True, "windows": False})
    condition = translate(where.this, inner)
    if condition.type != st.BOOLEAN:
        raise NotLocal("a FILTER condition that is not boolean")
    value = translate(node.this, ExpressionContext(**{**ctx.__dict__, "aggregate_filter": condition.sql}))
    if not value.aggregate or value.free:
        raise NotLocal("FILTER on something other than an aggregate")
    name = None if value.name is None or condition.name is None else f"{value.name} FILTER (WHERE {condition.name})"
    return aggregated_value(value.sql, value.type, name)


# -- grouping() and grouping_id() ------------------------------------------------------------------


def _grouping_columns(node: exp.Expression, ctx: ExpressionContext) -> list[str]:
    if ctx.grouping is None:
        raise NotLocal("grouping()/grouping_id() outside GROUPING SETS, CUBE or ROLLUP")
    if ctx.in_aggregate:
        raise NotLocal("grouping() inside an aggregate")
    return [translate(e, ctx).sql for e in node.expressions]


@dispatch_rule.register
def _grouping(node: exp.Grouping, ctx: ExpressionContext) -> Value:
    columns = _grouping_columns(node, ctx)
    if len(columns) != 1 or columns[0] not in ctx.grouping:
        raise NotLocal("grouping() of something other than one grouping column")
    name = translate(node.expressions[0], ctx).name
    return aggregated_value(f"CAST(grouping({columns[0]}) AS TINYINT)", st.SqlType("tinyint"), name and f"grouping({name})")


@dispatch_rule.register
def _grouping_id(node: exp.GroupingId, ctx: ExpressionContext) -> Value:
    columns = _grouping_columns(node, ctx)
    if columns and tuple(columns) != ctx.grouping:
        raise NotLocal("grouping_id() of other columns than the grouping columns, in their order (Spark refuses it)")
    if len(ctx.grouping) > 63:
        raise NotLocal("grouping_id() of more than 63 columns")
    names = [translate(e, ctx).name for e in node.expressions]
    name = None if None in names else f"grouping_id({', '.join(names)})"
    listed = ", ".join(ctx.grouping)
    sql = f"CAST(grouping({listed}) AS BIGINT)" if listed else "CAST(0 AS BIGINT)"
    return aggregated_value(sql, st.BIGINT, name)


# -- exact percentiles -----------------------------------------------------------------------------


def _percentage(node: exp.Expression) -> tuple[float, str]:
    """A literal percentage in [0, 1], as the double Spark casts it to, and as Spark names it."""
    if not isinstance(node, exp.Literal) or node.is_string or not re.fullmatch(r"\d+(\.\d*)?|\.\d+", node.this):
        raise NotLocal("a percentage other than a number literal")
    value = float(node.this)
    if not 0.0 <= value <= 1.0:
        raise NotLocal("a percentage outside [0, 1] (Spark refuses it)")
    return value, node.this


def _percentile_sql(value: Value, percentage: float, descending: bool) -> str:
    """Spark's Percentile: the non-NULL values sorted, position (n - 1) * p, the values at its
    floor and ceiling, linearly interpolated in doubles (no interpolation where they are equal)."""
    if not value.type.integral:
        # a DECIMAL's conversion to a double (Spark's Decimal.toDouble) was not shown to match
        raise NotLocal(f"percentile of a {value.type}")
    values = f"list_sort(list({value.sql}) FILTER (WHERE {value.sql} IS NOT NULL), '{'DESC' if descending else 'ASC'}')"
    p = f"CAST({percentage!r} AS DOUBLE)"
    position = f"(CAST(len(l) - 1 AS DOUBLE) * {p})"
    lower, higher = f"CAST(floor({position}) AS BIGINT)", f"CAST(ceil({position}) AS BIGINT)"
    low, high = f"l[{lower} + 1]", f"l[{higher} + 1]"
    low_d, high_d = f"CAST({low} AS DOUBLE)", f"CAST({high} AS DOUBLE)"
    interpolated = f"(CAST({higher} AS DOUBLE) - {position}) * {low_d} + ({position} - CAST({lower} AS DOUBLE)) * {high_d}"
    # An interpolation weight other than 1/2 gave a last bit unlike Spark's on generated data (cause
    # not found): only the exact halves are interpolated here, the rest is Spark's (at run time).
    half = f"({position} - CAST({lower} AS DOUBLE)) = 0.5"
    body = (
        f"CASE WHEN l IS NULL OR len(l) = 0 THEN NULL WHEN {lower} = {higher} OR {low} = {high} THEN {low_d} "
        f"WHEN {half} THEN {interpolated} ELSE error('{FALLBACK}') END"
    )
    return f"list_transform([{values}], lambda l: {body})[1]"


def _check_call(node: exp.Expression, function: str) -> None:
    """sqlglot drops percentile's third argument (a frequency); the text must show only two."""
    text = _text(node)
    spans = [(n.meta["start"], n.meta["end"]) for n in node.walk() if "start" in n.meta and "end" in n.meta]
    if text is None or not spans:
        raise NotLocal(f"{function} whose text is not known")
    first, last = min(s for s, _ in spans), max(e for _, e in spans)
    if not re.search(rf"\b{function}\s*\((\s*\()*\s*$", text[:first], re.IGNORECASE) or not re.match(r"(\s*\))+", text[last + 1 :]):
        raise NotLocal(f"{function} with other arguments than a value and a percentage")


@dispatch_rule.register
def _quantile(node: exp.Quantile, ctx: ExpressionContext) -> Value:
    _check_call(node, "percentile")
    percentage, spelled = _percentage(node.args["quantile"])
    value = aggregate_arg(node.this, ctx, "percentile")
    name = None if value.name is None else f"percentile({value.name}, {spelled}, 1)"
    return aggregated_value(_percentile_sql(value, percentage, False), st.DOUBLE, name)


@dispatch_rule.register
def _median(node: exp.Median, ctx: ExpressionContext) -> Value:
    _spelled(node, "median")
    value = aggregate_arg(node.this, ctx, "median")
    return aggregated_value(_percentile_sql(value, 0.5, False), st.DOUBLE, value.name and f"median({value.name})")


@dispatch_rule.register
def _within_group(node: exp.WithinGroup, ctx: ExpressionContext) -> Value:
    function, order = node.this, node.expression
    if not isinstance(function, exp.PercentileCont) or not isinstance(order, exp.Order) or len(order.expressions) != 1:
        raise NotLocal(f"{type(function).__name__} WITHIN GROUP")
    _spelled(function, "percentile_cont")
    percentage, spelled = _percentage(function.this)
    key = order.expressions[0]
    descending = bool(key.args.get("desc"))
    value = aggregate_arg(key.this, ctx, "percentile_cont")
    text = _text(node) or ""
    named = value.name is not None and "nulls" not in text.lower()  # NULLS FIRST/LAST would be in Spark's name
    name = f"percentile_cont({spelled}) WITHIN GROUP (ORDER BY {value.name}{' DESC' if descending else ''})" if named else None
    return aggregated_value(_percentile_sql(value, percentage, descending), st.DOUBLE, name)


# -- functions without a sqlglot class of their own ------------------------------------------------


def _std(node: exp.Anonymous, ctx: ExpressionContext) -> Value:
    raise NotLocal("std (sqlglot reads it as a plain function, not as an aggregate)")


ANONYMOUS_RULES.update({"every": _boolean_function, "some": _boolean_function, "std": _std})
