"""Fixtures of the plugin tests: Airflow's real auth manager issuing real JWTs, the plugin's app
mounted the way the api-server mounts it; the alterflow environment (ALTERFLOW_*) on the
parametrised catalog that both the app and a `Session` use (`alterflow_env`, `plugin_session`) is
tests/conftest.py's, shared with tests/airflow."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def auth_manager(airflow_db):
    """Airflow's configured auth manager (SimpleAuthManager), initialised as the api-server does."""
    from airflow.api_fastapi.app import init_auth_manager

    return init_auth_manager()


@pytest.fixture(scope="session")
def mint(auth_manager):
    """mint(username, role, teams) -> a JWT signed by Airflow's auth manager for that user."""
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    def _mint(username: str = "alice", role: str | None = "admin", teams: list[str] | None = None) -> str:
        return auth_manager.generate_jwt(SimpleAuthManagerUser(username=username, role=role, teams=teams))

    return _mint


@pytest.fixture
def client(auth_manager, alterflow_env):
    """An HTTP client on the plugin's app mounted at /alterflow, as Airflow's `init_plugins` does."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from alterflow.airflow.plugin import AlterflowPlugin

    root = FastAPI()
    for spec in AlterflowPlugin().fastapi_apps:
        root.mount(spec["url_prefix"], spec["app"])
    with TestClient(root, base_url="http://127.0.0.1") as http:
        yield http


@pytest.fixture
def no_migrate_runs(airflow_db):
    """An Airflow in which no alterflow_migrate run has happened yet (the test run's Airflow
    database is shared: other tests' runs would choose the Migrations section's directory)."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    with create_session() as session:
        session.execute(delete(DagRun).where(DagRun.dag_id == "alterflow_migrate"))
