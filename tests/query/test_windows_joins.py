"""Window frames, window functions, JOIN USING and NATURAL JOIN on the local engine give Spark's
answers, names and types: each query runs on both engines (the differential corpus's tables, and
two of this module's with keys of different types) and the outcomes must be equal; each must run
in process. Rows are compared in order where the ORDER BY fixes it, else as multisets.
"""

from __future__ import annotations

import pytest

from tests.query import spark_answers

SETUP = [
    "CREATE TABLE wj_left (k INT, tag STRING, v SMALLINT)",
    "INSERT INTO wj_left VALUES (1, 'a', 10), (2, 'b', NULL), (NULL, 'n', 3), (3, 'c', -4), (3, 'c2', 5), (2147483647, 'max', 1)",
    "CREATE TABLE wj_right (K BIGINT, tag STRING, w DECIMAL(6,2))",
    "INSERT INTO wj_right VALUES (1, 'a', 1.50), (3, 'x', NULL), (NULL, 'n', 0.00), (4, 'd', -2.25), (3, 'c', 9.99)",
]

# (query, ordered): ordered where the ORDER BY fixes every row's place
QUERIES = [
    # frames
    (
        "SELECT id, sum(i) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), "
        "sum(bi) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 2 FOLLOWING) AS s, "
        "sum(dc) OVER (ORDER BY id ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING) AS t, "
        "sum(dw) OVER (PARTITION BY b ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS u FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, count(*) OVER (ORDER BY id ROWS 2 PRECEDING), count(s) OVER (ORDER BY id DESC ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING), "
        "min(s) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), max(dt) OVER (ORDER BY id ROWS CURRENT ROW) FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, sum(ti) OVER (ORDER BY g RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s, "
        "count(*) OVER (ORDER BY g DESC RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS n, "
        "sum(i) OVER (ORDER BY g RANGE BETWEEN CURRENT ROW AND 2 FOLLOWING), count(*) OVER (ORDER BY g RANGE CURRENT ROW) AS c, "
        "sum(i) OVER (ORDER BY g RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, sum(si) OVER (ORDER BY bi RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING), "
        "count(*) OVER (ORDER BY ti RANGE BETWEEN 2 PRECEDING AND 2 FOLLOWING) FROM nums WHERE id NOT IN (2, 3) ORDER BY id",
        True,
    ),
    (
        "SELECT id, count(*) OVER (ORDER BY dc RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING), "
        "count(*) OVER (ORDER BY dt RANGE BETWEEN 365 PRECEDING AND CURRENT ROW) FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, sum(i) OVER (ORDER BY i RANGE BETWEEN 100 PRECEDING AND 100 FOLLOWING) AS s FROM nums WHERE i BETWEEN -1000000 AND 1000000 ORDER BY id",
        True,
    ),
    # default frames, functions
    ("SELECT id, sum(i) OVER (PARTITION BY g ORDER BY id), sum(i) OVER (PARTITION BY g), sum(dc) OVER () FROM nums ORDER BY id", True),
    (
        "SELECT id, avg(i) OVER (ORDER BY id), avg(ti) OVER (PARTITION BY g), "
        "avg(si) OVER (ORDER BY g, id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS a FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, first_value(s) OVER (ORDER BY id), last_value(s) OVER (ORDER BY id), first_value(i, true) OVER (ORDER BY id DESC), "
        "last(i, true) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, first_value(i) IGNORE NULLS OVER (PARTITION BY g ORDER BY id), "
        "last_value(s) IGNORE NULLS OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), "
        "first(dc) OVER (PARTITION BY g ORDER BY id), last(dt) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, nth_value(s, 2) OVER (ORDER BY id), "
        "nth_value(i, 3) IGNORE NULLS OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING), "
        "ntile(3) OVER (ORDER BY id), ntile(5) OVER (PARTITION BY g ORDER BY id), ntile(20) OVER (ORDER BY id DESC) FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, percent_rank() OVER (ORDER BY g), cume_dist() OVER (ORDER BY g), cume_dist() OVER (PARTITION BY b ORDER BY dt DESC), "
        "row_number() OVER (PARTITION BY g ORDER BY id), rank() OVER (ORDER BY g), dense_rank() OVER (ORDER BY g DESC) FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, lag(s, 1, 'none') OVER (ORDER BY id), lead(i, 2, -1) OVER (PARTITION BY g ORDER BY id), lag(ti, 3, 0) OVER (ORDER BY id), "
        "lag(dc) OVER (ORDER BY id), lead(dt, 1, NULL) OVER (ORDER BY id) FROM nums ORDER BY id",
        True,
    ),
    (
        "SELECT id, sum(i) OVER w AS s, count(*) OVER w AS n, row_number() OVER w AS r, sum(i) OVER w2, max(s) OVER (w1) FROM nums "
        "WINDOW w AS (PARTITION BY g ORDER BY id), w1 AS (PARTITION BY b ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), w2 AS w1 ORDER BY id",
        True,
    ),
    (
        "SELECT id, sum(i) OVER (PARTITION BY g % 2 ORDER BY id) + 1, count(*) OVER (ORDER BY s DESC NULLS FIRST, id) FROM nums ORDER BY id",
        True,
    ),
    # JOIN USING, NATURAL JOIN
    ("SELECT * FROM wj_left JOIN wj_right USING (k)", False),
    ("SELECT * FROM wj_left LEFT JOIN wj_right USING (k, tag)", False),
    ("SELECT * FROM wj_left RIGHT OUTER JOIN wj_right USING (tag)", False),
    ("SELECT * FROM wj_left FULL OUTER JOIN wj_right USING (k)", False),
    ("SELECT K, wj_left.k, wj_right.k, tag FROM wj_left FULL JOIN wj_right USING (k, tag)", False),
    ("SELECT * FROM wj_left NATURAL JOIN wj_right", False),
    ("SELECT * FROM wj_left NATURAL FULL OUTER JOIN wj_right ORDER BY k, tag", False),
    ("SELECT wj_right.*, wj_left.* FROM wj_left NATURAL LEFT JOIN wj_right", False),
    ("SELECT * FROM wj_left LEFT SEMI JOIN wj_right USING (k)", False),
    ("SELECT * FROM wj_left LEFT ANTI JOIN wj_right USING (tag)", False),
    ("SELECT * FROM small JOIN keyed USING (k) JOIN wj_left USING (k)", False),
    ("SELECT * FROM small s NATURAL JOIN keyed NATURAL JOIN wj_right", False),
    ("SELECT k, count(*) AS n FROM wj_left JOIN wj_right USING (k) GROUP BY k", False),
    ("SELECT * FROM (SELECT * FROM wj_left NATURAL JOIN wj_right)", False),
    ("SELECT s.k, n.id FROM small s JOIN nums n ON s.k = n.g NATURAL JOIN keyed", False),
]


# Constructs that must go to Spark here, each with the reason
TO_SPARK = {
    "a RANGE bound Spark computes wrapped around in the key's type": "SELECT id, count(*) OVER (ORDER BY i RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM nums",
    "a NATURAL JOIN comparing a string with a number": "SELECT * FROM small s NATURAL JOIN keyed NATURAL JOIN wj_left",
    "a ROWS frame with offsets without ORDER BY": "SELECT id, sum(i) OVER (ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM nums",
    "sum of doubles over a window": "SELECT id, sum(d) OVER (ORDER BY id) AS s FROM nums",
}


@pytest.fixture(scope="module")
def session(tmp_path_factory, spark):
    session = spark_answers.build_session(tmp_path_factory.mktemp("windows_joins"))
    for statement in SETUP:
        list(session.run(statement))
    return session


@pytest.mark.parametrize("sql,ordered", QUERIES, ids=[q[:70] for q, _o in QUERIES])
def test_the_local_engine_gives_spark_s_answer(session, sql, ordered):
    local = spark_answers.outcome(session, "local", sql)
    assert local[0] == "rows", local
    spark = spark_answers.outcome(session, "spark", sql)
    assert spark_answers.canonical(local, ordered) == spark_answers.canonical(spark, ordered)


@pytest.mark.parametrize("construct", sorted(TO_SPARK))
def test_what_the_local_engine_leaves_to_spark(session, construct):
    assert spark_answers.outcome(session, "local", TO_SPARK[construct])[0] == "spark"
