"""Each construct docs/semantics.md names, by example (tests/query/constructs/): one of the local
set runs in process with Spark's recorded answer; one left to Spark goes there; one Spark refuses is
refused with Spark's line or handed to Spark, never answered. A sample of the recordings is run on
Spark again each time, so they cannot drift from Spark.
"""

from __future__ import annotations

import random

import pytest

from alterflow import sql as ast
from tests.query import constructs, spark_answers
from tests.query.constructs import Expectation

EXAMPLES = constructs.all_examples()
LIVE_SAMPLE = 12


@pytest.fixture(scope="module")
def session(tmp_path_factory, spark):
    built = spark_answers.build_session(tmp_path_factory.mktemp("constructs"))
    for statement in constructs.setup_statements():
        list(built.run(statement))
    return built


def _recorded(example: constructs.Example) -> str:
    answer = constructs.load(example.family).get(spark_answers.digest(example.sql))
    assert answer is not None, f"{example.id}: no recorded Spark answer (run python -m tests.query.constructs {example.family})"
    return answer


def _engine(session, sql: str) -> tuple[str, str]:
    session.query_engine = "auto"
    engine, reason = session.execute(ast.parse_statements(f"EXPLAIN {sql}")[0]).rows[0]
    return engine, reason


def test_the_docs_list_exactly_the_examples():
    """docs/semantics.md's lists of what runs in process, on Spark only, or is refused are these
    examples' names: a construct added, moved or dropped changes the docs too."""
    assert constructs.docs_text() == constructs.docs_section(), "docs/semantics.md is stale: run python -m tests.query.constructs --docs"


def test_every_example_has_a_recorded_answer():
    missing = [e.id for e in EXAMPLES if spark_answers.digest(e.sql) not in constructs.load(e.family)]
    assert not missing, f"run python -m tests.query.constructs: {missing[:5]}"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.expectation is Expectation.LOCAL], ids=lambda e: e.id)
def test_a_construct_of_the_local_set_runs_in_process_with_spark_s_answer(session, example):
    engine, reason = _engine(session, example.sql)
    assert engine == "local", f"{example.id}: {reason}"
    local = spark_answers.outcome(session, "local", example.sql)
    assert spark_answers.answer_digest(local, False) == _recorded(example), f"{example.id}: local answer {local} is not Spark's"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.expectation is Expectation.SPARK_ONLY], ids=lambda e: e.id)
def test_a_construct_left_to_spark_goes_to_spark(session, example):
    engine, reason = _engine(session, example.sql)
    assert engine == "spark", f"{example.id}: {reason}"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.expectation is Expectation.REJECTED], ids=lambda e: e.id)
def test_a_query_spark_refuses_is_never_answered_in_process(session, example):
    local = spark_answers.outcome(session, "local", example.sql)
    assert local[0] != "rows", f"{example.id}: the local engine answered a query Spark refuses: {local}"
    if local[0] == "error":  # refused in process: with Spark's own line
        assert spark_answers.answer_digest(local, False) == _recorded(example), f"{example.id}: {local[1]} is not Spark's error"


def test_a_sample_of_the_recordings_is_spark_s_answer_today(session):
    sample = random.Random(spark_answers.CORPUS_SEED).sample(EXAMPLES, min(LIVE_SAMPLE, len(EXAMPLES)))
    stale = [e.id for e in sample if spark_answers.answer_digest(spark_answers.outcome(session, "spark", e.sql), False) != _recorded(e)]
    assert not stale, f"recorded answers no longer Spark's (run python -m tests.query.constructs): {stale}"
