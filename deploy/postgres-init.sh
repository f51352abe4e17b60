#!/bin/sh
# One PostgreSQL server for docker-compose.yaml, two databases: Airflow's metadata (`airflow`,
# created by the image from POSTGRES_DB) and the alterflow catalog (`alterflow`, created here with
# its role, whose password is ALTERFLOW_CATALOG_PASSWORD; its tables are made by the catalog's
# Alembic migrations, run by airflow-init). Run once, on an empty data folder, by the image's
# entrypoint (deploy/postgres/entrypoint.sh, or the official image's, which sources *.sh alike).
# The password goes in as a psql variable, quoted by psql (:'password'), never spliced into SQL.
psql -v ON_ERROR_STOP=1 -v password="${ALTERFLOW_CATALOG_PASSWORD:?ALTERFLOW_CATALOG_PASSWORD is not set}" \
    --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
CREATE ROLE alterflow LOGIN PASSWORD :'password';
CREATE DATABASE alterflow OWNER alterflow;
SQL
