"""Spark's SQL golden tests as the outside oracle of the local engine (docs/semantics.md,
"Queries: two engines"): every query of tests/query/spark_golden/inputs is put to an alterflow
session with engine `auto`, without Spark. Where the session would run it in process (EXPLAIN
says local), it runs locally and its answer, printed as Spark prints it in a `.sql.out` file, is
compared with Spark's (recorded by record.py): schema, rows, and their order where ORDER BY
fixes it (otherwise both sides are sorted, as SQLQueryTestSuite sorts them). Rows whose ORDER BY
keys are equal may come in any order, as Spark leaves their order arbitrary: an ordered answer
that differs row by row is checked again against its keys, which a rewrite of the query returns
(GoldenSession._judge_ties). A query whose golden outcome is an error must not get rows. Where
Spark would run it, the reason is counted.

    .venv/bin/python -m tests.query.spark_golden
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import pathlib
import re
import tempfile
import time
from dataclasses import dataclass, field

from tests.query.spark_golden import golden


@dataclass(frozen=True)
class QueryResult:
    file: str
    sql: str
    status: str  # see STATUSES
    detail: str = ""  # skip or Spark reason, the diff of a wrong answer, a crash's line


# skipped: not put to the engine; local_right / refused_right: answered in process, as Spark
# does; wrong: a local answer that differs from Spark's; spark: left to Spark (EXPLAIN or run
# time); crash: the local path raised something that is neither a user error nor a hand-off.
STATUSES = ("skipped", "local_right", "refused_right", "wrong", "spark", "crash")


@dataclass
class Report:
    results: list[QueryResult] = field(default_factory=list)
    seconds: float = 0.0

    def of(self, status: str) -> list[QueryResult]:
        return [r for r in self.results if r.status == status]

    @property
    def eligible(self) -> list[QueryResult]:
        return [r for r in self.results if r.status != "skipped"]

    @property
    def in_process(self) -> list[QueryResult]:
        return [r for r in self.results if r.status in ("local_right", "refused_right", "wrong")]

    @property
    def share(self) -> float:
        return len(self.in_process) / len(self.eligible) if self.eligible else 0.0

    def text(self, top: int = 30) -> str:
        lines = [
            f"Spark golden queries: {len(self.results)} in {len({r.file for r in self.results})} files, "
            f"{len(self.eligible)} eligible, {len(self.of('skipped'))} skipped ({self.seconds:.1f} s)",
            f"answered in process: {len(self.in_process)} of {len(self.eligible)} = {100 * self.share:.1f}% "
            f"(right {len(self.of('local_right'))}, refused as Spark fails {len(self.of('refused_right'))}, "
            f"WRONG {len(self.of('wrong'))}); Spark: {len(self.of('spark'))}; crashes: {len(self.of('crash'))}",
            "",
            "skipped, by reason:",
        ]
        lines += _counted([r.detail for r in self.of("skipped")], None)
        lines += ["", f"why queries went to Spark (top {top}):"]
        lines += _counted([_reason_group(r.detail) for r in self.of("spark")], top)
        lines += ["", "per file (eligible / in process / wrong / crash):"]
        for name in sorted({r.file for r in self.results}):
            rs = [r for r in self.results if r.file == name]
            counts = collections.Counter(r.status for r in rs)
            eligible = len(rs) - counts["skipped"]
            local = counts["local_right"] + counts["refused_right"] + counts["wrong"]
            lines.append(f"  {name}: {eligible} / {local} / {counts['wrong']} / {counts['crash']}")
        for status in ("wrong", "crash"):
            if self.of(status):
                lines += ["", f"{status.upper()}:"]
                for r in self.of(status):
                    lines.append(f"  [{r.file}] {_one_line(r.sql)}")
                    lines += [f"      {d}" for d in r.detail.splitlines()]
        return "\n".join(lines)


def _one_line(sql: str, limit: int = 160) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _reason_group(reason: str) -> str:
    reason = reason.removeprefix("spark: ").removesuffix(", which runs on Spark only")
    return re.sub(r"\d+ rows in [\d.]+ MiB", "N rows", reason)


def _counted(items: list[str], top: int | None) -> list[str]:
    counted = collections.Counter(items).most_common(top)
    return [f"  {n:4d}  {item}" for item, n in counted] or ["  (none)"]


# -- printing values as Spark's .sql.out does (HiveResult.toHiveString) -----------------------


def _java_float(value: float, single: bool) -> str:
    """Java's Float/Double.toString: the shortest digits that read back as the value, plain for
    1e-3 <= |v| < 1e7, else d.dddE[-]n; always a digit after the point."""
    import math

    import numpy

    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    number = numpy.float32(value) if single else numpy.float64(value)
    mantissa, exponent = numpy.format_float_scientific(number, unique=True, trim="-").split("e")
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "")
    exp = int(exponent)
    if 1e-3 <= abs(value) < 1e7:
        if exp >= 0:
            whole, frac = digits[: exp + 1].ljust(exp + 1, "0"), digits[exp + 1 :]
        else:
            whole, frac = "0", "0" * (-exp - 1) + digits
        return f"{sign}{whole}.{frac or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp}"


def spark_text(value, type_name: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if type_name in ("float", "double"):
        return _java_float(float(value), type_name == "float")
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        text = f"{value.year:04d}-{value:%m-%d %H:%M:%S}"
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    if isinstance(value, datetime.date):
        return f"{value.year:04d}-{value:%m-%d}"
    return str(value)


# -- the tables ---------------------------------------------------------------------------------


def _arrow_table(columns: list[list[str]], rows: list[list]):
    import pyarrow as pa

    def arrow_type(t: str):
        if m := re.fullmatch(r"DECIMAL\((\d+),(\d+)\)", t):
            return pa.decimal128(int(m.group(1)), int(m.group(2)))
        return {
            "BOOLEAN": pa.bool_(),
            "TINYINT": pa.int8(),
            "SMALLINT": pa.int16(),
            "INT": pa.int32(),
            "BIGINT": pa.int64(),
            "FLOAT": pa.float32(),
            "DOUBLE": pa.float64(),
            "STRING": pa.string(),
            "DATE": pa.date32(),
            "DATETIME": pa.timestamp("us"),
        }[t]

    def python(v, t: str):
        if v is None:
            return None
        if t.startswith("DECIMAL"):
            return decimal.Decimal(v)
        if t in ("FLOAT", "DOUBLE"):
            return float(v)
        if t == "DATE":
            return datetime.date.fromisoformat(v)
        if t == "DATETIME":
            return datetime.datetime.fromisoformat(v)
        return v

    arrays = [pa.array([python(row[i], t) for row in rows], type=arrow_type(t)) for i, (_, t) in enumerate(columns)]
    return pa.table(arrays, names=[name for name, _ in columns])


class GoldenSession:
    """An alterflow session in a home of its own, holding one golden file's relations as tables."""

    def __init__(self, home: pathlib.Path):
        from alterflow.engine.session import Session
        from alterflow.settings import Settings

        self.session = Session(Settings.from_env({"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[1]"}))
        self.session.query_engine = "auto"
        self.unsupported: dict[str, str] = {}  # relation name (lower case) -> why no query reads it here

    def run(self, sql: str):
        from alterflow import sql as ast

        return [self.session.execute(s) for s in ast.parse_statements(sql)]

    def apply(self, event: dict) -> None:
        from alterflow.engine.session import StatementError
        from alterflow.load.bad_rows import BadRows

        kind = event["kind"]
        if kind == "failed":
            return
        name = event["name"]
        key = name.lower()
        self.unsupported.pop(key, None)
        self.run(f"DROP TABLE IF EXISTS {name}")
        if kind == "drop":
            return
        if kind == "unsupported":
            self.unsupported[key] = f"reads a relation alterflow cannot store ({event['reason']})"
            return
        columns = ", ".join(f"{c} {t}" for c, t in event["columns"])
        try:
            self.run(f"CREATE TABLE {name} ({columns})")
            if event["rows"]:
                self.session.load(name, _arrow_table(event["columns"], event["rows"]), label="golden", by_name=True)
        except (StatementError, BadRows) as exc:  # e.g. a NaN, which alterflow's DOUBLE columns refuse
            self.unsupported[key] = f"reads a relation alterflow refuses: {_parser_reason(str(exc))}"

    def answer(self, file: str, sql: str, expected: golden.Outcome) -> QueryResult:
        """The local engine's answer to one query, judged against Spark's."""
        from alterflow import sql as ast
        from alterflow.engine.session import DATE_RANGE_ERROR, StatementError, _is_date_range_error
        from alterflow.errors import UserError
        from alterflow.query.local_engine import LocalQueryError, SparkNeeded, run_local

        def refused(line: str) -> QueryResult:
            if expected.error is not None:
                return QueryResult(file, sql, "refused_right", line)
            return QueryResult(file, sql, "wrong", f"local error: {line}\nSpark's rows: {list(expected.output)}")

        try:
            statements = ast.parse_statements(sql)
        except ast.SqlError as exc:
            if expected.error is not None:
                return QueryResult(file, sql, "refused_right", str(exc))
            return QueryResult(file, sql, "spark", f"alterflow's statement parser refuses it: {_parser_reason(str(exc))}")
        stmt = statements[0] if len(statements) == 1 else None
        if not isinstance(stmt, ast.Select):
            if expected.error is not None:
                return QueryResult(file, sql, "refused_right", "not a SELECT statement for alterflow")
            return QueryResult(
                file, sql, "spark", f"alterflow's statement parser refuses it: a query starting with {sql.split()[0].upper()}"
            )
        try:
            choice = self.session.engine_choice(stmt.sql, self.session.query_names(stmt))
        except (UserError, StatementError) as exc:
            return refused(str(exc))
        except Exception as exc:  # noqa: BLE001 - a crash of the translation is what this reports
            return QueryResult(file, sql, "crash", f"{type(exc).__name__} planning: {exc}")
        if choice.engine != "local":
            return QueryResult(file, sql, "spark", choice.reason)
        try:
            result = run_local(self.session.warehouse, choice.plan, as_rows=True)
        except LocalQueryError as exc:
            return refused(str(exc))
        except SparkNeeded as exc:
            return QueryResult(file, sql, "spark", f"at run time: {exc}")
        except ValueError as exc:
            if _is_date_range_error(exc):
                return refused(DATE_RANGE_ERROR)
            return QueryResult(file, sql, "crash", f"ValueError running: {exc}")
        except Exception as exc:  # noqa: BLE001
            return QueryResult(file, sql, "crash", f"{type(exc).__name__} running: {exc}")
        return self._judged(file, sql, expected, result)

    def _judged(self, file: str, sql: str, expected: golden.Outcome, result) -> QueryResult:
        verdict = judge(file, sql, expected, result)
        if verdict.status == "wrong" and expected.error is None and ordered(sql):
            return self._judge_ties(file, sql, expected, result, verdict)
        return verdict

    def _judge_ties(self, file: str, sql: str, expected: golden.Outcome, result, strict: QueryResult) -> QueryResult:
        """An ordered answer that differs from Spark's row by row, judged again with its sort keys:
        the query rewritten to also return its ORDER BY keys runs locally; its keys must be sorted
        in the ORDER BY's direction, and each run of rows with equal keys must hold the same rows in
        the answer, in Spark's answer and in the rewrite's answer (any order within the run, as
        Spark's order among ties is arbitrary). Where the rewrite is impossible or does not run
        locally, the strict verdict stands."""
        from alterflow import sql as ast
        from alterflow.query.local_engine import run_local

        rewrite = order_key_rewrite(sql)
        if rewrite is None:
            return strict
        rewritten, directions = rewrite
        try:
            stmt = ast.parse_statements(rewritten)[0]
            choice = self.session.engine_choice(stmt.sql, self.session.query_names(stmt))
            if choice.engine != "local":
                return strict
            keyed = run_local(self.session.warehouse, choice.plan, as_rows=True)
        except Exception:  # noqa: BLE001 - the rewrite is the runner's, not the query under test
            return strict
        detail = tie_mismatch(expected, result, keyed, len(directions), directions)
        if detail is None:
            return QueryResult(file, sql, "local_right", "equal to Spark's up to the order of rows with equal ORDER BY keys")
        return QueryResult(file, sql, "wrong", f"{strict.detail}\nwith ties allowed: {detail}")


def judge(file: str, sql: str, expected: golden.Outcome, result) -> QueryResult:
    """Local rows against Spark's outcome: printed as Spark prints them, in order where the
    query's ORDER BY fixes it, else both sorted."""
    types = [str(t) for t in result.types]
    if expected.error is not None:
        return QueryResult(file, sql, "wrong", f"local rows where Spark fails with: {expected.error}")
    schema = "struct<" + ",".join(f"{n}:{t}" for n, t in zip(result.names, types)) + ">"
    lines = ["\t".join(spark_text(v, t) for v, t in zip(row, types)) for row in result.rows]
    want = list(expected.output)
    if not ordered(sql):
        lines, want = sorted(lines), sorted(want)
    diffs = []
    if schema != expected.schema:
        diffs.append(f"schema: local {schema}, Spark {expected.schema}")
    if lines != want:
        diffs.append(f"rows: local {lines}, Spark {want}")
    if diffs:
        return QueryResult(file, sql, "wrong", "\n".join(diffs))
    return QueryResult(file, sql, "local_right")


def _parser_reason(text: str) -> str:
    return re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "…", text.splitlines()[0])[:100]


def ordered(sql: str) -> bool:
    """Whether the query's outermost ORDER BY fixes its rows' order (else both sides are sorted)."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.SqlglotError:
        return False
    while isinstance(tree, exp.Subquery) and not tree.args.get("order"):
        tree = tree.this
    return tree is not None and tree.args.get("order") is not None


def order_key_rewrite(sql: str) -> tuple[str, list[tuple[bool, bool]]] | None:
    """The query with its ORDER BY keys appended to its outer SELECT list, and each key's
    (descending, nulls first); None where appending columns could change the rows or the keys
    cannot be named: DISTINCT, a set operation, a position over a `*`, a key holding a `*`.
    A position or an output alias as a key stands for the SELECT list expression it names, as
    Spark resolves it."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.SqlglotError:
        return None
    while isinstance(tree, exp.Subquery) and set(k for k, v in tree.args.items() if v) <= {"this"}:
        tree = tree.this
    if not isinstance(tree, exp.Select) or tree.args.get("distinct") or tree.args.get("order") is None:
        return None
    projections = tree.expressions
    aliases = {p.alias.lower(): p.this for p in projections if isinstance(p, exp.Alias)}
    starred = any(p.find(exp.Star) for p in projections)
    keys, directions = [], []
    for ordered in tree.args["order"].expressions:
        key = ordered.this
        if isinstance(key, exp.Literal) and key.is_int:
            position = int(key.name)
            if starred or not 1 <= position <= len(projections):
                return None
            named = projections[position - 1]
            key = named.this if isinstance(named, exp.Alias) else named
        elif isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            key = aliases[key.name.lower()]
        if key.find(exp.Star):
            return None
        desc = bool(ordered.args.get("desc"))
        nulls_first = ordered.args.get("nulls_first")
        keys.append(key.copy())
        directions.append((desc, (not desc) if nulls_first is None else bool(nulls_first)))
    rewritten = tree.copy()
    rewritten.set("expressions", [p.copy() for p in projections] + [exp.alias_(k, f"golden_order_key_{i}") for i, k in enumerate(keys)])
    return rewritten.sql(dialect="spark"), directions


def _compare_keys(a: tuple, b: tuple, directions: list[tuple[bool, bool]]) -> int:
    """Spark's order of two key tuples: NULLs first or last as asked, NaN above every number."""
    import math

    for x, y, (desc, nulls_first) in zip(a, b, directions):
        if x is None or y is None:
            if x is None and y is None:
                continue
            return (-1 if nulls_first else 1) * (1 if x is None else -1)
        nan_x = isinstance(x, float) and math.isnan(x)
        nan_y = isinstance(y, float) and math.isnan(y)
        if nan_x or nan_y:
            c = (nan_x > nan_y) - (nan_x < nan_y)
        else:
            c = (x > y) - (x < y)
        if c:
            return -c if desc else c
    return 0


def tie_mismatch(expected: golden.Outcome, result, keyed, width: int, directions: list[tuple[bool, bool]]) -> str | None:
    """Why the local answer is not Spark's up to the order of ties (None when it is): `keyed` is
    the local answer of the query rewritten with its `width` ORDER BY keys as last columns."""
    types = [str(t) for t in result.types]
    lines = ["\t".join(spark_text(v, t) for v, t in zip(row, types)) for row in result.rows]
    want = list(expected.output)
    keyed_types = [str(t) for t in keyed.types]
    n = len(keyed_types) - width
    if keyed_types[:n] != types:
        return f"the keyed rewrite has other columns ({keyed_types[:n]})"
    keyed_lines = ["\t".join(spark_text(v, t) for v, t in zip(row[:n], types)) for row in keyed.rows]
    keys = [tuple(row[n:]) for row in keyed.rows]
    key_texts = [tuple(spark_text(v, t) for v, t in zip(row[n:], keyed_types[n:])) for row in keyed.rows]
    if not len(lines) == len(want) == len(keyed_lines):
        return f"{len(lines)} local rows, {len(want)} Spark rows, {len(keyed_lines)} rows with keys"
    for i in range(1, len(keys)):
        if _compare_keys(keys[i - 1], keys[i], directions) > 0:
            return f"local keys out of order at row {i + 1}: {key_texts[i - 1]} before {key_texts[i]}"
    start = 0
    for end in range(1, len(keys) + 1):
        if end < len(keys) and key_texts[end] == key_texts[start]:
            continue
        local, spark, with_keys = (sorted(x[start:end]) for x in (lines, want, keyed_lines))
        if not local == spark == with_keys:
            return f"rows {start + 1}-{end} (keys {key_texts[start]}): local {local}, Spark {spark}, rewrite {with_keys}"
        start = end
    return None


def _tables_read(sql: str) -> set[str]:
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.SqlglotError:
        return set()
    return {t.name.lower() for t in tree.find_all(exp.Table) if t.name}


# -- the run --------------------------------------------------------------------------------


def run_file(path: pathlib.Path) -> list[QueryResult]:
    name = golden.file_name(path)
    stmts = golden.statements(path)
    found = golden.directives(path.read_text())
    if found:
        reason = f"the file needs {found[0].split()[0]}"
        return [QueryResult(name, s.sql, "skipped", reason) for s in stmts if s.kind == "query"]
    outcomes = golden.read_results(golden.results_path(name))
    events = golden.read_events(name)
    results = []
    with tempfile.TemporaryDirectory() as home:
        gs = GoldenSession(pathlib.Path(home))
        configured = False
        for i, stmt in enumerate(stmts):
            configured = configured or stmt.kind == "set"
            if stmt.kind != "query":
                if stmt.kind == "setup" and not configured:
                    for event in events.get(i, []):
                        gs.apply(event)
                continue
            if configured:
                results.append(QueryResult(name, stmt.sql, "skipped", "follows a SET of Spark's configuration"))
                continue
            expected = outcomes[i]
            if expected.sql != stmt.sql:
                raise RuntimeError(f"{name}: the recorded results do not match the input; run python -m tests.query.spark_golden.record")
            blocked = sorted(gs.unsupported[t] for t in _tables_read(stmt.sql) if t in gs.unsupported)
            if blocked:
                results.append(QueryResult(name, stmt.sql, "skipped", blocked[0]))
                continue
            results.append(gs.answer(name, stmt.sql, expected))
    return results


def run(paths: list[pathlib.Path] | None = None) -> Report:
    start = time.monotonic()
    report = Report()
    for path in paths or golden.input_files():
        report.results += run_file(path)
    return dataclasses.replace(report, seconds=time.monotonic() - start)


def main() -> None:
    print(run().text())


if __name__ == "__main__":
    main()
