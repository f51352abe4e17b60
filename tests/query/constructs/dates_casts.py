"""DATE literals, date functions and casts from strings (issue 37): what runs in process with
Spark's answers, and what stays on Spark."""

SETUP = [
    "CREATE TABLE dc_texts (id INT, t STRING)",
    "INSERT INTO dc_texts VALUES (1, '1'), (2, ' -12 '), (3, '1.9'), (4, 'abc'), (5, '2011-02-29'), (6, '2012-02-29 10:00'),"
    " (7, '1e3'), (8, 'yes'), (9, 'NaN'), (10, '9999999999'), (11, NULL), (12, ''), (13, '-.5'), (14, '+2011-1'),"
    " (15, 'Infinity'), (16, '0.125'), (17, '2147483648'), (18, 'F')",
]

_INNER_DATES = "FROM nums WHERE year(dt) BETWEEN 2 AND 9998"  # date arithmetic stays within Python's years

LOCAL = {
    "DATE literals": "SELECT DATE '2011-11-11', DATE '2011-1-1' AS a, DATE ' 2011 ' AS b, DATE '2011-11-11T10:00' AS c",
    "year, month, day, dayofmonth": "SELECT id, year(dt), month(dt), day(dt), dayofmonth(dt) FROM nums",
    "dayofweek, weekday, dayofyear, quarter": "SELECT id, dayofweek(dt), weekday(dt), dayofyear(dt), quarter(dt) FROM nums",
    "date parts of a TIMESTAMP_NTZ": "SELECT id, year(ts) AS y, dayofweek(ts) AS w FROM nums",
    "date_add, dateadd, date_sub": f"SELECT id, date_add(dt, 1), dateadd(dt, -31), date_sub(dt, i % 1000) {_INNER_DATES}",
    "datediff, date_diff": "SELECT id, datediff(dt, DATE '2000-01-01'), date_diff(DATE '2024-02-29', dt) FROM nums",
    "add_months": f"SELECT id, add_months(dt, 1), add_months(dt, -13) AS back {_INNER_DATES}",
    "last_day": "SELECT id, last_day(dt) FROM nums",
    "make_date (NULL for a date that does not exist)": "SELECT id, make_date(2000 + id, id, 29 + id % 3), make_date(2021, 2, 29) AS none FROM nums",
    "trunc": "SELECT id, trunc(dt, 'MM'), trunc(dt, 'year') AS y, trunc(dt, 'Q') AS q, trunc(dt, 'WEEK') AS w FROM nums",
    "date_add and date_sub with a constant string number of days": f"SELECT id, date_add(dt, '1'), date_sub(dt, '-12') {_INNER_DATES}",
    "next_day (MO, Mon, monday; NULL for an unknown day)": (
        f"SELECT id, next_day(dt, 'mo'), next_day(dt, 'SUNDAY') AS s, next_day(dt, 'Fri') AS f, next_day(dt, 'xx') AS x {_INNER_DATES}"
    ),
    "next_day of a string": "SELECT next_day(t, 'Tue') AS n FROM dc_texts",
    "unix_date, date_from_unix_date": "SELECT id, unix_date(dt), date_from_unix_date(i % 100000), date_from_unix_date(NULL) AS n FROM nums",
    "to_date": "SELECT to_date('2020-01-02'), to_date(t) AS d FROM dc_texts",
    "to_date with a pattern": "SELECT to_date('02/01/2020', 'dd/MM/yyyy'), to_date('2020-03', 'yyyy-MM') AS m",
    "date_format": "SELECT id, date_format(dt, 'yyyy-MM-dd'), date_format(ts, \"dd/MM/yy h:mm:ss a, EEE MMM 'T' SSS\") AS f FROM nums",
    "a string argument cast to DATE": "SELECT year('2011-11-11'), datediff('2011-11-11', '2011-01-01'), last_day(t) AS l FROM dc_texts",
    "casts from a string to integral types": "SELECT id, CAST(t AS INT), CAST(t AS TINYINT) AS ti, CAST(t AS BIGINT) AS bi FROM dc_texts",
    "casts from a string to boolean": "SELECT id, CAST(t AS BOOLEAN) FROM dc_texts",
    "casts from a string to date": "SELECT id, CAST(t AS DATE) FROM dc_texts",
    "casts from a string to double and float": "SELECT id, CAST(t AS DOUBLE), CAST(t AS FLOAT) AS f FROM dc_texts",
    "casts from a string to decimal": "SELECT id, CAST(t AS DECIMAL(5,2)), CAST(t AS DECIMAL(38,0)) AS w FROM dc_texts",
    "comparing a DATE with a string (as dates)": "SELECT id, dt >= '2020-01-01' AS ge, '2020-1-1' = dt AS eq FROM nums WHERE dt < '9999'",
    "comparing a number or a boolean with a string: the string cast to its type, a DECIMAL and the string to DOUBLE": (
        "SELECT id, 1 = t AS eq, t < 2 AS lt, t >= 0.5 AS ge, t = true AS bo, CAST(3 AS BIGINT) <=> t AS ns, 1.5D > t AS d,"
        " CAST(1 AS TINYINT) <> t AS ne FROM dc_texts"
    ),
    "comparing a number with a string column of the corpus": "SELECT id, s = 1 AS eq, s > 0.5 AS gt, 2.0 <= s AS le FROM nums",
    "comparisons of literals: 1 > '0', '1.5' = 1.5BD, 2 > '2.2'": "SELECT 1 > '0', '1.5' = 1.5BD, 2 > '2.2', '1.5' > 0.5, 1 = 'x'",
    "IN over numbers and strings: compared as strings": (
        "SELECT 1 IN ('1.0', '01') AS a, 1 IN ('1', 2) AS b, 1.50 IN ('1.5') AS c, '7' IN (7, 8) AS d, 1 IN ('2', NULL) AS e,"
        " 1 NOT IN ('2') AS f, 1 IN (1.0, '1') AS g"
    ),
    "BETWEEN and NOT BETWEEN with strings, named as Spark names them": (
        "SELECT 2.0 BETWEEN '1.0' AND '3.0', 2 NOT BETWEEN '1' AND 'x', 'b' BETWEEN 'a' AND 'c', 1 BETWEEN 0 AND 2"
    ),
    "cast literals from strings": (
        "SELECT CAST(' 12 ' AS TINYINT), CAST('1.9' AS BIGINT), CAST('t' AS BOOLEAN), CAST('1e3' AS DOUBLE), "
        "CAST('Infinity' AS FLOAT), CAST('1.25' AS DECIMAL(3,1)), try_cast('x' AS INT), '7'::int"
    ),
}

SPARK_ONLY = {
    "date_format with pattern letters not reproduced (G, y alone, Q, w...)": "SELECT date_format(dt, 'G y') AS f FROM nums",
    "to_date with pattern letters other than yyyy, MM, dd": "SELECT to_date(s, 'yyyy-MM-dd HH:mm') AS d FROM nums",
    "months_between (Spark's rounding to 8 digits and its 31-day months)": "SELECT months_between(dt, DATE '2000-01-01') AS m FROM nums",
    "current_date (not deterministic)": "SELECT current_date() AS d",
    "date_trunc (a TIMESTAMP, Spark's local-time type)": "SELECT date_trunc('MM', dt) AS d FROM nums",
    "casts from a string to TIMESTAMP (local time)": "SELECT CAST(s AS TIMESTAMP) AS t FROM nums",
    "casts from a string to TIMESTAMP_NTZ": "SELECT CAST(s AS TIMESTAMP_NTZ) AS t FROM nums",
    "TIMESTAMP_NTZ literals": "SELECT TIMESTAMP_NTZ '2020-01-01 00:00:00' AS t",
    "comparing a TIMESTAMP_NTZ with a string": "SELECT id FROM nums WHERE ts > '2020-01-01'",
    "date_format of a string (a cast to TIMESTAMP)": "SELECT date_format(s, 'yyyy') AS f FROM nums",
    "next_day with a computed day of week": "SELECT next_day(dt, s) AS n FROM nums",
}

REJECTED = {
    "an invalid DATE literal": "SELECT DATE '2011-13-01'",
    "date_add with a BIGINT number of days": "SELECT date_add(dt, bi) AS d FROM nums",
    "date_add with a string number of days that is not an integer": "SELECT date_add(dt, '1.5') AS d FROM nums",
    "date_sub with a string column": "SELECT date_sub(dt, t) AS d FROM nums, dc_texts",
}
