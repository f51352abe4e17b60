"""What a statement returns: a `ResultSet` (columns and rows) or `Done` (a status line). Apart from
the session, so that printing them (`alterflow.output`) imports nothing else."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Done", "Result", "ResultSet"]


@dataclass(frozen=True)
class ResultSet:
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]


@dataclass(frozen=True)
class Done:
    """A statement without a result set, with a short status for humans."""

    message: str


Result = ResultSet | Done
