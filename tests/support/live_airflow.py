"""A real Airflow for the live end-to-end test: `deploy/airflow_env.py standalone` (exactly what
`make airflow` runs: scheduler, dag-processor, triggerer and api-server as processes, LocalExecutor)
in a throwaway Airflow home and alterflow home, on a free port.

`stop()` ends every process of the run by id (SIGTERM, then SIGKILL): those below the standalone
process, and those carrying the run's marker in their environment (task and spark-submit
processes that may have lost their parent).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import uuid

import httpx

from alterflow.airflow_client import READ_TIMEOUT_S, send_repeating
from tests.support import REPO
from tests.support.ports import free_port

BIN = pathlib.Path(sys.executable).parent
ENV_SCRIPT = REPO / "deploy" / "airflow_env.py"
MARKER = "ALTERFLOW_E2E_RUN"


def dags_folder(folder: pathlib.Path, also: tuple[pathlib.Path, ...] = (), written: dict[str, str] | None = None) -> pathlib.Path:
    """A new DAG folder `folder` for a LiveAirflow: copies of the repository's DAG files, of the
    files `also`, and the files `written` (name -> text)."""
    import shutil

    folder.mkdir()
    for source in [*sorted((REPO / "dags").glob("*.py")), *also]:
        shutil.copy(source, folder / source.name)
    for name, text in (written or {}).items():
        (folder / name).write_text(text)
    return folder


def _marked_pids(marker: str) -> list[int]:
    """Ids of the live processes whose environment holds MARKER=marker (only ours can)."""
    needle = f"{MARKER}={marker}".encode()
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                pids.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return pids


def _descendants(root: int) -> set[int]:
    """`root` and every live process below it (by parent id). Taken before any signal: Airflow's
    api-server starts its own session and renames itself (which also hides its environment), so
    only the parent links find it while its parent is still alive."""
    children: dict[int, list[int]] = {}
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _signal_all(pids, sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


class LiveAirflow:
    """`base_path` (e.g. "/af") serves Airflow under that path, as behind a reverse proxy:
    `[api] base_url` is set to it and `url` includes it."""

    def __init__(
        self,
        base: pathlib.Path,
        base_path: str = "",
        dags_folder: pathlib.Path | None = None,
        connections: dict[str, dict] | None = None,
        executor: str = "local",
        workers: int = 2,
        extra_env: dict[str, str] | None = None,
    ):
        self.base = base
        self.executor = executor  # "celery": deploy/celery_fleet.py's processes and `workers` Celery workers
        self.workers = workers
        self.extra_env = extra_env or {}  # for every process, the CLI's included (ALTERFLOW_CATALOG_URL, AIRFLOW__...)
        self.dags_folder = dags_folder  # None: the repository's dags/
        self.connections = connections or {}  # Airflow connections every component sees (AIRFLOW_CONN_<ID>)
        self.port = free_port()
        self.base_path = base_path
        self.url = f"http://127.0.0.1:{self.port}{base_path}"
        self.airflow_home = base / "airflow"
        self.alterflow_home = base / "alterflow"
        self.log_path = base / "standalone.log"
        self.marker = uuid.uuid4().hex
        self.process: subprocess.Popen | None = None
        self.password = "admin"

    def cli_env(self) -> dict[str, str]:
        """The CLI's environment: the same alterflow home (hence catalog and warehouse) as Airflow."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
        env["ALTERFLOW_HOME"] = str(self.alterflow_home)
        env["ALTERFLOW_SPARK_MASTER"] = "local[2]"
        env["PYSPARK_PYTHON"] = sys.executable
        env[MARKER] = self.marker
        env.update(self.extra_env)
        return env

    def start(self) -> None:
        env = self.cli_env()
        env["ALTERFLOW_AIRFLOW_PASSWORD"] = self.password
        # The log servers of the scheduler and the triggerer on free ports too, so that the test
        # runs next to a developer's `make airflow` (8793, 8794).
        env["AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT"] = str(free_port())
        env["AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT"] = str(free_port())
        if self.base_path:
            env["AIRFLOW__API__BASE_URL"] = f"{self.url}/"
        if self.dags_folder is not None:
            env["ALTERFLOW_AIRFLOW_DAGS_FOLDER"] = str(self.dags_folder)
        for conn_id, conn in self.connections.items():
            env[f"AIRFLOW_CONN_{conn_id.upper()}"] = json.dumps(conn)
        command = [sys.executable, str(ENV_SCRIPT), "--home", str(self.airflow_home), "--port", str(self.port)]
        command += ["--executor", self.executor, "--workers", str(self.workers), "standalone"]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, cwd=self.base, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def log_tail(self, lines: int = 150) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def task_logs(self, run_id: str | None = None, limit_chars: int = 6000) -> str:
        """The task log files of the run (all runs when None), last lines of each."""
        parts = []
        for path in sorted((self.airflow_home / "logs").rglob("*.log")):
            if run_id is not None and f"run_id={run_id}" not in str(path):
                continue
            text = path.read_text(errors="replace")
            parts.append(f"--- {path.relative_to(self.airflow_home)}\n{text[-limit_chars:]}")
        return "\n".join(parts) or "(no task logs)"

    def slowest_requests(self, count: int = 6) -> str:
        """The api-server's slowest answers so far (its access log: duration, method, path, when)
        and how often a process logged "database is locked": what to look at when a call timed out."""
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log)"
        found = []
        for line in text.splitlines():
            if "request finished" not in line or "duration_us=" not in line:
                continue
            fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
            when = line.split()[2] if line.startswith("api-server") else ""
            found.append((int(fields.get("duration_us", "0")), f"{fields.get('method')} {fields.get('path')} at {when}"))
        found.sort(reverse=True)
        slow = "; ".join(f"{us / 1e6:.1f} s {what}" for us, what in found[:count])
        return f"slowest api-server answers: {slow or 'none logged'}; 'database is locked' logged {text.count('database is locked')} times"

    def task_problems(self, run_id: str) -> str:
        """The warning and error lines of the run's task logs (Airflow writes one JSON object per
        line): short enough for an assertion message, which pytest cuts after a few lines."""
        parts = []
        for path in sorted((self.airflow_home / "logs").rglob("*.log")):
            if f"run_id={run_id}" not in str(path):
                continue
            lines = [
                line
                for line in path.read_text(errors="replace").splitlines()
                if '"level":"info"' not in line and '"level":"debug"' not in line
            ]
            if lines:
                parts.append(f"--- {path.relative_to(self.airflow_home)}\n" + "\n".join(lines)[-3000:])
        return "\n".join(parts) or "(no warnings or errors in the task logs)"

    def fleet_pids(self) -> dict[str, int]:
        """With the Celery executor: each process the fleet started (api-server, scheduler, ...,
        worker1, worker2), by name, as its supervisor printed them."""
        found = re.findall(r"^  started (\S+): pid (\d+),", self.log_path.read_text(errors="replace"), re.M)
        return {name: int(pid) for name, pid in found}

    def fleet_logs(self, lines: int = 60) -> str:
        """The end of each fleet process's log (deploy/celery_fleet.py writes one per process)."""
        folder = self.airflow_home / "logs" / "fleet"
        parts = []
        for log in sorted(folder.glob("*.log")) if folder.exists() else []:
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"=== {log.name}\n" + "\n".join(tail))
        return "\n".join(parts)

    def diagnostics(self) -> str:
        fleet = f"\n{self.fleet_logs()}" if self.executor == "celery" else ""
        return f"=== standalone output (last lines), {self.log_path}\n{self.log_tail()}{fleet}\n=== task logs\n{self.task_logs()}"

    def check_running(self) -> None:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"airflow standalone exited with {self.process.returncode}:\n{self.log_tail()}")

    def wait_healthy(self, timeout: float = 240) -> dict:
        """Until /api/v2/monitor/health reports the metadatabase, scheduler, triggerer and
        dag-processor healthy."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            self.check_running()
            try:
                answer = httpx.get(f"{self.url}/api/v2/monitor/health", timeout=5)
                last = answer.text
                if answer.status_code == 200:
                    health = answer.json()
                    parts = ("metadatabase", "scheduler", "triggerer", "dag_processor")
                    if all((health.get(p) or {}).get("status") == "healthy" for p in parts):
                        return health
            except httpx.HTTPError as exc:
                last = repr(exc)
            time.sleep(1)
        raise AssertionError(f"Airflow not healthy after {timeout} s (last answer: {last})")

    def call(self, method: str, path: str, **kwargs) -> httpx.Response:
        """`method` on `path` below the live Airflow's URL, as the CLI's client calls it: an answer
        may take up to its read timeout (the SQLite metadata database waits up to 60 s for its lock
        on a loaded machine), and a server error or no answer in time is repeated after each of
        its delays. The last answer is returned; the last timeout is raised."""
        return send_repeating(lambda: httpx.request(method, f"{self.url}{path}", timeout=READ_TIMEOUT_S, **kwargs))[0]

    def token(self, username: str = "admin", password: str | None = None) -> str:
        answer = self.call("POST", "/auth/token", json={"username": username, "password": password or self.password})
        assert answer.status_code == 201, f"POST /auth/token: {answer.status_code} {answer.text}"
        return answer.json()["access_token"]

    def stop(self) -> None:
        """SIGTERM to every process of this run (the standalone process, everything below it, and
        whatever carries the run's marker), SIGKILL to what is left after 20 s."""
        if self.process is None:
            return
        pids = set(_marked_pids(self.marker))
        if self.process.poll() is None:
            pids |= _descendants(self.process.pid)
        _signal_all(pids, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            self.process.poll()
            pids |= set(_marked_pids(self.marker))
            if not any(_alive(pid) for pid in pids - {self.process.pid}) and self.process.returncode is not None:
                break
            time.sleep(0.5)
        _signal_all([pid for pid in pids | set(_marked_pids(self.marker)) if _alive(pid)], signal.SIGKILL)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        drop_metadata_database(self.airflow_home)


def drop_metadata_database(home: pathlib.Path) -> None:
    """The PostgreSQL database `deploy/airflow_env.py` made for Airflow home `home`'s metadata, if
    it made one (none when it used SQLite). On its default server: `LiveAirflow` starts it without
    the ALTERFLOW_* environment, so without ALTERFLOW_AIRFLOW_PG."""
    import psycopg

    module = airflow_env_module()
    try:
        with psycopg.connect(f"postgresql://{module.DEFAULT_PG}/postgres", connect_timeout=2, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{module.metadata_database_name(home)}" WITH (FORCE)')
    except psycopg.OperationalError:  # no server here: Airflow's metadata was in SQLite
        return


def airflow_env_module():
    """`deploy/airflow_env.py` as a module (it is a script, not a package's)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("airflow_env", ENV_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
