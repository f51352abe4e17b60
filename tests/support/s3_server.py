"""A real S3-protocol server for tests: moto's server (`moto_server`, from the `moto[server]`
package) on a free loopback port, the way s3fs's own tests run against it. It keeps its objects in
memory: each test makes its own bucket (`S3Server.bucket`) and empties it afterwards."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time
import urllib.request
import uuid

from tests.support.ports import free_port

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "alterflow-tests", "AWS_SECRET_ACCESS_KEY": "alterflow-tests-secret", "AWS_REGION": "us-east-1"}


class S3Server:
    """One moto server process."""

    def __init__(self, log: pathlib.Path):
        self.port = free_port()
        self.log = log
        self.process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The AWS variables that point a process at this server."""
        return {**CREDENTIALS, "AWS_ENDPOINT_URL": self.endpoint}

    def start(self) -> S3Server:
        server = pathlib.Path(sys.executable).parent / "moto_server"
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [str(server), "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **CREDENTIALS},
                start_new_session=True,
            )
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1):
                    return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto_server did not start: see {self.log}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is None:
            return
        group = self.process.pid  # its own session: the server and any process it started
        try:
            os.killpg(group, signal.SIGTERM)
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
            self.process.wait()
        except ProcessLookupError:
            pass
        self.process = None

    def filesystem(self):
        from pyarrow import fs

        return fs.S3FileSystem(
            access_key=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            secret_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            region=CREDENTIALS["AWS_REGION"],
            endpoint_override=f"127.0.0.1:{self.port}",
            scheme="http",
            allow_bucket_creation=True,
            allow_bucket_deletion=True,
        )

    def bucket(self) -> str:
        """A new, empty bucket's name."""
        name = f"af-{uuid.uuid4().hex[:16]}"
        self.filesystem().create_dir(name)
        return name

    def drop(self, bucket: str) -> None:
        """Delete a bucket with everything in it (the server's memory is the test run's)."""
        filesystem = self.filesystem()
        filesystem.delete_dir_contents(bucket, missing_dir_ok=True)
        filesystem.delete_dir(bucket)
