"""A result set as text: a table for people (`to_table`), one JSON line for programs (`to_json`);
the CLI, the Airflow tasks' logs and the examples print the same (docs/semantics.md, "The CLI's
output and errors")."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math

from alterflow.errors import escaped
from alterflow.results import ResultSet


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
    the C1 controls such as CSI 0x9b, line and paragraph separators) is written as a `\\u` escape
    too (`\\u009b`, `\\u2028`), which a JSON reader reads back as the same character."""
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
