"""The vectorised coercion of loaded values (alterflow.values.load_coercion) against its reference,
`alterflow.values.types.coerce_value` applied value by value: for every column type and every kind of
input (texts as CSV gives them, typed values as Parquet and JSON give them) both accept the same
values with the same results, or both refuse, naming the same first row with the same message.
Plus the errors of rows_from_arrow, numbered from a streaming load's `first_row`."""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import math
import struct
from decimal import Context, Decimal
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alterflow.catalog.schema import Column, SchemaVersion
from alterflow.load.bad_rows import BadRows
from alterflow.load.rows import rows_from_arrow, rows_from_literals
from alterflow.sql.ast import Literal
from alterflow.values import load_coercion as coercion
from alterflow.values.load_coercion import BadValue, coerce_array
from alterflow.values.types import DataType, InvalidValue, coerce_value, parse_type, to_arrow

T = parse_type
WIDE = Context(prec=100)  # scaleb() rounds to the context's precision

FIXED_TARGETS = [
    T(x)
    for x in (
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "LARGEINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL(1,0)",
        "DECIMAL(3,3)",
        "DECIMAL(5,2)",
        "DECIMAL(10,2)",
        "DECIMAL(18,4)",
        "DECIMAL(19,0)",
        "DECIMAL(38,0)",
        "DECIMAL(38,10)",
        "DECIMAL(38,38)",
        "CHAR(1)",
        "CHAR(5)",
        "VARCHAR(3)",
        "VARCHAR(10)",
        "STRING",
        "DATE",
        "DATETIME",
    )
]
DECIMAL_TARGETS = st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: DataType("DECIMAL", p, s)))
TARGETS = st.one_of(st.sampled_from(FIXED_TARGETS), DECIMAL_TARGETS)

INT_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
    "LARGEINT": (-(10**38) + 1, 10**38 - 1),
}
BOUNDARY_INTS = sorted({b + d for low, high in INT_RANGES.values() for b in (low, high) for d in (-1, 0, 1)} | {0, 1, -1})

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------


def by_reference(values: list, t: DataType) -> tuple[list, tuple[int, str] | None]:
    """coerce_value over the values: the results, or the first refused row and its message."""
    out = []
    for index, value in enumerate(values):
        try:
            out.append(coerce_value(value, t))
        except InvalidValue as exc:
            return out, (index, str(exc))
    return out, None


def same(a: object, b: object) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return a == b and (type(a) is type(b) or {type(a), type(b)} <= {int, Decimal})  # LARGEINT is decimal128(38,0)


def assert_agrees(array: pa.Array | pa.ChunkedArray, t: DataType) -> None:
    expected, expected_error = by_reference(array.to_pylist(), t)
    try:
        result = coerce_array(array, t)
    except BadValue as exc:
        assert (exc.index, exc.message) == expected_error, f"{t.sql()} of {array.to_pylist()!r}"
        return
    assert expected_error is None, f"{t.sql()}: the reference refuses row {expected_error}, the kernels accept"
    assert result.type == to_arrow(t)
    got = result.to_pylist()
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert same(g, e), f"{t.sql()}: {g!r} != reference {e!r}"


@contextlib.contextmanager
def exact_formulations_only():
    """Every text array decided by the exact formulation: the quick one always declines."""
    with contextlib.ExitStack() as stack:
        for name in ("_quick_integers", "_quick_floats", "_quick_decimals", "_quick_dates", "_quick_datetimes"):
            stack.enter_context(mock.patch.object(coercion, name, lambda *args: None))
        yield


def formulations(exact_only: bool):
    return exact_formulations_only() if exact_only else contextlib.nullcontext()


def chunked_or_not(values: list, arrow_type: pa.DataType, split: int | None) -> pa.Array | pa.ChunkedArray:
    if split is None:
        return pa.array(values, arrow_type)
    split = min(split, len(values))
    return pa.chunked_array([pa.array(values[:split], arrow_type), pa.array(values[split:], arrow_type)], arrow_type)


# --------------------------------------------------------------------------------------------
# Texts: for each type, texts it accepts written every way it accepts them (so whole lists are
# accepted, by the quick formulation or the exact one), and texts near them that it refuses
# --------------------------------------------------------------------------------------------

ASCII_SPACE = st.sampled_from(["", "", "", " ", "\t", " \n", "\x0b", "\x0c\r"])
OTHER_SPACE = st.sampled_from(["\u00a0", "\u2003", "\x1c", "\x85"])  # whitespace to str.strip(), not here
JUNK = st.text(alphabet="0123456789+-.eExX :/T\t\u0661\u00a0\u212aé", max_size=12)


def padded(core: st.SearchStrategy[str], pad: st.SearchStrategy[str] = ASCII_SPACE) -> st.SearchStrategy[str]:
    return st.tuples(pad, core, pad).map("".join)


def spaced(core: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Mostly as it is, sometimes with ASCII whitespace around it."""
    return st.one_of(core, core, padded(core))


def integer_text(value: int, plus: bool, zeros: int) -> str:
    return ("-" if value < 0 else "+" if plus else "") + "0" * zeros + str(abs(value))


def integer_texts(values: st.SearchStrategy[int]) -> st.SearchStrategy[str]:
    plain = values.map(str)
    written = st.builds(integer_text, values, st.booleans(), st.sampled_from([0, 1, 3, 30]))
    return spaced(st.one_of(plain, plain, written))


def number_text(value: Decimal, style: str, zeros: int, plus: bool) -> str:
    if style == "e":
        text = f"{value:e}"
    elif style == "E":
        sign, digits, exponent = value.as_tuple()
        text = ("-" if sign else "") + "".join(map(str, digits)) + "E" + str(exponent)
    else:
        text = format(value, "f")
        if zeros:
            text += ("" if "." in text else ".") + "0" * zeros
    return "+" + text if plus and not text.startswith("-") else text


def number_texts(values: st.SearchStrategy[Decimal]) -> st.SearchStrategy[str]:
    plain = values.map(lambda v: format(v, "f"))
    written = st.builds(number_text, values, st.sampled_from(["f", "e", "E"]), st.sampled_from([0, 1, 5, 40]), st.booleans())
    return spaced(st.one_of(plain, plain, written))


def decimals_of(p: int, s: int) -> st.SearchStrategy[Decimal]:
    """Values of DECIMAL(p,s): unscaled integers below 10**p, boundaries included."""
    top = 10**p - 1
    unscaled = st.one_of(st.integers(-top, top), st.integers(-min(top, 1000), min(top, 1000)), st.sampled_from([top, -top, 0]))
    return unscaled.map(lambda u: Decimal(u).scaleb(-s, context=WIDE))


def date_text(day: dt.date, style: int, zero_padded: bool) -> str:
    year4, year2 = f"{day.year:04d}", f"{day.year % 100:02d}"
    month, dom = (f"{day.month:02d}", f"{day.day:02d}") if zero_padded else (str(day.month), str(day.day))
    return [
        f"{year4}-{month}-{dom}",
        f"{year2}-{month}-{dom}",
        f"{year4}/{month}/{dom}",
        f"{year2}/{month}/{dom}",
        f"{year4}{day.month:02d}{day.day:02d}",
        f"{year2}{day.month:02d}{day.day:02d}",
    ][style]


def datetime_text(moment: dt.datetime, sep: str, digits: int, bare: bool) -> str:
    if bare:
        return moment.date().isoformat()
    text = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}{sep}{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    if digits:
        text += "." + f"{moment.microsecond:06d}{moment.microsecond % 1000:03d}"[:digits]
    return text


ISO_DATES = st.dates().map(dt.date.isoformat)
ANY_DATES = st.builds(date_text, st.dates(), st.integers(0, 5), st.booleans())
ISO_DATETIMES = st.builds(datetime_text, st.datetimes(), st.sampled_from([" ", "T"]), st.integers(0, 6), st.booleans())
BOOLEAN_WORDS = st.sampled_from(["true", "false", "1", "0"]).flatmap(
    lambda w: st.lists(st.booleans(), min_size=len(w), max_size=len(w)).map(
        lambda upper: "".join(c.upper() if u else c for c, u in zip(w, upper))
    )
)


def accepted_texts(t: DataType) -> st.SearchStrategy[str]:
    """Texts that `t` accepts, written in the ways it accepts them."""
    if t.is_string:
        return st.text(alphabet=st.characters(codec="utf-8"), max_size=t.length or 20)
    if t.name == "BOOLEAN":
        return spaced(BOOLEAN_WORDS)
    if t.is_integer:
        low, high = INT_RANGES[t.name]
        return integer_texts(
            st.one_of(st.integers(low, high), st.integers(max(low, -300), min(high, 300)), st.sampled_from([low, high, 0]))
        )
    if t.is_float:
        floats = st.floats(allow_nan=False, allow_infinity=False, width=32 if t.name == "FLOAT" else 64)
        return st.one_of(
            number_texts(st.decimals(-(10**30), 10**30, allow_nan=False, allow_infinity=False, places=6)), spaced(floats.map(repr))
        )
    if t.name == "DECIMAL":
        return number_texts(decimals_of(t.precision, t.scale))
    if t.name == "DATE":
        return spaced(st.one_of(ISO_DATES, ISO_DATES, ANY_DATES))
    return spaced(ISO_DATETIMES)


REFUSED_NEARBY = st.one_of(
    JUNK,
    padded(st.one_of(ISO_DATES, st.integers(-5, 5).map(str), BOOLEAN_WORDS), OTHER_SPACE),
    st.from_regex(r"[+-]{0,2}[0-9\u0661]{0,22}[.eE]?[0-9]{0,2}", fullmatch=True),
    st.from_regex(r"[+-]?[0-9]{0,20}(\.[0-9]{0,20})?([eE][+-]?[0-9]{1,4})?", fullmatch=True),
    st.integers(-(10**40), 10**40).map(str),
    st.floats().map(repr),
    st.from_regex(r"[0-9]{2,4}[-/]?[0-9]{1,2}[-/]?[0-9]{1,3}", fullmatch=True),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([ Tt][0-9]{1,2}(:[0-9]{2}(:[0-9]{2}(\.[0-9]{0,8})?)?)?)?[Z+]?", fullmatch=True),
    st.builds(datetime_text, st.datetimes(), st.sampled_from(["t", "  ", "_"]), st.integers(0, 9), st.just(False)),
    st.sampled_from(
        [
            "",
            "3.4028235e38",
            "3.4028236e38",
            "3.40282357e38",
            "1e308",
            "1.8e308",
            "1e-400",
            "-1e-400",
            "-0",
            "+.5",
            "5.",
            ".",
            "-",
            "+",
            "1e",
            "1e+-5",
            "1e0x1",
            "0x1F",
            "0e999999999999999999999",
            "1e999999999999999999",
            "1e-999999999999999999",
            "0.0000e-5",
            "9" * 39,
            "1" * 400,
            "0." + "0" * 60 + "1e61",
            "nan",
            "inf",
            "Infinity",
            "1" + "0" * 50 + "e-50",
            "99999.99999",
            "-999.995",
            "0" * 40 + "1.5",
            "1.5" + "0" * 40,
            "1_000",
            "0000-01-01",
            "00000101",
            "2023-02-29",
            "2024-02-30",
            "2024-13-01",
            "2024-00-10",
            "2024-01-32",
            "2024/01-01",
            "+2024-01-01",
            "\u0661\u0660\u0662\u0664-01-01",
            "2024-01-01 24:00:00",
            "2024-01-01 23:59:60",
            "0000-01-01 00:00:00",
            "2024-01-01 10:00",
            "2024-01-01 10",
            "2024-01-01 10:00:00Z",
            "2024-01-01 10:00:00+02:00",
            "2024-01-01 10:00:00.",
            "2024-01-01T100000",
            "2024-01-01 10:00.123456",
            "2024-01-01 10:00:00.1234567",
            "yes",
            "no",
            "t",
            "2",
            "tru",
            "fal\u017fe",
            "\u212aa",
            "truee",
            "01",
        ]
    ),
)


def texts_for(t: DataType) -> st.SearchStrategy[str | None]:
    """Mostly texts `t` accepts (so many lists are accepted whole), some NULLs, some refused."""
    accepted = accepted_texts(t)
    return st.one_of(accepted, accepted, accepted, accepted, accepted, st.none(), REFUSED_NEARBY)


@SETTINGS
@given(
    data=st.data(),
    t=TARGETS,
    text_type=st.sampled_from([pa.string(), pa.string(), pa.large_string()]),
    split=st.none() | st.integers(0, 12),
    exact_only=st.booleans(),
)
def test_texts_agree_with_coerce_value(data, t, text_type, split, exact_only):
    values = data.draw(st.lists(texts_for(t), max_size=12))
    with formulations(exact_only):
        assert_agrees(chunked_or_not(values, text_type, split), t)


@SETTINGS
@given(data=st.data(), t=TARGETS, exact_only=st.booleans())
def test_accepted_texts_agree_with_coerce_value(data, t, exact_only):
    """Lists of accepted texts only, so the values of both formulations are compared often."""
    values = data.draw(st.lists(st.one_of(accepted_texts(t), st.none()), max_size=12))
    with formulations(exact_only):
        assert_agrees(pa.array(values, pa.string()), t)


@SETTINGS
@given(
    data=st.data(),
    t=st.sampled_from([T("INT"), T("BIGINT"), T("DECIMAL(10,2)"), T("DOUBLE"), T("DATE"), T("DATETIME")]),
    piece_rows=st.sampled_from([1, 7, 64, 1 << 16]),
)
def test_long_text_arrays_agree_with_coerce_value(data, t, piece_rows):
    """Arrays long enough that one refused value hides among many accepted ones (the quick
    formulation must give way to the exact one without losing the row), converted in pieces of
    several sizes (a piece's rows are numbered in the whole array)."""
    good = data.draw(st.lists(accepted_texts(t), min_size=1, max_size=4))
    values = [good[i % len(good)] for i in range(300)]
    values[data.draw(st.integers(0, 299))] = data.draw(texts_for(t))
    array = pa.array(values, pa.string()).slice(data.draw(st.integers(0, 5)))  # an offset, as a batch of a larger array has
    with formulations(data.draw(st.booleans())), mock.patch.object(coercion, "_PIECE_ROWS", piece_rows):
        assert_agrees(array, t)


# --------------------------------------------------------------------------------------------
# Typed inputs: mostly values that fit the column type, boundaries, some that do not
# --------------------------------------------------------------------------------------------


def float32(x: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


BOUNDARY_FLOATS = [
    2.0**63,
    -(2.0**63),
    9223372036854774784.0,
    1e38,
    math.nextafter(1e38, math.inf),
    -1e38,
    127.0,
    128.0,
    -128.0,
    -129.0,
    2.0**31,
    -(2.0**31) - 1,
    0.5,
    -0.0,
    0.1,
    1.005,
    1e16,
    1e-7,
    3.4028234663852886e38,
    3.4028235677973366e38,
    3.4028235677973362e38,
    5e-324,
    1e23,
    2.0**126,
    math.nan,
    math.inf,
    -math.inf,
]


def integers_near(t: DataType) -> st.SearchStrategy[int]:
    low, high = INT_RANGES.get(t.name, (-(10**6), 10**6))
    if t.name == "DECIMAL":
        high = min(10 ** (t.precision - t.scale) - 1, 2**63)
        low = -high
    return st.one_of(st.integers(low, high), st.integers(max(low, -300), min(high, 300)), st.sampled_from(BOUNDARY_INTS))


def floats_near(t: DataType) -> st.SearchStrategy[float]:
    anything = st.one_of(st.floats(), st.sampled_from(BOUNDARY_FLOATS), st.integers(-(2**130), 2**130).map(float))
    if t.is_integer or t.name == "DECIMAL":
        exact = integers_near(t).map(float)
        if t.name == "DECIMAL":
            exact = st.one_of(exact, decimals_of(min(t.precision, 15), min(t.scale, 15)).map(float))
        return st.one_of(exact, exact, exact, anything)
    return st.one_of(st.floats(), st.floats(width=32), anything)


def decimals_near(t: DataType, p: int, s: int) -> st.SearchStrategy[Decimal]:
    """Values of a DECIMAL(p,s) input, many of them integral or short when `t` needs that."""
    values = decimals_of(p, s)
    top = 10 ** (p - s) - 1
    integral = st.integers(-min(top, 10**20), min(top, 10**20)).map(lambda i: Decimal(i).scaleb(0, context=WIDE))
    return st.one_of(values, integral, integral)


DATETIMES = {  # what Python holds, in every zone; nanoseconds reach 1677..2262 only
    unit: (dt.datetime(1678, 1, 1), dt.datetime(2261, 12, 31)) if unit == "ns" else (dt.datetime(2, 1, 1), dt.datetime(9998, 12, 31))
    for unit in ("s", "ms", "us", "ns")
}
INTEGER_TYPES = {"int64": (-(2**63), 2**63 - 1), "int8": (-128, 127), "int32": (-(2**31), 2**31 - 1), "uint64": (0, 2**64 - 1)}
ZONES = [None, "UTC", "+02:00", "-05:30", "Europe/Paris", "America/New_York"]


def timestamp_array(draw, unit: str, zone: str | None) -> pa.Array:
    low, high = DATETIMES[unit]
    midnights = st.dates(low.date(), high.date()).map(lambda d: dt.datetime(d.year, d.month, d.day))
    values = draw(st.lists(st.one_of(st.datetimes(low, high), midnights, st.none()), max_size=12))
    truncate = {"s": lambda m: m.replace(microsecond=0), "ms": lambda m: m.replace(microsecond=m.microsecond // 1000 * 1000)}
    values = [v if v is None else truncate.get(unit, lambda m: m)(v) for v in values]
    array = pa.array(values, pa.timestamp(unit))  # UTC values
    if unit == "ns":  # sub-microsecond parts, sometimes
        extra = draw(st.lists(st.sampled_from([0, 0, 1, 999]), min_size=len(values), max_size=len(values)))
        raw = [None if v is None else v + e for v, e in zip(array.cast(pa.int64()).to_pylist(), extra)]
        array = pa.array(raw, pa.int64()).cast(pa.timestamp("ns"))
    return array.cast(pa.timestamp(unit, tz=zone))


@st.composite
def typed_arrays(draw, t: DataType) -> pa.Array | pa.ChunkedArray:
    kind = draw(
        st.sampled_from(
            ["int64", "int8", "int32", "uint64", "float64", "float32", "decimal", "decimal256", "bool", "date32", "timestamp", "null"]
        )
    )
    maybe = lambda s: st.one_of(s, s, s, s, st.none())  # noqa: E731
    if kind == "null":
        return pa.nulls(draw(st.integers(0, 12)))
    if kind == "timestamp":
        return timestamp_array(draw, draw(st.sampled_from(["s", "ms", "us", "ns"])), draw(st.sampled_from(ZONES)))
    if kind in ("int64", "int8", "int32", "uint64"):
        arrow_type = getattr(pa, kind)()
        low, high = INTEGER_TYPES[kind]
        integers = st.one_of(integers_near(t), st.integers(low, high)).filter(lambda v: low <= v <= high)
        values = draw(st.lists(maybe(integers), max_size=12))
    elif kind in ("float64", "float32"):
        arrow_type = getattr(pa, kind)()
        values = draw(st.lists(maybe(floats_near(t)), max_size=12))
        values = [float32(v) if kind == "float32" and v is not None else v for v in values]
    elif kind.startswith("decimal"):
        p = draw(st.integers(1, 60 if kind == "decimal256" else 38))
        s = draw(st.integers(0, p))
        arrow_type = (pa.decimal256 if kind == "decimal256" else pa.decimal128)(p, s)
        values = draw(st.lists(maybe(decimals_near(t, p, s)), max_size=12))
    elif kind == "bool":
        arrow_type, values = pa.bool_(), draw(st.lists(maybe(st.booleans()), max_size=12))
    else:
        arrow_type, values = pa.date32(), draw(st.lists(maybe(st.dates()), max_size=12))
    return chunked_or_not(values, arrow_type, draw(st.none() | st.integers(0, 12)))


@SETTINGS
@given(data=st.data(), t=TARGETS, piece_rows=st.sampled_from([3, 1 << 16]))
def test_typed_inputs_agree_with_coerce_value(data, t, piece_rows):
    with mock.patch.object(coercion, "_PIECE_ROWS", piece_rows):
        assert_agrees(data.draw(typed_arrays(t)), t)


@pytest.mark.parametrize(
    "values, type_text",
    [
        (["0.5", "35"], "DECIMAL(38,37)"),  # Arrow's decimal cast wraps around past 128 bits: 35 -> 0.97...
        ([35.0], "DECIMAL(37,37)"),
        (["1" * 400], "DECIMAL(38,10)"),  # ... and so does its parser past 38 digits
        (["1.5" + "0" * 40, "0" * 50 + "2.5", "1e+-5"], "DECIMAL(5,2)"),  # Arrow reads '1e+-5' as 1e-5
        (["1e0x1"], "DECIMAL(5,2)"),
        (["-0.00", "-0"], "DECIMAL(5,2)"),
        (["0x1F"], "INT"),  # Arrow's int64 parser reads hexadecimal
        (["+5", "-0", "007", " 12\t"], "TINYINT"),
        (["9223372036854775807", "-9223372036854775808", "9223372036854775808"], "BIGINT"),
        (["\u0661\u0662"], "INT"),  # Python's int() reads Arabic-Indic digits; not here
        (["\u00a012"], "INT"),  # nor Unicode whitespace
        (["0000-01-01"], "DATE"),  # Arrow reads the year 0
        (["2024-01-01 10", "2024-01-01 10:00"], "DATETIME"),  # Arrow reads hours and minutes alone
        (["0000-01-01 00:00:00"], "DATETIME"),
        (["69-01-01", "68/1/1", "690101", "680101"], "DATE"),
        (["TRUE", " False ", "\u212a"], "BOOLEAN"),
        ([1e38, -1e38], "LARGEINT"),
        ([math.nextafter(1e38, math.inf)], "LARGEINT"),
        ([2.0**63], "BIGINT"),
        ([9223372036854774784.0, -(2.0**63)], "BIGINT"),
        ([3.4028235677973362e38, 3.4028235677973366e38], "FLOAT"),
        ([-0.0, 1e-7, 1e16], "DECIMAL(38,10)"),
        ([2**63, 2**64 - 1], "BIGINT"),
        ([2**64 - 1, 5], "VARCHAR(3)"),  # typed values into text: their text, then its length
        ([decimal.Decimal("0.0000000001"), decimal.Decimal("-1.50")], "STRING"),  # Arrow writes the first as 1E-10
        ([None, True, False], "CHAR(4)"),  # false does not fit
        ([dt.date(2024, 1, 2)], "STRING"),
        ([1.5], "STRING"),  # a float is refused: engines disagree on its text
    ],
)
def test_known_traps_agree_with_coerce_value(values, type_text):
    arrow_type = pa.uint64() if values and isinstance(values[0], int) else None
    assert_agrees(pa.array(values, arrow_type), T(type_text))


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_timestamps_are_their_utc_time(unit):
    moments = pa.array([0, -1, 86_400 * 10**6 - 1, None], pa.int64())
    factor = {"s": 10**-6, "ms": 10**-3, "us": 1, "ns": 10**3}[unit]
    raw = pa.array([None if m is None else int(m * factor) for m in moments.to_pylist()], pa.int64())
    for zone in (None, "+05:00", "America/New_York"):
        array = raw.cast(pa.timestamp(unit, tz=zone))
        assert_agrees(array, T("DATETIME"))
        assert_agrees(array, T("DATE"))


@pytest.mark.parametrize("t", FIXED_TARGETS, ids=lambda t: t.sql())
def test_inputs_coerce_value_refuses_outright_are_refused(t):
    """Times, bytes, nested values: no column type takes them (the reference's message)."""
    for array in (pa.array([None, dt.time(1, 2)]), pa.array([None, b"ab"]), pa.array([None, [1]]), pa.array([None, dt.timedelta(1)])):
        with pytest.raises(BadValue) as info:
            coerce_array(array, t)
        assert info.value.index == 1
        with pytest.raises(InvalidValue) as reference:
            coerce_value(array[1].as_py(), t)
        assert info.value.message == str(reference.value)


def test_dictionary_encoded_texts_are_their_values():
    array = pa.array(["1", "2", None, "1"]).dictionary_encode()
    assert coerce_array(array, T("INT")).to_pylist() == [1, 2, None, 1]


def test_many_small_chunks_are_gathered_into_pieces():
    """Tiny chunks (each with its own dictionary here) are joined before the pieces are cut; a
    refused value is still numbered in the whole input."""
    array = pa.chunked_array([pa.array([str(i), None]).dictionary_encode() for i in range(300)])
    with mock.patch.object(coercion, "_PIECE_ROWS", 64):
        result = coerce_array(array, T("INT"))
        assert result.to_pylist() == [v for i in range(300) for v in (i, None)]
        with pytest.raises(BadValue) as info:
            coerce_array(array, T("TINYINT"))
    assert (info.value.index, info.value.message) == (256, "value '128' does not fit TINYINT")


def test_dates_beyond_pythons_years_are_refused():
    array = pa.array([0, 3_000_000], pa.date32())  # 1970-01-01 and a day in the year 10183
    with pytest.raises(BadValue) as info:
        coerce_array(array, T("DATE"))
    assert (info.value.index, info.value.message) == (1, "value '10183-09-21' does not fit DATE")


# --------------------------------------------------------------------------------------------
# Errors of rows_from_arrow, numbered from first_row
# --------------------------------------------------------------------------------------------

VERSION = SchemaVersion(
    1,
    1,
    (
        Column(1, "id", T("BIGINT"), nullable=False),
        Column(2, "grp", T("INT")),
        Column(3, "v", T("VARCHAR(3)")),
        Column(4, "d", T("DATE"), write_default=dt.date(2024, 1, 1)),
    ),
    primary_key=(1,),
)


def batch(**columns) -> pa.Table:
    return pa.table({name: pa.array(values, pa.string()) for name, values in columns.items()})


@pytest.mark.parametrize("first_row", [1, 1001])
def test_a_bad_value_names_its_row_in_the_whole_input(first_row):
    data = batch(id=["1", "2", "3"], grp=["7", " 8 ", "x9"])
    with pytest.raises(BadRows) as info:
        rows_from_arrow(VERSION, "t", data, first_row=first_row)
    assert str(info.value) == f"INSERT INTO t: column grp: value 'x9' is not a valid INT (row {first_row + 2})"


def test_row_numbers_count_over_chunks():
    data = pa.table({"id": pa.chunked_array([["1", "2"], ["3", "99999999999999999999"]])})
    with pytest.raises(BadRows) as info:
        rows_from_arrow(VERSION, "t", data, first_row=11)
    assert str(info.value) == "INSERT INTO t: column id: value '99999999999999999999' does not fit BIGINT (row 14)"


def test_null_in_a_not_null_column_names_its_row():
    data = batch(id=["1", None, None])
    with pytest.raises(BadRows) as info:
        rows_from_arrow(VERSION, "t", data, first_row=501)
    assert str(info.value) == "INSERT INTO t: column id is NOT NULL but row 502 has NULL"


def test_too_long_text_names_its_row():
    data = batch(id=["1", "2", "3"], v=["abc", "中文字", "abcd"])
    with pytest.raises(BadRows) as info:
        rows_from_arrow(VERSION, "t", data, first_row=21)
    assert str(info.value) == "INSERT INTO t: column v: value 'abcd' does not fit VARCHAR(3) (row 23)"


def test_loaded_rows_get_their_types_and_write_defaults():
    data = batch(ID=["1", "2"], grp=["-5", None], v=["é", "xyz"])
    table = rows_from_arrow(VERSION, "t", data, first_row=7)
    assert table.schema.types == [pa.int64(), pa.int32(), pa.string(), pa.date32()]
    assert table.to_pylist() == [
        {"id": 1, "grp": -5, "v": "é", "d": dt.date(2024, 1, 1)},
        {"id": 2, "grp": None, "v": "xyz", "d": dt.date(2024, 1, 1)},
    ]


def test_spec_date_formats_load():
    data = batch(id=["1", "2", "3", "4", "5", "6"], d=["2024-01-02", "24-1-2", "20240102", "240102", "2024/1/2", "24/01/02"])
    assert set(rows_from_arrow(VERSION, "t", data).column("d").to_pylist()) == {dt.date(2024, 1, 2)}


def test_literal_rows_keep_their_checks():
    rows = [[Literal("int", 1, "1"), Literal("string", "abcd", "'abcd'")]]
    with pytest.raises(BadRows) as info:
        rows_from_literals(VERSION, "t", ["id", "v"], rows)
    assert str(info.value) == "INSERT INTO t: column v: value 'abcd' does not fit VARCHAR(3) (row 1)"
