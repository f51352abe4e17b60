"""The Python API (`import alterflow`; docs/python.md): `connect()` → `Connection` → `Table` →
`Scan`, `AppendResult`, `AlterJobHandle`. The package `alterflow` exports these names; the other
doors (`alterflow.spark`, the Airflow hook) build on `Connection`."""
