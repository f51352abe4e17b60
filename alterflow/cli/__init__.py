"""The command line (`alterflow`): `command` (the argument parser and the process's exit),
`session` (`Session`: runs parsed statements, the embedded driver the Python API and the Airflow
tasks use too), `output` (tables and error lines), `migrate_command` (`alterflow migrate`).
Nothing is imported here: `alterflow sql` of a light statement imports only what it runs."""
