"""Spark's answers to the differential corpus, recorded (tests/query/spark_answers.json): one
digest per query of its outcome on Spark — column names, Spark types, values with their Python
types (the sign of a zero, NaN), row order where the ORDER BY fixes it, or its error line.

Spark takes 0.4 to 2 s a query on this data, so `make test` compares the local engine with this
recording and re-runs a sample of it on Spark each time (tests/query/test_differential.py says
which); `make spark-answers` runs the whole corpus on Spark again and rewrites the file, which a
change of the corpus, of the tables or of Spark's version needs (the test says so when the
recording does not cover the corpus).

    python -m tests.query.spark_answers
"""

from __future__ import annotations

import hashlib
import json
import math
import pathlib
import tempfile

from alterflow import sql as ast
from alterflow.engine.session import Session, StatementError
from tests.query.corpus import Query, corpus, setup_statements

RECORDING = pathlib.Path(__file__).with_name("spark_answers.json")
CORPUS_SEED = 20261126
CORPUS_SIZE = 720


def build_session(home: pathlib.Path) -> Session:
    from alterflow.settings import Settings

    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": "local[2]"}))
    for statement in setup_statements():
        list(session.run(statement))
    return session


def _value(v):
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else repr(v))
    return (type(v).__name__, v)


def outcome(session: Session, engine: str, sql: str) -> tuple:
    """('rows', names, types, rows) or ('error', line); ('spark', reason) where `engine` is local
    and the local engine leaves the query to Spark."""
    session.query_engine = engine
    try:
        result = session.execute(ast.parse_statements(sql)[0])
    except StatementError as exc:
        text = str(exc)
        if engine == "local" and text.startswith("engine = local cannot run this query"):
            return ("spark", text)
        return ("error", text)
    return ("rows", result.columns, result.types, [tuple(_value(v) for v in row) for row in result.rows])


def canonical(result: tuple, ordered: bool) -> tuple:
    """The outcome as compared: rows sorted unless the ORDER BY fixes their order."""
    if result[0] != "rows" or ordered:
        return result
    return (*result[:3], sorted(result[3], key=repr))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def answer_digest(result: tuple, ordered: bool) -> str:
    return digest(repr(canonical(result, ordered)))


def queries() -> list[Query]:
    return corpus(CORPUS_SEED, CORPUS_SIZE)


def load() -> dict[str, str]:
    """{digest of a query's SQL: digest of Spark's answer}."""
    return json.loads(RECORDING.read_text())["answers"]


def _bound_outcome(spark, sql: str) -> tuple:
    """`outcome` on Spark over tables bound and cached once (as Session._select reads a result),
    for recording: the same answers in a fifth of the time (the live sample checks they are)."""
    from alterflow.engine.session import DATE_RANGE_ERROR, _is_date_range_error
    from alterflow.errors import first_line

    try:
        frame = spark.sql(sql)
        rows = frame.collect()
    except Exception as exc:
        if _is_date_range_error(exc):
            return ("error", DATE_RANGE_ERROR)
        if not type(exc).__module__.startswith(("pyspark", "py4j")):
            raise
        return ("error", first_line(exc))
    types = tuple(f.dataType.simpleString() for f in frame.schema.fields)
    return ("rows", tuple(frame.columns), types, [tuple(_value(v) for v in row) for row in rows])


def record() -> None:
    from alterflow.read.query_binding import bind_names
    from tests.query.corpus import NAMES

    with tempfile.TemporaryDirectory() as home:
        session = build_session(pathlib.Path(home))
        spark = session.spark
        bind_names(spark, session.catalog, session.warehouse, NAMES)
        for name in NAMES:
            frame = spark.table(name).cache()
            frame.count()
            frame.createOrReplaceTempView(name)
        answers = {}
        for n, query in enumerate(queries(), 1):
            answers[digest(query.sql)] = answer_digest(_bound_outcome(spark, query.sql), query.ordered)
            if n % 50 == 0:
                print(f"{n} queries recorded", flush=True)
    RECORDING.write_text(json.dumps({"seed": CORPUS_SEED, "size": CORPUS_SIZE, "answers": answers}, indent=0, sort_keys=True) + "\n")
    print(f"{len(answers)} answers written to {RECORDING}")


if __name__ == "__main__":
    record()
