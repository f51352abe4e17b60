"""A PostgreSQL server of a test's own (Debian's binaries, initdb in a temporary folder, a free port,
trust auth), for a test that restarts its catalog's database in the middle of a job: the machine's
server at 127.0.0.1:5432 is shared with everything else running, and is never restarted by a test."""

from __future__ import annotations

import glob
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

from tests.support.ports import lasting_free_port

OWNER = "postgres"  # initdb refuses root; the server runs as Debian's postgres user


def postgres_bin() -> pathlib.Path | None:
    """The newest installed server's bin folder (/usr/lib/postgresql/<major>/bin), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return pathlib.Path(found[-1]).parent if found else None


class PrivatePostgres:
    """start() / restart(down_s) / stop(); `url` is a SQLAlchemy URL of its `postgres` database."""

    def __init__(self) -> None:
        bin_folder = postgres_bin()
        if bin_folder is None:
            raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql (Debian's postgresql package)")
        self.bin = bin_folder
        if os.geteuid() != 0:
            raise RuntimeError("a PostgreSQL server of a test's own is started as root (initdb runs as the postgres user)")
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="alterflow-pg-"))  # not under pytest's root-only tmp
        shutil.chown(self.folder, OWNER, OWNER)
        self.data = self.folder / "data"
        self.port = lasting_free_port()  # the same port after a restart
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        self._as_owner("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")

    def _as_owner(self, tool: str, *args: str) -> None:
        command = [str(self.bin / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", OWNER, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.folder / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{tool} {' '.join(args[:2])}: {done.returncode} {done.stderr[-2000:]}\n{tail}")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c max_connections=200"
        self._as_owner("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """fast: every connection ended, as `pg_ctlcluster ... restart` does; immediate: a crash."""
        self._as_owner("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, down_s: float = 3.0) -> None:
        """Stopped (every client's connection cut), `down_s` seconds refusing connections, started."""
        self.stop()
        time.sleep(down_s)
        self.start()

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)
