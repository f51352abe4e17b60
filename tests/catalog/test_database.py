"""The catalog database's engine (catalog/database.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

INTERRUPTED_STATEMENT = """
import os, signal, sqlite3, sys, threading, traceback
from sqlalchemy import event, text
from alterflow.catalog.database import make_engine

signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever the runner's shell left
path = sys.argv[1]
engine = make_engine(f"sqlite:///{path}")
with engine.begin() as conn:
    conn.execute(text("CREATE TABLE t (a INTEGER)"))


@event.listens_for(engine, "before_cursor_execute")
def interrupt_soon(conn, cursor, statement, parameters, context, executemany):
    if statement.startswith("WITH RECURSIVE"):  # the long statement is about to run: SIGINT inside it
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()


try:
    with engine.begin() as conn:  # BEGIN IMMEDIATE: the write lock, for the whole transaction
        conn.execute(text(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000000) SELECT count(*) FROM n"
        )).all()
    print("not interrupted")
except KeyboardInterrupt as exc:  # its traceback, and the frames in it, are alive here
    inside = "sqlalchemy" in traceback.extract_tb(exc.__traceback__)[-1].filename
    writer = sqlite3.connect(path, timeout=1, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    writer.execute("COMMIT")
    print("written", "inside the statement" if inside else "elsewhere")
"""


def test_a_statement_an_interrupt_stops_inside_the_driver_leaves_no_lock_held(tmp_path):
    """SQLAlchemy drops a connection whose statement an interrupt stopped without closing its cursor;
    on SQLite that cursor's statement kept the transaction's write lock while the exception unwound
    (a job's lease could not be released: "database is locked")."""
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_STATEMENT, str(tmp_path / "catalog.db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip() == "written inside the statement", done.stderr[-3000:]


@pytest.mark.postgres
def test_a_catalog_server_that_goes_away_is_one_line_that_a_task_retries_and_its_return_needs_nothing(private_pg):
    """A PostgreSQL catalog restarted under a command (`pg_ctl stop -m fast`): the statement it cut
    off, and a connection it refuses, are CatalogLost (one line, transient: an Airflow task retries
    it) rather than a driver's error read as a bug; opening the catalog meanwhile says it cannot,
    still transient; once the server is back, the same engine works without a restart."""
    from sqlalchemy import text

    from alterflow.catalog.catalog import Catalog
    from alterflow.catalog.catalog_errors import CatalogLost
    from alterflow.catalog.database import close_engine, make_engine, upgrade_catalog

    upgrade_catalog(private_pg.url)
    engine = make_engine(private_pg.url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
            private_pg.stop()
            with pytest.raises(CatalogLost) as cut:
                conn.execute(text("SELECT 1"))
        assert str(cut.value) == (
            "the catalog database stopped answering (terminating connection due to administrator command); "
            "the command stopped and what it committed before stays. Run it again once the database answers"
        )
        with pytest.raises(CatalogLost, match=r"^the catalog database stopped answering \(connection failed: .*refused"):
            engine.connect()
        with pytest.raises(CatalogLost) as opening:
            Catalog(private_pg.url)
        assert str(opening.value).startswith("cannot open the catalog of ALTERFLOW_CATALOG_URL: connection failed: ")
        assert opening.value.transient and "\n" not in str(opening.value)
        private_pg.start()
        with engine.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
        assert Catalog(private_pg.url).tables() == []
    finally:
        engine.dispose()
        close_engine(private_pg.url)


@pytest.mark.postgres
def test_a_refusal_at_connect_is_not_a_lost_server(private_pg):
    """A missing database (the server answered) or a bad connection option (the client refused):
    the catalog cannot be opened, for good (not transient)."""
    from alterflow.catalog.catalog import Catalog
    from alterflow.catalog.catalog_errors import CatalogLost, CatalogUnavailable

    base = private_pg.url.rsplit("/", 1)[0]
    for url, words in (
        (base + "/no_such_database", 'database "no_such_database" does not exist'),
        (base + "/postgres?connect_timeout=soon", "connect_timeout"),
    ):
        with pytest.raises(CatalogUnavailable) as refused:
            Catalog(url)
        assert not isinstance(refused.value, CatalogLost), refused.value
        assert words in str(refused.value), refused.value
