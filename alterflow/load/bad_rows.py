"""`BadRows`, apart from the Arrow code that raises it: whoever catches a refused load (the session,
the CLI) need not import pyarrow to name it."""

from __future__ import annotations

from alterflow.errors import UserError

__all__ = ["BadRows"]


class BadRows(UserError):
    """Rows that cannot be written to the table; nothing was written."""
