"""Where alterflow keeps things, read from the environment (SPEC §8)."""

from __future__ import annotations

import os
import pathlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from alterflow.errors import UserError


class SettingError(UserError):
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


def _megabytes(env, name: str, default: int, least: int = 1) -> int:
    text = env.get(name)
    if text is None or text.strip() == "":
        return default
    if not text.strip().isdigit() or int(text.strip()) < least:
        raise SettingError(f"{name} must be a whole number of megabytes, at least {least}; got {text!r}")
    return int(text.strip())


DEFAULT_LEASE_S = 30.0
TARGET_FILE_MB = 128  # a load rolls a tablet's file at about this much data (Arrow bytes)
LOAD_BUFFER_MB = 384  # rows one load holds in memory before it writes the largest tablet's file (files being written come on top)
SPARK_LOAD_MB = 4096  # `alterflow load --engine auto` loads inputs at least this big through Spark
RENEWALS_PER_LEASE = 6  # a 30 s lease is renewed every 5 s


def lease_seconds(env=None) -> float:
    """ALTERFLOW_LEASE_S: how long a runner's lease on a job, or a load's on its transaction,
    lives without renewal (default 30). Holders renew it every sixth of that (5 s by default)."""
    env = os.environ if env is None else env
    text = env.get("ALTERFLOW_LEASE_S")
    if text is None or text.strip() == "":
        return DEFAULT_LEASE_S
    try:
        value = float(text.strip())
    except ValueError:
        raise SettingError(f"ALTERFLOW_LEASE_S must be a number of seconds, got {text!r}") from None
    if not 0.5 <= value <= 86400:
        raise SettingError(f"ALTERFLOW_LEASE_S must be between 0.5 and 86400 seconds, got {text!r}")
    return value


DEFAULT_CATALOG_NAME = "default"
CATALOG_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}")


def catalog_name(env: Mapping[str, str]) -> str:
    """ALTERFLOW_CATALOG_NAME: the catalog's name in the Airflow asset URIs of its tables
    (`alterflow://<catalog name>/<table>`); letters, digits, `_`, `.` and `-`, 63 at most."""
    name = env.get("ALTERFLOW_CATALOG_NAME", DEFAULT_CATALOG_NAME)
    if not CATALOG_NAME.fullmatch(name):
        raise SettingError(
            f"ALTERFLOW_CATALOG_NAME must be 1 to 63 letters, digits, '_', '.' or '-' (not starting with '.' or '-'); got {name!r}"
        )
    return name


def home_from_env(env: Mapping[str, str] | None = None) -> pathlib.Path:
    """ALTERFLOW_HOME (default `.alterflow` under the working directory), absolute."""
    env = os.environ if env is None else env
    return pathlib.Path(env.get("ALTERFLOW_HOME", ".alterflow")).absolute()


@dataclass(frozen=True)
class Settings:
    home: pathlib.Path
    catalog_url: str
    warehouse: pathlib.Path
    spark_master: str
    airflow_url: str | None
    txn_timeout_s: int = 3600
    gc_retention_s: int = 3600
    lease_s: float = DEFAULT_LEASE_S
    target_file_mb: int = TARGET_FILE_MB
    load_buffer_mb: int = LOAD_BUFFER_MB
    spark_load_mb: int = SPARK_LOAD_MB
    catalog_name: str = DEFAULT_CATALOG_NAME

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        home = home_from_env(env)
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
            lease_s=lease_seconds(env),
            target_file_mb=_megabytes(env, "ALTERFLOW_TARGET_FILE_MB", TARGET_FILE_MB),
            load_buffer_mb=_megabytes(env, "ALTERFLOW_LOAD_BUFFER_MB", LOAD_BUFFER_MB),
            spark_load_mb=_megabytes(env, "ALTERFLOW_SPARK_LOAD_MB", SPARK_LOAD_MB, least=0),
            catalog_name=catalog_name(env),
        )

    def ensure_dirs(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.warehouse.mkdir(parents=True, exist_ok=True)
