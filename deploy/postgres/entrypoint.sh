#!/bin/sh
# First start on an empty data folder: initdb with POSTGRES_USER / POSTGRES_PASSWORD, create
# POSTGRES_DB, run /docker-entrypoint-initdb.d/*.sql against it and source its *.sh, all on a
# server that listens on no TCP address; then (every start) the server itself, listening on all
# addresses. UTF8 as the official image: with a minimal base the default would be SQL_ASCII,
# which psycopg 3 reads as bytes.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "postgres-entrypoint: POSTGRES_PASSWORD is not set" >&2
    exit 1
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    password_file="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
    initdb --username="$POSTGRES_USER" --pwfile="$password_file" --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA"
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
    if [ "$POSTGRES_DB" != postgres ]; then
        psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -c "CREATE DATABASE \"$POSTGRES_DB\""
    fi
    for script in /docker-entrypoint-initdb.d/*; do
        case "$script" in
            *.sql)
                echo "postgres-entrypoint: running $script"
                psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -f "$script"
                ;;
            *.sh)  # sourced, as the official image does with a script that is not executable
                echo "postgres-entrypoint: sourcing $script"
                . "$script"
                ;;
        esac
    done
    pg_ctl -D "$PGDATA" -m fast -w stop
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
