"""What Spark's parser and analyzer refuse is never answered in process, and what Spark accepts is
never refused because sqlglot cannot read it (it goes to Spark, as written)."""

SPARK_ONLY = {
    "corr(DISTINCT x, y) (sqlglot cannot parse it)": "SELECT corr(DISTINCT x, y), count(*) FROM (VALUES (1, 1), (2, 2), (2, 2)) t(x, y)",
    "an aggregate FILTER (WHERE ...) over a window": "SELECT k, count(k) FILTER (WHERE k > 1) OVER (PARTITION BY name) AS c FROM small",
}

LOCAL = {
    "first_value(x, true) over a named window": "SELECT k, first_value(k, true) OVER w AS f FROM small WINDOW w AS (ORDER BY name)",
    "x::type over a column or a literal": "SELECT '7'::int AS a, k::string AS b FROM small",
}

REJECTED = {
    "count() without an argument": "SELECT count() FROM small",
    "a negative ORDER BY position": "SELECT * FROM small ORDER BY -1",
    "a negative GROUP BY position": "SELECT k, count(*) AS n FROM small GROUP BY -1",
    "x::type over an operator (Spark's :: binds tighter)": "SELECT FALSE IS NOT NULL :: string",
    "a CTE name defined twice": "WITH t AS (SELECT 1 AS x), t AS (SELECT 2 AS x) SELECT * FROM t",
    "a query Spark cannot parse either": "SELECT corr(DISTINCT x y) FROM small",
}
