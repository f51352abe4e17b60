"""The parser reads plain text without sqlglot (`_plain_tokens`: a light ALTER's process never
imports it, issue 26) and must read it exactly as sqlglot's Doris tokenizer does
(`_sqlglot_tokens`). Checked on every string of the tests and examples and on random text built
from the characters and pieces where the two could part: quotes, escapes, comments, operators,
numbers, prefixed strings."""

from __future__ import annotations

import ast
import pathlib
import random

import pytest

from alterflow.sql import parser
from alterflow.sql.parser import _plain_tokens, _sqlglot_tokens, split_statements

ROOT = pathlib.Path(__file__).resolve().parents[2]


def agree(text: str) -> bool:
    """Whether `_plain_tokens` read `text` (True) or left it to sqlglot (False); when it read it,
    its tokens are sqlglot's."""
    plain = _plain_tokens(text)
    if plain is None:
        return False
    assert plain == _sqlglot_tokens(text), text
    return True


@pytest.mark.parametrize(
    "text",
    [
        "ALTER TABLE t ADD COLUMN n INT",
        "ALTER TABLE light3 ADD COLUMN n INT DEFAULT 0 COMMENT 'a note', RENAME COLUMN v TO w",
        'ALTER TABLE t MODIFY COLUMN v BIGINT NOT NULL PROPERTIES ("engine" = "spark", "timeout" = "60")',
        "CREATE TABLE t (id INT NOT NULL, v VARCHAR(10), d DECIMAL(10,2), PRIMARY KEY (id))\n"
        "  DISTRIBUTED BY HASH(id) BUCKETS 4 ORDER BY (id);\nINSERT INTO t VALUES (1, 'a', -2.50), (2, '', 3)",
        "SELECT count(*) AS n, sum(v) / 2 FROM t WHERE id > 1 AND v <> 'x' ORDER BY n;",
        "DESCRIBE t; SHOW ALTER TABLE COLUMN FROM t; SHOW SCHEMA VERSIONS FROM t",
        "",
        "  \n\t ",
    ],
)
def test_what_people_type_is_read_without_sqlglot_as_sqlglot_reads_it(text):
    if text.strip() and "<>" not in text:
        assert _plain_tokens(text) is not None, text
    agree(text)


@pytest.mark.parametrize(
    "text",
    [
        "SELECT 1 -- a comment",
        "SELECT /* c */ 1",
        "SELECT `a b` FROM t",
        "SELECT 'it''s'",
        "SELECT 'a\\'b'",
        "SELECT 'a\"'",
        "SELECT x'41', b'01', N'n'",
        "SELECT 1e5, 0x1F, .5, 5.",
        "SELECT a <= b, a >= b, a != b, a || b, a::INT",
        "SELECT 'unterminated",
        "SELECT 'é'",
        "SELECT # mysql comment\n1",
        "CALL p(1, 2)",
        "SELECT 1; REPLACE INTO t VALUES (1)",
        "BEGIN; SELECT 1",
        "SELECT user-defined",
    ],
)
def test_anything_else_is_left_to_sqlglot(text):
    assert _plain_tokens(text) is None, text


def test_the_words_that_change_how_sqlglot_reads_what_follows_are_known():
    """Keywords whose token makes sqlglot read the rest of the statement as one string (and those
    that may come before one), and keywords that hold punctuation: the plain reader leaves a text
    with any of them to sqlglot, so it must know them all (a sqlglot upgrade may add some)."""
    from sqlglot.dialects.doris import Doris

    tokenizer = Doris.tokenizer_class
    commands = {k.split()[0] for k, v in tokenizer.KEYWORDS.items() if v in tokenizer.COMMANDS}
    assert commands <= parser._COMMAND_WORDS, commands - parser._COMMAND_WORDS
    prefixes = {k for k, v in tokenizer.KEYWORDS.items() if v in tokenizer.COMMAND_PREFIX_TOKENS}
    assert prefixes <= parser._PREFIX_WORDS, prefixes - parser._PREFIX_WORDS
    punctuated = {k for k in tokenizer.KEYWORDS if k[:1].isalpha() and not k.replace(" ", "").replace("_", "").isalnum()}
    assert punctuated == {"USER-DEFINED"}, punctuated


def _strings_of(path: pathlib.Path):
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 20_000:
            yield node.value


def test_every_string_of_the_tests_and_examples():
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").rglob("*.sql"))]
    for path in sorted((ROOT / "tests").rglob("*.py")):
        texts += list(_strings_of(path))
    read = sum(agree(text) for text in texts)
    assert read > 500, read  # many of them are plain: the comparison is not vacuous


PIECES = [
    "ALTER", "TABLE", "RENAME", "CALL", "BEGIN", "START", "LOCK TABLES", "REPLACE", "USER-DEFINED", "USER", "t", "ADD", "COLUMN", "ORDER", "BY", "DISTRIBUTED", "NOT", "NULL", "x", "b", "N", "e", "_u",
    "1", "0", "42", "3.14", "1e5", "0x1F", "007",
    "'", '"', "`", "\\", "''", '""', "'a'", '"b"', "'it''s'", "'a\"'", '"a\'"',
    "(", ")", ",", ";", ".", "*", "+", "-", "/", "=", "<", ">", "%", "!", "|", ":", "#", "@", "$", "?", "&", "^", "~", "[", "]", "{", "}",
    " ", "  ", "\n", "\t", "\r\n", "--", "/*", "*/", "é", "\u00a0",
]  # fmt: skip


def test_random_text_built_from_the_tricky_pieces():
    rng = random.Random(26)
    read = 0
    for _ in range(30_000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
        try:
            read += agree(text)
        except AssertionError:
            raise
        except Exception:  # sqlglot refused it: then the plain reader must not have read it
            assert _plain_tokens(text) is None, text
    assert read > 3_000, read


def test_split_statements_is_unchanged_on_plain_text():
    assert split_statements("CREATE TABLE t (a INT); ; ALTER TABLE t ADD COLUMN b INT;") == [
        "CREATE TABLE t (a INT)",
        "ALTER TABLE t ADD COLUMN b INT",
    ]
