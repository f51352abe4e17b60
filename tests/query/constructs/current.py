"""Constructs of the local set as it stood before issue 37 (docs/semantics.md, "The local set")."""

LOCAL = {
    "column references and *": "SELECT * FROM small",
    "integer arithmetic wrapping around": "SELECT i + 1 AS a, bi * 2 AS b FROM nums",
    "comparisons and <=>": "SELECT id, i < 3 AS lt, i <=> NULL AS ns FROM nums",
    "CASE WHEN, if and coalesce": "SELECT CASE WHEN i > 0 THEN 'p' ELSE 'n' END AS c, if(b, 1, 0) AS f, coalesce(i, 0) AS z FROM nums",
    "string functions": "SELECT upper(CAST(id AS STRING)) AS u, length(s) AS n, substring(s, 2, 2) AS t, trim(s) AS tr, concat(vc, '!') AS c FROM nums",
    "count, sum, min, max with GROUP BY and HAVING": "SELECT g, count(*) AS n, sum(i) AS s, min(dc) AS lo, max(s) AS hi FROM nums GROUP BY g HAVING count(*) > 1",
    "ranking and lag/lead over a window": "SELECT id, row_number() OVER (PARTITION BY g ORDER BY id) AS r, lag(i, 1) OVER (ORDER BY id) AS p FROM nums",
    "joins and set operations": "SELECT small.k FROM small JOIN keyed ON small.k = keyed.k UNION SELECT id FROM nums",
}

# A sum of a floating-point column, Spark only before, now runs in process where no order of
# addition changes it (the aggregates family) and goes to Spark at run time elsewhere.
SPARK_ONLY: dict[str, str] = {}

REJECTED = {
    "an ambiguous column": "SELECT k FROM small JOIN keyed ON small.k = keyed.k",
}
