"""The plugin as Airflow sees it: loaded by Airflow's plugin manager through the `airflow.plugins`
entry point of the installed distribution (the repository's plugins folder holds only a shim),
registering the FastAPI app at /alterflow and the "Schema changes" external view, and served by
Airflow's real api-server app (with its real login route issuing the token)."""

from __future__ import annotations

import json
import pathlib

from alterflow.engine.session import Session
from alterflow.settings import Settings
from tests.support import point_alterflow_env_at

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_airflow_plugin_manager_loads_the_plugin(airflow_db):
    from airflow import plugins_manager, settings
    from airflow.api_fastapi.core_api.datamodels.plugins import PluginResponse

    assert pathlib.Path(settings.PLUGINS_FOLDER) == REPO / "plugins"
    plugins, errors = plugins_manager._get_plugins()
    ours = [p for p in plugins if p.name == "alterflow"]
    assert len(ours) == 1, [p.name for p in plugins]
    assert "alterflow.airflow.plugin:AlterflowPlugin" in str(ours[0].source)  # the entry point
    assert not [path for path in errors if "alterflow" in path], errors  # the shim registered nothing

    from alterflow.airflow.web import app

    apps, _middlewares = plugins_manager.get_fastapi_plugins()
    assert [(a["name"], a["url_prefix"]) for a in apps if a["app"] is app] == [("alterflow", "/alterflow")]
    external_views, _react_apps = plugins_manager._get_ui_plugins()
    view = next(v for v in external_views if v["name"] == "Schema changes")
    assert (view["href"], view["destination"], view["url_route"]) == ("alterflow/", "nav", "schema-changes")
    assert view["nav_top_level"] is True and view["icon"] == "alterflow/static/schema_changes.svg"

    # What Airflow's /api/v2/plugins serves the UI: it validates against Airflow's own models.
    info = next(i for i in plugins_manager.get_plugin_info() if i["name"] == "alterflow")
    response = PluginResponse.model_validate(info)
    assert [v.url_route for v in response.external_views] == ["schema-changes"]
    assert [a.url_prefix for a in response.fastapi_apps] == ["/alterflow"]


def test_the_airflow_api_server_serves_the_page_and_the_api(airflow_db, tmp_path, monkeypatch):
    """Airflow's own app (as `airflow api-server` builds it): log in through /auth/token with the
    simple auth manager's generated password, then call the plugin with that token and cookie."""
    from airflow.api_fastapi.app import create_app
    from airflow.api_fastapi.auth.managers.simple.simple_auth_manager import SimpleAuthManager
    from fastapi.testclient import TestClient

    settings = Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home")})
    point_alterflow_env_at(settings, monkeypatch)
    session = Session(settings)
    list(session.run("CREATE TABLE served (id INT); ALTER TABLE served ADD COLUMN n INT DEFAULT 7"))

    app = create_app("core")
    with TestClient(app, base_url="http://localhost:8080") as http:
        # Anonymous: nothing.
        assert http.get("/alterflow/api/jobs").status_code == 401
        assert http.get("/alterflow/").status_code == 401

        users = {u.username for u in SimpleAuthManager.get_users()}
        assert "admin" in users
        passwords = json.loads(pathlib.Path(SimpleAuthManager.get_generated_password_file()).read_text())
        login = http.post("/auth/token", json={"username": "admin", "password": passwords["admin"]})
        assert login.status_code == 201, login.text
        token = login.json()["access_token"]

        jobs = http.get("/alterflow/api/jobs", headers={"Authorization": f"Bearer {token}"})
        assert jobs.status_code == 200, jobs.text
        assert [(j["table"], j["kind"], j["state"], j["schema_version"]) for j in jobs.json()["jobs"]] == [
            ("served", "LIGHT", "FINISHED", 2)
        ]
        http.cookies.set("_token", token)
        page = http.get("/alterflow/")
        assert page.status_code == 200 and 'data-table="served"' in page.text and 'id="jobs"' in page.text
        assert http.get("/alterflow/static/schema_changes.js").status_code == 200

        # Airflow's plugin listing shows the external view the UI turns into the nav entry.
        listed = http.get("/api/v2/plugins", headers={"Authorization": f"Bearer {token}"}).json()
        ours = next(p for p in listed["plugins"] if p["name"] == "alterflow")
        assert [(v["name"], v["href"], v["url_route"]) for v in ours["external_views"]] == [
            ("Schema changes", "alterflow/", "schema-changes")
        ]


def test_the_plugins_folder_holds_only_a_shim_of_the_installed_plugin():
    """The code lives in the package (`alterflow.airflow`); `plugins/` is the thin shim the users
    asked for, registering the package's plugin only where no entry point does."""
    import importlib.metadata

    assert sorted(p.name for p in (REPO / "plugins").iterdir() if p.name != "__pycache__") == ["alterflow_plugin.py"]
    (entry,) = [e for e in importlib.metadata.entry_points(group="airflow.plugins") if e.name == "alterflow"]
    from alterflow.airflow.plugin import AlterflowPlugin

    assert entry.load() is AlterflowPlugin


def test_the_shim_registers_the_plugin_where_no_entry_point_does(monkeypatch):
    """Where alterflow's distribution is not installed (PYTHONPATH only), or is installed without
    the entry point, the shim defines the plugin; where it has it, the shim defines nothing."""
    import importlib.metadata
    import runpy

    from alterflow.airflow.plugin import AlterflowPlugin

    shim = str(REPO / "plugins" / "alterflow_plugin.py")
    real = importlib.metadata.distribution

    def not_installed(name):
        if name == "alterflow":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    assert runpy.run_path(shim)["AlterflowPlugin"] is AlterflowPlugin

    class WithoutEntryPoints:
        entry_points = importlib.metadata.EntryPoints(())

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: WithoutEntryPoints() if name == "alterflow" else real(name))
    assert runpy.run_path(shim)["AlterflowPlugin"] is AlterflowPlugin
    monkeypatch.setattr(importlib.metadata, "distribution", real)
    assert "AlterflowPlugin" not in runpy.run_path(shim)


def test_loading_the_plugin_leaves_the_pages_app_unimported():
    """Every Airflow process loads the plugins, a task's included: the page's app (FastAPI,
    Airflow's REST API) is imported only when Airflow asks for `fastapi_apps` (the api-server)."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from alterflow.airflow.plugin import AlterflowPlugin\n"
        "plugin = AlterflowPlugin()\n"
        "print(sorted(m for m in ('alterflow.airflow.web', 'fastapi') if m in sys.modules))\n"
        "assert [spec['url_prefix'] for spec in plugin.fastapi_apps] == ['/alterflow']\n"
        "print('alterflow.airflow.web' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()  # the app's import may log a warning between the two
    assert (lines[0], lines[-1]) == ("[]", "True"), done.stdout
