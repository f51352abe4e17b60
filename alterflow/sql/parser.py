"""Parse alterflow's SQL surface (docs/semantics.md, "SQL") into the dataclasses of `alterflow.sql.ast`.

Approach:

* sqlglot's Doris tokenizer reads the whole input once (quotes, escapes, backquoted names and
  comments are its business, not ours). Statements are split at its `;` tokens, and every piece of
  SQL text we keep (`Select.sql`, `CreateView.query`, `Insert.query`, `AlterTable.sql`) is a slice
  of the user's original text between token positions. Plain text (names, numbers, strings without
  escapes, one-character punctuation: most statements people type) is read into the same tokens
  without importing sqlglot (`_plain_tokens`), so a light ALTER's process never loads it.
* Queries (SELECT / WITH, the body of CREATE VIEW, INSERT ... SELECT) are parsed by sqlglot's
  Spark parser; the resulting tree gives the catalog tables the query reads.
* Everything else is alterflow's own DDL, which sqlglot parses only in part (it rejects LARGEINT
  and `PARTITION BY (col)`, has no FIRST/AFTER on MODIFY, no PROPERTIES / ORDER BY / DISTRIBUTED
  BY in ALTER, and silently falls back to an opaque `Command` on what it does not know). It is
  read by a small recursive-descent parser over the same token list, so one column-definition
  rule serves CREATE TABLE and ALTER TABLE, every clause lands in a dataclass, and any token left
  over is an error. Errors are `SqlError`: one line, quoting the offending token.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from alterflow.errors import MAX_NESTING, MAX_OPERATIONS, UserError, escaped, shown
from alterflow.settings import QUERY_ENGINES
from alterflow.sql.ast import (
    AddColumn,
    AddColumns,
    AlterClause,
    AlterTable,
    CancelAlter,
    ColumnDef,
    CreateTable,
    CreateView,
    Describe,
    DistributeBy,
    DropColumn,
    DropDefault,
    DropTable,
    DropView,
    ExplainSelect,
    Insert,
    Literal,
    ModifyColumn,
    OrderBy,
    Position,
    RenameColumn,
    ResumeAlter,
    RevertToVersion,
    Select,
    SetDefault,
    SetOption,
    ShowAlter,
    ShowSchemaVersions,
    Statement,
)
from alterflow.sql.names import MAX_NAME, NAME_RE

if TYPE_CHECKING:  # pragma: no cover
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

__all__ = ["SqlError", "Token", "parse_condition", "parse_statements", "split_statements", "statement_spans", "tokenize"]


class SqlError(UserError):
    """One clear line: what is wrong and where (e.g. "syntax error near 'FOO' in ALTER TABLE:
    expected a column definition")."""


MAX_INT = 2**31 - 1  # the largest number a type parameter or BUCKETS is read as
# SET name = value: the settings a session takes, and their values.
SESSION_OPTIONS = {"engine": QUERY_ENGINES}
MAX_BIGINT = 2**63 - 1  # the largest version number (the catalog's columns are 64-bit)
MAX_LITERAL_DIGITS = 80  # LARGEINT has 39 digits, DECIMAL 38; a DOUBLE's shortest text fewer than 30
# Type name -> the parameters it may take: 0 (none), 1 (n), 2 (p[,s]).
TYPES = {
    "BOOLEAN": 0,
    "TINYINT": 0,
    "SMALLINT": 0,
    "INT": 0,
    "INTEGER": 0,
    "BIGINT": 0,
    "LARGEINT": 0,
    "FLOAT": 0,
    "DOUBLE": 0,
    "DECIMAL": 2,
    "CHAR": 1,
    "VARCHAR": 1,
    "STRING": 0,
    "DATE": 0,
    "DATETIME": 0,
    "TIMESTAMP": 0,
}
_INT_RE = re.compile(r"\d+")
_ALTER_CLAUSES = "ADD COLUMN, DROP COLUMN, MODIFY COLUMN, RENAME COLUMN, ALTER COLUMN, ORDER BY, DISTRIBUTED BY or REVERT TO VERSION"


def parse_statements(text: str) -> list[Statement]:
    """Parse `;`-separated statements; empty statements (and empty input) yield nothing."""
    return list(_parsed(text))


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> tuple[Statement, ...]:
    """Parsing is a pure function of the text and the statements are frozen dataclasses, so an
    ALTER's steps (the session, validate, commit) share one parse. Errors are not cached."""
    pieces = _split(text)
    for tokens in pieces:
        _check_nesting(text, tokens)
        _check_operations(text, tokens)
    try:
        return tuple(_Parser(text, tokens).statement() for tokens in pieces)
    except RecursionError:  # nesting the checks above do not see (sqlglot recurses per level)
        raise SqlError("statement nested too deeply to parse") from None


def _check_nesting(text: str, tokens: list[_Tok]) -> None:
    """Refuse, in one line, a statement nested deeper than MAX_NESTING parentheses: sqlglot parses
    each level recursively and would run out of Python's stack."""
    depth = 0
    for tok in tokens:
        if tok.kind == "punct" and tok.text == "(":
            depth += 1
            if depth > MAX_NESTING:
                line, column = text.count("\n", 0, tok.start) + 1, tok.start - text.rfind("\n", 0, tok.start)
                raise SqlError(
                    f"statement nested too deeply: more than {MAX_NESTING} levels of parentheses at line {line}, column {column}"
                )
        elif tok.kind == "punct" and tok.text == ")":
            depth -= 1


# Tokens that make one more level of an expression tree: binary and unary operators, and the
# keywords of boolean, comparison and CASE expressions.
_OPERATORS = frozenset(
    "+ - * / % & | ^ ~ ! || = == < > <= >= <> != <=> :: -> => AND OR NOT XOR DIV IS LIKE RLIKE ILIKE REGEXP "
    "IN BETWEEN CASE WHEN ELSE".split()
)


def _check_operations(text: str, tokens: list[_Tok]) -> None:
    """Refuse, in one line, an expression more than MAX_OPERATIONS operations deep (`1+1+...+1`,
    `a AND a AND ...`, nested CASE): sqlglot's generator, Spark's parser and analyzer recurse per
    operation, and would run out of stack. An operator counts for every expression it is nested
    in: the count of an expression is reset by a `,` and ends with its `)`."""
    counts, total = [0], 0
    for tok in tokens:
        if tok.kind == "punct" and tok.text == "(":
            counts.append(0)
        elif tok.kind == "punct" and tok.text == ")":
            total -= counts.pop() if len(counts) > 1 else 0
        elif tok.kind == "punct" and tok.text == ",":
            total -= counts[-1]
            counts[-1] = 0
        elif tok.key in _OPERATORS:
            counts[-1] += 1
            total += 1
            if total > MAX_OPERATIONS:
                line, column = text.count("\n", 0, tok.start) + 1, tok.start - text.rfind("\n", 0, tok.start)
                raise SqlError(f"expression too deep: more than {MAX_OPERATIONS} nested operations at line {line}, column {column}")


def split_statements(text: str) -> list[str]:
    """The text of each non-empty statement, without parsing it: a runner that must stop at the
    first failing statement, with the ones before it done, parses them one at a time. Text that
    cannot be tokenized (an unterminated string) is split where tokens could still be read; the
    rest comes back as the last piece, which then fails to parse with its own error."""
    try:
        return [text[tokens[0].start : tokens[-1].end] for tokens in _split(text)]
    except SqlError:
        cut = _last_complete_statement_end(text)
        if cut == 0:
            return [text]
        return split_statements(text[:cut]) + [text[cut:]]


def tokenize(text: str) -> list[Token]:
    """Every token of `text` with its span in it, as the parser reads them: comments and white space
    are not tokens (they are what lies between two). SqlError, with its line, when it cannot be
    read (an unterminated string). `alterflow migrate diff` finds its `-- renamed from` marks so."""
    return _tokenize(text)


def statement_spans(text: str) -> list[tuple[int, str]]:
    """(offset where it starts, text) of each non-empty statement, without parsing it. Text that
    cannot be tokenized (an unterminated string) raises SqlError."""
    return [(tokens[0].start, text[tokens[0].start : tokens[-1].end]) for tokens in _split(text)]


def _last_complete_statement_end(text: str) -> int:
    """The offset just after the last `;` that sqlglot's tokenizer reads before failing (0: none)."""
    from sqlglot.dialects.doris import Doris
    from sqlglot.errors import SqlglotError
    from sqlglot.tokens import TokenType

    tokenizer = Doris().tokenizer_class()
    try:
        tokens = tokenizer.tokenize(text)
    except SqlglotError:
        tokens = getattr(tokenizer, "tokens", [])  # the ones read before the failure
    ends = [t.end + 1 for t in tokens if t.token_type == TokenType.SEMICOLON]
    return ends[-1] if ends else 0


def _split(text: str) -> list[list[_Tok]]:
    pieces, current = [], []
    for tok in _tokenize(text) + [_Tok("punct", ";", len(text), len(text))]:
        if tok.kind == "punct" and tok.text == ";":
            if current:
                pieces.append(current)
            current = []
        else:
            current.append(tok)
    return pieces


# --------------------------------------------------------------------------------------------
# Tokens


@dataclass(frozen=True)
class _Tok:
    """A token: kind is 'word' (keyword or plain name), 'quoted' (backquoted name), 'string',
    'number', 'punct' or 'other' (hex strings and the like). `text` is the unquoted text;
    [start, end) is its span in the original input."""

    kind: str
    text: str
    start: int
    end: int

    @property
    def key(self) -> str | None:
        """What keywords and punctuation are matched against (None: never a keyword)."""
        return self.text.upper() if self.kind in ("word", "punct") else None


Token = _Tok  # the public name of a token (`tokenize`)


def _tokenize(text: str) -> list[_Tok]:
    """sqlglot's tokens, reduced to `_Tok`. Multi-word keyword tokens ('ORDER BY') become words.
    Plain text (`_plain_tokens`: what people type most) is read without sqlglot, the same way."""
    plain = _plain_tokens(text)
    if plain is not None:
        return plain
    return _sqlglot_tokens(text)


# The text `_plain_tokens` reads: ASCII names, whole numbers and decimals, quoted strings without
# escapes (no quote of either kind, backslash or line break inside: the Doris tokenizer reads `"`
# before `'` in a '...' string as an escape), white space and single-character punctuation. Anything else (comments, backquotes,
# backslashes, operators of two characters, exponents, prefixed strings, non-ASCII) is sqlglot's.
_PLAIN_TEXT = re.compile(r"[A-Za-z0-9_ \t\r\n(),;=.*+\-/<>%'\"]*")
_PLAIN_TOKEN = re.compile(
    r"(?P<space>[ \t\r\n]+)|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<number>[0-9]+(?:\.[0-9]+)?)"
    r"|(?P<string>'[^'\"\\\r\n]*'|\"[^'\"\\\r\n]*\")|(?P<punct>[(),;=.*+\-/<>%])"
)
_OPERATOR_CHARS = frozenset("=*+-/<>%.")  # two of them side by side may be one token (<=, --, /*, ...)
# sqlglot reads the rest of a statement that one of these starts as one string token (a command),
# and a BEGIN or START before one makes it start a statement (tests/sql/test_plain_tokens.py
# derives both sets from sqlglot's tokenizer).
_COMMAND_WORDS = frozenset({"CALL", "EXECUTE", "FETCH", "LOCK", "UNLOCK", "OPTIMIZE", "PREPARE", "RENAME", "REPLACE", "VACUUM"})
_PREFIX_WORDS = frozenset({"BEGIN", "START"})


def _plain_tokens(text: str) -> list[_Tok] | None:
    """The tokens of `text` as `_sqlglot_tokens` gives them, read without importing sqlglot, or None
    when the text is not plain (then sqlglot reads it). tests/sql/test_plain_tokens.py checks the
    two agree on every plain text."""
    if not _PLAIN_TEXT.fullmatch(text):
        return None
    tokens: list[_Tok] = []
    pos, size = 0, len(text)
    while pos < size:
        match = _PLAIN_TOKEN.match(text, pos)
        if match is None:  # an unterminated string, or one holding a quote, a backslash or a line break
            return None
        if match.lastgroup != "space":
            token = _PLAIN_READERS[match.lastgroup](text, match)
            if token is None:
                return None
            tokens.append(token)
        pos = match.end()
    return None if _sqlglot_reads_words(text, tokens) else tokens


def _plain_word(text: str, match: re.Match) -> _Tok | None:
    if text[match.end() : match.end() + 1] in ("'", '"'):  # a prefixed string: x'41', b'01', N'text', _utf8mb4'text'
        return None
    return _Tok("word", match.group(), match.start(), match.end())


def _plain_number(text: str, match: re.Match) -> _Tok | None:
    after = text[match.end() : match.end() + 1]
    if after and (after.isalnum() or after in "_.'\""):  # 1e5, 0x1F, 1_000, 1.2.3
        return None
    return _Tok("number", match.group(), match.start(), match.end())


def _plain_string(text: str, match: re.Match) -> _Tok | None:
    if text[match.end() : match.end() + 1] in ("'", '"'):  # a doubled quote, or strings side by side
        return None
    return _Tok("string", match.group()[1:-1], match.start(), match.end())


def _plain_punct(text: str, match: re.Match) -> _Tok | None:
    char, start, end = match.group(), match.start(), match.end()
    after, before = text[end : end + 1], text[start - 1 : start]
    if char in _OPERATOR_CHARS and (after in _OPERATOR_CHARS or before in _OPERATOR_CHARS):
        return None
    if char == "." and (after.isdigit() or before.isdigit()):  # .5, 5., t.5
        return None
    return _Tok("punct", char, start, end)


_PLAIN_READERS = {"word": _plain_word, "number": _plain_number, "string": _plain_string, "punct": _plain_punct}


def _sqlglot_reads_words(text: str, tokens: list[_Tok]) -> bool:
    """Whether sqlglot reads some of the words otherwise than as plain words: a command word
    starting a statement, BEGIN or START, or USER-DEFINED."""
    for i, tok in enumerate(tokens):
        if tok.kind != "word":
            continue
        key = tok.text.upper()
        if key in _PREFIX_WORDS or (key in _COMMAND_WORDS and (i == 0 or tokens[i - 1].key == ";")):
            return True
        if key == "USER" and text[tok.end : tok.end + 1] == "-":  # the keyword USER-DEFINED
            return True
    return False


def _sqlglot_tokens(text: str) -> list[_Tok]:
    """sqlglot's Doris tokenizer's tokens, reduced to `_Tok`."""
    from sqlglot.dialects.doris import Doris
    from sqlglot.errors import SqlglotError
    from sqlglot.tokens import TokenType

    tokenizer = Doris().tokenizer_class()
    try:
        raw = tokenizer.tokenize(text)
    except SqlglotError:
        done = getattr(tokenizer, "tokens", [])  # the tokens read before the one that failed
        pos = done[-1].end + 1 if done else 0
        pos += len(text[pos:]) - len(text[pos:].lstrip())
        line, column = text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)
        raise SqlError(
            f"unterminated string, quoted name or comment at line {line}, column {column}: "
            + escaped(" ".join(text[pos : pos + 30].split()))
        ) from None
    tokens = []
    for t in raw:
        start, end = t.start, t.end + 1
        if t.token_type == TokenType.STRING:
            tokens.append(_Tok("string", t.text, start, end))
        elif t.token_type == TokenType.IDENTIFIER:
            tokens.append(_Tok("quoted", t.text, start, end))
        elif t.token_type == TokenType.NUMBER:
            tokens.append(_Tok("number", t.text, start, end))
        elif t.token_type.name.endswith("_STRING"):
            tokens.append(_Tok("other", text[start:end], start, end))
        elif t.text[:1].isalpha() or t.text[:1] == "_":
            for word in re.finditer(r"\S+", text[start:end]):
                tokens.append(_Tok("word", word.group(), start + word.start(), start + word.end()))
        else:
            tokens.append(_Tok("punct", t.text, start, end))
    return tokens


def _snippet(text: str, limit: int = 30) -> str:
    return shown(" ".join(text.split()), limit)


def _property(key: str) -> str:
    return shown(key, quote='"')


def check_name(name: str) -> str:
    """The name itself, or SqlError when it is not a valid alterflow name."""
    if len(name) > MAX_NAME or not NAME_RE.fullmatch(name):
        raise SqlError(f"invalid name {shown(name, MAX_NAME + 2)}: names match [A-Za-z_][A-Za-z0-9_]* up to {MAX_NAME} characters")
    return name


# --------------------------------------------------------------------------------------------
# Queries (sqlglot, Spark dialect)


def parse_condition(text: str, context: str) -> exp.Expression:
    """A boolean expression in Spark's dialect (a scan's `where`), under the same limits as a
    statement's expressions: nesting and operation counts are checked before sqlglot parses it."""
    tokens = _tokenize(text)
    if not tokens:
        raise SqlError(f"{context}: the condition is empty")
    if any(t.kind == "punct" and t.text == ";" for t in tokens):
        raise SqlError(f"{context}: a condition is one expression, without ';'")
    _check_nesting(text, tokens)
    _check_operations(text, tokens)
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        return sqlglot.parse_one(text, read="spark", into=exp.Condition)
    except SqlglotError as e:
        raise SqlError(_sqlglot_message(e, context)) from None
    except RecursionError:
        raise SqlError(f"{context}: condition nested too deeply to parse") from None


def _query_tables(sql: str, context: str) -> tuple[str, ...]:
    """Parse a Spark query; the catalog tables it reads, in order of first appearance, without
    the names its own CTEs define."""
    import sqlglot  # here, not at the top: statements other than queries never need it
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except SqlglotError as e:
        raise SqlError(_sqlglot_message(e, context)) from None
    if not isinstance(tree, exp.Query):
        raise SqlError(f"syntax error in {context}: expected a query, got {_snippet(sql)}")
    found: dict[str, tuple[int, str]] = {}
    for order, table in enumerate(tree.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier):  # table-valued function, e.g. range(10)
            continue
        if table.db or table.catalog:
            raise SqlError(f"qualified table name {shown(table.sql('spark'))} in {context}: tables are named without a database")
        name = check_name(table.name)
        if name.lower() in found or _is_cte(table):
            continue
        found[name.lower()] = (table.this.meta.get("start", order), name)
    return tuple(name for _, name in sorted(found.values(), key=lambda item: item[0]))


def _spark_query_tables(sql: str, context: str) -> tuple[tuple[str, ...], bool]:
    """A query's tables and whether they are guessed: sqlglot's parser does not read all of Spark's
    SQL (`corr(DISTINCT x, y)`), and a query Spark accepts must never be refused for that. Where
    sqlglot fails, every name-like word of the query is a candidate, the caller binds those the
    catalog holds, and Spark parses the text (and words its own error if it is not SQL)."""
    from sqlglot.errors import SqlglotError

    try:
        return _query_tables(sql, context), False
    except SqlError as exc:
        if not isinstance(exc.__context__, SqlglotError):
            raise
    words = [t.text for t in _tokenize(sql) if t.kind in ("word", "quoted") and len(t.text) <= MAX_NAME and NAME_RE.fullmatch(t.text)]
    return tuple(dict.fromkeys(words)), True


def _is_cte(table: exp.Table) -> bool:
    """Whether a WITH in scope defines the table's name (in a CTE's own body, only the CTEs
    before it are in scope, unless the WITH is RECURSIVE)."""
    from sqlglot import exp

    name = table.name.lower()
    child, node = table, table.parent
    while node is not None:
        if isinstance(node, exp.With):  # `child` is one of its CTEs
            ctes = node.expressions if node.args.get("recursive") else node.expressions[: child.index]
        else:
            with_ = node.args.get("with_")
            ctes = with_.expressions if isinstance(with_, exp.With) and with_ is not child else []
        if any(cte.alias.lower() == name for cte in ctes):
            return True
        child, node = node, node.parent
    return False


def _sqlglot_message(error: SqlglotError, context: str) -> str:
    details = getattr(error, "errors", None) or [{}]
    description = str(details[0].get("description") or error).splitlines()[0]
    description = re.sub(r"\s*but got <Token.*", "", description)
    description = re.sub(r"<class '(?:\w+\.)*(\w+)'>", r"\1", description)
    near = details[0].get("highlight")
    where = f"near {_snippet(near)} " if near else ""
    return f"syntax error {where}in {context}: {description}"


# --------------------------------------------------------------------------------------------
# alterflow DDL: recursive descent over the tokens of one statement


def _check_kept_text(stmt: Statement) -> None:
    """The catalog keeps the text of a CREATE TABLE, an ALTER TABLE and a CREATE VIEW (with its
    defaults and comments): a NUL character, which PostgreSQL's text cannot hold, is refused there
    on every catalog in one line. Data values (INSERT, loads) go to Parquet and may hold one."""
    kept = stmt.sql if isinstance(stmt, CreateTable | AlterTable) else stmt.query if isinstance(stmt, CreateView) else ""
    if "\x00" in kept:
        what = (
            f"CREATE VIEW {stmt.name}"
            if isinstance(stmt, CreateView)
            else f"CREATE TABLE {stmt.name}"
            if isinstance(stmt, CreateTable)
            else f"ALTER TABLE {stmt.table}"
        )
        raise SqlError(
            f"{what}: a NUL character (\\x00) cannot be kept in the catalog (its statements, defaults, comments, views); data values may hold one"
        )


class _Parser:
    def __init__(self, text: str, tokens: list[_Tok]):
        self.text = text
        self.tokens = tokens
        self.i = 0
        self.context = "statement"  # named in error messages, e.g. "ALTER TABLE t"
        self.subject: str | None = None  # the table or view the statement is about, once parsed

    # ---- token helpers

    def peek(self, ahead: int = 0) -> _Tok | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def at(self, *keys: str) -> bool:
        """Whether the next tokens are these keywords / punctuation (case-insensitive)."""
        return all((tok := self.peek(n)) is not None and tok.key == key for n, key in enumerate(keys))

    def accept(self, *keys: str) -> bool:
        if self.at(*keys):
            self.i += len(keys)
            return True
        return False

    def expect(self, *keys: str, what: str | None = None) -> None:
        for key in keys:
            if not self.accept(key):
                raise self.error(what or " ".join(keys))

    def error(self, expected: str) -> SqlError:
        tok = self.peek()
        where = f"near {_snippet(self.text[tok.start : tok.end])}" if tok else "at end of statement"
        return SqlError(f"syntax error {where} in {self.context}: expected {expected}")

    def rest(self) -> str:
        """The original text from the next token to the end of the statement (consumed)."""
        start, end = self.tokens[self.i].start, self.tokens[-1].end
        self.i = len(self.tokens)
        return self.text[start:end]

    def end(self) -> None:
        if self.peek() is not None:
            raise self.error("end of statement")

    # ---- building blocks

    def name(self, what: str = "a name") -> str:
        tok = self.peek()
        if tok is None or tok.kind not in ("word", "quoted"):
            raise self.error(what)
        self.i += 1
        if self.at("."):
            qualified = tok.text + "." + (self.peek(1).text if self.peek(1) else "")
            raise SqlError(f"qualified name {shown(qualified, 2 * MAX_NAME + 1)} in {self.context}: names are not qualified")
        try:
            name = check_name(tok.text)
        except SqlError as exc:
            raise SqlError(f"{self.context}: {exc}") from None
        if what in ("a table name", "a view name") and self.subject is None:
            self.subject = name  # later messages name the table: "ALTER TABLE t: invalid name ..."
            self.context = f"{self.context} {name}"
        return name

    def name_list(self) -> tuple[str, ...]:
        """`(name, ...)`."""
        self.expect("(", what="'(' and a column list")
        names = [self.name("a column name")]
        while self.accept(","):
            names.append(self.name("a column name"))
        self.expect(")", what="',' or ')'")
        return tuple(names)

    def integer(self, what: str, positive: bool = False, maximum: int = MAX_INT) -> int:
        """An integer literal from 0 (1 if `positive`) to `maximum`: the planner checks the range
        each number really has (BUCKETS, DECIMAL precision, ...); this one only keeps absurd
        numbers (thousands of digits) out of it and out of the catalog's 64-bit columns."""
        tok = self.peek()
        is_int = tok is not None and tok.kind == "number" and _INT_RE.fullmatch(tok.text)
        digits = tok.text.lstrip("0") or "0" if is_int else ""
        if not is_int or (positive and digits == "0"):
            raise self.error(f"{'a positive' if positive else 'an'} integer {what}")
        if len(digits) > len(str(maximum)) or int(digits) > maximum:
            raise SqlError(f"number too large in {self.context}: {_snippet(tok.text, 20)} {what} is more than {maximum}")
        self.i += 1
        return int(digits)

    def literal(self, context: str) -> Literal:
        """NULL, TRUE/FALSE, [-]number, 'string', DATE/TIMESTAMP 'string'."""
        tok = self.peek()
        if tok is None:
            raise self.literal_error(context, None)
        start = tok.start
        if self.accept("NULL"):
            lit = Literal("null", None, "NULL")
        elif self.at("TRUE") or self.at("FALSE"):
            lit = Literal("bool", tok.key == "TRUE", tok.key)
            self.i += 1
        elif tok.kind == "string":
            self.i += 1
            lit = Literal("string", tok.text, self.text[start : tok.end])
        elif tok.key in ("DATE", "DATETIME", "TIMESTAMP") and getattr(self.peek(1), "kind", "") == "string":
            # DATE '2024-01-01': a string literal; the planner reads it against the column's type
            quoted = self.peek(1)
            self.i += 2
            lit = Literal("string", quoted.text, self.text[start : quoted.end])
        else:
            sign = "-" if self.accept("-") else ""
            num = self.peek()
            if num is None or num.kind != "number":
                raise self.literal_error(context, tok)
            self.i += 1
            text = sign + num.text
            is_int = _INT_RE.fullmatch(num.text)
            if len(num.text) > MAX_LITERAL_DIGITS:  # no column type holds it; int() refuses thousands of digits
                raise SqlError(f"number too large in {self.context}: {_snippet(text, 20)} has more than {MAX_LITERAL_DIGITS} characters")
            lit = Literal("int", int(text), text) if is_int else Literal("decimal", text, text)
        after = self.peek()
        if after is not None and after.kind == "punct" and after.text not in (",", ")"):
            raise self.literal_error(context, after)  # arithmetic, a call, a cast...
        return lit

    def literal_error(self, context: str, tok: _Tok | None) -> SqlError:
        near = f" (near {_snippet(self.text[tok.start : tok.end])})" if tok else " (got end of statement)"
        return SqlError(context + near)

    def column_type(self, column: str) -> str:
        tok = self.peek()
        if tok is None or tok.kind != "word":
            raise self.error(f"a type for column {column}")
        type_name = tok.key
        if type_name not in TYPES:
            raise SqlError(f"unknown type {tok.text if len(tok.text) <= 40 else shown(tok.text, 40)} for column {column}")
        self.i += 1
        params = []
        if self.accept("("):
            if not TYPES[type_name]:
                raise SqlError(f"type {type_name} of column {column} takes no parameters")
            while True:
                if len(params) == TYPES[type_name]:
                    raise self.error(f"')' after the parameters of {type_name}")
                params.append(str(self.integer(f"as a parameter of {type_name}")))
                if not self.accept(","):
                    break
            self.expect(")", what=f"')' after the parameters of {type_name}")
        return type_name + (f"({','.join(params)})" if params else "")

    def column_def(self, allow_position: bool) -> ColumnDef:
        """name type [NULL | NOT NULL] [DEFAULT literal] [COMMENT 'text'] [FIRST | AFTER col]
        (the attributes in any order, each at most once)."""
        name = self.name("a column definition")
        attrs: dict = {"type": self.column_type(name)}

        def once(attr: str, keyword: str, value) -> None:
            if attr in attrs:
                raise SqlError(f"{keyword} given twice for column {name} in {self.context}")
            attrs[attr] = value

        while True:
            if self.accept("NOT", "NULL"):
                once("nullable", "NULL / NOT NULL", False)
            elif self.accept("NULL"):
                once("nullable", "NULL / NOT NULL", True)
            elif self.accept("DEFAULT"):
                once("default", "DEFAULT", self.literal(f"DEFAULT of column {name} accepts literals only"))
            elif self.accept("COMMENT"):
                once("comment", "COMMENT", self.string(f"a quoted comment for column {name}"))
            else:
                break
        if self.at("FIRST") or self.at("AFTER"):
            if not allow_position:
                raise SqlError(f"FIRST / AFTER is not allowed here in {self.context} (column {name})")
            attrs["position"] = Position(first=True) if self.accept("FIRST") else self.after()
        return ColumnDef(name=name, **attrs)

    def after(self) -> Position:
        self.expect("AFTER")
        return Position(after=self.name("a column name after AFTER"))

    def distributed_by(self) -> tuple[tuple[str, ...], int]:
        """(after DISTRIBUTED BY) HASH(col, ...) BUCKETS n."""
        self.expect("HASH", what="HASH(col, ...)")
        columns = self.name_list()
        self.expect("BUCKETS", what="BUCKETS n")
        return columns, self.integer("after BUCKETS", positive=True)

    def properties(self) -> dict[str, str]:
        """(after PROPERTIES) ("key" = "value", ...)."""
        self.expect("(", what="'(' after PROPERTIES")
        props: dict[str, str] = {}
        while True:
            key = self.string("a quoted property name")
            self.expect("=", what=f"'=' after property {_property(key)}")
            value = self.string(f"a quoted value for property {_property(key)}")
            if key.lower() in props:
                raise SqlError(f"property {_property(key)} given twice in {self.context}")
            props[key.lower()] = value
            if not self.accept(","):
                break
        self.expect(")", what="',' or ')' in PROPERTIES")
        return props

    def string(self, what: str) -> str:
        tok = self.peek()
        if tok is None or tok.kind != "string":
            raise self.error(what)
        self.i += 1
        return tok.text

    # ---- statements

    def statement(self) -> Statement:
        if self.at("SELECT") or self.at("WITH") or self.at("("):
            sql = self.rest()
            return Select(sql, *_spark_query_tables(sql, "SELECT"))
        for keys, method in self.STATEMENTS:
            if self.accept(*keys):
                self.context = " ".join(keys)
                stmt = method(self)
                self.end()
                _check_kept_text(stmt)
                return stmt
        raise self.unsupported()

    def unsupported(self) -> SqlError:
        head = self.text[self.tokens[0].start : self.tokens[min(2, len(self.tokens) - 1)].end]
        more = " ..." if len(self.tokens) > 3 else ""
        return SqlError(f"unsupported statement: {escaped(' '.join(head.split())[:60])}{more}")

    def create_table(self) -> CreateTable:
        if_not_exists = self.accept("IF", "NOT", "EXISTS")
        name = self.name("a table name")
        self.expect("(", what="'(' and column definitions")
        columns: list[ColumnDef] = []
        primary_key: tuple[str, ...] | None = None
        while True:
            if self.accept("PRIMARY", "KEY"):
                if primary_key is not None:
                    raise SqlError(f"PRIMARY KEY given twice in CREATE TABLE {name}")
                primary_key = self.name_list()
            else:
                columns.append(self.column_def(allow_position=False))
            if not self.accept(","):
                break
        self.expect(")", what="',' or ')' after a column definition")
        if not columns:
            raise SqlError(f"CREATE TABLE {name} defines no columns")
        clauses: dict = {}

        def once(clause: str, value) -> None:
            if clause in clauses:
                raise SqlError(f"{clause} given twice in CREATE TABLE {name}")
            clauses[clause] = value

        while self.peek() is not None:
            if self.accept("PARTITION", "BY"):
                once("PARTITION BY", self.name_list())
            elif self.accept("DISTRIBUTED", "BY"):
                once("DISTRIBUTED BY", self.distributed_by())
            elif self.accept("ORDER", "BY"):
                once("ORDER BY", self.name_list())
            else:
                raise self.error("PARTITION BY, DISTRIBUTED BY, ORDER BY or end of statement")
        distributed_by, buckets = clauses.get("DISTRIBUTED BY", (None, None))
        return CreateTable(
            name=name,
            columns=tuple(columns),
            primary_key=primary_key or (),
            partition_by=clauses.get("PARTITION BY", ()),
            distributed_by=distributed_by,
            buckets=buckets,
            order_by=clauses.get("ORDER BY", ()),
            if_not_exists=if_not_exists,
            sql=self.text[self.tokens[0].start : self.tokens[-1].end],
        )

    def drop_table(self) -> DropTable:
        if_exists = self.accept("IF", "EXISTS")
        return DropTable(name=self.name("a table name"), if_exists=if_exists)

    def create_view(self) -> CreateView:
        name = self.name("a view name")
        self.expect("AS", what="AS SELECT ...")
        if not (self.at("SELECT") or self.at("WITH") or self.at("(")):
            raise self.error("a SELECT query after AS")
        query = self.rest()
        tables, unparsed = _spark_query_tables(query, f"CREATE VIEW {name}")
        return CreateView(name=name, query=query, tables=tables, unparsed=unparsed)

    def drop_view(self) -> DropView:
        if_exists = self.accept("IF", "EXISTS")
        return DropView(name=self.name("a view name"), if_exists=if_exists)

    def describe(self) -> Describe:
        return Describe(table=self.name("a table name"))

    def insert(self) -> Insert:
        table = self.name("a table name")
        columns = None
        if self.at("(") and not (self.at("(", "SELECT") or self.at("(", "WITH")):
            columns = self.name_list()
        if self.at("SELECT") or self.at("WITH") or self.at("("):
            query = self.rest()
            _spark_query_tables(query, f"INSERT INTO {table}")  # checks it; Insert has no tables
            return Insert(table=table, columns=columns, query=query)
        self.expect("VALUES", what="VALUES or SELECT")
        rows = [self.values_row()]
        while self.accept(","):
            rows.append(self.values_row())
        widths = {len(row) for row in rows}
        if len(widths) > 1:
            raise SqlError(
                f"INSERT INTO {table}: VALUES rows have different numbers of values ({', '.join(str(len(row)) for row in rows)})"
            )
        if columns is not None and widths != {len(columns)}:
            raise SqlError(f"INSERT INTO {table}: {len(columns)} columns listed but VALUES rows have {len(rows[0])} values")
        return Insert(table=table, columns=columns, rows=tuple(rows))

    def values_row(self) -> tuple[Literal, ...]:
        self.expect("(", what="'(' to start a VALUES row")
        only_literals = "INSERT ... VALUES accepts literals only; use INSERT ... SELECT for expressions"
        row = [self.literal(only_literals)]
        while self.accept(","):
            row.append(self.literal(only_literals))
        self.expect(")", what="',' or ')' in a VALUES row")
        return tuple(row)

    def explain(self) -> AlterTable | ExplainSelect:
        if self.at("SELECT") or self.at("WITH") or self.at("("):
            sql = self.rest()
            return ExplainSelect(sql, *_spark_query_tables(sql, "EXPLAIN SELECT"))
        analyze = self.accept("ANALYZE")
        what = (
            "ALTER TABLE (EXPLAIN ANALYZE takes an ALTER TABLE only)"
            if analyze
            else "ALTER TABLE or a SELECT (only these can be explained)"
        )
        self.expect("ALTER", "TABLE", what=what)
        self.context = "EXPLAIN ANALYZE ALTER TABLE" if analyze else "EXPLAIN ALTER TABLE"
        return self.alter_table(explain=True, analyze=analyze)

    def alter_table(self, explain: bool = False, analyze: bool = False) -> AlterTable:
        table = self.name("a table name")
        clauses = [self.alter_clause()]
        while self.accept(","):
            clauses.append(self.alter_clause())
        properties = self.properties() if self.accept("PROPERTIES") else {}
        skipped = (1 if explain else 0) + (1 if analyze else 0)
        sql = self.text[self.tokens[skipped].start : self.tokens[-1].end]  # without EXPLAIN [ANALYZE]
        return AlterTable(table, tuple(clauses), properties=properties, explain=explain, sql=sql, analyze=analyze)

    def alter_clause(self) -> AlterClause:
        if self.accept("ADD"):
            self.expect("COLUMN", what="COLUMN after ADD")
            if not self.accept("("):
                return AddColumn(self.column_def(allow_position=True))
            columns = [self.column_def(allow_position=False)]
            while self.accept(","):
                columns.append(self.column_def(allow_position=False))
            self.expect(")", what="',' or ')' after a column definition")
            return AddColumns(tuple(columns))
        if self.accept("DROP"):
            self.expect("COLUMN", what="COLUMN after DROP")
            return DropColumn(self.name("a column name"))
        if self.accept("MODIFY"):
            self.expect("COLUMN", what="COLUMN after MODIFY")
            return ModifyColumn(self.column_def(allow_position=True))
        if self.accept("RENAME"):
            self.expect("COLUMN", what="COLUMN after RENAME")
            old = self.name("a column name")
            self.accept("TO")
            return RenameColumn(old, self.name("the new column name"))
        if self.accept("ALTER"):
            self.expect("COLUMN", what="COLUMN after ALTER")
            column = self.name("a column name")
            if self.accept("SET", "DEFAULT"):
                return SetDefault(column, self.literal(f"DEFAULT of column {column} accepts literals only"))
            self.expect("DROP", "DEFAULT", what="SET DEFAULT or DROP DEFAULT")
            return DropDefault(column)
        if self.accept("ORDER", "BY"):
            return OrderBy(self.name_list())
        if self.accept("DISTRIBUTED", "BY"):
            return DistributeBy(*self.distributed_by())
        if self.accept("REVERT"):
            self.expect("TO", "VERSION", what="TO VERSION n after REVERT")
            return RevertToVersion(self.integer("after REVERT TO VERSION", positive=True, maximum=MAX_BIGINT))
        raise self.error(_ALTER_CLAUSES)

    def show(self) -> ShowAlter | ShowSchemaVersions:
        if self.accept("ALTER"):
            self.expect("TABLE", "COLUMN", what="TABLE COLUMN")
            self.context = "SHOW ALTER TABLE COLUMN"
            return ShowAlter(self.name("a table name") if self.accept("FROM") else None)
        if self.accept("SCHEMA"):
            self.expect("VERSIONS", "FROM", what="VERSIONS FROM table")
            self.context = "SHOW SCHEMA VERSIONS"
            return ShowSchemaVersions(self.name("a table name"))
        raise self.unsupported()

    def set_option(self) -> SetOption:
        """(after SET) name = value, the value a word or a quoted string."""
        self.context = "SET"
        name = self.name("a setting's name").lower()
        if name not in SESSION_OPTIONS:
            raise SqlError(f"SET: unknown setting {shown(name)}; the settings are {', '.join(SESSION_OPTIONS)}")
        self.expect("=", what="'=' after the setting's name")
        tok = self.peek()
        if tok is None or tok.kind not in ("word", "string", "quoted"):
            raise self.error(f"a value for {name}")
        self.i += 1
        value = tok.text.lower()
        if value not in SESSION_OPTIONS[name]:
            raise SqlError(f"SET {name}: unknown value {shown(tok.text)}; use one of {', '.join(SESSION_OPTIONS[name])}")
        return SetOption(name, value)

    def job_table(self) -> str:
        """(after CANCEL / RESUME) ALTER TABLE COLUMN FROM t."""
        self.expect("ALTER", "TABLE", "COLUMN", "FROM", what="ALTER TABLE COLUMN FROM table")
        return self.name("a table name")

    STATEMENTS = (
        (("CREATE", "TABLE"), create_table),
        (("CREATE", "VIEW"), create_view),
        (("DROP", "TABLE"), drop_table),
        (("DROP", "VIEW"), drop_view),
        (("INSERT", "INTO"), insert),
        (("DESCRIBE",), describe),
        (("DESC",), describe),
        (("ALTER", "TABLE"), alter_table),
        (("SHOW",), show),
        (("EXPLAIN",), explain),
        (("SET",), set_option),
        (("CANCEL",), lambda self: CancelAlter(self.job_table())),
        (("RESUME",), lambda self: ResumeAlter(self.job_table())),
    )
