"""The text forms read as numbers and dates (docs/semantics.md), as regular expressions that mean the same in
Python's `re` and in a Java regex (Spark's regexp_extract / rlike): a value loaded into a column
(alterflow.values.types) and the same text converted by a heavyweight ALTER (alterflow.values.cast_rules)
are read alike. It imports nothing of alterflow."""

from __future__ import annotations

__all__ = ["WS", "INT_PATTERN", "NUMBER_PATTERN", "DECIMAL_PATTERN", "DATE_PATTERN", "YEAR_PIVOT", "two_digit_year"]

# ASCII whitespace: space, \t, \n, \r, \v, \f. Written with escapes that mean the same in a
# Python `re` and a Java regex (Spark's regexp_extract / rlike).
WS = r"[ \t\n\r\x0B\f]"

# Patterns are matched against the whole value: `re.fullmatch` in Python, ^...\z in Java
# (`java_regex`). Only ASCII [0-9] counts as a digit on both sides.
#   INT_PATTERN:     1 sign, 2 digits without leading zeros (at least one digit)
INT_PATTERN = WS + r"*([+-]?)0*([0-9]+)" + WS + "*"
#   NUMBER_PATTERN:  1 the whole number text (sign, mantissa, optional exponent)
NUMBER_PATTERN = WS + r"*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)" + WS + "*"
#   DECIMAL_PATTERN: 1 sign, 2 mantissa, 3 exponent sign, 4 exponent digits without leading zeros
DECIMAL_PATTERN = WS + r"*([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE]([+-]?)0*([0-9]+))?" + WS + "*"
#   DATE_PATTERN: %Y-%m-%d %y-%m-%d %Y/%m/%d %y/%m/%d (groups 1 year, 2 separator, 3 month,
#   4 day) or %Y%m%d %y%m%d (8 or 6 digits; groups 5 year, 6 month, 7 day).
DATE_PATTERN = (
    WS + r"*(?:([0-9]{4}|[0-9]{2})([-/])([0-9]{1,2})\2([0-9]{1,2})"
    r"|([0-9]{2}(?:[0-9]{2})?)([0-9]{2})([0-9]{2}))" + WS + "*"
)

# Two-digit years as Python's strptime %y reads them: 00..68 -> 2000..2068, 69..99 -> 1969..1999.
YEAR_PIVOT = 69


def two_digit_year(yy: int) -> int:
    return 2000 + yy if yy < YEAR_PIVOT else 1900 + yy
