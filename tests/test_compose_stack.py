"""docker-compose.yaml started for real (marker `compose`; `make test-compose` runs it alone, and
`make test` runs it with the rest): Docker installed from Debian when missing and dockerd started
when none runs, the base image from debootstrap, both images built from deploy/, `up --wait`, then
what a user does through `docker compose run --rm cli`: db upgrade, CREATE, a load, a lightweight
ALTER and a heavyweight ALTER converted by the compose Spark master; the rows, the DAG runs through
Airflow's REST API and the Schema changes API are checked from the host; `down -v` at the end.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import uuid

import httpx
import pytest

from tests.support.docker_stack import (
    ComposeStack,
    DockerUnavailable,
    compose_command,
    docker_daemon,
    ensure_base_image,
    ensure_docker_installed,
    host_extra_ca_certs,
)
from tests.support.ports import free_port

pytestmark = pytest.mark.compose

ROWS = 2_000


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("compose")
    try:
        ensure_docker_installed()
        compose = compose_command()
    except DockerUnavailable as reason:
        if os.environ.get("CI"):
            pytest.fail(str(reason))
        pytest.skip(str(reason))
    with docker_daemon(scratch / "dockerd.log"):
        env = {
            "ALTERFLOW_BASE_IMAGE": ensure_base_image(),
            "ALTERFLOW_EXTRA_CA_CERTS": host_extra_ca_certs(),
            "ALTERFLOW_HTTP_PORT": str(free_port()),
            "ALTERFLOW_SPARK_UI_PORT": str(free_port()),
            "ALTERFLOW_AIRFLOW_PASSWORD": uuid.uuid4().hex[:12],
        }
        stack = ComposeStack(compose, f"alterflowtest{os.getpid()}", env)
        stack.compose("build", timeout=1800)
        subprocess.run(["docker", "image", "prune", "--force"], capture_output=True, timeout=300)  # the replaced builds
        try:
            stack.compose("up", "--detach", "--wait", "--wait-timeout", "600", timeout=900)
            stack.http = f"http://127.0.0.1:{env['ALTERFLOW_HTTP_PORT']}"
            stack.spark_ui = f"http://127.0.0.1:{env['ALTERFLOW_SPARK_UI_PORT']}"
            stack.password = env["ALTERFLOW_AIRFLOW_PASSWORD"]
            stack.data = scratch / "data"
            stack.data.mkdir()
            yield stack
        except BaseException:
            print(stack.logs())
            raise
        finally:
            stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "30", check=False, timeout=600)


def _token(stack) -> str:
    response = httpx.post(f"{stack.http}/auth/token", json={"username": "admin", "password": stack.password}, timeout=30)
    response.raise_for_status()
    return response.json()["access_token"]


def test_a_user_session_on_the_compose_stack(stack):
    assert stack.cli("db", "upgrade").strip().startswith("catalog already at migration")

    assert "CREATE TABLE orders" in stack.cli(
        "sql", "-e", "CREATE TABLE orders (id INT NOT NULL, amount STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"
    )
    with open(stack.data / "orders.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "amount"])
        writer.writerows((i, str(i * 10)) for i in range(1, ROWS + 1))
    stack.data.chmod(0o755)
    loaded = stack.cli("load", "orders", "/data/orders.csv", volumes=[f"{stack.data}:/data:ro"])
    assert f"{ROWS} rows loaded into orders" in loaded

    light = stack.cli("sql", "-e", "ALTER TABLE orders ADD COLUMN note STRING DEFAULT 'n'")
    assert "ALTER TABLE orders: job 1 FINISHED, schema version 2" in light
    heavy = stack.cli("sql", "-e", 'ALTER TABLE orders MODIFY COLUMN amount BIGINT PROPERTIES ("engine" = "spark")')
    assert "ALTER TABLE orders: job 2 FINISHED, schema version 3" in heavy

    # The rows, read back through the CLI under the newest version: every row once, converted.
    summary = stack.cli("sql", "-e", "SELECT COUNT(*), COUNT(DISTINCT id), SUM(amount), MIN(note), MAX(note) FROM orders")
    row = [line for line in summary.splitlines() if line.startswith("| ") and "count" not in line]
    assert [cell.strip() for cell in row[0].strip("|").split("|")] == [
        str(ROWS),
        str(ROWS),
        str(sum(i * 10 for i in range(1, ROWS + 1))),
        "n",
        "n",
    ], summary

    # Two DAG runs of alterflow_schema_change, both successful, carrying the statements.
    headers = {"Authorization": f"Bearer {_token(stack)}"}
    runs = httpx.get(f"{stack.http}/api/v2/dags/alterflow_schema_change/dagRuns", headers=headers, timeout=30).json()["dag_runs"]
    assert sorted((r["conf"]["statement"], r["state"]) for r in runs) == [
        ("ALTER TABLE orders ADD COLUMN note STRING DEFAULT 'n'", "success"),
        ('ALTER TABLE orders MODIFY COLUMN amount BIGINT PROPERTIES ("engine" = "spark")', "success"),
    ]

    # The Schema changes API of the plugin served by the api-server.
    jobs = httpx.get(f"{stack.http}/alterflow/api/jobs", headers=headers, timeout=30).json()["jobs"]
    assert sorted((j["job_id"], j["kind"], j["state"]) for j in jobs) == [(1, "LIGHT", "FINISHED"), (2, "HEAVY", "FINISHED")]
    versions = httpx.get(f"{stack.http}/alterflow/api/tables/orders/versions", headers=headers, timeout=30).json()
    assert versions["current_version"] == 3
    assert [c["type"] for c in versions["versions"][-1]["columns"]] == ["INT", "BIGINT", "STRING"]

    # The heavyweight job's conversion ran as an application of the compose Spark master.
    master = httpx.get(f"{stack.spark_ui}/json/", timeout=30).json()
    assert ("alterflow-convert-job-2", "FINISHED") in {(a["name"], a["state"]) for a in master["completedapps"]}, json.dumps(master)[:2000]
    alive = [w for w in master["workers"] if w["state"] == "ALIVE"]
    assert len(alive) == 1


def test_a_bad_statement_through_the_cli_is_one_line_and_changes_nothing(stack):
    result = stack.compose("run", "--rm", "cli", "sql", "-e", "ALTER TABLE no_such_table ADD COLUMN x INT", check=False)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: ALTER TABLE no_such_table: unknown table no_such_table"], result.stderr
    runs = stack.compose("run", "--rm", "cli", "sql", "-e", "SHOW ALTER TABLE COLUMN").stdout
    assert "no_such_table" not in runs
