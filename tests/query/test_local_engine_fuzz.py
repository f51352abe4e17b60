"""Grammar-based fuzzing of the local engine: seeded random SELECTs over a table of every column
type, drawn from the constructs the local engine runs and from just outside them (wrong argument
counts, unknown functions, odd nesting, NULL literals, positions, subqueries, set operations).
Each query must plan locally and run, go to Spark (NotLocal, or SparkNeeded at run time), or be
refused in one line (a UserError, a LocalQueryError): never raise anything else. No Spark here.

ALTERFLOW_FUZZ_QUERIES=5000 (and ALTERFLOW_FUZZ_SEED) runs a longer search.
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass

import pytest

from alterflow.errors import UserError
from alterflow.query.expression_core import NotLocal
from alterflow.query.local_engine import LocalQueryError, SparkNeeded, plan_local, run_local

QUERIES = int(os.environ.get("ALTERFLOW_FUZZ_QUERIES", "300"))
SEED = int(os.environ.get("ALTERFLOW_FUZZ_SEED", "37"))

COLUMNS = {  # name -> the kind of value it holds
    "ti": "int", "si": "int", "i": "int", "bi": "int", "fl": "float", "db": "float", "dc": "decimal",
    "s": "string", "vc": "string", "ch": "string", "b": "boolean", "d": "date", "dt": "datetime",
}  # fmt: skip
TABLE = (
    "CREATE TABLE f (ti TINYINT, si SMALLINT, i INT, bi BIGINT, fl FLOAT, db DOUBLE, dc DECIMAL(10, 2), "
    "s STRING, vc VARCHAR(10), ch CHAR(3), b BOOLEAN, d DATE, dt DATETIME)"
)
ROWS = (
    "INSERT INTO f VALUES "
    "(1, 2, 3, 4, 1.5, 2.5, 3.25, 'abc', 'x', 'abc', true, DATE '2020-01-31', TIMESTAMP '2020-01-31 10:00:00'), "
    "(-1, -2, -3, -4, -0.5, -2.5, -3.25, '', 'y', 'xyz', false, DATE '1999-12-31', TIMESTAMP '1999-12-31 23:59:59'), "
    "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), "
    "(127, 32767, 2147483647, 9223372036854775807, 0, 0, 0, ' a ', 'z', 'a  ', true, DATE '0001-01-01', TIMESTAMP '2038-01-19 03:14:07')"
)

# functions by how many arguments the local engine's set takes; some with counts Spark refuses
FUNCTIONS = {
    1: ["abs", "upper", "lower", "length", "trim", "ltrim", "rtrim", "sign", "negative", "sqrt", "ceil", "floor",
        "year", "month", "day", "isnull", "isnotnull", "reverse", "initcap", "ascii", "sum", "count", "min", "max",
        "avg", "first", "last", "exp", "ln", "char_length", "bit_length", "hex", "unknown_fn", "gcd"],
    2: ["coalesce", "nvl", "nullif", "round", "concat", "left", "right", "pmod", "mod", "greatest", "least",
        "date_add", "date_sub", "datediff", "ifnull", "pow", "power", "repeat", "instr", "substring", "atan2",
        "concat_ws", "abs", "upper", "count", "truncate"],
    3: ["if", "substring", "substr", "nvl2", "lpad", "rpad", "replace", "coalesce", "concat", "round", "locate",
        "abs", "sum"],
    0: ["count", "abs", "pi", "e", "rand", "coalesce", "concat", "current_date", "now"],
}  # fmt: skip
COMPARISONS = ["=", "<>", "<", ">=", "<=>", "!="]
OPERATORS = ["+", "-", "*", "/", "%", "=", "<>", "<", ">=", "AND", "OR", "||", "DIV", "<=>"]
TYPES = ["INT", "BIGINT", "STRING", "DOUBLE", "DECIMAL(5, 1)", "DATE", "BOOLEAN", "TINYINT", "FLOAT", "TIMESTAMP"]
LITERALS = ["NULL", "0", "1", "-1", "2147483647", "9223372036854775807", "1.5", "-0.0", "1e10", "'a'", "''",
            "'2020-01-01'", "true", "false", "DATE '2020-02-29'", "CAST(NULL AS INT)", "1L", "2Y", "3S", "1.0BD"]  # fmt: skip


# well-typed pieces, by the kind of value they give: a query of these runs locally more often
TYPED_LITERALS = {
    "int": ["0", "1", "-7", "NULL", "2147483647"], "float": ["1.5", "-0.0", "CAST(NULL AS DOUBLE)"],
    "decimal": ["1.25", "-3.5", "CAST(NULL AS DECIMAL(4, 1))"], "string": ["'a'", "''", "NULL", "'x y'"],
    "boolean": ["true", "false", "NULL"], "date": ["DATE '2020-02-29'", "CAST(NULL AS DATE)"], "datetime": ["dt"],
}  # fmt: skip
TYPED_CALLS = {  # kind -> templates over arguments of the kinds named in braces
    "int": ["abs({int})", "({int} + {int})", "({int} * {int})", "({int} - {int})", "coalesce({int}, {int})",
            "length({string})", "year({date})", "month({date})", "sign({int})", "greatest({int}, {int})",
            "CASE WHEN {boolean} THEN {int} ELSE {int} END", "nullif({int}, {int})", "if({boolean}, {int}, {int})",
            "datediff({date}, {date})", "pmod({int}, {int})", "({int} % {int})"],
    "float": ["({float} / {float})", "abs({float})", "({float} + {int})", "round({float}, 1)", "sqrt({float})"],
    "decimal": ["({decimal} + {decimal})", "({decimal} * {int})", "round({decimal}, 1)", "abs({decimal})"],
    "string": ["upper({string})", "lower({string})", "concat({string}, {string})", "trim({string})",
               "substring({string}, {int}, {int})", "coalesce({string}, {string})", "lpad({string}, 3, 'x')",
               "CAST({int} AS STRING)", "replace({string}, 'a', 'b')"],
    "boolean": ["({int} = {int})", "({string} < {string})", "({int} IS NULL)", "({boolean} AND {boolean})",
                "({int} IN ({int}, {int}))", "NOT {boolean}", "({date} >= {date})", "({float} <=> {float})"],
    "date": ["date_add({date}, {int})", "date_sub({date}, 1)", "CAST({string} AS DATE)", "coalesce({date}, {date})"],
    "datetime": ["dt"],
}  # fmt: skip
WINDOW_CALLS = ["row_number()", "rank()", "dense_rank()", "lag(i)", "lead(s, 2, 'x')", "sum(i)", "count(*)", "ntile(2)",
                "first_value(s)", "row_number(1)", "lag(i, 1, 0, 1, 2)", "sum(i, 1)", "avg()", "nth_value(i, 0)"]  # fmt: skip
WINDOW_SPECS = ["ORDER BY i", "PARTITION BY s ORDER BY i DESC", "", "ORDER BY d ROWS BETWEEN 1 PRECEDING AND CURRENT ROW",
                "PARTITION BY b", "ORDER BY 1"]  # fmt: skip
TYPED_AGGREGATES = ["count({kind})", "min({kind})", "max({kind})", "count(DISTINCT {kind})", "sum({int})", "avg({int})"]


@dataclass
class Grammar:
    """A random query generator: `select()` draws one SELECT statement."""

    rng: random.Random
    depth: int = 0

    def pick(self, items):
        return items[self.rng.randrange(len(items))]

    def expression(self, depth: int = 0) -> str:
        roll = self.rng.random()
        if depth >= 3 or roll < 0.25:
            return self.pick(list(COLUMNS)) if self.rng.random() < 0.6 else self.pick(LITERALS)
        if roll < 0.45:
            count = self.pick([0, 1, 1, 2, 2, 3])
            name = self.pick(FUNCTIONS[count])
            return f"{name}({', '.join(self.expression(depth + 1) for _ in range(count))})"
        if roll < 0.7:
            return f"({self.expression(depth + 1)} {self.pick(OPERATORS)} {self.expression(depth + 1)})"
        if roll < 0.78:
            return f"CAST({self.expression(depth + 1)} AS {self.pick(TYPES)})"
        if roll < 0.85:
            return f"CASE WHEN {self.condition(depth + 1)} THEN {self.expression(depth + 1)} ELSE {self.expression(depth + 1)} END"
        if roll < 0.9:
            return f"{self.expression(depth + 1)} IN ({', '.join(self.expression(depth + 2) for _ in range(self.rng.randrange(3)))})"
        if roll < 0.94:
            return f"(SELECT {self.pick(['max', 'min', 'count'])}({self.pick(list(COLUMNS))}) FROM f)"
        if roll < 0.97:
            return f"{self.pick(['', 'NOT '])}EXISTS (SELECT 1 FROM f WHERE {self.expression(depth + 2)})"
        return f"{self.expression(depth + 1)} IS {self.pick(['', 'NOT '])}NULL"

    def condition(self, depth: int = 0) -> str:
        """Mostly a boolean: a comparison, a NULL test, a boolean column; now and then anything."""
        roll = self.rng.random()
        if roll < 0.5:
            return f"{self.expression(depth + 1)} {self.pick(COMPARISONS)} {self.expression(depth + 1)}"
        if roll < 0.65:
            return f"{self.pick(list(COLUMNS))} IS {self.pick(['', 'NOT '])}NULL"
        if roll < 0.75:
            return self.pick(["b", "NOT b", "true", "NULL"])
        if roll < 0.85:
            return f"({self.condition(depth + 1)} {self.pick(['AND', 'OR'])} {self.condition(depth + 1)})"
        return self.expression(depth)

    def typed(self, kind: str, depth: int = 0) -> str:
        """A well-typed expression giving a value of `kind` (a column kind of COLUMNS)."""
        if depth >= 3 or self.rng.random() < 0.4:
            columns = [c for c, k in COLUMNS.items() if k == kind]
            return self.pick(columns) if columns and self.rng.random() < 0.7 else self.pick(TYPED_LITERALS[kind])
        template = self.pick(TYPED_CALLS[kind])
        return re.sub(r"\{(\w+)\}", lambda m: self.typed(m.group(1), depth + 1), template)

    def typed_select(self) -> str:
        """A query of well-typed pieces: grouped (aggregates over grouped keys) or not."""
        kinds = [self.pick(list(TYPED_CALLS)) for _ in range(self.rng.randrange(1, 4))]
        if self.rng.random() < 0.4:
            key = self.pick([c for c in COLUMNS if c != "fl"])
            aggregates = [self.pick(TYPED_AGGREGATES).format(kind=self.typed(k), int=self.typed("int")) for k in kinds]
            listed = ", ".join([key] + [f"{a} AS a{n}" for n, a in enumerate(aggregates)])
            order = self.pick(["", " ORDER BY 1", " ORDER BY 2 DESC", f" ORDER BY {len(kinds) + 2}"])
            return f"SELECT {listed} FROM f WHERE {self.typed('boolean')} GROUP BY {self.pick([key, '1'])}{order}"
        listed = ", ".join(f"{self.typed(k)} AS c{n}" for n, k in enumerate(kinds))
        query = f"SELECT {listed} FROM f WHERE {self.typed('boolean')}"
        if self.rng.random() < 0.2:
            query += f" UNION ALL SELECT {listed} FROM f"
        return query + self.pick(["", " ORDER BY 1", " LIMIT 2", " ORDER BY 1 LIMIT 1"])

    def query(self) -> str:
        return self.typed_select() if self.rng.random() < 0.5 else self.select()

    def select(self) -> str:
        width = self.rng.randrange(1, 4)
        listed = ", ".join(f"{self.expression()} AS c{n}" if self.rng.random() < 0.8 else self.expression() for n in range(width))
        if self.rng.random() < 0.15:
            listed += f", {self.pick(WINDOW_CALLS)} OVER ({self.pick(WINDOW_SPECS)}) AS win"
        if self.rng.random() < 0.1:
            listed = "*"
        query = f"SELECT {self.pick(['', '', 'DISTINCT '])}{listed} FROM {self.pick(['f', 'f', 'f AS x', '(SELECT * FROM f) AS q', 'w'])}"
        if self.rng.random() < 0.4:
            query += f" WHERE {self.condition()}"
        if self.rng.random() < 0.3:
            query += f" GROUP BY {self.pick(['1', '2', '0', '-1', '4', 'i', 's', 'ROLLUP(i, s)', 'CUBE(i, ())', self.expression()])}"
        if self.rng.random() < 0.3:
            query += f" ORDER BY {self.pick(['1', '2', '0', '-1', '9999999999', 'c0', 'i', self.expression()])}"
        if self.rng.random() < 0.15:
            query += f" {self.pick(['UNION', 'UNION ALL', 'EXCEPT', 'INTERSECT'])} SELECT {listed} FROM f"
        if self.rng.random() < 0.2:
            query += f" LIMIT {self.pick(['0', '1', '10'])}"
        if "FROM w" in query or self.rng.random() < 0.1:
            query = f"WITH w AS (SELECT * FROM f){self.pick(['', '', ', w AS (SELECT 1 AS i)'])} {query}"
        return query


@pytest.fixture(scope="module")
def fuzz_session(tmp_path_factory):
    from alterflow.engine.session import Session
    from alterflow.settings import Settings

    home = tmp_path_factory.mktemp("fuzz")
    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[1]"}))
    for statement in (TABLE, ROWS):
        list(session.run(statement))
    return session


def outcome(session, sql: str) -> str:
    """How the local engine took the query: "local", "spark", "refused"; raises anything else."""
    from alterflow.engine.session import _is_date_range_error

    try:
        plan = plan_local(session.reads, sql, ("f",))
    except NotLocal:
        return "spark"
    except UserError:
        return "refused"
    try:
        run_local(session.warehouse, plan, as_rows=True)
    except SparkNeeded:
        return "spark"
    except LocalQueryError:
        return "refused"
    except ValueError as exc:
        if not _is_date_range_error(exc):
            raise
        return "refused"
    return "local"


def test_random_queries_plan_run_hand_off_or_are_refused(fuzz_session):
    grammar = Grammar(random.Random(SEED))
    seen = {"local": 0, "spark": 0, "refused": 0}
    failures = []
    for _ in range(QUERIES):
        sql = grammar.query()
        try:
            seen[outcome(fuzz_session, sql)] += 1
        except Exception as exc:  # noqa: BLE001 - every other exception is what the fuzzing looks for
            failures.append(f"{sql}\n    {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    assert not failures, f"{len(failures)} of {QUERIES} queries crashed:\n" + "\n".join(failures[:20])
    # the generator reaches all three outcomes, or it would test nothing
    assert all(n > 0 for n in seen.values()), seen
