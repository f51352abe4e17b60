"""The alterflow Airflow plugin: the "Schema changes" page (an external view in Airflow's navigation,
shown in the UI at /plugin/schema-changes) and its JSON API, both served by the FastAPI app in
`alterflow.airflow.web`, mounted by the api-server at /alterflow; and a listener that notes a
failed run's line on the run (`alterflow.airflow.runs`)."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from alterflow.airflow import runs
from alterflow.airflow.mount import MOUNT_PATH, UI_ROUTE


class AlterflowPlugin(AirflowPlugin):
    name = "alterflow"
    # The scheduler's listener: a failed run of an alterflow DAG gets its failure line as its note.
    listeners = [runs]
    external_views = [
        {
            "name": "Schema changes",
            # Relative (no leading slash): the UI resolves it against its <base href>, so the page
            # is found under a URL prefix (`[api] base_url` with a path) too.
            "href": f"{MOUNT_PATH.lstrip('/')}/",
            "destination": "nav",
            "url_route": UI_ROUTE,
            "icon": f"{MOUNT_PATH.lstrip('/')}/static/schema_changes.svg",
            "nav_top_level": True,
        }
    ]

    @property
    def fastapi_apps(self) -> list[dict]:  # type: ignore[override]  # Airflow's is a list; read on an instance
        """The page's app, imported only where Airflow asks for it (the api-server, `airflow plugins`):
        every task process loads the plugins too, and the app's imports (FastAPI, Airflow's REST API)
        took a fifth of a busy fleet's CPU there (docs/deploy.md#priorities-and-worker-start-up)."""
        from alterflow.airflow.web import app

        return [{"app": app, "url_prefix": MOUNT_PATH, "name": "alterflow"}]
