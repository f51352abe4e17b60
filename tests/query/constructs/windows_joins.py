"""Window frames and window functions, JOIN USING and NATURAL JOIN (issue 37; docs/semantics.md,
"The local set"): unaliased where Spark's long window names are reproduced."""

SETUP = [
    "CREATE TABLE wjc_left (k INT, tag STRING, v SMALLINT)",
    "INSERT INTO wjc_left VALUES (1, 'a', 10), (2, 'b', NULL), (NULL, 'n', 3), (3, 'c', -4), (3, 'c2', 5)",
    "CREATE TABLE wjc_right (K BIGINT, tag STRING, w DECIMAL(6,2))",
    "INSERT INTO wjc_right VALUES (1, 'a', 1.50), (3, 'x', NULL), (NULL, 'n', 0.00), (4, 'd', -2.25), (3, 'c', 9.99)",
]

LOCAL = {
    "ROWS frames with offsets": "SELECT id, sum(i) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), count(s) OVER (ORDER BY id ROWS 2 PRECEDING) FROM nums",
    "RANGE frames with offsets over integral, decimal and DATE keys": "SELECT id, count(*) OVER (ORDER BY g DESC RANGE BETWEEN 1 PRECEDING AND CURRENT ROW), count(*) OVER (ORDER BY dc RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING), count(*) OVER (ORDER BY dt RANGE BETWEEN 365 PRECEDING AND CURRENT ROW) FROM nums",
    "the default frames (with and without ORDER BY)": "SELECT id, sum(bi) OVER (PARTITION BY g ORDER BY id), sum(dw) OVER (PARTITION BY b), max(s) OVER () FROM nums",
    "avg of integers over a window": "SELECT id, avg(i) OVER (ORDER BY id), avg(ti) OVER (PARTITION BY g) FROM nums",
    "first_value, last_value, nth_value, with IGNORE NULLS": "SELECT id, first_value(i) IGNORE NULLS OVER (ORDER BY id DESC), last_value(s, true) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), nth_value(dc, 2) OVER (PARTITION BY g ORDER BY id) FROM nums",
    "ntile, percent_rank, cume_dist": "SELECT id, ntile(5) OVER (ORDER BY id), percent_rank() OVER (ORDER BY g), cume_dist() OVER (PARTITION BY b ORDER BY dt DESC) FROM nums",
    "lag and lead with a default": "SELECT id, lag(s, 1, 'none') OVER (ORDER BY id), lead(ti, 2, 0) OVER (PARTITION BY g ORDER BY id) FROM nums",
    "named windows": "SELECT id, sum(i) OVER w, rank() OVER w2 FROM nums WINDOW w AS (PARTITION BY g ORDER BY id), w2 AS w",
    "JOIN USING (inner, LEFT, RIGHT, FULL; keys of different types)": "SELECT * FROM wjc_left FULL OUTER JOIN wjc_right USING (k)",
    "qualified columns and * after JOIN USING": "SELECT k, wjc_left.k, wjc_right.*, tag FROM wjc_left RIGHT JOIN wjc_right USING (k, tag)",
    "NATURAL JOIN": "SELECT * FROM wjc_left NATURAL LEFT JOIN wjc_right",
    "LEFT SEMI JOIN USING": "SELECT * FROM wjc_left LEFT SEMI JOIN wjc_right USING (tag)",
    "a subquery in FROM without an alias": "SELECT * FROM (SELECT * FROM wjc_left NATURAL JOIN wjc_right)",
}

SPARK_ONLY = {
    "a RANGE frame with offsets over a floating-point key": "SELECT id, count(*) OVER (ORDER BY d RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS n FROM nums",
    "a ROWS frame with offsets without ORDER BY (the row order is Spark's)": "SELECT id, sum(i) OVER (ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM nums",
    "sum and avg of floating-point numbers over a window (the order of addition)": "SELECT id, sum(d) OVER (ORDER BY id) AS s, avg(f) OVER (ORDER BY id) AS a FROM nums",
    "avg of BIGINT over a window (a double accumulator)": "SELECT id, avg(bi) OVER (ORDER BY id) AS a FROM nums",
    "lag and lead IGNORE NULLS": "SELECT id, lag(i) IGNORE NULLS OVER (ORDER BY id) AS p FROM nums",
    "a NATURAL JOIN comparing a string with a number": "SELECT * FROM small NATURAL JOIN keyed NATURAL JOIN wjc_left",
    "a NATURAL JOIN without common columns": "SELECT * FROM small NATURAL JOIN nums",
}

REJECTED = {
    "a DISTINCT window aggregate": "SELECT id, count(DISTINCT i) OVER (PARTITION BY g) AS n FROM nums",
    "a frame whose lower bound is above its upper bound": "SELECT id, sum(i) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 1 PRECEDING) AS s FROM nums",
    "a RANGE frame with offsets over two keys": "SELECT id, sum(i) OVER (ORDER BY g, id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM nums",
    "a JOIN USING column one side lacks": "SELECT * FROM small JOIN keyed USING (name)",
}
