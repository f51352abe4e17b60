# The PostgreSQL of docker-compose.yaml, from Debian's postgresql-15 on BASE_IMAGE (see
# deploy/Dockerfile for why the base is an argument). It takes the official image's settings
# (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, *.sql in /docker-entrypoint-initdb.d run once on
# an empty data folder), so the stock `postgres` image can replace it (ALTERFLOW_POSTGRES_IMAGE).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}

ENV DEBIAN_FRONTEND=noninteractive
# No packaged cluster: the data folder is the volume's, initialised by the entrypoint.
RUN mkdir -p /etc/postgresql-common \
 && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql /docker-entrypoint-initdb.d \
 && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql \
 && chmod 700 /var/lib/postgresql/data

COPY deploy/postgres/entrypoint.sh /usr/local/bin/postgres-entrypoint
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
USER postgres
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]
