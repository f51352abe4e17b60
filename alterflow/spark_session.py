"""The process's SparkSession, created on first use only (lightweight work never starts a JVM)."""

from __future__ import annotations

import os
import pathlib
import sys
import threading

LOG_CONFIG = pathlib.Path(__file__).with_name("log4j2.properties")
_lock = threading.Lock()
_session = None


def application_conf() -> dict[str, str]:
    """The Spark settings alterflow relies on in every application it runs: the embedded session
    and each spark-submit of a conversion (`alterflow.rewrite.spark_submit`, the DAG's
    ConvertHistoryOperator). Columns match by field id (SPEC §1); times are UTC."""
    return {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.ansi.enabled": "false",
        "spark.sql.parquet.fieldId.write.enabled": "true",
        "spark.sql.parquet.fieldId.read.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}",
    }


def session_conf() -> dict[str, str]:
    """`application_conf` plus what the process's own embedded session adds: no UI, a few shuffle
    partitions (small queries), the driver's memory (ALTERFLOW_SPARK_DRIVER_MEMORY, default 2g)."""
    from alterflow.settings import spark_driver_memory

    return {
        **application_conf(),
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.driver.memory": spark_driver_memory(),  # checked: a bad value is one line naming it
    }


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
        builder = SparkSession.builder.master(master).appName("alterflow")
        for key, value in session_conf().items():
            builder = builder.config(key, value)
        _session = builder.getOrCreate()
        _session.sparkContext.setLogLevel("ERROR")
        return _session
