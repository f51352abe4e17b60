"""A Spark SQL query as a DuckDB query with Spark's answers: FROM, joins, WHERE, GROUP BY, HAVING,
SELECT lists, DISTINCT, ORDER BY, LIMIT, CTEs, subqueries and set operations, over named relations
whose columns carry their Spark types.

The translation resolves every name itself, as Spark's analyzer would: a name it cannot resolve to
exactly one column, a column neither grouped nor aggregated, anything outside the set the rules of
`alterflow.query.expressions` (and of the families it imports) reproduce, raises `NotLocal`, and
Spark runs the query (and words its own error, where there is one). The DuckDB query names its
output columns c0, c1, ...; the Spark names and types travel beside it in `Translated`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from sqlglot import exp

from alterflow.query import spark_refusals
from alterflow.query import sql_types as st
from alterflow.query.expression_core import ExpressionContext, NotLocal, Value, cast, comparable, normalized_zero, ordering
from alterflow.query.expressions import translate
from alterflow.query.sql_types import SqlType


@dataclass(frozen=True)
class RelationColumn:
    name: str
    type: SqlType | None  # None: a column the local engine does not read (LARGEINT)
    ref: str  # its column in the DuckDB relation


@dataclass(frozen=True)
class Relation:
    sql: str  # the DuckDB relation: a registered table, a view, a CTE
    columns: tuple[RelationColumn, ...]
    row_order: str | None = None  # a table's column numbering its rows in the order Spark reads them


@dataclass(frozen=True)
class Translated:
    sql: str  # a DuckDB query whose columns are c0, c1, ...
    names: tuple[str, ...]  # Spark's names of them
    types: tuple[SqlType, ...]


@dataclass(frozen=True)
class _Item:
    """A relation of a FROM clause, under its qualifier."""

    qualifier: str
    alias: str  # its DuckDB alias
    columns: tuple[RelationColumn, ...]
    relation: str = ""  # the named relation it reads (a table, a view, a CTE), if any
    hidden: frozenset[str] = frozenset()  # JOIN USING keys: seen only qualified (t.k, t.*)
    sqls: tuple[str, ...] = ()  # a USING join's merged keys: each column's DuckDB text
    row_order: str | None = None  # Relation.row_order of the table it reads


def _column_sql(item: _Item, index: int) -> str:
    return item.sqls[index] if item.sqls else f'{item.alias}."{item.columns[index].ref}"'


# Clauses of a SELECT the local engine does not run.
_UNSUPPORTED = (
    "laterals",
    "pivots",
    "qualify",
    "sort",
    "cluster",
    "distribute",
    "hint",
    "into",
    "kind",
    "prewhere",
    "connect",
    "match",
    "locks",
    "sample",
    "settings",
    "format",
    "options",
)


def output(index: int) -> str:
    return f'"c{index}"'


class QueryTranslation:
    """Translates the queries of one statement; `relations` are the catalog names it may read."""

    def __init__(self, relations: dict[str, Relation]):
        self.relations = {name.lower(): rel for name, rel in relations.items()}
        self._ids = itertools.count()
        self.used: set[tuple[str, str]] = set()  # (relation, column) pairs the query reads
        # Correlated subqueries: for each subquery being translated, the FROM items of the query
        # around it that its WHERE may reach (None where no outer column may be read), and the
        # columns it read from them.
        self._outer: list[list[_Item] | None] = []
        self._outer_reads: list[list[exp.Column]] = []
        self.ordered: set[str] = set()  # relations whose rows an aggregate reads in Spark's order

    def query(self, node: exp.Expression, ctes: dict[str, Relation] | None = None) -> Translated:
        ctes = dict(ctes or {})
        prefix = ""
        with_ = node.args.get("with_")
        if with_ is not None:
            prefix, ctes = self._with(with_, ctes)
        if isinstance(node, exp.Subquery):
            if node.alias:
                raise NotLocal("an aliased parenthesised query")
            inner = self.query(node.this, ctes)
            return self._finish(node, inner, ctes, prefix)
        if isinstance(node, exp.Select):
            return self._prefixed(prefix, self._select(node, ctes))
        if isinstance(node, exp.Union | exp.Intersect | exp.Except):
            return self._prefixed(prefix, self._set_operation(node, ctes))
        raise NotLocal(f"a {type(node).__name__} query")

    def _unreached(self, node: exp.Expression, ctes: dict[str, Relation]) -> Translated:
        """A query inside another (a derived table, a CTE, a side of a set operation) whose
        WHERE may not read the columns of a query around it (Spark's LATERAL, left to Spark)."""
        self._outer.append(None)
        try:
            return self.query(node, ctes)
        finally:
            self._outer.pop()

    @staticmethod
    def _prefixed(prefix: str, translated: Translated) -> Translated:
        if not prefix:
            return translated
        return Translated(f"{prefix} {translated.sql}", translated.names, translated.types)

    def _with(self, with_: exp.With, ctes: dict[str, Relation]) -> tuple[str, dict[str, Relation]]:
        if with_.args.get("recursive"):
            raise NotLocal("WITH RECURSIVE")
        parts = []
        written = [cte.alias for cte in with_.expressions]
        repeated = sorted({n for n in written if written.count(n) > 1})
        if repeated:  # Spark's parser compares the names as written
            raise spark_refusals.duplicate_cte_names(repeated)
        if len({n.lower() for n in written}) != len(written):
            raise NotLocal("CTE names that differ only in case")
        for cte in with_.expressions:
            inner = self._unreached(cte.this, ctes)
            name = f'"w{next(self._ids)}"'
            parts.append(f"{name} AS ({inner.sql})")
            names = _alias_columns(cte, inner.names)  # WITH t(a, b) AS (...)
            columns = tuple(RelationColumn(n, t, f"c{i}") for i, (n, t) in enumerate(zip(names, inner.types)))
            ctes[cte.alias.lower()] = Relation(name, columns)
        return f"WITH {', '.join(parts)}", ctes

    # -- FROM ------------------------------------------------------------------------------------

    def _relation(self, node: exp.Expression, ctes: dict[str, Relation]) -> tuple[_Item, str]:
        alias = f'"s{next(self._ids)}"'
        if isinstance(node, exp.Values):
            return self._values(node, alias, ctes)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) and node.this.name.lower() == "range":
            return self._range(node, alias)
        if isinstance(node, exp.Table):
            if not isinstance(node.this, exp.Identifier) or node.args.get("joins") or node.args.get("pivots"):
                raise NotLocal("a table function or a pivot")
            if node.args.get("alias") is not None and node.args["alias"].columns:
                raise NotLocal("a table alias with a column list")
            name = node.name.lower()
            relation = ctes.get(name) or self.relations.get(name)
            if relation is None:
                raise NotLocal(f"the relation {node.name}")
            item = _Item((node.alias or node.name).lower(), alias, relation.columns, relation.sql, row_order=relation.row_order)
            return item, relation.sql
        if isinstance(node, exp.Subquery):
            inner = self._unreached(node.this, ctes)  # without an alias, Spark names it itself: no qualifier reaches it
            names = _alias_columns(node, inner.names)
            columns = tuple(RelationColumn(n, t, f"c{i}") for i, (n, t) in enumerate(zip(names, inner.types)))
            return _Item((node.alias or "").lower(), alias, columns), f"({inner.sql})"
        raise NotLocal(f"{type(node).__name__} in FROM")

    def _values(self, node: exp.Values, alias: str, ctes) -> tuple[_Item, str]:
        """An inline table (`VALUES (1, 'a'), (2, NULL) AS t(k, v)`), typed as Spark's
        ResolveInlineTables types it: each column the wider type of its values, without promoting
        numbers to strings (Spark refuses such a table), every value foldable."""
        rows = [row.expressions if isinstance(row, exp.Tuple) else [row] for row in node.expressions]
        width = len(rows[0])
        if any(len(row) != width for row in rows):
            raise NotLocal("inline table rows of different widths (Spark refuses them)")
        context = self._context([], ctes)
        values = [[translate(v, context) for v in row] for row in rows]
        if any(v.aggregate for row in values for v in row):
            raise NotLocal("an aggregate in an inline table")
        types = []
        for column in zip(*values):
            common = st.common_type([v.type for v in column])
            if common is None or common.name == "void":
                raise NotLocal("an inline table column of NULLs only or of values of different types")
            types.append(common)
        names = _alias_columns(node, tuple(f"col{i + 1}" for i in range(width)))
        listed = ", ".join("(" + ", ".join(f"CAST({cast(v, t)} AS {t.duckdb})" for v, t in zip(row, types)) + ")" for row in values)
        targets = ", ".join(output(i) for i in range(width))
        sql = f"(SELECT * FROM (VALUES {listed}) AS v({targets}))"
        columns = tuple(RelationColumn(n, t, f"c{i}") for i, (n, t) in enumerate(zip(names, types)))
        return _Item((node.alias or "").lower(), alias, columns), sql

    def _range(self, node: exp.Table, alias: str) -> tuple[_Item, str]:
        """Spark's `range(end)`, `range(start, end)`, `range(start, end, step)`: one BIGINT column
        `id`, from integer literals (the number of partitions, a fourth argument, is not read)."""
        arguments = node.this.expressions
        if not 1 <= len(arguments) <= 3 or node.args.get("alias") is not None and node.args["alias"].columns:
            raise NotLocal("range() other than of one to three numbers")
        bounds = []
        for argument in arguments:
            sign = -1 if isinstance(argument, exp.Neg) else 1
            number = argument.this if isinstance(argument, exp.Neg) else argument
            if not (isinstance(number, exp.Literal) and not number.is_string and number.this.isdigit()):
                raise NotLocal("range() of something else than integer literals")
            bounds.append(sign * int(number.this))
        start, end, step = ([0] if len(bounds) == 1 else []) + bounds + ([1] if len(bounds) < 3 else [])
        if step == 0 or not all(-(1 << 63) <= b < (1 << 63) for b in (start, end, step)):
            raise NotLocal("range() with a step of 0 or bounds past BIGINT (Spark refuses them)")
        sql = f"(SELECT range AS c0 FROM range(CAST('{start}' AS BIGINT), CAST('{end}' AS BIGINT), CAST('{step}' AS BIGINT)))"
        return _Item((node.alias or "range").lower(), alias, (RelationColumn("id", st.BIGINT, "c0"),)), sql

    def _from(self, node: exp.Select, ctes: dict[str, Relation]) -> tuple[list[_Item], str]:
        from_ = node.args.get("from_")
        if from_ is None:
            if node.args.get("joins"):
                raise NotLocal("joins without FROM")
            return [], ""
        item, sql = self._relation(from_.this, ctes)
        items, text = [item], f"{sql} AS {item.alias}"
        for join in node.args.get("joins") or []:
            items, text = self._join(join, items, text, ctes)
        return items, f" FROM {text}"

    def _join(self, join: exp.Join, items: list[_Item], text: str, ctes) -> tuple[list[_Item], str]:
        method = (join.args.get("method") or "").upper()
        if method not in ("", "NATURAL") or join.args.get("global_") or join.args.get("match_condition"):
            raise NotLocal(f"a {method} join")
        item, sql = self._relation(join.this, ctes)
        side = (join.args.get("side") or "").upper()
        kind = (join.args.get("kind") or "").upper()
        on = join.args.get("on")
        if method == "NATURAL" or join.args.get("using"):
            return self._join_using(join, items, text, item, sql, side, kind)
        both = items + [item]
        if kind in ("SEMI", "ANTI"):
            if side not in ("", "LEFT"):
                raise NotLocal(f"{side} {kind} JOIN")
            keyword, visible = f"{kind} JOIN", items
        elif kind == "CROSS" or (not side and not kind and on is None):
            if on is not None:
                raise NotLocal("CROSS JOIN with ON")
            return both, f"{text} CROSS JOIN {sql} AS {item.alias}"
        elif kind in ("", "INNER", "OUTER"):
            keyword, visible = f"{side or 'INNER'} JOIN".replace("FULL", "FULL OUTER"), both
        else:
            raise NotLocal(f"{kind} JOIN")
        if on is None:
            if kind in ("SEMI", "ANTI") or side:
                raise NotLocal(f"{keyword} without ON")
            return both, f"{text} CROSS JOIN {sql} AS {item.alias}"
        condition = translate(on, self._context(both, {}))
        if condition.type != st.BOOLEAN or condition.aggregate:
            raise NotLocal("a join condition that is not a boolean expression")
        return visible, f"{text} {keyword} {sql} AS {item.alias} ON {condition.sql}"

    def _join_using(self, join: exp.Join, items: list[_Item], text: str, item: _Item, sql: str, side: str, kind: str):
        """JOIN USING (k) and NATURAL JOIN as Spark's analyzer builds them: ON l.k = r.k, the keys
        first in the output (the left's for INNER and LEFT, the right's for RIGHT, coalesce(l.k, r.k)
        in their common type for FULL, named after the left's column), the joined sides' own key
        columns left to qualified references (t.k, t.*)."""
        if join.args.get("on") is not None or kind == "CROSS" or kind not in ("", "INNER", "OUTER", "SEMI", "ANTI"):
            raise NotLocal(f"a {kind or side} join with USING or NATURAL")
        if kind in ("SEMI", "ANTI") and side not in ("", "LEFT"):
            raise NotLocal(f"{side} {kind} JOIN")
        if join.args.get("method"):
            right_names = {c.name.lower() for c in item.columns}
            names = [n for n in _visible_names(items) if n.lower() in right_names]
            if not names:
                raise NotLocal("a NATURAL JOIN without common columns")
        else:
            names = [u.name for u in join.args["using"]]
        if len({n.lower() for n in names}) != len(names):
            raise NotLocal("a column named twice in USING")
        conditions, keys, sqls = [], [], []
        hidden_left: dict[int, set[str]] = {}
        for name in names:
            (li, lc), (_ri, rc) = self._key(name, items), self._key(name, [item])
            left, right = self._column_value(items[li], lc), self._column_value(item, rc)
            hidden_left.setdefault(li, set()).add(name.lower())
            common = comparable(left, right, "JOIN USING")
            conditions.append(f"{cast(left, common)} = {cast(right, common)}")
            if side == "RIGHT":
                keys.append(RelationColumn(right.name, right.type, ""))
                sqls.append(right.sql)
            elif side == "FULL":
                keys.append(RelationColumn(left.name, common, ""))
                sqls.append(f"coalesce({cast(left, common)}, {cast(right, common)})")
            else:
                keys.append(RelationColumn(left.name, left.type, ""))
                sqls.append(left.sql)
        merged = _Item("", "", tuple(keys), sqls=tuple(sqls))
        lefts = [replace(i, hidden=i.hidden | hidden_left[n]) if n in hidden_left else i for n, i in enumerate(items)]
        right_item = replace(item, hidden=item.hidden | {n.lower() for n in names})
        if kind in ("SEMI", "ANTI"):
            keyword, visible = f"{kind} JOIN", [merged] + lefts
        else:
            keyword, visible = f"{side or 'INNER'} JOIN".replace("FULL", "FULL OUTER"), [merged] + lefts + [right_item]
        return visible, f"{text} {keyword} {sql} AS {item.alias} ON {' AND '.join(conditions)}"

    @staticmethod
    def _key(name: str, items: list[_Item]) -> tuple[int, int]:
        """The one column an unqualified `name` reaches among `items` (its item and position)."""
        found = [
            (n, i)
            for n, item in enumerate(items)
            for i, c in enumerate(item.columns)
            if c.name.lower() == name.lower() and c.name.lower() not in item.hidden
        ]
        if len(found) != 1:
            raise NotLocal(f"USING column {name} ({'ambiguous' if found else 'not found'})")
        return found[0]

    def _column_value(self, item: _Item, index: int) -> Value:
        c = item.columns[index]
        if c.type is None:
            raise NotLocal(f"column {c.name} (LARGEINT)")
        if not item.sqls:
            self.used.add((item.relation, c.ref))
        return Value(_column_sql(item, index), c.type, c.name, free=True)

    # -- names -----------------------------------------------------------------------------------

    def _context(
        self,
        items: list[_Item],
        ctes: dict[str, Relation],
        aliases: dict | None = None,
        correlated: bool = False,
        outer: bool = False,
        **flags,
    ) -> ExpressionContext:
        """`correlated`: a subquery here may read these items (its WHERE may); `outer`: a column
        not found among the items may be one of the query around this one (a subquery's WHERE)."""
        return ExpressionContext(
            resolve=lambda column: self._resolve(column, items, aliases or {}, outer),
            subquery=lambda node, kind="scalar": self._subquery(node, ctes, items if correlated else None, kind),
            **flags,
        )

    @staticmethod
    def _found(column: exp.Column, items: list[_Item]) -> list[tuple[_Item, int]]:
        name = column.name.lower()
        qualifier = column.table.lower() if column.table else None
        return [
            (item, i)
            for item in items
            if qualifier is None or item.qualifier == qualifier
            for i, c in enumerate(item.columns)
            if c.name.lower() == name and (qualifier is not None or name not in item.hidden)
        ]

    def _resolve(self, column: exp.Column, items: list[_Item], aliases: dict, outer: bool = False) -> Value:
        if column.args.get("db") or column.args.get("catalog"):
            raise NotLocal("a column qualified by more than a table")
        found = self._found(column, items)
        if len(found) == 1:  # Spark names the column as the query spells it (ID for a column id)
            return replace(self._column_value(*found[0]), name=column.name)
        if not found and not column.table and column.name.lower() in aliases:
            return aliases[column.name.lower()]()
        if not found and outer and self._outer and self._outer[-1] is not None:
            found = self._found(column, self._outer[-1])
            if len(found) == 1:  # a correlated subquery's reference to the query around it
                self._outer_reads[-1].append(column)
                return replace(self._column_value(*found[0]), name=column.name, free=False)
        raise NotLocal(f"column {column.sql('spark')} ({'ambiguous' if found else 'not found'})")

    def _subquery(self, node: exp.Expression, ctes: dict[str, Relation], outer: list[_Item] | None, kind: str) -> tuple[str, list[SqlType]]:
        """A subquery: `kind` is "scalar", "in" or "exists"; `outer` the items its WHERE may read
        (docs/semantics.md, "Queries: two engines": correlated subqueries)."""
        self._outer.append(outer)
        self._outer_reads.append([])
        try:
            inner = self.query(node, ctes)
        finally:
            self._outer.pop()
            reads = self._outer_reads.pop()
        if reads:
            correlated_subquery_check(node, reads, kind)
        if kind != "exists" and any(t.name == "void" for t in inner.types):
            raise NotLocal("a subquery of untyped NULLs")
        return inner.sql, list(inner.types)

    # -- SELECT ----------------------------------------------------------------------------------

    def _select(self, node: exp.Select, ctes: dict[str, Relation]) -> Translated:
        for key in _UNSUPPORTED:
            if node.args.get(key):
                raise NotLocal(f"the {key.upper()} clause")
        node = _named_windows(node)
        distinct = node.args.get("distinct")
        if distinct is not None and distinct.args.get("on") is not None:
            raise NotLocal("DISTINCT ON")
        items, from_sql = self._from(node, ctes)
        plain = self._context(items, ctes, correlated=True, outer=True)
        where = ""
        if node.args.get("where") is not None:
            condition = translate(node.args["where"].this, replace(plain, subquery_position="conjunct"))
            if condition.type != st.BOOLEAN:
                raise NotLocal("a WHERE condition that is not boolean")
            where = f" WHERE {condition.sql}"
        selected = node.expressions
        aliased = {e.alias.lower(): e.this for e in selected if isinstance(e, exp.Alias)}
        grouped, group_sql, grouping, nulled = self._group(node, selected, aliased, items, ctes)
        aggregate_query = bool(node.args.get("group")) or _has_aggregate(node)
        if aggregate_query and any(isinstance(w, exp.Window) for e in selected for w in e.find_all(exp.Window)):
            raise NotLocal("window functions in an aggregate query")
        row_order = self._row_order(items, node.args.get("where"))
        context = self._context(
            items,
            ctes,
            correlated=not aggregate_query,
            aggregates=True,
            windows=not aggregate_query,
            grouped=self._grouped(grouped, nulled),
            grouping=grouping,
            row_order=row_order,
        )
        values, names = self._select_list(selected, items, context)
        if aggregate_query and any(v.free for v in values):
            raise NotLocal("a column neither grouped nor aggregated")
        output_aliases = {n.lower(): (lambda v=v: v) for v, n in zip(values, names)}
        having = ""
        if node.args.get("having") is not None:
            having_context = self._context(
                items, ctes, output_aliases, aggregates=True, grouped=context.grouped, grouping=grouping, row_order=row_order
            )
            condition = translate(node.args["having"].this, having_context)
            if condition.type != st.BOOLEAN or condition.free:
                raise NotLocal("a HAVING condition that is not a boolean over groups")
            having = f" HAVING {condition.sql}"
        if "GROUPING SETS" in group_sql:  # Spark's Expand makes no row of no input: no empty grand total
            having = f"{having} AND count(*) > 0" if having else " HAVING count(*) > 0"
        shown = [normalized_zero(v) for v in values] if distinct else values
        listed = ", ".join(f"{v.sql} AS {output(i)}" for i, v in enumerate(shown))
        order = self._order(node, names, values, items, ctes, context, bool(distinct), aggregate_query)
        sql = f"SELECT {'DISTINCT ' if distinct else ''}{listed}{from_sql}{where}{group_sql}{having}{order}{_limit(node)}"
        return Translated(sql, tuple(names), tuple(v.type for v in values))

    def _row_order(self, items: list[_Item], where: exp.Expression | None):
        """For a FROM clause of one table (no join), a function giving the DuckDB text of its rows'
        order as Spark reads them (and noting that the query needs it); None otherwise, and where
        the WHERE holds an IN (subquery) or EXISTS, which Spark runs as a join that may reorder."""
        if len(items) != 1 or items[0].row_order is None:
            return None
        if where is not None and any(isinstance(n, exp.Exists) or isinstance(n, exp.In) and n.args.get("query") for n in where.walk()):
            return None
        item = items[0]

        def row_order() -> str:
            self.ordered.add(item.relation)
            return f'{item.alias}."{item.row_order}"'

        return row_order

    def _group(self, node: exp.Select, selected, aliased, items, ctes) -> tuple[list[Value], str, tuple[str, ...] | None, frozenset[str]]:
        """The GROUP BY keys (each once, in Spark's order of first appearance), the DuckDB GROUP BY
        clause, for GROUPING SETS/CUBE/ROLLUP the keys' DuckDB text for grouping(), and the keys
        no grouping set holds (`GROUP BY a, b GROUPING SETS (a)`: b is NULL in every row)."""
        group = node.args.get("group")
        if group is None:
            return [], "", None, frozenset()
        if any(group.args.get(k) for k in ("totals", "all")):
            raise NotLocal("GROUP BY ALL or WITH TOTALS")
        plain_aliases = {name: (lambda e=e: translate(e, self._context(items, ctes))) for name, e in aliased.items()}
        keys = _GroupKeys(selected, self._context(items, ctes, plain_aliases))
        plain, factors = [], []
        for expression in group.expressions:
            if isinstance(expression, exp.GroupingSets):  # beside other keys: a product, as CUBE and ROLLUP
                factors.append([keys.members(e) for e in expression.expressions])
            elif isinstance(expression, exp.Cube):
                factors.append(_cube([keys.members(e) for e in expression.expressions]))
            elif isinstance(expression, exp.Rollup):
                factors.append(_rollup([keys.members(e) for e in expression.expressions]))
            else:
                value = keys.key(expression)
                plain.append(value)
                factors.append([[value]])
        trailing = _trailing_sets(group, plain, keys)
        if trailing is not None:
            factors = [trailing]
        grouped: list[Value] = []
        for value in plain + [v for factor in factors for s in factor for v in s]:
            if value.sql not in {g.sql for g in grouped}:
                grouped.append(value)
        plain_only = trailing is None and all(not isinstance(e, exp.GroupingSets | exp.Cube | exp.Rollup) for e in group.expressions)
        if plain_only or all(len(factor) == 1 for factor in factors) and trailing is None:  # a plain GROUP BY
            listed = ", ".join(normalized_zero(g).sql for g in grouped)
            return grouped, f" GROUP BY {listed}" if listed else "", None, frozenset()
        sets = [[]]
        for factor in factors:
            sets = [s + t for s in sets for t in factor]
        listed = ", ".join(f"({', '.join(normalized_zero(v).sql for v in s)})" for s in sets)
        # Spark does not find a computed key (g % 2) again in grouping() outside the SELECT list: only
        # keys that are columns are offered to grouping()/grouping_id()
        grouping = None if keys.computed else tuple(normalized_zero(g).sql for g in grouped)
        in_sets = {v.sql for s in sets for v in s}
        if any(g.sql not in in_sets for g in grouped) and any(node.find_all(exp.Grouping, exp.GroupingId)):
            raise NotLocal("grouping()/grouping_id() beside a GROUP BY key that no grouping set holds")
        return grouped, f" GROUP BY GROUPING SETS ({listed})", grouping, frozenset(g.sql for g in grouped) - in_sets

    @staticmethod
    def _grouped(grouped: list[Value], nulled: frozenset[str]) -> dict[str, Value]:
        """GROUP BY keys by their text, each as the group's value (-0.0 grouped with 0.0); NULL for
        a key that no grouping set holds."""
        return {g.sql: Value(f"CAST(NULL AS {g.type.duckdb})", g.type, g.name) if g.sql in nulled else normalized_zero(g) for g in grouped}

    def _select_list(self, selected, items: list[_Item], context: ExpressionContext) -> tuple[list[Value], list[str]]:
        values, names = [], []
        for expression in selected:
            if isinstance(expression, exp.Star) or isinstance(expression, exp.Column) and isinstance(expression.this, exp.Star):
                star = expression if isinstance(expression, exp.Star) else expression.this
                if any(star.args.values()):
                    raise NotLocal("* EXCEPT / REPLACE")
                qualifier = expression.table.lower() if isinstance(expression, exp.Column) and expression.table else None
                chosen = [i for i in items if qualifier is None or i.qualifier == qualifier]
                if not chosen:
                    raise NotLocal("a * without a relation")
                for item in chosen:
                    for i, c in enumerate(item.columns):
                        if qualifier is None and c.name.lower() in item.hidden:
                            continue  # a USING key: the merged one stands first
                        value = self._column_value(item, i)  # by position: names may repeat
                        if context.grouped and value.sql in context.grouped:
                            value = replace(context.grouped[value.sql], name=value.name, free=False)
                        values.append(value)
                        names.append(c.name)
                continue
            if isinstance(expression, exp.Alias):
                value = translate(expression.this, context)
                name = expression.alias
            else:
                value = translate(expression, context)
                name = value.name
                if isinstance(expression, exp.Cast) and isinstance(expression.this, exp.Column):
                    name = value.name and translate(expression.this, context).name  # Spark names it after the column
                if name is None:
                    raise NotLocal(f"an expression without a name: {expression.sql('spark')[:60]} (add AS name)")
            if value.type.name == "void":
                raise NotLocal("a column of untyped NULLs")
            values.append(value)
            names.append(name)
        return values, names

    def _order(self, node, names, values, items, ctes, context, distinct: bool, aggregate_query: bool) -> str:
        order = node.args.get("order")
        if order is None:
            return ""
        by_name: dict[str, list[int]] = {}
        for i, n in enumerate(names):
            by_name.setdefault(n.lower(), []).append(i)
        keys = []
        for key in order.expressions:
            this = key.this
            position = _position_written(this)
            if position is not None:
                if not 1 <= position <= len(values):
                    raise spark_refusals.order_by_position(position, len(values), _where(this))
                keys.append(ordering(key, Value(output(position - 1), values[position - 1].type, None)))
                continue
            if isinstance(this, exp.Column) and not this.table and this.name.lower() in by_name:
                matches = by_name[this.name.lower()]
                if len(matches) > 1:
                    raise NotLocal("ORDER BY an ambiguous output name")
                keys.append(ordering(key, Value(output(matches[0]), values[matches[0]].type, None)))
                continue
            if distinct:
                raise NotLocal("SELECT DISTINCT ordered by an expression")
            value = translate(this, context)
            if aggregate_query and value.free:
                raise NotLocal("ORDER BY a column neither grouped nor aggregated")
            keys.append(ordering(key, value))
        return f" ORDER BY {', '.join(keys)}"

    # -- set operations --------------------------------------------------------------------------

    def _set_operation(self, node: exp.Union | exp.Intersect | exp.Except, ctes) -> Translated:
        left = self._unreached(node.left, ctes)
        right = self._unreached(node.right, ctes)
        if len(left.types) != len(right.types):
            raise NotLocal("set operation sides of different widths")
        types = []
        for a, b in zip(left.types, right.types):
            common = st.common_type([a, b])
            if common is None or common.name == "void":
                raise NotLocal(f"set operation over {a} and {b}")
            types.append(common)
        keyword = {exp.Union: "UNION", exp.Intersect: "INTERSECT", exp.Except: "EXCEPT"}[type(node)]
        if not node.args.get("distinct"):
            keyword += " ALL"
        sides = [_recast(side, types, bool(node.args.get("distinct"))) for side in (left, right)]
        combined = Translated(f"SELECT * FROM (({sides[0]}) {keyword} ({sides[1]}))", left.names, tuple(types))
        return self._finish(node, combined, ctes, "")

    def _finish(self, node, inner: Translated, ctes, prefix: str) -> Translated:
        """ORDER BY and LIMIT of a set operation or a parenthesised query: over its outputs only."""
        order, limit = node.args.get("order"), _limit(node)
        if order is None and not limit:
            return self._prefixed(prefix, inner)
        values = [Value(output(i), t, n) for i, (n, t) in enumerate(zip(inner.names, inner.types))]
        items = [_Item("", '"u"', tuple(RelationColumn(n, t, f"c{i}") for i, (n, t) in enumerate(zip(inner.names, inner.types))))]
        context = self._context(items, ctes)
        keys = self._order(node, list(inner.names), values, items, ctes, context, True, False) if order is not None else ""
        listed = ", ".join(f'"u".{output(i)} AS {output(i)}' for i in range(len(inner.types)))
        sql = f'SELECT {listed} FROM ({inner.sql}) AS "u"{keys}{limit}'
        return self._prefixed(prefix, Translated(sql, inner.names, inner.types))


class _GroupKeys:
    """The keys of one GROUP BY: positions read from the SELECT list, each translated once."""

    def __init__(self, selected, context: ExpressionContext):
        self.selected, self.context = selected, context
        self.computed: set[str] = set()  # keys that are not plain columns

    def key(self, expression: exp.Expression, in_set: bool = False) -> Value:
        position = _position_written(expression)
        if position is not None:
            if in_set and not 1 <= position <= len(self.selected):
                raise NotLocal("a position outside the SELECT list in GROUPING SETS, CUBE or ROLLUP")
            if any(_is_star(e) for e in self.selected):
                raise NotLocal("a GROUP BY position beside a * in the SELECT list (Spark refuses it)")
            if not 1 <= position <= len(self.selected):
                raise spark_refusals.group_by_position(position, len(self.selected), _where(expression))
            target = self.selected[position - 1]
            expression = target.this if isinstance(target, exp.Alias) else target
        if isinstance(expression, exp.GroupingSets | exp.Cube | exp.Rollup):
            raise NotLocal("GROUPING SETS, CUBE or ROLLUP nested in another")
        value = translate(expression, self.context)
        if value.aggregate or value.type.name == "void":
            raise NotLocal("GROUP BY an aggregate or a NULL")
        if not isinstance(expression, exp.Column):
            self.computed.add(value.sql)
        return value

    def members(self, expression: exp.Expression) -> list[Value]:
        """A unit of a grouping set: (a, b), (a) or a."""
        if isinstance(expression, exp.Tuple):
            return [self.key(e, in_set=True) for e in expression.expressions]
        return [self.key(expression.this if isinstance(expression, exp.Paren) else expression, in_set=True)]


def _position_written(node: exp.Expression) -> int | None:
    """The position an ORDER BY or GROUP BY key names, as Spark reads it: an INT literal, `-1`
    included (Spark's parser reads the integer literal -1, a position out of range, where sqlglot
    reads a negation). None for anything else; NotLocal for `-0` and an integer past INT."""
    sign, number = (-1, node.this) if isinstance(node, exp.Neg) else (1, node)
    if not (isinstance(number, exp.Literal) and not number.is_string and number.this.isdigit()):
        return None
    position = sign * int(number.this)
    if not spark_refusals.position_literal(position) or sign < 0 and position == 0:
        raise NotLocal("an ORDER BY or GROUP BY key of -0 or an integer past INT")
    return position


def _where(node: exp.Expression) -> tuple[int, int]:
    """The line and position Spark's analyzer gives for a position literal (its `-`, if negative)."""
    literal = node.this if isinstance(node, exp.Neg) else node
    start, text = literal.meta.get("start"), node.root().meta.get("sql")
    if not isinstance(start, int) or text is None:
        raise NotLocal("a position the local engine cannot place in the query's text")
    if literal is not node:
        start = text.rfind("-", 0, start)
    return spark_refusals.place(text, start)


def _is_star(node: exp.Expression) -> bool:
    return isinstance(node, exp.Star) or isinstance(node, exp.Column) and isinstance(node.this, exp.Star)


def _rollup(units: list[list[Value]]) -> list[list[Value]]:
    if any(not unit for unit in units):
        raise spark_refusals.empty_grouping_set("ROLLUP")
    return [[v for unit in units[:n] for v in unit] for n in range(len(units), -1, -1)]


def _cube(units: list[list[Value]]) -> list[list[Value]]:
    if any(not unit for unit in units):
        raise spark_refusals.empty_grouping_set("CUBE")
    sets = [[]]
    for unit in units:
        sets = [s + unit for s in sets] + sets
    return sets


def _trailing_sets(group: exp.Group, plain: list[Value], keys: _GroupKeys) -> list[list[Value]] | None:
    """The sets of `GROUP BY a, b WITH CUBE | WITH ROLLUP | GROUPING SETS (...)` (None: none)."""
    written = [group.args.get(k) for k in ("grouping_sets", "cube", "rollup")]
    if sum(bool(w) for w in written) > 1 or any(w and len(w) > 1 for w in written):
        raise NotLocal("more than one GROUPING SETS, WITH CUBE or WITH ROLLUP")
    sets_after, cube_after, rollup_after = written
    if not (sets_after or cube_after or rollup_after):
        return None
    if len(plain) != len(group.expressions) or not sets_after and (cube_after or rollup_after)[0].expressions:
        raise NotLocal("GROUP BY ... WITH CUBE/ROLLUP or GROUPING SETS over more than plain expressions")
    if not sets_after:
        return (_cube if cube_after else _rollup)([[v] for v in plain])
    sets = [keys.members(e) for e in sets_after[0].expressions]  # GROUP BY a, b GROUPING SETS (...)
    known = {v.sql for v in plain}
    if any(v.sql not in known for s in sets for v in s):
        raise NotLocal("a grouping set over an expression the GROUP BY does not list")
    return sets


def _alias_columns(node: exp.Expression, names: tuple[str, ...]) -> tuple[str, ...]:
    """The column names a FROM item's alias gives (`AS t(a, b)`), or its own."""
    alias = node.args.get("alias")
    if alias is None or not alias.columns:
        return names
    if len(alias.columns) != len(names):
        raise NotLocal("an alias naming more or fewer columns than the relation has (Spark refuses it)")
    return tuple(c.name for c in alias.columns)


def _recast(side: Translated, types: list[SqlType], distinct: bool) -> str:
    def column(i: int, t: SqlType, to: SqlType) -> str:
        value = Value(cast(Value(output(i), t, None), to), to, None)
        return (normalized_zero(value) if distinct else value).sql

    listed = ", ".join(f"{column(i, t, to)} AS {output(i)}" for i, (t, to) in enumerate(zip(side.types, types)))
    return f"SELECT {listed} FROM ({side.sql})"


def _visible_names(items: list[_Item]) -> list[str]:
    """The names an unqualified * of `items` shows, in order (NATURAL JOIN's left side)."""
    return [c.name for item in items for c in item.columns if c.name.lower() not in item.hidden]


_SPEC_PARTS = ("partition_by", "order", "spec")


def _named_windows(node: exp.Select) -> exp.Select:
    """The query with `OVER w` written out from its `WINDOW w AS (...)` clause, as Spark's
    WindowsSubstitution does; a window defined as another's name is that window."""
    definitions = node.args.get("windows")
    if not definitions:
        return node
    specs: dict[str, exp.Window] = {}
    for definition in definitions:
        name = definition.this.name.lower()
        if name in specs:
            raise NotLocal("a window defined twice")
        if definition.args.get("alias") is not None:
            ref = definition.args["alias"].name.lower()
            if ref not in specs or any(definition.args.get(k) for k in _SPEC_PARTS):
                raise NotLocal("a window defined over another with more clauses")
            specs[name] = specs[ref]
        else:
            specs[name] = definition
    node = node.copy()
    node.set("windows", None)
    for window in list(node.find_all(exp.Window)):
        if window.args.get("alias") is None or window.find_ancestor(exp.Select) is not node:
            continue
        ref = window.args["alias"].name.lower()
        if ref not in specs or any(window.args.get(k) for k in _SPEC_PARTS):
            raise NotLocal(f"the window {ref} (not defined, or refined in OVER)")
        for key in _SPEC_PARTS:
            part = specs[ref].args.get(key)
            window.set(key, [e.copy() for e in part] if isinstance(part, list) else part.copy() if part is not None else None)
        window.set("alias", None)
    return node


def _in_equality_conjunct(column: exp.Column, reads: list[exp.Column]) -> bool:
    """`column` is one side of an `=` among the AND-ed conditions of its WHERE, whose other side
    reads nothing of the query around."""
    side, parent = column, column.parent
    while isinstance(parent, exp.Paren):
        side, parent = parent, parent.parent
    if not isinstance(parent, exp.EQ):
        return False
    other = parent.expression if parent.this is side else parent.this
    if any(node is read for node in other.find_all(exp.Column) for read in reads):
        return False
    node = parent.parent
    while isinstance(node, exp.And | exp.Paren):
        node = node.parent
    return isinstance(node, exp.Where)


def correlated_subquery_check(node: exp.Expression, reads: list[exp.Column], kind: str) -> None:
    """The correlated subqueries the local engine runs, as Spark runs them: EXISTS and IN over a
    plain SELECT whose WHERE reads the query around it; a scalar subquery that aggregates without
    GROUP BY (one row per outer row: Spark refuses one that does not aggregate), correlated
    through equalities only. Spark's other forms (correlated aggregates under EXISTS, LIMIT,
    several levels) are Spark's to run or refuse."""
    select = node.unnest() if isinstance(node, exp.Subquery) else node
    if not isinstance(select, exp.Select) or any(select.args.get(k) for k in ("group", "having", "limit", "offset", "order")):
        raise NotLocal("a correlated subquery other than a plain SELECT ... WHERE")
    if any(select.find_all(exp.Window)):
        raise NotLocal("a correlated subquery with window functions")
    aggregated = _has_aggregate(select)
    if kind == "scalar":
        if not aggregated:
            raise NotLocal("a correlated scalar subquery that does not aggregate (Spark refuses it)")
        if not all(_in_equality_conjunct(c, reads) for c in reads):
            raise NotLocal("a correlated scalar subquery correlated otherwise than by equalities")
    elif aggregated:
        raise NotLocal(f"a correlated {kind.upper()} subquery that aggregates")


def _has_aggregate(node: exp.Select) -> bool:
    """Whether the SELECT list, HAVING or ORDER BY calls an aggregate outside a window (and
    outside a subquery, which is its own query)."""
    for part in list(node.expressions) + [node.args.get("having"), node.args.get("order")]:
        if part is None:
            continue
        for found in part.find_all(exp.AggFunc):
            if found.find_ancestor(exp.Window, exp.Select) is node:
                return True
    return False


def _limit(node: exp.Expression) -> str:
    text = ""
    limit = node.args.get("limit")
    if limit is not None:
        value = limit.args.get("expression")
        if not (isinstance(value, exp.Literal) and value.this.isdigit()) or limit.args.get("offset"):
            raise NotLocal("a LIMIT other than a number")
        text += f" LIMIT {int(value.this)}"
    offset = node.args.get("offset")
    if offset is not None:
        value = offset.args.get("expression")
        if not (isinstance(value, exp.Literal) and value.this.isdigit()):
            raise NotLocal("an OFFSET other than a number")
        text += f" OFFSET {int(value.this)}"
    return text
