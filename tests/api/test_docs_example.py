"""docs/python.md's Python example runs as it is written, in a process of its own."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def python_blocks(section: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"## {section}")
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start : end if end != -1 else len(text)], re.S)


def test_the_python_api_example_runs(tmp_path):
    (block,) = python_blocks("Python API")[:1]
    script = tmp_path / "example.py"
    script.write_text(block + "\nassert rows.num_rows == 2 and list(old['code']) == ['7', '8'], (rows, old)\nprint('example ok')\n")
    env = {"ALTERFLOW_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("example ok") and "FINISHED" in done.stdout, done.stdout
