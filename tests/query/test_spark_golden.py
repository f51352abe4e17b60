"""Spark's own SQL golden tests as the outside oracle of the local engine
(tests/query/spark_golden/runner.py): no local answer may differ from Spark's, the local path
may not crash, and the share of the eligible queries answered in process may not fall below
the floor (raised as the engine takes more constructs; the goal is 70%). No Spark runs here:
Spark's outcomes were recorded once (`python -m tests.query.spark_golden.record`)."""

from __future__ import annotations

import functools

import pytest

from tests.query.spark_golden import golden, runner

# The share measured with 30 input files (672 of 870 eligible queries, 77.2%), less a point; the
# issue's goal is 70%.
IN_PROCESS_FLOOR = 0.76

# Wrong answers the engine gives today, each listed for the lead to have fixed (file, query).
# A listed query that comes right fails the test too, so that the list only shrinks.
KNOWN_WRONG: set[tuple[str, str]] = set()  # none today


@functools.lru_cache(maxsize=1)
def report() -> runner.Report:
    return runner.run()


def test_recording_covers_every_input():
    for path in golden.input_files():
        name = golden.file_name(path)
        if golden.directives(path.read_text()):
            continue
        recorded = [o.sql for o in golden.read_results(golden.results_path(name))]
        statements = [s.sql for s in golden.statements(path)]
        assert statements[: len(recorded)] == recorded, f"{name}: run python -m tests.query.spark_golden.record"


def test_no_wrong_answer_beyond_the_known_ones():
    wrong = {(r.file, r.sql): r.detail for r in report().of("wrong")}
    new = {key: detail for key, detail in wrong.items() if key not in KNOWN_WRONG}
    assert not new, "wrong local answers:\n" + "\n".join(f"[{f}] {q}\n    {d}" for (f, q), d in new.items())
    fixed = KNOWN_WRONG - set(wrong)
    assert not fixed, f"now right (or no longer local): remove from KNOWN_WRONG: {sorted(fixed)}"


def test_no_crash():
    crashes = report().of("crash")
    assert not crashes, "\n".join(f"[{r.file}] {r.sql}: {r.detail}" for r in crashes)


def test_in_process_share_floor():
    r = report()
    assert len(r.eligible) >= 200  # the golden set is read whole
    assert r.share >= IN_PROCESS_FLOOR, r.text()


@pytest.mark.parametrize(
    "value, type_name, text",
    [
        (None, "int", "NULL"),
        (True, "boolean", "true"),
        (1.0, "double", "1.0"),
        (1e7, "double", "1.0E7"),
        (1234567.5, "double", "1234567.5"),
        (0.001, "double", "0.001"),
        (0.0001, "double", "1.0E-4"),
        (-2.5e-10, "double", "-2.5E-10"),
        (float("nan"), "double", "NaN"),
        (float("-inf"), "double", "-Infinity"),
        (-0.0, "double", "-0.0"),
        (0.1, "float", "0.1"),
        (3.4e38, "float", "3.4E38"),
        (123.0, "double", "123.0"),
    ],
)
def test_values_print_as_spark_prints_them(value, type_name, text):
    assert runner.spark_text(value, type_name) == text


def test_decimals_dates_and_timestamps_print_as_spark_prints_them():
    import datetime
    import decimal

    assert runner.spark_text(decimal.Decimal("1.50"), "decimal(3,2)") == "1.50"
    assert runner.spark_text(decimal.Decimal("1E+2"), "decimal(3,0)") == "100"
    assert runner.spark_text(datetime.date(1, 1, 1), "date") == "0001-01-01"
    assert runner.spark_text(datetime.datetime(2020, 1, 1, 10, 0, 0, 500000), "timestamp_ntz") == "2020-01-01 10:00:00.5"
    assert runner.spark_text(datetime.datetime(2020, 1, 1), "timestamp_ntz") == "2020-01-01 00:00:00"


def test_ordered_answers_may_differ_from_spark_only_in_the_order_of_ties(tmp_path):
    gs = runner.GoldenSession(tmp_path)
    rows = [["a", 1], ["b", 1], ["c", 2], ["d", None]]
    gs.apply({"kind": "load", "name": "tie", "columns": [["k", "STRING"], ["v", "INT"]], "rows": rows})

    def judged(sql: str, lines: list[str]) -> str:
        return gs.answer("t", sql, golden.Outcome(sql, "struct<k:string>", tuple(lines))).status

    ascending = "SELECT k FROM tie ORDER BY v"  # NULLs first
    assert judged(ascending, ["d", "a", "b", "c"]) == "local_right"
    assert judged(ascending, ["d", "b", "a", "c"]) == "local_right"
    assert judged(ascending, ["d", "a", "c", "b"]) == "wrong"  # c is not tied with a or b
    assert judged(ascending, ["a", "b", "d", "c"]) == "wrong"  # the NULL key sorts first
    assert judged(ascending, ["d", "a", "a", "c"]) == "wrong"
    assert judged(ascending, ["d", "a", "b"]) == "wrong"
    descending = "SELECT k FROM tie ORDER BY v DESC"  # NULLs last
    assert judged(descending, ["c", "b", "a", "d"]) == "local_right"
    assert judged(descending, ["c", "a", "b", "d"]) == "local_right"
    assert judged(descending, ["d", "c", "a", "b"]) == "wrong"
    # By an output alias and by position: the same ties.
    for sql, schema in (
        ("SELECT k, v AS w FROM tie ORDER BY w", "struct<k:string,w:int>"),
        ("SELECT k, v FROM tie ORDER BY 2", "struct<k:string,v:int>"),
    ):
        assert gs.answer("t", sql, golden.Outcome(sql, schema, ("d\tNULL", "b\t1", "a\t1", "c\t2"))).status == "local_right"
        assert gs.answer("t", sql, golden.Outcome(sql, schema, ("d\tNULL", "b\t1", "c\t2", "a\t1"))).status == "wrong"
    # DISTINCT keeps the strict comparison: exactly one order of the tied rows is the local one.
    # One local answer is judged against both orders (DuckDB's hash aggregate may order the tied
    # rows differently from one run to the next, so the query is not run twice).
    from alterflow import sql as ast
    from alterflow.query.local_engine import run_local

    distinct = "SELECT DISTINCT k, v FROM tie ORDER BY v"
    choice = gs.session.engine_choice(distinct, gs.session.query_names(ast.parse_statements(distinct)[0]))
    result = run_local(gs.session.warehouse, choice.plan, as_rows=True)
    verdicts = sorted(
        gs._judged("t", distinct, golden.Outcome(distinct, "struct<k:string,v:int>", lines), result).status
        for lines in (("d\tNULL", "a\t1", "b\t1", "c\t2"), ("d\tNULL", "b\t1", "a\t1", "c\t2"))
    )
    assert verdicts == ["local_right", "wrong"]


def test_order_key_rewrite():
    assert runner.order_key_rewrite("SELECT a AS x, b FROM t ORDER BY x DESC, 2") == (
        "SELECT a AS x, b, a AS golden_order_key_0, b AS golden_order_key_1 FROM t ORDER BY x DESC, 2",
        [(True, False), (False, True)],
    )
    assert runner.order_key_rewrite("SELECT a FROM t ORDER BY b NULLS LAST")[1] == [(False, False)]
    for impossible in (
        "SELECT DISTINCT a FROM t ORDER BY a",
        "SELECT a FROM t UNION SELECT b FROM u ORDER BY 1",
        "SELECT * FROM t ORDER BY 1",
        "SELECT a FROM t ORDER BY 3",
        "SELECT a FROM t",
    ):
        assert runner.order_key_rewrite(impossible) is None, impossible
