"""Importing the expectations (and so Great Expectations, which imports Spark Connect) never exits
the process, whatever its `__main__` (issue 35). pyspark's import check exits with status 0 under
`python -c` and `python -` when a Spark Connect dependency is missing: each case runs in a fresh
interpreter, with zstandard made unimportable where the case says so (an environment without the
project's pins), and must reach the line after the import."""

from __future__ import annotations

import subprocess
import sys

import pytest

AFTER_IMPORT = """
import alterflow.expectations.validation
import great_expectations.compatibility.pyspark as gx_pyspark
print("imported", type(gx_pyspark.ConnectDataFrame).__name__)
try:
    import pyspark.sql.connect
    print("spark connect importable")
except ImportError as exc:
    print("spark connect ImportError")
"""
WITHOUT_ZSTANDARD = "import sys\nsys.modules['zstandard'] = None  # as if it were not installed\n"


def _run(how: str, program: str, tmp_path) -> subprocess.CompletedProcess:
    if how == "-c":
        command, stdin = [sys.executable, "-c", program], None
    elif how == "-":
        command, stdin = [sys.executable, "-"], program
    else:  # a file: __main__ has __file__, pyspark raises ImportError itself
        script = tmp_path / "main.py"
        script.write_text(program)
        command, stdin = [sys.executable, str(script)], None
    return subprocess.run(command, input=stdin, cwd=tmp_path, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("how", ["-c", "-", "file"])
def test_a_missing_spark_connect_dependency_never_exits_the_process(how, tmp_path):
    done = _run(how, WITHOUT_ZSTANDARD + AFTER_IMPORT, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["imported NotImported", "spark connect ImportError"], done.stderr[-3000:]
    assert "Skipping doctests" not in done.stderr


def test_with_the_pinned_dependencies_spark_connect_imports_under_python_c(tmp_path):
    done = _run("-c", AFTER_IMPORT, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["imported type", "spark connect importable"], done.stderr[-3000:]
