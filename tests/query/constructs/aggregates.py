"""Aggregates and GROUPING SETS/CUBE/ROLLUP (issue 37): boolean aggregates, count_if, count of
several DISTINCT columns, DISTINCT sum/avg/min/max, FILTER (WHERE ...), avg of BIGINT and small
DECIMALs, exact percentiles of integers, grouping()/grouping_id(), the floating-point moments and
linear regression in Spark's order of accumulation, sums and averages of doubles."""

SETUP = [
    "CREATE TABLE agg_data (k INT, v INT, flag BOOLEAN, amount DECIMAL(8,3), big BIGINT)",
    "INSERT INTO agg_data VALUES (1, 10, TRUE, 1.125, 9007199254740993), (1, -10, FALSE, -1.125, 1),"
    " (1, NULL, NULL, NULL, NULL), (2, NULL, NULL, NULL, NULL), (2, NULL, NULL, NULL, NULL),"
    " (3, 7, TRUE, 0.001, -5), (3, 7, TRUE, 0.002, -6), (3, 8, TRUE, 0.002, -7), (NULL, 0, FALSE, 0.000, 0)",
    # one file, so that Spark reads it in one task: k 1 an ordinary group with a NULL pair, 2 one
    # row, 3 a constant y, 4 only NULLs
    "CREATE TABLE moment_data (k INT, y INT, x DOUBLE)",
    "INSERT INTO moment_data VALUES (1, 0, 4.0), (1, NULL, 3.0), (1, -4, 2.0), (1, 4, 1.0), (1, 6, 0.0), (2, 7, 1.5),"
    " (3, 2, 1.0), (3, 2, -2.0), (3, 2, 4.0), (3, NULL, NULL), (4, NULL, NULL)",
    "CREATE TABLE moment_files (y INT, x DOUBLE)",
    "INSERT INTO moment_files VALUES (0, 4.0), (-4, 2.0)",
    "INSERT INTO moment_files VALUES (4, 1.0), (6, 0.0)",
]

LOCAL = {
    "every, bool_and, any, some, bool_or over NULLs and empty groups": (
        "SELECT k, every(flag), bool_and(flag), any(flag), some(flag), bool_or(flag) FROM agg_data GROUP BY k ORDER BY k"
    ),
    "count_if of a condition and of NULL": "SELECT g, count_if(i > 0), count_if(b) FROM nums GROUP BY g ORDER BY g",
    "count(DISTINCT a, b): tuples with no NULL member": "SELECT count(DISTINCT g, b), count(DISTINCT ti, d), count(DISTINCT k, v) FROM nums, agg_data",
    "sum, avg, min, max and count of DISTINCT values": "SELECT k, sum(DISTINCT v), avg(DISTINCT v), max(DISTINCT v), count(DISTINCT v) FROM agg_data GROUP BY k ORDER BY k",
    "FILTER (WHERE ...) on aggregates": (
        "SELECT g, count(*) FILTER (WHERE i < 0), sum(bi) FILTER (WHERE b), min(s) FILTER (WHERE i IS NOT NULL),"
        " count(DISTINCT b) FILTER (WHERE g > 1) FROM nums GROUP BY g ORDER BY g"
    ),
    "avg of a BIGINT whose magnitudes sum within 2**53": "SELECT k, avg(big) FROM agg_data WHERE k <> 1 OR k IS NULL GROUP BY k ORDER BY k",
    "avg of a DECIMAL of up to 12 digits, rounded half up": "SELECT k, avg(amount), avg(DISTINCT amount) FROM agg_data GROUP BY k ORDER BY k",
    "avg of DECIMAL columns of the corpus": "SELECT g, avg(dc) FROM nums GROUP BY g ORDER BY g",
    "percentile and median of integers": "SELECT g, percentile(i, 0.5), percentile(ti, 0), median(si), percentile(bi, 1) FROM nums GROUP BY g ORDER BY g",
    "percentile_cont WITHIN GROUP, ascending and descending": (
        "SELECT percentile_cont(0.3) WITHIN GROUP (ORDER BY v), percentile_cont(0.3) WITHIN GROUP (ORDER BY v DESC) FROM agg_data"
    ),
    "aggregates over no rows": "SELECT count(*), sum(i), avg(i), every(b), count_if(b), percentile(i, 0.5) FROM nums WHERE id > 100",
    "ROLLUP with grouping() and grouping_id()": (
        "SELECT g, b, count(*), sum(i), grouping(g), grouping_id() FROM nums GROUP BY ROLLUP (g, b) ORDER BY 1, 2, 5, 6"
    ),
    "CUBE with grouping_id(a, b)": "SELECT g, b, count(*), grouping_id(g, b) FROM nums GROUP BY CUBE (g, b) ORDER BY 1, 2, 4",
    "GROUPING SETS with an empty set and duplicates": (
        "SELECT k, flag, count(*), sum(v) FROM agg_data GROUP BY GROUPING SETS ((k, flag), (k), (k), ()) ORDER BY 1, 2, 3"
    ),
    "GROUP BY a, b WITH ROLLUP and WITH CUBE": "SELECT g, b, sum(ti) FROM nums GROUP BY g, b WITH CUBE ORDER BY 1, 2, 3",
    "GROUP BY a, b GROUPING SETS (...)": "SELECT g, b, sum(ti), grouping_id() AS gid FROM nums GROUP BY g, b GROUPING SETS ((g), (b)) ORDER BY 1, 2, 4",
    "GROUPING SETS beside other keys: the product of both": (
        "SELECT g, b, count(*) AS n, grouping_id() AS gid FROM nums GROUP BY g, GROUPING SETS ((g, b), (b), ()) ORDER BY 1, 2, 3, 4"
    ),
    "GROUP BY a, b GROUPING SETS (a): b is NULL in every row": "SELECT g, b, count(*) AS n FROM nums GROUP BY g, b GROUPING SETS (g) ORDER BY g, b",
    "a key beside CUBE: grouping columns in order of appearance": "SELECT b, g, grouping_id() FROM nums GROUP BY b, CUBE(g, b) ORDER BY 1, 2, 3",
    "ROLLUP of an expression and of a position": "SELECT g % 2, count(*) AS n FROM nums GROUP BY ROLLUP (1) ORDER BY 1, 2",
    "HAVING and ORDER BY grouping()": (
        "SELECT g, count(*) AS n FROM nums GROUP BY ROLLUP (g) HAVING grouping(g) = 1 OR count(*) > 2 ORDER BY grouping(g), g"
    ),
    "ROLLUP of a DOUBLE (-0.0 grouped with 0.0)": "SELECT d, count(*) FROM nums GROUP BY ROLLUP (d) ORDER BY 1, 2",
    "stddev, variance, skewness, kurtosis: Spark's accumulation in the rows' order, over one table of one file": (
        "SELECT k, stddev(y), stddev_samp(y), stddev_pop(y), variance(y), var_samp(y), var_pop(y), skewness(y), kurtosis(y)"
        " FROM moment_data GROUP BY k ORDER BY k"
    ),
    "corr, covar_pop, covar_samp of (y, x)": "SELECT k, corr(y, x), covar_pop(y, x), covar_samp(y, x) FROM moment_data GROUP BY k ORDER BY k",
    "regr_sxx, regr_sxy, regr_syy, regr_slope, regr_intercept, regr_r2 of (y, x)": (
        "SELECT k, regr_sxx(y, x), regr_sxy(y, x), regr_syy(y, x), regr_slope(y, x), regr_intercept(y, x), regr_r2(y, x)"
        " FROM moment_data GROUP BY k ORDER BY k"
    ),
    "regr_count, regr_avgx, regr_avgy: count and averages of the pairs without a NULL": (
        "SELECT k, regr_count(y, x), regr_avgx(y, x), regr_avgy(y, x), regr_avgx(x, y) FROM moment_data GROUP BY k ORDER BY k"
    ),
    "moments over the whole table, under WHERE and FILTER": (
        "SELECT stddev(y) FILTER (WHERE x > 0), corr(y, x), regr_slope(y, x) FILTER (WHERE y IS NOT NULL) FROM moment_data WHERE k = 1"
    ),
    "sum and avg of a DOUBLE where no order of addition changes the sum": (
        "SELECT k, sum(x), avg(x), sum(DISTINCT x), avg(CAST(x AS FLOAT)), sum(-x) FROM moment_data GROUP BY k ORDER BY k"
    ),
}

SPARK_ONLY = {
    "stddev, variance, corr, covar, skewness, kurtosis over a table of several files, which Spark reads in several tasks": (
        "SELECT stddev(x) AS a, var_pop(y) AS b, corr(y, x) AS c, covar_samp(y, x) AS e, skewness(y) AS f, regr_r2(y, x) AS h"
        " FROM moment_files"
    ),
    "moments over a join (the rows' order is not one table's)": "SELECT stddev(a.y) AS s FROM moment_data a JOIN moment_data b ON a.k = b.k",
    "moments of DISTINCT values": "SELECT stddev(DISTINCT y) AS s FROM moment_data",
    "moments under a WHERE with IN (subquery) or EXISTS (Spark joins, which may reorder the rows)": (
        "SELECT var_pop(y) AS v FROM moment_data WHERE k IN (SELECT k FROM moment_data WHERE x > 0)"
    ),
    "moments of a DECIMAL: Spark's conversion to double not reproduced": "SELECT var_pop(amount) AS v FROM agg_data",
    "std(x) (sqlglot has no class for it)": "SELECT std(i) AS s FROM nums",
    "first, last, any_value, max_by, min_by: the answer depends on the order of the input": (
        "SELECT first(i) AS a, last(i, true) AS b, max_by(i, g) AS c FROM nums"
    ),
    "percentile of a DECIMAL or a DOUBLE: Spark's conversion to double not reproduced": "SELECT percentile(dc, 0.5) AS p FROM nums",
    "percentile with a frequency (sqlglot drops the third argument)": "SELECT percentile(i, 0.5, 2) AS p FROM nums",
    "percentile_disc: not reproduced": "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY i) AS p FROM nums",
    "avg of a DECIMAL of more than 12 digits: Spark's two roundings may differ from one": "SELECT avg(dw) AS a FROM nums",
}

REJECTED = {
    "grouping() without GROUPING SETS, CUBE or ROLLUP": "SELECT g, grouping(g) FROM nums GROUP BY g",
    "grouping_id() of columns other than the grouping columns": "SELECT g, b, grouping_id(b, g) FROM nums GROUP BY CUBE (g, b)",
    "every of a non-boolean": "SELECT every(i) FROM nums",
    "a percentage outside [0, 1]": "SELECT percentile(i, 1.5) FROM nums",
    "logical_and (a spelling sqlglot knows, Spark does not)": "SELECT logical_and(b) FROM nums",
    "grouping() of a computed key outside the SELECT list": "SELECT g % 2, count(*) FROM nums GROUP BY ROLLUP (g % 2) ORDER BY grouping(g % 2)",
}
