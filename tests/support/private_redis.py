"""A Redis server of a test's own (Debian's redis-server, a free port, a temporary folder), for a
Celery broker the test restarts: the machine's Redis at 127.0.0.1:6379 is shared with everything
else running, and is never restarted by a test."""

from __future__ import annotations

import pathlib
import socket
import subprocess
import time

from tests.support.ports import lasting_free_port


class Redis:
    """A Redis of the test's own on a free port (the broker), which the test may restart: its queue
    is kept in an append-only file written at every change, as a broker that must not lose a task
    across a restart is configured."""

    def __init__(self, folder: pathlib.Path):
        self.folder = folder
        self.port = lasting_free_port()  # the same port after a restart
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.folder.mkdir(exist_ok=True)
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        command += ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
        with open(self.folder / "redis.log", "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise AssertionError(f"redis-server did not answer on port {self.port}: {(self.folder / 'redis.log').read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)

    def restart(self) -> None:
        self.stop()
        self.start()
