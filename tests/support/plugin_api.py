"""Calls of the plugin's JSON API as the page makes them, and Airflow's audit log that its actions
write (`airflow.models.log.Log`, in the test run's Airflow database)."""

from __future__ import annotations

import json

ACTION_HEADER = {"X-Alterflow-Request": "1"}  # what the page's fetches send with every POST


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def act(client, path: str, headers: dict | None = None):
    """A POST the way the page's buttons make it: JSON body `{}` and the request header."""
    return client.post(path, headers={**(headers or {}), **ACTION_HEADER}, json={})


def last_log_id() -> int:
    """The newest row of Airflow's audit log (0 when none): later rows are a test's own."""
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import func, select

    with create_session() as session:
        return session.scalar(select(func.max(Log.id))) or 0


def audit_rows(since: int, event_prefix: str = "alterflow_") -> list[dict]:
    """Rows of Airflow's audit log after id `since` whose event starts with `event_prefix`."""
    from airflow.models.log import Log
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.scalars(select(Log).where(Log.id > since, Log.event.startswith(event_prefix)).order_by(Log.id))
        return [
            {
                "event": r.event,
                "owner": r.owner,
                "dag_id": r.dag_id,
                "run_id": r.run_id,
                "extra": json.loads(r.extra) if r.extra else None,
            }
            for r in rows
        ]
