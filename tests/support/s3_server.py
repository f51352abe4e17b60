"""A real S3-protocol server for tests: moto's server (`moto_server`, from the `moto[server]`
package) on a free loopback port, the way s3fs's own tests run against it. It keeps its objects in
memory: each test makes its own bucket (`S3Server.bucket`) and empties it afterwards."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import uuid

from tests.support.ports import free_port

REPO = pathlib.Path(__file__).resolve().parents[2]


def _load_s3_demo():
    """deploy/s3_demo.py (a script, not a package): its server start and stop are the tests' too."""
    spec = importlib.util.spec_from_file_location("alterflow_deploy_s3_demo", REPO / "deploy" / "s3_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


s3_demo = _load_s3_demo()

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
        self.process = s3_demo.start_server(self.port, self.log, env={**os.environ, **CREDENTIALS})
        return self

    def stop(self) -> None:
        if self.process is not None:
            s3_demo.stop_server(self.process)  # the server and any process it started (its own session)
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
