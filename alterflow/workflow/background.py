"""A heavyweight job's conversion and check yield the CPU to the short steps around them.

On a fleet, a worker's slots hold a light ALTER's one task beside conversions and Great Expectations
checks; on a host of few cores the conversions take the CPU and the light task, a second of work,
waits for it. So the long steps run in a thread of their own whose niceness is raised (Linux's
`nice`, `ALTERFLOW_BACKGROUND_NICE`, 10 by default): the kernel gives the CPU to normal-priority
work first, and the conversion takes whatever is left, all of it on an idle host. The threads and
processes that thread starts inherit its niceness. Only that thread is niced (Linux keeps a niceness
per thread): the calling process keeps its own, so a notebook or a test process that runs a DAG
in-process is not slowed afterwards. Elsewhere than Linux, and with a niceness of 0, the work runs
in the caller's thread as it is (docs/airflow.md#background-work-yields-the-cpu).
"""

from __future__ import annotations

import contextvars
import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def can_nice_threads() -> bool:
    """Whether a thread's niceness can be raised alone (Linux: setpriority on a thread id)."""
    return sys.platform.startswith("linux") and hasattr(os, "setpriority")


def raise_thread_niceness(nice: int) -> None:
    """The calling thread's niceness raised to `nice`; never lowered (a process started with
    `nice -n 15` keeps 15); nothing where threads cannot be niced alone."""
    if nice <= 0 or not can_nice_threads():
        return
    thread_id = threading.get_native_id()
    if os.getpriority(os.PRIO_PROCESS, thread_id) < nice:
        os.setpriority(os.PRIO_PROCESS, thread_id, nice)


def run_niced(nice: int, work: Callable[[], T]) -> T:
    """`work()`'s result, computed in a thread of niceness `nice` that the caller waits for (its
    exception, if it raises, raised here). The thread sees the caller's context variables."""
    if nice <= 0 or not can_nice_threads():
        return work()
    outcome: dict[str, object] = {}

    def niced() -> None:
        try:
            raise_thread_niceness(nice)
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, whatever it is
            outcome["error"] = exc

    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(niced,), name="alterflow-background", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
