"""Spark's math functions as DuckDB expressions with Spark's answers, types and column names (ANSI
mode off): round and bround (HALF_UP, HALF_EVEN: decimals and doubles through Java's BigDecimal,
udfs.py), floor and ceil (BIGINT, or DECIMAL for decimals and with a scale), sign, pow, sqrt, ln,
log, log10, log2, pmod, div, positive, negative, pi and e; bin, hex and conv (numbers in other
bases, conv through udfs.py). The double functions take
their argument as a double (Spark's implicit cast); each was compared with Spark's StrictMath
answers value by value (tests/query/test_scalars_spark.py).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from alterflow.query import sql_types as st
from alterflow.query.expression_core import (
    ANONYMOUS_RULES,
    ExpressionContext,
    NotLocal,
    Value,
    called,
    cast,
    decimal_result,
    decimal_text,
    dispatch_rule,
    exact_decimal,
    integer,
    merged_flags,
    named,
    operand_types,
    remainder_value,
    translate,
    wrap,
)
from alterflow.query.scalar_functions import by_values
from alterflow.query.spark_casts import cast_sql
from alterflow.query.sql_types import SqlType

_LONG_MAX, _LONG_MIN = "9223372036854775807", "-9223372036854775808"


def _double(value: Value, function: str) -> Value:
    """The argument as Spark casts it for a function of doubles (a decimal of at most 15 digits:
    exactly)."""
    if value.type.name == "void":
        return Value("CAST(NULL AS DOUBLE)", st.DOUBLE, value.name)
    if not value.type.numeric:
        raise NotLocal(f"{function} of a {value.type}")
    return Value(cast_sql(value, st.DOUBLE), st.DOUBLE, value.name, **merged_flags(value))


def _places(node: exp.Expression | None, ctx: ExpressionContext, function: str) -> int:
    return 0 if node is None else _places_of(translate(node, ctx), function)


def _places_of(value: Value, function: str) -> int:
    if value.literal is None or value.type.name != "int":
        raise NotLocal(f"{function} to a scale that is not an INT literal")
    return int(value.literal)


def _rounded_type(t: SqlType, places: int) -> SqlType:
    """Spark's RoundBase type of a rounded decimal: one more integral digit, the scale cut to places."""
    integral_digits = t.precision - t.scale + 1
    if places < 0:
        return st.decimal(min(max(integral_digits, -places + 1), st.MAX_PRECISION), 0)
    scale = min(t.scale, places)
    return st.decimal(min(integral_digits + scale, st.MAX_PRECISION), scale)


def _round(value: Value, places: int, mode: str, function: str) -> Value:
    name = None if value.name is None else f"{function}({value.name}, {places})"
    t = value.type
    if t.integral:
        if places >= 0:
            return Value(value.sql, t, name, **merged_flags(value))
        rounded = f"af_decimal_round(CAST({value.sql} AS VARCHAR), {max(places, -20)}, '{mode}', 38, 0)"
        return Value(wrap(f"CAST({rounded} AS HUGEINT)", t), t, name, **merged_flags(value))  # Java's intValue wraps
    if t.name == "decimal":
        result = _rounded_type(t, places)
        sql = f"CAST(af_decimal_round({decimal_text(value)}, {places}, '{mode}', {result.precision}, {result.scale}) AS {result.duckdb})"
        return Value(sql, result, name, **merged_flags(value))
    if t.name == "double":
        return Value(f"af_double_round({value.sql}, {places}, '{mode}')", t, name, **merged_flags(value))
    raise NotLocal(f"{function} of a {t}")


@dispatch_rule.register
def _round_rule(node: exp.Round, ctx: ExpressionContext) -> Value:
    if node.args.get("truncate") is not None:
        raise NotLocal("round with a mode")
    return _round(translate(node.this, ctx), _places(node.args.get("decimals"), ctx, "round"), "HALF_UP", "round")


def _bround(args: list[Value]) -> Value:
    if not 1 <= len(args) <= 2:
        raise NotLocal("bround of other than one or two values")
    places = _places_of(args[1], "bround") if len(args) == 2 else 0
    return _round(args[0], places, "HALF_EVEN", "bround")


def _floor_ceil(node: exp.Func, ctx: ExpressionContext, function: str) -> Value:
    value = translate(node.this, ctx)
    spelled = called(node, function)
    mode = "FLOOR" if function == "floor" else "CEILING"
    if node.args.get("decimals") is not None:  # floor(x, d): a decimal, as round's type
        places = _places(node.args["decimals"], ctx, spelled)
        if not (value.type.integral or value.type.name == "decimal"):
            raise NotLocal(f"{spelled} of a {value.type} to a scale")
        result = _rounded_type(st.as_decimal(value.type), places)
        sql = f"CAST(af_decimal_round({decimal_text(value)}, {places}, '{mode}', {result.precision}, {result.scale}) AS {result.duckdb})"
        return Value(sql, result, None if value.name is None else f"{spelled}({value.name}, {places})", **merged_flags(value))
    name = None if value.name is None else f"{spelled if spelled == 'ceiling' else function.upper()}({value.name})"
    t = value.type
    if t.integral:
        return Value(f"CAST({value.sql} AS BIGINT)", st.BIGINT, name, **merged_flags(value))
    if t.name == "decimal":
        result = st.decimal(min(t.precision - t.scale + 1, st.MAX_PRECISION), 0)
        return Value(f"CAST({function}({value.sql}) AS {result.duckdb})", result, name, **merged_flags(value))
    if t.fractional:  # Java's double-to-long: NaN is 0, past the range the nearest end
        x = cast(value, st.DOUBLE)
        sql = (
            f"(CASE WHEN isnan({x}) THEN CAST(0 AS BIGINT) WHEN {x} >= CAST('{_LONG_MAX}' AS DOUBLE) THEN CAST('{_LONG_MAX}' AS BIGINT) "
            f"WHEN {x} <= CAST('{_LONG_MIN}' AS DOUBLE) THEN CAST('{_LONG_MIN}' AS BIGINT) ELSE CAST({function}({x}) AS BIGINT) END)"
        )
        return Value(sql, st.BIGINT, name, **merged_flags(value))
    raise NotLocal(f"{spelled} of a {t}")


dispatch_rule.register(exp.Floor)(lambda node, ctx: _floor_ceil(node, ctx, "floor"))
dispatch_rule.register(exp.Ceil)(lambda node, ctx: _floor_ceil(node, ctx, "ceil"))


@dispatch_rule.register
def _sign(node: exp.Sign, ctx: ExpressionContext) -> Value:
    """sign/signum: a double, -0.0 and NaN as they are (Java's Math.signum)."""
    value = translate(node.this, ctx)
    if not value.type.numeric:
        raise NotLocal(f"sign of a {value.type}")
    spelled = called(node, "signum")
    name = None if value.name is None else f"{'sign' if spelled == 'sign' else 'SIGNUM'}({value.name})"
    if value.type.fractional:
        x = cast(value, st.DOUBLE)
        sql = f"(CASE WHEN isnan({x}) THEN {x} WHEN {x} > 0 THEN 1.0::DOUBLE WHEN {x} < 0 THEN -1.0::DOUBLE ELSE {x} END)"
    else:  # an exact number: its sign needs no cast to a double
        sql = (
            f"(CASE WHEN {value.sql} > 0 THEN 1.0::DOUBLE WHEN {value.sql} < 0 THEN -1.0::DOUBLE WHEN {value.sql} = 0 THEN 0.0::DOUBLE END)"
        )
    return Value(sql, st.DOUBLE, name, **merged_flags(value))


def _unary(node: exp.Func, ctx: ExpressionContext, spark_name: str, sql_of) -> Value:
    value = _double(translate(node.this, ctx), spark_name)
    name = None if value.name is None else f"{spark_name}({value.name})"
    return Value(sql_of(value.sql), st.DOUBLE, name, **merged_flags(value))


dispatch_rule.register(exp.Sqrt)(
    lambda node, ctx: _unary(node, ctx, "SQRT", lambda x: f"(CASE WHEN {x} < 0 THEN 'NaN'::DOUBLE ELSE sqrt({x}) END)")
)


def _libm_differs(node: exp.Func, ctx: ExpressionContext) -> Value:
    """exp, ln, log, log2, log10 and pow: the JVM's StrictMath (fdlibm) and DuckDB's libm differ in
    the last bit for some arguments (exp(1), ln(3), log2(3) measured), so Spark answers them."""
    raise NotLocal(f"{called(node, type(node).__name__.lower())} (StrictMath and DuckDB's libm differ in the last bit)")


for _cls in (exp.Exp, exp.Ln, exp.Log, exp.Pow):
    dispatch_rule.register(_cls)(_libm_differs)


@dispatch_rule.register
def _pi(node: exp.Pi, ctx: ExpressionContext) -> Value:
    return Value("3.141592653589793::DOUBLE", st.DOUBLE, "PI()")


def _e(args: list[Value]) -> Value:
    if args:
        raise NotLocal("e with arguments")
    return Value("2.718281828459045::DOUBLE", st.DOUBLE, "E()")


def _positive(args: list[Value]) -> Value:
    """positive(x): a number as it is; a string or an untyped NULL cast to a double, as Spark does."""
    if len(args) != 1:
        raise NotLocal("positive of other than one value")
    value = args[0]
    name = None if value.name is None else f"(+ {value.name})"
    if value.type == st.STRING or value.type.name == "void":
        return Value(cast_sql(value, st.DOUBLE), st.DOUBLE, name, **merged_flags(value))
    if not value.type.numeric:
        raise NotLocal(f"positive of a {value.type} (Spark refuses it)")
    return Value(value.sql, value.type, name, **merged_flags(value))


# -- numbers in other bases: bin, hex, conv -----------------------------------------------------------


def _as_long(value: Value, function: str) -> str:
    """`value` as Spark implicitly casts it to a BIGINT for bin and hex: a decimal cut toward zero
    and wrapped into 64 bits (BigDecimal's longValue), a double or a float as Java narrows it (NaN
    0, saturated), a string read as CAST does (NULL where it is not a number)."""
    t = value.type
    if t.name == "void":
        return "CAST(NULL AS BIGINT)"
    if t.name == "decimal":
        return wrap(f"CAST(trunc({value.sql}) AS HUGEINT)", st.BIGINT)
    if t.integral or t.fractional or t == st.STRING:
        return cast_sql(value, st.BIGINT)
    raise NotLocal(f"{function} of a {t}")


def _bin(args: list[Value]) -> Value:
    """bin(x): the BIGINT's two's complement bits (Long.toBinaryString): no leading zeros, 64 digits
    for a negative value."""
    if len(args) != 1:
        raise NotLocal("bin of other than one value")
    value = args[0]
    return Value(f"bin({_as_long(value, 'bin')})", st.STRING, named("bin", value), **merged_flags(value))


# What CAST(x AS BINARY) may stand over locally, as `_cast` allows (Spark's `::` binds tighter
# than sqlglot reads it over an operator).
_CAST_OPERANDS = (exp.Column, exp.Literal, exp.Paren, exp.Func, exp.Null, exp.Boolean)


def _binary_operand(node: exp.Expression, ctx: ExpressionContext) -> Value | None:
    """The value under CAST(x AS BINARY) (named as Spark names that cast), None where `node` is
    no such cast."""
    if not (isinstance(node, exp.Cast) and node.args["to"].this == exp.DataType.Type.BINARY):
        return None
    by_operator = "safe" not in node.args and not isinstance(node.this, _CAST_OPERANDS)  # x::binary over an operator
    if type(node) is exp.Cast or node.args.get("safe") or by_operator:
        raise NotLocal("a cast to BINARY other than CAST(x AS BINARY) of a string or an integer")
    value = translate(node.this, ctx)
    if not (value.type == st.STRING or value.type.integral or value.type.name == "void"):
        raise NotLocal(f"a cast of a {value.type} to BINARY")
    return replace(value, name=None if value.name is None else f"CAST({value.name} AS BINARY)")


def _hex_of_bytes(value: Value) -> str:
    """The hex digits of CAST(value AS BINARY): a string's UTF-8 bytes, an integer's big-endian
    two's complement bytes in its type's width."""
    if value.type.name == "void":
        return "CAST(NULL AS VARCHAR)"
    if value.type == st.STRING:
        return f"hex({value.sql})"
    digits = st.INTEGRAL_BITS[value.type.name] // 4
    return f"right(lpad(hex(CAST({value.sql} AS BIGINT)), 16, '0'), {digits})"


@dispatch_rule.register
def _hex(node: exp.Hex, ctx: ExpressionContext) -> Value:
    """hex(x): a number as a BIGINT's upper-case hex digits (Long.toHexString: 16 for a negative
    value), a string's or a boolean's text as its UTF-8 bytes, a BINARY cast's bytes."""
    operand = _binary_operand(node.this, ctx)
    if operand is not None:
        sql = _hex_of_bytes(operand)
        value = operand
    else:
        value = translate(node.this, ctx)
        if value.type == st.STRING or value.type.name == "boolean":
            sql = f"hex({cast_sql(value, st.STRING)})"
        else:
            sql = f"hex({_as_long(value, 'hex')})"
    return Value(sql, st.STRING, named("hex", value), **merged_flags(value))


def _conv(args: list[Value]) -> Value:
    """conv(text, from_base, to_base) through Spark's unsigned 64-bit reading (udfs.conv); a number
    is converted from its text; the bases are INT or narrower, as Spark takes them."""
    if len(args) != 3:
        raise NotLocal("conv of other than three values")
    number, from_base, to_base = args
    t = number.type
    if t.name == "void":
        text = "CAST(NULL AS VARCHAR)"
    elif t == st.STRING or t.integral or t.name == "decimal":
        text = cast_sql(number, st.STRING)
    else:
        raise NotLocal(f"conv of a {t} (Spark converts its text)")
    bases = [integer(b, "conv") for b in (from_base, to_base)]
    sql = f"af_conv({text}, {bases[0].sql}, {bases[1].sql})"
    return Value(sql, st.STRING, named("conv", *args), **merged_flags(*args))


@dispatch_rule.register
def _negative(node: exp.Negative, ctx: ExpressionContext) -> Value:
    value = translate(exp.Neg(this=node.this.copy()), ctx)
    inner = translate(node.this, ctx)
    return Value(value.sql, value.type, named("negative", inner), **merged_flags(value))


def _pmod(args: list[Value]) -> Value:
    """pmod(a, n): a % n, plus n when negative (then % n again), in %'s type."""
    if len(args) != 2:
        raise NotLocal("pmod of other than two values")
    left, right = args
    if left.type.name == "void" or right.type.name == "void":
        raise NotLocal("pmod of an untyped NULL")
    lt, rt = operand_types(left, right)
    name = named("pmod", left, right)
    if not (lt.numeric and rt.numeric):
        raise NotLocal(f"pmod of {lt} and {rt}")
    if (lt.name == "decimal" or rt.name == "decimal") and not (lt.fractional or rt.fractional):
        result = decimal_result("%", lt, rt)
        return Value(exact_decimal("pmod", left, right, result), result, name, **merged_flags(left, right))
    common = st.wider_numeric(lt, rt)
    r = remainder_value(left, right, common, None)
    n = cast(right, common)
    if common.integral:
        again = remainder_value(Value(wrap(f"CAST({r.sql} AS HUGEINT) + CAST({n} AS HUGEINT)", common), common, None), right, common, None)
    else:
        again = remainder_value(Value(f"({r.sql} + {n})", common, None), right, common, None)
    return Value(f"(CASE WHEN {r.sql} < 0 THEN {again.sql} ELSE {r.sql} END)", common, name, **merged_flags(left, right))


@dispatch_rule.register
def _div(node: exp.IntDiv, ctx: ExpressionContext) -> Value:
    """a div b: integral division of two longs, truncated, NULL by zero, MIN div -1 wrapping."""
    left, right = translate(node.this, ctx), translate(node.expression, ctx)
    if not (left.type.integral and right.type.integral):
        raise NotLocal(f"div of {left.type} and {right.type}")
    a, b = cast(left, st.BIGINT), cast(right, st.BIGINT)
    sql = f"(CASE WHEN {b} = 0 THEN NULL WHEN {b} = -1 THEN {wrap(f'0 - CAST({a} AS HUGEINT)', st.BIGINT)} ELSE {a} // {b} END)"
    name = None if left.name is None or right.name is None else f"({left.name} div {right.name})"
    return Value(sql, st.BIGINT, name, **merged_flags(left, right))


ANONYMOUS_RULES.update(
    {
        name: by_values(f)
        for name, f in {"bround": _bround, "e": _e, "positive": _positive, "pmod": _pmod, "bin": _bin, "conv": _conv}.items()
    }
)
