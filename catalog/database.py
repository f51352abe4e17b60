"""Connecting to the catalog database and bringing its tables to the newest migration.

A SQLite catalog (the default one under ALTERFLOW_HOME, or any SQLite file: private to the
processes of one host) is created and upgraded when it is opened. Any other database (PostgreSQL,
possibly shared by several hosts and releases) is never migrated implicitly: `alterflow db upgrade`
(`upgrade_catalog`) does it, and opening one that is not at this release's migration is refused
with a line that names that command (`CatalogOutdated`)."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from alterflow.catalog.catalog_errors import CatalogFull, CatalogLost, CatalogOutdated, CatalogUnavailable
from alterflow.catalog.revisions import MIGRATIONS, head_revision
from alterflow.errors import first_line

_engines: dict[str, Engine] = {}
_CANNOT_OPEN = "cannot open the catalog of ALTERFLOW_CATALOG_URL"
_lock = threading.Lock()


def normalise_url(url: str) -> str:
    """`postgresql://` means psycopg 3 here (the driver the project installs)."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit is on disk when it returns (NORMAL in WAL mode may lose the last commits to a
    # power cut, and a file made visible by one would then be deleted as unreferenced).
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _sqlite_begin(conn) -> None:
    # Take the write lock at BEGIN so read-then-write transactions serialise instead of failing late.
    conn.exec_driver_sql("BEGIN IMMEDIATE")


_SQLITE_FULL, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CANTOPEN = 13, 8, 10, 14  # sqlite3's result codes (their low byte)


def _no_room_beside(context) -> bool:
    """Whether the file system of a SQLite catalog's file has no block left for it."""
    import os

    engine = getattr(context, "engine", None)
    database = engine.url.database if engine is not None else None
    if not database:
        return False
    try:
        return os.statvfs(os.path.dirname(os.path.abspath(database))).f_bavail == 0
    except OSError:
        return False


_PG_OUT_OF_ROOM = {"53100": "its disk is full", "53200": "it is out of memory", "25006": "it is read-only"}


def _refusing_a_full_database(context) -> None:
    """SQLAlchemy's handle_error: a database that cannot grow (SQLite's "database or disk is full",
    a read-only SQLite file, PostgreSQL's disk_full) is CatalogFull, one line; the transaction
    is rolled back as for any failed statement."""
    orig = context.original_exception
    code = getattr(orig, "sqlite_errorcode", None)
    reason = None
    if code is not None and code & 0xFF == _SQLITE_FULL:
        reason = "its disk is full"
    elif code is not None and code & 0xFF == _SQLITE_READONLY:
        reason = "it is read-only"
    elif code is not None and code & 0xFF in (_SQLITE_IOERR, _SQLITE_CANTOPEN) and _no_room_beside(context):
        reason = "its disk is full"  # its write-ahead log or shared memory file could not grow
    elif getattr(orig, "sqlstate", None) in _PG_OUT_OF_ROOM:
        reason = _PG_OUT_OF_ROOM[orig.sqlstate]
    if reason is not None:
        raise CatalogFull(
            f"the catalog database cannot be written: {reason}; nothing was committed. Free space and run the command again"
        ) from orig


def _finishing_an_interrupted_statement(context) -> None:
    """SQLAlchemy's handle_error: a statement that an interrupt (KeyboardInterrupt, SystemExit)
    stopped inside the driver makes SQLAlchemy drop its connection without closing the cursor. On
    SQLite the cursor's unfinished statement keeps the closed connection's transaction, and its
    write lock, for as long as the cursor lives, and the exception's traceback keeps it alive while
    the work unwinds: the job lease's release failed with "database is locked". The cursor is
    closed here, so the connection's close ends the transaction."""
    cursor = getattr(context.execution_context, "cursor", None)
    if isinstance(context.original_exception, Exception) or cursor is None:
        return
    with contextlib.suppress(Exception):
        cursor.close()


# PostgreSQL's admin_shutdown, crash_shutdown, cannot_connect_now; class 08 is connection_exception.
_PG_GOING = {"57P01", "57P02", "57P03"}
# At connect, psycopg gives no code: libpq's words say whether no server answered (refused,
# unreachable, timed out, cut) or one answered that it is starting, stopping or full. Anything else
# (a bad password, a missing database, a bad option, SSL) is a refusal, for good.
_NO_SERVER = re.compile(
    r"Connection refused|could not translate host name|timeout expired|No route to host|Network is unreachable"
    r"|server closed the connection unexpectedly|Connection reset by peer|could not connect to server"
    r"|connection to server on socket .* failed: No such file or directory"
)
_PG_BUSY = re.compile(
    r"the database system is (starting up|shutting down|in recovery mode|not yet accepting)|sorry, too many clients"
    r"|remaining connection slots are reserved|terminating connection due to (administrator command|crash of another)"
)


def _server_gone(context) -> bool:
    """Whether a PostgreSQL error is the server going away or refusing a connection for now (not a
    pre-ping, which reconnects by itself, and not a refusal the server or the client made, such as
    a bad password or a bad option)."""
    orig = context.original_exception
    if context.is_pre_ping or not isinstance(orig, context.dialect.loaded_dbapi.OperationalError):
        return False
    state = getattr(orig, "sqlstate", None)
    if context.is_disconnect or state in _PG_GOING or (state or "").startswith("08"):
        return True
    if state is not None or context.connection is not None:
        return False
    words = str(orig)
    return _NO_SERVER.search(words) is not None or _PG_BUSY.search(words) is not None


def _refusing_a_lost_server(context) -> None:
    """SQLAlchemy's handle_error on PostgreSQL: the server went away mid-command (a restart, a
    network cut) or refuses connections: CatalogLost, one line, in place of a driver's error that
    would read as a bug."""
    if _server_gone(context):
        reason = first_line(context.original_exception, 160)
        raise CatalogLost(
            f"the catalog database stopped answering ({reason}); the command stopped and what it committed before "
            "stays. Run it again once the database answers",
            reason,
        ) from context.original_exception


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "isolation_level": None})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        event.listen(engine, "handle_error", _finishing_an_interrupted_statement)
    else:
        engine = create_engine(url, pool_pre_ping=True)
        event.listen(engine, "handle_error", _refusing_a_lost_server)
    event.listen(engine, "handle_error", _refusing_a_full_database)
    return engine


def alembic_config(engine: Engine):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return config


def current_revision(engine: Engine) -> str | None:
    """The catalog's migration, None for a database without alterflow's tables. A database that
    cannot be reached raises (DBAPIError)."""
    from sqlalchemy import inspect

    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def migrated_implicitly(url: str) -> bool:
    """Whether opening the catalog at `url` creates and upgrades it (SQLite only)."""
    return make_url(url).get_backend_name() == "sqlite"


def _refuse_newer(current: str, head: str) -> None:
    """A catalog a later release migrated: neither opened nor upgraded by this one."""
    if current > head:
        raise CatalogOutdated(
            f"the catalog database of ALTERFLOW_CATALOG_URL is at migration {current}, newer than this release's {head}: use a release that knows it"
        )


def _check_revision(engine: Engine) -> None:
    current, head = current_revision(engine), head_revision()
    if current == head:
        return
    if current is None:
        raise CatalogOutdated(
            f"the catalog database of ALTERFLOW_CATALOG_URL has no alterflow tables yet: run `alterflow db upgrade` to create them (migration {head})"
        )
    _refuse_newer(current, head)
    raise CatalogOutdated(
        f"the catalog database of ALTERFLOW_CATALOG_URL is at migration {current}, this release needs {head}: run `alterflow db upgrade`"
    )


def upgrade(engine: Engine) -> None:
    """Apply every catalog migration not yet applied (idempotent; Alembic is loaded only then)."""
    if current_revision(engine) == head_revision():
        return
    from alembic import command

    config = alembic_config(engine)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")


def open_engine(url: str) -> Engine:
    """The process's engine for a catalog URL: a SQLite catalog migrated to the newest schema, any
    other checked to be at it (`CatalogOutdated` otherwise). A URL that is not one, names no
    installed driver or reaches no database is refused with `CatalogUnavailable` (the message names
    the setting, never the URL: it may hold a password)."""
    with _refusing_bad_urls():
        key = normalise_url(url)
        with _lock:
            engine = _engines.get(key)
            if engine is None:
                engine = make_engine(key)
                try:
                    if migrated_implicitly(key):
                        upgrade(engine)
                    else:
                        _check_revision(engine)
                except BaseException:
                    engine.dispose()
                    raise
                _engines[key] = engine
            return engine


def close_engine(url: str) -> None:
    """Close the process's engine for a catalog URL (its pooled connections) and forget it: the
    next `open_engine` of that URL connects again. For a process done with one of many catalogs
    (a PostgreSQL server allows a bounded number of connections)."""
    with _refusing_bad_urls():
        key = normalise_url(url)
    with _lock:
        engine = _engines.pop(key, None)
    if engine is not None:
        engine.dispose()


def close_engines() -> None:
    """Close every engine this process opened (see `close_engine`): a SQLite catalog's last
    connection checkpoints its write-ahead log into the database file as it closes."""
    with _lock:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        engine.dispose()


def upgrade_catalog(url: str) -> tuple[str | None, str]:
    """`alterflow db upgrade`: migrate the catalog at `url` to this release's schema. Returns the
    migration it was at (None: no alterflow tables) and the one it is at now."""
    with _refusing_bad_urls():
        engine = make_engine(normalise_url(url))
        try:
            before = current_revision(engine)
            head = head_revision()
            if before is not None:
                _refuse_newer(before, head)
            upgrade(engine)
            return before, current_revision(engine)
        finally:
            engine.dispose()


@contextlib.contextmanager
def _refusing_bad_urls() -> Iterator[None]:
    try:
        yield
    except NoSuchModuleError:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: it names a database SQLAlchemy does not know") from None
    except ArgumentError:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: it is not a database URL") from None
    except ImportError as exc:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: its database driver is not installed ({exc})") from None
    except CatalogLost as exc:  # no server at the URL, for now: still a passing state
        raise CatalogLost(f"{_CANNOT_OPEN}: {exc.reason}", exc.reason) from None
    except DBAPIError as exc:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: {first_line(exc.orig or exc)}") from None
    except SQLAlchemyError as exc:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: {first_line(exc)}") from None
