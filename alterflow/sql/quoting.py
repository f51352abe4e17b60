"""A string as a SQL literal, quotes doubled: the form alterflow's statement parser and DuckDB
read back as the same text (not Spark SQL, which reads 'a''b' as two literals; see
`read/evolved_read._sql_string` for its form)."""

from __future__ import annotations


def quote_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
