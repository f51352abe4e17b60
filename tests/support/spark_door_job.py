"""A user's own PySpark job for tests/test_spark_door_submit.py, run with spark-submit: it writes
rows into an alterflow table with `alterflow.spark.write_table` and, in `write-then-read`, waits
until the test has swapped the table's schema change in, then reads the table back with
`read_table`. Its session is set up as a user's might be (not as alterflow's: another time zone,
ANSI on, field-id reads off); the catalog comes from the environment (ALTERFLOW_HOME,
ALTERFLOW_CATALOG_URL). Each step prints one JSON line.

    spark_door_job.py MODE TABLE FIRST_ID ROWS [MARKER]

Rows are ids FIRST_ID.. with v = id mod 1000 as a string, in 4 partitions."""

from __future__ import annotations

import json
import pathlib
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from alterflow.spark import read_table, write_table

TIME_ZONE = "America/New_York"


def emit(**values) -> None:
    print(json.dumps(values), flush=True)


def main() -> None:
    mode, table, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    spark = (
        SparkSession.builder.appName(f"user-job-{mode}")
        .config("spark.sql.session.timeZone", TIME_ZONE)
        .config("spark.sql.ansi.enabled", "true")
        .config("spark.sql.parquet.fieldId.read.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.range(first, first + count, 1, 4).select("id", (F.col("id") % 1000).cast("string").alias("v"))
    result = write_table(frame, table)
    emit(step="written", rows=result.rows, txn=result.txn_id)
    if mode == "write-then-read":
        marker = pathlib.Path(sys.argv[5])
        deadline = time.monotonic() + 300
        while not marker.exists():
            if time.monotonic() > deadline:
                raise SystemExit("the test never swapped")
            time.sleep(0.1)
        read = read_table(spark, table)
        found = read.agg(F.count("*"), F.countDistinct("id"), F.sum("v"), F.min("id"), F.max("id")).first()
        emit(
            step="read",
            rows=found[0],
            ids=found[1],
            v_sum=found[2],
            min_id=found[3],
            max_id=found[4],
            types=dict(read.dtypes),
            time_zone=spark.conf.get("spark.sql.session.timeZone"),
            ansi=spark.conf.get("spark.sql.ansi.enabled"),
            master=spark.sparkContext.master,
        )
    spark.stop()


if __name__ == "__main__":
    main()
