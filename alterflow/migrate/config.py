"""How `alterflow migrate` treats versions out of line, read from the project's `pyproject.toml`
(the same file as the lint rules, `alterflow.migrate.rules.find_pyproject`):

    [tool.alterflow.migrate]
    out_of_order = false   # true: apply runs a pending file below an applied version, and says so
                           # (Flyway's outOfOrder); false: such a file is blocking drift
    future = "warning"     # a version in the history above every file (an older checkout):
                           # "warning" (apply goes on with the pending files, as Flyway's default
                           # ignoreMigrationPatterns "*:future" does) or "error" (apply refuses)

An unknown key or value is refused in one line; without the section, the defaults hold.
"""

from __future__ import annotations

import dataclasses
import pathlib
import tomllib
from dataclasses import dataclass

from alterflow.errors import UserError, shown
from alterflow.migrate.rules import find_pyproject

FUTURE_LEVELS = ("warning", "error")
KEYS = ("out_of_order", "future")


class MigrateConfigError(UserError):
    """`[tool.alterflow.migrate]` holds a key or value alterflow does not know; the message names it."""


@dataclass(frozen=True)
class MigrateConfig:
    out_of_order: bool = False
    future: str = "warning"  # "warning" or "error"
    source: str = "defaults"

    def with_out_of_order(self, flag: bool) -> MigrateConfig:
        """The config with `--out-of-order` given on the command line (a flag only turns it on)."""
        return dataclasses.replace(self, out_of_order=True) if flag else self


def load_migrate_config(migrations: pathlib.Path | None = None, pyproject: pathlib.Path | None = None) -> MigrateConfig:
    """`[tool.alterflow.migrate]` of `pyproject` (default: the first found from `migrations`
    upwards, else from the working directory upwards)."""
    if pyproject is None:
        pyproject = (find_pyproject(migrations) if migrations is not None and migrations.exists() else None) or find_pyproject(
            pathlib.Path.cwd()
        )
    if pyproject is None:
        return MigrateConfig()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise MigrateConfigError(f"cannot read {pyproject}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise MigrateConfigError(f"{pyproject} is not valid TOML: {exc}") from None
    tool = data.get("tool", {})
    alterflow = tool.get("alterflow", {}) if isinstance(tool, dict) else {}
    section = alterflow.get("migrate") if isinstance(alterflow, dict) else None
    if section is None:
        return MigrateConfig(source=str(pyproject))
    return parse_migrate_config(section, str(pyproject))


def parse_migrate_config(section: object, source: str = "pyproject.toml") -> MigrateConfig:
    where = f"{source} [tool.alterflow.migrate]"
    if not isinstance(section, dict):
        raise MigrateConfigError(f"{where} must be a table of key = value")
    out_of_order, future = False, "warning"
    for key, value in section.items():
        if key not in KEYS:
            raise MigrateConfigError(f"{where}: unknown key {shown(key)} (known: {', '.join(KEYS)})")
        if key == "out_of_order":
            if not isinstance(value, bool):
                raise MigrateConfigError(f"{where}: out_of_order must be true or false, not {shown(value)}")
            out_of_order = value
        else:
            if value not in FUTURE_LEVELS:
                raise MigrateConfigError(f"{where}: future must be one of {', '.join(FUTURE_LEVELS)}, not {shown(value)}")
            future = value
    return MigrateConfig(out_of_order, future, source)
