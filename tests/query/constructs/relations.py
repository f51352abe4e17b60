"""FROM items beyond tables and views: inline tables, range(), column lists on aliases."""

LOCAL = {
    "an inline table (VALUES) with its columns named": "SELECT * FROM VALUES (1, 2), (3, NULL), (-7, 2147483647) AS t(a, b)",
    "an inline table's columns widened as Spark widens them": "SELECT * FROM (VALUES (1, 1.5), (2, 2), (3000000000, NULL)) t(x, y)",
    "an inline table without a name (col1, col2)": "SELECT col1, col2 FROM VALUES (1, 'x'), (2, NULL)",
    "range(end), range(start, end, step)": "SELECT a.id, b.id * 2 AS d FROM range(3) a CROSS JOIN range(2, 10, 3) b",
    "range() of no rows": "SELECT count(*) AS n FROM range(-5)",
    "a subquery alias with a column list": "SELECT x, y FROM (SELECT k, name FROM small) s(x, y) WHERE x > 1",
}

REJECTED = {
    "an inline table mixing strings and numbers in a column": "SELECT * FROM VALUES (1, 'a'), ('b', 2) t(a, b)",
    "an inline table of rows of different widths": "SELECT * FROM VALUES (1, 2), (3) t(a, b)",
    "an alias naming more columns than the inline table has": "SELECT * FROM VALUES (1, 2) t(a, b, c)",
}
