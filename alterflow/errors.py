"""The one error hierarchy every layer raises from (the catalog, the planner, the store, the
workflow steps, the CLI, the Airflow tasks).

- `AlterflowError` is the root of every error alterflow raises on purpose.
- `UserError` is a refusal docs/semantics.md describes: bad SQL, a rejected plan, a bad value, an unknown
  table, a job in the wrong state, bad run conf. Its message is the one line the user sees, and
  nothing was changed. The CLI prints it as `error: <message>`; an Airflow task fails without
  retrying.
- A full disk, an exceeded quota or a read-only file system where alterflow writes (`out_of_room`)
  is no bug either: the work that met it rolls back (a load aborts, a catalog transaction rolls
  back), and the CLI prints one line without a log.
- Anything else that escapes (a `KeyError`, a lost database connection) is an internal error: the
  CLI prints `error: internal error: <type>: <message> (details in <log file>)` and writes the
  traceback under `$ALTERFLOW_HOME/logs/` (`internal_error_line`); an Airflow task retries.

This module imports nothing of alterflow: every package may import it.
"""

from __future__ import annotations

import errno
import os
import pathlib
import re
import traceback
from datetime import UTC, datetime

__all__ = [
    "AlterflowError",
    "UserError",
    "first_line",
    "internal_error_line",
    "escaped",
    "shown",
    "shown_path",
    "capped",
    "out_of_room",
    "MAX_NESTING",
    "MAX_OPERATIONS",
    "MAX_LINE",
    "MAX_PATH",
    "MAX_SHOWN",
]

# Statements nested deeper than this many parentheses are refused in one line: sqlglot parses each
# level recursively, about 20 Python frames a level, and Python's default limit is 1,000 frames.
MAX_NESTING = 32
# Statements with more operators than this (`1+1+...`, `a AND a AND ...`, nested CASE and calls) are
# refused in one line before sqlglot, Spark or the planner sees them: each of them recurses per
# operation somewhere (sqlglot's generator, Spark's analyzer), and no real statement needs more.
MAX_OPERATIONS = 500

# Every error line the CLI prints (after `error: `) and every API `detail` is at most this long; a
# name or value quoted in a message is shortened to MAX_SHOWN characters with its length given.
MAX_LINE = 300
MAX_SHOWN = 60
MAX_PATH = 100  # a warehouse's path or URI in a message (`shown_path`)


class AlterflowError(Exception):
    """Root of every error alterflow raises on purpose."""


class UserError(AlterflowError):
    """A refusal the user can act on; the message is one line and nothing was changed."""


def escaped(text: str) -> str:
    """`text` with every character that is not printable (control characters such as ESC, line
    breaks, tabs, other Unicode format or separator characters) written as a Python escape
    (`\\x1b`, `\\n`, `\\u2028`), so no message can drive a terminal or break a line."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def shown(value: object, limit: int = MAX_SHOWN, quote: str = "'") -> str:
    """A name or value as a message quotes it: in quotes, escaped, and when longer than `limit`
    characters shortened to its start with its length given (`'aaaa…' (100000 characters)`)."""
    try:
        text = value if isinstance(value, str) else str(value)
    except ValueError:  # an integer of more than 4,300 digits: Python will not write it
        return f"an integer of {value.bit_length()} bits"
    if len(text) <= limit:
        return f"{quote}{escaped(text)}{quote}"
    return f"{quote}{escaped(text[:limit])}…{quote} ({len(text)} characters)"


def shown_path(path: object, limit: int = MAX_PATH) -> str:
    """A path or URI as a message names it (unquoted, escaped): whole up to `limit` characters,
    else its start and its end around `…`, so the line keeps room for what to do and the last
    folders' names stay."""
    text = escaped(str(path))
    if len(text) <= limit or limit < 3:
        return text
    start = limit // 3
    return text[:start] + "…" + text[-(limit - start - 1) :]


def capped(line: str, limit: int = MAX_LINE) -> str:
    """One line, escaped, and at most `limit` characters: a longer one keeps its start (what
    failed) and its end (what to do: messages end with the remedy), cut in between, and says it
    was shortened."""
    line = escaped(line)
    if len(line) <= limit:
        return line
    note = f" (shortened from {len(line)} characters)"
    room = max(limit - len(note) - 1, 0)  # 1: the "…" where the middle was
    end = room // 3
    return line[: room - end] + "…" + (line[-end:] if end else "") + note


_OUT_OF_ROOM = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded", errno.EROFS: "read-only file system"}


def out_of_room(exc: BaseException) -> str | None:
    """When `exc`, or an error it wraps or was raised from, is a full disk, an exceeded quota or a
    read-only file system (an OSError's errno; Arrow's OSError carries it too): those words, with
    the file when the error names one. Not a bug of alterflow's but of where it writes: a
    command prints it as one line, with no log (which could not be written either)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        error = pending.pop()
        if error is None or id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in _OUT_OF_ROOM:
            where = f" ({shown(error.filename, 120)})" if isinstance(error.filename, str) else ""
            return _OUT_OF_ROOM[error.errno] + where
        if type(error).__name__ == "Py4JJavaError":  # Spark's writers: the JVM's IOException, in its text
            text = str(error)
            for words in ("No space left on device", "Disk quota exceeded", "Read-only file system"):
                if words in text:
                    return words.lower()
        pending += [error.__context__, error.__cause__, getattr(error, "orig", None)]
    return None


# Py4J's first line names the JVM call ("An error occurred while calling o158.collectToPython."); the
# next one is the Java exception, class first: the message is after the class.
_PY4J_CALL = re.compile(r"An error occurred while calling \S+")
_JAVA_CLASS = re.compile(r"^:?\s*(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error):\s*")


def first_line(exc: BaseException, limit: int = MAX_LINE) -> str:
    """The first non-empty line of an error's message (its type's name if it has none), escaped
    and capped at `limit` characters (see `capped`). Of an error raised in Spark's JVM, the Java
    exception's message."""
    lines = [line for line in re.split(r"\r\n|\r|\n", str(exc).strip()) if line.strip()]
    if len(lines) > 1 and _PY4J_CALL.match(lines[0].strip()):
        lines = [_JAVA_CLASS.sub("", lines[1].strip()) or lines[0]]
    return capped(lines[0].strip() if lines else type(exc).__name__, limit)


def internal_error_line(exc: BaseException, home: pathlib.Path) -> str:
    """Write `exc`'s traceback to a new file under `home/logs/` and return the line the user sees
    (without the `error: ` prefix). If the log cannot be written, the line says so instead."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    path = home / "logs" / f"internal-error-{stamp}-{os.getpid()}.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(traceback.format_exception(exc)))
        where = f"details in {path}"
    except OSError as log_error:
        where = f"no details: cannot write {path}: {log_error.strerror}"
    # The message is capped at half a line, so the log's path (which the user needs) is never cut.
    return f"internal error: {type(exc).__name__}: {first_line(exc, MAX_LINE // 2)} ({escaped(where)})"


def interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt (a Ctrl-C, or the CLI's SIGTERM) in the chain of exceptions `exc` was
    raised while handling, if any: a database driver or Py4J turns the interrupt of a call the
    signal cut into an error of its own (psycopg cancels the query and raises QueryCanceled), which
    is that interrupt, not a failure of the work."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def raise_interrupt_behind(exc: BaseException) -> None:
    """Raise the KeyboardInterrupt behind `exc` (`interrupt_behind`), if there is one."""
    if (interrupt := interrupt_behind(exc)) is not None:
        raise interrupt
