"""What a statement returns: a `ResultSet` (columns and rows) or `Done` (a status line). Apart from
the session, so that printing them (`alterflow.engine.result_text`) imports nothing else."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Done", "Result", "ResultSet"]


@dataclass(frozen=True)
class ResultSet:
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    # A query's column types as Spark names them (int, decimal(10,2), timestamp_ntz...), whichever
    # engine ran it; None for other statements.
    types: tuple[str, ...] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Done:
    """A statement without a result set, with a short status for humans."""

    message: str


Result = ResultSet | Done
