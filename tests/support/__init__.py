"""The helpers the tests share: one copy of each, imported as `tests.support.<module>`.

A child Python process started by a test imports them too when its PYTHONPATH holds the repository
root (`child_pythonpath`)."""

from __future__ import annotations

import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]


def child_pythonpath(existing: str | None = None) -> str:
    """PYTHONPATH for a child Python process: the repository root (for `tests.support`) and plugins/
    (for `alterflow.airflow`, as Airflow puts it on sys.path), ahead of `existing`."""
    return os.pathsep.join(p for p in (str(REPO), str(REPO / "plugins"), existing) if p)


def point_alterflow_env_at(settings, monkeypatch) -> None:
    """Set ALTERFLOW_HOME, _CATALOG_URL, _WAREHOUSE and _SPARK_MASTER to `settings`' (the plugin,
    the triggers and the task bodies read them as the CLI does)."""
    for name, value in (
        ("ALTERFLOW_HOME", settings.home),
        ("ALTERFLOW_CATALOG_URL", settings.catalog_url),
        ("ALTERFLOW_WAREHOUSE", settings.warehouse),
        ("ALTERFLOW_SPARK_MASTER", settings.spark_master),
    ):
        monkeypatch.setenv(name, str(value))
