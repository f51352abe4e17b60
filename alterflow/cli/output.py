"""Printing result sets (text tables for people, JSON lines for programs) and failures (one line
on stderr) for the `alterflow` commands (docs/semantics.md, "The CLI's output and errors")."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import sys

from alterflow.errors import UserError, capped, escaped, first_line, internal_error_line, out_of_room
from alterflow.results import ResultSet


def report_failure(exc: Exception) -> int:
    """Print a command's failure as one line on stderr; the exit status (1). A refusal
    (`UserError`) prints its own message; anything else is an internal error, whose line names
    the exception's type and the log file under `$ALTERFLOW_HOME/logs/` that holds its traceback.
    An exception raised while a Ctrl-C or SIGTERM unwinds (Py4J turns the KeyboardInterrupt of a
    call the signal cut into its own error) is that interrupt: it is raised again, for the command
    to report it as one."""
    interrupt = _interrupt_behind(exc)
    if interrupt is not None:
        raise interrupt
    if isinstance(exc, UserError):
        line = first_line(exc)  # at most MAX_LINE characters, escaped
    elif (reason := out_of_room(exc)) is not None:  # where it writes, not a bug: no log (it could not be written)
        line = capped(
            f"{reason}: the command stopped; what it committed before stays and nothing is half visible. Free space and run it again"
        )
    else:
        from alterflow.settings import home_from_env

        line = internal_error_line(exc, home_from_env())
    print(f"error: {line}", file=sys.stderr)
    return 1


def _interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt in the chain of exceptions `exc` was raised while handling, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def json_value(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep="T")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return str(value)


def to_json(result: ResultSet) -> str:
    """One JSON line. JSON escapes the C0 controls itself; what else a terminal would act on (DEL,
    the C1 controls such as CSI 0x9b, line and paragraph separators) is written as `\\uXXXX` too,
    which a JSON reader reads back as the same character."""
    line = json.dumps(
        {"columns": list(result.columns), "rows": [[json_value(v) for v in row] for row in result.rows]},
        ensure_ascii=False,
    )
    if line.isprintable():  # the usual case: one scan of the line
        return line
    # Outside strings JSON has only printable characters, so every one left is inside a string.
    return "".join(ch if ch.isprintable() else json.dumps(ch)[1:-1] for ch in line)


def text_value(value) -> str:
    """A value as a text table's cell: one line, with every character a terminal would act on
    (ESC, BEL, CR, LF, DEL, the C1 controls, other non-printable ones) escaped as `\\x1b`,
    `\\n`, `\\u2028`, so a stored value can neither break the table nor drive the terminal."""
    if isinstance(value, str):
        return value if value.isprintable() else escaped(value)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    text = str(value)
    return text if text.isprintable() else escaped(text)


def to_table(result: ResultSet) -> str:
    cells = [[text_value(v) for v in row] for row in result.rows]
    columns = [text_value(c) for c in result.columns]
    widths = [len(c) for c in columns]
    for row in cells:
        widths = [max(w, len(v)) for w, v in zip(widths, row)]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(values):
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths)) + " |"

    out = [rule, line(columns), rule, *(line(r) for r in cells), rule]
    out.append(f"{len(cells)} row{'s' if len(cells) != 1 else ''}")
    return "\n".join(out)
