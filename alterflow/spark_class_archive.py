"""`alterflow spark-archive`: the archive of Spark's classes that a driver's JVM maps at start-up.

A Spark driver's JVM spends most of its start-up loading and verifying Spark's classes; the JDK's
class-data sharing (a dynamic archive, `-XX:ArchiveClassesAtExit`) records them once and every
later JVM of the same JDK and class path maps them (`-XX:SharedArchiveFile`): a short Spark
command starts about twice as fast (docs/heavyweight.md#spark-start-up).

The archive is recorded by a Spark session of its own in a child process that runs a small
workload of what alterflow's drivers do (Arrow rows in, casts, an aggregate, Parquet written and
read by field id), under a name of its own (`.<name>.<pid>.partial`). Only a JVM that exited by
itself with status 0 has finished writing it; then it takes the archive's name in one rename, so
a driver never maps half an archive (the JVM would crash on one). A recording killed midway leaves
its partial file, which the next `write_class_archive` removes.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from alterflow.errors import UserError, escaped, first_line, shown
from alterflow.settings import SettingError, Settings, child_environment, usable_folder
from alterflow.store.tablets import flush_data

RECORD_TIMEOUT_S = 600
LOG_NAME = "spark-archive.log"  # the recording JVM's log, beside the archive
DYNAMIC_ARCHIVE_MAGIC = bytes.fromhex("a8ab0bf0")  # HotSpot's dynamic archive header, 0xf00baba8 little-endian
_PARTIAL = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.partial")


class ClassArchiveError(UserError):
    """The archive of Spark's classes could not be written."""


@dataclass(frozen=True)
class WrittenArchive:
    path: pathlib.Path
    size_bytes: int
    seconds: float

    @property
    def message(self) -> str:
        return (
            f"wrote the archive of Spark's classes to {escaped(str(self.path))} "
            f"({self.size_bytes / 2**20:.0f} MB in {self.seconds:.0f} s): Spark drivers started on this machine map it"
        )


def write_class_archive(settings: Settings) -> WrittenArchive:
    """Record the archive at `settings.spark_class_archive` (replacing one there); one line
    (`ClassArchiveError`, `SettingError`) and no archive changed when it cannot."""
    target = settings.spark_class_archive
    if target is None:
        raise ClassArchiveError("ALTERFLOW_SPARK_CLASS_ARCHIVE is off: there is no archive to write")
    usable_folder(target.parent, "the folder of ALTERFLOW_SPARK_CLASS_ARCHIVE")
    if target.is_dir():
        raise SettingError(f"ALTERFLOW_SPARK_CLASS_ARCHIVE {shown(str(target), 120)} is a folder, not a file")
    remove_stale_partials(target)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    log = target.with_name(LOG_NAME)
    began = time.monotonic()
    try:
        code, said = _record_in_a_child(partial, log)
        if code != 0 or not _is_an_archive(partial):
            reason = said or f"the recording exited with status {code}"
            raise ClassArchiveError(f"the archive of Spark's classes was not written: {reason} (its Spark log: {escaped(str(log))})")
        flush_data(partial)  # the JVM does not sync its dump: the name must never reach a file not yet on disk
        os.replace(partial, target)
        flush_data(target.parent)
    finally:
        partial.unlink(missing_ok=True)
    return WrittenArchive(target, target.stat().st_size, time.monotonic() - began)


def _is_an_archive(path: pathlib.Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(4) == DYNAMIC_ARCHIVE_MAGIC
    except OSError:
        return False


def _record_in_a_child(partial: pathlib.Path, log: pathlib.Path) -> tuple[int, str]:
    """The recording session runs in a process of its own (its JVM must be the first of the
    process, and must exit), in a process group of its own: a timeout or an interrupt here kills
    the child and its JVM at once, before the JVM could write the archive after this process
    stopped waiting. Returns the child's exit status and the last line it wrote on stderr."""
    with tempfile.TemporaryDirectory(prefix="alterflow-spark-archive-") as scratch:
        env = child_environment({})
        # No archive mapped while one is recorded; local mode, whatever the settings' master: the
        # driver's classes are what the archive holds.
        env.update(ALTERFLOW_HOME=scratch, ALTERFLOW_SPARK_CLASS_ARCHIVE="off", ALTERFLOW_SPARK_MASTER="local[2]")
        child = subprocess.Popen(
            [sys.executable, "-m", __name__, str(partial), str(log)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            _out, err = child.communicate(timeout=RECORD_TIMEOUT_S)
        except BaseException as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            if isinstance(exc, subprocess.TimeoutExpired):
                raise ClassArchiveError(f"the archive of Spark's classes was not written in {RECORD_TIMEOUT_S} s") from None
            raise
    lines = err.strip().splitlines()
    return child.returncode, first_line(lines[-1]) if lines else ""


def remove_stale_partials(target: pathlib.Path) -> list[pathlib.Path]:
    """Partial archives of `target` whose recording process is gone (killed midway): removed."""
    removed = []
    for path in target.parent.glob(f".{target.name}.*.partial"):
        match = _PARTIAL.fullmatch(path.name)
        if match and match["name"] == target.name and not _alive(int(match["pid"])):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def record_workload(spark) -> None:
    """What alterflow's drivers do, small: Arrow rows in, casts, an aggregate, Parquet written and
    read back by field id with a filter, rows back to Python through Arrow."""
    import pyarrow as pa

    rows = pa.table(
        {
            "id": pa.array(range(2000), pa.int64()),
            "text": pa.array([str(i) for i in range(2000)]),
            "amount": pa.array([f"{i}.25" for i in range(2000)]),
        }
    )
    frame = spark.createDataFrame(rows.to_pandas())
    cast = frame.selectExpr(
        "id",
        "CAST(text AS INT) AS number",
        "CAST(amount AS DECIMAL(12, 2)) AS amount",
        "CAST(id AS TIMESTAMP) AS at",
        "CAST(id % 7 AS STRING) AS bucket",
    )
    with tempfile.TemporaryDirectory(prefix="alterflow-spark-archive-") as folder:
        cast.write.parquet(f"{folder}/rows")
        read = spark.read.parquet(f"{folder}/rows").where("number > 10")
        read.groupBy("bucket").agg({"amount": "sum", "id": "count"}).collect()
        read.mapInArrow(lambda batches: batches, read.schema).toArrow()


def main(argv: list[str]) -> int:
    """The recording child: `python -m alterflow.spark_class_archive PARTIAL_PATH LOG_PATH`."""
    from alterflow.spark_session import record_class_archive

    code = record_class_archive(Settings.from_env(), pathlib.Path(argv[0]), record_workload, pathlib.Path(argv[1]))
    if code != 0:
        print(f"the recording JVM exited with status {code}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
