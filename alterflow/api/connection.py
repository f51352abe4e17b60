"""`alterflow.connect()`: a pipeline's own handle on a catalog and its warehouse (the Python API).

A `Connection` holds what the CLI builds from its settings (a `Settings`, the `Catalog`, the
warehouse folder and a `Session` that runs statements) and hands out `Table` objects. It is cheap:
opening one reads the catalog's settings and connects to its database, and starts no JVM; Spark
starts only for what needs it (a SELECT through `sql()`, a heavyweight ALTER over a big table).

Every refusal is one of the project's `UserError` subclasses with a one-line message, as in the CLI.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from alterflow.errors import UserError, shown
from alterflow.settings import Settings, warehouse_root
from alterflow.sql.names import MAX_NAME, valid_name

if TYPE_CHECKING:  # pragma: no cover
    from alterflow.api.table import Table
    from alterflow.catalog.catalog import Catalog
    from alterflow.engine.session import Session
    from alterflow.results import Result


class ConnectionClosed(UserError):
    """A call on a connection after `close()`."""


def connect(catalog_url: str | None = None, warehouse: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> Connection:
    """A connection to a catalog and its warehouse. `catalog_url` and `warehouse` default to the
    CLI's settings (ALTERFLOW_CATALOG_URL, ALTERFLOW_WAREHOUSE, both under ALTERFLOW_HOME when
    unset); every other setting (retention, lease, Spark master, ALTERFLOW_AIRFLOW_URL) is read
    from `env` (default: the process's environment) as the CLI reads it."""
    settings = Settings.from_env(None if env is None else dict(env))
    if catalog_url is not None:
        if not isinstance(catalog_url, str) or not catalog_url.strip():
            raise UserError(f"connect: catalog_url must be a database URL, not {shown(catalog_url)}")
        settings = dataclasses.replace(settings, catalog_url=catalog_url)
    if warehouse is not None:
        if not isinstance(warehouse, str | os.PathLike):
            raise UserError(f"connect: warehouse must be a folder path or an s3:// URI, not {shown(warehouse)}")
        settings = dataclasses.replace(settings, warehouse=warehouse_root(warehouse, "connect: warehouse", env))
    return Connection(settings)


class Connection:
    """A catalog and its warehouse. Use it as a context manager, or call `close()`."""

    def __init__(self, settings: Settings):
        from alterflow.catalog.catalog import Catalog
        from alterflow.engine.session import Session

        self.settings = settings
        with settings.dirs_for_catalog():  # a SQLite catalog under ALTERFLOW_HOME needs its folder
            self._catalog = Catalog(settings.catalog_url)
        self._session = Session(settings, self._catalog)
        self._closed = False

    # -- what the other doors (alterflow.spark, the Airflow hook) build on ------------------------
    @property
    def catalog(self) -> Catalog:
        self._check_open()
        return self._catalog

    @property
    def session(self) -> Session:
        self._check_open()
        return self._session

    @property
    def warehouse(self) -> pathlib.Path:
        return self.settings.warehouse

    # -- the API ---------------------------------------------------------------------------------
    def tables(self) -> list[str]:
        """The names of the catalog's tables, in the order they were created."""
        return [t.name for t in self.catalog.tables()]

    def table(self, name: str) -> Table:
        """The table `name` (case-insensitive). An unknown name is refused in one line."""
        from alterflow.api.table import Table

        if not isinstance(name, str):
            raise UserError(f"table: a table name is a string, not {type(name).__name__}")
        if not valid_name(name):  # before the catalog is asked: PostgreSQL refuses a NUL even in a query
            raise UserError(
                f"table: invalid name {shown(name, MAX_NAME + 2)}: names match [A-Za-z_][A-Za-z0-9_]* up to {MAX_NAME} characters"
            )
        info = self.catalog.table(name)  # UnknownObject, one line, for a name the catalog lacks
        return Table(self, info.name)

    def sql(self, text: str) -> Result:
        """Run every statement of `text` in order, as `alterflow sql -e` does; returns the last
        statement's result: a `ResultSet` (`columns`, `rows`) or `Done` (`message`)."""
        if not isinstance(text, str):
            raise UserError(f"sql: a statement is a string, not {type(text).__name__}")
        results = list(self.session.run(text))
        if not results:
            raise UserError("sql: no statement to run")
        return results[-1]

    def close(self) -> None:
        """Close the connection: every later call on it, or on a table of it, is refused. The
        process's pooled database connections stay for other connections to the same catalog."""
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<alterflow.Connection warehouse={str(self.warehouse)!r} {state}>"

    def _check_open(self) -> None:
        if self._closed:
            raise ConnectionClosed("the alterflow connection is closed; open another with alterflow.connect()")
