"""The Airflow task this code runs in, where it runs in one: the task bodies, the hook's reading of
its connection and the failure line ask the Task SDK's context the same way (code that needs a task, such as
GC's run check, asks `get_current_context` itself and fails with its error outside one)."""

from __future__ import annotations

from typing import Any


def running_task_instance() -> Any | None:
    """The task instance this code runs in (Airflow's task context), None outside a task (a
    trigger, the api-server's page, a test calling a task body, a thread a task started)."""
    from airflow.sdk import get_current_context

    try:
        return get_current_context()["ti"]
    except RuntimeError:  # "no context was found": not within a task
        return None


def running_try_id() -> str:
    """The id of the running task try ("" outside a task): a retry, the next task of `dag.test()`
    and a deferred task coming back each have a new one."""
    return str(getattr(running_task_instance(), "id", "") or "")
