"""The one error hierarchy every layer raises from (the catalog, the planner, the store, the
workflow steps, the CLI, the Airflow tasks).

- `AlterflowError` is the root of every error alterflow raises on purpose.
- `UserError` is a refusal the SPEC describes: bad SQL, a rejected plan, a bad value, an unknown
  table, a job in the wrong state, bad run conf. Its message is the one line the user sees, and
  nothing was changed. The CLI prints it as `error: <message>`; an Airflow task fails without
  retrying.
- Anything else that escapes (a `KeyError`, a lost database connection) is an internal error: the
  CLI prints `error: internal error: <type>: <message> (details in <log file>)` and writes the
  traceback under `$ALTERFLOW_HOME/logs/` (`internal_error_line`); an Airflow task retries.

This module imports nothing of alterflow: every package may import it.
"""

from __future__ import annotations

import os
import pathlib
import traceback
from datetime import UTC, datetime

__all__ = ["AlterflowError", "UserError", "first_line", "internal_error_line", "MAX_NESTING"]

# Statements nested deeper than this many parentheses are refused in one line: sqlglot parses each
# level recursively, about 20 Python frames a level, and Python's default limit is 1,000 frames.
MAX_NESTING = 32


class AlterflowError(Exception):
    """Root of every error alterflow raises on purpose."""


class UserError(AlterflowError):
    """A refusal the user can act on; the message is one line and nothing was changed."""


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an error's message (its type's name if it has none)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


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
    return f"internal error: {type(exc).__name__}: {first_line(exc)} ({where})"
