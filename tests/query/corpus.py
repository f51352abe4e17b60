"""The differential corpus: tables built to exercise Spark's semantics (NULLs everywhere, extreme
values, many schema versions, a pinned view, merge-on-read), and a seeded generator of queries
over them. `tests/query/test_differential.py` runs each query on both engines.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# -- tables --------------------------------------------------------------------------------------

NUMS = """CREATE TABLE nums (
    id INT NOT NULL, g INT, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE,
    dc DECIMAL(10,2), dw DECIMAL(30,6), s STRING, vc VARCHAR(12), dt DATE, ts DATETIME, b BOOLEAN)"""

_NUM_ROWS = [
    "(1, 1, 1, 10, 100, 1000, 1.5, 2.25, 12.34, 123456789.123456, 'abc', 'x', DATE '2020-01-01', TIMESTAMP '2020-01-01 10:00:00', TRUE)",
    "(2, 1, -128, -32768, -2147483648, -9223372036854775808, -1.0, -0.0, -99999999.99, -999999999999999999999999.999999, '', 'y', DATE '0001-01-01', TIMESTAMP '0001-01-01 00:00:00', FALSE)",
    "(3, 2, 127, 32767, 2147483647, 9223372036854775807, 3.4e38, 1.7976931348623157e308, 99999999.99, 999999999999999999999999.999999, 'ABC', 'z', DATE '9999-12-31', TIMESTAMP '9999-12-31 23:59:59.999999', TRUE)",
    "(4, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(5, NULL, 0, 0, 0, 0, 0.0, 0.0, 0.00, 0.000000, ' a b ', 'a', DATE '2000-02-29', TIMESTAMP '2000-02-29 12:30:45.5', NULL)",
    "(6, 3, 7, -7, 7, -7, 0.1, 0.1, 0.10, 0.100000, 'straße', 'é', DATE '1970-01-01', TIMESTAMP '1970-01-01 00:00:00.000001', TRUE)",
    "(7, 3, -1, 1, -1, 1, -0.5, 0.5, -0.50, -0.500000, 'a%b_c', 'ab', DATE '2024-06-15', TIMESTAMP '2024-06-15 08:05:03', FALSE)",
    "(8, 1, 100, 300, 70000, 5000000000, 2.5, 1e100, 1.25, 1.250000, 'Hello World', 'hello', DATE '2019-12-31', TIMESTAMP '2019-12-31 23:59:59', FALSE)",
    "(9, 2, 3, 3, 3, 3, 3.0, -1e-100, 3.00, 3.000000, 'abc', 'abc', DATE '2020-01-01', TIMESTAMP '2020-01-01 10:00:00', TRUE)",
    "(10, NULL, NULL, 5, NULL, 5, NULL, 5.0, NULL, 5.000000, NULL, 'q', NULL, TIMESTAMP '2021-03-04 05:06:07.123', NULL)",
    "(11, 4, 2, 2, 2147483600, 9223372036854775000, 1e-3, 1e-300, 0.01, 0.000001, '日本語', '', DATE '2021-03-04', NULL, TRUE)",
    "(12, 4, -2, -2, -2147483600, -9223372036854775000, -2.5, -2.5, -0.01, -0.000001, 'tab\tx', 'ABC', DATE '1999-01-01', TIMESTAMP '1999-01-01 00:00:00', FALSE)",
]

SMALL = "CREATE TABLE small (k INT, name STRING, w DECIMAL(5,1))"
_SMALL_ROWS = "(1, 'one', 1.5), (2, 'two', NULL), (3, 'three', -2.0), (NULL, 'none', 0.0), (7, 'seven', 7.7), (100, 'hundred', 100.0), (2, 'deux', 2.2)"

# A table of many versions: added columns with defaults, a rename, widenings, a dropped column.
EVOLVED = [
    "CREATE TABLE evolved (id INT NOT NULL, a INT, b STRING, c DECIMAL(6,2), gone STRING)",
    "INSERT INTO evolved VALUES (1, 10, 'one', 1.25, 'x'), (2, NULL, NULL, NULL, NULL), (3, -2147483648, 'three', -9999.99, 'y')",
    "CREATE VIEW pinned AS SELECT id, b, id * 2 AS twice FROM evolved",
    "ALTER TABLE evolved ADD COLUMN added INT DEFAULT 42",
    "INSERT INTO evolved VALUES (4, 40, 'four', 4.50, 'z', NULL), (5, 2147483647, '', 0.01, NULL, 7)",
    "ALTER TABLE evolved RENAME COLUMN b TO label",
    "ALTER TABLE evolved MODIFY COLUMN a BIGINT",
    "INSERT INTO evolved VALUES (6, 9223372036854775807, 'six', 6.00, 'w', -1)",
    "ALTER TABLE evolved MODIFY COLUMN c DECIMAL(12,3)",
    "ALTER TABLE evolved DROP COLUMN gone",
    "ALTER TABLE evolved ADD COLUMN note STRING DEFAULT 'n/a'",
    "INSERT INTO evolved VALUES (7, -5, 'seven', 123456.789, 8, NULL)",
    "CREATE VIEW recent AS SELECT id, a AS big_a, label, added FROM evolved WHERE id > 2",
]

# A primary-key table whose rows are replaced by later loads (merge on read).
KEYED = [
    "CREATE TABLE keyed (k INT NOT NULL, v STRING, n BIGINT, PRIMARY KEY (k))",
    "INSERT INTO keyed VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', NULL)",
    "INSERT INTO keyed VALUES (2, 'B', 20), (4, NULL, 4)",
    "INSERT INTO keyed VALUES (1, 'A', NULL)",
]


WIDE = ["CREATE TABLE wide (id INT, big LARGEINT)", "INSERT INTO wide VALUES (1, 99999999999999999999999999999999999999), (2, NULL)"]


def setup_statements() -> list[str]:
    return [
        *WIDE,
        NUMS,
        f"INSERT INTO nums VALUES {', '.join(_NUM_ROWS[:6])}",
        f"INSERT INTO nums VALUES {', '.join(_NUM_ROWS[6:])}",
        SMALL,
        f"INSERT INTO small VALUES {_SMALL_ROWS}",
        *EVOLVED,
        *KEYED,
    ]


NAMES = ("nums", "small", "evolved", "keyed", "pinned", "recent")

# -- the generator -------------------------------------------------------------------------------

INTEGRAL = ("ti", "si", "i", "bi")
FRACTIONAL = ("f", "d")
DECIMALS = ("dc", "dw")
STRINGS = ("s", "vc")


@dataclass
class Query:
    sql: str
    ordered: bool  # the ORDER BY fixes the order of every row (compare as lists, not multisets)


class QueryGenerator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def pick(self, *options):
        return self.rng.choice(options)

    # expressions over nums ----------------------------------------------------------------------
    def integral(self, depth: int = 0) -> str:
        r = self.rng.random()
        if depth > 2 or r < 0.35:
            return self.pick(*INTEGRAL, "id", "g")
        if r < 0.45:
            return self.pick("0", "1", "-1", "7", "2147483647", "-2147483648", "3000000000", "127", "100")
        if r < 0.7:
            return f"({self.integral(depth + 1)} {self.pick('+', '-', '*', '%')} {self.integral(depth + 1)})"
        if r < 0.75:
            return f"abs({self.integral(depth + 1)})"
        if r < 0.8:
            return f"(- {self.integral(depth + 1)})"
        if r < 0.87:
            return f"CAST({self.integral(depth + 1)} AS {self.pick('TINYINT', 'SMALLINT', 'INT', 'BIGINT')})"
        if r < 0.92:
            return f"CASE WHEN {self.predicate(depth + 1)} THEN {self.integral(depth + 1)} ELSE {self.integral(depth + 1)} END"
        if r < 0.96:
            return f"coalesce({self.integral(depth + 1)}, {self.integral(depth + 1)})"
        return self.pick("length(s)", "year(dt)", "month(ts)", "day(dt)", "datediff(dt, DATE '2000-01-01')")

    def number(self, depth: int = 0) -> str:
        r = self.rng.random()
        if depth > 2 or r < 0.3:
            return self.pick(*INTEGRAL, *FRACTIONAL, *DECIMALS)
        if r < 0.4:
            return self.pick("1.5", "0.01", "-2.25", "100", "0", "99999999.99")
        if r < 0.75:
            return f"({self.number(depth + 1)} {self.pick('+', '-', '*', '/', '%')} {self.number(depth + 1)})"
        if r < 0.85:
            target = self.pick("DOUBLE", "FLOAT", "DECIMAL(12,3)", "DECIMAL(38,6)", "DECIMAL(5,0)", "BIGINT")
            return f"CAST({self.number(depth + 1)} AS {target})"
        if r < 0.92:
            return f"if({self.predicate(depth + 1)}, {self.number(depth + 1)}, {self.number(depth + 1)})"
        return f"abs({self.number(depth + 1)})"

    def string(self, depth: int = 0) -> str:
        r = self.rng.random()
        if depth > 2 or r < 0.35:
            return self.pick(*STRINGS)
        if r < 0.45:
            return self.pick("'abc'", "''", "' pad '", "'é'", "'A%'")
        if r < 0.55:
            return f"concat({self.string(depth + 1)}, {self.string(depth + 1)})"
        if r < 0.62:
            return f"({self.string(depth + 1)} || {self.string(depth + 1)})"
        if r < 0.72:
            return f"{self.pick('upper', 'lower')}({self.string(depth + 1)})"
        if r < 0.85:
            pos = self.pick("1", "0", "-1", "2", "-3", "5", "i", "ti")
            return f"substring({self.string(depth + 1)}, {pos}{self.pick('', ', 2', ', 0', ', -1', ', 3', ', si')})"
        if r < 0.92:
            return f"trim({self.string(depth + 1)})"
        return f"CAST({self.pick(*INTEGRAL, 'dc', 'dw', 'b', 'dt')} AS STRING)"

    def predicate(self, depth: int = 0) -> str:
        r = self.rng.random()
        if depth > 2 or r < 0.35:
            return f"{self.integral(depth + 1)} {self.pick('=', '<>', '<', '<=', '>', '>=', '<=>')} {self.integral(depth + 1)}"
        if r < 0.45:
            return f"{self.number(depth + 1)} {self.pick('=', '<', '>=')} {self.number(depth + 1)}"
        if r < 0.52:
            return f"{self.string(depth + 1)} {self.pick('=', '<', '>', '<>')} {self.string(depth + 1)}"
        if r < 0.6:
            return f"({self.predicate(depth + 1)} {self.pick('AND', 'OR')} {self.predicate(depth + 1)})"
        if r < 0.65:
            return f"NOT ({self.predicate(depth + 1)})"
        if r < 0.72:
            return f"{self.pick(*INTEGRAL, *STRINGS, 'dc', 'd', 'dt', 'b')} IS {self.pick('', 'NOT ')}NULL"
        if r < 0.78:
            return f"{self.pick(*INTEGRAL)} IN ({', '.join(self.pick('1', '0', '-1', '7', 'NULL', '3') for _ in range(3))})"
        if r < 0.83:
            return f"{self.integral(depth + 1)} BETWEEN {self.pick('-10', '0', '1')} AND {self.pick('5', '100', '2147483647')}"
        if r < 0.88:
            return f"s LIKE '{self.pick('a%', '%b%', '_bc', '%', 'A_C', '%ß%')}'"
        if r < 0.94:
            return f"{self.pick('dt', 'CAST(ts AS DATE)', 'date_add(dt, 1)')} {self.pick('<', '>=', '=')} {self.pick('DATE', 'DATE')} '{self.pick('2020-01-01', '1970-01-01', '9999-12-31')}'"
        return self.pick("b", "NOT b", "b = TRUE", "(b OR i > 0)")

    def any_value(self) -> str:
        kind = self.pick("integral", "number", "string", "predicate", "date")
        if kind == "date":
            return self.pick(
                "dt", "ts", "date_add(dt, 30)", "CAST(ts AS DATE)", "CAST(dt AS TIMESTAMP_NTZ)", "CAST(dt AS STRING)", "CAST(ts AS STRING)"
            )
        return getattr(self, kind)()

    # queries --------------------------------------------------------------------------------------
    def projection(self) -> Query:
        count = self.rng.randint(1, 4)
        items = []
        for n in range(count):
            value = self.any_value()
            items.append(value if self.rng.random() < 0.3 else f"{value} AS x{n}")
        where = f" WHERE {self.predicate()}" if self.rng.random() < 0.5 else ""
        return Query(f"SELECT id, {', '.join(items)} FROM nums{where} ORDER BY id", True)

    def aggregate(self) -> Query:
        aggs = []
        for n in range(self.rng.randint(1, 4)):
            fn = self.pick(
                "count(*)",
                f"count({self.pick(*INTEGRAL, *STRINGS, 'd')})",
                f"count(DISTINCT {self.pick(*INTEGRAL, *STRINGS, 'd', 'f', 'dc')})",
                f"sum({self.pick(*INTEGRAL, *DECIMALS, 'g', 'id')})",
                f"avg({self.pick('ti', 'si', 'i', 'g', 'id')})",
                f"min({self.pick(*INTEGRAL, *STRINGS, *FRACTIONAL, *DECIMALS, 'dt', 'ts', 'b')})",
                f"max({self.pick(*INTEGRAL, *STRINGS, *FRACTIONAL, *DECIMALS, 'dt', 'ts', 'b')})",
                f"sum({self.integral(1)})",
            )
            aggs.append(fn if self.rng.random() < 0.4 else f"{fn} AS a{n}")
        where = f" WHERE {self.predicate()}" if self.rng.random() < 0.4 else ""
        if self.rng.random() < 0.25:
            return Query(f"SELECT {', '.join(aggs)} FROM nums{where}", True)
        key = self.pick("g", "b", "vc", "ti", "dt", "g % 2", "d", "f")
        having = f" HAVING count(*) {self.pick('>', '>=')} {self.pick('1', '2')}" if self.rng.random() < 0.3 else ""
        return Query(f"SELECT {key} AS k, {', '.join(aggs)} FROM nums{where} GROUP BY {key}{having} ORDER BY 1", False)

    def window(self) -> Query:
        fn = self.pick(
            "row_number()",
            "rank()",
            "dense_rank()",
            f"lag({self.pick(*INTEGRAL, 's', 'dc')})",
            f"lead({self.pick(*INTEGRAL, 's', 'd')}, 2)",
            "count(*)",
            f"min({self.pick(*INTEGRAL, 's')})",
            f"max({self.pick(*DECIMALS, 'dt')})",
        )
        partition = self.pick("", "PARTITION BY g ", "PARTITION BY b ")
        order = self.pick("ORDER BY id", "ORDER BY i, id", "ORDER BY s DESC, id", "ORDER BY d NULLS LAST, id")
        if fn.startswith(("count", "min", "max")) and self.rng.random() < 0.3:
            order = ""
        return Query(f"SELECT id, {fn} OVER ({partition}{order}) AS w FROM nums ORDER BY id", True)

    def join(self) -> Query:
        kind = self.pick("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL OUTER JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN", "CROSS JOIN")
        on = "" if kind == "CROSS JOIN" else f" ON {self.pick('n.i = s2.k', 'n.g = s2.k', 'n.id = s2.k AND s2.w > 0', 'n.ti = s2.k')}"
        if kind in ("LEFT SEMI JOIN", "LEFT ANTI JOIN"):
            return Query(f"SELECT n.id, n.s FROM nums n {kind} small s2{on} ORDER BY n.id", True)
        where = " WHERE n.id < 4" if kind == "CROSS JOIN" else ""
        return Query(f"SELECT n.id, n.i, s2.k, s2.name, s2.w FROM nums n {kind} small s2{on}{where} ORDER BY n.id, s2.k, s2.name", True)

    def subquery(self) -> Query:
        form = self.pick(
            "i IN (SELECT k FROM small)",
            "g NOT IN (SELECT k FROM small WHERE k IS NOT NULL)",
            "EXISTS (SELECT 1 FROM small WHERE k > 50)",
            "i > (SELECT max(k) FROM small)",
            "g = (SELECT k FROM small WHERE name = 'two')",
            "id IN (SELECT k FROM small WHERE w > 0)",
            "i > (SELECT k FROM small)",
            "NOT EXISTS (SELECT k FROM small WHERE k IS NULL)",
        )
        return Query(f"SELECT id, g, i FROM nums WHERE {form} ORDER BY id", True)

    def cte(self) -> Query:
        return Query(
            self.pick(
                "WITH c AS (SELECT g, count(*) AS n FROM nums GROUP BY g) SELECT g, n FROM c WHERE n > 1 ORDER BY g",
                f"WITH c AS (SELECT id, {self.integral()} AS v FROM nums) SELECT id, v FROM c ORDER BY id",
                "WITH a AS (SELECT k FROM small), b AS (SELECT k FROM a WHERE k > 1) SELECT k FROM b ORDER BY k",
                f"SELECT t.id, t.v FROM (SELECT id, {self.number()} AS v FROM nums) t ORDER BY t.id",
            ),
            True,
        )

    def set_operation(self) -> Query:
        op = self.pick("UNION ALL", "UNION", "INTERSECT", "EXCEPT")
        left = self.pick("SELECT g FROM nums", "SELECT ti FROM nums", "SELECT bi FROM nums", "SELECT dc FROM nums")
        right = self.pick("SELECT k FROM small", "SELECT w FROM small", "SELECT 1", "SELECT id FROM nums WHERE id < 3")
        return Query(f"{left} {op} {right} ORDER BY 1", False)

    def evolved(self) -> Query:
        return Query(
            self.pick(
                "SELECT * FROM evolved ORDER BY id",
                "SELECT id, a + 1 AS a1, label, c, added, note FROM evolved ORDER BY id",
                "SELECT sum(a) AS s, sum(c), count(note), max(label) FROM evolved",
                "SELECT * FROM pinned ORDER BY id",
                "SELECT * FROM recent ORDER BY id",
                "SELECT p.id, p.b, e.label FROM pinned p JOIN evolved e ON p.id = e.id ORDER BY p.id",
                "SELECT added, count(*) AS n FROM evolved GROUP BY added ORDER BY added",
                "SELECT * FROM keyed ORDER BY k",
                "SELECT v, n * 2 AS n2 FROM keyed WHERE n IS NOT NULL ORDER BY v",
                "SELECT r.label, k.v FROM recent r LEFT JOIN keyed k ON r.id = k.k ORDER BY r.label",
            ),
            True,
        )

    def shaped(self) -> Query:
        return Query(
            self.pick(
                f"SELECT DISTINCT {self.pick('g', 'b', 'vc', 'g, b')} FROM nums ORDER BY 1",
                f"SELECT id, s FROM nums ORDER BY id LIMIT {self.pick('0', '3', '20')}",
                f"SELECT id FROM nums ORDER BY {self.pick('i', 's', 'd', 'dt', 'dc')} {self.pick('ASC', 'DESC')}, id LIMIT 5 OFFSET 2",
                f"SELECT {self.pick('i', 's', 'dc', 'ts')} FROM nums ORDER BY 1 {self.pick('ASC', 'DESC')} {self.pick('', 'NULLS FIRST', 'NULLS LAST')}",
            ),
            False,
        )

    def query(self) -> Query:
        shape = self.rng.choices(
            [
                self.projection,
                self.aggregate,
                self.window,
                self.join,
                self.subquery,
                self.cte,
                self.set_operation,
                self.evolved,
                self.shaped,
            ],
            weights=[40, 20, 8, 6, 5, 4, 5, 6, 6],
        )[0]
        return shape()


def corpus(seed: int, count: int) -> list[Query]:
    """`count` distinct queries, the same for the same seed."""
    generator = QueryGenerator(seed)
    queries: dict[str, Query] = {}
    while len(queries) < count:
        query = generator.query()
        queries.setdefault(query.sql, query)
    return list(queries.values())


# Constructs the local engine leaves to Spark (docs/semantics.md lists them), each with a query
# that uses it: EXPLAIN SELECT must say spark, and the answer is Spark's.
SPARK_ONLY = {
    "avg of a DECIMAL of more than 12 digits": "SELECT avg(dw) FROM nums",
    "a cast from a decimal of more than 15 digits to a double": "SELECT CAST(dw AS DOUBLE) AS x FROM nums",
    "a cast from a string to a timestamp": "SELECT CAST(s AS TIMESTAMP_NTZ) AS n FROM nums",
    "a cast from a floating-point number to a decimal": "SELECT CAST(d AS DECIMAL(10,2)) AS n FROM nums",
    "a cast from a floating-point number to a string": "SELECT CAST(d AS STRING) AS t FROM nums",
    "LARGEINT columns": "SELECT * FROM wide",
    "regular expressions": "SELECT regexp_extract(s, 'a(.)', 1) AS r FROM nums",
    "LIKE with an escape": "SELECT id FROM nums WHERE s LIKE 'a\\\\%b%'",
    "a ROWS frame with offsets without ORDER BY": "SELECT id, count(*) OVER (ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS w FROM nums",
    "window sums of floating-point numbers": "SELECT id, sum(d) OVER (ORDER BY id) AS w FROM nums",
    "a NATURAL JOIN without common columns": "SELECT * FROM small NATURAL JOIN nums",
    "correlated scalar subqueries correlated otherwise than by equalities": "SELECT id, (SELECT max(w) FROM small WHERE k < n.i) AS m FROM nums n",
    "floating-point moments (stddev, variance, corr, covar, skewness, kurtosis)": "SELECT stddev(d) AS s FROM nums",
    "aggregates whose answer depends on the input order (first, last, max_by)": "SELECT first(i) AS f FROM nums",
    "an unnamed expression Spark names itself": "SELECT s LIKE 'a%' FROM nums",
    "timestamps literals (TIMESTAMP is Spark's local-time type)": "SELECT id FROM nums WHERE ts > TIMESTAMP '2020-01-01 00:00:00'",
    "functions outside the set": "SELECT sha2(s, 256) AS h, date_format(dt, 'yyyy') AS y FROM nums",
    "a column of untyped NULLs": "SELECT NULL AS n FROM nums",
}
