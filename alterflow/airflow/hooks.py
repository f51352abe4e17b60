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
- An `s3://` warehouse's keys, region and endpoint: the connection's own AWS fields, over those of
  the Airflow AWS connection it names (`aws_conn_id`; without one, `aws_default` where it exists
  and the worker's environment has no AWS keys), over the worker's AWS variables (docs/deploy.md).

Every other setting (leases, load buffers, ALTERFLOW_CATALOG_NAME, the Spark master) is read from
the environment as the CLI reads it. Every refusal is a `UserError` with one line; the task bodies
turn it into a failed task without retries."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

from alterflow.airflow.provider import AWS_CONN_FIELD, AWS_FIELDS, CATALOG_URL_FIELD, CONN_TYPE, DEFAULT_CONN_ID, WAREHOUSE_FIELD
from alterflow.airflow.task_context import running_try_id
from alterflow.catalog.catalog_errors import CatalogLost, CatalogUnavailable
from alterflow.errors import UserError, shown
from alterflow.object_store import KEY_VARIABLES, ObjectStoreLocation
from alterflow.settings import SettingError, Settings, environment_with, warehouse_root

if TYPE_CHECKING:  # pragma: no cover
    from alterflow.api.connection import Connection
    from alterflow.catalog.catalog import Catalog

__all__ = ["AlterflowHook", "AlterflowConnectionError", "DEFAULT_CONN_ID", "CONN_TYPE", "settings_with"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# The catalog's own refusal names the environment variable; through a connection it names that.
_CANNOT_OPEN = "cannot open the catalog of ALTERFLOW_CATALOG_URL"
DEFAULT_AWS_CONN_ID = "aws_default"  # the Amazon provider's default connection


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


def settings_with(
    base: Settings,
    conn_id: str,
    catalog_url: Any = None,
    warehouse: Any = None,
    password: str | None = None,
    env: dict[str, str] | None = None,
) -> Settings:
    """`base` (the environment's settings) with a connection's fields: each one given replaces the
    environment's; a password goes into the catalog URL; an s3:// warehouse is read with `env`'s
    AWS variables (default: the process's environment)."""
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
            folder = warehouse_root(warehouse, f"Airflow connection {conn_id}: Warehouse", env)
        except SettingError as exc:
            raise AlterflowConnectionError(str(exc)) from None
    return dataclasses.replace(base, catalog_url=url, warehouse=folder)


def _aws_connection_variables(conn) -> dict[str, str]:
    """An Airflow AWS connection as AWS variables, where it sets them: the key pair (its login and
    password, or the same in its extras), a session token, the region, the endpoint (its
    `endpoint_url`, or the one its `service_config` gives S3)."""
    extra = conn.extra_dejson
    s3_config = extra.get("service_config", {}).get("s3", {}) if isinstance(extra.get("service_config"), dict) else {}
    values = {
        "AWS_ACCESS_KEY_ID": conn.login or extra.get("aws_access_key_id"),
        "AWS_SECRET_ACCESS_KEY": conn.password or extra.get("aws_secret_access_key"),
        "AWS_SESSION_TOKEN": extra.get("aws_session_token"),
        "AWS_REGION": extra.get("region_name"),
        "AWS_ENDPOINT_URL": extra.get("endpoint_url"),
        "AWS_ENDPOINT_URL_S3": s3_config.get("endpoint_url") if isinstance(s3_config, dict) else None,
    }
    return {name: str(value).strip() for name, value in values.items() if value and str(value).strip()}


@dataclasses.dataclass(frozen=True)
class _ReadForTry:
    """An alterflow connection's settings as one task try read them (`AlterflowHook.get_settings`)."""

    try_id: str
    settings: Settings
    source: str


_read_for_try: dict[str, _ReadForTry] = {}  # by connection id: the last try's reading


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
        """The settings: the environment's, with the connection's fields over them (see the module).
        Inside a task they are read once per task try: a task's steps open the catalog several times
        (a light ALTER's `validate`: seven), and each reading is a few round trips through the task's
        supervisor (the connection, then each secret Airflow masks); in a burst of light ALTERs on
        two cores a profile put about 40 % of `validate`'s own time in them
        (docs/deploy.md#priorities-and-worker-start-up). A new try (a retry, the next task of
        `dag.test()`, a deferred task coming back) reads again; outside a task (a trigger, the
        Schema changes page) every call reads."""
        try_id = running_try_id()
        known = _read_for_try.get(self.alterflow_conn_id)
        if try_id and known is not None and known.try_id == try_id:
            self.source = known.source
            return known.settings
        settings = self._read_settings()
        if try_id:
            _read_for_try[self.alterflow_conn_id] = _ReadForTry(try_id, settings, self.source)
        return settings

    def _read_settings(self) -> Settings:
        """The connection's settings as Airflow has them now (see the module)."""
        try:
            conn = self.get_connection(self.alterflow_conn_id)
        except AirflowNotFoundException:
            if self.alterflow_conn_id != DEFAULT_CONN_ID:
                raise AlterflowConnectionError(
                    f"Airflow connection {self.alterflow_conn_id} is not defined; create it (type {CONN_TYPE}) or leave "
                    f"alterflow_conn_id at {DEFAULT_CONN_ID}, which falls back to the ALTERFLOW_* environment"
                ) from None
            self.source = f"the environment (no Airflow connection {DEFAULT_CONN_ID})"
            return self._with_aws({}, Settings.from_env)
        if conn.conn_type != CONN_TYPE:
            raise AlterflowConnectionError(
                f"Airflow connection {self.alterflow_conn_id} is of type {shown(conn.conn_type)}, not {CONN_TYPE}"
            )
        extra = conn.extra_dejson
        fields = (_field(extra, CATALOG_URL_FIELD), _field(extra, WAREHOUSE_FIELD), conn.password or None)
        settings = self._with_aws(extra, lambda env: settings_with(Settings.from_env(env), self.alterflow_conn_id, *fields, env))
        if conn.password:
            from airflow.sdk.log import mask_secret

            mask_secret(urllib.parse.quote(conn.password, safe=""))  # as it is written inside the URL
        self.source = f"Airflow connection {self.alterflow_conn_id}"
        return settings

    def _with_aws(self, extra: dict, read: Callable[[dict[str, str] | None], Settings]) -> Settings:
        """The settings `read` gives from the environment, read again with the AWS connections'
        variables over it when the warehouse is a bucket and they set any."""
        settings = read(None)
        if isinstance(settings.warehouse, ObjectStoreLocation):
            aws = self._aws_variables(extra)
            if aws:
                settings = read(environment_with(aws))
        return settings

    def _aws_variables(self, extra: dict) -> dict[str, str]:
        """The AWS variables an s3:// warehouse is read with, over the worker's: the AWS connection's
        (`aws_conn_id`, else `aws_default` where it exists and the worker has no AWS keys), then
        the alterflow connection's own AWS fields. Secrets are masked in the task's log."""
        named = _field(extra, AWS_CONN_FIELD)
        found: dict[str, str] = {}
        if named is not None or not environment_with({}).get("AWS_ACCESS_KEY_ID"):
            try:
                found = _aws_connection_variables(self.get_connection(named or DEFAULT_AWS_CONN_ID))
            except AirflowNotFoundException:
                if named is not None:
                    raise AlterflowConnectionError(
                        f"Airflow connection {self.alterflow_conn_id}: its AWS connection {named} is not defined"
                    ) from None
        own = {variable: str(value).strip() for name, variable in AWS_FIELDS.items() if (value := _field(extra, name)) is not None}
        if set(own) & set(KEY_VARIABLES):  # keys come as a unit: none of the AWS connection's stay beside them
            found = {k: v for k, v in found.items() if k not in KEY_VARIABLES}
        if "AWS_ENDPOINT_URL" in own:  # the S3-only endpoint would win over the connection's own
            found.pop("AWS_ENDPOINT_URL_S3", None)
        found.update(own)
        if found.get("AWS_SECRET_ACCESS_KEY") or found.get("AWS_SESSION_TOKEN"):
            from airflow.sdk.log import mask_secret

            for variable in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
                if found.get(variable):
                    mask_secret(found[variable])
        return found

    def catalog(self, settings: Settings) -> Catalog:
        """The catalog of `settings`; one it cannot open is refused naming the connection."""
        from alterflow.catalog.catalog import Catalog

        try:
            return Catalog(settings.catalog_url)
        except CatalogUnavailable as exc:
            raise self._unavailable(exc) from None

    def get_conn(self) -> Connection:
        """The Python API's connection (`alterflow.connect`'s) with the connection's settings."""
        from alterflow.api.connection import Connection

        settings = self.get_settings()
        try:
            return Connection(settings)
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
            message = f"cannot open the catalog of {self.source} (its Catalog URL){str(exc)[len(_CANNOT_OPEN) :]}"
            if isinstance(exc, CatalogLost):  # no server answering, for now: the task's retries may find one
                return CatalogLost(message, exc.reason)
            return AlterflowConnectionError(message)
        return exc
