"""Which columns of each table a view's query uses, so ALTERs cannot drop or retype them.

Deliberately conservative: a column counts as used when the query names it anywhere (in any
clause, qualified or not), and every column of a table counts when the query selects `*` or
`t.*`. A false "used" only blocks a DROP that could have been allowed; a missed use would break
the view, so we never guess in that direction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from alterflow.sql.names import name_key


class NamedColumn(Protocol):
    """What is read of a column here (a `catalog.schema.Column`: the SQL layer sits below it)."""

    id: int
    name: str


class ColumnsOf(Protocol):
    columns: Sequence[NamedColumn]


def columns_used(query: str, version: ColumnsOf) -> tuple[int, ...]:
    import sqlglot  # here, not at the top: the session imports this module for every statement
    from sqlglot import exp

    tree = sqlglot.parse_one(query, read="spark")
    named = {name_key(col.name) for col in tree.find_all(exp.Column) if not isinstance(col.this, exp.Star)}
    star = any(isinstance(col.this, exp.Star) for col in tree.find_all(exp.Column)) or any(
        isinstance(e, exp.Star) for select in tree.find_all(exp.Select) for e in select.expressions
    )
    return tuple(c.id for c in version.columns if star or name_key(c.name) in named)
