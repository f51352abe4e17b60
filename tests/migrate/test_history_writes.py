"""The migration history's records around each statement (`MigrationHistory.start_statement`,
`finish_statement`): written without waiting for the disk, and leaving every catalog connection
committing durably again afterwards (SQLite `synchronous=FULL`, PostgreSQL `synchronous_commit`
on), also when the write fails. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.migration_history import DONE, RUNNING, MigrationHistory


def durable_everywhere(catalog: Catalog) -> list[str]:
    """The durability setting of each connection the pool hands out (all of those it holds)."""
    connections = [catalog.engine.connect() for _ in range(catalog.engine.pool.size())]
    try:
        if catalog.engine.dialect.name == "sqlite":  # on the driver's connection: no transaction, no lock
            return [str(c.connection.driver_connection.execute("PRAGMA synchronous").fetchone()[0]) for c in connections]
        return [c.exec_driver_sql("SHOW synchronous_commit").scalar() for c in connections]
    finally:
        for c in connections:
            c.close()


def test_statement_records_are_written_and_durability_comes_back(catalog):
    durable = "2" if catalog.engine.dialect.name == "sqlite" else "on"  # SQLite: 2 is FULL
    history = MigrationHistory(catalog)
    migration = history.begin_file("1", "first", "V1__first.sql", "sum", "tester")

    history.start_statement(migration, 1, 3, "hash-1", "alterflow__req1")
    (recorded,) = history.migrations()
    assert [(s.position, s.line, s.state, s.request_id) for s in recorded.statements] == [(1, 3, RUNNING, "alterflow__req1")]
    history.finish_statement(migration, 1, "t", 7, 11, 2)
    (recorded,) = history.migrations()
    done = recorded.statement(1)
    assert (done.state, done.table_name, done.table_id, done.job_id, done.schema_version) == (DONE, "t", 7, 11, 2)
    assert done.finished_at is not None and done.finished_at >= done.started_at
    assert set(durable_everywhere(catalog)) == {durable}

    # A write that fails (the request id is taken) changes nothing and leaves durability as it was.
    with pytest.raises(IntegrityError):
        history.start_statement(migration, 2, 4, "hash-2", "alterflow__req1")
    (recorded,) = history.migrations()
    assert [s.position for s in recorded.statements] == [1]
    assert set(durable_everywhere(catalog)) == {durable}
    history.start_statement(migration, 2, 4, "hash-2", "alterflow__req2")
    assert [s.state for s in history.migrations()[0].statements] == [DONE, RUNNING]
