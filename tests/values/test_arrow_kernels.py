"""The vectorised conversions behind `arrow_columns.convert_array` (alterflow.values.arrow_*kernels) against
the per-value reference, `cast_rules.value_converter` applied value by value with failures as NULL
plus the list of failed rows: the same values bit for bit and the same rows, for every supported
family and a spread of target types. Values are generated to hit the rules' edges: boundaries,
bad texts, whitespace, signs, exponents, two-digit years, invalid dates, huge and tiny decimals,
rounding ties, NaN / +-Infinity. Without Spark (tests/conversion/test_convert_agreement.py ties
the reference to Spark)."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alterflow.values import arrow_columns
from alterflow.values.arrow_columns import convert_array, convert_values
from alterflow.values.arrow_kernels import WHITESPACE
from alterflow.values.cast_rules import FLOAT32_MAX, INTEGER_RANGES, WS, family
from alterflow.values.types import parse_type, to_arrow
from tests.support.values import INTEGER_BOUNDARY_TEXTS

D = decimal.Decimal
EXACT = decimal.Context(prec=100)  # scaleb rounds to the context's precision (28 by default)

INTEGER_TYPES = ["TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT"]
FLOAT_TYPES = ["FLOAT", "DOUBLE"]
DECIMAL_TYPES = [
    "DECIMAL(1,0)",
    "DECIMAL(5,2)",
    "DECIMAL(9,9)",
    "DECIMAL(10,2)",
    "DECIMAL(18,4)",
    "DECIMAL(18,17)",
    "DECIMAL(19,2)",
    "DECIMAL(20,0)",
    "DECIMAL(36,6)",
    "DECIMAL(37,2)",
    "DECIMAL(38,0)",
    "DECIMAL(38,10)",
    "DECIMAL(38,38)",
]
NUMBER_TYPES = INTEGER_TYPES + FLOAT_TYPES + DECIMAL_TYPES
TEXT_TYPES = ["STRING", "VARCHAR(5)", "VARCHAR(12)", "VARCHAR(40)"]
SOURCES = NUMBER_TYPES + ["STRING", "VARCHAR(40)", "CHAR(12)", "DATETIME"]


def _supported(old_text: str, new_text: str) -> bool:
    try:
        family(parse_type(old_text), parse_type(new_text))
    except ValueError:
        return False
    return True


def _targets(old_text: str) -> list[str]:
    """Every target type of the lists above that `old_text` converts to, except the same type
    and FLOAT / DOUBLE -> text (which has no kernel: the reference does it)."""
    old = parse_type(old_text)
    return [
        t
        for t in NUMBER_TYPES + TEXT_TYPES + ["DATE"]
        if t != old_text and _supported(old_text, t) and not (old.is_float and parse_type(t).is_string)
    ]


# --------------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------------


def _source_array(values: list, old_text: str) -> pa.Array:
    old = parse_type(old_text)
    if old.name == "LARGEINT":
        values = [None if v is None else D(v) for v in values]
    return pa.array(values, type=to_arrow(old))


def _reference(array: pa.Array, old_text: str, new_text: str) -> tuple[list, list[int]]:
    """value_converter value by value (`convert_values`, the path the kernels defer to): (the
    values as the new type's Arrow array holds them, the failed rows)."""
    values, rows = convert_values(array, parse_type(old_text), parse_type(new_text))
    return values.to_pylist(), rows


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, D) and isinstance(b, D):
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return type(a) is type(b) and a == b


def check(values: list, old_text: str, new_text: str) -> None:
    """The kernels' values and failed rows equal the reference's."""
    array = _source_array(values, old_text)
    got, rows = convert_array(array, parse_type(old_text), parse_type(new_text))
    expected, expected_rows = _reference(array, old_text, new_text)
    assert got.type == to_arrow(parse_type(new_text)) and len(got) == len(array)
    source = array.to_pylist()
    assert rows == expected_rows, [(source[r], r) for r in sorted(set(rows) ^ set(expected_rows))][:5]
    mismatches = [
        (source[i], g, e) for i, (g, e) in enumerate(zip(got.to_pylist(), expected)) if not (g is None and e is None) and not _same(g, e)
    ]
    assert not mismatches, mismatches[:5]


# --------------------------------------------------------------------------------------------
# Texts
# --------------------------------------------------------------------------------------------

SPACES = st.sampled_from(["", "", "", " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\u00a0", "\u2028", " \t "])
SIGNS = st.sampled_from(["", "", "", "+", "-", "-", "--", "+-"])
ZEROS = st.sampled_from(["", "", "0", "00", "0000000000"])


def digits(min_size: int = 0, max_size: int = 25) -> st.SearchStrategy[str]:
    return st.text("0123456789", min_size=min_size, max_size=max_size)


def _concat(*parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(*parts).map("".join)


BOUNDARIES = sorted({b + d for low, high in INTEGER_RANGES.values() for b in (low, high) for d in (-1, 0, 1)})

INTEGER_TEXTS = _concat(
    SPACES, SIGNS, ZEROS, st.one_of(digits(1, 20), st.sampled_from([str(abs(b)) for b in BOUNDARIES]), digits(36, 42)), SPACES
)

EXPONENTS = st.one_of(
    st.just(""),
    _concat(
        st.sampled_from(["e", "E"]),
        st.sampled_from(["", "+", "-"]),
        ZEROS,
        st.one_of(
            digits(0, 3),
            st.sampled_from(["38", "39", "45", "46", "308", "309", "324", "325", "99999", "100000", "2147483648", "99999999999999999999"]),
        ),
    ),
)
MANTISSAS = st.one_of(
    _concat(digits(0, 22), st.just("."), digits(0, 22)),  # "5.", ".5", "1.25" and the bad "."
    digits(1, 22),
    _concat(digits(0, 8), st.just("."), digits(0, 8), st.sampled_from(["5", "50", "49", "51", "4999", "5001"])),  # ties
    _concat(ZEROS, st.just("."), st.just("0" * 30), digits(1, 10)),
    _concat(digits(30, 45), st.sampled_from(["", ".", ".5"]), digits(0, 45)),  # more digits than any parser holds
)
NUMBER_TEXTS = _concat(SPACES, SIGNS, MANTISSAS, EXPONENTS, SPACES)


def _float32_midpoint(bits: int) -> str:
    """The exact decimal halfway between two adjacent float32 values (a tie for parseFloat)."""
    low = D(struct.unpack("<f", struct.pack("<I", bits))[0])
    high = D(struct.unpack("<f", struct.pack("<I", bits + 1))[0])
    return str((low + high) / 2)


OTHER_NUMBER_TEXTS = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False).map(str),  # "1E+5", "-0.000", "1.2E-7"
    st.floats().map(repr),  # "inf", "nan", "1e-05", "5e-324"
    st.floats(width=32).map(repr),
    st.integers(0, 0x7F7FFFFE).map(_float32_midpoint),
    st.builds(lambda n, k: str(D(2 * n + 1).scaleb(-k, EXACT)), st.integers(-(10**12), 10**12), st.integers(1, 40)),  # ties
)

YEARS = st.one_of(st.integers(0, 9999).map("{:04d}".format), st.integers(0, 99).map("{:02d}".format), digits(1, 5))
DATE_PARTS = st.one_of(st.integers(0, 13).map(str), st.integers(0, 32).map("{:02d}".format), digits(0, 3))
SEPARATORS = st.sampled_from(["-", "-", "/", "/", ".", " ", ""])
SEPARATED_DATES = st.builds(
    lambda y, s, m, t, d: y + s + m + (s if t is None else t) + d, YEARS, SEPARATORS, DATE_PARTS, st.none() | SEPARATORS, DATE_PARTS
)
COMPACT_DATES = _concat(YEARS, st.integers(0, 13).map("{:02d}".format), st.integers(0, 32).map("{:02d}".format))
DATE_FORMATS = ["%Y-%m-%d", "%y-%m-%d", "%Y%m%d", "%y%m%d", "%Y/%m/%d", "%y/%m/%d", "{y}-{m}-{d}", "{y2}/{m}/{d}"]


def _format_date(day: dt.date, form: str) -> str:
    if "{" in form:
        return form.format(y=f"{day.year:04d}", y2=f"{day.year % 100:02d}", m=day.month, d=day.day)
    return day.strftime(form.replace("%Y", f"{day.year:04d}"))


REAL_DATES = st.builds(_format_date, st.dates(), st.sampled_from(DATE_FORMATS))
DATE_TEXTS = _concat(SPACES, st.one_of(SEPARATED_DATES, COMPACT_DATES, REAL_DATES), SPACES)

JUNK = st.text("0123456789+-.eE/: \t\nxX\u00a0\u0661\uff11", max_size=14)

TEXTS = st.one_of(INTEGER_TEXTS, NUMBER_TEXTS, OTHER_NUMBER_TEXTS, DATE_TEXTS, JUNK)


# --------------------------------------------------------------------------------------------
# Numbers and datetimes
# --------------------------------------------------------------------------------------------

YYYYMMDD = st.builds(lambda y, m, d: y * 10000 + m * 100 + d, st.integers(0, 10000), st.integers(0, 13), st.integers(0, 32))


def integers_of(name: str) -> st.SearchStrategy[int]:
    low, high = INTEGER_RANGES[name]
    edges = [b for b in BOUNDARIES + [0, 1, -1, 2**24 + 1, 2**53 + 1, 2**60 + 2**36 + 1, 10**18, 10**19, 10**20] if low <= b <= high]
    return st.one_of(
        st.integers(low, high),
        st.sampled_from(edges),
        st.integers(max(low, -1000), min(high, 1000)),
        YYYYMMDD.filter(lambda v: low <= v <= high),
        st.integers(0, 126).flatmap(lambda bits: st.integers(max(low, -(2**bits)), min(high, 2**bits))),
    )


def decimals_of(precision: int, scale: int) -> st.SearchStrategy[D]:
    top = 10**precision - 1
    unscaled = st.one_of(
        st.integers(-top, top),
        st.sampled_from([0, 1, -1, top, -top, 5, -5, 15, -15, 25, 10**scale, -(10**scale)]),
        st.integers(-(10**6), 10**6),
        st.integers(0, precision).flatmap(lambda d: st.integers(-(10**d), 10**d)),  # every magnitude
        st.builds(lambda n, k: (n * 10 + 5) * 10**k, st.integers(-(10**8), 10**8), st.integers(0, 20)),  # ties
        st.builds(lambda n: n * 10**scale, st.integers(-(10**9), 10**9)),  # whole numbers
    ).filter(lambda u: abs(u) <= top)
    return unscaled.map(lambda u: D(u).scaleb(-scale, EXACT))


SPECIAL_DOUBLES = [
    0.0,
    -0.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    127.0,
    128.0,
    -129.0,
    2.0**31,
    2.0**31 - 1,
    -(2.0**31),
    2.0**53,
    2.0**53 + 2,
    2.0**63,
    -(2.0**63),
    2.0**63 - 1024,
    1e23,
    2.82879384806159e17,
    1e38,
    -1e38,
    1e39,
    0.1,
    0.125,
    0.005,
    0.015,
    1.005,
    123.455,
    99999999.995,
    5e-324,
    1.7976931348623157e308,
    FLOAT32_MAX,
    3.4028235677973366e38,
    3.4028235677973362e38,
    1.401298464324817e-45,
    7.006492321624085e-46,
    1e-50,
    math.inf,
    -math.inf,
    math.nan,
]
DOUBLES = st.one_of(
    st.floats(),
    st.sampled_from(SPECIAL_DOUBLES),
    st.integers(-(2**64), 2**64).map(float),
    st.builds(round, st.floats(-1e9, 1e9), st.integers(0, 6)),
    st.builds(lambda n, k: (n + 0.5) / 10**k, st.integers(-(10**9), 10**9), st.integers(0, 8)),  # near ties
    st.builds(
        lambda n, k, toward: float(np.nextafter((n + 0.5) / 10**k, toward)),
        st.integers(-(10**9), 10**9),
        st.integers(0, 8),
        st.sampled_from([-math.inf, math.inf]),
    ),
    st.builds(lambda n, j: n / 2.0**j, st.integers(-(10**9), 10**9), st.integers(0, 30)),  # exact binary ties
    st.builds(lambda x, e: x * 10.0**e, st.floats(-1, 1), st.integers(-40, 40)),
)


def _as_float32(value: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(value))


VALUES = {
    **{name: integers_of(name) for name in INTEGER_TYPES},
    "DOUBLE": DOUBLES,
    "FLOAT": st.one_of(DOUBLES.map(_as_float32), st.floats(width=32)),
    **{name: decimals_of(parse_type(name).precision, parse_type(name).scale) for name in DECIMAL_TYPES},
    "STRING": TEXTS,
    "VARCHAR(40)": TEXTS,
    "CHAR(12)": TEXTS,
    "DATETIME": st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
}


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("old_text", SOURCES)
@settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_kernels_equal_the_reference(old_text, data):
    new_text = data.draw(st.sampled_from(_targets(old_text)), label="new type")
    values = data.draw(st.lists(st.none() | VALUES[old_text], max_size=40), label="values")
    check(values, old_text, new_text)


EDGE_TEXTS = [
    "0",
    "-0",
    "+0",
    "  12  ",
    "\t-5\n",
    "007",
    "+42",
    "1.5",
    "-1.5",
    "1.0",
    "1e3",
    "",
    " ",
    "abc",
    "12a",
    "+",
    "-",
    "--1",
    "+-1",
    "1 2",
    *INTEGER_BOUNDARY_TEXTS,
    "18446744073709551616",
    "9" * 19,
    "9" * 20,
    "9" * 38,
    "-" + "9" * 38,
    "9" * 39,
    "0" * 60 + "1",
    "\u0661\u0662",
    "\uff11\uff12",
    "\u00a012",
    "12\u2028",
    "0x1F",
    "1_000",
    ".5",
    "5.",
    "-.5",
    "+5.",
    ".",
    "e5",
    "1e",
    "1e+",
    "1E+10",
    "1e-10",
    "1e400",
    "-1e400",
    "1e-400",
    "-1e-400",
    "inf",
    "-Infinity",
    "nan",
    "NaN",
    "1.5f",
    "1,5",
    "0e99999999999",
    "1e99999999999999999999",
    "1e-99999999999999999999",
    "1e99999",
    "1e-99999",
    "1e100000",
    "1e-100000",
    "3.4028235e38",
    "3.4028236e38",
    "3.40282356779733661637539395458142568447e38",
    "3.40282356779733661637539395458142568448e38",
    "1.00000005960464477539062500000000001",
    "1.000000059604644775390625",
    "7.006492321624085e-46",
    "4.9e-324",
    "2.4703282292062327e-324",
    "2.4703282292062328e-324",
    "1.7976931348623159e308",
    "1.005",
    "-1.005",
    "0.005",
    "-0.005",
    "0.0049999",
    "999.995",
    "99999999.995",
    "0.5",
    "2.5",
    "-2.5",
    "12345678901234567890123456789012345678.9",
    "99999999999999999999999999999999999999.5",
    "0." + "0" * 37 + "5",
    "0." + "0" * 38 + "5",
    "1" * 38 + "e-38",
    "1" * 40 + "e-40",
    "1" * 80 + "e-79",
    "1.2345678901234567890123456789012345678901234567890",
    "0.00000000000000000000000000000000000000001234567e40",
    "0." + "1" * 1000,
    "9" * 400 + "e-400",
    "1." + "0" * 800 + "1",
    "1" + "0" * 500 + "1e-500",
    "2024-01-31",
    "2024-1-5",
    "24-01-31",
    "68-12-31",
    "69-01-01",
    "00-02-29",
    "01-02-29",
    "20240131",
    "240131",
    "2024/01/31",
    "24/1/5",
    "2023-02-29",
    "2024-02-29",
    "1900-02-29",
    "2000-02-29",
    "2024-13-01",
    "2024-00-10",
    "2024-01-00",
    "2024-04-31",
    "0000-01-01",
    "0001-01-01",
    "9999-12-31",
    "00000101",
    " 2024-01-31 ",
    "\t240131\n",
    "2024-01-31T00:00",
    "2024-01/31",
    "2024-001-01",
    "202401311",
    "2401311",
    "12024-01-01",
    "-2024-01-01",
    "2024.01.31",
    "31-01-2024",
    "1-1-1",
    "024-01-01",
    "\u0662024-01-01",
    "000229",
    "030229",
]

EDGES = {
    **{
        name: [
            v
            for v in BOUNDARIES
            + [
                0,
                1,
                -1,
                5,
                99,
                100,
                20240131,
                20240230,
                19000229,
                99991231,
                10000101,
                9991231,
                2**53 + 1,
                2**60 + 2**36 + 1,
                10**18,
                10**19,
                10**37,
                -(10**37),
            ]
            if INTEGER_RANGES[name][0] <= v <= INTEGER_RANGES[name][1]
        ]
        for name in INTEGER_TYPES
    },
    "DOUBLE": SPECIAL_DOUBLES,
    "FLOAT": [_as_float32(v) for v in SPECIAL_DOUBLES],
    **{
        name: [
            D(u).scaleb(-parse_type(name).scale, EXACT)
            for u in (
                0,
                1,
                -1,
                5,
                -5,
                15,
                25,
                49,
                50,
                51,
                10 ** parse_type(name).precision - 1,
                -(10 ** parse_type(name).precision - 1),
                10 ** (parse_type(name).precision - 1) * 5,
            )
            if abs(u) < 10 ** parse_type(name).precision
        ]
        for name in DECIMAL_TYPES
    },
    "STRING": EDGE_TEXTS,
    "VARCHAR(40)": EDGE_TEXTS,
    "CHAR(12)": EDGE_TEXTS,
    "DATETIME": [
        dt.datetime(1, 1, 1),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1970, 1, 1),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    ],
}


@pytest.mark.parametrize("old_text,new_text", [(o, n) for o in SOURCES for n in _targets(o)])
def test_edges_equal_the_reference(old_text, new_text):
    check(EDGES[old_text] + [None], old_text, new_text)


def test_whitespace_is_the_rules_whitespace():
    """The characters `arrow_kernels` trims are exactly the ASCII ones cast_rules.WS matches."""
    import re

    assert {chr(c) for c in range(128) if re.fullmatch(WS, chr(c))} == set(WHITESPACE)


TYPICAL = [
    ("STRING", "INT", [str(v) for v in range(-500, 500)] + [" 42 ", "x"]),
    ("STRING", "LARGEINT", [str(v * 10**20) for v in range(-50, 50)]),
    ("STRING", "DOUBLE", [f"{v / 7:.6f}" for v in range(-500, 500)] + ["1e5", "bad"]),
    ("STRING", "FLOAT", [f"{v / 7:.4f}" for v in range(-500, 500)]),
    ("STRING", "DECIMAL(10,2)", [f"{v / 1000:.3f}" for v in range(-5000, 5000, 7)] + ["1e3", "-0.005"]),
    ("STRING", "DECIMAL(38,10)", [f"{v}.{v % 997}" for v in range(-(10**9), 10**9, 10**7)]),
    ("STRING", "DATE", [f"20{v % 100:02d}-{v % 12 + 1:02d}-{v % 28 + 1:02d}" for v in range(500)] + ["240131", "2023-02-29"]),
    ("BIGINT", "INT", list(range(-1000, 1000)) + [2**40]),
    ("BIGINT", "DATE", [20240101 + v for v in range(30)]),
    ("DECIMAL(18,4)", "DECIMAL(10,2)", [D(v).scaleb(-4, EXACT) for v in range(-(10**6), 10**6, 997)]),
    ("DECIMAL(38,10)", "DECIMAL(20,2)", [D(v).scaleb(-10, EXACT) for v in range(-(10**20), 10**20, 10**17 + 3)]),
    ("DECIMAL(38,10)", "BIGINT", [D(v) for v in range(-1000, 1000)]),
    ("DECIMAL(12,2)", "DOUBLE", [D(v).scaleb(-2, EXACT) for v in range(-(10**6), 10**6, 997)]),
    ("DECIMAL(12,2)", "STRING", [D(v).scaleb(-2, EXACT) for v in range(-(10**6), 10**6, 997)]),
    ("LARGEINT", "VARCHAR(20)", [v * 10**15 for v in range(-500, 500)]),
    ("DOUBLE", "FLOAT", [v / 7 for v in range(-1000, 1000)]),
    ("DOUBLE", "DECIMAL(10,2)", [round(v / 7, 2) for v in range(-1000, 1000)]),
    ("DOUBLE", "BIGINT", [float(v) for v in range(-1000, 1000)] + [0.5]),
    ("INT", "DECIMAL(12,2)", list(range(-1000, 1000))),
    ("BIGINT", "FLOAT", list(range(-1000, 1000)) + [2**60 + 2**36 + 1]),
]


@pytest.mark.parametrize("old_text,new_text,values", TYPICAL, ids=[f"{o}->{n}" for o, n, _ in TYPICAL])
def test_typical_values_never_go_value_by_value(monkeypatch, old_text, new_text, values):
    """The point of the kernels: ordinary data never reaches the per-value reference."""

    def refuse(*args):
        raise AssertionError("converted value by value")

    array = _source_array(values, old_text)
    expected = _reference(array, old_text, new_text)
    monkeypatch.setattr(arrow_columns, "convert_values", refuse)
    got, rows = convert_array(array, parse_type(old_text), parse_type(new_text))
    assert rows == expected[1]
    assert all((g is None and e is None) or _same(g, e) for g, e in zip(got.to_pylist(), expected[0]))


def test_chunked_input_and_offsets():
    """Sliced and chunked arrays: the kernels read buffers at the right offsets."""
    texts = pa.array(["x", "2024-01-31", None, "24/1/5", " 7 ", "-12", "2023-02-29"])
    chunked = pa.chunked_array([texts.slice(1, 3), texts.slice(4)])
    for new_text in ("DATE", "INT", "DECIMAL(5,1)"):
        got, rows = convert_array(chunked, parse_type("STRING"), parse_type(new_text))
        expected, expected_rows = _reference(pa.concat_arrays(chunked.chunks), "STRING", new_text)
        assert got.to_pylist() == expected and rows == expected_rows
    decimals = pa.array([D("1.25"), None, D("-3.75"), D("9.99")], pa.decimal128(5, 2)).slice(1)
    got, rows = convert_array(decimals, parse_type("DECIMAL(5,2)"), parse_type("DECIMAL(1,0)"))
    assert got.to_pylist() == [None, D("-4"), None] and rows == [2]


@pytest.mark.parametrize(
    "old_text,new_text,values",
    [
        # exact float32 midpoints (ties to even), and values just off them
        ("DECIMAL(12,1)", "FLOAT", [D("16777217.0"), D("16777219.0"), D("16777217.1"), D("-16777218.9"), D("0.1")]),
        ("DECIMAL(20,0)", "FLOAT", [D(2**24 + 1), D(2**60 + 2**36 + 1), D(-(2**63)), D(2**63), D(10**19 + 1)]),
        ("LARGEINT", "DOUBLE", [2**53 + 1, -(2**53) - 1, 2**63, 10**38 - 1, -(10**38) + 1]),
        # Double.toString's digits decide ties: 1.005 prints "1.005" though the double is below it
        ("DOUBLE", "DECIMAL(5,2)", [1.005, 0.125, -0.125, 2.675, 1.0049999999999999, 999.995, 1e-300, -0.0]),
        ("DOUBLE", "LARGEINT", [2.0**53, 2.0**53 + 2, 1e23, -1e23, 1e38, 2.0**52 + 1]),
        ("FLOAT", "DECIMAL(20,18)", [0.1, 0.3, 1.5, -2.5, 16777216.0]),
    ],
)
def test_values_only_the_reference_settles(old_text, new_text, values):
    """Values the kernels hand to the reference (ties, exact midpoints, huge magnitudes)."""
    check(values, old_text, new_text)


@pytest.mark.parametrize("new_text", ["INT", "LARGEINT", "DOUBLE", "FLOAT", "DECIMAL(10,2)", "DECIMAL(38,2)", "DATE"])
def test_large_string_input(new_text):
    texts = [" 12 ", "2024-01-31", "1.5e2", None, "x", "20240229", "-0.005", "99/12/31"]
    array = pa.array(texts, pa.large_string())
    got, rows = convert_array(array, parse_type("STRING"), parse_type(new_text))
    expected, expected_rows = _reference(pa.array(texts), "STRING", new_text)
    assert rows == expected_rows
    assert all((g is None and e is None) or _same(g, e) for g, e in zip(got.to_pylist(), expected))


@pytest.mark.parametrize(
    "old_text,new_text,values",
    [
        ("STRING", "INT", [" 7", "x", None, "2147483648", "-3", "+0", "", "12"]),
        ("STRING", "DECIMAL(5,2)", ["1.005", "bad", "1" * 60, None, "999.995", "-0.001", "0." + "0" * 50 + "1"]),
        ("DOUBLE", "DECIMAL(5,2)", [1.005, 0.125, math.nan, None, 1e9, 2.675, -0.0]),
        ("DOUBLE", "STRING", [0.1, None, 1e23, math.inf]),
    ],
)
def test_long_columns_convert_in_slices(monkeypatch, old_text, new_text, values):
    """Row slices on threads: the same values and failed rows, numbered across slices."""
    monkeypatch.setattr(arrow_columns, "SLICE_ROWS", 3)
    monkeypatch.setattr(arrow_columns, "_thread_count", lambda: 3)
    assert len(arrow_columns._row_slices(len(values) * 5)) == 3
    check(values * 5, old_text, new_text)
    chunked = pa.chunked_array([_source_array(values, old_text), _source_array(values * 4, old_text)])
    got, rows = convert_array(chunked, parse_type(old_text), parse_type(new_text))
    expected, expected_rows = _reference(pa.concat_arrays(chunked.chunks), old_text, new_text)
    assert rows == expected_rows
    assert all((g is None and e is None) or _same(g, e) for g, e in zip(got.to_pylist(), expected))
