"""A PySpark job that loads a table while a heavyweight ALTER of it runs (docs/python.md#spark).

Run it with spark-submit; the ALTERFLOW_* settings name the catalog and the warehouse, as for the
CLI (here a throwaway home):

    export ALTERFLOW_HOME=/tmp/alterflow-example
    PYSPARK_PYTHON=$PWD/.venv/bin/python PYSPARK_DRIVER_PYTHON=$PWD/.venv/bin/python \\
        .venv/bin/spark-submit --master 'local[2]' examples/spark_write_during_alter.py [ROWS]

`.venv/bin/spark-submit` is the one pyspark installs. On a standalone cluster
(`--master spark://host:7077`) the executors need a Python with alterflow installed
(PYSPARK_PYTHON) and the warehouse at the same path.

What it does, a line per step:
1. (re)creates the table `spark_write_demo` (id BIGINT, amount STRING) and writes 1,000 rows;
2. starts `ALTER TABLE spark_write_demo MODIFY COLUMN amount INT`, a heavyweight change (every
   stored string is parsed into a number), with postpone_swap: the job converts the history, then
   holds before its swap (READY_TO_SWAP);
3. writes ROWS more rows (default 1,000,000) from a DataFrame with `write_table`: one transaction
   whose files the executors write, dual-written to the old version and, converted, to the new;
4. swaps (RESUME ALTER TABLE COLUMN);
5. reads the table back with `read_table`: every row once, `amount` an int.
The last line is a JSON summary; the job exits 1 when a check fails.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import alterflow
from alterflow.spark import read_table, write_table

TABLE = "spark_write_demo"
FIRST_ROWS = 1_000


def rows(spark, start: int, count: int):
    """ids start.. with amount = id mod 1000, as a string (the column's type before the ALTER)."""
    return spark.range(start, start + count).select("id", (F.col("id") % 1000).cast("string").alias("amount"))


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    spark = SparkSession.builder.appName("spark-write-during-alter").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")  # the steps' lines, not Spark's INFO log
    with alterflow.connect() as af:
        af.sql(f"DROP TABLE IF EXISTS {TABLE}")
        af.sql(f"CREATE TABLE {TABLE} (id BIGINT NOT NULL, amount STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4")
        print("1. created:", write_table(rows(spark, 0, FIRST_ROWS), TABLE, connection=af), flush=True)

        af.sql(f'ALTER TABLE {TABLE} MODIFY COLUMN amount INT PROPERTIES ("postpone_swap" = "true")')
        job = af.sql(f"SHOW ALTER TABLE COLUMN FROM {TABLE}").rows[-1]
        job_id, job_state = job[0], job[7]
        print(f"2. schema change job {job_id}: {job_state}", flush=True)

        written = write_table(rows(spark, FIRST_ROWS, count), TABLE, connection=af)
        print(f"3. wrote {written.rows:,} rows in transaction {written.txn_id} while job {job_id} was {job_state}", flush=True)

        af.sql(f"RESUME ALTER TABLE COLUMN FROM {TABLE}")
        print(f"4. swapped: {af.sql(f'SHOW ALTER TABLE COLUMN FROM {TABLE}').rows[-1][7]}", flush=True)

        table = read_table(spark, TABLE, connection=af)
        found = table.agg(F.count("*").alias("rows"), F.countDistinct("id").alias("ids"), F.sum("amount").alias("amount")).first()
    total = FIRST_ROWS + count
    summary = {
        "job_state_during_write": job_state,
        "written": written.rows,
        "rows": found["rows"],
        "distinct_ids": found["ids"],
        "amount_type": dict(table.dtypes)["amount"],
        "amount_sum": found["amount"],
        "expected_amount_sum": sum(i % 1000 for i in range(total)),
    }
    print(f"5. read back {summary['rows']:,} rows, amount {summary['amount_type']}", flush=True)
    print(json.dumps(summary), flush=True)
    ok = (
        summary["rows"] == summary["distinct_ids"] == total
        and summary["amount_type"] == "int"
        and summary["amount_sum"] == summary["expected_amount_sum"]
    )
    spark.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
