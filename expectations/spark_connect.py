"""Spark Connect imported so that it cannot end the process (issue 35: any `__main__`, any thread).

Great Expectations imports `pyspark.sql.connect` (for its Spark Connect DataFrame type) and falls
back when that raises ImportError. But pyspark's own check on that import
(`pyspark.sql.connect.utils.check_dependencies`) takes a `__main__` without a file and without a
spec (`python -c`, `python -`, `runpy.run_path` from either, an embedded interpreter, some notebook
kernels) for pyspark's doctests: when a Spark Connect dependency (zstandard, grpcio, ...) is missing,
it prints "Skipping doctests" and calls `sys.exit(0)`. In a heavyweight job's driver thread that
ended the thread mid-job; on the main thread the process exited 0 having done nothing.

The project pins those dependencies (`pyspark[connect]`), so its own environment never meets this.
`import_spark_connect` is the guard for any other environment: where pyspark would exit, Spark
Connect is marked unimportable instead (`import pyspark.sql.connect` then raises ImportError, which
Great Expectations expects), and a SystemExit from that import for any other reason is turned into
the same. Nothing changes where the import works, or raises ImportError by itself.
"""

from __future__ import annotations

import importlib
import sys

SPARK_CONNECT = "pyspark.sql.connect"


def _main_looks_like_doctests() -> bool:
    """pyspark's own test (check_dependencies): `__main__` with neither spec nor file, and no
    interactive prompt. A process without `__main__` cannot import Spark Connect at all (pyspark
    reads `sys.modules["__main__"]`)."""
    main = sys.modules.get("__main__")
    if main is None:
        return True
    return getattr(main, "__spec__", None) is None and not hasattr(main, "__file__") and not hasattr(sys, "ps1")


def _spark_connect_missing_a_dependency() -> bool:
    """pyspark's own list of what Spark Connect needs (the message it would print before exiting)."""
    if "__main__" not in sys.modules:
        return True
    try:
        from pyspark.testing.utils import connect_requirement_message
    except ImportError:  # pyspark's check imports it too: Spark Connect cannot be imported here either
        return True
    return bool(connect_requirement_message)


def import_spark_connect() -> None:
    """Import `pyspark.sql.connect` now, or leave it unimportable (ImportError); never exit."""
    if SPARK_CONNECT in sys.modules:
        return
    if _main_looks_like_doctests() and _spark_connect_missing_a_dependency():
        sys.modules[SPARK_CONNECT] = None  # later imports raise ModuleNotFoundError: Great Expectations falls back
        return
    try:
        importlib.import_module(SPARK_CONNECT)
    except ImportError:  # a missing dependency, said the usual way: Great Expectations falls back
        return
    except SystemExit:  # any other path of pyspark's to sys.exit on import
        sys.modules[SPARK_CONNECT] = None
