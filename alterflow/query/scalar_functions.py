"""Spark's conditional and string functions (nullif, nvl, nvl2, greatest, least, left, right,
replace, split_part, lpad, rpad, instr, locate, repeat, reverse, ltrim, rtrim, ascii, chr,
initcap, concat_ws, startswith, endswith, contains, octet_length) as DuckDB expressions with
Spark's answers, types and column names (ANSI mode off). String functions take STRING arguments
only (Spark would cast others to a string: NotLocal), integer arguments INT or narrower.
"""

from __future__ import annotations

from sqlglot import exp

from alterflow.query import sql_types as st
from alterflow.query.expression_core import (
    ANONYMOUS_RULES,
    ExpressionContext,
    NotLocal,
    Value,
    ascii_only,
    called,
    cast,
    common_branch_type,
    comparable,
    dispatch_rule,
    integer,
    merged_flags,
    named,
    string,
    translate,
    written_name,
)


def _nulls(*values: Value) -> str:
    return " OR ".join(f"{v.sql} IS NULL" for v in values)


# -- conditionals --------------------------------------------------------------------------------


@dispatch_rule.register
def _nullif(node: exp.Nullif, ctx: ExpressionContext) -> Value:
    """nullif(a, b): NULL where a = b, else a, in a's own type."""
    left, right = translate(node.this, ctx), translate(node.expression, ctx)
    if left.type.name == "void":
        raise NotLocal("nullif of NULL")
    common = comparable(left, right, "nullif")
    sql = f"(CASE WHEN {cast(left, common)} = {cast(right, common)} THEN NULL ELSE {left.sql} END)"
    return Value(sql, left.type, named("nullif", left, right), **merged_flags(left, right))


@dispatch_rule.register
def _nvl2(node: exp.Nvl2, ctx: ExpressionContext) -> Value:
    test = translate(node.this, ctx)
    yes = translate(node.args["true"], ctx)
    no = translate(node.args["false"], ctx) if node.args.get("false") is not None else Value("NULL", st.VOID, "NULL")
    common = common_branch_type([yes, no], "nvl2")
    sql = f"(CASE WHEN {test.sql} IS NOT NULL THEN {cast(yes, common)} ELSE {cast(no, common)} END)"
    return Value(sql, common, named("nvl2", test, yes, no), **merged_flags(test, yes, no))


def _extreme(node: exp.Func, ctx: ExpressionContext, function: str) -> Value:
    """greatest/least: the common type of all arguments, NULLs skipped (NULL when all are)."""
    values = [translate(node.this, ctx)] + [translate(e, ctx) for e in node.expressions]
    if len(values) < 2:
        raise NotLocal(f"{function} of fewer than two values (Spark refuses it)")
    common = st.common_type([v.type for v in values])
    if common is None or common.name == "void" or not common.orderable:
        raise NotLocal(f"{function} over values of different types")
    if common.fractional:  # -0.0 against 0.0 and NaN: Spark's ordering, not reproduced here
        raise NotLocal(f"{function} of floating-point values")
    sql = f"{function}({', '.join(cast(v, common) for v in values)})"
    return Value(sql, common, named(function, *values), **merged_flags(*values))


dispatch_rule.register(exp.Greatest)(lambda node, ctx: _extreme(node, ctx, "greatest"))
dispatch_rule.register(exp.Least)(lambda node, ctx: _extreme(node, ctx, "least"))


# -- strings -------------------------------------------------------------------------------------


def _left_right(node: exp.Func, ctx: ExpressionContext, function: str) -> Value:
    """left/right(s, n): '' for n <= 0, the whole string past its length."""
    value = string(translate(node.this, ctx), function)
    n = integer(translate(node.expression, ctx), function)
    sql = f"(CASE WHEN {_nulls(value, n)} THEN NULL WHEN {n.sql} <= 0 THEN '' ELSE {function}({value.sql}, {n.sql}) END)"
    return Value(sql, st.STRING, named(function, value, n), **merged_flags(value, n))


dispatch_rule.register(exp.Left)(lambda node, ctx: _left_right(node, ctx, "left"))
dispatch_rule.register(exp.Right)(lambda node, ctx: _left_right(node, ctx, "right"))


@dispatch_rule.register
def _replace(node: exp.Replace, ctx: ExpressionContext) -> Value:
    """replace(s, search[, by = '']): an empty search leaves s as it is."""
    value = string(translate(node.this, ctx), "replace")
    search = string(translate(node.expression, ctx), "replace")
    if node.args.get("replacement") is not None:
        by = string(translate(node.args["replacement"], ctx), "replace")
    else:
        by = Value("CAST('' AS VARCHAR)", st.STRING, "")
    sql = f"(CASE WHEN {search.sql} = '' THEN {value.sql} ELSE replace({value.sql}, {search.sql}, {by.sql}) END)"
    return Value(
        f"(CASE WHEN {_nulls(value, search, by)} THEN NULL ELSE {sql} END)",
        st.STRING,
        named("replace", value, search, by),
        **merged_flags(value, search, by),
    )


@dispatch_rule.register
def _split_part(node: exp.SplitPart, ctx: ExpressionContext) -> Value:
    """split_part(s, delimiter, n): the n-th part (negative: from the end), '' past the parts; an
    empty delimiter leaves one part, the string. Part 0 is Spark's error: Spark words it."""
    value = string(translate(node.this, ctx), "split_part")
    delimiter = string(translate(node.args["delimiter"], ctx), "split_part")
    n = integer(translate(node.args["part_index"], ctx), "split_part")
    parts = f"(CASE WHEN {delimiter.sql} = '' THEN [{value.sql}] ELSE string_split({value.sql}, {delimiter.sql}) END)"
    sql = (
        f"(CASE WHEN {_nulls(value, delimiter, n)} THEN NULL WHEN {n.sql} = 0 THEN error('af$spark') "
        f"ELSE coalesce(list_extract({parts}, {n.sql}), '') END)"
    )
    return Value(sql, st.STRING, named("split_part", value, delimiter, n), **merged_flags(value, delimiter, n))


@dispatch_rule.register
def _pad(node: exp.Pad, ctx: ExpressionContext) -> Value:
    """lpad/rpad(s, n[, pad = ' ']): '' for n <= 0, s cut to its first n characters, s itself
    when the pad is empty."""
    function = "lpad" if node.args.get("is_left") else "rpad"
    value = string(translate(node.this, ctx), function)
    n = integer(translate(node.expression, ctx), function)
    if node.args.get("fill_pattern") is not None:
        pad = string(translate(node.args["fill_pattern"], ctx), function)
    else:
        pad = Value("CAST(' ' AS VARCHAR)", st.STRING, " ")
    sql = (
        f"(CASE WHEN {_nulls(value, n, pad)} THEN NULL WHEN {n.sql} <= 0 THEN '' "
        f"WHEN length({value.sql}) >= {n.sql} THEN left({value.sql}, {n.sql}) WHEN {pad.sql} = '' THEN {value.sql} "
        f"ELSE {function}({value.sql}, {n.sql}, {pad.sql}) END)"
    )
    return Value(sql, st.STRING, named(function, value, n, pad), **merged_flags(value, n, pad))


@dispatch_rule.register
def _position(node: exp.StrPosition, ctx: ExpressionContext) -> Value:
    """instr(s, sub) and locate(sub, s[, pos = 1]): 1-based, 0 when absent or pos < 1, and an empty
    sub found at once."""
    value = string(translate(node.this, ctx), "locate")
    sub = string(translate(node.args["substr"], ctx), "locate")
    function = called(node, "locate")
    if function == "instr":
        if node.args.get("position") is not None:
            raise NotLocal("instr with a position")
        sql = f"CAST(instr({value.sql}, {sub.sql}) AS INTEGER)"
        return Value(sql, st.INT, named("instr", value, sub), **merged_flags(value, sub))
    if function not in ("locate", "position"):
        raise NotLocal(f"function {function}")
    if node.args.get("position") is not None:
        pos = integer(translate(node.args["position"], ctx), "locate")
    else:
        pos = Value("CAST(1 AS INTEGER)", st.INT, "1")
    rest = f"substring({value.sql}, {pos.sql})"
    found = f"instr({rest}, {sub.sql})"
    sql = (
        f"CAST((CASE WHEN {_nulls(value, sub)} THEN NULL WHEN {pos.sql} IS NULL OR {pos.sql} < 1 THEN 0 "
        f"WHEN {sub.sql} = '' THEN 1 WHEN {found} = 0 THEN 0 ELSE {found} + {pos.sql} - 1 END) AS INTEGER)"
    )
    return Value(sql, st.INT, named("locate", sub, value, pos), **merged_flags(value, sub, pos))


@dispatch_rule.register
def _repeat(node: exp.Repeat, ctx: ExpressionContext) -> Value:
    value = string(translate(node.this, ctx), "repeat")
    times = integer(translate(node.args["times"], ctx), "repeat")
    sql = f"(CASE WHEN {_nulls(value, times)} THEN NULL WHEN {times.sql} <= 0 THEN '' ELSE repeat({value.sql}, {times.sql}) END)"
    return Value(sql, st.STRING, named("repeat", value, times), **merged_flags(value, times))


@dispatch_rule.register
def _reverse(node: exp.Reverse, ctx: ExpressionContext) -> Value:
    """reverse(s): by characters; DuckDB reverses grapheme clusters, so non-ASCII goes to Spark."""
    value = string(translate(node.this, ctx), "reverse")
    return Value(ascii_only(value, f"reverse({value.sql})"), st.STRING, named("reverse", value), **merged_flags(value))


@dispatch_rule.register
def _ascii(node: exp.Ascii, ctx: ExpressionContext) -> Value:
    """ascii(s): the code point of the first character, 0 for ''."""
    value = string(translate(node.this, ctx), "ascii")
    return Value(f"CAST(ascii({value.sql}) AS INTEGER)", st.INT, named("ascii", value), **merged_flags(value))


@dispatch_rule.register
def _chr(node: exp.Chr, ctx: ExpressionContext) -> Value:
    """chr/char(n): '' for n < 0, else the character n mod 256."""
    if len(node.expressions) != 1 or node.args.get("charset"):
        raise NotLocal("chr with a character set")
    value = translate(node.expressions[0], ctx)
    if not value.type.integral:
        raise NotLocal(f"chr of a {value.type}")
    code = f"CAST({value.sql} AS BIGINT)"
    sql = f"(CASE WHEN {code} < 0 THEN '' ELSE chr(CAST({code} % 256 AS INTEGER)) END)"
    function = written_name(node)
    return Value(sql, st.STRING, named(function, value) if function else None, **merged_flags(value))


@dispatch_rule.register
def _initcap(node: exp.Initcap, ctx: ExpressionContext) -> Value:
    """initcap(s): lower case, each character after a space (only ' ') upper case; ASCII only
    (the JVM's title case of other letters is not DuckDB's)."""
    value = string(translate(node.this, ctx), "initcap")
    delimiter = node.args.get("expression")
    if delimiter is not None and not (isinstance(delimiter, exp.Literal) and delimiter.this == " "):
        raise NotLocal("initcap with delimiters")
    words = f"list_transform(string_split(lower({value.sql}), ' '), lambda w: upper(left(w, 1)) || substring(w, 2))"
    sql = ascii_only(value, f"array_to_string({words}, ' ')")
    return Value(f"(CASE WHEN {value.sql} IS NULL THEN NULL ELSE {sql} END)", st.STRING, named("initcap", value), **merged_flags(value))


@dispatch_rule.register
def _concat_ws(node: exp.ConcatWs, ctx: ExpressionContext) -> Value:
    """concat_ws(sep, s...): NULLs skipped, NULL only for a NULL separator."""
    values = [string(translate(e, ctx), "concat_ws") for e in node.expressions]
    separator, parts = values[0], values[1:]
    if not parts:
        sql = f"(CASE WHEN {separator.sql} IS NULL THEN NULL ELSE '' END)"
    else:
        sql = f"concat_ws({', '.join(v.sql for v in values)})"
    return Value(sql, st.STRING, named("concat_ws", *values), **merged_flags(*values))


def _affix(node: exp.Func, ctx: ExpressionContext, function: str, duckdb: str) -> Value:
    value = string(translate(node.this, ctx), function)
    other = string(translate(node.expression, ctx), function)
    return Value(f"{duckdb}({value.sql}, {other.sql})", st.BOOLEAN, named(function, value, other), **merged_flags(value, other))


dispatch_rule.register(exp.StartsWith)(lambda node, ctx: _affix(node, ctx, "startswith", "starts_with"))
dispatch_rule.register(exp.EndsWith)(lambda node, ctx: _affix(node, ctx, "endswith", "ends_with"))
dispatch_rule.register(exp.Contains)(lambda node, ctx: _affix(node, ctx, "contains", "contains"))


def octet_length(args: list[Value]) -> Value:
    if len(args) != 1:
        raise NotLocal("octet_length of several values")
    value = string(args[0], "octet_length")
    return Value(f"CAST(strlen({value.sql}) AS INTEGER)", st.INT, named("octet_length", value), **merged_flags(value))


def by_values(function):
    """A rule for a function sqlglot leaves Anonymous, from one over its translated arguments."""
    return lambda node, ctx: function([translate(e, ctx) for e in node.expressions])


ANONYMOUS_RULES["octet_length"] = by_values(octet_length)
