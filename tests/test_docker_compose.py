"""docker-compose.yaml checked against the project without Docker (tests/test_compose_stack.py
starts it for real): the services of Airflow 3's own compose layout plus PostgreSQL and Spark, the
images built from the lock at the installed versions, the names and bases overridable from the
environment, the shared warehouse, the settings that point Airflow, the DAGs and the CLI at the
compose services, healthchecks, and every file the stack mounts or builds from; and the defaults
that are safe to leave on: ports published on 127.0.0.1, no secret with a fixed value (Airflow's
keys and the admin's password generated per install by deploy/compose_secrets.py), no kill
buttons on Spark's UIs."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys
from importlib.metadata import version

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parent.parent
COMPOSE = REPO / "docker-compose.yaml"
DOCKERFILE = REPO / "deploy" / "Dockerfile"
POSTGRES_DOCKERFILE = REPO / "deploy" / "postgres.Dockerfile"
SECRETS_SCRIPT = REPO / "deploy" / "compose_secrets.py"
CONFIG_DIR = "/opt/airflow/config"

AIRFLOW_SERVICES = ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")
LONG_RUNNING = (*AIRFLOW_SERVICES, "worker", "redis", "postgres", "spark-master", "spark-worker")
WAREHOUSE = "/opt/alterflow/warehouse"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def env_of(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def interpolate(value: str, env: dict[str, str] | None = None) -> str:
    """`value` as Compose resolves it: ${VAR:-default}, ${VAR} and $$ (no nesting in this file)."""
    env = env or {}
    resolved = _VARIABLE.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), value.replace("$$", "\0"))
    return resolved.replace("\0", "$")


def mounts_of(service: dict) -> dict[str, str]:
    """target -> source of the service's volumes (short syntax)."""
    result = {}
    for item in service.get("volumes", []):
        source, target, *_ = item.split(":")
        result[target] = source
    return result


def test_the_services_of_the_stack(services):
    assert set(services) >= {*LONG_RUNNING, "airflow-init"}
    for name in AIRFLOW_SERVICES:
        assert services[name]["command"] == name.removeprefix("airflow-").replace("apiserver", "api-server")


def _pinned(name: str) -> str:
    return re.search(rf"^{re.escape(name)}==(\S+)$", (REPO / "requirements.lock").read_text(), re.M).group(1)


def test_one_image_for_airflow_the_cli_and_spark_built_from_the_lock(services):
    for name in (*AIRFLOW_SERVICES, "worker", "airflow-init", "cli", "redis", "spark-master", "spark-worker"):
        build = services[name]["build"]
        assert (REPO / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE, name
        assert services[name]["image"] == "${ALTERFLOW_IMAGE:-alterflow:0.1.0}", name
    text = DOCKERFILE.read_text()
    assert "COPY requirements.lock " in text and "uv pip sync" in text, "the image installs exactly the lock"
    assert "openjdk-17" in text, "spark-submit and the Spark daemons need Java"
    assert _pinned("apache-airflow") == version("apache-airflow")
    assert _pinned("pyspark") == version("pyspark"), "driver, master and workers run the installed pyspark"
    assert "spark://spark-master:7077" in services["spark-worker"]["command"]


def test_images_and_bases_are_overridable_from_the_environment(services):
    for dockerfile in (DOCKERFILE, POSTGRES_DOCKERFILE):
        text = dockerfile.read_text()
        assert re.search(r"^ARG BASE_IMAGE=debian:bookworm-slim$", text, re.M), dockerfile.name
        assert re.search(r"^FROM \$\{BASE_IMAGE\}$", text, re.M), dockerfile.name
    for name, service in services.items():
        assert service["build"]["args"]["BASE_IMAGE"] == "${ALTERFLOW_BASE_IMAGE:-debian:bookworm-slim}", name
    assert services["postgres"]["image"] == "${ALTERFLOW_POSTGRES_IMAGE:-alterflow-postgres:15}"
    assert (REPO / services["postgres"]["build"]["dockerfile"]).resolve() == POSTGRES_DOCKERFILE


def test_the_files_the_images_copy_exist_and_are_not_ignored():
    ignore = (REPO / ".dockerignore").read_text().splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    for dockerfile in (DOCKERFILE, POSTGRES_DOCKERFILE):
        for line in dockerfile.read_text().splitlines():
            if line.startswith("COPY "):
                sources = [p for p in line.split()[1:-1] if not p.startswith("--")]
                for source in sources:
                    assert (REPO / source).exists(), f"{dockerfile.name} copies {source}, which is missing"
                    assert any(source == a or source.startswith(a + "/") for a in allowed), f".dockerignore leaves out {source}"


def test_one_warehouse_volume_at_the_same_path_everywhere(compose, services):
    assert "warehouse" in compose["volumes"]
    for name in (*AIRFLOW_SERVICES, "airflow-init", "spark-master", "spark-worker"):
        assert mounts_of(services[name]).get(WAREHOUSE) == "warehouse", name
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        assert env_of(services[name])["ALTERFLOW_WAREHOUSE"] == WAREHOUSE


def test_the_bucket_variant_gives_every_alterflow_process_one_warehouse_in_its_s3_service(services):
    """docker-compose.s3.yaml over this file: the s3 service (moto's server from the lock, healthy
    before the bucket is made, on the compose network only), the bucket made before airflow-init,
    and the same s3:// warehouse, endpoint, region and keys in every container that runs alterflow."""
    overlay = yaml.safe_load((REPO / "docker-compose.s3.yaml").read_text())["services"]
    runs_alterflow = (*AIRFLOW_SERVICES, "worker", "airflow-init", "cli", "spark-master", "spark-worker")
    assert set(overlay) == {"s3", "s3-bucket", *runs_alterflow}
    assert set(overlay) - {"s3", "s3-bucket"} <= set(services), "the overlay changes services of docker-compose.yaml"
    environments = {name: env_of(overlay[name]) for name in (*runs_alterflow, "s3-bucket")}
    assert len({json.dumps(env, sort_keys=True) for env in environments.values()}) == 1, environments
    env = environments["cli"]
    assert interpolate(env["ALTERFLOW_WAREHOUSE"]) == "s3://alterflow/warehouse"
    assert env["AWS_ENDPOINT_URL"] == "http://s3:5000"
    assert {"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= set(env)

    s3 = overlay["s3"]
    assert s3["command"][0] == "moto_server" and "5000" in s3["command"]
    assert re.search(r"^moto==", (REPO / "requirements.lock").read_text(), re.M), "moto_server is in the image"
    assert "healthcheck" in s3 and "ports" not in s3
    assert overlay["s3-bucket"]["depends_on"] == {"s3": {"condition": "service_healthy"}}
    for name in ("airflow-init", "spark-master", "spark-worker"):
        assert overlay[name]["depends_on"] == {"s3-bucket": {"condition": "service_completed_successfully"}}
    for name in ("s3", "s3-bucket"):
        assert overlay[name]["image"] == services["spark-master"]["image"]
        assert overlay[name]["build"]["dockerfile"] == services["spark-master"]["build"]["dockerfile"]


def test_named_volumes_are_declared(compose, services):
    declared = set(compose["volumes"])
    for name, service in services.items():
        for _target, source in mounts_of(service).items():
            if not source.startswith((".", "/")):
                assert source in declared, f"{name} mounts undeclared volume {source}"


def test_dags_plugins_and_spark_jobs_are_mounted_from_the_repo(services):
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        mounts = mounts_of(services[name])
        env = env_of(services[name])
        assert mounts[env["AIRFLOW__CORE__DAGS_FOLDER"]] == "./dags"
        assert mounts[env["AIRFLOW__CORE__PLUGINS_FOLDER"]] == "./plugins"
        assert mounts["/opt/alterflow/spark_jobs"] == "./spark_jobs"
        for _target, source in mounts.items():
            if source.startswith("."):
                assert (REPO / source).exists(), f"{name} mounts {source}, which is missing"


def test_airflow_settings_point_at_the_compose_services(services):
    postgres_env = env_of(services["postgres"])
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        env = env_of(services[name])
        assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
        assert env["AIRFLOW__CELERY__BROKER_URL"] == "redis://redis:6379/0"
        assert json.loads(env["AIRFLOW__CELERY__EXTRA_CELERY_CONFIG"]) == {"imports": ["alterflow.airflow.worker_imports"]}
        assert env["AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME"] == "0.25"  # as make airflow's Celery variant
        assert env["AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL"] == "1"  # a slot back within a second of its task's end
        for given in ({}, {"ALTERFLOW_POSTGRES_PASSWORD": "pw-from-env"}):  # Celery's results beside Airflow's metadata
            results = interpolate(env["AIRFLOW__CELERY__RESULT_BACKEND"], given)
            assert results == "db+" + interpolate(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"], given)
        assert env["AIRFLOW__CORE__LOAD_EXAMPLES"].lower() == "false"
        for key, driver in (
            ("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", "psycopg"),
            ("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC", "psycopg_async"),
        ):
            for given in ({}, {"ALTERFLOW_POSTGRES_PASSWORD": "pw-from-env"}):
                metadata = interpolate(env[key], given)
                password = interpolate(postgres_env["POSTGRES_PASSWORD"], given)
                assert metadata == f"postgresql+{driver}://airflow:{password}@postgres:5432/{postgres_env['POSTGRES_DB']}"
        assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://airflow-apiserver:8080/execution/"
        # every component shares one generated config (JWT secret, Fernet key) from the init
        assert env["AIRFLOW_CONFIG"].startswith("/opt/airflow/config/")
        assert mounts_of(services[name])["/opt/airflow/config"] == "airflow-config"
        assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"].startswith("/opt/airflow/config/")


def test_spark_default_connection_is_the_compose_master(services):
    """Resolved the way the Spark provider's SparkSubmitHook does for a `spark` connection."""
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        env = env_of(services[name])
        conn = json.loads(env["AIRFLOW_CONN_SPARK_DEFAULT"])
        assert conn["conn_type"] == "spark"
        master = conn["host"] + (f":{conn['port']}" if conn.get("port") else "")
        assert master == "spark://spark-master:7077" == env["ALTERFLOW_SPARK_MASTER"]
        assert "7077" in services["spark-master"]["command"]


def test_the_catalog_is_in_the_compose_postgresql(services):
    """The catalog's role is created on PostgreSQL's first start with the password the Airflow
    containers' catalog URL carries: both from ALTERFLOW_CATALOG_PASSWORD, the same default."""
    from sqlalchemy.engine import make_url

    init_sh = (REPO / "deploy" / "postgres-init.sh").read_text()
    assert mounts_of(services["postgres"])["/docker-entrypoint-initdb.d/10-alterflow.sh"] == "./deploy/postgres-init.sh"
    assert "*.sh)" in (REPO / "deploy" / "postgres" / "entrypoint.sh").read_text(), "the image's entrypoint runs *.sh too"
    postgres_env = env_of(services["postgres"])
    for name in (*AIRFLOW_SERVICES, "airflow-init", "cli"):
        for given in ({}, {"ALTERFLOW_CATALOG_PASSWORD": "pw-from-env"}):
            url = make_url(interpolate(env_of(services[name])["ALTERFLOW_CATALOG_URL"], given))
            assert (url.get_backend_name(), url.host, url.port) == ("postgresql", "postgres", 5432)
            assert url.password == interpolate(postgres_env["ALTERFLOW_CATALOG_PASSWORD"], given)
            assert re.search(rf"CREATE ROLE {url.username} LOGIN PASSWORD :'password';", init_sh)
            assert re.search(rf"CREATE DATABASE {url.database} OWNER {url.username}", init_sh)
    assert '-v password="${ALTERFLOW_CATALOG_PASSWORD:?' in init_sh, "the password is a psql variable, quoted by psql"
    assert "alterflow db upgrade" in " ".join(services["airflow-init"]["command"]), "airflow-init migrates the catalog"


def test_long_running_services_have_healthchecks(services):
    for name in LONG_RUNNING:
        check = services[name].get("healthcheck")
        assert check and check["test"], f"{name} has no healthcheck"
    assert "/api/v2/version" in " ".join(services["airflow-apiserver"]["healthcheck"]["test"])
    assert services["airflow-scheduler"]["environment"]["AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK"] == "true"
    assert "DagProcessorJob" in " ".join(services["airflow-dag-processor"]["healthcheck"]["test"])
    assert "TriggererJob" in " ".join(services["airflow-triggerer"]["healthcheck"]["test"])
    assert "inspect ping" in " ".join(services["worker"]["healthcheck"]["test"])


def test_celery_workers_scale_and_share_everything_the_other_airflow_services_have(services):
    """`docker compose up --scale worker=N`: no container name, no published port, the same
    environment and mounts as the scheduler, and a broker whose queue survives a restart."""
    worker, scheduler = services["worker"], services["airflow-scheduler"]
    assert worker["command"] == ["celery", "worker"] and worker["entrypoint"] == scheduler["entrypoint"]
    assert "container_name" not in worker and "ports" not in worker
    assert env_of(worker) == env_of(scheduler) and mounts_of(worker) == mounts_of(scheduler)
    redis = services["redis"]
    assert redis["command"][0] == "redis-server" and "ports" not in redis
    assert "--appendonly" in redis["command"] and mounts_of(redis)[redis["command"][-1]] == "redis-data"
    assert "redis-server" in DOCKERFILE.read_text()
    # its folder belongs to the image's uid 50000, so it runs as that uid whatever AIRFLOW_UID says
    assert redis["user"] == "50000:0" and "chown 50000:0 /opt/alterflow/home /opt/alterflow/redis" in DOCKERFILE.read_text()


def test_two_spark_workers_that_scale(services):
    """A Spark master with two workers (`--scale spark-worker=N` for another count): no container
    name or published port that a second replica would collide on."""
    spark_worker = services["spark-worker"]
    assert spark_worker["deploy"]["replicas"] == 2
    assert "container_name" not in spark_worker and "ports" not in spark_worker


def test_start_order(services):
    for name in (*AIRFLOW_SERVICES, "worker"):
        depends = services[name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
        assert depends["airflow-init"]["condition"] == "service_completed_successfully"
    assert services["worker"]["depends_on"]["spark-master"]["condition"] == "service_healthy"
    assert services["airflow-scheduler"]["depends_on"]["spark-master"]["condition"] == "service_healthy"
    assert services["spark-worker"]["depends_on"]["spark-master"]["condition"] == "service_healthy"


def test_the_cli_service_submits_alters_to_the_api_server(services):
    env = env_of(services["cli"])
    assert env["ALTERFLOW_AIRFLOW_URL"] == "http://airflow-apiserver:8080"
    assert env["ALTERFLOW_AIRFLOW_USERNAME"] == "admin"
    # signed in with the install's password, read from the config volume unless the environment gives one
    assert services["cli"]["entrypoint"] == ["python", "/opt/alterflow/deploy/compose_secrets.py", "exec", CONFIG_DIR, "alterflow"]
    assert "COPY deploy/compose_secrets.py /opt/alterflow/deploy/compose_secrets.py" in DOCKERFILE.read_text()
    assert mounts_of(services["cli"])[CONFIG_DIR] == "airflow-config"
    assert env["ALTERFLOW_AIRFLOW_PASSWORD"] == "${ALTERFLOW_AIRFLOW_PASSWORD:-}"
    assert services["cli"]["profiles"] == ["cli"]


def test_spark_driver_settings_are_shipped_in_the_image(services):
    env = env_of(services["airflow-scheduler"])
    conf_dir = env["SPARK_CONF_DIR"]
    assert conf_dir == "/opt/alterflow/deploy/spark-conf"
    assert "COPY deploy/spark-conf /opt/alterflow/deploy/spark-conf" in DOCKERFILE.read_text()
    assert "SPARK_LOCAL_IP" in (REPO / "deploy" / "spark-conf" / "spark-env.sh").read_text()


# --- Defaults that are safe to leave on -------------------------------------------------------


def test_published_ports_are_on_127_0_0_1_unless_the_user_says_otherwise(services):
    published = {}
    for name, service in services.items():
        assert service.get("network_mode") != "host", name
        for item in service.get("ports", []):
            assert isinstance(item, str), f"{name}: long port syntax; the check below reads the short one"
            match = re.fullmatch(r"\$\{ALTERFLOW_BIND_ADDRESS:-127\.0\.0\.1\}:\$\{(ALTERFLOW_\w+_PORT):-(\d+)\}:(\d+)", item)
            assert match, f"{name} publishes {item!r}: not on ${{ALTERFLOW_BIND_ADDRESS:-127.0.0.1}}"
            published[name] = match.group(1, 2)
            assert interpolate(item).startswith("127.0.0.1:")
            assert interpolate(item, {"ALTERFLOW_BIND_ADDRESS": "0.0.0.0"}).startswith("0.0.0.0:")
    assert published == {
        "airflow-apiserver": ("ALTERFLOW_HTTP_PORT", "8080"),
        "spark-master": ("ALTERFLOW_SPARK_UI_PORT", "8090"),
    }, "PostgreSQL, the Spark master's port 7077 and the worker are reached on the compose network only"


_SECRET_NAME = re.compile(r"PASSWORD|SECRET|FERNET|TOKEN|_KEY$")
# Secrets that may keep a fixed default: PostgreSQL's roles, reached on the compose network only
# (checked above: postgres publishes no port). Everything else is generated or empty by default.
FIXED_DEFAULT_ALLOWED = {"ALTERFLOW_POSTGRES_PASSWORD", "ALTERFLOW_CATALOG_PASSWORD"}


def _secret_values(services):
    """(service, key, value) of every environment entry that is, or carries, a secret."""
    for name, service in services.items():
        for key, value in env_of(service).items():
            if key.endswith(("_CMD", "_FILE")):
                continue  # where the secret is, not the secret
            userinfo = re.match(r"^[\w+]+://[^:/@]*:(.*)@[^@]*$", value)  # user:password@host...
            if _SECRET_NAME.search(key):
                yield name, key, value
            elif userinfo:
                yield name, key, userinfo.group(1)


def test_no_secret_has_a_literal_value(services):
    """Every password and key is an environment variable; only PostgreSQL's have a non-empty default."""
    seen = set()
    for name, key, value in _secret_values(services):
        match = re.fullmatch(r"\$\{(ALTERFLOW_\w+):-([^}]*)\}", value)
        assert match, f"{name}: {key} holds a literal secret ({value!r}), not ${{ALTERFLOW_...:-...}}"
        variable, default = match.groups()
        seen.add(variable)
        assert not default or variable in FIXED_DEFAULT_ALLOWED, f"{name}: {key} has the fixed default {default!r}"
    assert seen >= {
        "ALTERFLOW_POSTGRES_PASSWORD",
        "ALTERFLOW_CATALOG_PASSWORD",
        "ALTERFLOW_AIRFLOW_PASSWORD",
        "ALTERFLOW_FERNET_KEY",
        "ALTERFLOW_JWT_SECRET",
        "ALTERFLOW_API_SECRET_KEY",
    }
    text = COMPOSE.read_text()
    assert "admin / admin" not in text and "FERNET_KEY: ''" not in text


KEY_FILES = {
    "AIRFLOW__CORE__FERNET_KEY": "secrets/fernet_key",
    "AIRFLOW__API_AUTH__JWT_SECRET": "secrets/jwt_secret",
    "AIRFLOW__API__SECRET_KEY": "secrets/api_secret_key",
}


def test_airflows_keys_are_read_from_the_files_the_init_generates(services):
    for name in (*AIRFLOW_SERVICES, "airflow-init", "cli"):
        env = env_of(services[name])
        for option, file in KEY_FILES.items():
            assert option not in env, f"{name} sets {option} itself: a fixed (or empty) value"
            assert env[f"{option}_CMD"] == f"cat {CONFIG_DIR}/{file}", name
        assert mounts_of(services[name])[CONFIG_DIR] == "airflow-config"
        assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"] == f"{CONFIG_DIR}/simple_auth_manager_passwords.json"
    init = services["airflow-init"]
    script = init["command"][-1]
    generate = f"python /opt/alterflow/deploy/compose_secrets.py init {CONFIG_DIR}"
    assert generate in script
    assert script.index(generate) < script.index("airflow config list") < script.index("airflow db migrate")
    assert init["user"] == "0:0" and f'chown -R "${{AIRFLOW_UID:-50000}}:0" {CONFIG_DIR}' in script
    for variable in ("ALTERFLOW_AIRFLOW_PASSWORD", "ALTERFLOW_FERNET_KEY", "ALTERFLOW_JWT_SECRET", "ALTERFLOW_API_SECRET_KEY"):
        assert env_of(init)[variable] == f"${{{variable}:-}}", "empty unless the user sets it: then generated"
    for name in AIRFLOW_SERVICES:
        assert "ALTERFLOW_FERNET_KEY" not in env_of(services[name]), "only airflow-init sees the given values"


@pytest.fixture(scope="module")
def compose_secrets():
    spec = importlib.util.spec_from_file_location("compose_secrets", SECRETS_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_init_generates_every_key_once_per_install(compose_secrets, tmp_path):
    from airflow.api_fastapi.auth.managers.simple.simple_auth_manager import SimpleAuthManager
    from cryptography.fernet import Fernet

    first, second = tmp_path / "one", tmp_path / "two"
    compose_secrets.init(first, {})
    compose_secrets.init(second, {})
    values = {}
    for directory in (first, second):
        for file in (*KEY_FILES.values(), "simple_auth_manager_passwords.json"):
            path = directory / file
            assert path.stat().st_mode & 0o077 == 0, f"{file} is readable by others"
            assert not path.read_text().endswith("\n"), "a _CMD's output is taken as it is"
            values.setdefault(file, set()).add(path.read_text())
        Fernet((directory / "secrets/fernet_key").read_text())  # a valid key
        with open(directory / "simple_auth_manager_passwords.json") as stream:
            assert len(SimpleAuthManager._get_passwords(stream)["admin"]) >= 16
    assert all(len(v) == 2 for v in values.values()), "two installs share a secret"

    before = {file: (first / file).read_text() for file in values}
    assert all(line.endswith("kept") or "kept " in line for line in compose_secrets.init(first, {}))
    assert {file: (first / file).read_text() for file in values} == before, "a restart keeps the keys"


def test_the_environment_sets_a_key_and_a_bad_fernet_key_is_refused(compose_secrets, tmp_path):
    from cryptography.fernet import Fernet

    compose_secrets.init(tmp_path, {})
    new, old = Fernet.generate_key().decode(), (tmp_path / "secrets/fernet_key").read_text()
    given = {"ALTERFLOW_FERNET_KEY": f"{new},{old}", "ALTERFLOW_JWT_SECRET": "j" * 40, "ALTERFLOW_AIRFLOW_PASSWORD": "pw from env"}
    compose_secrets.init(tmp_path, given)
    assert (tmp_path / "secrets/fernet_key").read_text() == f"{new},{old}", "rotation: new key first, then the old"
    assert (tmp_path / "secrets/jwt_secret").read_text() == "j" * 40
    assert compose_secrets.admin_password(tmp_path) == "pw from env"
    with pytest.raises(SystemExit, match="not a Fernet key"):
        compose_secrets.init(tmp_path, {"ALTERFLOW_FERNET_KEY": "changeme"})


def test_airflow_reads_its_keys_through_the_cmd_options(compose_secrets, tmp_path):
    """Airflow 3 runs a sensitive option's `_CMD` (core.fernet_key, api_auth.jwt_secret and
    api.secret_key are all sensitive): the compose settings give it the generated files."""
    compose_secrets.init(tmp_path, {})
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW__")}
    env["AIRFLOW_HOME"] = str(tmp_path / "home")
    for option, file in KEY_FILES.items():
        env[f"{option}_CMD"] = f"cat {tmp_path / file}"
    read = (
        "from airflow.configuration import conf; "
        "print(conf.get('core', 'fernet_key')); print(conf.get('api_auth', 'jwt_secret')); print(conf.get('api', 'secret_key'))"
    )
    done = subprocess.run([sys.executable, "-c", read], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-3:] == [(tmp_path / file).read_text() for file in KEY_FILES.values()]


def test_the_cli_signs_in_with_the_installs_password(compose_secrets, tmp_path):
    compose_secrets.init(tmp_path, {})
    show = [sys.executable, "-c", "import os; print(os.environ['ALTERFLOW_AIRFLOW_PASSWORD'])"]
    env = {k: v for k, v in os.environ.items() if k != "ALTERFLOW_AIRFLOW_PASSWORD"}
    for given, expected in (
        (None, compose_secrets.admin_password(tmp_path)),
        ("", compose_secrets.admin_password(tmp_path)),
        ("mine", "mine"),
    ):
        if given is not None:
            env["ALTERFLOW_AIRFLOW_PASSWORD"] = given
        done = subprocess.run(
            [sys.executable, str(SECRETS_SCRIPT), "exec", str(tmp_path), *show], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected + "\n"
    printed = subprocess.run(
        [sys.executable, str(SECRETS_SCRIPT), "init", str(tmp_path)], env=env, capture_output=True, text=True, timeout=60
    )
    assert compose_secrets.admin_password(tmp_path) not in printed.stdout + printed.stderr, "init never prints a secret"


def test_no_kill_buttons_on_sparks_uis(services):
    """spark.ui.killEnabled=false for the master and the worker (their JVM options) and, through
    spark-defaults.conf in SPARK_CONF_DIR, for the applications submitted from Airflow."""
    assert env_of(services["spark-master"])["SPARK_MASTER_OPTS"] == "-Dspark.ui.killEnabled=false"
    assert env_of(services["spark-worker"])["SPARK_WORKER_OPTS"] == "-Dspark.ui.killEnabled=false"
    defaults = (REPO / "deploy" / "spark-conf" / "spark-defaults.conf").read_text()
    assert re.search(r"^spark\.ui\.killEnabled\s+false$", defaults, re.M)
    assert "ENV SPARK_CONF_DIR=/opt/alterflow/deploy/spark-conf" in DOCKERFILE.read_text()
    for name in ("spark-master", "spark-worker"):
        assert "SPARK_CONF_DIR" not in env_of(services[name]), "the daemons read the image's spark-defaults.conf too"
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        assert env_of(services[name])["SPARK_CONF_DIR"] == "/opt/alterflow/deploy/spark-conf"
