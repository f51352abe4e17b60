"""The shape of the production code: no function of a package the wheel installs (`alterflow/`,
`catalog/`, `expectations/`, `spark_jobs/`: pyproject.toml's package-dir) runs over 60 lines
(Alembic's migrations and the ported `_dtoa` excepted), so that each reads as one step; ruff's
complexity rule (C901, at 15 in pyproject.toml) keeps the branches down, `make lint` runs it."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAX_LINES = 60
# A line-by-line port of the JDK's FloatingDecimal.dtoa (Java's float text, as Spark casts).
EXEMPT = {("alterflow/values/cast_rules.py", "_dtoa")}
INSTALLED = ("alterflow", "catalog", "expectations", "spark_jobs")


def _long_functions() -> list[str]:
    found = []
    for folder in INSTALLED:
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


def test_every_installed_package_is_read():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {folder.split("/")[0] for folder in config.get("package-dir", {}).values() if folder}
    assert folders | {"alterflow"} == set(INSTALLED), folders
