"""Spark SQL expressions as DuckDB SQL with Spark's answers: `translate` (from `expression_core`)
gives an expression's `Value` — the DuckDB text, the Spark type and the name Spark gives the
column when it is not aliased — by the rule for its kind of expression. Importing this module
registers every rule: those here (columns and literals, arithmetic, comparisons and logic, CASE,
IF and coalesce, CAST and typed literals, upper/lower/length/concat/substring/trim/abs, and
count/sum/avg/min/max) and the families in modules of their own (`aggregates`, `dates`,
`math_functions`, `scalar_functions`, `windows`), which it imports; translate through this module.

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
from dataclasses import replace
from decimal import Decimal, InvalidOperation

from sqlglot import exp

from alterflow.query import aggregates, dates, math_functions, scalar_functions, spark_refusals, windows
from alterflow.query import sql_types as st
from alterflow.query.dates import as_date, date_arithmetic
from alterflow.query.expression_core import (
    ExpressionContext,
    NotLocal,
    Value,
    aggregate_arg,
    aggregated_value,
    ascii_only,
    average_of,
    called,
    cast,
    common_branch_type,
    comparable,
    decimal_result,
    dispatch_rule,
    exact_decimal,
    merged_flags,
    named,
    normalized_zero,
    operand_types,
    remainder_value,
    string,
    translate,
    widened_sql,
    wrap,
    written_name,
)
from alterflow.query.spark_casts import cast_sql
from alterflow.query.sql_types import SqlType

# The families of rules in modules of their own: each registers its rules on `dispatch_rule` (and
# its functions sqlglot has no class for in ANONYMOUS_RULES) when imported.
RULE_FAMILIES = (aggregates, dates, math_functions, scalar_functions, windows)


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
    _, digits, exponent = number.as_tuple()
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


def _arithmetic(node: exp.Binary, ctx: ExpressionContext, op: str) -> Value:
    left, right = translate(node.left, ctx), translate(node.right, ctx)
    if st.DATE in (left.type, right.type):
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


dispatch_rule.register(exp.Add)(lambda node, ctx: _arithmetic(node, ctx, "+"))
dispatch_rule.register(exp.Sub)(lambda node, ctx: _arithmetic(node, ctx, "-"))
dispatch_rule.register(exp.Mul)(lambda node, ctx: _arithmetic(node, ctx, "*"))
dispatch_rule.register(exp.Div)(lambda node, ctx: _arithmetic(node, ctx, "/"))
dispatch_rule.register(exp.Mod)(lambda node, ctx: _arithmetic(node, ctx, "%"))


# -- comparisons and logic -----------------------------------------------------------------------


def string_coerced(left: Value, right: Value, what: str) -> tuple[Value, Value]:
    """A string compared with a number or a boolean, as Spark's non-ANSI coercion casts them: a
    DECIMAL and the string both to DOUBLE, else the string to the other's type (Spark's CAST: an
    unparseable string is NULL, '2.9' is 2 for an INT). Other pairs are returned as they are. A
    date and a string compare as dates (`dates.as_date`)."""
    if {left.type, right.type} == {st.DATE, st.STRING}:
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


def _cast(node: exp.Cast, ctx: ExpressionContext) -> Value:
    if _is_typed_literal(node):
        return typed_literal(node, "")
    to = cast_target(node.args["to"])
    # sqlglot reads CAST(x AS t) and x::t as TRY_CAST; a CAST is Spark's typed literal DATE '...'
    # (no position of its own) or a cast function such as int(x) or date(x), named after x alone
    function_style = type(node) is exp.Cast and "start" in node.meta
    if type(node) is exp.Cast and not function_style and isinstance(node.this, exp.Literal) and node.this.is_string:
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


def distinct_arg(node: exp.Expression | None, what: str) -> tuple[exp.Expression, str]:
    """An aggregate's one argument and "DISTINCT " if it is written f(DISTINCT x), else ""."""
    if isinstance(node, exp.Distinct):
        if len(node.expressions) != 1:
            raise NotLocal(f"{what}(DISTINCT) of several values")
        return node.expressions[0], "DISTINCT "
    if node is None:
        raise NotLocal(f"{what} without an argument")
    return node, ""


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


@dispatch_rule.register
def _avg(node: exp.Avg, ctx: ExpressionContext) -> Value:
    arg, distinct = distinct_arg(node.this, "avg")
    value = aggregate_arg(arg, ctx, "avg")
    return average_of(value, distinct, _name(f"avg({distinct}{{}})", value))


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
