"""`BadRows`, apart from the Arrow code that raises it: whoever catches a refused load (the session,
the CLI) need not import pyarrow to name it."""

from __future__ import annotations

from alterflow.errors import UserError, out_of_room

__all__ = ["BadRows", "LoadAborted", "aborted_for_room"]


class BadRows(UserError):
    """Rows that cannot be written to the table; nothing was written."""


class LoadAborted(UserError):
    """A load that could not write where it writes (a full disk, a read-only file system): its
    transaction was aborted, nothing of it is visible, and GC deletes its files."""


def aborted_for_room(exc: BaseException, table: str) -> LoadAborted | None:
    """The one line for a load that `exc` (a full disk, a read-only file system) stopped, None
    for any other error."""
    reason = out_of_room(exc)
    if reason is None:
        return None
    return LoadAborted(f"load into {table}: {reason}: the load was aborted and nothing of it is visible; `alterflow gc` deletes its files")
