"""spark-submit entry point of a heavyweight job's RUNNING step.

    spark-submit --master spark://host:7077 spark_jobs/convert_history.py \
        --catalog-url URL --warehouse PATH --job-id N [--parallelism 2]

It runs `alterflow.workflow.heavy_steps.convert`, the same step the embedded runner calls
in-process: tablets already converted are skipped, so a resubmitted application resumes.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Convert a heavyweight alter job's history into its shadow index.")
    parser.add_argument("--catalog-url", required=True)
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--job-id", required=True, type=int)
    parser.add_argument("--parallelism", type=int, default=2)
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession

    from alterflow.workflow.heavy_steps import convert
    from catalog.catalog import Catalog

    spark = SparkSession.builder.appName(f"alterflow-convert-job-{args.job_id}").getOrCreate()
    try:
        result = convert(spark, Catalog(args.catalog_url), pathlib.Path(args.warehouse), args.job_id, args.parallelism)
    finally:
        spark.stop()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
