"""Conditional, string and math functions and decimal division (issue 37): Spark's answers, types
and unaliased column names, over the corpus's edge values (NULLs, extremes, '', non-ASCII)."""

LOCAL = {
    "nullif, nvl, nvl2, ifnull": "SELECT id, nullif(i, 0), nvl(s, 'none'), nvl2(s, 1, 2), ifnull(dc, 0) FROM nums",
    "greatest and least skip NULLs": "SELECT id, greatest(ti, si, i), least(dc, 1, NULL), greatest(s, vc) FROM nums",
    "left, right with negative and long lengths": "SELECT id, left(s, 2), right(s, 2), left(vc, -1), right(s, 100) FROM nums",
    "replace with and without a replacement": "SELECT id, replace(s, 'b', 'XY'), replace(s, 'a'), replace(s, '', 'z') FROM nums",
    "split_part": "SELECT id, split_part(s, ' ', 2), split_part(s, 'b', -1), split_part(s, '', 1), split_part(s, ',', 3) FROM nums",
    "lpad and rpad: default pad, empty pad, negative length, truncation": "SELECT id, lpad(s, 6), rpad(s, 6, 'xy'), lpad(s, 2, '-'), rpad(s, 5, ''), lpad(s, -1, 'x') FROM nums",
    "instr and locate": "SELECT id, instr(s, 'b'), locate('b', s), locate('b', s, 3), locate('', s, 2), locate('a', s, 0) FROM nums",
    "repeat, reverse, ltrim, rtrim": "SELECT id, repeat(vc, 2), repeat(vc, -1), reverse(vc), ltrim(s), rtrim(s) FROM nums WHERE id <> 6",
    "ascii, chr, char": "SELECT id, ascii(s), chr(i) FROM nums",
    "initcap over ASCII": "SELECT id, initcap(s) FROM nums WHERE id NOT IN (6, 11)",
    "concat_ws skips NULLs": "SELECT id, concat_ws('-', s, vc, NULL), concat_ws(vc, s) FROM nums",
    "startswith, endswith, contains": "SELECT id, startswith(s, 'a'), endswith(s, ''), contains(s, vc) FROM nums",
    "char_length, character_length, octet_length, len": "SELECT id, char_length(s), character_length(vc), octet_length(s), len(s) FROM nums",
    "round and bround of integers, decimals and doubles": "SELECT id, round(i, -1), bround(si, -1), round(dc, 1), bround(dc, 0), round(dw, -2), round(d, 1), bround(d, 0) FROM nums",
    "round at .5 ties": "SELECT round(2.5), round(-2.5, 0), bround(2.5), bround(-3.5, 0), round(CAST(0.125 AS DOUBLE), 2), bround(CAST(2.5 AS DOUBLE), 0)",
    "floor and ceil: BIGINT, DECIMAL and with a scale": "SELECT id, floor(d), ceil(f), ceiling(dc), floor(dw), floor(dc, 1), ceil(i, -2) FROM nums",
    "sign, signum": "SELECT id, sign(i), signum(d), sign(dc) FROM nums",
    "sqrt": "SELECT id, sqrt(d), sqrt(i) FROM nums",
    "mod, pmod, div": "SELECT id, mod(i, 3), pmod(i, -3), pmod(bi, 7), pmod(d, 2.5), pmod(dc, 3), i div 7, bi div -1, i div 0 FROM nums",
    "positive, negative, pi, e": "SELECT id, positive(i), negative(bi), pi(), e() FROM nums",
    "decimal division and remainder": "SELECT id, dc / dw, dc / 0, dc % dw, dw / 7, 1.0 / 3, dc / 3 FROM nums",
    "decimal arithmetic past 38 digits": "SELECT id, dw * dw, dw + dc * dc, dw - dw / 3 FROM nums",
    "avg of decimals of up to 12 digits": "SELECT g, avg(dc) FROM nums GROUP BY g",
}

SPARK_ONLY = {
    "string functions of numbers (Spark casts them to strings)": "SELECT left(i, 2) AS l FROM nums",
    "greatest of doubles (-0.0 and NaN in Spark's ordering)": "SELECT greatest(d, f) AS g FROM nums",
    "round of a float": "SELECT round(f, 1) AS r FROM nums",
    "math functions of a decimal of more than 15 digits (a double cast)": "SELECT sqrt(dw) AS r FROM nums",
    "div of decimals": "SELECT dc div 2 AS q FROM nums",
    "exp, ln, log, log2, log10, pow (StrictMath and DuckDB's libm differ in the last bit: exp(1), ln(3))": "SELECT exp(ti) AS x, ln(d) AS l, pow(d, 2) AS p FROM nums",
}

REJECTED = {
    "round to a computed scale": "SELECT round(dc, id) AS r FROM nums",
}
