"""Connecting to the catalog database and bringing its tables to the newest migration."""

from __future__ import annotations

import pathlib
import threading

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from alterflow.errors import first_line
from alterflow.catalog.errors import CatalogUnavailable

MIGRATIONS = pathlib.Path(__file__).parent / "migrations"
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
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _sqlite_begin(conn) -> None:
    # Take the write lock at BEGIN so read-then-write transactions serialise instead of failing late.
    conn.exec_driver_sql("BEGIN IMMEDIATE")


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "isolation_level": None})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    return engine


def alembic_config(engine: Engine):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return config


def head_revision() -> str:
    """The newest migration, read from the file names (`NNNN_*.py`) without importing Alembic."""
    return max(p.name.split("_", 1)[0] for p in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def current_revision(engine: Engine) -> str | None:
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except DBAPIError:
        return None


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
    """The process's engine for a catalog URL, migrated to the newest schema. A URL that is not
    one, names no installed driver or reaches no database is refused with `CatalogUnavailable`
    (the message names the setting, never the URL: it may hold a password)."""
    try:
        key = normalise_url(url)
        with _lock:
            engine = _engines.get(key)
            if engine is None:
                engine = make_engine(key)
                upgrade(engine)
                _engines[key] = engine
            return engine
    except NoSuchModuleError:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: it names a database SQLAlchemy does not know") from None
    except ArgumentError:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: it is not a database URL") from None
    except ImportError as exc:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: its database driver is not installed ({exc})") from None
    except DBAPIError as exc:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: {first_line(exc.orig or exc)}") from None
    except SQLAlchemyError as exc:
        raise CatalogUnavailable(f"{_CANNOT_OPEN}: {first_line(exc)}") from None
