"""`alterflow spark-archive`: the archive of Spark's classes is recorded by a real JVM (`make
install` records it), takes its name only whole, is mapped by the next Spark driver, and a
recording killed midway leaves only a partial file, which the next recording removes. Bad settings
are one line that writes nothing."""

from __future__ import annotations

import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import time

import pytest

from alterflow.settings import Settings
from alterflow.spark_class_archive import DYNAMIC_ARCHIVE_MAGIC, remove_stale_partials
from alterflow.spark_session import application_conf
from tests.support.cli_lines import ALTERFLOW
from tests.support.heavy_jobs import subprocess_env

SEED = 20261129
# A Spark driver that says how its JVM started: the options it got and what class-data sharing mapped.
STARTS_SPARK = """
from alterflow.settings import Settings
from alterflow.spark_session import get_spark
spark = get_spark(Settings.from_env())
print(spark.range(3).count())
print(list(spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()))
"""


def archive_env(tmp_path: pathlib.Path, archive: pathlib.Path | str) -> dict[str, str]:
    env = subprocess_env(tmp_path / "home")
    env["ALTERFLOW_SPARK_CLASS_ARCHIVE"] = str(archive)
    return env


def wait_for(path: pathlib.Path, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, f"the recording ended before {path.name} appeared: {proc.communicate()}"
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.005)


def test_a_recording_killed_while_the_jvm_writes_leaves_no_archive_and_its_leftover_goes_next_time(tmp_path):
    archive = tmp_path / "cache" / "spark-classes.jsa"
    env = archive_env(tmp_path, archive)
    # kill -9 of the whole recording (the command, its child and its JVM) while the JVM writes the
    # archive (its partial file has appeared), at a seeded moment within the first half second
    killed = subprocess.Popen(
        [str(ALTERFLOW), "spark-archive"], env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    partial = archive.with_name(f".{archive.name}.{killed.pid}.partial")
    wait_for(partial, killed)
    time.sleep(random.Random(SEED).uniform(0.0, 0.5))
    os.killpg(killed.pid, signal.SIGKILL)
    killed.communicate(timeout=60)
    assert not archive.exists() and partial.exists()  # a half-written archive never has the archive's name
    live = archive.with_name(f".{archive.name}.{os.getpid()}.partial")  # a recording under way elsewhere
    live.write_bytes(b"")
    # What the next recording does first (`alterflow spark-archive`, before its JVM starts): only
    # a dead recording's leftover goes. A whole recording, mapped, is the next test's.
    assert remove_stale_partials(archive) == [partial]
    assert not partial.exists() and live.exists() and not archive.exists()


def test_a_recorded_archive_is_whole_and_the_next_spark_driver_maps_it(tmp_path):
    """The archive `make install` recorded (recorded here, in tmp_path, when this machine has none)."""
    archive = Settings.from_env({"ALTERFLOW_HOME": str(tmp_path / "home")}).spark_class_archive
    if archive is None or not archive.exists():
        archive = tmp_path / "cache" / "spark-classes.jsa"
        done = subprocess.run(
            [str(ALTERFLOW), "spark-archive"], env=archive_env(tmp_path, archive), capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
        line = done.stdout.strip()
        assert line.startswith(f"wrote the archive of Spark's classes to {archive} (") and line.count("\n") == 0, line
    assert archive.read_bytes()[:4] == DYNAMIC_ARCHIVE_MAGIC and archive.stat().st_size > 50 * 2**20
    env = archive_env(tmp_path, archive)
    env["SPARK_SUBMIT_OPTS"] = f"-Xlog:cds=info:file={tmp_path / 'cds.log'}"
    started = subprocess.run([sys.executable, "-c", STARTS_SPARK], env=env, capture_output=True, text=True, timeout=300)
    assert started.returncode == 0, started.stderr
    assert f"-XX:SharedArchiveFile={archive}" in started.stdout
    cds = (tmp_path / "cds.log").read_text()
    assert f"Opened archive {archive}." in cds and "Mapped dynamic region" in cds, cds[-2000:]
    assert "Unable to use shared archive" not in (tmp_path / "home" / "logs" / "spark.log").read_text()


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("off", "error: ALTERFLOW_SPARK_CLASS_ARCHIVE is off: there is no archive to write"),
        ("{tmp}/a-file/x.jsa", "error: the folder of ALTERFLOW_SPARK_CLASS_ARCHIVE '{tmp}/a-file' cannot be a folder: it is a file"),
        ("{tmp}", "error: ALTERFLOW_SPARK_CLASS_ARCHIVE '{tmp}' is a folder, not a file"),
    ],
)
def test_a_bad_setting_is_one_line_and_writes_nothing(tmp_path, setting, says):
    (tmp_path / "a-file").write_text("x")
    before = sorted(tmp_path.rglob("*"))
    done = subprocess.run(
        [str(ALTERFLOW), "spark-archive"],
        env=archive_env(tmp_path, setting.format(tmp=tmp_path)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (1, "", says.format(tmp=tmp_path) + "\n")
    assert sorted(tmp_path.rglob("*")) == before


def test_the_setting_names_a_file_a_default_in_the_cache_or_none(tmp_path):
    home = {"ALTERFLOW_HOME": str(tmp_path)}
    default = Settings.from_env({**home, "XDG_CACHE_HOME": "/var/cache/u"}).spark_class_archive
    assert default.parent == pathlib.Path("/var/cache/u/alterflow") and re.fullmatch(r"spark-classes-[0-9a-f]{12}\.jsa", default.name)
    assert Settings.from_env({**home, "ALTERFLOW_SPARK_CLASS_ARCHIVE": "Off"}).spark_class_archive is None
    assert Settings.from_env({**home, "ALTERFLOW_SPARK_CLASS_ARCHIVE": "/x/a.jsa"}).spark_class_archive == pathlib.Path("/x/a.jsa")


def test_a_driver_maps_an_archive_only_where_it_exists(tmp_path):
    archive = tmp_path / "a.jsa"
    assert "SharedArchiveFile" not in application_conf(archive)["spark.driver.extraJavaOptions"]
    assert "SharedArchiveFile" not in application_conf(None)["spark.driver.extraJavaOptions"]
    archive.write_bytes(DYNAMIC_ARCHIVE_MAGIC)
    assert application_conf(archive)["spark.driver.extraJavaOptions"].endswith(f" -XX:SharedArchiveFile={archive}")
    assert remove_stale_partials(archive) == []
