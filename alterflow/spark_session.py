"""The process's SparkSession, created on first use only (lightweight work never starts a JVM).

The embedded session's JVM writes nothing on the user's terminal: its stdout and stderr (the JVM's
own warnings, Spark's log at WARN and above, the output of its Python workers) are appended to
`logs/spark.log` under the alterflow home (`spark_log_path`). A query's own error still reaches the user as
the exception Spark raises in this process, which the session turns into one line.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import signal
import sys
import threading
from datetime import UTC, datetime

from alterflow.errors import MAX_LINE, UserError, capped, escaped, first_line
from alterflow.settings import Settings, started_by_spark_submit

LOG_CONFIG = pathlib.Path(__file__).with_name("log4j2.properties")
LOG_NAME = "spark.log"
LOG_ROTATE_BYTES = 32 * 1024 * 1024  # past this, a new session moves the log to spark.log.1 first
_lock = threading.Lock()
_session = None


class SparkStartError(UserError):
    """The embedded session's JVM did not start (no Java, a bad setting, ...)."""


def application_conf(class_archive: pathlib.Path | None = None) -> dict[str, str]:
    """The Spark settings alterflow relies on in every application it runs: the embedded session
    and each spark-submit of a conversion (`alterflow.rewrite.spark_submit`, the DAG's
    ConvertHistoryOperator). Columns match by field id (docs/semantics.md); times are UTC. A
    driver started on this machine maps `class_archive` when it exists (`class_archive_option`)."""
    java_options = f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}" + class_archive_option(class_archive)
    return {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.ansi.enabled": "false",
        "spark.sql.parquet.fieldId.write.enabled": "true",
        "spark.sql.parquet.fieldId.read.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": java_options,
    }


def class_archive_option(class_archive: pathlib.Path | None) -> str:
    """The JVM option that maps the archive of Spark's classes (`alterflow spark-archive` writes
    it; docs/heavyweight.md#spark-start-up), or nothing when there is none: a driver whose JVM maps it starts
    about twice as fast. The JVM checks the archive against its own build and class path and
    starts without it (a warning in its log) when they differ."""
    try:
        if class_archive is None or not class_archive.is_file():
            return ""
    except OSError:  # a cache folder this user cannot enter: start as without one
        return ""
    return f" -XX:SharedArchiveFile={class_archive}"


def session_conf(driver_memory: str, class_archive: pathlib.Path | None = None) -> dict[str, str]:
    """`application_conf` plus what the process's own embedded session adds: no UI, a few shuffle
    partitions (small queries), the driver's memory (`Settings.spark_driver_memory`), and Spark's
    log at WARN (it goes to `spark_log_path`, not the terminal)."""
    conf = application_conf(class_archive)
    return {
        **conf,
        "spark.driver.extraJavaOptions": conf["spark.driver.extraJavaOptions"] + " -Dalterflow.spark.log.level=warn",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.driver.memory": driver_memory,
    }


def spark_log_path(home: pathlib.Path) -> pathlib.Path:
    """Where the embedded session's JVM writes: `logs/spark.log` under the alterflow home."""
    return home / "logs" / LOG_NAME


def spark_started() -> bool:
    return _session is not None


def stop_spark() -> None:
    """Stop the process's SparkSession, if it started one (the next `get_spark` starts another)."""
    global _session
    with _lock:
        if _session is not None:
            _session.stop()
            _session = None


def get_spark(settings: Settings, log_path: pathlib.Path | None = None):
    """Return the process's SparkSession, starting it the first time on `settings`' Spark master
    with its driver memory. A JVM it starts writes to `log_path` (default: `spark_log_path` of the
    settings' home), as do PySpark's own loggers; one that failed to start is one line
    (`SparkStartError`) naming the log."""
    global _session
    with _lock:
        if _session is not None:
            return _session
        _python_workers_like_this_process()
        from pyspark import SparkContext

        master = settings.spark_master
        conf = session_conf(settings.spark_driver_memory, settings.spark_class_archive)
        with _own_sigint_handler_kept():
            if SparkContext._gateway is None and not started_by_spark_submit():
                _session = _start_session(master, conf, log_path or spark_log_path(settings.home))
            else:  # a JVM this process did not start (spark-submit's, or the caller's own session's), as it is
                _session = _builder(master, conf).getOrCreate()
                _session.sparkContext.setLogLevel("ERROR")
        return _session


@contextlib.contextmanager
def _own_sigint_handler_kept():
    """A SparkContext that starts in the main thread puts in its own SIGINT handler (cancel Spark's
    jobs, raise KeyboardInterrupt anywhere, an import included). A handler that says it cancels
    Spark's jobs itself (`cancels_spark_jobs`: the `alterflow` command's, which never raises inside
    an import) is put back; any other (Python's default, a notebook kernel's) gives way to PySpark's
    as usual."""
    own = None
    if threading.current_thread() is threading.main_thread():
        own = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        if getattr(own, "cancels_spark_jobs", False):
            signal.signal(signal.SIGINT, own)


def record_class_archive(settings: Settings, partial: pathlib.Path, workload, log_path: pathlib.Path) -> int:
    """Start this process's session with a JVM that writes the archive of the classes it loaded
    to `partial` as it exits (`alterflow.spark_class_archive`) and its log to `log_path`, run
    `workload(session)`, stop the session and wait for the JVM to exit; returns its exit status
    (0: the archive is whole)."""
    global _session
    from pyspark import SparkContext

    conf = session_conf(settings.spark_driver_memory)
    conf["spark.driver.extraJavaOptions"] += f" -XX:ArchiveClassesAtExit={partial}"
    with _lock:
        if _session is not None or SparkContext._gateway is not None:
            raise RuntimeError("a class archive is recorded by the process's first JVM")
        _python_workers_like_this_process()
        _session = _start_session(settings.spark_master, conf, log_path)
    jvm = SparkContext._gateway.proc
    try:
        workload(_session)
    finally:  # whatever the workload did, the JVM has ended (and written what it writes) on return
        stop_spark()
        jvm.stdin.close()  # the gateway's JVM exits when its stdin ends, writing the archive first
        code = jvm.wait(timeout=300)
    return code


def _python_workers_like_this_process() -> None:
    """Spark's Python workers run this process's interpreter, and its JVM binds the loopback."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def _builder(master: str, conf: dict[str, str]):
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName("alterflow")
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder


def _start_session(master: str, conf: dict[str, str], log_path: pathlib.Path):
    """Start the driver's JVM (spark-submit, as PySpark does, but with its stdout and stderr
    appended to `log_path`) and the session on it."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    spark_conf = SparkConf(loadDefaults=False).setMaster(master).setAppName("alterflow").setAll(conf.items())
    log = _open_log(log_path)
    start = log.tell()
    gateway = context = None
    try:
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        log.write(f"\n==== {stamp} pid {os.getpid()}: alterflow's Spark session starts (master {master}) ====\n".encode())
        log.flush()
        _pyspark_logs_to(log_path)
        gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": log, "stderr": log})
        context = SparkContext(conf=spark_conf, gateway=gateway)
        return _builder(master, conf).getOrCreate()  # on `context`
    except Exception as exc:
        if context is not None:
            with contextlib.suppress(Exception):
                context.stop()
        if gateway is not None:  # a JVM that started but runs no session: gone, so a later call starts afresh
            _stop_gateway(gateway)
        reason = capped(_jvm_said(log_path, start) or first_line(exc), MAX_LINE // 2)  # never cuts the log's path
        raise SparkStartError(f"Spark did not start on {master}: {reason} (details in {escaped(str(log_path))})") from None
    finally:
        log.close()  # the JVM holds its own descriptors


def _stop_gateway(gateway) -> None:
    from pyspark import SparkContext

    with contextlib.suppress(Exception):
        gateway.shutdown()
    if gateway.proc is not None:
        with contextlib.suppress(OSError):
            gateway.proc.kill()
            gateway.proc.wait(30)
    SparkContext._gateway = None
    SparkContext._jvm = None


def _pyspark_logs_to(log_path: pathlib.Path) -> None:
    """PySpark's loggers that write to stderr on their own (a JSON line for each query error,
    besides the exception alterflow reports) write to `log_path` instead."""
    import logging

    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logger = PySparkLogger.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addHandler(logging.FileHandler(log_path, delay=True))  # PySparkLogger formats it as JSON
        logger.propagate = False


def _open_log(log_path: pathlib.Path):
    """`log_path` opened for appending (its folder created); a log past LOG_ROTATE_BYTES is moved
    to `<name>.1` first, so the logs of one home stay bounded."""
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        if log_path.exists() and log_path.stat().st_size > LOG_ROTATE_BYTES:
            log_path.replace(log_path.with_name(log_path.name + ".1"))
        return open(log_path, "ab")  # noqa: SIM115 -- closed by the caller once the JVM has it
    except OSError as exc:
        raise SparkStartError(capped(f"Spark did not start: cannot write its log {log_path}: {exc.strerror}")) from None


def _jvm_said(log_path: pathlib.Path, start: int) -> str | None:
    """Why the JVM gave up, from what it wrote after `start`: Spark's last ERROR line, else its
    first line that is not a JVM warning (a start-up script's complaint), else nothing."""
    try:
        with open(log_path, "rb") as log:
            log.seek(start)
            lines = [line.strip() for line in log.read(1 << 20).decode(errors="replace").splitlines()]
    except OSError:
        return None
    lines = [line for line in lines if line and not line.startswith(("WARNING:", "at ", "===="))]
    errors = [line for line in lines if " ERROR " in line]
    if errors:
        return errors[-1].split(" ERROR ", 1)[1]
    return _SCRIPT_LINE.sub("", lines[0]) if lines else None


_SCRIPT_LINE = re.compile(r"^\S*spark-\w+(\.cmd)?: line \d+: ")  # Spark's launch scripts prefix their complaints so
