"""The shape of the production code (issue 27): no function in `alterflow/` or `catalog/` runs over
60 lines (Alembic's migrations and the ported `_dtoa` excepted), so that each reads as one step;
ruff's complexity rule (C901, at 15 in pyproject.toml) keeps the branches down, `make lint` runs it."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAX_LINES = 60
# A line-by-line port of the JDK's FloatingDecimal.dtoa (Java's float text, as Spark casts).
EXEMPT = {("alterflow/conversion/rules.py", "_dtoa")}


def _long_functions() -> list[str]:
    found = []
    for folder in ("alterflow", "catalog"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("catalog/migrations/"):
                continue
            for node in ast.walk(ast.parse(path.read_text(), relative)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (relative, node.name) not in EXEMPT:
                    lines = node.end_lineno - node.lineno + 1
                    if lines > MAX_LINES:
                        found.append(f"{relative}:{node.lineno} {node.name}: {lines} lines")
    return found


def test_no_function_runs_over_sixty_lines():
    assert not _long_functions()


def test_the_complexity_rule_is_on():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert "C901" in config["select"] and config["mccabe"]["max-complexity"] == 15
