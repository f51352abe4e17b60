"""spark-submit entry point of a heavyweight job's RUNNING step.

    spark-submit --master spark://host:7077 spark_jobs/convert_history.py \
        [--catalog-url URL] [--warehouse PATH] --job-id N [--parallelism 2] [--lease-group NAME]

Without --catalog-url / --warehouse it reads ALTERFLOW_CATALOG_URL, ALTERFLOW_WAREHOUSE and
ALTERFLOW_HOME like every other alterflow process (the Airflow DAG passes them this way, so a
catalog password never shows in the spark-submit command line).

It runs `alterflow.workflow.heavy_steps.convert`, the same step the embedded runner calls
in-process: tablets already converted are skipped, so a resubmitted application resumes. It drives
the job under its runner lease; `--lease-group` names the driver it belongs to (the Airflow DAG
run that submitted it, which holds the lease until the application takes it over).
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Convert a heavyweight alter job's history into its shadow index.")
    parser.add_argument("--catalog-url", help="default: ALTERFLOW_CATALOG_URL (or SQLite under ALTERFLOW_HOME)")
    parser.add_argument("--warehouse", help="default: ALTERFLOW_WAREHOUSE (or warehouse/ under ALTERFLOW_HOME)")
    parser.add_argument("--job-id", required=True, type=int)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--lease-group", help="the driver this application belongs to (default: itself)")
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession

    from alterflow.catalog.catalog import Catalog
    from alterflow.settings import Settings, warehouse_root
    from alterflow.workflow.heavy_steps import StepDriver, conversion_json, convert

    settings = Settings.from_env()
    catalog_url = args.catalog_url or settings.catalog_url
    warehouse = warehouse_root(args.warehouse, "--warehouse") if args.warehouse else settings.warehouse

    spark = SparkSession.builder.appName(f"alterflow-convert-job-{args.job_id}").getOrCreate()
    try:
        driver = StepDriver(group=args.lease_group, lease_s=settings.lease_s)
        result = convert(spark, Catalog(catalog_url), warehouse, args.job_id, args.parallelism, driver)
    finally:
        spark.stop()
    print(json.dumps(conversion_json(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
