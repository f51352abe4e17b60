"""Subqueries, CTEs and CASE forms as Spark's parser and analyzer read them."""

LOCAL = {
    "scalar subqueries, named scalarsubquery()": "SELECT (SELECT max(k) FROM small), (SELECT 1) + 1",
    "EXISTS, named exists()": "SELECT NOT EXISTS (SELECT 1 FROM small WHERE k > 1000), EXISTS (SELECT 1) FROM small",
    "IN (subquery) and NOT IN among a WHERE's conditions": "SELECT k FROM small WHERE k NOT IN (SELECT k FROM small WHERE k > 5) AND (k > 1 OR k IN (SELECT id FROM nums WHERE id > 6))",
    "a subquery in FROM without an alias": "SELECT * FROM (SELECT k, name FROM small) WHERE k > 2",
    "a CTE with a column list": "WITH t(a, b) AS (SELECT k, name FROM small) SELECT a, b FROM t WHERE a > 1",
    "CASE x WHEN v THEN ...": "SELECT CASE k WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'other' END, CASE k WHEN 1.0 THEN 1 END AS x FROM small",
}

SPARK_ONLY = {
    "IN (subquery) outside a WHERE condition (Spark answers false for a NULL value)": "SELECT k IN (SELECT k FROM small WHERE k > 5) AS x FROM small",
}

REJECTED = {
    "CASE WHEN NULL (a condition of type VOID)": "SELECT CASE WHEN k > 1 THEN 1 WHEN NULL THEN 2 END AS c FROM small",
    "a CTE column list of another width than its query": "WITH t(a) AS (SELECT 1, 2) SELECT * FROM t",
    "WHERE NULL": "SELECT k FROM small WHERE NULL",
}
