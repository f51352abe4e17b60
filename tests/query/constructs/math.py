"""Numbers in other bases (bin, hex, conv), positive of strings, and the math functions this
Spark version does not have (issue 37): Spark's answers, types and unaliased column names over the
corpus's edge values (NULLs, negatives, zero, the ends of each integer type, '', non-ASCII text)."""

LOCAL = {
    "bin of integers, decimals, doubles and strings (two's complement; a decimal cut toward zero and wrapped into 64 bits, a double saturated)": (
        "SELECT id, bin(ti), bin(bi), bin(dc), bin(dw), bin(d), bin(f), bin(s), bin(NULL) FROM nums"
    ),
    "hex of integers, decimals, doubles, strings and booleans (a number's BIGINT in upper-case digits, a text's UTF-8 bytes)": (
        "SELECT id, hex(i), hex(bi), hex(dw), hex(d), hex(s), hex(vc), hex(b), hex(NULL) FROM nums"
    ),
    "hex of CAST(x AS BINARY): a string's UTF-8 bytes, an integer's bytes in its type's width": (
        "SELECT id, hex(CAST(s AS BINARY)), hex(CAST(ti AS BINARY)), hex(CAST(si AS BINARY)), hex(CAST(i AS BINARY)), hex(CAST(bi AS BINARY)) FROM nums"
    ),
    "conv: an unsigned 64-bit reading (2^64 - 1 past it), digits up to the first invalid one, a negative target base for signed output, NULL for a base outside 2..36": (
        "SELECT conv('9223372036854775808', 10, 16), conv('92233720368547758070', 10, 16), conv('-9223372036854775807', 36, 10), "
        "conv(' 1z', 10, -16), conv('-ff', 16, -2), conv('-0', 10, -2), conv('5', 37, 16), conv('5', 10, -1), conv('-', 10, 16), conv('', 10, 16)"
    ),
    "conv of integer, decimal and string columns, with column bases": (
        "SELECT id, conv(i, 10, 16), conv(bi, 10, -36), conv(dc, 10, 2), conv(s, 36, 10), conv(vc, 16, -10), conv('11', ti, si) FROM nums"
    ),
    "positive of a string or an untyped NULL (a double, NULL where the text is no number)": (
        "SELECT id, positive(s), positive(NULL), positive('25.5'), positive(' -0 '), positive('1e3'), positive(ti) FROM nums"
    ),
}

SPARK_ONLY = {
    "conv of a double or a float (Spark converts the text Java prints)": "SELECT conv(d, 10, 16) AS c FROM nums",
    "conv with a BIGINT base (Spark wraps it into an INT)": "SELECT conv('10', bi, 16) AS c FROM nums",
    "hex of a date": "SELECT hex(dt) AS h FROM nums",
    "TRY_CAST to BINARY": "SELECT hex(TRY_CAST(s AS BINARY)) AS h FROM nums",
}

REJECTED = {
    "gcd (not a function of this Spark version)": "SELECT gcd(24, 36) AS g",
    "lcm (not a function of this Spark version)": "SELECT lcm(4, 6) AS l",
    "truncate of a number (not a function of this Spark version; trunc truncates dates)": "SELECT truncate(1234.5678, 2) AS t",
    "bin of a boolean": "SELECT bin(b) AS x FROM nums",
    "positive of a date": "SELECT positive(dt) AS p FROM nums",
    "CAST of a decimal to BINARY": "SELECT hex(CAST(dc AS BINARY)) AS h FROM nums",
}
