"""Helpers of the migration tests: a migrations directory written file by file."""

from __future__ import annotations

import pathlib

import pytest


class MigrationsDir:
    def __init__(self, path: pathlib.Path):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)

    def write(self, name: str, text: str) -> pathlib.Path:
        target = self.path / name
        target.write_text(text, encoding="utf-8")
        return target


@pytest.fixture
def migrations(tmp_path) -> MigrationsDir:
    return MigrationsDir(tmp_path / "migrations")


ORDERS = "CREATE TABLE orders (id BIGINT NOT NULL, amount INT, note VARCHAR(20), PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2;\n"
