"""The tablet store: Parquet files with field ids, one set per (partition value, bucket)."""
