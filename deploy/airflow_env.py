"""A local Airflow for alterflow, without Docker: the environment and the home `make airflow` runs
`airflow standalone` with (and the live end-to-end test too).

    python deploy/airflow_env.py [--home DIR] [--port N] [--host H] standalone   # prepare, then exec
    python deploy/airflow_env.py [...] env                                        # print `export` lines

What it sets up:
- AIRFLOW_HOME (default `airflow/` under ALTERFLOW_HOME when set, else `.alterflow/airflow` in the
  repo; ALTERFLOW_AIRFLOW_HOME overrides both); no example DAGs; DAGs active when created;
- the LocalExecutor (`airflow standalone`), or with `--executor celery` (ALTERFLOW_AIRFLOW_EXECUTOR)
  the CeleryExecutor: Airflow's processes and `--workers` Celery workers on a Redis broker
  (deploy/celery_fleet.py);
- Airflow's metadata database: `--database-url` (ALTERFLOW_AIRFLOW_DB_URL) when given; else, as
  Airflow recommends for anything but a try-out, PostgreSQL when one answers at
  ALTERFLOW_AIRFLOW_PG (default `postgres@127.0.0.1:5432`), in a database of its own per Airflow
  home (`alterflow_airflow_<hash of the home>`, created if missing); else SQLite in the Airflow
  home (waiting up to 60 s for its write lock). The banner says which;
- the repo's `dags/` and `plugins/` folders;
- SimpleAuthManager with one deterministic user, `admin` (role admin), whose password
  (ALTERFLOW_AIRFLOW_PASSWORD, default `admin`) is written to the passwords file Airflow reads;
- the `spark_default` connection at ALTERFLOW_SPARK_MASTER (`local[*]` unless set);
- the same ALTERFLOW_* settings as the CLI (alterflow.settings), made absolute, so DAG runs and
  `alterflow sql` share one catalog and one warehouse;
- behind a reverse proxy under a path: `AIRFLOW__API__BASE_URL=https://host/airflow/` is kept, and
  the workers reach the execution API under that path too.

It never imports Airflow: it only writes files, computes environment variables and, to choose
the metadata database, asks PostgreSQL (psycopg) whether it is there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import shlex
import sys
import urllib.parse

REPO = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_HOME = REPO / ".alterflow" / "airflow"
ADMIN_USER = "admin"
SIMPLE_AUTH_MANAGER = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"


def alterflow_settings(base_env: dict[str, str]) -> dict[str, str]:
    """The CLI's ALTERFLOW_* settings (default home: the repo's `.alterflow`), all explicit and absolute."""
    from alterflow.settings import Settings, warehouse_setting

    env = dict(base_env)
    env.setdefault("ALTERFLOW_HOME", str(REPO / ".alterflow"))
    settings = Settings.from_env(env)
    return {
        "ALTERFLOW_HOME": str(settings.home),
        "ALTERFLOW_CATALOG_URL": settings.catalog_url,
        "ALTERFLOW_WAREHOUSE": warehouse_setting(settings.warehouse),  # a bucket's URI keeps its endpoint and region
        "ALTERFLOW_SPARK_MASTER": settings.spark_master,
        "ALTERFLOW_TXN_TIMEOUT": str(settings.txn_timeout_s),
    }


def default_airflow_home(base_env: dict[str, str]) -> pathlib.Path:
    """ALTERFLOW_AIRFLOW_HOME; else `airflow` under ALTERFLOW_HOME when that is set (a user who put
    alterflow's home elsewhere keeps Airflow's beside it, not in the checkout); else the repo's
    `.alterflow/airflow`."""
    if base_env.get("ALTERFLOW_AIRFLOW_HOME"):
        return pathlib.Path(base_env["ALTERFLOW_AIRFLOW_HOME"]).absolute()
    if base_env.get("ALTERFLOW_HOME"):
        return pathlib.Path(base_env["ALTERFLOW_HOME"]).absolute() / "airflow"
    return DEFAULT_HOME


def base_path(base_env: dict[str, str]) -> str:
    """The path of `[api] base_url` (`/airflow` for `https://host/airflow/`), "" when it has none."""
    return urllib.parse.urlsplit(base_env.get("AIRFLOW__API__BASE_URL", "")).path.rstrip("/")


def airflow_environment(
    base_env: dict[str, str],
    home: pathlib.Path = DEFAULT_HOME,
    port: int = 8080,
    host: str = "127.0.0.1",
    database_url: str | None = None,
) -> dict[str, str]:
    """`base_env` plus everything Airflow and the DAGs need; the AIRFLOW_* it sets win over base_env."""
    home = pathlib.Path(home).absolute()
    bin_dir = pathlib.Path(sys.executable).parent  # the venv's bin: airflow, spark-submit, alterflow
    env = dict(base_env)
    env.update(alterflow_settings(base_env))
    # Inside Airflow an ALTER is the DAG's own steps; never submit it to Airflow again.
    env.pop("ALTERFLOW_AIRFLOW_URL", None)
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": base_env.get("ALTERFLOW_AIRFLOW_DAGS_FOLDER") or str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__AUTH_MANAGER": SIMPLE_AUTH_MANAGER,
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{ADMIN_USER}:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords_file(home)),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}{base_path(base_env)}/execution/",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": database_url or f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__API__HOST": host,
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__API__WORKERS": "1",
            # New files in dags/ show up within 30 s instead of 5 min.
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "30",
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": env["ALTERFLOW_SPARK_MASTER"]}),
            "AIRFLOW_CONN_ALTERFLOW_DEFAULT": alterflow_connection(env),
            "PATH": os.pathsep.join([str(bin_dir), base_env.get("PATH", os.defpath)]),
            "PYSPARK_PYTHON": str(sys.executable),
            "PYSPARK_DRIVER_PYTHON": str(sys.executable),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("postgresql+psycopg://"):
        # The async engine (the api-server's, the triggerer's) on the same driver, as docker-compose.yaml does.
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"] = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].replace(
            "postgresql+psycopg://", "postgresql+psycopg_async://", 1
        )
    if env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("sqlite"):
        # Wait for SQLite's one writer lock instead of answering HTTP 500 (plugins/ is on Airflow's path).
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS"] = "alterflow.airflow.metadata_db.SQLITE_CONNECT_ARGS"
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS_ASYNC"] = "alterflow.airflow.metadata_db.SQLITE_CONNECT_ARGS_ASYNC"
    # Two cores here: a few task slots (LocalExecutor starts one worker process per slot).
    env.setdefault("AIRFLOW__CORE__PARALLELISM", "4")
    return env


DEFAULT_PG = "postgres@127.0.0.1:5432"  # user@host:port of the PostgreSQL server Airflow's metadata goes to


def metadata_database_name(home: pathlib.Path) -> str:
    """The PostgreSQL database of the Airflow home `home`: one per home, so two Airflows on this
    machine (a developer's `make airflow`, the live test's) never share their metadata."""
    digest = hashlib.sha256(str(pathlib.Path(home).absolute()).encode()).hexdigest()[:12]
    return f"alterflow_airflow_{digest}"


def metadata_database(base_env: dict[str, str], home: pathlib.Path) -> tuple[str, str]:
    """(Airflow's metadata database URL, the banner's words for it). PostgreSQL at
    ALTERFLOW_AIRFLOW_PG (user@host:port) when it answers within 2 s, in the home's own database
    (made when missing); else SQLite in the home."""
    server = base_env.get("ALTERFLOW_AIRFLOW_PG") or DEFAULT_PG
    name = metadata_database_name(home)
    try:
        import psycopg

        with psycopg.connect(f"postgresql://{server}/postgres", connect_timeout=2, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
                conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as exc:  # noqa: BLE001 - no server, no driver, no permission: SQLite, and the banner says why
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        sqlite = pathlib.Path(home).absolute() / "airflow.db"
        return f"sqlite:///{sqlite}", f"SQLite {sqlite} (no PostgreSQL at {server}: {reason[:120]})"
    return f"postgresql+psycopg://{server}/{name}", f"PostgreSQL {server}/{name}, as Airflow recommends"


def passwords_file(home: pathlib.Path) -> pathlib.Path:
    return pathlib.Path(home) / "simple_auth_manager_passwords.json"


def admin_password(base_env: dict[str, str]) -> str:
    return base_env.get("ALTERFLOW_AIRFLOW_PASSWORD") or "admin"


def prepare_home(env: dict[str, str], password: str) -> None:
    """Create the Airflow home, the alterflow home and warehouse, and the passwords file
    (SimpleAuthManager's format: one JSON object, user name -> password)."""
    home = pathlib.Path(env["AIRFLOW_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    pathlib.Path(env["ALTERFLOW_HOME"]).mkdir(parents=True, exist_ok=True)
    if "://" not in env["ALTERFLOW_WAREHOUSE"]:  # a local folder; a bucket (s3://...) is made by its owner
        pathlib.Path(env["ALTERFLOW_WAREHOUSE"]).mkdir(parents=True, exist_ok=True)
    path = pathlib.Path(env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"])
    path.write_text(json.dumps({ADMIN_USER: password}) + "\n")
    path.chmod(0o600)


def alterflow_connection(env: dict[str, str]) -> str:
    """The Airflow connection alterflow_default (type alterflow, docs/python.md) naming the CLI's
    catalog and warehouse, as JSON for AIRFLOW_CONN_ALTERFLOW_DEFAULT: every component's
    AlterflowHook reads it. A password in the catalog URL goes to the connection's password field
    (Airflow masks it in task logs), not into the URL the extra shows."""
    parts = urllib.parse.urlsplit(env["ALTERFLOW_CATALOG_URL"])
    userinfo, at, hostport = parts.netloc.rpartition("@")
    connection: dict = {"conn_type": "alterflow"}
    url = env["ALTERFLOW_CATALOG_URL"]
    if at and ":" in userinfo:
        user, password = userinfo.split(":", 1)
        connection["password"] = urllib.parse.unquote(password)
        url = urllib.parse.urlunsplit(parts._replace(netloc=f"{user}@{hostport}"))
    connection["extra"] = {"catalog_url": url, "warehouse": env["ALTERFLOW_WAREHOUSE"]}
    return json.dumps(connection)


def without_password(url: str) -> str:
    """`url` with the password of its user part, if any, shown as `***` (for printing)."""
    parts = urllib.parse.urlsplit(url)
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{userinfo.split(':', 1)[0]}:***@{hostport}"))


def executor_words(env: dict[str, str], workers: int) -> str:
    """The banner's words for the executor."""
    if env["AIRFLOW__CORE__EXECUTOR"] != "CeleryExecutor":
        return env["AIRFLOW__CORE__EXECUTOR"]
    broker = without_password(env["AIRFLOW__CELERY__BROKER_URL"])
    return f"CeleryExecutor, {workers} workers, broker {broker}, queue {env['AIRFLOW__OPERATORS__DEFAULT_QUEUE']}"


def banner(env: dict[str, str], metadata: str = "", workers: int = 2) -> str:
    """What `make airflow` prints before Airflow starts: the URL and the user name, and where the
    password is, never the password itself (terminals are scrolled back, logged and shared); which
    metadata database Airflow uses (`metadata`: `metadata_database`'s words)."""
    port = env["AIRFLOW__API__PORT"]
    host = env["AIRFLOW__API__HOST"]
    url = f"http://{'localhost' if host in ('0.0.0.0', '127.0.0.1', '::') else host}:{port}{base_path(env)}"
    passwords = env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"]
    read_password = f"python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[\"{ADMIN_USER}\"])' {shlex.quote(passwords)}"
    return "\n".join(
        [
            f"alterflow on Airflow: {url}",
            f"  user:         {ADMIN_USER} (its password: ALTERFLOW_AIRFLOW_PASSWORD, `admin` unless set; kept in the file below)",
            f"  passwords:    {passwords}",
            f"  Airflow home: {env['AIRFLOW_HOME']}",
            f"  metadata:     {metadata or without_password(env['AIRFLOW__DATABASE__SQL_ALCHEMY_CONN'])}",
            f"  executor:     {executor_words(env, workers)}",
            f"  catalog:      {without_password(env['ALTERFLOW_CATALOG_URL'])}",
            f"  warehouse:    {env['ALTERFLOW_WAREHOUSE']}",
            f"  DAGs: {env['AIRFLOW__CORE__DAGS_FOLDER']}   plugins: {env['AIRFLOW__CORE__PLUGINS_FOLDER']}",
            "  To send the CLI's ALTERs to it:",
            f"    export ALTERFLOW_AIRFLOW_URL={url} ALTERFLOW_AIRFLOW_USERNAME={ADMIN_USER}",
            f'    export ALTERFLOW_AIRFLOW_PASSWORD="$({read_password})"',
            "  Ctrl-C stops Airflow.",
        ]
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage block
        self.exit(2, f"error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(description="Run Airflow locally with alterflow's DAGs, plugins and catalog.")
    parser.add_argument(
        "--home",
        type=pathlib.Path,
        default=default_airflow_home(os.environ),
        help="the Airflow home (default: ALTERFLOW_AIRFLOW_HOME, else airflow/ under ALTERFLOW_HOME, else .alterflow/airflow)",
    )
    parser.add_argument("--port", type=int, default=8080, help="the API server's port (default 8080)")
    parser.add_argument("--host", default="127.0.0.1", help="the address the API server listens on (default 127.0.0.1)")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("ALTERFLOW_AIRFLOW_DB_URL"),
        help="Airflow's metadata database (default: PostgreSQL at ALTERFLOW_AIRFLOW_PG, postgres@127.0.0.1:5432, when it "
        "answers, in a database of the home's own; else SQLite in the Airflow home)",
    )
    parser.add_argument(
        "--executor",
        choices=["local", "celery"],
        default=os.environ.get("ALTERFLOW_AIRFLOW_EXECUTOR") or "local",
        help="local: `airflow standalone` (LocalExecutor); celery: the CeleryExecutor with --workers workers and a Redis "
        "broker (ALTERFLOW_CELERY_BROKER, redis://127.0.0.1:6379/0 by default)",
    )
    parser.add_argument("--workers", type=int, default=2, help="Celery workers to start with --executor celery (default 2)")
    parser.add_argument(
        "command", choices=["standalone", "env"], help="standalone: run Airflow; env: print the environment as export lines"
    )
    args = parser.parse_args(argv)
    if not 0 < args.port < 65536:
        parser.error(f"--port must be between 1 and 65535, not {args.port}")
    if not 0 < args.workers <= 32:
        parser.error(f"--workers must be between 1 and 32, not {args.workers}")

    base = dict(os.environ)
    fleet = _sibling("celery_fleet") if args.executor == "celery" else None
    try:
        env, metadata = _environment(args, base, fleet)
    except Exception as exc:
        if fleet is None or not isinstance(exc, fleet.FleetError):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 1
    password = admin_password(base)
    try:
        prepare_home(env, password)
    except OSError as exc:
        print(f"error: cannot prepare {exc.filename or args.home}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if args.command == "env":
        for key in sorted(env):
            if key.startswith(("AIRFLOW", "ALTERFLOW_", "PYSPARK_")) or key in ("PATH", "SPARK_LOCAL_IP"):
                print(f"export {key}={shlex.quote(env[key])}")
        return 0
    print(banner(env, metadata, args.workers), flush=True)
    airflow = str(pathlib.Path(sys.executable).parent / "airflow")
    if fleet is not None:
        return fleet.run(airflow, env, args.workers)
    os.execve(airflow, [airflow, "standalone"], env)
    return 1  # not reached


def _environment(args, base: dict[str, str], fleet) -> tuple[dict[str, str], str]:
    """(Airflow's environment, the banner's words for its metadata database). With the Celery
    executor (`fleet`, deploy/celery_fleet.py) the broker is checked before anything is made (a
    metadata database on PostgreSQL), and SQLite metadata is refused: FleetError, one line."""
    broker = fleet.broker_url(base) if fleet is not None else None
    database_url, metadata = args.database_url, ""
    if not database_url:
        database_url, metadata = metadata_database(base, args.home)
    env = airflow_environment(base, home=args.home, port=args.port, host=args.host, database_url=database_url)
    if fleet is None:
        return env, metadata
    return fleet.celery_environment(env, broker, args.workers, "AIRFLOW__CORE__PARALLELISM" in base), metadata


def _sibling(name: str):
    """deploy/<name>.py as a module (this file is a script, run or loaded by its path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, pathlib.Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.exit(main())
