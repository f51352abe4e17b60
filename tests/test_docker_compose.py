"""docker-compose.yaml checked against the project (no Docker engine here to run it): the services
of Airflow 3's own compose layout plus PostgreSQL and Spark, images at the installed versions,
the shared warehouse, the settings that point Airflow, the DAGs and the CLI at the compose
services, healthchecks, and every file the stack mounts or builds from."""

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


def test_airflow_image_is_built_from_the_installed_airflow_version(services):
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        build = services[name]["build"]
        assert (REPO / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE
    base = re.search(r"^FROM\s+(\S+)", DOCKERFILE.read_text(), re.M).group(1)
    assert base == f"apache/airflow:{version('apache-airflow')}-python3.11"
    assert "openjdk-17" in DOCKERFILE.read_text(), "spark-submit needs Java in the Airflow image"
    pinned = re.search(r"^apache-airflow==(\S+)$", (REPO / "requirements.lock").read_text(), re.M).group(1)
    assert pinned == version("apache-airflow"), "the lock the image installs pins the same Airflow"


def test_the_files_the_image_copies_exist():
    for line in DOCKERFILE.read_text().splitlines():
        if line.startswith("COPY "):
            sources = [p for p in line.split()[1:-1] if not p.startswith("--")]
            for source in sources:
                assert (REPO / source).exists(), f"{DOCKERFILE.name} copies {source}, which is missing"


def test_spark_images_match_the_installed_pyspark(services):
    expected = f"apache/spark:{version('pyspark')}"
    assert services["spark-master"]["image"] == expected
    assert services["spark-worker"]["image"] == expected
    assert "spark://spark-master:7077" in services["spark-worker"]["command"]


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
        assert re.fullmatch(rf"postgresql\+psycopg2://airflow:airflow@postgres:5432/{postgres_env['POSTGRES_DB']}", metadata)
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
    assert "COPY --chown=airflow:0 deploy/spark-conf /opt/alterflow/deploy/spark-conf" in DOCKERFILE.read_text()
    assert "SPARK_LOCAL_IP" in (REPO / "deploy" / "spark-conf" / "spark-env.sh").read_text()
