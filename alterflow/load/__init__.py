"""Loads (docs/heavyweight.md, "Loads"): reading the input (`inputs`), coercing values to a version's types (`rows`,
with `alterflow.values.load_coercion`), buffering rows per tablet (`tablet_buffers`), and the
transaction that writes them, in this process (`local_load`) or on Spark (`spark_load`);
`load_once` for a driver that retries."""
