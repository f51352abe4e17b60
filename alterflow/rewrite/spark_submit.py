"""Running the conversion as its own Spark application through spark-submit (the way the Airflow
DAG's SparkSubmitOperator runs it), on any master: local[*] or a standalone spark://host:7077."""

from __future__ import annotations

import importlib.util
import pathlib

from alterflow.settings import Settings, warehouse_setting
from alterflow.spark_session import application_conf


def spark_submit_binary() -> pathlib.Path:
    import pyspark

    return pathlib.Path(pyspark.__file__).parent / "bin" / "spark-submit"


APPLICATION = "alterflow.spark_jobs.convert_history"


def application_path() -> str:
    """The conversion application's file, found without importing it (it imports the workflow,
    which imports this module)."""
    return str(pathlib.Path(importlib.util.find_spec(APPLICATION).origin).resolve())


def submit_command(settings: Settings, job_id: int, master: str, parallelism: int = 2, lease_group: str | None = None) -> list[str]:
    """The spark-submit command line of one conversion. Its driver runs here (client mode, on any
    master), so it maps this machine's archive of Spark's classes when there is one."""
    return [
        str(spark_submit_binary()),
        "--master",
        master,
        "--name",
        f"alterflow-convert-job-{job_id}",
        *(arg for key, value in application_conf(settings.spark_class_archive).items() for arg in ("--conf", f"{key}={value}")),
        application_path(),
        "--catalog-url",
        settings.catalog_url,
        "--warehouse",
        warehouse_setting(settings.warehouse),
        "--job-id",
        str(job_id),
        "--parallelism",
        str(parallelism),
        *(("--lease-group", lease_group) if lease_group else ()),
    ]
