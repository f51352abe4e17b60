"""What `pip install .` puts into site-packages: one import root, `alterflow`. The folders the users
asked for (catalog/, expectations/, spark_jobs/) install as alterflow.catalog, alterflow.expectations
and alterflow.spark_jobs (pyproject.toml's package-dir), with the catalog's migrations, so nothing
generic lands at the top of site-packages."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

CHECK = """
import importlib.util, pathlib, sys
import alterflow.catalog.catalog, alterflow.expectations.schema_change, alterflow.cli.command
from alterflow.catalog.catalog import Catalog
from alterflow.rewrite.spark_submit import application_path
target = pathlib.Path(sys.argv[1])
for module in (alterflow, alterflow.catalog, alterflow.expectations):
    assert pathlib.Path(module.__file__).is_relative_to(target), module.__file__
assert pathlib.Path(application_path()).is_relative_to(target), application_path()
for generic in ("catalog", "expectations", "spark_jobs"):
    assert importlib.util.find_spec(generic) is None, generic
from alterflow.catalog.database import make_engine, upgrade
upgrade(make_engine(f"sqlite:///{target.parent / 'catalog.db'}"))  # the packaged migrations run
print("ok")
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> pathlib.Path:
    """The wheel, built from a copy of the sources: a build in the checkout would leave an
    egg-info there, a second copy of the distribution (entry points and all) on the tests' path."""
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source") / "alterflow"
    skipped = shutil.ignore_patterns(".*", "build", "*.egg-info", "__pycache__", "tests", "bench", "docs")
    shutil.copytree(ROOT, source, ignore=skipped)
    done = subprocess.run(
        [sys.executable, "-m", "uv", "build", "--wheel", "--no-build-logs", "-q", "-o", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (found,) = out.glob("alterflow-*.whl")
    return found


def test_the_wheel_has_one_import_root(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"alterflow"}
    for expected in (
        "alterflow/catalog/catalog.py",
        "alterflow/catalog/migrations/env.py",
        "alterflow/catalog/migrations/script.py.mako",
        "alterflow/catalog/migrations/versions/0001_catalog_tables.py",
        "alterflow/expectations/schema_change.py",
        "alterflow/spark_jobs/convert_history.py",
        "alterflow/log4j2.properties",
        "alterflow/migrate/apply.py",  # alterflow.airflow.dags imports it
        "alterflow/api/table.py",  # the Python API
        "alterflow/py.typed",  # its types, for the users' type checkers
    ):
        assert expected in names, expected
    # Every package of the checkout is in the wheel (pyproject.toml lists them by hand).
    for init in (ROOT / "alterflow").rglob("__init__.py"):
        packaged = f"alterflow/{init.relative_to(ROOT / 'alterflow').as_posix()}"
        assert packaged in names, f"{init.parent.relative_to(ROOT)} is missing from pyproject.toml's packages"


def test_the_wheel_registers_the_airflow_plugin_and_its_extra(wheel):
    """`pip install alterflow[airflow]`: Airflow finds the plugin and the provider (the connection
    type alterflow) through the entry points; the extra brings Airflow and the Spark provider,
    which the core does not need; `celery` brings the CeleryExecutor."""
    archive = zipfile.ZipFile(wheel)
    info = next(n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt"))
    entry_points = archive.read(info).decode()
    assert "[airflow.plugins]\nalterflow = alterflow.airflow.plugin:AlterflowPlugin" in entry_points
    # As provider packages do: the connection type alterflow and its hook (ProvidersManager reads it).
    assert "[apache_airflow_provider]\nprovider_info = alterflow.airflow.provider:get_provider_info" in entry_points
    metadata = archive.read(info.replace("entry_points.txt", "METADATA")).decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    airflow = [line for line in requires if "apache-airflow" in line and "celery" not in line]
    assert airflow and all('extra == "airflow"' in line for line in airflow), airflow
    # `pip install alterflow[airflow,celery]`: the CeleryExecutor's provider, and a Celery its workers start with.
    celery = [line for line in requires if "celery" in line]
    assert len(celery) == 2 and all('extra == "celery"' in line for line in celery), celery


def test_the_installed_package_imports_and_migrates_without_the_checkout(wheel, tmp_path):
    target = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "uv", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": str(target)}
    # As `python -c`, which once exited in pyspark's Spark Connect check (expectations/spark_connect.py).
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(target)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
