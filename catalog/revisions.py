"""The catalog's migrations on disk (Alembic's scripts) and the newest of them, read without
importing Alembic or SQLAlchemy."""

from __future__ import annotations

import pathlib

MIGRATIONS = pathlib.Path(__file__).parent / "migrations"


def head_revision() -> str:
    """The newest migration, read from the file names (`NNNN_*.py`) without importing Alembic."""
    return max(p.name.split("_", 1)[0] for p in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))
