"""Spark's DATE functions (ANSI off): DATE literals, year, month, day/dayofmonth, dayofweek,
weekday, dayofyear, quarter, date_add/dateadd, date_sub, datediff/date_diff, add_months,
last_day, make_date, trunc, next_day, unix_date, date_from_unix_date, to_date (with and without
a pattern) and date_format (the pattern letters reproduced exactly).

A STRING argument gets Spark's implicit cast to DATE (DateTimeUtils.stringToDate: NULL for a text
that is not a date), a TIMESTAMP_NTZ argument its date. sqlglot wraps the argument of several of
these in a TsOrDsToDate of its own, which stands for that implicit cast; a `to_date` the query
wrote is the one it marks `safe`. Columns are named after the function as written (`dateadd` is
named date_add by Spark, `date_diff` keeps its name).
"""

from __future__ import annotations

import datetime
import re

from sqlglot import exp

from alterflow.query import sql_types as st
from alterflow.query.expression_core import (
    ANONYMOUS_RULES,
    FALLBACK,
    ExpressionContext,
    NotLocal,
    Value,
    dispatch_rule,
    integer,
    merged_flags,
    named,
    translate,
    written_name,
)
from alterflow.query.sql_types import SqlType
from alterflow.query.string_casts import DATE as STR_TO_DATE
from alterflow.query.string_casts import YMD

# -- DATE literals -------------------------------------------------------------------------------

_BLANK = "".join(map(chr, range(0x21))) + "\x7f"
_DATE_TEXT = re.compile(r"([+-]?)([0-9]{4,7})(?:-([0-9]{1,2})(?:-([0-9]{1,2})(?:[ T].*)?)?)?", re.S)


def string_to_date(text: str) -> tuple[int, int, int] | None:
    """Spark's DateTimeUtils.stringToDate as (year, month, day); None where Spark's is None."""
    match = _DATE_TEXT.fullmatch(text.strip(_BLANK))
    if match is None:
        return None
    sign, year, month, day = match.groups()
    y, m, d = int(year) * (-1 if sign == "-" else 1), int(month or 1), int(day or 1)
    try:
        datetime.date(2000, m, d)  # month and day exist (leap days checked below)
    except ValueError:
        return None
    if m == 2 and d == 29 and not (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)):
        return None
    return y, m, d


def typed_literal(text: str, to: SqlType) -> Value:
    """A typed literal (DATE '...'): Spark parses it when it parses the query, and refuses an
    invalid one (INVALID_TYPED_LITERAL), which is left to Spark to say."""
    if to != st.DATE:
        raise NotLocal(f"a {str(to).upper()} literal")
    parsed = string_to_date(text)
    if parsed is None or not 1 <= parsed[0] <= 9999:
        raise NotLocal("a DATE literal Spark refuses or whose year is outside 1-9999")
    iso = "{:04d}-{:02d}-{:02d}".format(*parsed)
    return Value(f"DATE '{iso}'", st.DATE, f"DATE '{iso}'")


# -- arguments -----------------------------------------------------------------------------------


def as_date(value: Value, what: str) -> Value:
    """`value` with Spark's implicit cast to DATE for a function taking one."""
    if value.type == st.DATE:
        return value
    if value.type == st.STRING:
        return Value(f"{STR_TO_DATE}({value.sql})", st.DATE, value.name, **merged_flags(value))
    if value.type == st.TIMESTAMP_NTZ:
        return Value(f"CAST({value.sql} AS DATE)", st.DATE, value.name, **merged_flags(value))
    if value.type.name == "void":
        return Value("CAST(NULL AS DATE)", st.DATE, value.name)
    raise NotLocal(f"{what} of a {value.type}")


def _date_arg(node: exp.Expression, ctx: ExpressionContext, what: str) -> Value:
    if isinstance(node, exp.TsOrDsToDate) and not node.args.get("safe") and node.args.get("format") is None:
        node = node.this  # sqlglot's stand-in for Spark's implicit cast
    return as_date(translate(node, ctx), what)


_INT_TEXT = re.compile(r"[+-]?[0-9]+")


def _int_text_arg(node: exp.Literal, what: str) -> Value:
    """A string literal where Spark requires an INT: its analyzer casts the constant to INT as
    ANSI does (date_add('2011-11-11', '1')) and names the column after the number; a text that is
    not an integer Spark refuses (SECOND_FUNCTION_ARGUMENT_NOT_INTEGER), left to Spark to say."""
    if not _INT_TEXT.fullmatch(node.this) or not -(2**31) <= int(node.this) < 2**31:
        raise NotLocal(f"{what} with a string argument that is not an INT")
    number = int(node.this)
    return Value(f"CAST({number} AS INTEGER)", st.INT, str(number))


def _int_arg(node: exp.Expression, ctx: ExpressionContext, what: str) -> Value:
    """An argument Spark requires as INT, SMALLINT or TINYINT (it refuses a BIGINT, and a STRING
    other than a constant)."""
    if isinstance(node, exp.Literal) and node.is_string:
        return _int_text_arg(node, what)
    return integer(translate(node, ctx), what)


def _spelled(node: exp.Expression, *spellings: str) -> str | None:
    """The spelling the query used, if it is one of `spellings` (else the column has no name)."""
    written = written_name(node)
    return written if written in spellings else None


# -- parts of a date -----------------------------------------------------------------------------

_PARTS = {
    exp.Year: ("year", "year({})"),
    exp.Month: ("month", "month({})"),
    exp.Day: ("day", "day({})"),
    exp.DayOfMonth: ("dayofmonth", "day({})"),
    exp.DayOfWeek: ("dayofweek", "(dayofweek({}) + 1)"),  # Spark counts from Sunday = 1
    exp.DayOfYear: ("dayofyear", "dayofyear({})"),
    exp.Quarter: ("quarter", "quarter({})"),
}


def _part(node: exp.Func, ctx: ExpressionContext) -> Value:
    spelling, template = _PARTS[type(node)]
    value = _date_arg(node.this, ctx, spelling)
    sql = f"CAST({template.format(value.sql)} AS INTEGER)"
    return Value(sql, st.INT, named(_spelled(node, spelling), value), **merged_flags(value))


for _cls in _PARTS:
    dispatch_rule.register(_cls)(_part)


@dispatch_rule.register
def _last_day(node: exp.LastDay, ctx: ExpressionContext) -> Value:
    if node.args.get("unit") is not None:
        raise NotLocal("last_day with a unit")
    value = _date_arg(node.this, ctx, "last_day")
    return Value(f"last_day({value.sql})", st.DATE, named(_spelled(node, "last_day"), value), **merged_flags(value))


# -- arithmetic ----------------------------------------------------------------------------------


@dispatch_rule.register
def _ts_or_ds_add(node: exp.TsOrDsAdd, ctx: ExpressionContext) -> Value:
    """date_add, dateadd and date_sub (which sqlglot reads as date_add of days * -1)."""
    unit = node.args.get("unit")
    if unit is not None and unit.name.upper() != "DAY":
        raise NotLocal("date_add with a unit")
    written = written_name(node)
    days_node, op = node.expression, "+"
    if written == "date_sub":
        negated = days_node
        if not (isinstance(negated, exp.Mul) and isinstance(negated.expression, exp.Neg) and negated.expression.this.name == "1"):
            raise NotLocal("date_sub as sqlglot did not read it")
        days_node, op = negated.this, "-"
    elif written not in ("date_add", "dateadd"):
        raise NotLocal("date_add spelt otherwise")
    start = _date_arg(node.this, ctx, written)
    days = _int_arg(days_node, ctx, written)
    spelling = "date_sub" if op == "-" else "date_add"
    sql = f"({start.sql} {op} CAST({days.sql} AS INTEGER))"
    return Value(sql, st.DATE, named(spelling, start, days), **merged_flags(start, days))


def date_arithmetic(left: Value, right: Value, op: str) -> Value:
    """date + n, n + date and date - n: Spark's analyzer makes them date_add and date_sub (and
    names them so); n must be an INT, SMALLINT or TINYINT (Spark reads date + NULL as a date
    plus an interval, a TIMESTAMP: left to Spark)."""
    if op == "+" and right.type == st.DATE:
        left, right = right, left
    if op not in ("+", "-") or left.type != st.DATE or not right.type.integral or right.type.name == "bigint":
        raise NotLocal(f"{op} between {left.type} and {right.type}")
    sql = f"({left.sql} {op} CAST({right.sql} AS INTEGER))"
    return Value(sql, st.DATE, named("date_add" if op == "+" else "date_sub", left, right), **merged_flags(left, right))


@dispatch_rule.register
def _date_diff(node: exp.DateDiff, ctx: ExpressionContext) -> Value:
    if node.args.get("unit") is not None:
        raise NotLocal("datediff with a unit")
    end = _date_arg(node.this, ctx, "datediff")
    start = _date_arg(node.expression, ctx, "datediff")
    sql = f"CAST({end.sql} - {start.sql} AS INTEGER)"
    return Value(sql, st.INT, named(_spelled(node, "datediff", "date_diff"), end, start), **merged_flags(end, start))


@dispatch_rule.register
def _add_months(node: exp.AddMonths, ctx: ExpressionContext) -> Value:
    """LocalDate.plusMonths: the day of month kept, or the month's last day where it has fewer."""
    start = _date_arg(node.this, ctx, "add_months")
    months = _int_arg(node.expression, ctx, "add_months")
    sql = f"CAST({start.sql} + to_months(CAST({months.sql} AS INTEGER)) AS DATE)"
    return Value(sql, st.DATE, named(_spelled(node, "add_months"), start, months), **merged_flags(start, months))


_TRUNC_LEVELS = {
    "YEAR": "({0} - CAST(dayofyear({0}) - 1 AS INTEGER))",
    "QUARTER": f"{YMD}(year({{0}}), (quarter({{0}}) - 1) * 3 + 1, 1)",
    "MONTH": "({0} - CAST(day({0}) - 1 AS INTEGER))",
    "WEEK": "({0} - CAST(isodow({0}) - 1 AS INTEGER))",  # to the Monday
}
_TRUNC_LEVELS.update(YYYY=_TRUNC_LEVELS["YEAR"], YY=_TRUNC_LEVELS["YEAR"], MM=_TRUNC_LEVELS["MONTH"], MON=_TRUNC_LEVELS["MONTH"])


def _written_string_arg(node: exp.Func, position: int) -> str | None:
    """The argument at `position` of the call as the query wrote it, when it is a plain
    single-quoted string literal (sqlglot rewrites trunc's level: 'Q' becomes 'QUARTER', a
    column x the literal 'X')."""
    text, end = node.root().meta.get("sql"), node.meta.get("end")
    if text is None or end is None:
        return None
    match = re.match(r"\s*\(", text[end + 1 :])
    if match is None:
        return None
    args, depth, quote, current = [], 0, None, ""
    for c in text[end + 1 + match.end() :]:
        if quote:
            current += c
            if c == quote:
                quote = None
        elif c in "'\"`":
            quote, current = c, current + c
        elif c == "(":
            depth, current = depth + 1, current + c
        elif c == ")" and depth:
            depth, current = depth - 1, current + c
        elif c == ")" or c == "," and not depth:
            args.append(current.strip())
            current = ""
            if c == ")":
                break
        else:
            current += c
    if position >= len(args):
        return None
    literal = re.fullmatch(r"'([^'\\]*)'", args[position])
    return literal.group(1) if literal else None


@dispatch_rule.register
def _trunc(node: exp.DateTrunc, ctx: ExpressionContext) -> Value:
    """trunc(date, level): a level Spark does not know gives NULL. Computed on dates (DuckDB's
    date_trunc goes through a TIMESTAMP, whose years stop earlier than a DATE's)."""
    if _spelled(node, "trunc") is None:
        raise NotLocal("date_trunc spelt otherwise")
    level = _written_string_arg(node, 1)
    if level is None:
        raise NotLocal("trunc with a level that is not a string literal")
    value = _date_arg(node.this, ctx, "trunc")
    template = _TRUNC_LEVELS.get(level.upper())
    sql = "CAST(NULL AS DATE)" if template is None else template.format(value.sql)
    return Value(sql, st.DATE, named("trunc", value, Value("", st.STRING, level)), **merged_flags(value))


# -- functions without a sqlglot class of their own ------------------------------------------------


def _make_date(node: exp.Anonymous, ctx: ExpressionContext) -> Value:
    """make_date(year, month, day): NULL for a date that does not exist (ANSI off)."""
    if len(node.expressions) != 3:
        raise NotLocal("make_date without three arguments")
    parts = [_int_arg(e, ctx, "make_date") for e in node.expressions]
    sql = f"{YMD}({', '.join(f'CAST({p.sql} AS BIGINT)' for p in parts)})"
    return Value(sql, st.DATE, named("make_date", *parts), **merged_flags(*parts))


def _weekday(node: exp.Anonymous, ctx: ExpressionContext) -> Value:
    if len(node.expressions) != 1:
        raise NotLocal("weekday without one argument")
    value = _date_arg(node.expressions[0], ctx, "weekday")
    return Value(f"CAST(isodow({value.sql}) - 1 AS INTEGER)", st.INT, named("weekday", value), **merged_flags(value))


ANONYMOUS_RULES.update({"make_date": _make_date, "weekday": _weekday})


_EPOCH = "DATE '1970-01-01'"


@dispatch_rule.register
def _unix_date(node: exp.UnixDate, ctx: ExpressionContext) -> Value:
    """unix_date(date): days since 1970-01-01, an INT."""
    value = _date_arg(node.this, ctx, "unix_date")
    sql = f"CAST({value.sql} - {_EPOCH} AS INTEGER)"
    return Value(sql, st.INT, named(_spelled(node, "unix_date"), value), **merged_flags(value))


@dispatch_rule.register
def _date_from_unix_date(node: exp.DateFromUnixDate, ctx: ExpressionContext) -> Value:
    """date_from_unix_date(days): the date that many days after 1970-01-01 (an INT argument)."""
    days = _int_arg(node.this, ctx, "date_from_unix_date")
    sql = f"({_EPOCH} + CAST({days.sql} AS INTEGER))"
    return Value(sql, st.DATE, named(_spelled(node, "date_from_unix_date"), days), **merged_flags(days))


# DateTimeUtils.getDayOfWeekFromString: two letters, three, or the whole name, any case; as
# DuckDB's isodow numbers them (Monday = 1).
_DAYS_OF_WEEK = {
    spelling: number
    for number, name in enumerate(("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"), 1)
    for spelling in (name[:2], name[:3], name)
}


@dispatch_rule.register
def _next_day(node: exp.NextDay, ctx: ExpressionContext) -> Value:
    """next_day(start, day of week): the first such day strictly after the start's date; NULL for
    a day of week Spark does not know (ANSI off). The day of week must be a string literal."""
    day = node.expression
    if not (isinstance(day, exp.Literal) and day.is_string):
        raise NotLocal("next_day with a day of week that is not a string literal")
    start = _date_arg(node.this, ctx, "next_day")
    target = _DAYS_OF_WEEK.get(day.this.upper())
    if target is None:
        sql = "CAST(NULL AS DATE)"
    else:
        sql = f"({start.sql} + CAST((({target} - isodow({start.sql}) + 6) % 7) + 1 AS INTEGER))"
    name = named(_spelled(node, "next_day"), start, Value("", st.STRING, day.this))
    return Value(sql, st.DATE, name, **merged_flags(start))


# -- to_date and date_format: Spark's datetime patterns --------------------------------------------


def _pattern_parts(pattern: str) -> list[tuple[str, str]]:
    """A Spark datetime pattern as (kind, text) parts: ('letters', 'yyyy') or ('text', '-')."""
    parts, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            end = pattern.find("'", i + 1)
            if end < 0:
                raise NotLocal("a datetime pattern with an unterminated quote")
            parts.append(("text", "'" if end == i + 1 else pattern[i + 1 : end]))
            i = end + 1
        elif c.isascii() and c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            parts.append(("letters", pattern[i:j]))
            i = j
        elif c in "[]{}#":
            raise NotLocal(f"the datetime pattern character {c}")
        else:
            parts.append(("text", c))
            i += 1
    return parts


# Spark pattern letters -> DuckDB strftime, where the output is the same for years 1 to 9999.
_FORMAT_LETTERS = {
    "yyyy": "%Y",
    "yy": "%y",
    "MMMM": "%B",
    "MMM": "%b",
    "MM": "%m",
    "M": "%-m",
    "dd": "%d",
    "d": "%-d",
    "DDD": "%j",
    "D": "%-j",
    "HH": "%H",
    "H": "%-H",
    "hh": "%I",
    "h": "%-I",
    "mm": "%M",
    "m": "%-M",
    "ss": "%S",
    "s": "%-S",
    "SSS": "%g",
    "SSSSSS": "%f",
    "a": "%p",
    "E": "%a",
    "EE": "%a",
    "EEE": "%a",
    "EEEE": "%A",
}


def _strftime(pattern: str) -> str:
    out = []
    for kind, text in _pattern_parts(pattern):
        if kind == "text":
            out.append(text.replace("%", "%%"))
        elif text in _FORMAT_LETTERS:
            out.append(_FORMAT_LETTERS[text])
        else:
            raise NotLocal(f"the datetime pattern letters {text}")
    return "".join(out).replace("'", "''")


@dispatch_rule.register
def _date_format(node: exp.TimeToStr, ctx: ExpressionContext) -> Value:
    """date_format(date or timestamp_ntz, pattern): a DATE formats as its midnight. The session
    time zone (UTC) leaves a TIMESTAMP_NTZ's wall clock as it is."""
    pattern = node.args.get("format")
    if _spelled(node, "date_format") is None or not isinstance(node.this, exp.TimeStrToTime):
        raise NotLocal("date_format spelt otherwise")
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise NotLocal("date_format with a computed pattern")
    value = translate(node.this.this, ctx)
    if value.type not in (st.DATE, st.TIMESTAMP_NTZ):
        raise NotLocal(f"date_format of a {value.type}")
    moment = value.sql if value.type == st.TIMESTAMP_NTZ else f"CAST({value.sql} AS TIMESTAMP)"
    # Spark writes years past 9999 with a sign and more digits
    sql = (
        f"(CASE WHEN {value.sql} IS NULL THEN NULL WHEN year({value.sql}) NOT BETWEEN 1 AND 9999 THEN error('{FALLBACK}') "
        f"ELSE strftime({moment}, '{_strftime(pattern.this)}') END)"
    )
    name = named("date_format", value, Value("", st.STRING, pattern.this))
    return Value(sql, st.STRING, name, **merged_flags(value))


# to_date's pattern letters -> the digits they read strictly (Spark's parser takes exactly these
# for a year 1-9999 and a valid date; anything else is answered by Spark, which may say NULL or
# raise its error about the parser of Spark 2).
_PARSE_LETTERS = {"yyyy": ("y", "[0-9]{4}"), "MM": ("m", "[0-9]{2}"), "dd": ("d", "[0-9]{2}")}


def _to_date_pattern(value: Value, pattern: str) -> str:
    regex, groups = [], []
    for kind, text in _pattern_parts(pattern):
        if kind == "text":
            regex.append(re.escape(text))
        elif text in _PARSE_LETTERS and _PARSE_LETTERS[text][0] not in groups:
            group, digits = _PARSE_LETTERS[text]
            groups.append(group)
            regex.append(f"({digits})")
        else:
            raise NotLocal(f"to_date with the pattern letters {text}")
    if "y" not in groups:
        raise NotLocal("to_date with a pattern without yyyy")
    rx = "".join(regex).replace("'", "''")
    part = {g: f"CAST(regexp_extract({value.sql}, '^{rx}$', {i + 1}) AS BIGINT)" for i, g in enumerate(groups)}
    parsed = f"{YMD}({part['y']}, {part.get('m', '1')}, {part.get('d', '1')})"
    return (
        f"(CASE WHEN {value.sql} IS NULL THEN NULL "
        f"WHEN regexp_full_match({value.sql}, '{rx}') AND {part['y']} >= 1 AND {parsed} IS NOT NULL THEN {parsed} "
        f"ELSE error('{FALLBACK}') END)"
    )


@dispatch_rule.register
def _to_date(node: exp.TsOrDsToDate, ctx: ExpressionContext) -> Value:
    if not node.args.get("safe") or _spelled(node, "to_date") is None:
        raise NotLocal("to_date spelt otherwise")
    value = translate(node.this, ctx)
    pattern = node.args.get("format")
    if pattern is None:
        date = as_date(value, "to_date")
        return Value(date.sql, st.DATE, named("to_date", value), **merged_flags(value))
    if not (isinstance(pattern, exp.Literal) and pattern.is_string) or value.type != st.STRING:
        raise NotLocal("to_date with a computed pattern or of a value that is not a string")
    sql = _to_date_pattern(value, pattern.this)
    return Value(sql, st.DATE, named("to_date", value, Value("", st.STRING, pattern.this)), **merged_flags(value))
