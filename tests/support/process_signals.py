"""Stopping a process with SIGSTOP as a stand-in for a slow one, without freezing the catalog.

A process stopped inside a SQLite write transaction (a lease renewal, a progress note) keeps the
database's write lock until it is continued: every other writer then waits out its busy timeout
and fails with "database is locked". That is SQLite's single writer, not the behaviour under test,
so the tests stop a process only at a moment it holds no write lock: stop it, probe the lock, and
if it is held continue the process and try again a moment later."""

from __future__ import annotations

import os
import pathlib
import signal
import sqlite3
import time

from sqlalchemy.engine import make_url


def _write_lock_is_free(database: str) -> bool:
    probe = sqlite3.connect(database, timeout=0.2, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError as exc:
        # "locking protocol" (SQLITE_PROTOCOL): the process was stopped while it held one of the
        # WAL index's locks (beginning a read, a checkpoint), so the probe could not begin either:
        # no safe moment, as with a held write lock.
        if "locked" not in str(exc) and "locking protocol" not in str(exc):
            raise
        return False
    finally:
        probe.close()


def stop_outside_a_catalog_write(pid: int, catalog_url: str, within_s: float = 60.0) -> None:
    """SIGSTOP the process group `pid` at a moment it holds no write lock on the SQLite catalog."""
    url = make_url(catalog_url)
    assert url.get_backend_name() == "sqlite", "the lock probe knows SQLite's catalog only"
    deadline = time.monotonic() + within_s
    while True:
        os.killpg(pid, signal.SIGSTOP)
        _wait_until_the_group_stopped(pid)  # a thread still running could take the lock after the probe
        if _write_lock_is_free(url.database):
            return
        os.killpg(pid, signal.SIGCONT)
        assert time.monotonic() < deadline, f"process {pid} held the catalog's write lock for {within_s:.0f} s"
        time.sleep(0.05)


def _threads_of_group(pgid: int) -> list[str]:
    """/proc/<pid>/task/<tid>/stat of every thread of every process in process group `pgid`."""
    found = []
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[2]) == pgid:  # the stat's 5th field, 3rd after the command: the process group
            found += [str(task) for task in stat.parent.glob("task/*/stat")]
    return found


def _wait_until_the_group_stopped(pgid: int, within_s: float = 10.0) -> None:
    """Until every thread of process group `pgid` is stopped (SIGSTOP stops each thread when it next
    leaves the kernel: one inside a system call, such as the lock SQLite is taking, finishes it first)."""
    deadline = time.monotonic() + within_s
    while True:
        running = []
        for path in _threads_of_group(pgid):
            try:
                with open(path) as stat:
                    state = stat.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state not in ("T", "t", "Z", "X"):
                running.append(path)
        if not running:
            return
        if time.monotonic() >= deadline:
            os.killpg(pgid, signal.SIGCONT)  # not left frozen by the failed test
        assert time.monotonic() < deadline, f"threads of process group {pgid} still running {within_s:.0f} s after SIGSTOP: {running[:5]}"
        time.sleep(0.005)


def stopped(pid: int) -> bool:
    """Whether process `pid` is stopped (SIGSTOP), from its state in /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "T"


def held_at_its_own_stop(proc, catalog_url: str, within_s: float = 120.0) -> None:
    """Wait until `proc`, started with `ALTERFLOW_CRASH_AT=<point>:stop`, has stopped itself at a
    moment it holds no write lock on a SQLite catalog (any other catalog: its first stop). A stop
    inside a catalog write is continued, to the point's next stop."""
    deadline = time.monotonic() + within_s
    while True:
        assert proc.poll() is None, "the process ended before it reached its stop point"
        assert time.monotonic() < deadline, f"process {proc.pid} did not stop itself within {within_s:.0f} s"
        if stopped(proc.pid):
            url = make_url(catalog_url)
            if url.get_backend_name() != "sqlite" or _write_lock_is_free(url.database):
                return
            os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.01)


def let_go(proc, within_s: float = 120.0) -> tuple[str, str]:
    """Continue `proc` each time it stops itself until it ends; its output."""
    deadline = time.monotonic() + within_s
    while proc.poll() is None:
        assert time.monotonic() < deadline, f"process {proc.pid} did not end within {within_s:.0f} s"
        os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.01)
    return proc.communicate(timeout=within_s)
