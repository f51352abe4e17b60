"""The statement engine every door drives: `Session` runs parsed statements against the catalog,
the tablet store and Spark and returns `alterflow.results`' `ResultSet`s or `Done`s, which
`result_text` prints as a text table or a JSON line. The CLI (`alterflow.cli`), the Python API
(`alterflow.api`), the Airflow integration (`alterflow.airflow`) and `migrate apply` are doors over
it (docs/architecture.md)."""
