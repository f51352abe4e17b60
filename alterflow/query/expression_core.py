"""The core the expression rules share, and that imports none of them: `Value` (a translated
expression: its DuckDB text, its Spark type, the name Spark gives its column), `ExpressionContext`
(where an expression stands in a query), `NotLocal` (a construct the local engine does not
reproduce exactly: the query runs on Spark) and `FALLBACK` (DuckDB's error that sends a value's
answer to Spark at run time); the registry of rules (`dispatch_rule`, a `functools.singledispatch`
on sqlglot's classes, and `ANONYMOUS_RULES`, by name, for functions sqlglot has no class for) and
`translate`, which dispatches a node to its rule; and the helpers the rules use to type their
operands and write DuckDB text as Spark computes (widening casts, the JVM's wrap-around, decimal
result types, comparisons, function arguments and names, aggregate arguments, ORDER BY keys).

The rules are registered by the modules that define them (`expressions.py` and the families it
imports): translate through `alterflow.query.expressions`, which imports them all.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

from sqlglot import exp

from alterflow.query import sql_types as st
from alterflow.query.spark_refusals import RefusedCallError
from alterflow.query.sql_types import SqlType

FALLBACK = "af$spark"  # the message of DuckDB's error() where an answer must come from Spark


class NotLocal(Exception):
    """The local engine does not reproduce this construct exactly; the reason names it."""


@dataclass(frozen=True)
class Value:
    sql: str  # DuckDB text, parenthesised where it is not atomic
    type: SqlType
    name: str | None  # Spark's name for the column (None: it must be aliased to run locally)
    aggregate: bool = False  # holds an aggregate function
    free: bool = False  # reads a column outside an aggregate that no GROUP BY expression covers
    literal: str | None = None  # an integral literal's digits (Spark types it by them against a decimal)


@dataclass
class ExpressionContext:
    """What translating an expression needs from where it stands in a query."""

    resolve: object  # (exp.Column) -> Value: a column of the FROM clause
    subquery: object  # (exp.Expression, kind) -> (sql, [SqlType]): a subquery, kind "scalar", "in" or "exists"
    aggregates: bool = False  # aggregate functions allowed here
    windows: bool = False  # window functions allowed here
    grouped: dict[str, Value] = field(default_factory=dict)  # GROUP BY expressions, by DuckDB text
    aliases: dict[str, Value] = field(default_factory=dict)  # select aliases (HAVING, GROUP BY)
    in_aggregate: bool = False
    grouping: tuple[str, ...] | None = None  # GROUPING SETS/CUBE/ROLLUP columns (DuckDB text), Spark's order
    aggregate_filter: str | None = None  # an aggregate's FILTER (WHERE ...) condition (DuckDB text)
    # Where an IN (subquery) may stand: "conjunct" (a WHERE's AND-ed condition, NOT IN too),
    # "positive" (under an OR there), None (anywhere else). Spark rewrites it into a semi or
    # existence join, which answers false where SQL's NULL IN (...) is NULL: the two agree only
    # where a NULL and a false filter alike (docs/semantics.md, "Queries").
    subquery_position: str | None = None
    # () -> str: the DuckDB text ordering the rows as Spark reads them, where the query reads one
    # table whose rows Spark reads in one task (translation.QueryTranslation._row_order); None elsewhere
    row_order: object = None


# -- the registry of rules, and translation through it -------------------------------------------


def _position(node: exp.Expression, ctx: ExpressionContext) -> ExpressionContext:
    """The context `node` is translated in, with the IN (subquery) position narrowed by it."""
    position = ctx.subquery_position
    if position is None or isinstance(node, exp.And | exp.Paren | exp.In):
        return ctx
    if isinstance(node, exp.Or):
        return replace(ctx, subquery_position="positive")
    if isinstance(node, exp.Not) and position == "conjunct" and isinstance(node.this.unnest(), exp.In):
        return ctx
    return replace(ctx, subquery_position=None)


def translate(node: exp.Expression, ctx: ExpressionContext) -> Value:
    ctx = _position(node, ctx)
    refuse_marked_call(node, ctx)
    value = dispatch_rule(node, ctx)
    if ctx.grouped and not ctx.in_aggregate and value.sql in ctx.grouped:
        value = replace(ctx.grouped[value.sql], name=value.name, free=False)  # the GROUP BY key itself
    return value


def refuse_marked_call(node: exp.Expression, ctx: ExpressionContext) -> None:
    """A call the parse marked as one Spark refuses (`meta["spark_refusal"]`: an unknown name, an
    argument count Spark refuses): its arguments translated, as Spark resolves them before it
    checks the call, then refused in Spark's words. A rule that reads a call without `translate`
    (a window's function) calls this first."""
    refusal = node.meta.get("spark_refusal") if node.meta else None
    if refusal is None:
        return
    message, arguments = refusal
    for argument in arguments:
        translate(argument, ctx)
    raise RefusedCallError(message)


def normalized_zero(value: Value) -> Value:
    """A floating-point value with -0.0 read as 0.0, as Spark's grouping, DISTINCT and set
    operations compare and return it (NormalizeFloatingNumbers)."""
    if not value.type.fractional:
        return value
    zero = f"CAST(0 AS {value.type.duckdb})"
    return replace(value, sql=f"(CASE WHEN {value.sql} = 0 THEN {zero} ELSE {value.sql} END)")


@functools.singledispatch
def dispatch_rule(node: exp.Expression, ctx: ExpressionContext) -> Value:
    raise NotLocal(f"{construct_name(node)} is not in the local engine's set")


def construct_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return f"function {node.name.lower()}"
    if isinstance(node, exp.Func):
        return f"function {node.sql_name().lower()}"
    return type(node).__name__


# -- functions sqlglot has no class for ----------------------------------------------------------

# Function name (lower case) -> its rule; each family module adds its own.
ANONYMOUS_RULES: dict[str, object] = {}


@dispatch_rule.register
def _anonymous(node: exp.Anonymous, ctx: ExpressionContext) -> Value:
    rule = ANONYMOUS_RULES.get(node.name.lower())
    if rule is None:
        raise NotLocal(f"function {node.name.lower()} is not in the local engine's set")
    return rule(node, ctx)


# -- helpers -------------------------------------------------------------------------------------


def cast(value: Value, to: SqlType) -> str:
    """`value` as `to`, for a widening Spark does implicitly (never loses a value)."""
    if value.type == to:
        return value.sql
    return f"CAST({value.sql} AS {to.duckdb})"


def wrap(sql: str, to: SqlType) -> str:
    """An integral result computed without overflow (BIGINT, HUGEINT for 64 bits), as the JVM's
    fixed-width arithmetic leaves it: wrapped around into `to`'s range."""
    bits = st.INTEGRAL_BITS[to.name]
    wide = "HUGEINT" if bits == 64 else "BIGINT"
    half, full = f"CAST('{1 << (bits - 1)}' AS {wide})", f"CAST('{1 << bits}' AS {wide})"
    return f"CAST(((({sql}) + {half}) % {full} + {full}) % {full} - {half} AS {to.duckdb})"


def widened_sql(value: Value) -> str:
    bits = st.INTEGRAL_BITS[value.type.name]
    return f"CAST({value.sql} AS {'HUGEINT' if bits == 64 else 'BIGINT'})"


def merged_flags(*values: Value, **changes) -> dict:
    return {
        "aggregate": any(v.aggregate for v in values),
        "free": any(v.free for v in values),
        **changes,
    }


# -- arithmetic and comparisons ------------------------------------------------------------------


def operand_types(left: Value, right: Value) -> tuple[SqlType, SqlType]:
    """Spark's operand types for a decimal meeting an integral literal: the literal's own digits."""
    lt, rt = left.type, right.type
    if lt.name == "decimal" and right.literal is not None:
        rt = st.literal_decimal(right.literal)
    if rt.name == "decimal" and left.literal is not None:
        lt = st.literal_decimal(left.literal)
    return lt, rt


def decimal_result(op: str, a: SqlType, b: SqlType) -> SqlType:
    """DecimalPrecision's result type (precision loss allowed, Spark's default)."""
    a, b = st.as_decimal(a), st.as_decimal(b)
    if op in ("+", "-"):
        scale = max(a.scale, b.scale)
        return st.adjusted(max(a.precision - a.scale, b.precision - b.scale) + scale + 1, scale)
    if op == "*":
        return st.adjusted(a.precision + b.precision + 1, a.scale + b.scale)
    if op == "/":
        scale = max(st.MINIMUM_ADJUSTED_SCALE, a.scale + b.precision + 1)
        return st.adjusted(a.precision - a.scale + b.scale + scale, scale)
    scale = max(a.scale, b.scale)  # % and pmod
    return st.adjusted(min(a.precision - a.scale, b.precision - b.scale) + scale, scale)


def decimal_text(value: Value) -> str:
    """A number's exact text, as udfs.decimal_op reads it."""
    if not (value.type.integral or value.type.name == "decimal"):
        raise NotLocal(f"decimal arithmetic with a {value.type}")
    return f"CAST({value.sql} AS VARCHAR)"


def exact_decimal(op: str, left: Value, right: Value, result: SqlType) -> str:
    """left op right as Spark's Decimal computes it (udfs.decimal_op), as a DuckDB decimal."""
    call = f"af_decimal_op('{op}', {decimal_text(left)}, {decimal_text(right)}, {result.precision}, {result.scale})"
    return f"CAST({call} AS {result.duckdb})"


def remainder_value(left: Value, right: Value, common: SqlType, name: str | None) -> Value:
    a, b = cast(left, common), cast(right, common)
    if common.integral:  # the JVM's MIN % -1 is 0, where DuckDB overflows
        sql = f"(CASE WHEN {b} = 0 THEN NULL WHEN {b} = -1 THEN CAST(0 AS {common.duckdb}) ELSE {a} % {b} END)"
    else:
        sql = f"(CASE WHEN {b} = 0 THEN NULL ELSE {a} % {b} END)"
    return Value(sql, common, name, **merged_flags(left, right))


def comparable(left: Value, right: Value, what: str) -> SqlType:
    """The type two values are compared in (Spark's implicit casts between numbers, dates)."""
    common = st.common_type([left.type, right.type])
    if common is None or common.name == "void" and left.type != right.type:
        raise NotLocal(f"{what} between {left.type} and {right.type}")
    return common


def common_branch_type(values: list[Value], what: str) -> SqlType:
    common = st.common_type([v.type for v in values])
    if common is None:
        raise NotLocal(f"{what} over values of different types")
    if common.name == "void":
        raise NotLocal(f"{what} of NULLs only")
    return common


# -- functions -----------------------------------------------------------------------------------


def written_name(node: exp.Expression) -> str | None:
    """The function's name as the query spells it, lower case (sqlglot folds aliases such as
    date_diff and datediff into one class; Spark names the column after the spelling), as
    `local_engine.parse_query` tags it; None if unknown."""
    return node.meta.get("name")


def called(node: exp.Expression, default: str) -> str:
    """The function's name as the query spells it, else `default`."""
    return written_name(node) or default


def named(function: str | None, *values: Value) -> str | None:
    """Spark's name of a call, `function(a, b)` from its arguments' names (None: unnamed)."""
    if function is None or any(v.name is None for v in values):
        return None
    return f"{function}({', '.join(v.name for v in values)})"


def string(value: Value, what: str) -> Value:
    """An argument Spark takes as a STRING (an untyped NULL is one)."""
    if value.type.name == "void":
        return Value("CAST(NULL AS VARCHAR)", st.STRING, value.name)
    if value.type != st.STRING:
        raise NotLocal(f"{what} of a {value.type} (Spark casts it to a string)")
    return value


def integer(value: Value, what: str) -> Value:
    """An argument Spark takes as INT, SMALLINT or TINYINT (it refuses a BIGINT)."""
    if value.type.name == "void":
        return Value("CAST(NULL AS INTEGER)", st.INT, value.name)
    if not value.type.integral or value.type.name == "bigint":
        raise NotLocal(f"{what} with a {value.type} argument where Spark takes an INT")
    return value


def ascii_only(value: Value, sql: str) -> str:
    """`sql`, or a fallback to Spark for a value with a non-ASCII character (whose case mapping
    differs between the JVM and DuckDB)."""
    return f"(CASE WHEN regexp_matches({value.sql}, '[^\\x00-\\x7F]') THEN error('{FALLBACK}') ELSE {sql} END)"


# -- aggregates ----------------------------------------------------------------------------------


def aggregate_arg(node: exp.Expression, ctx: ExpressionContext, what: str) -> Value:
    """An aggregate's argument, read row by row; under FILTER (WHERE c) it is NULL where c is not
    true, which every aggregate here ignores, so the rows FILTER drops count for nothing."""
    if not ctx.aggregates:
        raise NotLocal(f"{what} outside a SELECT list, HAVING or ORDER BY")
    if ctx.in_aggregate:
        raise NotLocal("an aggregate inside an aggregate")
    inner = ExpressionContext(**{**ctx.__dict__, "in_aggregate": True, "windows": False, "aggregate_filter": None})
    value = translate(node, inner)
    if ctx.aggregate_filter is not None:
        value = replace(value, sql=f"(CASE WHEN {ctx.aggregate_filter} THEN {value.sql} END)")
    return value


def aggregated_value(sql: str, t: SqlType, name: str | None) -> Value:
    return Value(sql, t, name, aggregate=True, free=False)


# A BIGINT average is a sum of doubles: exact, whatever the order, while the sum of the values'
# magnitudes stays within 2**53; past that the answer comes from Spark (a guard at run time).
_EXACT_DOUBLE_SUM = 1 << 53
# avg(DECIMAL(p,s)) divides in DECIMAL(38, k) (Spark's division type, k = max(28 - p + s, 6)),
# rounding half up, then rounds to s + 4 digits: the same as one rounding of the exact quotient
# unless the count exceeds 10**(k - s - 4) / 2 rows; up to p = 12 that is over 10**12 rows.
_AVG_DECIMAL_PRECISION = 12


def average_of(value: Value, distinct: str, name: str | None) -> Value:
    """Spark's Average of an aggregate's argument (`distinct`: "DISTINCT " or "")."""
    if value.type.fractional:  # a double sum answered where its order does not matter, over the count
        return aggregated_value(f"af_double_average(list({distinct}CAST({value.sql} AS DOUBLE)))", st.DOUBLE, name)
    count = f"CAST(count({distinct}{value.sql}) AS DOUBLE)"
    if value.type.integral and value.type.name != "bigint":
        sql = f"(CAST(sum({distinct}{value.sql}) AS DOUBLE) / {count})"
        return aggregated_value(sql, st.DOUBLE, name)
    if value.type.name == "bigint":
        wide = f"CAST({value.sql} AS HUGEINT)"
        sql = (
            f"(CASE WHEN sum({distinct}abs({wide})) > {_EXACT_DOUBLE_SUM} THEN error('{FALLBACK}') "
            f"ELSE CAST(sum({distinct}{wide}) AS DOUBLE) / {count} END)"
        )
        return aggregated_value(sql, st.DOUBLE, name)
    if value.type.name == "decimal" and value.type.precision <= _AVG_DECIMAL_PRECISION:
        return aggregated_value(_decimal_average(value, distinct), st.decimal(value.type.precision + 4, value.type.scale + 4), name)
    raise NotLocal(f"avg of {value.type} (Spark accumulates it in a wider decimal)")


def _decimal_average(value: Value, distinct: str) -> str:
    """The exact quotient of the unscaled sum by the count, rounded half up (away from zero) to
    scale + 4 digits, in integers."""
    t = value.type
    unscaled = f"CAST({value.sql} * {10**t.scale} AS HUGEINT)"
    numerator = f"(sum({distinct}{unscaled}) * 10000)"
    n = f"CAST(count({distinct}{value.sql}) AS HUGEINT)"
    magnitude = f"(abs({numerator}) // {n} + CASE WHEN 2 * (abs({numerator}) % {n}) >= {n} THEN 1 ELSE 0 END)"
    result = st.decimal(t.precision + 4, t.scale + 4)
    unit = f"CAST('0.{'0' * (result.scale - 1)}1' AS DECIMAL({result.scale + 1},{result.scale}))"
    quotient = f"CAST(sign({numerator}) * {magnitude} AS DECIMAL({result.precision},0)) * {unit}"
    return f"(CASE WHEN {n} = 0 THEN NULL ELSE CAST({quotient} AS {result.duckdb}) END)"


# -- ORDER BY keys -------------------------------------------------------------------------------


def ordering(node: exp.Ordered, value: Value) -> str:
    """An ORDER BY key with Spark's NULL placement (first ascending, last descending) spelled out."""
    if not value.type.orderable:
        raise NotLocal(f"ordering by a {value.type}")
    desc = bool(node.args.get("desc"))
    nulls_first = node.args.get("nulls_first")
    if nulls_first is None:
        nulls_first = not desc
    return f"{value.sql} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}"
