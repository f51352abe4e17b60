"""The process's SparkSession, created on first use only (lightweight work never starts a JVM)."""

from __future__ import annotations

import os
import pathlib
import sys
import threading

LOG_CONFIG = pathlib.Path(__file__).with_name("log4j2.properties")
_lock = threading.Lock()
_session = None


def spark_started() -> bool:
    return _session is not None


def get_spark(master: str | None = None):
    """Return the process's SparkSession, starting it with alterflow's settings the first time."""
    global _session
    with _lock:
        if _session is not None:
            return _session
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession

        master = master or os.environ.get("ALTERFLOW_SPARK_MASTER", "local[*]")
        builder = (
            SparkSession.builder.master(master)
            .appName("alterflow")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.parquet.fieldId.write.enabled", "true")
            .config("spark.sql.parquet.fieldId.read.enabled", "true")  # columns match by id (SPEC §1)
            .config("spark.sql.ansi.enabled", "false")
            .config("spark.driver.memory", os.environ.get("ALTERFLOW_SPARK_DRIVER_MEMORY", "2g"))
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}")
        )
        _session = builder.getOrCreate()
        _session.sparkContext.setLogLevel("ERROR")
        return _session
