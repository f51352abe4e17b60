"""Airflow on the CeleryExecutor for `make airflow AIRFLOW_EXECUTOR=celery` (docs/deploy.md#celery-workers):
the settings Celery needs, and the processes `airflow standalone` would run (it forces the
LocalExecutor) plus N Celery workers, supervised together.

- The broker is Redis (ALTERFLOW_CELERY_BROKER, default `redis://127.0.0.1:6379/0`); Celery keeps
  its results in Airflow's metadata database, which must be PostgreSQL (SQLite takes one writer
  at a time, and Airflow refuses it with Celery).
- Each Airflow home gets a queue of its own (`alterflow-<hash of the home>`), so two Airflows on one
  Redis (a developer's and the live test's) never run each other's tasks.
- `run` starts the api-server, scheduler, dag-processor, triggerer and the workers, each in a
  session of its own with its output in `<home>/logs/fleet/<name>.log`, and prints one line per
  process (its pid: a test or an operator can kill one). A process that ends is started again, as
  a service manager does (a worker's tasks are retried by Airflow meanwhile, on the other
  workers), unless it is failing: it exited by itself within 30 s of its start, or was started
  again 5 times within 2 minutes; then the fleet stops with the end of its log. Ctrl-C,
  SIGTERM or SIGHUP stops them all (SIGTERM, then SIGKILL after 30 s).

Like airflow_env.py it never imports Airflow.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import signal
import socket
import subprocess
import time
import urllib.parse

DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
# Celery settings merged into Airflow's: each worker imports alterflow once at its start, before it
# forks its pool (alterflow/airflow/worker_imports.py).
WORKER_IMPORTS = '{"imports": ["alterflow.airflow.worker_imports"]}'
STOP_GRACE_S = 30
RESTART_AFTER_S = 30  # a process that exits by itself sooner than this after its start is failing
START_LIMIT = 5  # restarts of one process within START_LIMIT_WINDOW_S, past which it is failing (systemd's StartLimitBurst)
START_LIMIT_WINDOW_S = 120


class FleetError(Exception):
    """One line: why the Celery variant cannot start."""


WORKER_SLOTS = 4  # Celery's worker_concurrency unless the environment sets it
LONG_POOL = "alterflow_long_steps"  # ALTERFLOW_AIRFLOW_LONG_POOL unless the environment sets it
SCHEDULER_IDLE_SLEEP_S = "0.25"  # [scheduler] scheduler_idle_sleep_time unless the environment sets it
MIN_HEARTBEAT_INTERVAL_S = "1"  # [workers] min_heartbeat_interval unless the environment sets it


def queue_name(home: pathlib.Path) -> str:
    digest = hashlib.sha256(str(pathlib.Path(home).absolute()).encode()).hexdigest()[:12]
    return f"alterflow-{digest}"


def broker_url(base_env: dict[str, str]) -> str:
    """ALTERFLOW_CELERY_BROKER (or the default), once it answers; FleetError, one line, otherwise."""
    broker = base_env.get("ALTERFLOW_CELERY_BROKER") or DEFAULT_BROKER
    _check_broker(broker)
    return broker


def celery_environment(env: dict[str, str], broker: str, workers: int, own_parallelism: bool = False) -> dict[str, str]:
    """`env` (airflow_env's) switched to the CeleryExecutor on `broker` (`broker_url`'s), for
    `workers` workers: Airflow's parallelism is their slots in all unless the user set it
    (`own_parallelism`). Refuses, as FleetError, a metadata database that is not PostgreSQL."""
    metadata = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    if not metadata.startswith("postgresql"):
        raise FleetError(
            "the Celery executor needs Airflow's metadata in PostgreSQL, not SQLite: start PostgreSQL "
            "(at ALTERFLOW_AIRFLOW_PG, postgres@127.0.0.1:5432 by default) or set ALTERFLOW_AIRFLOW_DB_URL"
        )
    celery = dict(env)
    celery.update(
        {
            "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
            "AIRFLOW__CELERY__BROKER_URL": broker,
            "AIRFLOW__CELERY__RESULT_BACKEND": "db+" + metadata,
            "AIRFLOW__OPERATORS__DEFAULT_QUEUE": queue_name(pathlib.Path(env["AIRFLOW_HOME"])),
        }
    )
    # Four task slots per worker: most of a schema change's tasks are short and wait on the catalog,
    # so that a light ALTER finds a slot while conversions hold some (docs/deploy.md#priorities-and-worker-start-up).
    celery.setdefault("AIRFLOW__CELERY__WORKER_CONCURRENCY", str(WORKER_SLOTS))
    slots = celery["AIRFLOW__CELERY__WORKER_CONCURRENCY"].strip()
    if not own_parallelism and slots.isdigit() and int(slots) > 0:
        # The scheduler hands out no more than the workers take: a task handed over to a busy fleet
        # waits in the broker first in, first out, or in a busy worker's prefetch, where no priority
        # weight reorders it (twice the slots held the team load's slowest light ALTER 19 s, not 12).
        celery["AIRFLOW__CORE__PARALLELISM"] = str(workers * int(slots))
    # Each worker imports alterflow once, before it forks its pool: a task process finds it imported.
    celery.setdefault("AIRFLOW__CELERY__EXTRA_CELERY_CONFIG", WORKER_IMPORTS)
    # The long steps take their slots from a pool of their own (`run` makes it), half the workers'
    # slots kept for short ones: a light ALTER does not wait for a conversion to end.
    celery.setdefault("ALTERFLOW_AIRFLOW_LONG_POOL", LONG_POOL)
    # A scheduler loop that handed out nothing sleeps a quarter second, not Airflow's second: each
    # of a run's hand-offs waits for the next loop (a light ALTER idle 0.7 s instead of 1.8).
    celery.setdefault("AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME", SCHEDULER_IDLE_SLEEP_S)
    # A task's slot comes back within a second of its end, not five: the task's supervisor often
    # sees its process's last socket close before the process has exited, and then sleeps until its
    # next heartbeat check, every `min_heartbeat_interval` (Airflow's default 5 s), holding the Celery
    # slot and the executor's (under the team load the median Celery task took 5.5 s; 1.9 s at 1).
    celery.setdefault("AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL", MIN_HEARTBEAT_INTERVAL_S)
    return celery


def long_pool_slots(worker_slots: int) -> int:
    """The long steps' pool's slots: the workers' slots in all less half (rounded down) kept for
    short steps. Conversions are bound by the CPU: more of them at once than cores finish no sooner
    (under the team load half the slots converted faster than three quarters: heavy p50 72 s, not 84)."""
    return max(1, worker_slots - worker_slots // 2)


def make_long_pool(airflow: str, env: dict[str, str], workers: int, log) -> int:
    """`airflow pools set` for ALTERFLOW_AIRFLOW_LONG_POOL (if named) with `long_pool_slots` of the
    workers' slots; the command's exit status (0 when there is no pool to make)."""
    pool = env.get("ALTERFLOW_AIRFLOW_LONG_POOL", "").strip()
    per_worker = env.get("AIRFLOW__CELERY__WORKER_CONCURRENCY", "").strip()
    if not pool or not per_worker.isdigit() or int(per_worker) < 1:
        return 0
    worker_slots = workers * int(per_worker)
    slots = long_pool_slots(worker_slots)
    purpose = f"alterflow's long steps: {slots} of the workers' {worker_slots} slots, the rest kept for short steps"
    return subprocess.run([airflow, "pools", "set", pool, str(slots), purpose], env=env, stdout=log, stderr=subprocess.STDOUT).returncode


def _check_broker(broker: str) -> None:
    parts = urllib.parse.urlsplit(broker)
    try:
        host, port = parts.hostname or "127.0.0.1", parts.port or 6379
    except ValueError:  # a port that is no number, or out of range
        host = port = None
    if parts.scheme not in ("redis", "rediss") or port is None:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()  # never its password
        raise FleetError(f"ALTERFLOW_CELERY_BROKER must be a redis://host:port/db URL, not {shown!r}")
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError as exc:
        shown = urllib.parse.urlunsplit(parts._replace(netloc=f"{host}:{port}"))
        raise FleetError(
            f"the Celery broker {shown} does not answer ({exc.strerror or exc}): start Redis or set ALTERFLOW_CELERY_BROKER"
        ) from None


def commands(airflow: str, env: dict[str, str], workers: int) -> dict[str, list[str]]:
    """name -> the command line of each process of the fleet."""
    queue = env["AIRFLOW__OPERATORS__DEFAULT_QUEUE"]
    fleet = {name: [airflow, name] for name in ("api-server", "scheduler", "dag-processor", "triggerer")}
    for number in range(1, workers + 1):
        fleet[f"worker{number}"] = [airflow, "celery", "worker", "--celery-hostname", f"worker{number}@%h", "--queues", queue]
    return fleet


def run(airflow: str, env: dict[str, str], workers: int) -> int:
    """Migrate the metadata database, start the fleet and supervise it until a signal or a process's
    own exit; the exit status (130/143 after Ctrl-C/SIGTERM, 1 when a process is failing: `failing`)."""
    logs = pathlib.Path(env["AIRFLOW_HOME"]) / "logs" / "fleet"
    logs.mkdir(parents=True, exist_ok=True)
    migrate_log = logs / "db-migrate.log"
    with open(migrate_log, "ab") as log:
        migrated = subprocess.run([airflow, "db", "migrate"], env=env, stdout=log, stderr=subprocess.STDOUT)
        pooled = make_long_pool(airflow, env, workers, log) if migrated.returncode == 0 else 0
    if migrated.returncode != 0 or pooled != 0:
        step = "db migrate" if migrated.returncode != 0 else "pools set"
        print(f"error: airflow {step} failed ({migrated.returncode or pooled}); its output: {migrate_log}", flush=True)
        return 1
    stopping: list[int] = []

    def stop(signum, _frame) -> None:
        stopping.append(signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # SIGHUP: the terminal closed
        signal.signal(signum, stop)
    fleet = commands(airflow, env, workers)
    running: dict[str, subprocess.Popen] = {}
    try:
        for name, command in fleet.items():
            running[name] = _start_one(name, command, env, logs)
        return _supervise(running, fleet, env, logs, stopping)
    finally:
        _stop(running)


def failing(returncode: int, ran_s: float, recent_restarts: list[float]) -> bool:
    """Whether a process that ended with `returncode` after `ran_s` seconds is failing rather than
    stopped: it exited by itself within RESTART_AFTER_S of its start (a setting it cannot start
    with), or it was started again START_LIMIT times within START_LIMIT_WINDOW_S already. One that
    a signal ended (returncode < 0: SIGKILL with its machine, the OOM killer) was stopped from
    outside, however soon."""
    if len(recent_restarts) >= START_LIMIT:
        return True
    return returncode >= 0 and ran_s < RESTART_AFTER_S


def _start_one(name: str, command: list[str], env: dict[str, str], logs: pathlib.Path) -> subprocess.Popen:
    with open(logs / f"{name}.log", "ab") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    print(f"  started {name}: pid {process.pid}, log {logs / f'{name}.log'}", flush=True)
    return process


def _supervise(
    running: dict[str, subprocess.Popen], fleet: dict[str, list[str]], env: dict[str, str], logs: pathlib.Path, stopping: list[int]
) -> int:
    """Until a signal, as a service manager does (systemd's Restart=always, a Deployment's pods): a
    process that ends is started again (a worker killed with its machine, a scheduler restarted),
    unless it is failing (`failing`): then the fleet stops with the end of its log."""
    started = {name: time.monotonic() for name in running}
    restarts: dict[str, list[float]] = {name: [] for name in running}
    while not stopping:
        for name, process in list(running.items()):
            if process.poll() is None:
                continue
            now = time.monotonic()
            if failing(process.returncode, now - started[name], [t for t in restarts[name] if now - t < START_LIMIT_WINDOW_S]):
                tail = (logs / f"{name}.log").read_text(errors="replace").splitlines()[-15:]
                print(f"error: {name} exited with status {process.returncode}; the end of its log:", flush=True)
                print("\n".join(f"    {line}" for line in tail), flush=True)
                return 1
            print(f"  {name} exited with status {process.returncode}; starting it again", flush=True)
            _signal_session(process, signal.SIGKILL)  # what it left behind (a pool process, a task, a JVM)
            running[name], started[name] = _start_one(name, fleet[name], env, logs), time.monotonic()
            restarts[name].append(started[name])
        time.sleep(0.5)
    print(f"{signal.Signals(stopping[0]).name}: stopping the fleet", flush=True)
    return 128 + stopping[0]


def _stop(running: dict[str, subprocess.Popen]) -> None:
    """SIGTERM to each process's session (a worker's pool and its tasks with it), SIGKILL to what
    is left after STOP_GRACE_S."""
    for process in running.values():
        _signal_session(process, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for process in running.values():
        with contextlib.suppress(subprocess.TimeoutExpired):  # still running: the SIGKILL below ends it
            process.wait(max(0.1, deadline - time.monotonic()))
    for process in running.values():
        _signal_session(process, signal.SIGKILL)
        process.wait()


def _signal_session(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        return
