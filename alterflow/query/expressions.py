"""Spark SQL expressions as DuckDB SQL with Spark's answers: one rule per kind of expression
(`functools.singledispatch` on sqlglot's classes), each giving a `Value` — the DuckDB text, the
Spark type and the name Spark gives the column when it is not aliased.

Every rule types its operands the way Spark's analyzer does (ANSI mode off, as alterflow's sessions
run) and writes the DuckDB expression so that DuckDB computes exactly that: operands are cast to
the type Spark computes in, integer arithmetic wraps around as the JVM's does, a division by zero
is NULL. What a rule cannot reproduce exactly raises `NotLocal`: the query then runs on Spark. A
value whose answer is only known at run time (a non-ASCII string under `upper`) is guarded: DuckDB
raises FALLBACK and the query runs on Spark.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation

from sqlglot import exp

from alterflow.query import spark_refusals
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


def _name(template: str, *values: Value) -> str | None:
    if any(v.name is None for v in values):
        return None
    return template.format(*(v.name for v in values))


def _args(node: exp.Expression, ctx: ExpressionContext) -> list[Value]:
    return [translate(a, ctx) for a in node.args.values() if isinstance(a, exp.Expression)]


# -- columns, literals ---------------------------------------------------------------------------


@dispatch_rule.register
def _column(node: exp.Column, ctx: ExpressionContext) -> Value:
    if isinstance(node.this, exp.Star):
        raise NotLocal("a * inside an expression")
    return ctx.resolve(node)


@dispatch_rule.register
def _paren(node: exp.Paren, ctx: ExpressionContext) -> Value:
    return translate(node.this, ctx)


@dispatch_rule.register
def _null(node: exp.Null, ctx: ExpressionContext) -> Value:
    return Value("NULL", st.VOID, "NULL")


@dispatch_rule.register
def _boolean(node: exp.Boolean, ctx: ExpressionContext) -> Value:
    return Value("TRUE" if node.this else "FALSE", st.BOOLEAN, "true" if node.this else "false")


def _integral_literal(text: str) -> Value:
    number = int(text)
    if -(1 << 31) <= number < (1 << 31):
        return Value(f"CAST({number} AS INTEGER)", st.INT, str(number), literal=str(number))
    if -(1 << 63) <= number < (1 << 63):
        return Value(f"CAST('{number}' AS BIGINT)", st.BIGINT, str(number), literal=str(number))
    digits = len(str(abs(number)))
    if digits > st.MAX_PRECISION:
        raise NotLocal("an integer literal of more than 38 digits")
    return Value(f"CAST('{number}' AS DECIMAL({digits},0))", st.decimal(digits, 0), str(number))


def _decimal_literal(text: str) -> Value:
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise NotLocal(f"the literal {text}") from None
    _sign, digits, exponent = number.as_tuple()
    scale = max(0, -exponent)
    precision = max(len(str(int("".join(map(str, digits)) or "0"))), scale)
    if precision > st.MAX_PRECISION or exponent > 0:
        raise NotLocal(f"the literal {text}")
    # Spark names it as Java's BigDecimal prints it: in scientific notation below 10^-6
    name = text if len(str(int("".join(map(str, digits)) or "0"))) - scale - 1 >= -6 else None
    return Value(f"CAST('{text}' AS DECIMAL({precision},{scale}))", st.decimal(precision, scale), name)


@dispatch_rule.register
def _literal(node: exp.Literal, ctx: ExpressionContext) -> Value:
    text = node.this
    if node.is_string:
        quoted = text.replace("'", "''")
        # Spark names a string literal by its value, control characters included; one with a
        # backslash is named in a way not reproduced here, so it runs locally only under an alias
        plain = "\\" not in text
        return Value(f"CAST('{quoted}' AS VARCHAR)", st.STRING, text if plain else None)
    if re.fullmatch(r"\d+", text):
        return _integral_literal(text)
    if re.fullmatch(r"\d*\.\d+|\d+\.\d*", text):
        return _decimal_literal(text)
    if re.fullmatch(r"(\d*\.\d+|\d+\.?\d*)[eE][-+]?\d+", text):  # Spark reads 1e3 as a DOUBLE
        return double_literal(text)
    raise NotLocal(f"the literal {text}")


@dispatch_rule.register
def _neg(node: exp.Neg, ctx: ExpressionContext) -> Value:
    inner = node.this
    if isinstance(inner, exp.Literal) and not inner.is_string:  # Spark reads -1 as one literal
        if re.fullmatch(r"\d+", inner.this):
            return _integral_literal(f"-{inner.this}")
        if re.fullmatch(r"\d*\.\d+|\d+\.\d*", inner.this):
            return _decimal_literal(f"-{inner.this}")
        if re.fullmatch(r"(\d*\.\d+|\d+\.?\d*)[eE][-+]?\d+", inner.this):
            return double_literal(f"-{inner.this}")
    if _is_typed_literal(inner):
        return typed_literal(inner, "-")
    value = translate(inner, ctx)
    if value.type.integral:
        sql = wrap(f"0 - {widened_sql(value)}", value.type)
    elif value.type.numeric:
        sql = f"(- {value.sql})"
    else:
        raise NotLocal(f"unary minus on {value.type}")
    return Value(sql, value.type, _name("(- {})", value), **merged_flags(value))


# -- arithmetic ----------------------------------------------------------------------------------


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


def _arithmetic(node: exp.Binary, ctx: ExpressionContext, op: str) -> Value:
    left, right = translate(node.left, ctx), translate(node.right, ctx)
    if st.DATE in (left.type, right.type):
        from alterflow.query.dates import date_arithmetic

        return date_arithmetic(left, right, op)
    if left.type.name == "void" or right.type.name == "void":
        raise NotLocal("arithmetic on an untyped NULL")
    lt, rt = operand_types(left, right)
    common = st.wider_numeric(lt, rt)
    if common is None and (lt.name == "decimal" or rt.name == "decimal") and lt.numeric and rt.numeric:
        common = st.decimal(st.MAX_PRECISION, 0)  # only its kind matters below: the result type is op's own
    if common is None:
        raise NotLocal(f"{op} between {left.type} and {right.type}")
    name = _name(f"({{}} {op} {{}})", left, right)
    if op == "%" and written_name(node) == "mod":
        name = _name("mod({}, {})", left, right)
    if common.name == "decimal":
        result = decimal_result(op, lt, rt)
        unadjusted = result.precision <= st.MAX_PRECISION and result == _decimal_result_bounded(op, lt, rt)
        if op in ("+", "-", "*") and unadjusted:  # exact in DuckDB's 38 digits
            wide = st.decimal(st.MAX_PRECISION, result.scale)
            sql = f"CAST(({cast(left, wide)} {op} {cast(right, wide)}) AS {result.duckdb})"
        else:
            sql = exact_decimal(op, left, right, result)
        return Value(sql, result, name, **merged_flags(left, right))
    if op == "/":
        return _divide(left, right, common, name)
    if op == "%":
        return remainder_value(left, right, common, name)
    if common.integral:
        sql = wrap(f"{widened_sql(replace(left, type=lt))} {op} {widened_sql(replace(right, type=rt))}", common)
        return Value(sql, common, name, **merged_flags(left, right))
    sql = f"({cast(left, common)} {op} {cast(right, common)})"
    return Value(sql, common, name, **merged_flags(left, right))


def _decimal_result_bounded(op: str, a: SqlType, b: SqlType) -> SqlType | None:
    """The + - * result type before any precision loss (None: past 38 digits)."""
    a, b = st.as_decimal(a), st.as_decimal(b)
    if op in ("+", "-"):
        scale = max(a.scale, b.scale)
        return st.bounded(max(a.precision - a.scale, b.precision - b.scale) + scale + 1, scale)
    if op == "*":
        return st.bounded(a.precision + b.precision + 1, a.scale + b.scale)
    return None


def _divide(left: Value, right: Value, common: SqlType, name: str | None) -> Value:
    a, b = cast(left, st.DOUBLE), cast(right, st.DOUBLE)
    return Value(f"(CASE WHEN {b} = 0 THEN NULL ELSE {a} / {b} END)", st.DOUBLE, name, **merged_flags(left, right))


def remainder_value(left: Value, right: Value, common: SqlType, name: str | None) -> Value:
    a, b = cast(left, common), cast(right, common)
    if common.integral:  # the JVM's MIN % -1 is 0, where DuckDB overflows
        sql = f"(CASE WHEN {b} = 0 THEN NULL WHEN {b} = -1 THEN CAST(0 AS {common.duckdb}) ELSE {a} % {b} END)"
    else:
        sql = f"(CASE WHEN {b} = 0 THEN NULL ELSE {a} % {b} END)"
    return Value(sql, common, name, **merged_flags(left, right))


dispatch_rule.register(exp.Add)(lambda node, ctx: _arithmetic(node, ctx, "+"))
dispatch_rule.register(exp.Sub)(lambda node, ctx: _arithmetic(node, ctx, "-"))
dispatch_rule.register(exp.Mul)(lambda node, ctx: _arithmetic(node, ctx, "*"))
dispatch_rule.register(exp.Div)(lambda node, ctx: _arithmetic(node, ctx, "/"))
dispatch_rule.register(exp.Mod)(lambda node, ctx: _arithmetic(node, ctx, "%"))


# -- comparisons and logic -----------------------------------------------------------------------


def comparable(left: Value, right: Value, what: str) -> SqlType:
    """The type two values are compared in (Spark's implicit casts between numbers, dates)."""
    common = st.common_type([left.type, right.type])
    if common is None or common.name == "void" and left.type != right.type:
        raise NotLocal(f"{what} between {left.type} and {right.type}")
    return common


def string_coerced(left: Value, right: Value, what: str) -> tuple[Value, Value]:
    """A string compared with a number or a boolean, as Spark's non-ANSI coercion casts them: a
    DECIMAL and the string both to DOUBLE, else the string to the other's type (Spark's CAST: an
    unparseable string is NULL, '2.9' is 2 for an INT). Other pairs are returned as they are. A
    date and a string compare as dates (`dates.as_date`)."""
    if {left.type, right.type} == {st.DATE, st.STRING}:
        from alterflow.query.dates import as_date

        return as_date(left, what), as_date(right, what)
    if st.STRING not in (left.type, right.type) or left.type == right.type:
        return left, right
    other = right.type if left.type == st.STRING else left.type
    if not (other.numeric or other == st.BOOLEAN):
        return left, right
    to = st.DOUBLE if other.name == "decimal" else other
    return Value(cast_sql(left, to), to, left.name, **merged_flags(left)), Value(cast_sql(right, to), to, right.name, **merged_flags(right))


def _compare(node: exp.Binary, ctx: ExpressionContext, op: str, spark_op: str) -> Value:
    left, right = string_coerced(translate(node.left, ctx), translate(node.right, ctx), "comparison")
    common = comparable(left, right, f"comparison {spark_op}")
    sql = f"({cast(left, common)} {op} {cast(right, common)})"
    name = _name(f"({{}} {spark_op} {{}})", left, right)
    if isinstance(node, exp.NEQ):
        name = _name("(NOT ({} = {}))", left, right)
    return Value(sql, st.BOOLEAN, name, **merged_flags(left, right))


for _cls, _op, _spark in (
    (exp.EQ, "=", "="),
    (exp.NEQ, "<>", "="),
    (exp.LT, "<", "<"),
    (exp.LTE, "<=", "<="),
    (exp.GT, ">", ">"),
    (exp.GTE, ">=", ">="),
    (exp.NullSafeEQ, "IS NOT DISTINCT FROM", "<=>"),
):
    dispatch_rule.register(_cls)(functools.partial(lambda node, ctx, op, spark: _compare(node, ctx, op, spark), op=_op, spark=_spark))


def _boolean_operand(node: exp.Expression, ctx: ExpressionContext, what: str) -> Value:
    value = translate(node, ctx)
    if value.type.name == "void":
        return replace(value, sql="CAST(NULL AS BOOLEAN)", type=st.BOOLEAN)
    if value.type != st.BOOLEAN:
        raise NotLocal(f"{what} of a {value.type}")
    return value


def _logic(node: exp.Connector, ctx: ExpressionContext, op: str) -> Value:
    left = _boolean_operand(node.left, ctx, op)
    right = _boolean_operand(node.right, ctx, op)
    return Value(f"({left.sql} {op} {right.sql})", st.BOOLEAN, _name(f"({{}} {op} {{}})", left, right), **merged_flags(left, right))


dispatch_rule.register(exp.And)(lambda node, ctx: _logic(node, ctx, "AND"))
dispatch_rule.register(exp.Or)(lambda node, ctx: _logic(node, ctx, "OR"))


@dispatch_rule.register
def _not(node: exp.Not, ctx: ExpressionContext) -> Value:
    if isinstance(node.this, exp.Is):
        inner = translate(node.this.this, ctx)
        return Value(f"({inner.sql} IS NOT NULL)", st.BOOLEAN, _name("({} IS NOT NULL)", inner), **merged_flags(inner))
    value = _boolean_operand(node.this, ctx, "NOT")
    return Value(f"(NOT {value.sql})", st.BOOLEAN, _name("(NOT {})", value), **merged_flags(value))


@dispatch_rule.register
def _is(node: exp.Is, ctx: ExpressionContext) -> Value:
    if not isinstance(node.expression, exp.Null):
        raise NotLocal("IS TRUE / IS FALSE")
    inner = translate(node.this, ctx)
    return Value(f"({inner.sql} IS NULL)", st.BOOLEAN, _name("({} IS NULL)", inner), **merged_flags(inner))


@dispatch_rule.register
def _in(node: exp.In, ctx: ExpressionContext) -> Value:
    position = ctx.subquery_position
    ctx = replace(ctx, subquery_position=None)
    needle = translate(node.this, ctx)
    if node.args.get("query") is not None:
        if position is None:
            raise NotLocal("IN (subquery) outside a WHERE condition (Spark answers false where SQL gives NULL)")
        sql, types = ctx.subquery(node.args["query"].this if isinstance(node.args["query"], exp.Subquery) else node.args["query"], "in")
        if len(types) != 1:
            raise NotLocal("IN with a subquery of several columns")
        common = comparable(needle, Value("", types[0], None), "IN")
        if common != types[0]:
            raise NotLocal("IN with a subquery of another type")
        return Value(f"({cast(needle, common)} IN ({sql}))", st.BOOLEAN, _name("({} IN (listquery()))", needle), **merged_flags(needle))
    if node.args.get("unnest") or node.args.get("field"):
        raise NotLocal("IN UNNEST")
    if not node.expressions:
        raise spark_refusals.empty_in_list()
    items = [translate(e, ctx) for e in node.expressions]
    common = _in_type([needle.type] + [i.type for i in items])
    if common is None or common.name == "void":
        raise NotLocal("IN over values of different types")
    if common == st.STRING:
        needle, items = _as_strings(needle), [_as_strings(i) for i in items]
    listed = ", ".join(cast(i, common) for i in items)
    names = [i.name for i in items]
    name = None if needle.name is None or None in names else f"({needle.name} IN ({', '.join(names)}))"
    return Value(f"({cast(needle, common)} IN ({listed}))", st.BOOLEAN, name, **merged_flags(needle, *items))


def _in_type(types: list[SqlType]) -> SqlType | None:
    """The type Spark's non-ANSI IN compares its values in: their wider common type, STRING where
    strings meet integers or decimals (Spark's string promotion)."""
    common = st.common_type(types)
    if common is not None or st.STRING not in types:
        return common
    if all(t == st.STRING or t.integral or t.name in ("decimal", "void") for t in types):
        return st.STRING
    return None


def _as_strings(value: Value) -> Value:
    return Value(cast_sql(value, st.STRING), st.STRING, value.name, **merged_flags(value))


@dispatch_rule.register
def _between(node: exp.Between, ctx: ExpressionContext) -> Value:
    """Spark's Between: (value >= low) AND (value <= high), each comparison coerced on its own."""
    value, low, high = (translate(node.args[k], ctx) for k in ("this", "low", "high"))
    above, low = string_coerced(value, low, "BETWEEN")
    below, high = string_coerced(value, high, "BETWEEN")
    lower = comparable(above, low, "BETWEEN")
    upper = comparable(below, high, "BETWEEN")
    sql = f"({cast(above, lower)} >= {cast(low, lower)} AND {cast(below, upper)} <= {cast(high, upper)})"
    return Value(sql, st.BOOLEAN, _name("between({}, {}, {})", value, low, high), **merged_flags(value, low, high))


@dispatch_rule.register
def _like(node: exp.Like, ctx: ExpressionContext) -> Value:
    value = translate(node.this, ctx)
    pattern = node.expression
    if value.type != st.STRING or not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise NotLocal("LIKE other than a string column against a literal pattern")
    if "\\" in pattern.this:
        raise NotLocal("LIKE with an escape")
    text = pattern.this.replace("'", "''")
    return Value(f"({value.sql} LIKE '{text}')", st.BOOLEAN, None, **merged_flags(value))


@dispatch_rule.register
def _exists(node: exp.Exists, ctx: ExpressionContext) -> Value:
    sql, _types = ctx.subquery(node.this, "exists")
    return Value(f"(EXISTS ({sql}))", st.BOOLEAN, "exists()")


@dispatch_rule.register
def _subquery(node: exp.Subquery, ctx: ExpressionContext) -> Value:
    sql, types = ctx.subquery(node.this)
    if len(types) != 1:
        raise NotLocal("a scalar subquery of several columns")
    return Value(f"({sql})", types[0], "scalarsubquery()")


# -- conditionals --------------------------------------------------------------------------------


def common_branch_type(values: list[Value], what: str) -> SqlType:
    common = st.common_type([v.type for v in values])
    if common is None:
        raise NotLocal(f"{what} over values of different types")
    if common.name == "void":
        raise NotLocal(f"{what} of NULLs only")
    return common


@dispatch_rule.register
def _case(node: exp.Case, ctx: ExpressionContext) -> Value:
    if node.this is not None:  # Spark's parser makes CASE x WHEN v ... into CASE WHEN (x = v) ...
        ifs = [exp.If(this=exp.EQ(this=node.this.copy(), expression=i.this.copy()), true=i.args["true"]) for i in node.args["ifs"]]
        return _case(exp.Case(ifs=ifs, default=node.args.get("default")), ctx)
    if any(translate(i.this, ctx).type.name == "void" for i in node.args["ifs"]):
        raise NotLocal("CASE WHEN NULL (Spark refuses a condition of type VOID)")
    conditions = [_boolean_operand(i.this, ctx, "CASE WHEN") for i in node.args["ifs"]]
    results = [translate(i.args["true"], ctx) for i in node.args["ifs"]]
    default = translate(node.args["default"], ctx) if node.args.get("default") is not None else None
    common = common_branch_type(results + ([default] if default else []), "CASE")
    parts = [f"WHEN {c.sql} THEN {cast(r, common)}" for c, r in zip(conditions, results)]
    otherwise = f" ELSE {cast(default, common)}" if default else ""
    values = conditions + results + ([default] if default else [])
    name = None
    if all(v.name is not None for v in values):
        named = " ".join(f"WHEN {c.name} THEN {r.name}" for c, r in zip(conditions, results))
        name = f"CASE {named}{f' ELSE {default.name}' if default else ''} END"
    return Value(f"(CASE {' '.join(parts)}{otherwise} END)", common, name, **merged_flags(*values))


@dispatch_rule.register
def _if(node: exp.If, ctx: ExpressionContext) -> Value:
    condition = _boolean_operand(node.this, ctx, "IF")
    yes = translate(node.args["true"], ctx)
    no = translate(node.args["false"], ctx) if node.args.get("false") is not None else Value("NULL", st.VOID, "NULL")
    common = common_branch_type([yes, no], "IF")
    sql = f"(CASE WHEN {condition.sql} THEN {cast(yes, common)} ELSE {cast(no, common)} END)"
    return Value(sql, common, _name("(IF({}, {}, {}))", condition, yes, no), **merged_flags(condition, yes, no))


@dispatch_rule.register
def _coalesce(node: exp.Coalesce, ctx: ExpressionContext) -> Value:
    values = [translate(node.this, ctx)] + [translate(e, ctx) for e in node.expressions]
    common = common_branch_type(values, "coalesce")
    names = [v.name for v in values]
    name = None if None in names else f"{node.meta.get('name', 'coalesce')}({', '.join(names)})"  # nvl, ifnull
    return Value(f"coalesce({', '.join(cast(v, common) for v in values)})", common, name, **merged_flags(*values))


# -- casts ---------------------------------------------------------------------------------------

_SPARK_CAST_NAMES = {
    "boolean": "BOOLEAN",
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INT",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "STRING",
    "date": "DATE",
    "timestamp_ntz": "TIMESTAMP_NTZ",
}


def cast_target(node: exp.DataType) -> SqlType:
    """The Spark type a CAST names."""
    kind = node.this
    names = {
        exp.DataType.Type.BOOLEAN: "boolean",
        exp.DataType.Type.TINYINT: "tinyint",
        exp.DataType.Type.SMALLINT: "smallint",
        exp.DataType.Type.INT: "int",
        exp.DataType.Type.BIGINT: "bigint",
        exp.DataType.Type.FLOAT: "float",
        exp.DataType.Type.DOUBLE: "double",
        exp.DataType.Type.TEXT: "string",
        exp.DataType.Type.DATE: "date",
        exp.DataType.Type.TIMESTAMPNTZ: "timestamp_ntz",
    }
    if kind == exp.DataType.Type.DECIMAL:
        params = [int(p.name) for p in node.expressions]
        precision, scale = (params + [10, 0][len(params) :])[:2]
        if not 1 <= precision <= st.MAX_PRECISION or not 0 <= scale <= precision:
            raise NotLocal("an invalid DECIMAL")
        return st.decimal(precision, scale)
    if kind not in names:
        raise NotLocal(f"a cast to {node.sql('spark')}")
    return SqlType(names[kind])


def cast_sql(value: Value, to: SqlType) -> str:
    """Spark's CAST (ANSI off) of `value` to `to`, for the pairs whose answers DuckDB gives the same."""
    source = value.type
    if source == to:
        return value.sql
    if source.name == "void":
        return f"CAST(NULL AS {to.duckdb})"
    if source.integral and to.integral:
        return cast(value, to) if st.INTEGRAL_BITS[to.name] >= st.INTEGRAL_BITS[source.name] else wrap(value.sql, to)
    if (source.integral or source.name == "decimal") and to.name == "decimal":
        return f"TRY_CAST({value.sql} AS {to.duckdb})"  # NULL when it does not fit
    if source.integral and to.fractional or source.name == "float" and to.name == "double":
        return cast(value, to)
    if source.name == "double" and to.name == "float":  # past the float's range: an infinity, where DuckDB fails
        edge = "CAST('3.4028235677973366e38' AS DOUBLE)"  # half a unit past the largest float
        return (
            f"(CASE WHEN isnan({value.sql}) THEN CAST('NaN' AS FLOAT) WHEN {value.sql} >= {edge} THEN CAST('Infinity' AS FLOAT) "
            f"WHEN {value.sql} <= -{edge} THEN CAST('-Infinity' AS FLOAT) ELSE CAST({value.sql} AS FLOAT) END)"
        )
    if source.name == "decimal" and to.fractional and source.precision <= 15:
        return cast(value, to)  # the unscaled value and the power of ten are exact doubles
    if to == st.STRING and (source.integral or source.name in ("boolean", "decimal", "date")):
        return cast(value, to)
    if source.name == "date" and to == st.TIMESTAMP_NTZ or source == st.TIMESTAMP_NTZ and to.name == "date":
        return cast(value, to)
    if source.name == "boolean" and to.integral:
        return cast(value, to)
    if source.integral and to.name == "boolean":
        return cast(value, to)
    if source.fractional and to.integral:
        return _fractional_to_integral(value, to)
    if source == st.STRING:
        from alterflow.query.string_casts import from_string

        return from_string(value, to)
    raise NotLocal(f"CAST from {source} to {to}")


def _fractional_to_integral(value: Value, to: SqlType) -> str:
    """The JVM's narrowing (ANSI off): toward zero, NaN 0, saturated at the bounds of INT (of
    BIGINT for a BIGINT); TINYINT and SMALLINT through INT, then wrapped around. DuckDB's own
    CAST rounds and fails out of range."""
    wide = st.BIGINT if to == st.BIGINT else st.INT
    lo, hi = -(1 << (st.INTEGRAL_BITS[wide.name] - 1)), (1 << (st.INTEGRAL_BITS[wide.name] - 1)) - 1
    d = cast(value, st.DOUBLE)
    sql = (
        f"(CASE WHEN isnan({d}) THEN CAST(0 AS {wide.duckdb}) WHEN {d} >= CAST('{hi}' AS DOUBLE) THEN CAST('{hi}' AS {wide.duckdb}) "
        f"WHEN {d} <= CAST('{lo}' AS DOUBLE) THEN CAST('{lo}' AS {wide.duckdb}) ELSE CAST(trunc({d}) AS {wide.duckdb}) END)"
    )
    return sql if wide == to else wrap(sql, to)


def _cast(node: exp.Cast, ctx: ExpressionContext) -> Value:
    if _is_typed_literal(node):
        return typed_literal(node, "")
    to = cast_target(node.args["to"])
    # sqlglot reads CAST(x AS t) and x::t as TRY_CAST; a CAST is Spark's typed literal DATE '...'
    # (no position of its own) or a cast function such as int(x) or date(x), named after x alone
    function_style = type(node) is exp.Cast and "start" in node.meta
    if type(node) is exp.Cast and not function_style and isinstance(node.this, exp.Literal) and node.this.is_string:
        from alterflow.query import dates

        return dates.typed_literal(node.this.this, to)
    if isinstance(node, exp.TryCast) and "safe" not in node.args and not isinstance(node.this, _ATOMS):
        raise NotLocal("x::type over an operator (Spark's :: binds tighter than sqlglot reads it)")
    value = translate(node.this, ctx)
    spelled = "TRY_CAST" if node.args.get("safe") else "CAST"
    name = None if value.name is None else f"{spelled}({value.name} AS {_spark_type_sql(to)})"
    if type(node) is exp.Cast:
        name = value.name if function_style else None
    return Value(cast_sql(value, to), to, name, **merged_flags(value))


# What `x::type` may cast locally: sqlglot reads `a IS NOT NULL :: string` as a cast of the whole
# predicate, where Spark casts NULL alone (and then fails to parse the rest).
_ATOMS = (exp.Column, exp.Literal, exp.Paren, exp.Func, exp.Null, exp.Boolean)


def _is_typed_literal(node: exp.Expression) -> bool:
    """Whether sqlglot read a number with Spark's type suffix (`1L`, `2S`, `3Y`, `1.5D`, `1.5BD`):
    it gives a TryCast without the `safe` flag an explicit TRY_CAST carries, as it does for `x::t`,
    which the query's text tells apart: a suffix letter right after the number's digits, or, for
    BD, a string literal sqlglot made (it has no position in the text)."""
    if not (isinstance(node, exp.TryCast) and "safe" not in node.args and isinstance(node.this, exp.Literal)):
        return False
    literal = node.this
    start, end, text = literal.meta.get("start"), literal.meta.get("end"), node.root().meta.get("sql")
    if literal.is_string:
        return start is None and node.args["to"].this == exp.DataType.Type.DECIMAL
    return text is not None and start is not None and text[start:end] == literal.this and text[end : end + 1].isalpha()


_SUFFIX_TYPES = {"bigint": st.BIGINT, "smallint": SqlType("smallint"), "tinyint": SqlType("tinyint")}


def typed_literal(node: exp.TryCast, sign: str) -> Value:
    """A literal with a type suffix, as Spark's parser reads it: an integral one must fit its type
    (Spark refuses it otherwise), a DOUBLE one is named as Java prints it, a BD one is a DECIMAL
    of its digits. FLOAT literals are left to Spark (named by Java's float printing)."""
    text = sign + node.this.this
    target = node.args["to"].this
    if target in (exp.DataType.Type.BIGINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.TINYINT):
        to = _SUFFIX_TYPES[target.value.lower()]
        bits = st.INTEGRAL_BITS[to.name]
        if not re.fullmatch(r"-?\d+", text) or not -(1 << (bits - 1)) <= int(text) < (1 << (bits - 1)):
            raise NotLocal(f"the literal {text} (Spark refuses it)")
        return Value(f"CAST('{int(text)}' AS {to.duckdb})", to, str(int(text)))
    if target == exp.DataType.Type.DOUBLE:
        return double_literal(text)
    if target == exp.DataType.Type.DECIMAL and re.fullmatch(r"-?(\d*\.\d+|\d+\.\d*|\d+)", text):
        return _decimal_literal(text)
    raise NotLocal(f"the literal {text}")


def double_literal(text: str) -> Value:
    """A DOUBLE literal (`1.5D`, `1e3`), named as Java's Double.toString prints it where that is
    Python's repr too (plain notation between 10^-3 and 10^7); other magnitudes are left to Spark."""
    number = float(text)
    shown = repr(number)
    if not (number == 0 or 1e-3 <= abs(number) < 1e7) or "e" in shown or "inf" in shown or "nan" in shown:
        raise NotLocal(f"the literal {text}")
    return Value(f"CAST('{shown}' AS DOUBLE)", st.DOUBLE, shown)


def _spark_type_sql(t: SqlType) -> str:
    return f"DECIMAL({t.precision},{t.scale})" if t.name == "decimal" else _SPARK_CAST_NAMES[t.name]


dispatch_rule.register(exp.Cast)(_cast)
dispatch_rule.register(exp.TryCast)(_cast)


# -- functions -----------------------------------------------------------------------------------


def _function_name(node: exp.Func) -> str:
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


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


@dispatch_rule.register
def _upper(node: exp.Upper, ctx: ExpressionContext) -> Value:
    value = string(translate(node.this, ctx), "upper")
    return Value(ascii_only(value, f"upper({value.sql})"), st.STRING, _name("upper({})", value), **merged_flags(value))


@dispatch_rule.register
def _lower(node: exp.Lower, ctx: ExpressionContext) -> Value:
    value = string(translate(node.this, ctx), "lower")
    return Value(ascii_only(value, f"lower({value.sql})"), st.STRING, _name("lower({})", value), **merged_flags(value))


@dispatch_rule.register
def _length(node: exp.Length, ctx: ExpressionContext) -> Value:
    value = string(translate(node.this, ctx), "length")
    return Value(f"CAST(length({value.sql}) AS INTEGER)", st.INT, named(called(node, "length"), value), **merged_flags(value))


def _concat_values(values: list[Value]) -> Value:
    for v in values:
        string(v, "concat")
    names = [v.name for v in values]
    name = None if None in names else f"concat({', '.join(names)})"
    return Value(f"({' || '.join(v.sql for v in values)})", st.STRING, name, **merged_flags(*values))


@dispatch_rule.register
def _concat(node: exp.Concat, ctx: ExpressionContext) -> Value:
    return _concat_values([translate(e, ctx) for e in node.expressions])


@dispatch_rule.register
def _dpipe(node: exp.DPipe, ctx: ExpressionContext) -> Value:
    value = _concat_values([translate(node.this, ctx), translate(node.expression, ctx)])
    return replace(value, name=None)


@dispatch_rule.register
def _substring(node: exp.Substring, ctx: ExpressionContext) -> Value:
    """Spark's substring (UTF8String.substringSQL): 1-based, 0 read as 1, negative from the end,
    clamped to the string."""
    value = string(translate(node.this, ctx), "substring")
    pos = translate(node.args["start"], ctx) if node.args.get("start") is not None else None
    length = translate(node.args["length"], ctx) if node.args.get("length") is not None else None
    if (
        pos is None
        or not pos.type.integral
        or pos.type.name == "bigint"
        or length is not None
        and (not length.type.integral or length.type.name == "bigint")
    ):
        raise NotLocal("substring with positions that are not INT")
    n = f"CAST(length({value.sql}) AS BIGINT)"
    p = f"CAST({pos.sql} AS BIGINT)"
    start = f"(CASE WHEN {p} > 0 THEN {p} - 1 WHEN {p} < 0 THEN {n} + {p} ELSE 0 END)"
    end = n if length is None else f"({start} + CAST({length.sql} AS BIGINT))"
    lo, hi = f"greatest({start}, 0)", f"least({end}, {n})"
    missing = " OR ".join(f"{v.sql} IS NULL" for v in (value, pos, length) if v is not None)  # DuckDB's least skips NULLs
    sql = f"(CASE WHEN {missing} THEN NULL WHEN {hi} <= {lo} THEN '' ELSE substring({value.sql}, {lo} + 1, {hi} - {lo}) END)"
    args = [value, pos] + ([length] if length is not None else [])
    return Value(sql, st.STRING, None, **merged_flags(*args))


@dispatch_rule.register
def _trim(node: exp.Trim, ctx: ExpressionContext) -> Value:
    if node.args.get("expression") is not None or node.args.get("collation") is not None:
        raise NotLocal("trim with characters")
    value = string(translate(node.this, ctx), "trim")
    position = (node.args.get("position") or "").upper()
    function = {"": "trim", "BOTH": "trim", "LEADING": "ltrim", "TRAILING": "rtrim"}[position]
    name = _name(f"{function}({{}})", value) if written_name(node) == function else None  # ltrim(s), not TRIM(LEADING FROM s)
    return Value(f"{function}({value.sql}, ' ')", st.STRING, name, **merged_flags(value))


@dispatch_rule.register
def _abs(node: exp.Abs, ctx: ExpressionContext) -> Value:
    value = translate(node.this, ctx)
    if not value.type.numeric:
        raise NotLocal(f"abs of a {value.type}")
    sql = f"abs({value.sql})"
    if value.type.integral:  # abs(MIN) is MIN on the JVM
        sql = wrap(f"abs({widened_sql(value)})", value.type)
    return Value(sql, value.type, _name("abs({})", value), **merged_flags(value))


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


def distinct_arg(node: exp.Expression | None, what: str) -> tuple[exp.Expression, str]:
    """An aggregate's one argument and "DISTINCT " if it is written f(DISTINCT x), else ""."""
    if isinstance(node, exp.Distinct):
        if len(node.expressions) != 1:
            raise NotLocal(f"{what}(DISTINCT) of several values")
        return node.expressions[0], "DISTINCT "
    if node is None:
        raise NotLocal(f"{what} without an argument")
    return node, ""


def aggregated_value(sql: str, t: SqlType, name: str | None) -> Value:
    return Value(sql, t, name, aggregate=True, free=False)


@dispatch_rule.register
def _count(node: exp.Count, ctx: ExpressionContext) -> Value:
    arg = node.this
    if arg is None:
        raise NotLocal("count() without an argument (Spark refuses it: WRONG_NUM_ARGS)")
    if isinstance(arg, exp.Star):
        if not ctx.aggregates:
            raise NotLocal("count outside a SELECT list, HAVING or ORDER BY")
        if ctx.aggregate_filter is not None:
            return aggregated_value(f"count(CASE WHEN {ctx.aggregate_filter} THEN 1 END)", st.BIGINT, "count(1)")
        return aggregated_value("count(*)", st.BIGINT, "count(1)")
    if node.expressions:
        raise NotLocal("count of several values")
    if isinstance(arg, exp.Distinct) and len(arg.expressions) > 1:
        # Spark counts the distinct tuples whose members are all non-NULL (-0.0 read as 0.0)
        values = [aggregate_arg(e, ctx, "count") for e in arg.expressions]
        present = " AND ".join(f"{v.sql} IS NOT NULL" for v in values)
        members = ", ".join(normalized_zero(v).sql for v in values)
        names = [v.name for v in values]
        name = None if None in names else f"count(DISTINCT {', '.join(names)})"
        return aggregated_value(f"count(DISTINCT CASE WHEN {present} THEN row({members}) END)", st.BIGINT, name)
    arg, distinct = distinct_arg(arg, "count")
    value = aggregate_arg(arg, ctx, "count")
    return aggregated_value(f"count({distinct}{value.sql})", st.BIGINT, _name(f"count({distinct}{{}})", value))


@dispatch_rule.register
def _sum(node: exp.Sum, ctx: ExpressionContext) -> Value:
    arg, distinct = distinct_arg(node.this, "sum")
    value = aggregate_arg(arg, ctx, "sum")
    name = _name(f"sum({distinct}{{}})", value)
    if value.type.integral:  # a long accumulator that wraps around; modular sums commute
        return aggregated_value(wrap(f"sum({distinct}{widened_sql(value)})", st.BIGINT), st.BIGINT, name)
    if value.type.name == "decimal":
        result = st.decimal(min(value.type.precision + 10, st.MAX_PRECISION), value.type.scale)
        return aggregated_value(f"TRY_CAST(sum({distinct}{value.sql}) AS {result.duckdb})", result, name)
    if value.type.fractional:  # answered where no order of addition changes it (spark_moments.double_sum)
        return aggregated_value(f"af_double_sum(list({distinct}CAST({value.sql} AS DOUBLE)))", st.DOUBLE, name)
    raise NotLocal(f"sum of {value.type}")


# A BIGINT average is a sum of doubles: exact, whatever the order, while the sum of the values'
# magnitudes stays within 2**53; past that the answer comes from Spark (a guard at run time).
_EXACT_DOUBLE_SUM = 1 << 53
# avg(DECIMAL(p,s)) divides in DECIMAL(38, k) (Spark's division type, k = max(28 - p + s, 6)),
# rounding half up, then rounds to s + 4 digits: the same as one rounding of the exact quotient
# unless the count exceeds 10**(k - s - 4) / 2 rows; up to p = 12 that is over 10**12 rows.
_AVG_DECIMAL_PRECISION = 12


@dispatch_rule.register
def _avg(node: exp.Avg, ctx: ExpressionContext) -> Value:
    arg, distinct = distinct_arg(node.this, "avg")
    value = aggregate_arg(arg, ctx, "avg")
    return average_of(value, distinct, _name(f"avg({distinct}{{}})", value))


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


def _extreme(node: exp.Func, ctx: ExpressionContext, function: str) -> Value:
    if node.expressions:
        raise NotLocal(f"{function} of several values")
    arg, distinct = distinct_arg(node.this, function)  # DISTINCT changes no extreme, only the name
    value = aggregate_arg(arg, ctx, function)
    if value.type.name == "void":
        raise NotLocal(f"{function} of NULL")
    return aggregated_value(f"{function}({value.sql})", value.type, _name(f"{function}({distinct}{{}})", value))


dispatch_rule.register(exp.Min)(lambda node, ctx: _extreme(node, ctx, "min"))
dispatch_rule.register(exp.Max)(lambda node, ctx: _extreme(node, ctx, "max"))


# -- window functions ----------------------------------------------------------------------------


def ordering(node: exp.Ordered, value: Value) -> str:
    """An ORDER BY key with Spark's NULL placement (first ascending, last descending) spelled out."""
    if not value.type.orderable:
        raise NotLocal(f"ordering by a {value.type}")
    desc = bool(node.args.get("desc"))
    nulls_first = node.args.get("nulls_first")
    if nulls_first is None:
        nulls_first = not desc
    return f"{value.sql} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}"


# -- functions sqlglot has no class for ------------------------------------------------------------

# Function name (lower case) -> its rule; each family module adds its own.
ANONYMOUS_RULES: dict[str, object] = {}


@dispatch_rule.register
def _anonymous(node: exp.Anonymous, ctx: ExpressionContext) -> Value:
    rule = ANONYMOUS_RULES.get(node.name.lower())
    if rule is None:
        raise NotLocal(f"function {node.name.lower()} is not in the local engine's set")
    return rule(node, ctx)


# Families of rules in modules of their own, registered on `dispatch_rule` when imported.
from alterflow.query import aggregates, dates, math_functions, scalar_functions, string_casts, windows  # noqa: E402, F401
