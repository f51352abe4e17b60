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

from alterflow.query import sql_types as st
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
    subquery: object  # (exp.Expression) -> (sql, [SqlType]): an uncorrelated subquery
    aggregates: bool = False  # aggregate functions allowed here
    windows: bool = False  # window functions allowed here
    grouped: dict[str, Value] = field(default_factory=dict)  # GROUP BY expressions, by DuckDB text
    aliases: dict[str, Value] = field(default_factory=dict)  # select aliases (HAVING, GROUP BY)
    in_aggregate: bool = False


def translate(node: exp.Expression, ctx: ExpressionContext) -> Value:
    value = _rule(node, ctx)
    if ctx.grouped and not ctx.in_aggregate and value.sql in ctx.grouped:
        value = replace(ctx.grouped[value.sql], name=value.name, free=False)  # the GROUP BY key itself
    return value


def normalized_zero(value: Value) -> Value:
    """A floating-point value with -0.0 read as 0.0, as Spark's grouping, DISTINCT and set
    operations compare and return it (NormalizeFloatingNumbers)."""
    if not value.type.fractional:
        return value
    zero = f"CAST(0 AS {value.type.duckdb})"
    return replace(value, sql=f"(CASE WHEN {value.sql} = 0 THEN {zero} ELSE {value.sql} END)")


@functools.singledispatch
def _rule(node: exp.Expression, ctx: ExpressionContext) -> Value:
    raise NotLocal(f"{_construct(node)} is not in the local engine's set")


def _construct(node: exp.Expression) -> str:
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


def _wide(value: Value) -> str:
    bits = st.INTEGRAL_BITS[value.type.name]
    return f"CAST({value.sql} AS {'HUGEINT' if bits == 64 else 'BIGINT'})"


def _merge(*values: Value, **changes) -> dict:
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


@_rule.register
def _column(node: exp.Column, ctx: ExpressionContext) -> Value:
    if isinstance(node.this, exp.Star):
        raise NotLocal("a * inside an expression")
    return ctx.resolve(node)


@_rule.register
def _paren(node: exp.Paren, ctx: ExpressionContext) -> Value:
    return translate(node.this, ctx)


@_rule.register
def _null(node: exp.Null, ctx: ExpressionContext) -> Value:
    return Value("NULL", st.VOID, "NULL")


@_rule.register
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
    return Value(f"CAST('{text}' AS DECIMAL({precision},{scale}))", st.decimal(precision, scale), text)


@_rule.register
def _literal(node: exp.Literal, ctx: ExpressionContext) -> Value:
    text = node.this
    if node.is_string:
        quoted = text.replace("'", "''")
        return Value(f"CAST('{quoted}' AS VARCHAR)", st.STRING, text)
    if re.fullmatch(r"\d+", text):
        return _integral_literal(text)
    if re.fullmatch(r"\d*\.\d+|\d+\.\d*", text):
        return _decimal_literal(text)
    raise NotLocal(f"the literal {text}")


@_rule.register
def _neg(node: exp.Neg, ctx: ExpressionContext) -> Value:
    inner = node.this
    if isinstance(inner, exp.Literal) and not inner.is_string:  # Spark reads -1 as one literal
        if re.fullmatch(r"\d+", inner.this):
            return _integral_literal(f"-{inner.this}")
        if re.fullmatch(r"\d*\.\d+|\d+\.\d*", inner.this):
            return _decimal_literal(f"-{inner.this}")
    value = translate(inner, ctx)
    if value.type.integral:
        sql = wrap(f"0 - {_wide(value)}", value.type)
    elif value.type.numeric:
        sql = f"(- {value.sql})"
    else:
        raise NotLocal(f"unary minus on {value.type}")
    return Value(sql, value.type, _name("(- {})", value), **_merge(value))


# -- arithmetic ----------------------------------------------------------------------------------


def _operand_types(left: Value, right: Value) -> tuple[SqlType, SqlType]:
    """Spark's operand types for a decimal meeting an integral literal: the literal's own digits."""
    lt, rt = left.type, right.type
    if lt.name == "decimal" and right.literal is not None:
        rt = st.literal_decimal(right.literal)
    if rt.name == "decimal" and left.literal is not None:
        lt = st.literal_decimal(left.literal)
    return lt, rt


def _decimal_result(op: str, a: SqlType, b: SqlType) -> SqlType | None:
    """DecimalPrecision's result type for + - * (None: over 38 digits, or / and %)."""
    a, b = st.as_decimal(a), st.as_decimal(b)
    if op in ("+", "-"):
        scale = max(a.scale, b.scale)
        return st.bounded(max(a.precision - a.scale, b.precision - b.scale) + scale + 1, scale)
    if op == "*":
        return st.bounded(a.precision + b.precision + 1, a.scale + b.scale)
    return None


def _arithmetic(node: exp.Binary, ctx: ExpressionContext, op: str) -> Value:
    left, right = translate(node.left, ctx), translate(node.right, ctx)
    if left.type.name == "void" or right.type.name == "void":
        raise NotLocal("arithmetic on an untyped NULL")
    lt, rt = _operand_types(left, right)
    common = st.wider_numeric(lt, rt)
    if common is None:
        raise NotLocal(f"{op} between {left.type} and {right.type}")
    name = _name(f"({{}} {op} {{}})", left, right)
    if op == "/":
        return _divide(left, right, common, name)
    if op == "%":
        return _remainder(left, right, common, name)
    if common.name == "decimal":
        result = _decimal_result(op, lt, rt)
        if result is None:
            raise NotLocal(f"decimal {op} needing more than 38 digits")
        wide = st.decimal(st.MAX_PRECISION, result.scale)
        sql = f"CAST(({cast(left, wide)} {op} {cast(right, wide)}) AS {result.duckdb})"
        return Value(sql, result, name, **_merge(left, right))
    if common.integral:
        sql = wrap(f"{_wide(replace(left, type=lt))} {op} {_wide(replace(right, type=rt))}", common)
        return Value(sql, common, name, **_merge(left, right))
    sql = f"({cast(left, common)} {op} {cast(right, common)})"
    return Value(sql, common, name, **_merge(left, right))


def _divide(left: Value, right: Value, common: SqlType, name: str | None) -> Value:
    if common.name == "decimal":
        raise NotLocal("decimal division")
    a, b = cast(left, st.DOUBLE), cast(right, st.DOUBLE)
    return Value(f"(CASE WHEN {b} = 0 THEN NULL ELSE {a} / {b} END)", st.DOUBLE, name, **_merge(left, right))


def _remainder(left: Value, right: Value, common: SqlType, name: str | None) -> Value:
    if common.name == "decimal":
        raise NotLocal("decimal remainder")
    a, b = cast(left, common), cast(right, common)
    if common.integral:  # the JVM's MIN % -1 is 0, where DuckDB overflows
        sql = f"(CASE WHEN {b} = 0 THEN NULL WHEN {b} = -1 THEN CAST(0 AS {common.duckdb}) ELSE {a} % {b} END)"
    else:
        sql = f"(CASE WHEN {b} = 0 THEN NULL ELSE {a} % {b} END)"
    return Value(sql, common, name, **_merge(left, right))


_rule.register(exp.Add)(lambda node, ctx: _arithmetic(node, ctx, "+"))
_rule.register(exp.Sub)(lambda node, ctx: _arithmetic(node, ctx, "-"))
_rule.register(exp.Mul)(lambda node, ctx: _arithmetic(node, ctx, "*"))
_rule.register(exp.Div)(lambda node, ctx: _arithmetic(node, ctx, "/"))
_rule.register(exp.Mod)(lambda node, ctx: _arithmetic(node, ctx, "%"))


# -- comparisons and logic -----------------------------------------------------------------------


def comparable(left: Value, right: Value, what: str) -> SqlType:
    """The type two values are compared in (Spark's implicit casts between numbers, dates)."""
    common = st.common_type([left.type, right.type])
    if common is None or common.name == "void" and left.type != right.type:
        raise NotLocal(f"{what} between {left.type} and {right.type}")
    return common


def _compare(node: exp.Binary, ctx: ExpressionContext, op: str, spark_op: str) -> Value:
    left, right = translate(node.left, ctx), translate(node.right, ctx)
    common = comparable(left, right, f"comparison {spark_op}")
    sql = f"({cast(left, common)} {op} {cast(right, common)})"
    name = _name(f"({{}} {spark_op} {{}})", left, right)
    if isinstance(node, exp.NEQ):
        name = _name("(NOT ({} = {}))", left, right)
    return Value(sql, st.BOOLEAN, name, **_merge(left, right))


for _cls, _op, _spark in (
    (exp.EQ, "=", "="),
    (exp.NEQ, "<>", "="),
    (exp.LT, "<", "<"),
    (exp.LTE, "<=", "<="),
    (exp.GT, ">", ">"),
    (exp.GTE, ">=", ">="),
    (exp.NullSafeEQ, "IS NOT DISTINCT FROM", "<=>"),
):
    _rule.register(_cls)(functools.partial(lambda node, ctx, op, spark: _compare(node, ctx, op, spark), op=_op, spark=_spark))


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
    return Value(f"({left.sql} {op} {right.sql})", st.BOOLEAN, _name(f"({{}} {op} {{}})", left, right), **_merge(left, right))


_rule.register(exp.And)(lambda node, ctx: _logic(node, ctx, "AND"))
_rule.register(exp.Or)(lambda node, ctx: _logic(node, ctx, "OR"))


@_rule.register
def _not(node: exp.Not, ctx: ExpressionContext) -> Value:
    if isinstance(node.this, exp.Is):
        inner = translate(node.this.this, ctx)
        return Value(f"({inner.sql} IS NOT NULL)", st.BOOLEAN, _name("({} IS NOT NULL)", inner), **_merge(inner))
    value = _boolean_operand(node.this, ctx, "NOT")
    return Value(f"(NOT {value.sql})", st.BOOLEAN, _name("(NOT {})", value), **_merge(value))


@_rule.register
def _is(node: exp.Is, ctx: ExpressionContext) -> Value:
    if not isinstance(node.expression, exp.Null):
        raise NotLocal("IS TRUE / IS FALSE")
    inner = translate(node.this, ctx)
    return Value(f"({inner.sql} IS NULL)", st.BOOLEAN, _name("({} IS NULL)", inner), **_merge(inner))


@_rule.register
def _in(node: exp.In, ctx: ExpressionContext) -> Value:
    needle = translate(node.this, ctx)
    if node.args.get("query") is not None:
        sql, types = ctx.subquery(node.args["query"].this if isinstance(node.args["query"], exp.Subquery) else node.args["query"])
        if len(types) != 1:
            raise NotLocal("IN with a subquery of several columns")
        common = comparable(needle, Value("", types[0], None), "IN")
        if common != types[0]:
            raise NotLocal("IN with a subquery of another type")
        return Value(f"({cast(needle, common)} IN ({sql}))", st.BOOLEAN, None, **_merge(needle))
    if node.args.get("unnest") or node.args.get("field"):
        raise NotLocal("IN UNNEST")
    items = [translate(e, ctx) for e in node.expressions]
    common = st.common_type([needle.type] + [i.type for i in items])
    if common is None or common.name == "void":
        raise NotLocal("IN over values of different types")
    listed = ", ".join(cast(i, common) for i in items)
    names = [i.name for i in items]
    name = None if needle.name is None or None in names else f"({needle.name} IN ({', '.join(names)}))"
    return Value(f"({cast(needle, common)} IN ({listed}))", st.BOOLEAN, name, **_merge(needle, *items))


@_rule.register
def _between(node: exp.Between, ctx: ExpressionContext) -> Value:
    value, low, high = (translate(node.args[k], ctx) for k in ("this", "low", "high"))
    lower = comparable(value, low, "BETWEEN")
    upper = comparable(value, high, "BETWEEN")
    sql = f"({cast(value, lower)} >= {cast(low, lower)} AND {cast(value, upper)} <= {cast(high, upper)})"
    return Value(sql, st.BOOLEAN, None, **_merge(value, low, high))


@_rule.register
def _like(node: exp.Like, ctx: ExpressionContext) -> Value:
    value = translate(node.this, ctx)
    pattern = node.expression
    if value.type != st.STRING or not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise NotLocal("LIKE other than a string column against a literal pattern")
    if "\\" in pattern.this:
        raise NotLocal("LIKE with an escape")
    text = pattern.this.replace("'", "''")
    return Value(f"({value.sql} LIKE '{text}')", st.BOOLEAN, None, **_merge(value))


@_rule.register
def _exists(node: exp.Exists, ctx: ExpressionContext) -> Value:
    sql, _types = ctx.subquery(node.this)
    return Value(f"(EXISTS ({sql}))", st.BOOLEAN, None)


@_rule.register
def _subquery(node: exp.Subquery, ctx: ExpressionContext) -> Value:
    sql, types = ctx.subquery(node.this)
    if len(types) != 1:
        raise NotLocal("a scalar subquery of several columns")
    return Value(f"({sql})", types[0], None)


# -- conditionals --------------------------------------------------------------------------------


def _branches(values: list[Value], what: str) -> SqlType:
    common = st.common_type([v.type for v in values])
    if common is None:
        raise NotLocal(f"{what} over values of different types")
    if common.name == "void":
        raise NotLocal(f"{what} of NULLs only")
    return common


@_rule.register
def _case(node: exp.Case, ctx: ExpressionContext) -> Value:
    if node.this is not None:
        raise NotLocal("CASE x WHEN")
    conditions = [_boolean_operand(i.this, ctx, "CASE WHEN") for i in node.args["ifs"]]
    results = [translate(i.args["true"], ctx) for i in node.args["ifs"]]
    default = translate(node.args["default"], ctx) if node.args.get("default") is not None else None
    common = _branches(results + ([default] if default else []), "CASE")
    parts = [f"WHEN {c.sql} THEN {cast(r, common)}" for c, r in zip(conditions, results)]
    otherwise = f" ELSE {cast(default, common)}" if default else ""
    values = conditions + results + ([default] if default else [])
    name = None
    if all(v.name is not None for v in values):
        named = " ".join(f"WHEN {c.name} THEN {r.name}" for c, r in zip(conditions, results))
        name = f"CASE {named}{f' ELSE {default.name}' if default else ''} END"
    return Value(f"(CASE {' '.join(parts)}{otherwise} END)", common, name, **_merge(*values))


@_rule.register
def _if(node: exp.If, ctx: ExpressionContext) -> Value:
    condition = _boolean_operand(node.this, ctx, "IF")
    yes = translate(node.args["true"], ctx)
    no = translate(node.args["false"], ctx) if node.args.get("false") is not None else Value("NULL", st.VOID, "NULL")
    common = _branches([yes, no], "IF")
    sql = f"(CASE WHEN {condition.sql} THEN {cast(yes, common)} ELSE {cast(no, common)} END)"
    return Value(sql, common, _name("(IF({}, {}, {}))", condition, yes, no), **_merge(condition, yes, no))


@_rule.register
def _coalesce(node: exp.Coalesce, ctx: ExpressionContext) -> Value:
    values = [translate(node.this, ctx)] + [translate(e, ctx) for e in node.expressions]
    common = _branches(values, "coalesce")
    names = [v.name for v in values]
    name = None if None in names else f"coalesce({', '.join(names)})"
    return Value(f"coalesce({', '.join(cast(v, common) for v in values)})", common, name, **_merge(*values))


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
    if source.name == "double" and to.name == "float":
        return cast(value, to)
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
    raise NotLocal(f"CAST from {source} to {to}")


def _cast(node: exp.Cast, ctx: ExpressionContext) -> Value:
    to = cast_target(node.args["to"])
    value = translate(node.this, ctx)
    name = None if value.name is None else f"CAST({value.name} AS {_spark_type_sql(to)})"
    return Value(cast_sql(value, to), to, name, **_merge(value))


def _spark_type_sql(t: SqlType) -> str:
    return f"DECIMAL({t.precision},{t.scale})" if t.name == "decimal" else _SPARK_CAST_NAMES[t.name]


_rule.register(exp.Cast)(_cast)
_rule.register(exp.TryCast)(_cast)


# -- functions -----------------------------------------------------------------------------------


def _function_name(node: exp.Func) -> str:
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def _string_arg(value: Value, what: str) -> Value:
    if value.type != st.STRING:
        raise NotLocal(f"{what} of a {value.type}")
    return value


def _ascii_only(value: Value, sql: str) -> str:
    """`sql`, or a fallback to Spark for a value with a non-ASCII character (whose case mapping
    differs between the JVM and DuckDB)."""
    return f"(CASE WHEN regexp_matches({value.sql}, '[^\\x00-\\x7F]') THEN error('{FALLBACK}') ELSE {sql} END)"


@_rule.register
def _upper(node: exp.Upper, ctx: ExpressionContext) -> Value:
    value = _string_arg(translate(node.this, ctx), "upper")
    return Value(_ascii_only(value, f"upper({value.sql})"), st.STRING, _name("upper({})", value), **_merge(value))


@_rule.register
def _lower(node: exp.Lower, ctx: ExpressionContext) -> Value:
    value = _string_arg(translate(node.this, ctx), "lower")
    return Value(_ascii_only(value, f"lower({value.sql})"), st.STRING, _name("lower({})", value), **_merge(value))


@_rule.register
def _length(node: exp.Length, ctx: ExpressionContext) -> Value:
    value = _string_arg(translate(node.this, ctx), "length")
    called = node.meta.get("name", "length")
    return Value(f"CAST(length({value.sql}) AS INTEGER)", st.INT, _name(f"{called}({{}})", value), **_merge(value))


def _concat_values(values: list[Value]) -> Value:
    for v in values:
        _string_arg(v, "concat")
    names = [v.name for v in values]
    name = None if None in names else f"concat({', '.join(names)})"
    return Value(f"({' || '.join(v.sql for v in values)})", st.STRING, name, **_merge(*values))


@_rule.register
def _concat(node: exp.Concat, ctx: ExpressionContext) -> Value:
    return _concat_values([translate(e, ctx) for e in node.expressions])


@_rule.register
def _dpipe(node: exp.DPipe, ctx: ExpressionContext) -> Value:
    value = _concat_values([translate(node.this, ctx), translate(node.expression, ctx)])
    return replace(value, name=None)


@_rule.register
def _substring(node: exp.Substring, ctx: ExpressionContext) -> Value:
    """Spark's substring (UTF8String.substringSQL): 1-based, 0 read as 1, negative from the end,
    clamped to the string."""
    value = _string_arg(translate(node.this, ctx), "substring")
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
    missing = " OR ".join(f"{v.sql} IS NULL" for v in (pos, length) if v is not None)
    sql = f"(CASE WHEN {missing} THEN NULL WHEN {hi} <= {lo} THEN '' ELSE substring({value.sql}, {lo} + 1, {hi} - {lo}) END)"
    args = [value, pos] + ([length] if length is not None else [])
    return Value(sql, st.STRING, None, **_merge(*args))


@_rule.register
def _trim(node: exp.Trim, ctx: ExpressionContext) -> Value:
    if node.args.get("expression") is not None or node.args.get("collation") is not None:
        raise NotLocal("trim with characters")
    value = _string_arg(translate(node.this, ctx), "trim")
    position = (node.args.get("position") or "").upper()
    function = {"": "trim", "BOTH": "trim", "LEADING": "ltrim", "TRAILING": "rtrim"}[position]
    return Value(f"{function}({value.sql}, ' ')", st.STRING, None, **_merge(value))


@_rule.register
def _abs(node: exp.Abs, ctx: ExpressionContext) -> Value:
    value = translate(node.this, ctx)
    if not value.type.numeric:
        raise NotLocal(f"abs of a {value.type}")
    sql = f"abs({value.sql})"
    if value.type.integral:  # abs(MIN) is MIN on the JVM
        sql = wrap(f"abs({_wide(value)})", value.type)
    return Value(sql, value.type, _name("abs({})", value), **_merge(value))


def _part(node: exp.Func, ctx: ExpressionContext, part: str, takes_date: bool) -> Value:
    value = translate(node.this, ctx)
    if value.type != st.TIMESTAMP_NTZ and not (takes_date and value.type.name == "date"):
        raise NotLocal(f"{part} of a {value.type}")
    return Value(f"CAST({part}({value.sql}) AS INTEGER)", st.INT, _name(f"{_function_name(node)}({{}})", value), **_merge(value))


_rule.register(exp.Year)(lambda node, ctx: _part(node, ctx, "year", True))
_rule.register(exp.Month)(lambda node, ctx: _part(node, ctx, "month", True))
_rule.register(exp.Day)(lambda node, ctx: _part(node, ctx, "day", True))
_rule.register(exp.DayOfMonth)(lambda node, ctx: _part(node, ctx, "day", True))


@_rule.register
def _date_add(node: exp.DateAdd, ctx: ExpressionContext) -> Value:
    value, days = translate(node.this, ctx), translate(node.expression, ctx)
    if value.type.name != "date" or not days.type.integral or days.type.name == "bigint":
        raise NotLocal("date_add other than of a DATE and an INT")
    return Value(f"({value.sql} + CAST({days.sql} AS INTEGER))", st.DATE, None, **_merge(value, days))


@_rule.register
def _date_diff(node: exp.DateDiff, ctx: ExpressionContext) -> Value:
    end, start = translate(node.this, ctx), translate(node.expression, ctx)
    if end.type.name != "date" or start.type.name != "date" or node.args.get("unit") is not None:
        raise NotLocal("datediff other than of two DATEs")
    return Value(f"CAST({end.sql} - {start.sql} AS INTEGER)", st.INT, None, **_merge(end, start))


# -- aggregates ----------------------------------------------------------------------------------


def _aggregate_arg(node: exp.Expression, ctx: ExpressionContext, what: str) -> Value:
    if not ctx.aggregates:
        raise NotLocal(f"{what} outside a SELECT list, HAVING or ORDER BY")
    if ctx.in_aggregate:
        raise NotLocal("an aggregate inside an aggregate")
    inner = ExpressionContext(**{**ctx.__dict__, "in_aggregate": True, "windows": False})
    value = translate(node, inner)
    return value


def _aggregated(sql: str, t: SqlType, name: str | None) -> Value:
    return Value(sql, t, name, aggregate=True, free=False)


@_rule.register
def _count(node: exp.Count, ctx: ExpressionContext) -> Value:
    arg = node.this
    if isinstance(arg, exp.Star) or arg is None:
        if not ctx.aggregates:
            raise NotLocal("count outside a SELECT list, HAVING or ORDER BY")
        return _aggregated("count(*)", st.BIGINT, "count(1)")
    if isinstance(arg, exp.Distinct):
        if len(arg.expressions) != 1:
            raise NotLocal("count(DISTINCT) of several columns")
        value = _aggregate_arg(arg.expressions[0], ctx, "count")
        return _aggregated(f"count(DISTINCT {value.sql})", st.BIGINT, _name("count(DISTINCT {})", value))
    value = _aggregate_arg(arg, ctx, "count")
    return _aggregated(f"count({value.sql})", st.BIGINT, _name("count({})", value))


@_rule.register
def _sum(node: exp.Sum, ctx: ExpressionContext) -> Value:
    value = _aggregate_arg(node.this, ctx, "sum")
    name = _name("sum({})", value)
    if value.type.integral:  # a long accumulator that wraps around; modular sums commute
        return _aggregated(wrap(f"sum({_wide(value)})", st.BIGINT), st.BIGINT, name)
    if value.type.name == "decimal":
        result = st.decimal(min(value.type.precision + 10, st.MAX_PRECISION), value.type.scale)
        return _aggregated(f"TRY_CAST(sum({value.sql}) AS {result.duckdb})", result, name)
    raise NotLocal(f"sum of {value.type} (floating-point sums depend on the order of addition)")


@_rule.register
def _avg(node: exp.Avg, ctx: ExpressionContext) -> Value:
    value = _aggregate_arg(node.this, ctx, "avg")
    if not value.type.integral or value.type.name == "bigint":
        raise NotLocal(f"avg of {value.type} (Spark accumulates it in a double or a wider decimal)")
    sql = f"(CAST(sum({value.sql}) AS DOUBLE) / CAST(count({value.sql}) AS DOUBLE))"
    return _aggregated(sql, st.DOUBLE, _name("avg({})", value))


def _extreme(node: exp.Func, ctx: ExpressionContext, function: str) -> Value:
    if node.expressions:
        raise NotLocal(f"{function} of several values")
    value = _aggregate_arg(node.this, ctx, function)
    if value.type.name == "void":
        raise NotLocal(f"{function} of NULL")
    return _aggregated(f"{function}({value.sql})", value.type, _name(f"{function}({{}})", value))


_rule.register(exp.Min)(lambda node, ctx: _extreme(node, ctx, "min"))
_rule.register(exp.Max)(lambda node, ctx: _extreme(node, ctx, "max"))


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


# Window functions (alterflow/query/windows.py) register on `_rule` when imported.
from alterflow.query import windows as _windows  # noqa: E402,F401
