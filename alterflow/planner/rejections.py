"""Errors raised by the planner. Each message is one line naming the table, the column and the rule."""

from __future__ import annotations

from alterflow.errors import UserError, escaped

__all__ = ["AlterRejected", "CreateTableRejected", "one_line"]


def one_line(message: str) -> str:
    """Messages are one line: user text (literals, comments) may hold line breaks and other
    control characters, which are escaped (`\\n`, `\\x1b`)."""
    return escaped(message.replace("\r\n", "\n"))


class AlterRejected(UserError):
    """An ALTER TABLE statement (or one of its clauses) breaks a rule; nothing changes.

    Example: ``ALTER TABLE t: cannot drop column k: it is a primary-key column``.
    """


class CreateTableRejected(UserError):
    """A CREATE TABLE statement breaks a rule; nothing is created."""
