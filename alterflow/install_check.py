"""Fails the install when pyspark's Python files and its jars disagree on the version.

`pyspark-client` (pulled by the Spark provider) ships the same `pyspark` package without jars and
overwrites pyspark's Python files when installed after it; the lock file excludes it, and this
check catches the mismatch if it ever comes back.
"""

from __future__ import annotations

import pathlib
import re
import sys


def jar_version() -> str | None:
    import pyspark

    jars = pathlib.Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("spark-core_*.jar")):
        match = re.match(r"spark-core_[\d.]+-(.+)\.jar$", jar.name)
        if match:
            return match.group(1)
    return None


def main() -> int:
    import pyspark

    jars = jar_version()
    if jars is None:
        print("error: pyspark has no jars (is pyspark-client installed instead of pyspark?)", file=sys.stderr)
        return 1
    if jars != pyspark.__version__:
        print(
            f"error: pyspark Python files are {pyspark.__version__} but its jars are {jars}; "
            "reinstall pyspark (pyspark-client must not be installed)",
            file=sys.stderr,
        )
        return 1
    print(f"pyspark {pyspark.__version__} (jars {jars}) ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
