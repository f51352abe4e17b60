"""Printing a command's failure as one line on stderr (docs/semantics.md, "The CLI's output and
errors"); result sets are printed by `alterflow.engine.result_text`."""

from __future__ import annotations

import sys

from alterflow.errors import UserError, capped, first_line, internal_error_line, out_of_room, raise_interrupt_behind


def report_failure(exc: Exception) -> int:
    """Print a command's failure as one line on stderr; the exit status (1). A refusal
    (`UserError`) prints its own message; anything else is an internal error, whose line names
    the exception's type and the log file under `$ALTERFLOW_HOME/logs/` that holds its traceback.
    An exception raised while a Ctrl-C or SIGTERM unwinds (Py4J turns the KeyboardInterrupt of a
    call the signal cut into its own error) is that interrupt: it is raised again, for the command
    to report it as one."""
    raise_interrupt_behind(exc)
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
