-- One PostgreSQL server for docker-compose.yaml, two databases: Airflow's metadata (`airflow`,
-- created by the image from POSTGRES_DB) and the alterflow catalog (`alterflow`, created here;
-- its tables are made by the catalog's Alembic migrations, run by airflow-init).
CREATE ROLE alterflow LOGIN PASSWORD 'alterflow';
CREATE DATABASE alterflow OWNER alterflow;
