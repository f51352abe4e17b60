"""Everything alterflow reads from its environment (docs/semantics.md, "The CLI's output and errors"): the `Settings` (where alterflow keeps
things and how it runs), read once by each door (the CLI, `alterflow.connect`, an Airflow task
through `AlterflowHook`, the spark-submit application) and passed down from there; and the few
variables that are not settings, each read here on its own: the kill-anywhere tests' crash points,
whether spark-submit started this process, and the environment a child process inherits.
Nothing else under `alterflow/` reads `os.environ` (tests/test_settings.py); writing a child's
environment (a JVM's, spark-submit's) is not reading one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from alterflow.errors import UserError, shown
from alterflow.object_store import (
    ENDPOINT_VARIABLES,
    KEY_VARIABLES,
    S3_SCHEMES,
    ObjectStoreError,
    ObjectStoreLocation,
    check_reachable,
    parse_object_store_uri,
)


class SettingError(UserError):
    """An environment variable holds a value alterflow cannot use."""


MAX_SECONDS = 100 * 366 * 86400  # a century: more is surely a typo (and overflows dates and timers)
MAX_MEGABYTES = 1024 * 1024  # a terabyte
_WHOLE = re.compile(r"[0-9]{1,20}")
_DECIMAL = re.compile(r"[0-9]{1,20}(\.[0-9]{0,20})?|\.[0-9]{1,20}")


def _bad(name: str, takes: str, text: str) -> SettingError:
    """`NAME must be <what it takes>, not '<value>'` (the value shortened and escaped)."""
    return SettingError(f"{name} must be {takes}, not {shown(text)}")


def _whole(env, name: str, default: int, least: int, most: int, unit: str) -> int:
    """A whole number from `least` to `most` read from `env[name]` (unset or blank: `default`)."""
    text = env.get(name)
    if text is None or text.strip() == "":
        return default
    takes = f"a whole number of {unit} from {least} to {most}"
    if not _WHOLE.fullmatch(text.strip()) or not least <= int(text.strip()) <= most:
        raise _bad(name, takes, text)
    return int(text.strip())


def _seconds(env, name: str, default: int) -> int:
    return _whole(env, name, default, 0, MAX_SECONDS, "seconds")


def _megabytes(env, name: str, default: int, least: int = 1) -> int:
    return _whole(env, name, default, least, MAX_MEGABYTES, "megabytes")


DEFAULT_LEASE_S = 30.0
TARGET_FILE_MB = 128  # a load rolls a tablet's file at about this much data (Arrow bytes)
LOAD_BUFFER_MB = 384  # rows one load holds in memory before it writes the largest tablet's file (files being written come on top)
SPARK_LOAD_MB = 4096  # `alterflow load --engine auto` loads inputs at least this big through Spark
RENEWALS_PER_LEASE = 6  # a 30 s lease is renewed every 5 s
BACKGROUND_NICE = 10  # the niceness of a worker task's conversion and check (docs/airflow.md#background-work-yields-the-cpu)


def lease_seconds(env: Mapping[str, str]) -> float:
    """ALTERFLOW_LEASE_S: how long a runner's lease on a job, or a load's on its transaction,
    lives without renewal (default 30). Holders renew it every sixth of that (5 s by default)."""
    text = env.get("ALTERFLOW_LEASE_S")
    if text is None or text.strip() == "":
        return DEFAULT_LEASE_S
    if not _DECIMAL.fullmatch(text.strip()) or not 0.5 <= float(text.strip()) <= 86400:
        raise _bad("ALTERFLOW_LEASE_S", "a number of seconds from 0.5 to 86400", text)
    return float(text.strip())


QUERY_ENGINES = ("auto", "local", "spark")


def query_engine(env: Mapping[str, str]) -> str:
    """ALTERFLOW_QUERY_ENGINE: which engine runs queries (`auto`, the default, `local` or `spark`);
    `SET engine = ...` changes it for one session."""
    text = (env.get("ALTERFLOW_QUERY_ENGINE") or "auto").strip()
    if text.lower() not in QUERY_ENGINES:
        raise _bad("ALTERFLOW_QUERY_ENGINE", "one of auto, local, spark", text)
    return text.lower()


_POOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,256}")


def long_steps_pool(env: Mapping[str, str] | None = None) -> str | None:
    """ALTERFLOW_AIRFLOW_LONG_POOL: the Airflow pool a schema change's long steps (a conversion, its
    check, a rewrite in the worker, GC's steps) take their slots from, so that the executor's other
    slots stay free for short steps (docs/deploy.md#priorities-and-worker-start-up); unset or blank:
    Airflow's default pool. Read where the DAG file is parsed; the pool must exist."""
    env = os.environ if env is None else env
    text = (env.get("ALTERFLOW_AIRFLOW_LONG_POOL") or "").strip()
    if text == "":
        return None
    if not _POOL_NAME.fullmatch(text):
        raise _bad("ALTERFLOW_AIRFLOW_LONG_POOL", "an Airflow pool's name (1 to 256 letters, digits, _ . -)", text)
    return text


_MEMORY = re.compile(r"[1-9][0-9]{0,6}[kmgt]?b?", re.IGNORECASE)


def spark_driver_memory(env: Mapping[str, str]) -> str:
    """ALTERFLOW_SPARK_DRIVER_MEMORY: the embedded Spark driver's memory, as Spark writes it
    (`2g`, `512m`; default 2g)."""
    text = env.get("ALTERFLOW_SPARK_DRIVER_MEMORY")
    if text is None or text.strip() == "":
        return "2g"
    if not _MEMORY.fullmatch(text.strip()):
        raise _bad("ALTERFLOW_SPARK_DRIVER_MEMORY", "an amount of memory as Spark writes it, such as 2g or 512m", text)
    return text.strip()


def spark_class_archive(env: Mapping[str, str]) -> pathlib.Path | None:
    """ALTERFLOW_SPARK_CLASS_ARCHIVE: the archive of Spark's classes a driver's JVM started on this
    machine maps at start-up (docs/heavyweight.md#spark-start-up); `off` for none. Default:
    `spark-classes-<environment>.jsa` in alterflow's folder of the user's cache (`$XDG_CACHE_HOME/alterflow`,
    else `~/.cache/alterflow`), one per Python environment (each has its own pyspark), or none
    where the user has no home folder."""
    text = (env.get("ALTERFLOW_SPARK_CLASS_ARCHIVE") or "").strip()
    if text.lower() == "off":
        return None
    if text:
        if "\0" in text:
            raise _bad("ALTERFLOW_SPARK_CLASS_ARCHIVE", "a file path or off", text)
        return pathlib.Path(text).expanduser().absolute()
    cache = env.get("XDG_CACHE_HOME") or os.environ.get("XDG_CACHE_HOME")
    if not cache or not os.path.isabs(cache):  # the XDG spec: a relative path is ignored
        home = env.get("HOME") or os.environ.get("HOME")
        if not home:
            try:
                home = str(pathlib.Path.home())
            except RuntimeError:  # no HOME and no password entry (a container's anonymous user)
                return None
        cache = os.path.join(home, ".cache")
    environment = hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]  # one archive per Python environment (its pyspark's jars)
    return pathlib.Path(cache).absolute() / "alterflow" / f"spark-classes-{environment}.jsa"


DEFAULT_CATALOG_NAME = "default"
CATALOG_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}")


def catalog_name(env: Mapping[str, str] | None = None) -> str:
    """ALTERFLOW_CATALOG_NAME: the catalog's name in the Airflow asset URIs of its tables
    (`alterflow://<catalog name>/<table>`); letters, digits, `_`, `.` and `-`, 63 at most. Read on
    its own where no `Settings` is made (a DAG file naming a table's asset when Airflow parses it)."""
    env = os.environ if env is None else env
    name = env.get("ALTERFLOW_CATALOG_NAME", DEFAULT_CATALOG_NAME)
    if not CATALOG_NAME.fullmatch(name):
        raise _bad("ALTERFLOW_CATALOG_NAME", "1 to 63 letters, digits, '_', '.' or '-' (not starting with '.' or '-')", name)
    return name


def home_from_env(env: Mapping[str, str] | None = None) -> pathlib.Path:
    """ALTERFLOW_HOME (default `.alterflow` under the working directory), absolute. Read on its own
    where no `Settings` may exist (the log of an internal error)."""
    env = os.environ if env is None else env
    return pathlib.Path(env.get("ALTERFLOW_HOME", ".alterflow")).absolute()


DEFAULT_MIGRATIONS = "migrations"


def migrations_from_env(env: Mapping[str, str] | None = None) -> str:
    """ALTERFLOW_MIGRATIONS: the migrations directory where none is named (`--dir`, the DAG's
    param); default `migrations`, relative to the working directory. Read on its own where no
    `Settings` is made (`alterflow migrate new`, the migrate DAGs' params when Airflow parses them)."""
    env = os.environ if env is None else env
    return env.get("ALTERFLOW_MIGRATIONS") or DEFAULT_MIGRATIONS


# URI schemes of object stores and distributed file systems (pyarrow's, fsspec's and Hadoop's
# names) other than s3:// and s3a://: refused by name, never taken as a relative folder
# (docs/storage.md: GCS, R2 and most others speak the S3 protocol, as s3:// with their endpoint)
OTHER_STORE_SCHEMES = frozenset(
    {"s3n", "gs", "gcs", "abfs", "abfss", "az", "adl", "wasb", "wasbs", "oss", "cos", "obs", "r2", "hdfs", "viewfs", "webhdfs"}
)
_URI_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def warehouse_root(text: str | os.PathLike, what: str, env: Mapping[str, str] | None = None) -> pathlib.Path | ObjectStoreLocation:
    """Where a warehouse setting puts the warehouse (`what`: the setting, as the error line names
    it): a folder, from a path relative to the working directory or a `file://` URI
    (`file:///srv/wh`, `file://localhost/srv/wh`, percent-escapes decoded), made absolute; or a
    bucket and prefix, from an `s3://` (or `s3a://`) URI, its endpoint and region from the URI's
    query or `env`'s AWS variables (alterflow.object_store). SettingError, one line, for
    anything else: another object store (`gs://bucket/wh`) is refused by name, never taken as a
    relative folder called `gs:`; another URI scheme, a blank value, a NUL byte."""
    import urllib.parse

    value = os.fspath(text)
    stripped = value.strip() if isinstance(value, str) else ""
    if not stripped or "\x00" in stripped:  # bytes, blank, a NUL byte
        raise _bad(what, "a folder path, a file:// URI or an s3:// URI", value)
    scheme = _URI_SCHEME.match(stripped)
    if scheme is None or not stripped[scheme.end() :].startswith("/"):
        return pathlib.Path(stripped).absolute()  # a path (a relative one may hold a ':', as `a:b`)
    name = scheme.group(1).lower()
    if name in S3_SCHEMES:
        try:
            return parse_object_store_uri(stripped, what, os.environ if env is None else env)
        except ObjectStoreError as exc:
            raise SettingError(str(exc)) from None
    if name in OTHER_STORE_SCHEMES:
        raise SettingError(
            f"{what} {shown(stripped, 120)}: {name}:// is not a warehouse this release keeps; s3:// is "
            "(GCS, R2, MinIO and Ceph through their S3 API, with AWS_ENDPOINT_URL: docs/deploy.md), or a folder"
        )
    if name != "file":
        raise SettingError(f"{what} must be a folder path, a file:// URI or an s3:// URI, not {shown(stripped, 120)}")
    parts = urllib.parse.urlsplit(stripped)
    if parts.netloc not in ("", "localhost") or parts.query or parts.fragment or not parts.path.startswith("/"):
        raise SettingError(f"{what} {shown(stripped, 120)}: a file:// URI names a folder on this machine, as file:///path")
    return pathlib.Path(urllib.parse.unquote(parts.path))


def warehouse_setting(warehouse: pathlib.Path | ObjectStoreLocation) -> str:
    """The ALTERFLOW_WAREHOUSE value that names `warehouse` in another process (a task's, a
    `spark-submit`'s): its folder, or its URI with the endpoint and region."""
    return warehouse.setting if isinstance(warehouse, ObjectStoreLocation) else str(warehouse)


DEFAULT_AIRFLOW_USERNAME = "admin"


@dataclass(frozen=True)
class Settings:
    home: pathlib.Path
    catalog_url: str
    warehouse: pathlib.Path | ObjectStoreLocation
    spark_master: str
    airflow_url: str | None
    txn_timeout_s: int = 3600
    gc_retention_s: int = 3600
    gc_orphan_retention_s: int = 3 * 24 * 3600  # files no catalog row names wait this long (docs/gc.md)
    lease_s: float = DEFAULT_LEASE_S
    target_file_mb: int = TARGET_FILE_MB
    load_buffer_mb: int = LOAD_BUFFER_MB
    spark_load_mb: int = SPARK_LOAD_MB
    catalog_name: str = DEFAULT_CATALOG_NAME
    spark_driver_memory: str = "2g"
    spark_class_archive: pathlib.Path | None = None
    query_engine: str = "auto"
    migrations: str = DEFAULT_MIGRATIONS
    airflow_username: str = DEFAULT_AIRFLOW_USERNAME
    airflow_password: str = field(default="", repr=False)
    background_nice: int = BACKGROUND_NICE

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        home = home_from_env(env)
        catalog_url = env.get("ALTERFLOW_CATALOG_URL") or f"sqlite:///{home / 'catalog.db'}"
        warehouse = warehouse_root(env.get("ALTERFLOW_WAREHOUSE") or home / "warehouse", "ALTERFLOW_WAREHOUSE", env)
        return cls(
            home=home,
            catalog_url=catalog_url,
            warehouse=warehouse,
            spark_master=env.get("ALTERFLOW_SPARK_MASTER", "local[*]"),
            airflow_url=env.get("ALTERFLOW_AIRFLOW_URL") or None,
            txn_timeout_s=_whole(env, "ALTERFLOW_TXN_TIMEOUT", 3600, 1, MAX_SECONDS, "seconds"),
            gc_retention_s=_seconds(env, "ALTERFLOW_GC_RETENTION", 3600),
            gc_orphan_retention_s=_seconds(env, "ALTERFLOW_GC_ORPHAN_RETENTION", 3 * 24 * 3600),
            lease_s=lease_seconds(env),
            target_file_mb=_megabytes(env, "ALTERFLOW_TARGET_FILE_MB", TARGET_FILE_MB),
            load_buffer_mb=_megabytes(env, "ALTERFLOW_LOAD_BUFFER_MB", LOAD_BUFFER_MB),
            spark_load_mb=_megabytes(env, "ALTERFLOW_SPARK_LOAD_MB", SPARK_LOAD_MB, least=0),
            catalog_name=catalog_name(env),
            spark_driver_memory=spark_driver_memory(env),
            spark_class_archive=spark_class_archive(env),
            query_engine=query_engine(env),
            migrations=migrations_from_env(env),
            airflow_username=env.get("ALTERFLOW_AIRFLOW_USERNAME") or DEFAULT_AIRFLOW_USERNAME,
            airflow_password=env.get("ALTERFLOW_AIRFLOW_PASSWORD", ""),
            background_nice=_whole(env, "ALTERFLOW_BACKGROUND_NICE", BACKGROUND_NICE, 0, 19, "nice levels"),
        )

    def ensure_dirs(self) -> list[pathlib.Path]:
        """The home and the warehouse, made when missing (the folders made are returned, parents
        first); SettingError, one line and nothing written, when either cannot be a folder this
        process writes (a file, under a file, read-only, not permitted)."""
        made: list[pathlib.Path] = []
        try:
            usable_folder(self.home, "ALTERFLOW_HOME", made)
            if isinstance(self.warehouse, ObjectStoreLocation):  # a bucket: reachable and listable, nothing made
                try:
                    check_reachable(self.warehouse, "the warehouse (ALTERFLOW_WAREHOUSE)")
                except ObjectStoreError as exc:
                    raise SettingError(str(exc)) from None
            else:
                usable_folder(self.warehouse, "the warehouse (ALTERFLOW_WAREHOUSE)", made)
        except SettingError:
            _remove_made(made)  # a home made for a warehouse that cannot be goes again
            raise
        return made

    @contextlib.contextmanager
    def dirs_for_catalog(self) -> Iterator[None]:
        """`ensure_dirs` for a body that opens the catalog: when the body fails (a catalog URL
        that names no database, a server that does not answer), the folders made for it go
        again, so that a refused command leaves no home or warehouse behind."""
        made = self.ensure_dirs()
        try:
            yield
        except BaseException:
            _remove_made(made)
            raise


def _remove_made(made: list[pathlib.Path]) -> None:
    """The folders `made` lists, deepest first, each only while empty."""
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            folder.rmdir()


def usable_folder(path: pathlib.Path, what: str, made: list[pathlib.Path] | None = None) -> None:
    """Make `path` a folder if it is none (adding the folders it made to `made`); SettingError
    naming `what` and why when it is a file, lies under a file, or cannot be written (a read-only
    file system stops root too)."""
    missing = [place for place in (path, *path.parents) if not place.exists() and not place.is_symlink()]
    try:
        path.mkdir(parents=True, exist_ok=True)
        if made is not None:
            made.extend(reversed(missing))
    except OSError as exc:
        raise SettingError(f"{what} {shown(str(path), 120)} cannot be a folder: {_not_a_folder(path, exc)}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
        raise SettingError(
            f"{what} {shown(str(path), 120)} is not writable: {'read-only file system' if read_only else 'permission denied'}"
        )


def _not_a_folder(path: pathlib.Path, exc: OSError) -> str:
    for place in (path, *path.parents):
        if place.exists() or place.is_symlink():
            if not place.is_dir():
                return "it is a file" if place == path else f"{shown(str(place), 120)} is a file"
            break
    return (exc.strerror or type(exc).__name__).lower()


# -- not settings: read where they are needed ----------------------------------------------------


def crash_points_wanted() -> str:
    """ALTERFLOW_CRASH_AT: the points where the kill-anywhere tests make this process die
    (`alterflow.crash_points`); never set in production. Read at each point, as the tests set it
    for the processes they start."""
    return os.environ.get("ALTERFLOW_CRASH_AT", "")


def started_by_spark_submit() -> bool:
    """Whether this process is a Python driver that spark-submit started (PySpark's own
    PYSPARK_GATEWAY_PORT names the JVM that waits for it): its SparkSession runs on that JVM."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def warehouse_keys(warehouse: pathlib.Path | ObjectStoreLocation) -> dict[str, str]:
    """The AWS key variables a process this one starts needs to reach `warehouse` with the keys
    this one reads it with (an Airflow connection's, which that process's environment lacks): all
    three, the unset ones empty, so none of its own environment's stays beside them."""
    if not isinstance(warehouse, ObjectStoreLocation) or not warehouse.keys:
        return {}
    return {name: dict(warehouse.keys).get(name, "") for name in KEY_VARIABLES}


def environment_with(aws: Mapping[str, str]) -> dict[str, str]:
    """This process's environment with `aws` (AWS variables from an Airflow connection) over it.
    Keys come as a pair: when `aws` names a key, none of the environment's keys stay beside it."""
    replaced = set(KEY_VARIABLES) if set(aws) & set(KEY_VARIABLES) else set()
    if set(aws) & set(ENDPOINT_VARIABLES):
        replaced |= set(ENDPOINT_VARIABLES)
    return {**{k: v for k, v in os.environ.items() if k not in replaced}, **aws}


def child_environment(defaults: Mapping[str, str]) -> dict[str, str]:
    """The environment a child process (spark-submit and the JVM it starts) inherits from this
    one, with `defaults` for the variables this one does not set."""
    return {**defaults, **os.environ}
