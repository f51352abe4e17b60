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
