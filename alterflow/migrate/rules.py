"""The lint rules of `alterflow migrate lint`, read from the project's `pyproject.toml`:

    [tool.alterflow.lint]
    rewrite = "approve"                  # a statement that rewrites the table's data (HEAVY)
    drop_column = "warning"              # a statement that drops a column
    drop_table = "warning"               # DROP TABLE (its data goes once GC's retention passes)
    failed_casts = "error"               # with --analyze: values today's data would fail to convert
                                         # (on_cast_error = fail: with null or quarantine validation allows them)
    not_null = "error"                   # with --analyze: rows that would be NULL in a NOT NULL column
    duplicate_keys = "error"             # with --analyze: rows whose converted primary key another row has
    rewrite_rows_over = 10000000         # a rewrite of more rows than this (a number, or
                                         # { rows = N, level = "..." }); its level by default "warning"
    missing_expected_version = "off"     # an ALTER without PROPERTIES ("expected_version" = ...)
    backward_incompatible = "warning"    # a column rename, or a drop of a column a consumer reads;
                                         # names the views and Airflow DAGs that read it
    rejected = "error"                   # a statement the planner rejects: always an error

Levels: "error" (lint exits 1), "warning", "approve" (a person must say yes before it is applied:
the `alterflow_migrate` DAG's approval step; in the CLI, whoever runs apply approves), "off".
The file is the first `pyproject.toml` found from the migrations directory upwards, else from the
working directory upwards; without one, the defaults hold.
"""

from __future__ import annotations

import pathlib
import tomllib
from dataclasses import dataclass, field

from alterflow.errors import UserError, shown

LEVELS = ("error", "warning", "approve", "off")
DEFAULTS: dict[str, str] = {
    "rewrite": "approve",
    "drop_column": "warning",
    "drop_table": "warning",
    "failed_casts": "error",
    "not_null": "error",
    "duplicate_keys": "error",
    "rewrite_rows_over": "warning",
    "missing_expected_version": "off",
    "backward_incompatible": "warning",
    "rejected": "error",
}
DEFAULT_ROWS_OVER = 10_000_000


class LintConfigError(UserError):
    """`[tool.alterflow.lint]` holds a rule or level alterflow does not know; the message names it."""


@dataclass(frozen=True)
class LintRules:
    levels: dict[str, str] = field(default_factory=lambda: dict(DEFAULTS))
    rows_over: int = DEFAULT_ROWS_OVER
    source: str = "defaults"  # where they were read from

    def level(self, rule: str) -> str:
        return self.levels[rule]


def find_pyproject(start: pathlib.Path) -> pathlib.Path | None:
    for folder in [start.resolve(), *start.resolve().parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_rules(migrations: pathlib.Path | None = None, pyproject: pathlib.Path | None = None, *, from_cwd: bool = True) -> LintRules:
    """The rules of `pyproject` (default: the nearest pyproject.toml in `migrations` or a folder
    above it, then, with `from_cwd`, in the working directory or above). Airflow's tasks and the
    Schema changes page read only the directory's own (`from_cwd=False`): a worker's or the
    api-server's working directory is not the project whose migrations they read."""
    if pyproject is None:
        pyproject = find_pyproject(migrations) if migrations is not None and migrations.exists() else None
        if pyproject is None and from_cwd:
            pyproject = find_pyproject(pathlib.Path.cwd())
    if pyproject is None:
        return LintRules()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise LintConfigError(f"cannot read {pyproject}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise LintConfigError(f"{pyproject} is not valid TOML: {exc}") from None
    section = data.get("tool", {}).get("alterflow", {}).get("lint")
    if section is None:
        return LintRules(source=str(pyproject))
    return parse_rules(section, str(pyproject))


def parse_rules(section: object, source: str = "[tool.alterflow.lint]") -> LintRules:
    where = f"{source} [tool.alterflow.lint]"
    if not isinstance(section, dict):
        raise LintConfigError(f"{where} must be a table of rule = level")
    levels = dict(DEFAULTS)
    rows_over = DEFAULT_ROWS_OVER
    for rule, value in section.items():
        if rule not in DEFAULTS:
            raise LintConfigError(f"{where}: unknown rule {shown(rule)} (known: {', '.join(DEFAULTS)})")
        if rule == "rewrite_rows_over":
            if isinstance(value, dict):
                unknown = set(value) - {"rows", "level"}
                if unknown:
                    raise LintConfigError(f"{where}: rewrite_rows_over takes rows and level, not {shown(sorted(unknown)[0])}")
                level = value.get("level", DEFAULTS[rule])
                rows = value.get("rows", DEFAULT_ROWS_OVER)
            else:
                level, rows = DEFAULTS[rule], value
            if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
                raise LintConfigError(f"{where}: rewrite_rows_over must be a whole number of rows, not {shown(rows)}")
            rows_over = rows
            value = level
        if value not in LEVELS:
            raise LintConfigError(f"{where}: rule {rule} has unknown level {shown(value)} (use one of {', '.join(LEVELS)})")
        if rule == "rejected" and value != "error":
            raise LintConfigError(f"{where}: rule rejected is always an error (a rejected statement cannot be applied)")
        levels[rule] = value
    return LintRules(levels, rows_over, source)
