"""Queries Spark's parser or analyzer always refuses, refused in process in Spark's words: an ORDER
BY or GROUP BY position outside the SELECT list, a CTE name defined twice, an empty IN list, an
empty set in CUBE or ROLLUP, a call of a function Spark does not know or with an argument count
Spark refuses (`alterflow.query.spark_functions`, recorded from a live Spark).

A refusal is raised only where the local engine has read the construct as Spark reads it: a call
is refused once its arguments translate (Spark resolves a call's arguments before it checks the
count); anything the local engine is unsure of still goes to Spark, which words its own error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot.tokens import TokenType

from alterflow.errors import UserError
from alterflow.query.spark_functions import FUNCTIONS, MAX_RECORDED_ARGUMENTS, UNKNOWN_FUNCTION

# Calls Spark's grammar reads in a form of its own (CAST(x AS t), TRIM(BOTH ...), date_add(DAY,
# ...), percentile_cont(...) WITHIN GROUP, EXISTS (...)...): their words are never checked against
# the registry's argument counts, nor refused as unknown. (count(*) is one argument, count(DISTINCT
# ...) is not counted: count itself is checked.)
GRAMMAR_FORMS = frozenset(
    {
        "cast", "try_cast", "extract", "position", "substring", "substr", "trim", "overlay", "struct",
        "first", "last", "any_value", "timestampadd", "timestampdiff", "timestamp_add", "timestamp_diff",
        "dateadd", "date_add", "datediff", "date_diff", "date_sub", "percentile_cont", "percentile_disc",
        "listagg", "string_agg", "exists", "in", "not", "interval", "case", "if", "filter",
        "left", "right", "identifier", "grouping", "rollup", "cube", "sets", "values", "array", "map",
        "current_date", "current_timestamp", "current_time", "current_user", "session_user", "user",
        "mode", "median", "collate", "over", "within", "lateral", "unnest", "explode", "range",
    }
)  # fmt: skip

# Words that, standing between a call's commas, make it a form of Spark's grammar rather than a
# list of arguments: such a call is not counted.
_FORM_WORDS = frozenset(
    {"FROM", "FOR", "IN", "AS", "PLACING", "BOTH", "LEADING", "TRAILING", "IGNORE", "RESPECT", "ORDER", "BY",
     "DISTINCT", "ALL", "SELECT", "WITH", "VALUES", "USING", "SEPARATOR", "WITHIN"}
)  # fmt: skip
_OPENING = (TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE)
_CLOSING = (TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE)
_NOT_WORDS = (TokenType.STRING, TokenType.IDENTIFIER, TokenType.NUMBER, TokenType.NATIONAL_STRING, TokenType.RAW_STRING)


def _word(token) -> bool:
    """An unquoted word (a name or a keyword), not a literal or a `quoted` name."""
    return token.token_type not in _NOT_WORDS and re.fullmatch(r"[A-Za-z_]\w*", token.text) is not None


class SparkRefusal(UserError):
    """A query Spark refuses, in Spark's words: one line, Spark's error class in brackets."""


class RefusedCallError(SparkRefusal):
    """A function call Spark refuses: a name it does not know, an argument count it refuses."""


def place(sql: str, offset: int) -> tuple[int, int]:
    """Where Spark's analyzer says an error stands: the line (from 1) and the position in it
    (from 0) of the character at `offset` of the query."""
    return sql.count("\n", 0, offset) + 1, offset - (sql.rfind("\n", 0, offset) + 1)


def order_by_position(position: int, size: int, where: tuple[int, int]) -> SparkRefusal:
    """`where`: `place` of the position's literal."""
    return SparkRefusal(
        f"[ORDER_BY_POS_OUT_OF_RANGE] ORDER BY position {position} is not in select list "
        f"(valid range is [1, {size}]). SQLSTATE: 42805; line {where[0]} pos {where[1]}"
    )


def group_by_position(position: int, size: int, where: tuple[int, int]) -> SparkRefusal:
    return SparkRefusal(
        f"[GROUP_BY_POS_OUT_OF_RANGE] GROUP BY position {position} is not in select list "
        f"(valid range is [1, {size}]). SQLSTATE: 42805; line {where[0]} pos {where[1]}"
    )


def duplicate_cte_names(names: list[str]) -> SparkRefusal:
    listed = ", ".join(f"`{name}`" for name in names)
    return SparkRefusal(f"[DUPLICATED_CTE_NAMES] CTE definition can't have duplicate names: {listed}. SQLSTATE: 42602")


def empty_in_list() -> SparkRefusal:
    return SparkRefusal(
        "[INVALID_SQL_SYNTAX.EMPTY_IN_PREDICATE] Invalid SQL syntax: IN predicate requires at least one value. "
        "Empty IN clauses like 'IN ()' are not allowed. Consider using 'WHERE FALSE' if you need an always-false "
        "condition, or provide at least one value in the IN list. SQLSTATE: 42000"
    )


def empty_grouping_set(kind: str) -> SparkRefusal:
    """`kind`: CUBE or ROLLUP (Spark's parser words it without an error class)."""
    return SparkRefusal(f"Empty set in {kind} grouping sets is not supported.")


def position_literal(value: int) -> bool:
    """Whether Spark reads the integer `value` in ORDER BY or GROUP BY as a position: an INT
    literal (a wider one is a BIGINT constant, ordering or grouping by nothing)."""
    return -(1 << 31) <= value < (1 << 31)


def refused_call(name: str, count: int, where: tuple[int, int]) -> str | None:
    """Spark's error for calling `name` (as written) with `count` arguments at `where` (line from
    1, position in it from 0), or None where Spark accepts it or the local engine cannot tell."""
    key = name.lower()
    if key in GRAMMAR_FORMS:
        return None
    line, pos = where
    arity = FUNCTIONS.get(key)
    if arity is None:
        return UNKNOWN_FUNCTION.format(name=name, line=line, pos=pos)
    if arity.wrong_count is None or count in arity.accepted or count > MAX_RECORDED_ARGUMENTS and arity.more:
        return None
    return arity.wrong_count.format(count=count, line=line, pos=pos)


@dataclass(frozen=True)
class RefusedCall:
    """A function call of a query that Spark refuses: where its name starts, Spark's words, and
    the text of each argument (translated before the refusal, as Spark resolves them first)."""

    start: int
    message: str
    arguments: tuple[str, ...]


def refused_calls(sql: str, tokens: list) -> list[RefusedCall]:
    """The calls `name(...)` in the query's tokens (sqlglot's, with offsets into `sql`) that Spark
    refuses; a qualified name, a call in a form of Spark's grammar, or a call whose argument list
    the count cannot be read from is never among them."""
    found = []
    for i in range(len(tokens) - 1):
        token = tokens[i]
        if tokens[i + 1].token_type != TokenType.L_PAREN or not _word(token):
            continue
        if i > 0 and tokens[i - 1].token_type == TokenType.DOT:
            continue
        arguments = _arguments(sql, tokens, i + 1)
        if arguments is None or any(a.endswith("*") for a in arguments):
            continue  # not a plain list, or a * Spark expands into the table's columns
        message = refused_call(token.text, len(arguments), place(sql, token.start))
        if message is not None:
            found.append(RefusedCall(token.start, message, tuple(arguments)))
    return found


def _arguments(sql: str, tokens: list, open_at: int) -> list[str] | None:
    """The texts of the arguments of the call whose "(" is tokens[open_at], None when they are not
    a plain list (a form word at the top level, an empty argument, no closing parenthesis, a
    WITHIN GROUP after it)."""
    depth, start, spans = 0, None, []
    for j in range(open_at + 1, len(tokens)):
        token, kind = tokens[j], tokens[j].token_type
        if kind in _OPENING:
            depth += 1
        elif kind in _CLOSING and depth > 0:
            depth -= 1
        elif kind == TokenType.R_PAREN:
            if start is not None:
                spans.append((start, tokens[j - 1].end))
            elif spans or tokens[j - 1].token_type == TokenType.COMMA:
                return None
            if j + 1 < len(tokens) and _word(tokens[j + 1]) and tokens[j + 1].text.upper() == "WITHIN":
                return None
            return [sql[a : b + 1] for a, b in spans]
        elif depth == 0 and kind == TokenType.COMMA:
            if start is None:
                return None
            spans.append((start, tokens[j - 1].end))
            start = None
            continue
        elif depth == 0 and (kind == TokenType.FARROW or _word(token) and token.text.upper() in _FORM_WORDS):
            return None
        if start is None:
            start = token.start
    return None
