"""alterflow.airflow.task_exit_wait on Airflow's real task supervisor and real processes: a turn of
the supervisor's loop with every socket closed ends when the process exits (Airflow's own sleeps
the whole turn), and a turn with a socket open is Airflow's (tests/airflow/test_celery_config.py: a Celery
worker installs it)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid

import psutil
import pytest
import structlog
from airflow.sdk.execution_time.supervisor import PsutilTracker, WatchedSubprocess

from alterflow.airflow import task_exit_wait


@pytest.fixture
def patched(monkeypatch):
    """install(), undone after the test (the class is this process's, shared by every test)."""
    monkeypatch.setattr(WatchedSubprocess, "_service_subprocess", WatchedSubprocess._service_subprocess)
    assert task_exit_wait.install()
    yield


def watched(seconds: float) -> tuple[WatchedSubprocess, socket.socket]:
    """A supervisor of a real process that lives `seconds`, with no socket of its own registered
    (as once its task process has closed them all), and the other end of its stdin."""
    process = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])
    ours, theirs = socket.socketpair()
    tracker = PsutilTracker(psutil.Process(process.pid))
    supervisor = WatchedSubprocess(id=uuid.uuid4(), pid=process.pid, stdin=ours, process=tracker, process_log=structlog.get_logger())
    return supervisor, theirs


def timed_turn(supervisor: WatchedSubprocess, max_wait_time: float) -> tuple[int | None, float]:
    started = time.monotonic()
    exit_code = supervisor._service_subprocess(max_wait_time=max_wait_time)
    return exit_code, time.monotonic() - started


def test_airflows_own_turn_sleeps_past_the_exit():
    """What the module is for: unpatched, a turn with no socket sleeps all of it though the
    process exited long before (if Airflow fixes this, the module is no longer needed)."""
    assert not task_exit_wait.installed()
    supervisor, _ = watched(0.2)
    exit_code, seconds = timed_turn(supervisor, 2.0)
    assert exit_code == 0 and seconds >= 1.9


def test_a_turn_ends_when_the_process_exits(patched):
    assert task_exit_wait.installed()
    supervisor, _ = watched(0.3)
    exit_code, seconds = timed_turn(supervisor, 30.0)
    assert exit_code == 0 and 0.25 <= seconds < 10, seconds
    assert supervisor._exit_code == 0  # Airflow's loop ends on it


def test_a_turn_waits_at_most_its_time(patched):
    supervisor, _ = watched(30)
    exit_code, seconds = timed_turn(supervisor, 0.3)
    assert exit_code is None and 0.25 <= seconds < 10, seconds
    supervisor._process.send_signal(9)
    assert timed_turn(supervisor, 30.0)[0] == -9 and supervisor._exit_code == -9


def test_a_turn_with_a_socket_open_is_airflows_own(patched):
    """While a socket is open the turn selects on it: data on it ends the turn, the process is not
    waited for."""
    supervisor, _ = watched(30)
    reader, writer = socket.socketpair()
    supervisor._open_sockets[reader] = "test"
    seen = []
    supervisor.selector.register(reader, 1, (lambda sock: seen.append(sock.recv(10)) or True, lambda sock: None))
    writer.sendall(b"hello")
    exit_code, seconds = timed_turn(supervisor, 20.0)
    assert (exit_code, seen) == (None, [b"hello"]) and seconds < 10, seconds
    supervisor._process.send_signal(9)
    supervisor._process.wait(10)  # reaped, not left a zombie for the rest of the session


def test_install_is_once(patched):
    wrapped = WatchedSubprocess._service_subprocess
    assert task_exit_wait.install()
    assert WatchedSubprocess._service_subprocess is wrapped
