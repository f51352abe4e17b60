"""Subqueries, CTEs and CASE forms as Spark's parser and analyzer read them."""

LOCAL = {
    "scalar subqueries, named scalarsubquery()": "SELECT (SELECT max(k) FROM small), (SELECT 1) + 1",
    "EXISTS, named exists()": "SELECT NOT EXISTS (SELECT 1 FROM small WHERE k > 1000), EXISTS (SELECT 1) FROM small",
    "IN (subquery) and NOT IN among a WHERE's conditions": "SELECT k FROM small WHERE k NOT IN (SELECT k FROM small WHERE k > 5) AND (k > 1 OR k IN (SELECT id FROM nums WHERE id > 6))",
    "correlated EXISTS and NOT EXISTS (any condition in the subquery's WHERE)": (
        "SELECT id FROM nums n WHERE EXISTS (SELECT 1 FROM small WHERE small.k = n.g) "
        "AND NOT EXISTS (SELECT * FROM small s WHERE s.k = n.i OR n.i IS NULL OR s.w > n.dc)"
    ),
    "correlated IN (subquery) among a WHERE's conditions": "SELECT id FROM nums WHERE g IN (SELECT k FROM small WHERE small.w > nums.dc) OR id > 9",
    "correlated scalar subqueries that aggregate, correlated by equalities": (
        "SELECT id, (SELECT max(w) FROM small WHERE small.k = nums.g) AS m, (SELECT count(*) FROM small WHERE k = nums.g AND w > 0) AS n "
        "FROM nums WHERE dc < (SELECT sum(w) FROM small WHERE (k = nums.g))"
    ),
    "a subquery in FROM without an alias": "SELECT * FROM (SELECT k, name FROM small) WHERE k > 2",
    "a CTE with a column list": "WITH t(a, b) AS (SELECT k, name FROM small) SELECT a, b FROM t WHERE a > 1",
    "CASE x WHEN v THEN ...": "SELECT CASE k WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'other' END, CASE k WHEN 1.0 THEN 1 END AS x FROM small",
}

SPARK_ONLY = {
    "IN (subquery) outside a WHERE condition (Spark answers false for a NULL value)": "SELECT k IN (SELECT k FROM small WHERE k > 5) AS x FROM small",
    "a correlated scalar subquery correlated by another comparison": "SELECT id, (SELECT max(w) FROM small WHERE small.k < nums.g) AS m FROM nums",
    "a correlated subquery in a derived table (a lateral reference)": "SELECT id FROM nums WHERE EXISTS (SELECT 1 FROM (SELECT k FROM small WHERE k = nums.g))",
}

REJECTED = {
    "CASE WHEN NULL (a condition of type VOID)": "SELECT CASE WHEN k > 1 THEN 1 WHEN NULL THEN 2 END AS c FROM small",
    "a CTE column list of another width than its query": "WITH t(a) AS (SELECT 1, 2) SELECT * FROM t",
    "WHERE NULL": "SELECT k FROM small WHERE NULL",
    "a correlated scalar subquery in an aggregate query, outside its aggregates": "SELECT g, (SELECT max(w) FROM small WHERE small.k = nums.g) AS m FROM nums GROUP BY g",
    "a correlated scalar subquery that does not aggregate (Spark fails where it meets several rows)": "SELECT id, (SELECT w FROM small WHERE small.k = nums.g) AS m FROM nums",
}
