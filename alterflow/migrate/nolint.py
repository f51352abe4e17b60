"""`-- alterflow:nolint RULE [RULE...]`: a migration file's per-statement suppression of lint rules
(Atlas's `-- atlas:nolint DS102` directive).

Where a directive applies:

- a directive after code on a line applies to the statement(s) whose text spans that line
  (`ALTER TABLE t DROP COLUMN x;  -- alterflow:nolint drop_column`);
- a directive alone on its line applies to the statement that starts on the next line, and to a
  statement whose text spans its line (a comment between two lines of one statement).

A bare `-- alterflow:nolint` suppresses every rule but `rejected`: a statement the planner rejects
cannot be applied, so that finding is never suppressed. Rule names are those of `DEFAULTS` in
`alterflow.migrate.rules`, read when a file is checked (a rule added there is known here).

Refused in one line naming the file and line (`NolintError`): an unknown rule, `rejected`, and a
directive that applies to no statement. Comments are what lies between the tokenizer's tokens, so
the same words inside a string literal are no directive.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from alterflow.errors import UserError, shown
from alterflow.migrate.migration_files import MigrationFile

DIRECTIVE = re.compile(r"--[ \t]*alterflow:nolint(?![\w:-])(?P<rules>[^\r\n]*)")
LINE_COMMENT = re.compile(r"--[^\n]*")
NEVER_SUPPRESSED = "rejected"


class NolintError(UserError):
    """A `-- alterflow:nolint` directive names a rule lint does not know, names `rejected`, or sits
    where it applies to no statement; the message names the file and line."""


@dataclass(frozen=True)
class Suppression:
    """The rules suppressed for one statement: (line, rules) of each directive that applies to it,
    rules None for a bare directive (every rule but `rejected`)."""

    directives: tuple[tuple[int, frozenset[str] | None], ...] = ()

    def line_covering(self, rule: str) -> int | None:
        """The line of the first directive that suppresses `rule`, or None."""
        if rule == NEVER_SUPPRESSED:
            return None
        return next((line for line, rules in self.directives if rules is None or rule in rules), None)

    def covers(self, rule: str) -> bool:
        return self.line_covering(rule) is not None

    def merged(self, other: Suppression) -> Suppression:
        return Suppression((*self.directives, *other.directives))


NOTHING_SUPPRESSED = Suppression()


@dataclass(frozen=True)
class _Directive:
    line: int
    alone: bool  # nothing but white space before it on its line
    suppression: Suppression


def suppression_of(file: MigrationFile, position: int) -> Suppression:
    """The suppression of statement `position` (1-based) of `file`."""
    if "alterflow:nolint" not in file.text:
        return NOTHING_SUPPRESSED
    return _suppressions_of_file(file, _known_rules()).get(position, NOTHING_SUPPRESSED)


@functools.lru_cache(maxsize=256)
def _suppressions_of_file(file: MigrationFile, known: tuple[str, ...]) -> dict[int, Suppression]:
    statements = tuple((s.position, s.line, s.line + s.text.count("\n")) for s in file.statements)
    return file_suppressions(file.script, file.text, statements, known)


def _known_rules() -> tuple[str, ...]:
    from alterflow.migrate.rules import DEFAULTS

    return tuple(DEFAULTS)


def file_suppressions(
    script: str, text: str, statements: tuple[tuple[int, int, int], ...], known: tuple[str, ...]
) -> dict[int, Suppression]:
    """Statement position -> its suppression, for every statement of the file a directive applies
    to (`statements`: the position, first line and last line of each); a directive that names an
    unknown rule or applies to none is refused (NolintError)."""
    from alterflow.sql.parser import SqlError, tokenize

    try:
        tokens = tokenize(text)
    except SqlError:
        return {}  # the file's statements are refused with the reason where they are read
    directives = _directives(script, text, [(t.start, t.end) for t in tokens], known)
    found: dict[int, Suppression] = {}
    for directive in directives:
        targets = [
            position
            for position, first, last in statements
            if first <= directive.line <= last or (directive.alone and first == directive.line + 1)
        ]
        if not targets:
            raise NolintError(
                f"{script}:{directive.line}: -- alterflow:nolint applies to no statement; "
                "put it on the statement's line or on the line before it"
            )
        for position in targets:
            found[position] = found.get(position, NOTHING_SUPPRESSED).merged(directive.suppression)
    return found


def _directives(script: str, text: str, token_spans: list[tuple[int, int]], known: tuple[str, ...]) -> list[_Directive]:
    """Every directive of `text`: line comments between the tokens that start with alterflow:nolint."""
    directives = []
    previous_end = 0
    for start, end in [*token_spans, (len(text), len(text))]:
        for comment in LINE_COMMENT.finditer(text, previous_end, start):
            match = DIRECTIVE.match(comment.group())
            if match is not None:
                line = _line_of(text, comment.start())
                line_start = text.rfind("\n", 0, comment.start()) + 1
                alone = not text[line_start : comment.start()].strip()
                directives.append(_Directive(line, alone, _parse_rules(script, line, match["rules"], known)))
        previous_end = end
    return directives


def _parse_rules(script: str, line: int, written: str, known: tuple[str, ...]) -> Suppression:
    names = [name for name in re.split(r"[\s,]+", written.strip()) if name]
    if not names:
        return Suppression(((line, None),))
    for name in names:
        if name == NEVER_SUPPRESSED:
            raise NolintError(f"{script}:{line}: -- alterflow:nolint cannot suppress rule rejected: a rejected statement cannot be applied")
        if name not in known:
            choices = ", ".join(rule for rule in known if rule != NEVER_SUPPRESSED)
            raise NolintError(f"{script}:{line}: -- alterflow:nolint names unknown rule {shown(name)} (known: {choices})")
    return Suppression(((line, frozenset(names)),))


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
