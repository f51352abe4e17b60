"""`deploy/airflow_env.py`, the environment `make airflow` runs Airflow with: checked against what
Airflow itself reads (SimpleAuthManager's passwords file, the Spark provider's connection), and its
bad input (one error line, nothing written)."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shlex
import signal
import subprocess
import sys
import urllib.parse

import pytest

from tests.support.live_airflow import airflow_env_module

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "airflow_env.py"


@pytest.fixture(scope="module")
def airflow_env():
    return airflow_env_module()


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


def test_a_bucket_warehouse_makes_no_local_folder(airflow_env, tmp_path, s3_bucket, monkeypatch):
    """ALTERFLOW_WAREHOUSE=s3://...?endpoint_override=...: Airflow's processes get the bucket's URI
    whole (its endpoint too), and nothing named `s3:` appears in the working directory (the bucket
    is its owner's to make)."""
    monkeypatch.chdir(tmp_path)
    uri = f"s3://{s3_bucket}/wh?endpoint_override=127.0.0.1:{urllib.parse.urlsplit(os.environ['AWS_ENDPOINT_URL']).port}&scheme=http"
    base = {"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_WAREHOUSE": uri}
    env = airflow_env.airflow_environment(base, home=tmp_path / "af")
    airflow_env.prepare_home(env, "s3cret")
    named = urllib.parse.urlsplit(env["ALTERFLOW_WAREHOUSE"])
    assert (named.scheme, named.netloc, named.path) == ("s3", s3_bucket, "/wh"), env["ALTERFLOW_WAREHOUSE"]
    port = urllib.parse.urlsplit(os.environ["AWS_ENDPOINT_URL"]).port
    assert urllib.parse.parse_qs(named.query)["endpoint_override"] == [f"127.0.0.1:{port}"], env["ALTERFLOW_WAREHOUSE"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["af", "home"]


def test_env_command_prints_exports(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--home", str(tmp_path / "af"), "--port", "18124", "env"],
        # SQLite metadata: with PostgreSQL answering, `env` would make a database there for this home
        env={"PATH": "/usr/bin", "ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_AIRFLOW_DB_URL": f"sqlite:///{tmp_path}/af.db"},
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
    env["ALTERFLOW_AIRFLOW_DB_URL"] = f"sqlite:///{tmp_path}/af.db"  # no PostgreSQL database made for the home
    done = subprocess.run([sys.executable, str(SCRIPT), "env"], env=env, capture_output=True, text=True, check=True)
    exports = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())
    assert exports["AIRFLOW_HOME"] == home.format(tmp=tmp_path)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--port", "0", "env"], "error: --port must be between 1 and 65535, not 0"),
        (["--port", "x", "env"], "error: argument --port: invalid int value: 'x'"),
        (["serve"], "error: argument command: invalid choice: 'serve' (choose from 'standalone', 'env')"),
        (["--executor", "k8s", "env"], "error: argument --executor: invalid choice: 'k8s' (choose from 'local', 'celery')"),
        (["--executor", "celery", "--workers", "0", "env"], "error: --workers must be between 1 and 32, not 0"),
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


def exported(stdout: str) -> dict[str, str]:
    """The `export` lines of `airflow_env.py env`, as a dict."""
    return dict(shlex.split(line[len("export ") :])[0].split("=", 1) for line in stdout.splitlines() if line.startswith("export "))


@pytest.mark.postgres
def test_the_metadata_goes_to_postgresql_where_one_answers_else_to_sqlite(airflow_env, tmp_path):
    """As Airflow recommends: PostgreSQL when it is there (this machine's, trust auth), one database
    per Airflow home, made when missing; SQLite in the home when no server answers; and the banner
    says which."""
    from tests.conftest import _pg_available
    from tests.support.live_airflow import drop_metadata_database

    if not _pg_available():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not reachable at 127.0.0.1:5432")
        pytest.skip("PostgreSQL is not reachable at 127.0.0.1:5432")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ALTERFLOW_", "AIRFLOW"))}
    base["ALTERFLOW_HOME"] = str(tmp_path / "home")
    home = tmp_path / "af"
    command = [sys.executable, str(SCRIPT), "--home", str(home), "env"]
    try:
        done = subprocess.run(command, env=base, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        name = airflow_env.metadata_database_name(home)
        url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
        env = exported(done.stdout)
        assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == url
        assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"] == url.replace("psycopg", "psycopg_async")
        assert "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS" not in env  # SQLite's lock wait only
        again = subprocess.run(command, env=base, capture_output=True, text=True, timeout=60)  # the database exists now
        assert exported(again.stdout)["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == url
        assert airflow_env.metadata_database(base, home)[1] == f"PostgreSQL postgres@127.0.0.1:5432/{name}, as Airflow recommends"
    finally:
        drop_metadata_database(home)

    from tests.support.ports import free_port

    nobody = {**base, "ALTERFLOW_AIRFLOW_PG": f"postgres@127.0.0.1:{free_port()}"}
    done = subprocess.run(command, env=nobody, capture_output=True, text=True, timeout=60)
    assert exported(done.stdout)["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == f"sqlite:///{home / 'airflow.db'}"
    url, words = airflow_env.metadata_database(nobody, home)
    assert words.startswith(f"SQLite {home / 'airflow.db'} (no PostgreSQL at {nobody['ALTERFLOW_AIRFLOW_PG']}: "), words
    assert f"metadata:     {words}" in airflow_env.banner(airflow_env.airflow_environment(nobody, home=home, database_url=url), words)
    given = {**base, "ALTERFLOW_AIRFLOW_DB_URL": f"sqlite:///{tmp_path / 'mine.db'}"}
    done = subprocess.run(command, env=given, capture_output=True, text=True, timeout=60)
    assert exported(done.stdout)["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == f"sqlite:///{tmp_path / 'mine.db'}"


def fleet_env(tmp_path, **extra) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ALTERFLOW_", "AIRFLOW"))}
    return {**base, "ALTERFLOW_HOME": str(tmp_path / "home"), **extra}


@pytest.mark.postgres
def test_the_celery_variant_runs_on_redis_with_a_queue_per_airflow_home(airflow_env, tmp_path):
    """`make airflow AIRFLOW_EXECUTOR=celery`: the CeleryExecutor, a Redis as the broker,
    Celery's results beside Airflow's metadata in PostgreSQL, and a queue of the home's own, so
    two Airflows on one Redis never run each other's tasks."""
    import socket

    from tests.support.live_airflow import drop_metadata_database

    homes = [tmp_path / "af1", tmp_path / "af2"]
    broker = socket.create_server(("127.0.0.1", 0))  # answers as a broker must: the check only connects
    url = f"redis://127.0.0.1:{broker.getsockname()[1]}/0"
    try:
        envs = []
        for home, workers, own in zip(homes, ([], ["--workers", "3"]), ({}, {"AIRFLOW__CELERY__WORKER_CONCURRENCY": "1"})):
            done = subprocess.run(
                [sys.executable, str(SCRIPT), "--home", str(home), "--executor", "celery", *workers, "env"],
                env=fleet_env(tmp_path, ALTERFLOW_CELERY_BROKER=url, **own),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, done.stderr
            envs.append(exported(done.stdout))
    finally:
        broker.close()
        for home in homes:
            drop_metadata_database(home)
    first = envs[0]
    assert first["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert first["AIRFLOW__CELERY__BROKER_URL"] == url
    assert first["AIRFLOW__CELERY__RESULT_BACKEND"] == "db+" + first["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    assert first["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("postgresql+psycopg://")
    imports = json.loads(first["AIRFLOW__CELERY__EXTRA_CELERY_CONFIG"])
    assert imports == {"imports": ["alterflow.airflow.worker_imports"]}  # alterflow imported once per worker
    assert first["AIRFLOW__OPERATORS__DEFAULT_QUEUE"] == airflow_env._sibling("celery_fleet").queue_name(homes[0])
    assert envs[1]["AIRFLOW__OPERATORS__DEFAULT_QUEUE"] != first["AIRFLOW__OPERATORS__DEFAULT_QUEUE"]
    # Four slots a worker, and the scheduler hands out no more than the workers' slots in all.
    assert (first["AIRFLOW__CELERY__WORKER_CONCURRENCY"], first["AIRFLOW__CORE__PARALLELISM"]) == ("4", "8")
    assert (envs[1]["AIRFLOW__CELERY__WORKER_CONCURRENCY"], envs[1]["AIRFLOW__CORE__PARALLELISM"]) == ("1", "3")
    fleet = airflow_env._sibling("celery_fleet")
    # The long steps in a pool of their own, which `run` makes with half the slots kept for short steps.
    assert first["ALTERFLOW_AIRFLOW_LONG_POOL"] == envs[1]["ALTERFLOW_AIRFLOW_LONG_POOL"] == "alterflow_long_steps"
    assert first["AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME"] == "0.25"  # each hand-off waits a shorter loop
    assert first["AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL"] == "1"  # a task's slot back within a second of its end
    assert [fleet.long_pool_slots(n) for n in (1, 2, 3, 4, 8, 12)] == [1, 1, 2, 2, 4, 6]
    mine = {"AIRFLOW_HOME": str(homes[0]), "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "postgresql://h/db", "AIRFLOW__CORE__PARALLELISM": "5"}
    assert fleet.celery_environment(mine, url, 2, own_parallelism=True)["AIRFLOW__CORE__PARALLELISM"] == "5"  # the user's own
    words = airflow_env.executor_words(first, 3)
    assert words == f"CeleryExecutor, 3 workers, broker {url}, queue {first['AIRFLOW__OPERATORS__DEFAULT_QUEUE']}"
    assert airflow_env._sibling("celery_fleet").DEFAULT_BROKER == "redis://127.0.0.1:6379/0"  # without ALTERFLOW_CELERY_BROKER


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"ALTERFLOW_AIRFLOW_DB_URL": "sqlite:///{tmp}/airflow.db"},
            "error: the Celery executor needs Airflow's metadata in PostgreSQL, not SQLite: start PostgreSQL "
            "(at ALTERFLOW_AIRFLOW_PG, postgres@127.0.0.1:5432 by default) or set ALTERFLOW_AIRFLOW_DB_URL",
        ),
        (
            {"ALTERFLOW_AIRFLOW_DB_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/x", "ALTERFLOW_CELERY_BROKER": "amqp://h/"},
            "error: ALTERFLOW_CELERY_BROKER must be a redis://host:port/db URL, not 'amqp://h/'",
        ),
        (
            {
                "ALTERFLOW_AIRFLOW_DB_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/x",
                "ALTERFLOW_CELERY_BROKER": "redis://u:secret@h:abc/0",
            },
            "error: ALTERFLOW_CELERY_BROKER must be a redis://host:port/db URL, not 'redis://h:abc/0'",
        ),
        (
            {
                "ALTERFLOW_AIRFLOW_DB_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/x",
                "ALTERFLOW_CELERY_BROKER": "redis://127.0.0.1:{port}/0",
            },
            "error: the Celery broker redis://127.0.0.1:{port}/0 does not answer (Connection refused): start Redis or set "
            "ALTERFLOW_CELERY_BROKER",
        ),
    ],
    ids=["sqlite-metadata", "not-redis", "bad-port", "no-broker"],
)
def test_a_celery_variant_that_cannot_run_is_one_line_and_writes_nothing(tmp_path, extra, message):
    from tests.support.ports import free_port

    port = free_port()
    extra = {key: value.format(tmp=tmp_path, port=port) for key, value in extra.items()}
    home = tmp_path / "af"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--home", str(home), "--executor", "celery", "env"],
        env=fleet_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr.splitlines()) == (1, [message.format(port=port)])
    assert not home.exists() and not (tmp_path / "home").exists()


@contextlib.contextmanager
def _supervised(fleet_module, tmp_path, commands: dict[str, list[str]]):
    """`celery_fleet._supervise` over `commands` in a thread: (running processes, the thread, its
    result box); on leaving, the supervision is ended as by SIGTERM and every process stopped."""
    import threading

    logs = tmp_path / "fleet-logs"
    logs.mkdir(parents=True)
    running = {name: fleet_module._start_one(name, command, dict(os.environ), logs) for name, command in commands.items()}
    stopping: list[int] = []
    result: list[int] = []
    thread = threading.Thread(
        target=lambda: result.append(fleet_module._supervise(running, commands, dict(os.environ), logs, stopping)), daemon=True
    )
    thread.start()
    try:
        yield running, thread, result
    finally:
        stopping.append(signal.SIGTERM)
        thread.join(30)
        fleet_module._stop(running)


def test_the_fleets_supervisor_starts_a_killed_process_again_however_soon_and_stops_on_a_failing_one(
    airflow_env, tmp_path, monkeypatch, capsys
):
    """A worker killed with SIGKILL seconds after its start (its machine died) is started again; one
    that exits by itself at once (a setting it cannot start with) stops the fleet with its log; so
    does one killed over and over (START_LIMIT restarts within the window)."""
    import time

    fleet = airflow_env._sibling("celery_fleet")
    monkeypatch.setattr(fleet, "START_LIMIT", 2)
    with _supervised(fleet, tmp_path, {"worker1": ["sleep", "600"], "worker2": ["sleep", "600"]}) as (running, thread, result):
        for _kill in range(3):  # the third kill is one too many within the window
            first = running["worker1"].pid
            os.kill(first, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while running["worker1"].pid == first and thread.is_alive():
                assert time.monotonic() < deadline, "the killed worker was not started again"
                time.sleep(0.1)
        thread.join(30)
        assert result == [1]
    out = capsys.readouterr().out
    assert out.count("worker1 exited with status -9; starting it again") == 2, out
    assert "error: worker1 exited with status -9; the end of its log:" in out, out

    broken = {"worker1": ["sleep", "600"], "broken": ["sh", "-c", "echo no broker here; exit 3"]}
    with _supervised(fleet, tmp_path / "again", broken) as (_running, thread, result):
        thread.join(30)
        assert result == [1]
    out = capsys.readouterr().out
    assert "error: broken exited with status 3; the end of its log:\n    no broker here" in out, out
    assert "starting it again" not in out, out


def test_the_fleets_start_makes_the_long_steps_pool_and_a_failure_is_its_exit_status(airflow_env, tmp_path):
    """`make_long_pool` runs `airflow pools set <pool> <slots> <purpose>` (here a stand-in `airflow`
    script that records its arguments or fails): the workers' slots less half, nothing run
    without a pool named, and the command's exit status returned for `run` to stop on."""
    fleet = airflow_env._sibling("celery_fleet")
    recorded = tmp_path / "args"
    script = tmp_path / "airflow"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {recorded}\nexit "${{EXIT:-0}}"\n')
    script.chmod(0o755)
    env = {**os.environ, "ALTERFLOW_AIRFLOW_LONG_POOL": "alterflow_long_steps", "AIRFLOW__CELERY__WORKER_CONCURRENCY": "4"}
    with open(tmp_path / "log", "ab") as log:
        assert fleet.make_long_pool(str(script), env, 2, log) == 0
        args = recorded.read_text().splitlines()
        assert args[:4] == ["pools", "set", "alterflow_long_steps", "4"] and "4 of the workers' 8 slots" in args[4], args
        assert fleet.make_long_pool(str(script), {**env, "EXIT": "3"}, 2, log) == 3
        recorded.unlink()
        assert fleet.make_long_pool(str(script), {**env, "ALTERFLOW_AIRFLOW_LONG_POOL": ""}, 2, log) == 0
        assert not recorded.exists()  # no pool named: nothing run
