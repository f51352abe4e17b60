"""Converting rows between two schema versions of a table, identically in Python (pyarrow, the
dual-write path of loads) and in Spark (the rewrite of history): see `arrow_convert`,
`spark_convert` and the shared rules in `rules`."""

from alterflow.conversion.arrow_convert import ArrowConversion, CastFailure, convert_arrow

__all__ = ["ArrowConversion", "CastFailure", "convert_arrow"]
