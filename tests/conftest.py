"""Shared fixtures: one local SparkSession for the whole test session, catalogs on SQLite and PostgreSQL."""

from __future__ import annotations

import logging
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

REPO = pathlib.Path(__file__).resolve().parent.parent

# Airflow reads its configuration when first imported, so the test run's Airflow home (a throwaway
# directory with a SQLite metadata database, the project's dags and plugins) is set before any test
# module can import it. The `airflow_db` fixture creates that database.
AIRFLOW_TEST_HOME = pathlib.Path(tempfile.mkdtemp(prefix="alterflow-airflow-"))
os.environ["AIRFLOW_HOME"] = str(AIRFLOW_TEST_HOME)
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(REPO / "dags")
os.environ["AIRFLOW__CORE__PLUGINS_FOLDER"] = str(REPO / "plugins")
os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = f"sqlite:///{AIRFLOW_TEST_HOME / 'airflow.db'}"
os.environ.pop("ALTERFLOW_AIRFLOW_URL", None)  # tests drive Airflow explicitly, never by accident
# Tokens of the plugin tests are signed with this (Airflow would make a short random one and warn).
os.environ.setdefault("AIRFLOW__API_AUTH__JWT_SECRET", "alterflow-tests-" + "0123456789abcdef" * 4)
# The suite's Spark drivers (this process's and every CLI, runner and spark-submit it starts) live a
# few seconds on small data each: their JVMs compile with C1 only, which starts and warms up faster
# on two cores. What Spark computes does not change; `make bench` measures with the JVM's defaults.
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1")
# py4j logs at INFO from __del__ at interpreter exit, after the streams are closed: keep it quiet.
logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture(scope="session")
def airflow_db():
    """The test run's Airflow metadata database, migrated once (about 7 s)."""
    airflow = pathlib.Path(sys.executable).parent / "airflow"
    subprocess.run([str(airflow), "db", "migrate"], check=True, capture_output=True, env=os.environ.copy())
    return AIRFLOW_TEST_HOME


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """The one SparkSession of the test run (local mode, small and quiet). Its JVM writes to
    spark.log in a folder of the run's temporary directory, not under the working directory."""
    from alterflow.settings import Settings
    from alterflow.spark_session import get_spark

    settings = Settings.from_env({**os.environ, "ALTERFLOW_SPARK_MASTER": "local[2]"})
    return get_spark(settings, log_path=tmp_path_factory.mktemp("spark") / "spark.log")


PG_ADMIN_URL = os.environ.get("ALTERFLOW_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _pg_available() -> bool:
    try:
        import sqlalchemy

        engine = sqlalchemy.create_engine(PG_ADMIN_URL)
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
        engine.dispose()
        return True
    except Exception:
        return False


@pytest.fixture
def pg_empty_url():
    """A fresh, empty PostgreSQL schema for one test, as a catalog URL (search_path set)."""
    import uuid

    import sqlalchemy

    if not _pg_available():
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is not reachable at {PG_ADMIN_URL}")
        pytest.skip("PostgreSQL is not reachable")
    schema = f"af_test_{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    url = f"{PG_ADMIN_URL}?options=-csearch_path%3D{schema}"
    yield url
    from alterflow.catalog.database import close_engine

    close_engine(url)  # the process keeps one engine per catalog URL: without this, one pool per test stays open
    with admin.connect() as conn:
        conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
    admin.dispose()


@pytest.fixture
def pg_url(pg_empty_url):
    """`pg_empty_url` with this release's catalog tables, as `alterflow db upgrade` makes them (a
    PostgreSQL catalog is never migrated implicitly)."""
    from alterflow.catalog.database import upgrade_catalog

    upgrade_catalog(pg_empty_url)
    return pg_empty_url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def catalog_url(request, tmp_path):
    """Each catalog test runs on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'catalog.db'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def catalog(catalog_url):
    from alterflow.catalog.catalog import Catalog

    return Catalog(catalog_url)


@pytest.fixture
def settings(tmp_path, catalog_url):
    """Settings for an embedded alterflow under tmp_path (catalog on the parametrised database)."""
    from alterflow.settings import Settings

    return Settings.from_env(
        {"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_CATALOG_URL": catalog_url, "ALTERFLOW_SPARK_MASTER": "local[2]"}
    )


@pytest.fixture
def sqlite_settings(tmp_path):
    from alterflow.settings import Settings

    return Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_SPARK_MASTER": "local[2]"})


@pytest.fixture
def session(sqlite_settings, spark):
    """An embedded alterflow session on SQLite under tmp_path, sharing the test run's SparkSession."""
    from alterflow.engine.session import Session

    return Session(sqlite_settings)


@pytest.fixture
def catalog_session(settings):
    """An embedded alterflow session on the parametrised catalog (SQLite, PostgreSQL) under tmp_path.
    It starts Spark only when a statement needs it (a test that needs Spark asks for `spark` too)."""
    from alterflow.engine.session import Session

    return Session(settings)


@pytest.fixture
def run(session):
    """run(sql) -> the last result's rows (or the Done message) of the statements."""
    from alterflow.engine.session import ResultSet

    def _run(text: str):
        results = list(session.run(text))
        last = results[-1] if results else None
        return last.rows if isinstance(last, ResultSet) else last

    return _run


@pytest.fixture
def private_pg():
    """A PostgreSQL server of the test's own (empty), which the test may stop and restart."""
    from tests.support.private_postgres import PrivatePostgres, postgres_bin

    if postgres_bin() is None or os.geteuid() != 0:
        reason = "a PostgreSQL server of the test's own needs Debian's server binaries and root (initdb as postgres)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    server = PrivatePostgres()
    server.start()
    yield server
    server.remove()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """The test run's S3-protocol server (moto's, tests.support.s3_server), started on first use."""
    from tests.support.s3_server import S3Server

    server = S3Server(tmp_path_factory.mktemp("s3") / "moto.log").start()
    yield server
    server.stop()


@pytest.fixture
def s3_bucket(s3_server, monkeypatch):
    """An empty bucket of the test run's S3 server, with the AWS variables that reach it set in
    this process's environment (as a user sets them); emptied and deleted afterwards."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    bucket = s3_server.bucket()
    yield bucket
    s3_server.drop(bucket)


@pytest.fixture
def alterflow_env(settings, monkeypatch):
    """The plugin, the triggers and the task bodies read ALTERFLOW_* like the CLI: point them at this
    test's catalog and warehouse."""
    from tests.support import point_alterflow_env_at

    point_alterflow_env_at(settings, monkeypatch)
    return settings


@pytest.fixture
def plugin_session(alterflow_env):
    """A Session on the same catalog and warehouse as the plugin (Spark only when a statement needs it)."""
    from alterflow.engine.session import Session

    return Session(alterflow_env)
