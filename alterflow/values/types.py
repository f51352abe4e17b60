"""Column types: parsing, conversion classes, value coercion, Arrow/Spark mapping.

One `DataType` per SQL type of docs/semantics.md, "SQL". This module answers, for the rest of alterflow:

- what a type's text means (`parse_type`, `DataType.sql`),
- whether a type change is SAME, LIGHT (a read-time cast), HEAVY (a rewrite) or REJECTED
  (`classify_conversion`, the lists of docs/semantics.md),
- which Python value a SQL literal or a loaded value becomes under a type (`coerce_literal`,
  `coerce_value`), how a default is stored in the catalog (`encode_value` / `decode_value`) and
  shown to people (`format_value`),
- the Arrow and Spark types that carry a column (`to_arrow`, `to_spark`),
- (the hash bucket of a distribution key lives in `alterflow.bucketing`).

Python representations: BOOLEAN bool; TINYINT..LARGEINT int; FLOAT / DOUBLE float (finite);
DECIMAL decimal.Decimal with exactly the column's scale; CHAR / VARCHAR / STRING str (CHAR is not
padded); DATE datetime.date; DATETIME naive datetime.datetime (microseconds). NULL is None.

Importing this module never imports pyspark or pyarrow (`to_spark` and `to_arrow` import them on
first call): the catalog and every lightweight statement need types, not Arrow (issue 12's CLI
start-up).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import enum
import math
import numbers
import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from alterflow.errors import UserError
from alterflow.values.text_patterns import DATE_PATTERN, two_digit_year

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from alterflow.sql.ast import Literal

__all__ = [
    "InvalidType",
    "InvalidValue",
    "DataType",
    "parse_type",
    "Change",
    "classify_conversion",
    "coerce_literal",
    "coerce_value",
    "TEXT_WHITESPACE",
    "INT_TEXT_PATTERN",
    "NUMBER_TEXT_PATTERN",
    "DATETIME_TEXT_PATTERN",
    "BOOLEAN_TEXTS",
    "MAX_EXPONENT_DIGITS",
    "INTEGER_RANGES",
    "encode_value",
    "decode_value",
    "format_value",
    "to_arrow",
    "to_spark",
]


class InvalidType(UserError):
    """A type text or type that alterflow does not support (one-line message)."""


class InvalidValue(UserError):
    """A literal or value that does not fit a type (one-line message naming both)."""


# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------

INTEGER_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT")  # narrow to wide
FLOAT_TYPES = ("FLOAT", "DOUBLE")
NUMBER_TYPES = INTEGER_TYPES + FLOAT_TYPES + ("DECIMAL",)
STRING_TYPES = ("CHAR", "VARCHAR", "STRING")
TEMPORAL_TYPES = ("DATE", "DATETIME")
TYPE_NAMES = ("BOOLEAN",) + NUMBER_TYPES + STRING_TYPES + TEMPORAL_TYPES

_SYNONYMS = {"INTEGER": "INT", "BOOL": "BOOLEAN", "TIMESTAMP": "DATETIME"}

MAX_DECIMAL_PRECISION = 38
DEFAULT_DECIMAL = (9, 0)
MAX_VARCHAR_LENGTH = 65533
MAX_CHAR_LENGTH = 255

# Inclusive ranges. LARGEINT is stored as decimal(38,0), which bounds it tighter than 128 bits.
INTEGER_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
    "LARGEINT": (max(-(2**127), -(10**38) + 1), min(2**127 - 1, 10**38 - 1)),
}


def _name_in(names: tuple[str, ...]) -> property:
    """A `DataType` property (bool): whether the type's name is one of `names`."""
    return property(lambda self: self.name in names)


@dataclass(frozen=True)
class DataType:
    """A column type. Omitted parameters take Doris's defaults: DECIMAL(9,0), VARCHAR(65533), CHAR(1)."""

    name: str
    precision: int | None = None  # DECIMAL only
    scale: int | None = None  # DECIMAL only
    length: int | None = None  # CHAR / VARCHAR only

    def __post_init__(self) -> None:
        name = str(self.name).upper()
        name = _SYNONYMS.get(name, name)
        if name not in TYPE_NAMES:
            raise InvalidType(f"unknown type {self.name}")
        object.__setattr__(self, "name", name)
        if name == "DECIMAL":
            self._init_decimal()
        elif self.precision is not None or self.scale is not None:
            raise InvalidType(f"type {name} takes no precision or scale")
        if name in ("CHAR", "VARCHAR"):
            self._init_length()
        elif self.length is not None:
            raise InvalidType(f"type {name} takes no length")

    def _init_decimal(self) -> None:
        precision = DEFAULT_DECIMAL[0] if self.precision is None else self.precision
        scale = DEFAULT_DECIMAL[1] if self.scale is None else self.scale
        if not 1 <= precision <= MAX_DECIMAL_PRECISION:
            raise InvalidType(f"invalid type DECIMAL({precision},{scale}): precision must be 1..38")
        if not 0 <= scale <= precision:
            raise InvalidType(f"invalid type DECIMAL({precision},{scale}): scale must be 0..precision")
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "scale", scale)

    def _init_length(self) -> None:
        limit = MAX_CHAR_LENGTH if self.name == "CHAR" else MAX_VARCHAR_LENGTH
        length = (1 if self.name == "CHAR" else MAX_VARCHAR_LENGTH) if self.length is None else self.length
        if not 1 <= length <= limit:
            raise InvalidType(f"invalid type {self.name}({length}): length must be 1..{limit}")
        object.__setattr__(self, "length", length)

    def sql(self) -> str:
        """Canonical text: "INT", "DECIMAL(10,2)", "VARCHAR(20)", "CHAR(3)", "DATETIME"."""
        if self.name == "DECIMAL":
            return f"DECIMAL({self.precision},{self.scale})"
        if self.name in ("CHAR", "VARCHAR"):
            return f"{self.name}({self.length})"
        return self.name

    def __str__(self) -> str:
        return self.sql()

    is_integer = _name_in(INTEGER_TYPES)
    is_float = _name_in(FLOAT_TYPES)
    is_number = _name_in(NUMBER_TYPES)
    is_string = _name_in(STRING_TYPES)
    is_temporal = _name_in(TEMPORAL_TYPES)


_TYPE_RE = re.compile(r"^\s*([A-Za-z]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*$")


def parse_type(text: str) -> DataType:
    """Parse a type as written ("INT", "DECIMAL(10,2)", "VARCHAR", "TIMESTAMP", ...)."""
    match = _TYPE_RE.match(text or "")
    if match is None:
        raise InvalidType(f"invalid type {text!r}")
    word, first, second = match.group(1).upper(), match.group(2), match.group(3)
    name = _SYNONYMS.get(word, word)
    if name not in TYPE_NAMES:
        raise InvalidType(f"unknown type {text.strip()}")
    if first is None:
        return DataType(name)
    if name == "DECIMAL":
        return DataType(name, precision=int(first), scale=0 if second is None else int(second))
    if name in ("CHAR", "VARCHAR") and second is None:
        return DataType(name, length=int(first))
    raise InvalidType(f"invalid type {text.strip()}: {name} takes no such parameters")


# --------------------------------------------------------------------------------------------
# Type changes (docs/semantics.md, "Lightweight, heavyweight, rejected")
# --------------------------------------------------------------------------------------------


def integer_range(t: DataType) -> tuple[int, int]:
    """The inclusive range of values an integer type holds."""
    return INTEGER_RANGES[t.name]


class Change(enum.Enum):
    SAME = "SAME"
    LIGHT = "LIGHT"
    HEAVY = "HEAVY"
    REJECTED = "REJECTED"


def classify_conversion(old: DataType, new: DataType) -> tuple[Change, str]:
    """How changing a column from `old` to `new` is carried out, with a short reason."""
    arrow = f"{old.sql()} -> {new.sql()}"
    if old == new:
        return Change.SAME, f"type stays {old.sql()}"
    if _is_lossless_widening(old, new):
        return Change.LIGHT, f"lossless widening {arrow}"
    heavy_reason = _heavy_reason(old, new)
    if heavy_reason is not None:
        return Change.HEAVY, f"{arrow} {heavy_reason} and needs a rewrite"
    return Change.REJECTED, f"{arrow} is not a supported type change"


def _is_lossless_widening(old: DataType, new: DataType) -> bool:
    if old.is_integer and new.is_integer:
        return INTEGER_TYPES.index(new.name) > INTEGER_TYPES.index(old.name)
    if (old.name, new.name) in (("FLOAT", "DOUBLE"), ("DATE", "DATETIME")):
        return True
    if old.name == "DECIMAL" and new.name == "DECIMAL":
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    if old.name in ("CHAR", "VARCHAR"):
        return new.name == "STRING" or (new.name == "VARCHAR" and new.length >= old.length)
    return False


def _heavy_reason(old: DataType, new: DataType) -> str | None:
    """Why a non-lossless change is still allowed as a rewrite, or None when it is rejected."""
    if old.is_string and (new.is_number or new.name == "DATE"):
        return "can fail"
    if old.is_number and new.is_number:
        return "can fail or lose precision"
    if old.name == "DATETIME" and new.name == "DATE":
        return "drops the time of day"
    if old.name in ("INT", "BIGINT") and new.name == "DATE":
        return "reads yyyymmdd, can fail"
    if old.is_number and new.name == "STRING":
        return "changes the stored representation"
    if old.is_number and new.name == "VARCHAR":
        return "can fail"
    return None


# --------------------------------------------------------------------------------------------
# Values: literals and loaded values
# --------------------------------------------------------------------------------------------

_DECIMAL_CONTEXT = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_EVEN, Emax=999999, Emin=-999999)
# The grammar of loaded texts, shared with the vectorised coercion (alterflow.values.load_coercion) so
# the two cannot drift apart: every pattern means the same as a Python `re` and as RE2 (the
# engine of pyarrow.compute) and is matched against the whole text once TEXT_WHITESPACE is
# stripped from both ends. Whitespace and digits are ASCII only, as in the conversion rules of
# a heavyweight ALTER (alterflow.values.cast_rules): a value loaded into a column and the same
# value converted by an ALTER follow one rule, and no Unicode table can differ between the two.
TEXT_WHITESPACE = " \t\n\r\x0b\x0c"
INT_TEXT_PATTERN = r"[+-]?[0-9]+"
NUMBER_TEXT_PATTERN = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
DATETIME_TEXT_PATTERN = (
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"(?:[ T](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]{1,6}))?)?"
)
BOOLEAN_TEXTS = {"true": True, "1": True, "false": False, "0": False}  # matched lower-cased
# A DECIMAL text whose exponent has more digits than this (leading zeros aside) is decided
# without parsing it: a text holds fewer than 10**18 digits, so a non-zero number with such an
# exponent is too large or has non-zero digits far below any scale; zero stays zero.
MAX_EXPONENT_DIGITS = 18
# No integer type holds more digits (Python refuses int() of texts past 4300 digits).
_MAX_INTEGER_DIGITS = len(str(10**38))

_INT_TEXT_RE = re.compile(INT_TEXT_PATTERN)
_NUMBER_TEXT_RE = re.compile(NUMBER_TEXT_PATTERN)
_DATETIME_TEXT_RE = re.compile(DATETIME_TEXT_PATTERN)
_MAX_SHOWN = 60


def coerce_literal(lit: Literal, t: DataType) -> object:
    """The Python value of type `t` for a SQL literal (DEFAULT or INSERT VALUES), or InvalidValue.

    Kinds: 'null' fits every type; 'bool' only BOOLEAN; 'int' and 'decimal' (value is its text)
    fit number types when the value is exact there; 'string' fits strings, DATE, DATETIME, and
    numbers / BOOLEAN when it parses as one (like '1' into INT).
    """
    shown = _shorten(lit.text)
    if lit.kind == "null":
        return None
    if lit.kind == "bool":
        return _coerce(bool(lit.value), t, shown)
    if lit.kind == "int":
        return _coerce(int(lit.value), t, shown)
    if lit.kind == "decimal":
        text = str(lit.value).strip()
        if not _NUMBER_TEXT_RE.fullmatch(text):
            raise InvalidValue(f"value {shown} is not a valid {t.sql()}")
        return _coerce(decimal.Decimal(text), t, shown)
    if lit.kind == "string":
        return _coerce(str(lit.value), t, shown)
    raise InvalidValue(f"value {shown} is not a valid {t.sql()}")


def coerce_value(value: object, t: DataType) -> object:
    """The Python value of type `t` for a loaded value (CSV text, JSON, pyarrow), or InvalidValue.

    Accepts None, str, bool, int, float, Decimal, date and datetime with the same rules and
    messages as `coerce_literal`. An aware datetime is converted to UTC and made naive.
    """
    if value is None:
        return None
    return _coerce(value, t, _show(value))


def _coerce(value: object, t: DataType, shown: str) -> object:
    if isinstance(value, str):
        return _from_text(value, t, shown)
    if t.is_string and (text := typed_text(value)) is not None:
        return _from_text(text, t, shown)
    if isinstance(value, bool):
        if t.name == "BOOLEAN":
            return value
    elif isinstance(value, (numbers.Integral, float, decimal.Decimal)):
        if t.is_number:
            return _to_number(value, t, shown)
    elif isinstance(value, _dt.datetime):
        if t.is_temporal:
            return _from_datetime(value, t, shown)
    elif isinstance(value, _dt.date):
        if t.is_temporal:
            return value if t.name == "DATE" else _dt.datetime(value.year, value.month, value.day)
    raise InvalidValue(f"value {shown} is not a valid {t.sql()}")


def _from_text(text: str, t: DataType, shown: str) -> object:
    """A text as type `t`: strings as they are (length in characters); every other type after
    stripping TEXT_WHITESPACE, by the grammar of the *_TEXT_PATTERN constants and the dates of docs/semantics.md."""
    if t.is_string:
        if t.length is not None and len(text) > t.length:
            raise InvalidValue(f"value {shown} does not fit {t.sql()}")
        return text
    stripped = text.strip(TEXT_WHITESPACE)
    if t.name == "BOOLEAN" and stripped.lower() in BOOLEAN_TEXTS:
        return BOOLEAN_TEXTS[stripped.lower()]
    if t.is_integer and _INT_TEXT_RE.fullmatch(stripped):
        return _integer_from_text(stripped, t, shown)
    if t.is_float and _NUMBER_TEXT_RE.fullmatch(stripped):
        return _to_number(float(stripped), t, shown)  # correctly rounded, like float(Decimal(text)), any exponent
    if t.name == "DECIMAL" and _NUMBER_TEXT_RE.fullmatch(stripped):
        return _decimal_from_text(stripped, t, shown)
    if t.name == "DATE":
        return _parse_date(stripped, t, shown)
    if t.name == "DATETIME":
        return _parse_datetime(stripped, t, shown)
    raise InvalidValue(f"value {shown} is not a valid {t.sql()}")


def _integer_from_text(text: str, t: DataType, shown: str) -> int:
    """An INT_TEXT_PATTERN text as an integer type; more digits than any type holds do not fit
    (and are never given to int(), which refuses thousands of digits)."""
    if len(text.lstrip("+-").lstrip("0")) > _MAX_INTEGER_DIGITS:
        raise InvalidValue(f"value {shown} does not fit {t.sql()}")
    return _to_number(int(text), t, shown)


def _decimal_from_text(text: str, t: DataType, shown: str) -> decimal.Decimal:
    """A NUMBER_TEXT_PATTERN text as DECIMAL, exactly. An exponent past MAX_EXPONENT_DIGITS
    digits is decided without building the number (decimal.Decimal refuses such exponents)."""
    mantissa, _, exponent = text.lower().partition("e")
    if len(exponent.lstrip("+-").lstrip("0")) > MAX_EXPONENT_DIGITS:
        if mantissa.strip("+-.0"):
            raise InvalidValue(f"value {shown} does not fit {t.sql()}")
        return _to_number(decimal.Decimal(0), t, shown)
    return _to_number(decimal.Decimal(text), t, shown)


def _to_number(value: numbers.Real, t: DataType, shown: str) -> object:
    """A number converted to type `t` when it is exact there (floats: finite and in range)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidValue(f"value {shown} does not fit {t.sql()}")
    if isinstance(value, decimal.Decimal) and not value.is_finite():
        raise InvalidValue(f"value {shown} does not fit {t.sql()}")
    if t.is_integer:
        return _to_integer(value, t, shown)
    if t.is_float:
        return _to_float(value, t, shown)
    return _to_decimal(value, t, shown)


def _to_integer(value: numbers.Real, t: DataType, shown: str) -> int:
    if not isinstance(value, numbers.Integral):
        exact = decimal.Decimal(value) if isinstance(value, float) else value
        if exact != int(exact):
            raise InvalidValue(f"value {shown} does not fit {t.sql()}")
    result = int(value)
    low, high = INTEGER_RANGES[t.name]
    if not low <= result <= high:
        raise InvalidValue(f"value {shown} does not fit {t.sql()}")
    return result


def _to_float(value: numbers.Real, t: DataType, shown: str) -> float:
    try:
        result = float(value)
        if t.name == "FLOAT":
            # Stored as float32: keep exactly the value a FLOAT column holds (OverflowError outside its range).
            result = struct.unpack("<f", struct.pack("<f", result))[0]
    except OverflowError:
        raise InvalidValue(f"value {shown} does not fit {t.sql()}") from None
    if not math.isfinite(result):
        raise InvalidValue(f"value {shown} does not fit {t.sql()}")
    return result


def _to_decimal(value: numbers.Real, t: DataType, shown: str) -> decimal.Decimal:
    if isinstance(value, float):
        exact = decimal.Decimal(repr(value))  # the shortest text: 0.1, not 0.1000000000000000055...
    else:
        exact = value if isinstance(value, decimal.Decimal) else decimal.Decimal(int(value))
    if not exact.is_zero() and exact.adjusted() >= t.precision - t.scale:
        raise InvalidValue(f"value {shown} does not fit {t.sql()}")
    result = exact.quantize(decimal.Decimal(1).scaleb(-t.scale), context=_DECIMAL_CONTEXT)
    if result != exact:
        raise InvalidValue(f"value {shown} does not fit {t.sql()}")
    return result.copy_abs() if result.is_zero() else result


def _parse_date(text: str, t: DataType, shown: str) -> _dt.date:
    """The date texts of docs/semantics.md, the same as a STRING -> DATE ALTER reads: %Y-%m-%d, %y-%m-%d,
    %Y%m%d, %y%m%d, %Y/%m/%d, %y/%m/%d; a two-digit year 00..68 is 20xx, 69..99 is 19xx; years
    1..9999 and real calendar days only."""
    match = re.fullmatch(DATE_PATTERN, text)  # groups: 1 year, 3 month, 4 day or 5 year, 6 month, 7 day
    try:
        if match is None:
            raise ValueError(text)
        year_text = match.group(1) or match.group(5)
        year = int(year_text) if len(year_text) == 4 else two_digit_year(int(year_text))
        return _dt.date(year, int(match.group(3) or match.group(6)), int(match.group(4) or match.group(7)))
    except ValueError:
        raise InvalidValue(f"value {shown} is not a valid {t.sql()}") from None


def _parse_datetime(text: str, t: DataType, shown: str) -> _dt.datetime:
    """DATETIME_TEXT_PATTERN: YYYY-MM-DD[( |T)HH:MM:SS[.f{1,6}]] (a bare date is midnight)."""
    match = _DATETIME_TEXT_RE.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        year, month, day, hour, minute, second, fraction = match.groups()
        return _dt.datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0").ljust(6, "0")),
        )
    except ValueError:
        raise InvalidValue(f"value {shown} is not a valid {t.sql()}") from None


def typed_text(value: object) -> str | None:
    """The text a typed loaded value takes in a CHAR / VARCHAR / STRING column, as PostgreSQL's and
    Spark's INSERT assign it: true / false, an integer's digits, a DECIMAL in plain notation with
    its scale, a date as 2024-01-01, a datetime as alterflow shows it (a zoned one at its UTC time).
    None for a float, whose text differs between engines (1e+16, 1.0E16): cast it in the query."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, decimal.Decimal):
        return format(value, "f") if value.is_finite() else None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.UTC).replace(tzinfo=None)
        # a plain datetime of its fields: a pandas Timestamp's nanoseconds are dropped, as for DATETIME
        return _datetime_text(_dt.datetime(value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond))
    if isinstance(value, _dt.date):
        return value.isoformat()
    return None


def _from_datetime(value: _dt.datetime, t: DataType, shown: str) -> object:
    if value.tzinfo is not None:
        value = value.astimezone(_dt.UTC).replace(tzinfo=None)
    if t.name == "DATETIME":
        return _dt.datetime(value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond)
    if value.time() != _dt.time(0):
        raise InvalidValue(f"value {shown} does not fit {t.sql()}")
    return value.date()


def _show(value: object) -> str:
    """A value as it appears in messages: strings quoted like SQL, one line, shortened."""
    if isinstance(value, str):
        return _shorten("'" + value.replace("'", "''") + "'")
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, _dt.datetime):
        return _shorten(f"'{value.isoformat(sep=' ')}'")
    if isinstance(value, _dt.date):
        return f"'{value.isoformat()}'"
    return _shorten(str(value))


def _shorten(text: str) -> str:
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


# --------------------------------------------------------------------------------------------
# Catalog storage and display
# --------------------------------------------------------------------------------------------


def encode_value(value: object, t: DataType) -> object:
    """A JSON-serialisable form of a value of type `t` (for defaults in the catalog)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)


def decode_value(data: object, t: DataType) -> object:
    """The inverse of `encode_value`."""
    return coerce_value(data, t)


def format_value(value: object, t: DataType) -> str:
    """Human text of a value of type `t`: NULL, true/false, 1.50, 2024-01-01, 2024-01-01 10:00:00.5."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if t.name == "DECIMAL":
        return format(_to_decimal(value, t, _show(value)), "f")
    if t.name == "FLOAT" and isinstance(value, float):
        return _float32_text(value)
    if isinstance(value, _dt.datetime):
        return _datetime_text(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)


def _float32_text(value: float) -> str:
    """The shortest text that reads back as the same float32 (0.1 rather than 0.10000000149...)."""
    try:
        target = struct.pack("<f", value)
    except OverflowError:
        return repr(value)
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        try:
            if struct.pack("<f", float(text)) == target:
                return repr(float(text))
        except OverflowError:  # a shortened text can round past float32's largest value
            continue
    return repr(value)


def _datetime_text(value: _dt.datetime) -> str:
    """Spark's TimestampNTZ text: fraction only when nonzero, without trailing zeros."""
    text = value.replace(microsecond=0).isoformat(sep=" ")
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text


# --------------------------------------------------------------------------------------------
# Arrow and Spark
# --------------------------------------------------------------------------------------------

_ARROW_TYPES: dict = {}  # filled on the first `to_arrow` call


def _arrow_types() -> dict:
    if not _ARROW_TYPES:
        import pyarrow as pa

        _ARROW_TYPES.update(
            {
                "BOOLEAN": pa.bool_(),
                "TINYINT": pa.int8(),
                "SMALLINT": pa.int16(),
                "INT": pa.int32(),
                "BIGINT": pa.int64(),
                "LARGEINT": pa.decimal128(38, 0),
                "FLOAT": pa.float32(),
                "DOUBLE": pa.float64(),
                "CHAR": pa.string(),
                "VARCHAR": pa.string(),
                "STRING": pa.string(),
                "DATE": pa.date32(),
                "DATETIME": pa.timestamp("us"),
            }
        )
    return _ARROW_TYPES


_SPARK_TYPE_NAMES = {
    "BOOLEAN": "BooleanType",
    "TINYINT": "ByteType",
    "SMALLINT": "ShortType",
    "INT": "IntegerType",
    "BIGINT": "LongType",
    "FLOAT": "FloatType",
    "DOUBLE": "DoubleType",
    "CHAR": "StringType",
    "VARCHAR": "StringType",
    "STRING": "StringType",
    "DATE": "DateType",
    "DATETIME": "TimestampNTZType",
}


def to_arrow(t: DataType) -> pa.DataType:
    """The Arrow (and so Parquet) type that stores a column of type `t`."""
    if t.name == "DECIMAL":
        import pyarrow as pa

        return pa.decimal128(t.precision, t.scale)
    return _arrow_types()[t.name]


def to_spark(t: DataType):
    """The Spark SQL type that reads a column of type `t` (imports pyspark on first call)."""
    from pyspark.sql import types as st

    if t.name == "DECIMAL":
        return st.DecimalType(t.precision, t.scale)
    if t.name == "LARGEINT":
        return st.DecimalType(38, 0)
    return getattr(st, _SPARK_TYPE_NAMES[t.name])()
