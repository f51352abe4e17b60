"""Literals as Spark's parser reads them: type suffixes, scientific notation, TRY_CAST's name."""

LOCAL = {
    "integral literals with a type suffix (L, S, Y)": "SELECT 1L, 2S, 3Y, -1L, -128Y, 9223372036854775807L, -9223372036854775808L",
    "DOUBLE and DECIMAL literals (D, BD, 1e3)": "SELECT 1.5D, 0D, -0.0D, 1.5BD, 10BD, 1e3, -2.5e-2, 1E2 * 2 AS y",
    "TRY_CAST, named as Spark names it": "SELECT TRY_CAST(1 AS BIGINT), CAST(2 AS SMALLINT)",
}

SPARK_ONLY = {
    "a DOUBLE literal Java prints in scientific notation": "SELECT 1e10",
    "FLOAT literals (named as Java prints a float)": "SELECT 1.5F",
}

REJECTED = {
    "an integral literal outside its suffix's type": "SELECT 128Y",
}
