"""An embedded Python interpreter (tests/support/embedded_python.c), compiled against this
interpreter's headers and libpython: a host program of the kind notebooks, plugins and
application servers are, whose `__main__` has neither file nor spec.

    binary = compile_embedded_python(folder)
    subprocess.run([binary, sys.executable, "print('hello')"])
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sysconfig

import pytest

SOURCE = pathlib.Path(__file__).with_name("embedded_python.c")


def compile_embedded_python(folder: pathlib.Path) -> pathlib.Path:
    """The binary, built in `folder`; skipped (failed under CI) without a C compiler or libpython."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    config = sysconfig.get_config_vars()
    include, libdir = config.get("INCLUDEPY"), config.get("LIBDIR")
    missing = (
        "no C compiler"
        if compiler is None
        else "no Python.h"
        if not include or not (pathlib.Path(include) / "Python.h").exists()
        else "no shared libpython"
        if not config.get("Py_ENABLE_SHARED")
        else None
    )
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"cannot build an embedded interpreter: {missing}")
        pytest.skip(f"cannot build an embedded interpreter: {missing}")
    binary = folder / "embedded_python"
    link = [f"-L{libdir}", f"-lpython{config['LDVERSION']}", f"-Wl,-rpath,{libdir}", "-ldl", "-lm"]
    subprocess.run([compiler, str(SOURCE), "-o", str(binary), f"-I{include}", *link], check=True, capture_output=True, timeout=120)
    return binary
