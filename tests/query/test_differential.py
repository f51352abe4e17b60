"""The local engine gives Spark's answers: a generated corpus of distinct queries over tables
built to exercise Spark's semantics (tests/query/corpus.py) runs on the local engine, and each
outcome — column names, Spark types, values with their Python types, row order where the ORDER BY
fixes it, or the error line — must equal Spark's. Spark's answers are recorded
(tests/query/spark_answers.py: 0.4 to 2 s a query on Spark) and a sample of them is run on Spark
again every time; constructs the local engine leaves to Spark are each checked to go to Spark.
"""

from __future__ import annotations

import collections
import random

import pytest

from alterflow import sql as ast
from tests.query import spark_answers
from tests.query.corpus import SPARK_ONLY

LEAST_LOCAL = 500  # queries of the corpus the local engine must run (and agree on)
LIVE_SAMPLE = 24  # recorded answers checked against Spark itself on each run


@pytest.fixture(scope="module")
def differential(tmp_path_factory, spark):
    return spark_answers.build_session(tmp_path_factory.mktemp("differential"))


def _difference(local: tuple, spark: tuple) -> str:
    """What differs between two canonical outcomes, shortly."""
    if local[0] != spark[0] or local[0] != "rows":
        return f"local {local[:2]} / spark {spark[:2]}"
    for what, a, b in (("names", local[1], spark[1]), ("types", local[2], spark[2]), ("row count", len(local[3]), len(spark[3]))):
        if a != b:
            return f"{what} {a} / {b}"
    n, row, other = next((n, r, o) for n, (r, o) in enumerate(zip(local[3], spark[3])) if r != o)
    return f"row {n}: {row} / {other}"


def test_the_recording_covers_the_corpus():
    recorded = spark_answers.load()
    missing = [q.sql for q in spark_answers.queries() if spark_answers.digest(q.sql) not in recorded]
    assert not missing, f"{len(missing)} queries of the corpus have no recorded Spark answer (run make spark-answers): {missing[:3]}"


def test_the_corpus_gives_spark_s_answers_on_the_local_engine(differential):
    recorded = spark_answers.load()
    local_runs, differences, reasons = 0, [], collections.Counter()
    for query in spark_answers.queries():
        local = spark_answers.outcome(differential, "local", query.sql)
        if local[0] == "spark":
            reasons[local[1].split(": ", 1)[1].split(";")[0]] += 1
            continue
        local_runs += 1
        if spark_answers.answer_digest(local, query.ordered) != recorded.get(spark_answers.digest(query.sql)):
            differences.append(query)
    shown = []
    for query in differences[:6]:  # Spark's own answer, to show what differs
        spark = spark_answers.canonical(spark_answers.outcome(differential, "spark", query.sql), query.ordered)
        local = spark_answers.canonical(spark_answers.outcome(differential, "local", query.sql), query.ordered)
        shown.append(f"{query.sql}\n  {_difference(local, spark)}")
    assert not differences, f"{len(differences)} of {local_runs} queries differ from Spark's recorded answers:\n" + "\n".join(shown)
    assert local_runs >= LEAST_LOCAL, f"only {local_runs} queries ran locally; Spark ran the rest for: {reasons.most_common(12)}"


def test_a_sample_of_the_recording_is_spark_s_answer_today(differential):
    """The recording is Spark's answer on this Spark, not a stale copy: a sample run again."""
    recorded = spark_answers.load()
    sample = random.Random(spark_answers.CORPUS_SEED).sample(spark_answers.queries(), LIVE_SAMPLE)
    stale = [
        q.sql
        for q in sample
        if spark_answers.answer_digest(spark_answers.outcome(differential, "spark", q.sql), q.ordered)
        != recorded[spark_answers.digest(q.sql)]
    ]
    assert not stale, f"{len(stale)} recorded answers are no longer Spark's (run make spark-answers): {stale[:3]}"


@pytest.mark.parametrize("construct", sorted(SPARK_ONLY))
def test_a_construct_on_the_spark_only_list_runs_on_spark(differential, construct):
    sql = SPARK_ONLY[construct]
    differential.query_engine = "auto"
    engine, reason = differential.execute(ast.parse_statements(f"EXPLAIN {sql}")[0]).rows[0]
    assert engine == "spark", f"{construct}: {reason}"
    assert spark_answers.outcome(differential, "auto", sql) == spark_answers.outcome(differential, "spark", sql)
