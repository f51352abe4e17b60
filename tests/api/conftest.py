"""A Python API connection on the parametrised catalog (SQLite, PostgreSQL) under tmp_path."""

from __future__ import annotations

import pytest

import alterflow


@pytest.fixture
def api(settings):
    connection = alterflow.connect(
        settings.catalog_url,
        settings.warehouse,
        env={"ALTERFLOW_HOME": str(settings.home), "ALTERFLOW_SPARK_MASTER": "local[2]"},
    )
    yield connection
    connection.close()
