"""Run a command (`make demo`) with its warehouse in a fresh bucket of an S3-protocol server started
for the run: moto's server (`moto_server`, installed by `make install`) on a free loopback port.

    python deploy/s3_demo.py make demo

The command gets DEMO_WAREHOUSE=s3://<bucket> and the AWS variables that reach the server
(endpoint, region, the server's keys) in its environment; the server and its objects (kept in
memory) go when the command ends, whose exit code this one returns."""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid

KEYS = {"AWS_ACCESS_KEY_ID": "alterflow-demo", "AWS_SECRET_ACCESS_KEY": "alterflow-demo-secret", "AWS_REGION": "us-east-1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, log: pathlib.Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """moto's server on 127.0.0.1:`port` in its own session, its output appended to `log`, once it
    answers; RuntimeError (one line) when it is not installed or does not start within 30 s.
    tests/support/s3_server.py starts the tests' server with this too."""
    server = pathlib.Path(sys.executable).parent / "moto_server"
    if not server.exists():
        raise RuntimeError(f"{server} is missing: run `make install` (moto[server] comes with the dev extra)")
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [str(server), "-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=1):
                return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                stop_server(process)
                raise RuntimeError(f"moto_server did not start: see {log}") from None
            time.sleep(0.05)


def stop_server(process: subprocess.Popen) -> None:
    """SIGTERM to the server's process group (SIGKILL after 10 s); nothing if it has ended."""
    with contextlib.suppress(ProcessLookupError):  # it may have ended on its own
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def main(command: list[str]) -> int:
    if not command:
        sys.exit("usage: python deploy/s3_demo.py COMMAND [ARG...]  (e.g. make demo)")
    from pyarrow import fs

    port = free_port()
    log = pathlib.Path(".alterflow") / "moto_server.log"
    log.parent.mkdir(exist_ok=True)
    try:
        server = start_server(port, log)
    except RuntimeError as error:
        sys.exit(f"error: {error}")
    try:
        endpoint = f"http://127.0.0.1:{port}"
        bucket = f"alterflow-demo-{uuid.uuid4().hex[:8]}"
        store = fs.S3FileSystem(
            access_key=KEYS["AWS_ACCESS_KEY_ID"],
            secret_key=KEYS["AWS_SECRET_ACCESS_KEY"],
            region=KEYS["AWS_REGION"],
            endpoint_override=f"127.0.0.1:{port}",
            scheme="http",
            allow_bucket_creation=True,
        )
        store.create_dir(bucket)
        print(f"--- the warehouse is s3://{bucket} on moto's S3 server at {endpoint} (its log: {log})", flush=True)
        env = {**os.environ, **KEYS, "AWS_ENDPOINT_URL": endpoint, "DEMO_WAREHOUSE": f"s3://{bucket}"}
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION"):
            env.pop(name, None)
        return subprocess.run(command, env=env).returncode
    finally:
        stop_server(server)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
