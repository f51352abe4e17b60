"""docker-compose.yaml started for real on a machine with no registry: Docker from Debian, a
Compose v2 binary, a debootstrap base image, then the project's own build of both images.

Every step reuses what an earlier run left on the machine: the Docker packages, the Compose
binary (cached under ~/.cache/alterflow), the base image (by tag) and Docker's layer cache, so the
images are rebuilt only from the first layer whose input changed (the lock's layer only when
requirements.lock or deploy/Dockerfile changed). See docs/deploy.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence

REPO = pathlib.Path(__file__).resolve().parents[2]
BASE_IMAGE = "alterflow-base:bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
# Compose v2 is not packaged for bookworm; trixie's package is one static binary that needs only
# libc 2.34 (bookworm has 2.36). Taken from the Debian pool, checked against this digest.
COMPOSE_DEB = "pool/main/d/docker-compose/docker-compose_2.26.1-4_amd64.deb"
COMPOSE_DEB_SHA256 = "47681197cb2b1ab88206b42a1a92fc75f50d9530a6322d03494a473eed0408ea"
COMPOSE_IN_DEB = "usr/libexec/docker/cli-plugins/docker-compose"
CACHE = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") / "alterflow"


class DockerUnavailable(RuntimeError):
    """This machine cannot run the stack (no root to install or start Docker, not amd64)."""


def _root_command(argv: Sequence[str]) -> list[str]:
    if os.geteuid() == 0:
        return list(argv)
    if shutil.which("sudo"):
        return ["sudo", "-n", *argv]
    raise DockerUnavailable(f"`{' '.join(argv)}` needs root, and there is no sudo")


def _run(argv: Sequence[str], *, timeout: float, env: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), timeout=timeout, env=env, check=True, **kwargs)


def ensure_docker_installed() -> None:
    """Debian's docker.io (dockerd, containerd, runc) when there is no dockerd yet."""
    if shutil.which("dockerd") and shutil.which("docker"):
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    _run(_root_command(["apt-get", "update", "-qq"]), timeout=600, env=env, stdout=subprocess.DEVNULL)
    _run(
        _root_command(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "docker.io", "debootstrap"]),
        timeout=1200,
        env=env,
        stdout=subprocess.DEVNULL,
    )


def compose_command() -> list[str]:
    """`docker compose` when the Docker CLI has the v2 plugin, otherwise trixie's binary, cached."""
    if override := os.environ.get("ALTERFLOW_COMPOSE"):
        return override.split()
    probe = subprocess.run(["docker", "compose", "version", "--short"], capture_output=True, text=True, timeout=60)
    if probe.returncode == 0 and probe.stdout.strip().lstrip("v").startswith("2."):
        return ["docker", "compose"]
    binary = CACHE / f"docker-compose-{pathlib.Path(COMPOSE_DEB).stem.split('_')[1]}"
    if binary.exists():
        return [str(binary)]
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    if arch != "amd64":
        raise DockerUnavailable(f"no Compose v2 for {arch} here: set ALTERFLOW_COMPOSE to a Compose v2 command")
    with tempfile.TemporaryDirectory() as scratch:
        deb = pathlib.Path(scratch) / "compose.deb"
        with urllib.request.urlopen(f"{DEBIAN_MIRROR}/{COMPOSE_DEB}", timeout=300) as response:
            deb.write_bytes(response.read())
        digest = hashlib.sha256(deb.read_bytes()).hexdigest()
        if digest != COMPOSE_DEB_SHA256:
            raise RuntimeError(f"{COMPOSE_DEB}: sha256 {digest}, expected {COMPOSE_DEB_SHA256}")
        _run(["dpkg-deb", "-x", str(deb), str(pathlib.Path(scratch) / "root")], timeout=120)
        binary.parent.mkdir(parents=True, exist_ok=True)
        partial = binary.with_suffix(".partial")
        shutil.copy2(pathlib.Path(scratch) / "root" / COMPOSE_IN_DEB, partial)
        partial.replace(binary)
    return [str(binary)]


def _daemon_answers() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except subprocess.TimeoutExpired:
        return False


@contextlib.contextmanager
def docker_daemon(log_path: pathlib.Path) -> Iterator[None]:
    """The running dockerd, or one started here (default flags) and stopped on leaving."""
    if _daemon_answers():
        yield
        return
    with open(log_path, "ab") as log:
        daemon = subprocess.Popen(_root_command(["dockerd"]), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not _daemon_answers():
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dockerd did not start (exit {daemon.poll()}); its log: {log_path}")
            time.sleep(0.5)
        yield
    finally:
        if daemon.poll() is None:
            os.killpg(daemon.pid, signal.SIGTERM)
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait(timeout=30)


def _image_exists(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True, timeout=60).returncode == 0


def ensure_base_image(tag: str = BASE_IMAGE) -> str:
    """bookworm from debootstrap (minbase), imported as `tag`; kept between runs."""
    if _image_exists(tag):
        return tag
    if not shutil.which("debootstrap"):
        _run(_root_command(["apt-get", "install", "-y", "-qq", "debootstrap"]), timeout=600, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="alterflow-rootfs-") as scratch:
        rootfs = pathlib.Path(scratch) / "rootfs"
        _run(_root_command(["debootstrap", "--variant=minbase", "bookworm", str(rootfs), DEBIAN_MIRROR]), timeout=1200, capture_output=True)
        tar = subprocess.Popen(_root_command(["tar", "-C", str(rootfs), "-c", "."]), stdout=subprocess.PIPE)
        _run(["docker", "import", "-", tag], timeout=600, stdin=tar.stdout, capture_output=True)
        tar.stdout.close()
        if tar.wait(timeout=60) != 0:
            raise RuntimeError(f"tar of {rootfs} failed")
        _run(_root_command(["rm", "-rf", str(rootfs)]), timeout=300)
    return tag


def host_extra_ca_certs() -> str:
    """The CAs this host adds to Debian's trust store (an HTTPS proxy's), as PEM text."""
    folder = pathlib.Path("/usr/local/share/ca-certificates")
    return "\n".join(p.read_text() for p in sorted(folder.rglob("*.crt"))) if folder.is_dir() else ""


class ComposeStack:
    """One compose project of docker-compose.yaml, with its own published ports."""

    def __init__(self, compose: list[str], project: str, env: dict[str, str], files: Sequence[str] = ("docker-compose.yaml",)):
        self.files = tuple(files)
        self.base = [*compose, "--project-directory", str(REPO), *(a for f in files for a in ("-f", str(REPO / f))), "-p", project]
        self.env = {**os.environ, **env}
        self.cli_dependencies_started = False

    def compose(self, *args: str, timeout: float = 900, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([*self.base, *args], env=self.env, capture_output=True, text=True, timeout=timeout, cwd=REPO)
        if check and result.returncode != 0:
            raise AssertionError(
                f"`compose {' '.join(args)}` exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    def run_cli(
        self, *args: str, volumes: Sequence[str] = (), env: dict[str, str] | None = None, timeout: float = 900, check: bool = True
    ) -> subprocess.CompletedProcess:
        """`docker compose run --rm cli <args>`. The first run starts the cli's dependencies as a
        user's does; later runs add `--no-deps` (the stack is up): with its dependencies, every run
        starts airflow-init again (the exited one-shot service airflow-apiserver depends on:
        `airflow db migrate` and the rest, about 17 s a run), which the first run already covers."""
        mounts = [item for volume in volumes for item in ("-v", volume)]
        mounts += [item for name, value in (env or {}).items() for item in ("-e", f"{name}={value}")]
        no_deps = ["--no-deps"] if self.cli_dependencies_started else []
        result = self.compose("run", "--rm", *no_deps, *mounts, "cli", *args, timeout=timeout, check=check)
        self.cli_dependencies_started = True
        return result

    def cli(self, *args: str, volumes: Sequence[str] = (), env: dict[str, str] | None = None, timeout: float = 900) -> str:
        """`docker compose run --rm cli <args>`: its standard output (failure: the whole exchange)."""
        return self.run_cli(*args, volumes=volumes, env=env, timeout=timeout).stdout

    def logs(self, tail: int = 40) -> str:
        return self.compose("logs", "--no-color", "--tail", str(tail), check=False, timeout=120).stdout


PASSWORDS_FILE = "/opt/airflow/config/simple_auth_manager_passwords.json"


@contextlib.contextmanager
def started_stack(scratch: pathlib.Path, files: Sequence[str] = ("docker-compose.yaml",), workers: int = 1) -> Iterator[ComposeStack]:
    """The compose project of `files` built and up (`up --wait --scale worker=N`) on free ports, as a user starts it;
    PostgreSQL's passwords given from the environment, Airflow's keys and the admin's password
    left to airflow-init; `down -v` on leaving (the services' last log lines printed on a failure).
    Skips (fails under CI) where Docker cannot be had."""
    import json
    import uuid

    import pytest

    from tests.support.ports import free_port

    try:
        ensure_docker_installed()
        compose = compose_command()
    except DockerUnavailable as reason:
        if os.environ.get("CI"):
            pytest.fail(str(reason))
        pytest.skip(str(reason))
    with docker_daemon(scratch / "dockerd.log"):
        env = {
            "ALTERFLOW_BASE_IMAGE": ensure_base_image(),
            "ALTERFLOW_EXTRA_CA_CERTS": host_extra_ca_certs(),
            "ALTERFLOW_HTTP_PORT": str(free_port()),
            "ALTERFLOW_SPARK_UI_PORT": str(free_port()),
            # PostgreSQL's passwords from the environment; Airflow's secrets are left to be generated.
            "ALTERFLOW_POSTGRES_PASSWORD": f"pg-{uuid.uuid4().hex[:12]}",
            "ALTERFLOW_CATALOG_PASSWORD": f"cat-{uuid.uuid4().hex[:12]}",
        }
        for variable in (
            "ALTERFLOW_AIRFLOW_PASSWORD",
            "ALTERFLOW_FERNET_KEY",
            "ALTERFLOW_JWT_SECRET",
            "ALTERFLOW_API_SECRET_KEY",
            "ALTERFLOW_S3_BUCKET",
        ):
            env[variable] = ""  # not the caller's: the defaults are under test
        stack = ComposeStack(compose, f"alterflowtest{os.getpid()}{len(files)}", env, files)
        stack.compose("build", timeout=1800)
        subprocess.run(["docker", "image", "prune", "--force"], capture_output=True, timeout=300)  # the replaced builds
        try:
            stack.compose("up", "--detach", "--wait", "--wait-timeout", "600", "--scale", f"worker={workers}", timeout=900)
            stack.http = f"http://127.0.0.1:{env['ALTERFLOW_HTTP_PORT']}"
            stack.spark_ui = f"http://127.0.0.1:{env['ALTERFLOW_SPARK_UI_PORT']}"
            stack.password = json.loads(stack.compose("exec", "-T", "airflow-apiserver", "cat", PASSWORDS_FILE).stdout)["admin"]
            stack.data = scratch / "data"
            stack.data.mkdir()
            yield stack
        except BaseException:
            print(stack.logs())
            raise
        finally:
            stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "30", check=False, timeout=600)
