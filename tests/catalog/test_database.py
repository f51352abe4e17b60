"""The catalog database's engine (catalog/database.py)."""

from __future__ import annotations

import subprocess
import sys

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
