"""Converting a table's rows between two schema versions, identically in Python (pyarrow, the
dual-write path of loads) and in Spark (the rewrite of history): see `arrow_convert` and
`spark_convert`. Each column is cast by the rules and kernels of `alterflow.values`
(`arrow_columns`, `spark_kernels`); what this
package adds is the table: columns matched by id, defaults of added columns, extra columns kept,
failures collected as ON CAST ERROR asks. (It reads the catalog's schema versions, which the type
system of `alterflow.values` sits below: that is why the two are separate packages.)"""

from alterflow.conversion.arrow_convert import ArrowConversion, CastFailure, convert_arrow

__all__ = ["ArrowConversion", "CastFailure", "convert_arrow"]
