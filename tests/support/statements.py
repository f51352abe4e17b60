"""Running SQL through an embedded alterflow `Session` in tests."""

from __future__ import annotations

from alterflow.engine.session import ResultSet, Session


def sql(session: Session, text: str):
    """Run the statements of `text`; the last statement's rows (a tuple of tuples) or its Done message."""
    results = list(session.run(text))
    last = results[-1]
    return last.rows if isinstance(last, ResultSet) else last.message


def versions(session: Session, table: str) -> list[int]:
    """The table's schema versions, as SHOW SCHEMA VERSIONS lists them."""
    return [r[0] for r in sql(session, f"SHOW SCHEMA VERSIONS FROM {table}")]
