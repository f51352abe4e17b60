"""`deploy/airflow_env.py`, the environment `make airflow` runs Airflow with: checked against what
Airflow itself reads (SimpleAuthManager's passwords file, the Spark provider's connection), and its
bad input (one error line, nothing written)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "airflow_env.py"


def load_module():
    spec = importlib.util.spec_from_file_location("airflow_env", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def airflow_env():
    return load_module()


def test_environment_has_the_projects_folders_user_and_the_clis_settings(airflow_env, tmp_path):
    base = {
        "PATH": "/usr/bin",
        "ALTERFLOW_HOME": str(tmp_path / "home"),
        "ALTERFLOW_AIRFLOW_URL": "http://elsewhere:8080",
        "AIRFLOW__CORE__PARALLELISM": "8",
    }
    env = airflow_env.airflow_environment(base, home=tmp_path / "af", port=18123)
    assert env["AIRFLOW_HOME"] == str(tmp_path / "af")
    assert env["AIRFLOW__CORE__DAGS_FOLDER"] == str(REPO / "dags")
    assert env["AIRFLOW__CORE__PLUGINS_FOLDER"] == str(REPO / "plugins")
    assert env["AIRFLOW__CORE__LOAD_EXAMPLES"] == "False"
    assert env["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"] == "admin:admin"
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == f"sqlite:///{tmp_path / 'af' / 'airflow.db'}"
    assert env["AIRFLOW__API__PORT"] == "18123"
    assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:18123/execution/"
    assert env["AIRFLOW__CORE__PARALLELISM"] == "8", "the user's own Airflow settings are kept"
    assert "ALTERFLOW_AIRFLOW_URL" not in env, "inside Airflow an ALTER must not be submitted to Airflow again"
    # the CLI's settings, explicit: the same catalog and warehouse as `alterflow sql` with that home
    from alterflow.settings import Settings

    cli = Settings.from_env(base)
    assert env["ALTERFLOW_CATALOG_URL"] == cli.catalog_url
    assert env["ALTERFLOW_WAREHOUSE"] == str(cli.warehouse)
    assert env["PATH"].split(":")[0] == str(pathlib.Path(sys.executable).parent)


def test_a_base_url_path_reaches_the_execution_api_and_the_banner(airflow_env, tmp_path):
    """Behind a reverse proxy at /airflow: the workers call the execution API under that path."""
    base = {"ALTERFLOW_HOME": str(tmp_path / "home"), "AIRFLOW__API__BASE_URL": "https://example.test/airflow/"}
    env = airflow_env.airflow_environment(base, home=tmp_path / "af", port=18125)
    assert env["AIRFLOW__API__BASE_URL"] == "https://example.test/airflow/", "the user's base URL is kept"
    assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:18125/airflow/execution/"
    assert "alterflow on Airflow: http://localhost:18125/airflow\n" in airflow_env.banner(env)


def test_the_banner_never_prints_a_password(airflow_env, tmp_path):
    """`make airflow` names the user and the passwords file; neither the admin's password nor the
    catalog URL's is printed, in a URL or anywhere."""
    base = {
        "ALTERFLOW_HOME": str(tmp_path / "home"),
        "ALTERFLOW_AIRFLOW_PASSWORD": "adminpw-7f3a",
        "ALTERFLOW_CATALOG_URL": "postgresql://alterflow:catalogpw-91c2@db.example:5432/alterflow",
    }
    env = airflow_env.airflow_environment(base, home=tmp_path / "af")
    airflow_env.prepare_home(env, airflow_env.admin_password(base))
    text = airflow_env.banner(env)
    assert "adminpw-7f3a" not in text and "catalogpw-91c2" not in text
    assert "postgresql://alterflow:***@db.example:5432/alterflow" in text
    assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"] in text
    # the line it offers for the CLI reads the password from that file
    export = next(line.strip() for line in text.splitlines() if "export ALTERFLOW_AIRFLOW_PASSWORD=" in line)
    shell = subprocess.run(["sh", "-c", f'{export}; printf %s "$ALTERFLOW_AIRFLOW_PASSWORD"'], capture_output=True, text=True, timeout=30)
    assert shell.stdout == "adminpw-7f3a", shell.stderr
    assert airflow_env.without_password("sqlite:////tmp/catalog.db") == "sqlite:////tmp/catalog.db"


def test_sqlite_metadata_waits_for_its_lock_as_airflow_reads_it(airflow_env, tmp_path):
    """Airflow itself resolves the connect-args setting (plugins/ is on its path) to a 60 s wait;
    another database gets no SQLite-only argument."""
    env = airflow_env.airflow_environment({"ALTERFLOW_HOME": str(tmp_path / "home")}, home=tmp_path / "af")
    read = (
        "from airflow.configuration import conf; "
        "print(conf.getimport('database', 'sql_alchemy_connect_args')['timeout'], "
        "conf.getimport('database', 'sql_alchemy_connect_args_async')['timeout'])"
    )
    done = subprocess.run([sys.executable, "-c", read], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "60 60"

    postgres = airflow_env.airflow_environment(
        {"ALTERFLOW_HOME": str(tmp_path / "home")}, home=tmp_path / "af", database_url="postgresql+psycopg://u@h/airflow"
    )
    assert not {k for k in postgres if k.startswith("AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS")}


def test_spark_default_resolves_to_the_clis_master(airflow_env, tmp_path, monkeypatch):
    """The connection as the Spark provider's SparkSubmitHook resolves it (from the environment)."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    for master in ("local[*]", "spark://spark-master:7077"):
        env = airflow_env.airflow_environment({"ALTERFLOW_SPARK_MASTER": master}, home=tmp_path / "af")
        monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", env["AIRFLOW_CONN_SPARK_DEFAULT"])
        assert SparkSubmitHook(conn_id="spark_default")._connection["master"] == master


def test_alterflow_default_names_the_clis_catalog_and_warehouse(airflow_env, tmp_path, monkeypatch):
    """`make airflow` defines the connection alterflow_default, as AlterflowHook resolves it (from
    the environment); a catalog password travels in the connection's password field, not the URL."""
    from alterflow.airflow.hooks import AlterflowHook

    cases = {
        f"sqlite:///{tmp_path / 'c.db'}": f"sqlite:///{tmp_path / 'c.db'}",
        "postgresql+psycopg://af:p%40ss@db:5432/cat": "postgresql+psycopg://af:p%40ss@db:5432/cat",
    }
    for url, expected in cases.items():
        env = airflow_env.airflow_environment(
            {"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_CATALOG_URL": url}, home=tmp_path / "af"
        )
        connection = json.loads(env["AIRFLOW_CONN_ALTERFLOW_DEFAULT"])
        assert "p%40ss" not in connection["extra"]["catalog_url"] and "p@ss" not in connection["extra"]["catalog_url"]
        monkeypatch.setenv("AIRFLOW_CONN_ALTERFLOW_DEFAULT", env["AIRFLOW_CONN_ALTERFLOW_DEFAULT"])
        hook = AlterflowHook()
        settings = hook.get_settings()
        assert hook.source == "Airflow connection alterflow_default"
        assert (settings.catalog_url, settings.warehouse) == (expected, tmp_path / "home" / "warehouse")


def test_passwords_file_is_what_simple_auth_manager_reads(airflow_env, tmp_path):
    from airflow.api_fastapi.auth.managers.simple.simple_auth_manager import SimpleAuthManager

    env = airflow_env.airflow_environment({"ALTERFLOW_HOME": str(tmp_path / "home")}, home=tmp_path / "af")
    airflow_env.prepare_home(env, "s3cret")
    path = pathlib.Path(env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"])
    with open(path) as stream:
        assert SimpleAuthManager._get_passwords(stream) == {"admin": "s3cret"}
    assert path.stat().st_mode & 0o077 == 0
    assert (tmp_path / "home" / "warehouse").is_dir()


def test_env_command_prints_exports(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--home", str(tmp_path / "af"), "--port", "18124", "env"],
        env={"PATH": "/usr/bin", "ALTERFLOW_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        check=True,
    )
    exports = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())
    assert exports["AIRFLOW_HOME"] == str(tmp_path / "af")
    assert exports["AIRFLOW__API__PORT"] == "18124"
    assert json.loads(exports["AIRFLOW_CONN_SPARK_DEFAULT"].strip("'")) == {"conn_type": "spark", "host": "local[*]"}


@pytest.mark.parametrize(
    ("given", "home"),
    [
        ({"ALTERFLOW_HOME": "{tmp}/home"}, "{tmp}/home/airflow"),
        ({"ALTERFLOW_HOME": "{tmp}/home", "ALTERFLOW_AIRFLOW_HOME": "{tmp}/af2"}, "{tmp}/af2"),
        ({}, str(SCRIPT.parent.parent / ".alterflow" / "airflow")),
    ],
)
def test_airflows_home_follows_alterflows_unless_named(tmp_path, given, home):
    env = {"PATH": "/usr/bin", **{name: value.format(tmp=tmp_path) for name, value in given.items()}}
    done = subprocess.run([sys.executable, str(SCRIPT), "env"], env=env, capture_output=True, text=True, check=True)
    exports = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())
    assert exports["AIRFLOW_HOME"] == home.format(tmp=tmp_path)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--port", "0", "env"], "error: --port must be between 1 and 65535, not 0"),
        (["--port", "x", "env"], "error: argument --port: invalid int value: 'x'"),
        (["serve"], "error: argument command: invalid choice: 'serve' (choose from 'standalone', 'env')"),
    ],
)
def test_bad_arguments_give_one_line_and_write_nothing(tmp_path, args, message):
    home = tmp_path / "af"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--home", str(home), *args],
        env={"PATH": "/usr/bin", "ALTERFLOW_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [message]
    assert not home.exists() and not (tmp_path / "home").exists()


def test_an_unusable_home_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--home", str(blocker / "af"), "env"],
        env={"PATH": "/usr/bin", "ALTERFLOW_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: cannot prepare {blocker / 'af'}: Not a directory"]
    assert not (tmp_path / "home").exists()
