"""The math and decimal rules of the local engine (alterflow/query/math_functions.py, udfs.py, the
decimal arithmetic of expressions.py and expression_core.py) against live Spark, value by value:
each query runs on both engines and the outcomes (names, types, values with their Python types)
must be equal."""

from __future__ import annotations

import pytest

from tests.query import spark_answers

_DOUBLES = ["0.5", "2.0", "3.0", "10.0", "0.1", "7.7", "123456.789", "0.0", "-1.0"]
_D = lambda v: f"CAST({v} AS DOUBLE)"  # noqa: E731

QUERIES = [
    # sqrt: IEEE's square root on both engines (exp, ln, log, pow stay with Spark: last-bit differences)
    *(f"SELECT sqrt({_D(v)}), sign({_D(v)}), signum({_D(v)} - 1)" for v in _DOUBLES),
    "SELECT sign(-5), sign(CAST(0 AS DECIMAL(3,1))), signum(-0.5), pi(), e()",
    # round/bround of doubles: ties, negative scales, huge and tiny values
    *(
        f"SELECT round({_D(v)}, 0), round({_D(v)}, 2), bround({_D(v)}, 1), round({_D(v)}, -2), bround({_D(v)}, -1)"
        for v in ["2.5", "-2.5", "0.125", "0.135", "1.005", "2.675", "-0.4", "12345.5", "0.285", "98765.4321"]
    ),
    "SELECT round(2147483647, -1), round(-2147483648, -2), bround(25, -1), bround(35, -1), round(CAST(127 AS TINYINT), -1), round(9223372036854775807, -19)",
    "SELECT round(CAST(-0.5 AS DECIMAL(2,1))), bround(CAST(-0.5 AS DECIMAL(2,1))), round(CAST(0.05 AS DECIMAL(38,37)), 1)",
    "SELECT floor(d), ceil(d), floor(f), ceil(dc), floor(dw), ceil(-2.345, -1), floor(-2.345, 2) FROM nums",
    # decimal division, remainder and precision loss
    "SELECT CAST(1 AS DECIMAL(38,0)) / 3, CAST(2 AS DECIMAL(38,0)) / 3, CAST(-2 AS DECIMAL(38,0)) / 3, 1.0 / 7, 10 / 4.0",
    "SELECT CAST(99999999999999999999999999999999999999 AS DECIMAL(38,0)) / 0.1, CAST(1 AS DECIMAL(38,37)) / 3, 0.5 / 0.0, 12.5 % 0",
    "SELECT CAST(12345678901234567890.12345678 AS DECIMAL(28,8)) * CAST(98765432109876543.21 AS DECIMAL(19,2))",
    "SELECT CAST(1234567890123456789.0123456789 AS DECIMAL(29,10)) * CAST(1.0000000001 AS DECIMAL(11,10)), CAST(0.5 AS DECIMAL(38,37)) + CAST(1 AS DECIMAL(38,0))",
    "SELECT -7.5 % 2, 7.5 % -2, pmod(-7.5, 2), pmod(CAST(-1 AS DECIMAL(38,0)), 3), mod(-10.25, 3.1)",
    "SELECT pmod(-7, 3), pmod(-2147483648, -1), pmod(CAST(-7.5 AS DOUBLE), 2), 9223372036854775807 div -1, -9223372036854775808 div -1",
    # conv: only spaces trimmed, a sign only as '-', non-ASCII never a digit, past 2^64 the largest value
    "SELECT conv('\\t12', 10, 16) AS tab_first, conv('12\\t', 10, 16) AS tab_last, conv('  -12  ', 10, -16), conv(' ', 10, 16), conv('- 5', 10, 16), conv('+5', 10, 16)",
    "SELECT conv('é1', 10, 16), conv('18446744073709551616', 10, 16), conv('-9223372036854775809', 10, -10), conv('-18446744073709551615', 10, 10), conv('8000000000000000', 16, -10)",
    "SELECT conv('zz', 36, 10), conv('ZZ', 36, -36), conv('12', 2147483647, 10), conv(25.5, 10, 16), conv(-10, 16, -10), conv('10', 2S, 16Y)",
    # bin and hex: Spark's implicit BIGINT (cut toward zero, wrapped, saturated), texts as UTF-8 bytes
    "SELECT bin(-25.9), bin(CAST('-Infinity' AS DOUBLE)), bin('  25  '), bin('-25.9'), bin('1e3'), bin(CAST('NaN' AS DOUBLE))",
    "SELECT hex(-1000000000000000000000000000000.5), hex(12345678901234567890123.9), hex(CAST(-0.5 AS FLOAT)), hex('é'), hex(''), hex(false)",
    "SELECT hex(CAST('é' AS BINARY)), hex(CAST(-9223372036854775808L AS BINARY)), hex(CAST(-1Y AS BINARY)), hex(CAST(NULL AS BINARY)), hex(CAST(CAST(NULL AS INT) AS BINARY))",
]


@pytest.fixture(scope="module")
def session(tmp_path_factory, spark):
    return spark_answers.build_session(tmp_path_factory.mktemp("scalars"))


@pytest.mark.parametrize("sql", QUERIES)
def test_the_local_engine_gives_spark_s_answer(session, sql):
    local = spark_answers.outcome(session, "local", sql)
    assert local[0] == "rows", f"{sql}: {local}"
    spark = spark_answers.outcome(session, "spark", sql)
    assert spark_answers.canonical(local, False) == spark_answers.canonical(spark, False)  # rows as a multiset
