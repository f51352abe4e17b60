"""`AlterflowHook`: an Airflow connection of type `alterflow` (catalog URL, warehouse, and the
catalog database's password) turned into the Python API's connection, `alterflow.connect(...)`.

    from alterflow.airflow.hooks import AlterflowHook

    with AlterflowHook().get_conn() as af:          # the connection `alterflow_default`
        print(af.tables())

Where the settings come from:

- The connection named `alterflow_conn_id` (default `alterflow_default`): its Catalog URL and
  Warehouse fields, each one falling back to the environment's when empty; its Catalog password
  goes into the URL (Airflow keeps it encrypted and masks it in task logs).
- No connection `alterflow_default` at all: the environment, as the CLI reads it
  (ALTERFLOW_CATALOG_URL, ALTERFLOW_WAREHOUSE, both under ALTERFLOW_HOME when unset), so a
  deployment that configures alterflow through ALTERFLOW_* keeps working unchanged.
- A connection id of your own that Airflow does not know is refused in one line.

Every other setting (leases, load buffers, ALTERFLOW_CATALOG_NAME, the Spark master) is read from
the environment as the CLI reads it. Every refusal is a `UserError` with one line; the task bodies
turn it into a failed task without retries."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

from alterflow.airflow.provider import CATALOG_URL_FIELD, CONN_TYPE, DEFAULT_CONN_ID, WAREHOUSE_FIELD
from alterflow.catalog.errors import CatalogUnavailable
from alterflow.errors import UserError, shown
from alterflow.settings import SettingError, Settings, warehouse_root, warehouse_setting

if TYPE_CHECKING:  # pragma: no cover
    from alterflow import Connection
    from alterflow.catalog.catalog import Catalog

__all__ = ["AlterflowHook", "AlterflowConnectionError", "DEFAULT_CONN_ID", "CONN_TYPE", "settings_with"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# The catalog's own refusal names the environment variable; through a connection it names that.
_CANNOT_OPEN = "cannot open the catalog of ALTERFLOW_CATALOG_URL"


class AlterflowConnectionError(UserError):
    """An Airflow connection of type alterflow cannot be used; the message names it."""


def _field(extra: dict, name: str) -> str | None:
    """A form field of the connection: Airflow 3's form stores it under its own name; older forms
    and hand-written connections may use `extra__alterflow__<name>`."""
    value = extra.get(name)
    if value is None:
        value = extra.get(f"extra__{CONN_TYPE}__{name}")
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value


def _with_password(conn_id: str, url: str, password: str) -> str:
    """`url` with `password` for the user it names (percent-encoded as a URL wants it)."""
    scheme, _, rest = url.partition("://")
    netloc, slash, tail = rest.partition("/")
    userinfo, at, host = netloc.rpartition("@")
    if not at or not userinfo:
        raise AlterflowConnectionError(
            f"Airflow connection {conn_id}: the Catalog password needs a user name in the Catalog URL (scheme://user@host/database)"
        )
    if ":" in userinfo:
        raise AlterflowConnectionError(
            f"Airflow connection {conn_id}: the Catalog URL holds a password and so does the Catalog password field; keep only the field"
        )
    return f"{scheme}://{userinfo}:{urllib.parse.quote(password, safe='')}@{host}{slash}{tail}"


def settings_with(base: Settings, conn_id: str, catalog_url: Any = None, warehouse: Any = None, password: str | None = None) -> Settings:
    """`base` (the environment's settings) with a connection's fields: each one given replaces the
    environment's; a password goes into the catalog URL."""
    url = base.catalog_url
    if catalog_url is not None:
        if not isinstance(catalog_url, str) or not _URL.match(catalog_url.strip()):
            raise AlterflowConnectionError(
                f"Airflow connection {conn_id}: Catalog URL must be a database URL such as "
                f"postgresql+psycopg://user@host:5432/db or sqlite:////path/catalog.db, not {shown(catalog_url)}"
            )
        url = catalog_url.strip()
    if password:
        if catalog_url is None:
            raise AlterflowConnectionError(f"Airflow connection {conn_id}: a Catalog password needs the Catalog URL it is for")
        url = _with_password(conn_id, url, password)
    folder = base.warehouse
    if warehouse is not None:
        if not isinstance(warehouse, str):
            raise AlterflowConnectionError(
                f"Airflow connection {conn_id}: Warehouse must be a folder path or an s3:// URI, not {shown(warehouse)}"
            )
        try:
            folder = warehouse_root(warehouse, f"Airflow connection {conn_id}: Warehouse")
        except SettingError as exc:
            raise AlterflowConnectionError(str(exc)) from None
    return dataclasses.replace(base, catalog_url=url, warehouse=folder)


class AlterflowHook(BaseHook):
    """The settings of an alterflow connection, and the Python API's connection made from them."""

    conn_name_attr = "alterflow_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = CONN_TYPE
    hook_name = "alterflow"

    def __init__(self, alterflow_conn_id: str = DEFAULT_CONN_ID, **kwargs) -> None:
        super().__init__(**kwargs)
        if not isinstance(alterflow_conn_id, str) or not alterflow_conn_id.strip():
            raise AlterflowConnectionError(f"alterflow_conn_id must name an Airflow connection, not {shown(alterflow_conn_id)}")
        self.alterflow_conn_id = alterflow_conn_id
        self.source = ""  # after get_settings(): where they came from, for the task's log

    def get_settings(self) -> Settings:
        """The settings: the environment's, with the connection's fields over them (see the module)."""
        base = Settings.from_env()
        try:
            conn = self.get_connection(self.alterflow_conn_id)
        except AirflowNotFoundException:
            if self.alterflow_conn_id != DEFAULT_CONN_ID:
                raise AlterflowConnectionError(
                    f"Airflow connection {self.alterflow_conn_id} is not defined; create it (type {CONN_TYPE}) or leave "
                    f"alterflow_conn_id at {DEFAULT_CONN_ID}, which falls back to the ALTERFLOW_* environment"
                ) from None
            self.source = f"the environment (no Airflow connection {DEFAULT_CONN_ID})"
            return base
        if conn.conn_type != CONN_TYPE:
            raise AlterflowConnectionError(
                f"Airflow connection {self.alterflow_conn_id} is of type {shown(conn.conn_type)}, not {CONN_TYPE}"
            )
        extra = conn.extra_dejson
        settings = settings_with(
            base, self.alterflow_conn_id, _field(extra, CATALOG_URL_FIELD), _field(extra, WAREHOUSE_FIELD), conn.password or None
        )
        if conn.password:
            from airflow.sdk.log import mask_secret

            mask_secret(urllib.parse.quote(conn.password, safe=""))  # as it is written inside the URL
        self.source = f"Airflow connection {self.alterflow_conn_id}"
        return settings

    def catalog(self, settings: Settings) -> Catalog:
        """The catalog of `settings`; one it cannot open is refused naming the connection."""
        from alterflow.catalog.catalog import Catalog

        try:
            return Catalog(settings.catalog_url)
        except CatalogUnavailable as exc:
            raise self._unavailable(exc) from None

    def get_conn(self) -> Connection:
        """`alterflow.connect(catalog_url=..., warehouse=...)` with the connection's settings."""
        import alterflow

        settings = self.get_settings()
        try:
            return alterflow.connect(catalog_url=settings.catalog_url, warehouse=warehouse_setting(settings.warehouse))
        except CatalogUnavailable as exc:
            raise self._unavailable(exc) from None

    def test_connection(self) -> tuple[bool, str]:
        """The connection form's Test button: opens the catalog and counts its tables."""
        try:
            with self.get_conn() as af:
                tables = af.tables()
                warehouse = af.warehouse
        except UserError as exc:
            return False, str(exc)
        return True, f"catalog open: {len(tables)} tables; warehouse {warehouse}"

    def _unavailable(self, exc: CatalogUnavailable) -> UserError:
        if self.source.startswith("Airflow connection") and str(exc).startswith(_CANNOT_OPEN):
            return AlterflowConnectionError(f"cannot open the catalog of {self.source} (its Catalog URL){str(exc)[len(_CANNOT_OPEN) :]}")
        return exc
