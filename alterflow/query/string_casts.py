"""Spark's casts from STRING (ANSI off: NULL where the text is not a value of the type), as DuckDB
macros that validate the text with Spark's own grammar before DuckDB converts it:

- integral types: UTF8String.toInt/toLong — bytes 0x00-0x20 and 0x7F trimmed, a sign, ASCII
  digits, a fractional part checked and dropped ('1.9' is 1, '.5' and '-.' are 0), NULL outside
  the type (no wrap-around);
- boolean: t, true, y, yes, 1 / f, false, n, no, 0, trimmed as above, any case;
- date: DateTimeUtils.stringToDate — [+-]yyyy[yyy], yyyy-[m]m, yyyy-[m]m-[d]d, the last
  optionally followed by ' ' or 'T' and anything; an impossible date is NULL;
- double, float: Java's parseDouble/parseFloat (text trimmed of 0x00-0x20, NaN, Infinity, an
  exponent, a d/f suffix) and Spark's extra inf/infinity/nan in any case; hexadecimal floating
  literals go to Spark;
- decimal(p,s): Java's BigDecimal (exponents accepted), rounded HALF_UP, NULL when it does not fit;
  a text with a non-ASCII digit goes to Spark (BigDecimal reads any Unicode digit).
"""

from __future__ import annotations

from alterflow.query import sql_types as st
from alterflow.query.duckdb_macros import define
from alterflow.query.expression_core import FALLBACK, NotLocal, Value
from alterflow.query.sql_types import SqlType

_SPARK_BLANK = r"[\x00-\x20\x7F]"  # UTF8String.isWhitespaceOrISOControl on a byte
_JAVA_BLANK = r"[\x00-\x20]"  # String.trim

_IN_RANGE = define("af_in_range", "v, lo, hi", "CASE WHEN v BETWEEN lo AND hi THEN v END")
_INTEGRAL = define(
    "af_str_integral",
    "s, lo, hi",
    rf"""CASE WHEN regexp_full_match(s, '(?s){_SPARK_BLANK}*[+-]?[0-9]*(\.[0-9]*)?{_SPARK_BLANK}*')
            AND NOT regexp_full_match(s, '(?s){_SPARK_BLANK}*[+-]?{_SPARK_BLANK}*')
        THEN {_IN_RANGE}(TRY_CAST(
            regexp_extract(s, '^{_SPARK_BLANK}*([+-]?)', 1) || '0' || regexp_extract(s, '^{_SPARK_BLANK}*[+-]?([0-9]*)', 1)
            AS HUGEINT), lo, hi) END""",
)

_BOOLEAN = define(
    "af_str_boolean",
    "s",
    rf"""CASE lower(regexp_extract(s, '(?s)^{_SPARK_BLANK}*(.*?){_SPARK_BLANK}*$', 1))
        WHEN 't' THEN TRUE WHEN 'true' THEN TRUE WHEN 'y' THEN TRUE WHEN 'yes' THEN TRUE WHEN '1' THEN TRUE
        WHEN 'f' THEN FALSE WHEN 'false' THEN FALSE WHEN 'n' THEN FALSE WHEN 'no' THEN FALSE WHEN '0' THEN FALSE END""",
)

# A date from its parts, as java.time's LocalDate.of: NULL for a month or day that does not exist.
# Spark's dates are days since 1970 in 32 bits, DuckDB's too but for its infinities at the very
# ends: years that far out are left to Spark.
YMD = define(
    "af_ymd",
    "y, m, d",
    f"CASE WHEN abs(y) > 5000000 THEN error('{FALLBACK}') ELSE try(make_date(y, m, d)) END",
)

_DATE_TEXT = rf"(?s){_SPARK_BLANK}*([+-]?)([0-9]{{4,7}})(?:-([0-9]{{1,2}})(?:-([0-9]{{1,2}})(?:[ T].*)?)?)?{_SPARK_BLANK}*"

# The text is matched once (a lambda binds the parts: a macro's parameter would repeat the match).
DATE = define(
    "af_str_date",
    "s",
    f"""list_transform([regexp_extract(s, '^{_DATE_TEXT}$', ['g', 'y', 'm', 'd'])], lambda p: CASE WHEN p.y = '' THEN NULL
        ELSE {YMD}(CAST(p.y AS BIGINT) * (CASE WHEN p.g = '-' THEN -1 ELSE 1 END),
            CAST(coalesce(nullif(p.m, ''), '1') AS BIGINT), CAST(coalesce(nullif(p.d, ''), '1') AS BIGINT)) END)[1]""",
)

_FLOATING_TEXT = rf"(?s){_JAVA_BLANK}*([+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?))[fFdD]?{_JAVA_BLANK}*"
_SPECIAL_TEXT = rf"(?s){_JAVA_BLANK}*(.*?){_JAVA_BLANK}*"


def _floating(name: str, duckdb_type: str) -> str:
    return define(
        name,
        "s",
        f"""CASE WHEN regexp_full_match(s, '{_FLOATING_TEXT}')
                THEN TRY_CAST(regexp_extract(s, '^{_FLOATING_TEXT}$', 1) AS {duckdb_type})
            WHEN regexp_full_match(s, '(?s){_JAVA_BLANK}*[+-]?0[xX].*') THEN error('{FALLBACK}')
            ELSE (CASE lower(regexp_extract(s, '^{_SPECIAL_TEXT}$', 1))
                WHEN 'inf' THEN CAST('Infinity' AS {duckdb_type}) WHEN '+inf' THEN CAST('Infinity' AS {duckdb_type})
                WHEN 'infinity' THEN CAST('Infinity' AS {duckdb_type}) WHEN '+infinity' THEN CAST('Infinity' AS {duckdb_type})
                WHEN '-inf' THEN CAST('-Infinity' AS {duckdb_type}) WHEN '-infinity' THEN CAST('-Infinity' AS {duckdb_type})
                WHEN 'nan' THEN CAST('NaN' AS {duckdb_type}) END) END""",
    )


_DOUBLE = _floating("af_str_double", "DOUBLE")
_FLOAT = _floating("af_str_float", "FLOAT")

_DECIMAL_TEXT = rf"(?s){_JAVA_BLANK}*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?){_JAVA_BLANK}*"
DECIMAL_CORE = define(
    "af_str_decimal_text",
    "s",
    f"""CASE WHEN regexp_full_match(s, '{_DECIMAL_TEXT}') THEN regexp_extract(s, '^{_DECIMAL_TEXT}$', 1)
        WHEN regexp_matches(regexp_replace(s, '[0-9]', '', 'g'), '\\p{{Nd}}') THEN error('{FALLBACK}') END""",
)


def from_string(value: Value, to: SqlType) -> str:
    """Spark's CAST of a STRING value to `to` (ANSI off), as DuckDB text."""
    s = value.sql
    if to.integral:
        bits = st.INTEGRAL_BITS[to.name]
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return f"CAST({_INTEGRAL}({s}, CAST('{lo}' AS HUGEINT), CAST('{hi}' AS HUGEINT)) AS {to.duckdb})"
    if to == st.BOOLEAN:
        return f"{_BOOLEAN}({s})"
    if to == st.DATE:
        return f"{DATE}({s})"
    if to == st.DOUBLE:
        return f"{_DOUBLE}({s})"
    if to.name == "float":
        return f"{_FLOAT}({s})"
    if to.name == "decimal":
        return _to_decimal(s, to)
    raise NotLocal(f"CAST from string to {to}")


def _to_decimal(s: str, to: SqlType) -> str:
    """DuckDB rounds a decimal text HALF_UP into the type as Spark's changePrecision does; a text of
    more digits than DuckDB reads (39 and more) goes to Spark rather than risk a difference. DuckDB
    refuses an exponent's value in a type without integer digits (DECIMAL(5,5)): the text is read
    with one integer digit more, then narrowed."""
    text = f"{DECIMAL_CORE}({s})"
    guard = f"length(regexp_replace({text}, '[^0-9]', '', 'g')) > 38"
    if to.precision == to.scale == st.MAX_PRECISION:
        guard += f" OR regexp_matches({text}, '[eE]')"
    read = st.decimal(min(to.precision + 1, st.MAX_PRECISION), to.scale)
    return f"(CASE WHEN {guard} THEN error('{FALLBACK}') ELSE TRY_CAST(TRY_CAST({text} AS {read.duckdb}) AS {to.duckdb}) END)"
