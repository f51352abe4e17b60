"""docker-compose.yaml checked against the project without Docker (tests/test_compose_stack.py
starts it for real): the services of Airflow 3's own compose layout plus PostgreSQL and Spark, the
images built from the lock at the installed versions, the names and bases overridable from the
environment, the shared warehouse, the settings that point Airflow, the DAGs and the CLI at the
compose services, healthchecks, and every file the stack mounts or builds from."""

from __future__ import annotations

import json
import pathlib
import re
from importlib.metadata import version

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parent.parent
COMPOSE = REPO / "docker-compose.yaml"
DOCKERFILE = REPO / "deploy" / "Dockerfile"
POSTGRES_DOCKERFILE = REPO / "deploy" / "postgres.Dockerfile"

AIRFLOW_SERVICES = ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")
LONG_RUNNING = (*AIRFLOW_SERVICES, "postgres", "spark-master", "spark-worker")
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
    for name in (*AIRFLOW_SERVICES, "airflow-init", "cli", "spark-master", "spark-worker"):
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
        assert env["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
        assert env["AIRFLOW__CORE__LOAD_EXAMPLES"].lower() == "false"
        metadata = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
        assert re.fullmatch(rf"postgresql\+psycopg://airflow:airflow@postgres:5432/{postgres_env['POSTGRES_DB']}", metadata)
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
    from sqlalchemy.engine import make_url

    init_sql = (REPO / "deploy" / "postgres-init.sql").read_text()
    assert mounts_of(services["postgres"])["/docker-entrypoint-initdb.d/10-alterflow.sql"] == "./deploy/postgres-init.sql"
    for name in (*AIRFLOW_SERVICES, "airflow-init", "cli"):
        url = make_url(env_of(services[name])["ALTERFLOW_CATALOG_URL"])
        assert (url.get_backend_name(), url.host, url.port) == ("postgresql", "postgres", 5432)
        assert re.search(rf"CREATE ROLE {url.username} LOGIN PASSWORD '{url.password}'", init_sql)
        assert re.search(rf"CREATE DATABASE {url.database} OWNER {url.username}", init_sql)
    assert "alterflow db upgrade" in " ".join(services["airflow-init"]["command"]), "airflow-init migrates the catalog"


def test_long_running_services_have_healthchecks(services):
    for name in LONG_RUNNING:
        check = services[name].get("healthcheck")
        assert check and check["test"], f"{name} has no healthcheck"
    assert "/api/v2/version" in " ".join(services["airflow-apiserver"]["healthcheck"]["test"])
    assert services["airflow-scheduler"]["environment"]["AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK"] == "true"
    assert "DagProcessorJob" in " ".join(services["airflow-dag-processor"]["healthcheck"]["test"])
    assert "TriggererJob" in " ".join(services["airflow-triggerer"]["healthcheck"]["test"])


def test_start_order(services):
    for name in AIRFLOW_SERVICES:
        depends = services[name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["airflow-init"]["condition"] == "service_completed_successfully"
    assert services["airflow-scheduler"]["depends_on"]["spark-master"]["condition"] == "service_healthy"
    assert services["spark-worker"]["depends_on"]["spark-master"]["condition"] == "service_healthy"


def test_the_cli_service_submits_alters_to_the_api_server(services):
    env = env_of(services["cli"])
    assert env["ALTERFLOW_AIRFLOW_URL"] == "http://airflow-apiserver:8080"
    assert services["cli"]["entrypoint"] == ["alterflow"]
    assert services["cli"]["profiles"] == ["cli"]


def test_spark_driver_settings_are_shipped_in_the_image(services):
    env = env_of(services["airflow-scheduler"])
    conf_dir = env["SPARK_CONF_DIR"]
    assert conf_dir == "/opt/alterflow/deploy/spark-conf"
    assert "COPY deploy/spark-conf /opt/alterflow/deploy/spark-conf" in DOCKERFILE.read_text()
    assert "SPARK_LOCAL_IP" in (REPO / "deploy" / "spark-conf" / "spark-env.sh").read_text()
