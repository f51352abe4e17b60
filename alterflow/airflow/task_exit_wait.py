"""A task's worker slot back as soon as its process exits, not up to a second later (issue 39).

Airflow's task supervisor (`airflow.sdk.execution_time.supervisor.WatchedSubprocess`, the Task SDK
1.3 of Airflow 3.3) waits for its task process through the process's sockets: each turn of its
loop selects on them for up to `[workers] min_heartbeat_interval` (an integer: 1 s at the least),
then asks whether the process has exited. A process's last sockets close as it exits, an instant
before the kernel reports it exited; when the supervisor asks in that instant, it finds every
socket closed and the process alive, and its next turn selects on no socket at all: it sleeps the
whole interval. The executor's slot stays taken meanwhile. On the fleet, a light ALTER's task of
0.2 s held its Celery slot 1.2 s one time in twelve on an idle host (docs/benchmarks.md).

`install()` makes such a turn wait on the process itself instead (psutil's wait, which polls a
pidfd on Linux) for the same time at most: it ends the moment the process exits, and nothing else
about the supervisor changes (a turn with a socket still open is Airflow's own). A Celery worker
installs it as it imports `worker_imports`, before it forks its pool, so every task supervisor of
the worker has it. `installed()` says whether it is in place; an Airflow whose supervisor lacks
what it wraps is left as it is (`install` returns False and logs why).
"""

from __future__ import annotations

import contextlib
import functools
import logging

log = logging.getLogger(__name__)

_MARK = "_alterflow_waits_on_exit"


def _supervisor_class():
    """Airflow's task supervisor class, or None where its Task SDK has none by that name."""
    try:
        from airflow.sdk.execution_time import supervisor
    except ImportError:
        return None
    return getattr(supervisor, "WatchedSubprocess", None)


def _waiting_on_exit(service):
    """`service` (the supervisor's `_service_subprocess`), first waiting on the process itself
    when every socket is closed and the process has not yet been seen to exit."""

    @functools.wraps(service)
    def service_subprocess(self, max_wait_time: float, *args, **kwargs):
        if self._exit_code is None and not self._open_sockets and not self.selector.get_map():
            # Airflow's own lower bound on a turn's wait (a turn of 0 s must not spin).
            with contextlib.suppress(self._process.TimeoutExpired):
                self._process.wait(timeout=max(0.01, max_wait_time))
            max_wait_time = 0
        return service(self, max_wait_time, *args, **kwargs)

    setattr(service_subprocess, _MARK, True)
    return service_subprocess


def installed() -> bool:
    """Whether Airflow's supervisor has the wait (this process, or the worker it was forked from)."""
    supervisor = _supervisor_class()
    return supervisor is not None and getattr(getattr(supervisor, "_service_subprocess", None), _MARK, False)


def install() -> bool:
    """Wrap the supervisor's turn (once; again is a no-op). True when it is in place."""
    supervisor = _supervisor_class()
    service = getattr(supervisor, "_service_subprocess", None)
    fields = {field.name for field in getattr(supervisor, "__attrs_attrs__", ())}
    if service is None or not {"_exit_code", "_open_sockets", "selector", "_process"} <= fields:
        log.warning(
            "Airflow's task supervisor is not the one alterflow knows: a task's slot may be held up to a heartbeat interval after it ends"
        )
        return False
    if not getattr(service, _MARK, False):
        supervisor._service_subprocess = _waiting_on_exit(service)
    return True
