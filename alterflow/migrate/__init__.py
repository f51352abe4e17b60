"""Migrations as code (docs/migrations.md): a directory of versioned SQL files applied in order, once, with
their history in the catalog.

    files     the directory: names, versions, checksums, statements with their lines
    history   the catalog's record of applied files and statements, and the apply lease
    plan      every pending statement planned in order on an in-memory next schema
    rules     the lint rules of the project's pyproject.toml
    config    [tool.alterflow.migrate] of the same file: out_of_order, future
    lint      findings per statement (and the analysis of rewrites on today's data)
    status    every file's state and the drift between the directory, the history and the catalog
    apply     running pending statements (embedded or through Airflow), resumable after a kill;
              baseline, set (record as applied without running), repair
    diff      desired CREATE TABLEs to the statements that get there

No Airflow import: the CLI (`alterflow migrate`) and the `alterflow_migrate` DAG call these.
"""
