"""What Spark's parser and analyzer refuse is never answered in process, and what Spark accepts is
never refused because sqlglot cannot read it (it goes to Spark, as written)."""

SPARK_ONLY = {
    "ORDER BY an integer past INT (for Spark a BIGINT constant, not a position)": "SELECT k FROM small ORDER BY 99999999999, k",
    "corr(DISTINCT x, y) (sqlglot cannot parse it)": "SELECT corr(DISTINCT x, y), count(*) FROM (VALUES (1, 1), (2, 2), (2, 2)) t(x, y)",
    "an aggregate FILTER (WHERE ...) over a window": "SELECT k, count(k) FILTER (WHERE k > 1) OVER (PARTITION BY name) AS c FROM small",
}

LOCAL = {
    "ORDER BY and GROUP BY positions within the SELECT list": "SELECT k, count(*) AS n FROM small GROUP BY 1 ORDER BY 2 DESC, 1",
    "functions called with every count Spark accepts": "SELECT round(k) AS a, round(w, 1) AS b, concat(name) AS c, concat(name, name, name) AS d FROM small",
    "first_value(x, true) over a named window": "SELECT k, first_value(k, true) OVER w AS f FROM small WINDOW w AS (ORDER BY name)",
    "x::type over a column or a literal": "SELECT '7'::int AS a, k::string AS b FROM small",
}

REJECTED = {
    "count() without an argument": "SELECT count() FROM small",
    "a negative ORDER BY position": "SELECT * FROM small ORDER BY -1",
    "ORDER BY position 0": "SELECT k, name FROM small ORDER BY 0",
    "an ORDER BY position past the SELECT list": "SELECT k FROM small ORDER BY name, 2",
    "an ORDER BY position past a set operation's columns": "SELECT k FROM small UNION SELECT k FROM small ORDER BY 2",
    "an ORDER BY position on a second line": "SELECT k\nFROM small\n  ORDER BY 3",
    "a negative GROUP BY position": "SELECT k, count(*) AS n FROM small GROUP BY -1",
    "GROUP BY position 0": "SELECT k, count(*) AS n FROM small GROUP BY 0",
    "a GROUP BY position past the SELECT list": "SELECT k, count(*) AS n FROM small GROUP BY 3",
    "an empty IN list": "SELECT k FROM small WHERE k IN ()",
    "NOT IN an empty list": "SELECT k NOT IN () AS x FROM small",
    "an empty set in ROLLUP": "SELECT k, count(*) AS n FROM small GROUP BY ROLLUP(k, ())",
    "an empty set in CUBE": "SELECT k, count(*) AS n FROM small GROUP BY CUBE((), k)",
    "a function of one argument given two": "SELECT abs(k, 1) AS a FROM small",
    "a function of one argument given none": "SELECT upper() AS u FROM small",
    "round of three arguments": "SELECT round(k, 1, 2) AS r FROM small",
    "a wrong count beside a right one": "SELECT coalesce(k) AS c, lower(name, name) AS l FROM small",
    "an aggregate of two arguments": "SELECT sum(k, k) AS s FROM small",
    "a wrong count in WHERE": "SELECT k FROM small WHERE length(name, 1) > 0",
    "a wrong count in a subquery": "SELECT k FROM small WHERE k IN (SELECT abs() FROM small)",
    "row_number() of an argument, over a window": "SELECT k, row_number(k) OVER (ORDER BY k) AS r FROM small",
    "lag of five arguments": "SELECT lag(k, 1, 0, 1, 2) OVER (ORDER BY k) AS l FROM small",
    "a function Spark does not know": "SELECT truncate(k, 1) AS t FROM small",
    "a function Spark does not know, in upper case": "SELECT GCD(k, 2) AS g FROM small",
    "x::type over an operator (Spark's :: binds tighter)": "SELECT FALSE IS NOT NULL :: string",
    "a CTE name defined twice": "WITH t AS (SELECT 1 AS x), t AS (SELECT 2 AS x) SELECT * FROM t",
    "two CTE names defined twice": "WITH t AS (SELECT 1 AS x), u AS (SELECT 1 AS x), t AS (SELECT 2 AS x), u AS (SELECT 2 AS x) SELECT * FROM t",
    "a query Spark cannot parse either": "SELECT corr(DISTINCT x y) FROM small",
}
