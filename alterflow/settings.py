"""Where alterflow keeps things, read from the environment (SPEC §8)."""

from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass


class SettingError(ValueError):
    """An environment variable holds a value alterflow cannot use."""


def _seconds(env, name: str, default: int) -> int:
    text = env.get(name)
    if text is None or text.strip() == "":
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise SettingError(f"{name} must be a whole number of seconds, got {text!r}") from None
    if value < 0:
        raise SettingError(f"{name} must be 0 or more seconds, got {text!r}")
    return value


@dataclass(frozen=True)
class Settings:
    home: pathlib.Path
    catalog_url: str
    warehouse: pathlib.Path
    spark_master: str
    airflow_url: str | None
    txn_timeout_s: int = 3600
    gc_retention_s: int = 3600

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Settings":
        env = os.environ if env is None else env
        home = pathlib.Path(env.get("ALTERFLOW_HOME", ".alterflow")).absolute()
        catalog_url = env.get("ALTERFLOW_CATALOG_URL") or f"sqlite:///{home / 'catalog.db'}"
        warehouse = pathlib.Path(env.get("ALTERFLOW_WAREHOUSE") or home / "warehouse").absolute()
        return cls(
            home=home,
            catalog_url=catalog_url,
            warehouse=warehouse,
            spark_master=env.get("ALTERFLOW_SPARK_MASTER", "local[*]"),
            airflow_url=env.get("ALTERFLOW_AIRFLOW_URL") or None,
            txn_timeout_s=int(env.get("ALTERFLOW_TXN_TIMEOUT", "3600")),
            gc_retention_s=_seconds(env, "ALTERFLOW_GC_RETENTION", 3600),
        )

    def ensure_dirs(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.warehouse.mkdir(parents=True, exist_ok=True)
