"""Great Expectations suites that prove a heavyweight rewrite before it goes live.

Importing Great Expectations imports Spark Connect, which can exit the process (see
`spark_connect`): it is imported safely here first, before any module of this package imports
Great Expectations."""

from alterflow.expectations.spark_connect import import_spark_connect

import_spark_connect()
