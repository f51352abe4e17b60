"""`alterflow.connect()`: its settings, its tables and statements, and what a closed connection or
a bad argument says."""

from __future__ import annotations

import subprocess
import sys

import pytest

import alterflow
from alterflow.api.connection import ConnectionClosed
from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.results import Done, ResultSet


def test_connect_defaults_to_the_cli_settings(tmp_path):
    env = {"ALTERFLOW_HOME": str(tmp_path / "home"), "ALTERFLOW_GC_RETENTION": "120"}
    with alterflow.connect(env=env) as af:
        assert af.settings.catalog_url == f"sqlite:///{tmp_path / 'home' / 'catalog.db'}"
        assert af.warehouse == tmp_path / "home" / "warehouse"
        assert af.settings.gc_retention_s == 120
        assert af.tables() == []
    assert af.closed


def test_connect_takes_the_catalog_and_warehouse(api, settings):
    assert api.settings.catalog_url == settings.catalog_url
    assert api.warehouse == settings.warehouse
    assert isinstance(api.sql("CREATE TABLE a (id INT NOT NULL, v STRING, PRIMARY KEY (id))"), Done)
    api.sql("CREATE TABLE b (x INT); INSERT INTO b VALUES (1), (2)")
    assert api.tables() == ["a", "b"]
    assert api.table("A").name == "a"  # names are case-insensitive
    result = api.sql("SHOW SCHEMA VERSIONS FROM b")
    assert isinstance(result, ResultSet) and [r[0] for r in result.rows] == [1]


def test_a_closed_connection_refuses_every_call(api):
    api.sql("CREATE TABLE a (x INT)")
    table = api.table("a")
    api.close()
    for call in (
        api.tables,
        lambda: api.table("a"),
        lambda: api.sql("SHOW ALTER TABLE COLUMN"),
        table.schema,
        table.scan,
        lambda: table.append([]),
    ):
        with pytest.raises(ConnectionClosed, match="^the alterflow connection is closed; open another with alterflow.connect"):
            call()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda af: af.table("nope"), "unknown table nope"),
        (lambda af: af.table(5), "table: a table name is a string, not int"),
        (lambda af: af.sql(b"SELECT 1"), "sql: a statement is a string, not bytes"),
        (lambda af: af.sql("  "), "sql: no statement to run"),
        (lambda af: af.sql("ALTER TABLE nope ADD COLUMN c INT"), "unknown table nope"),
    ],
)
def test_bad_calls_are_one_line(api, call, message):
    with pytest.raises(alterflow.UserError) as caught:
        call(api)
    assert message in str(caught.value)
    assert api.tables() == []


def test_bad_connect_arguments_are_one_line(tmp_path):
    env = {"ALTERFLOW_HOME": str(tmp_path)}
    with pytest.raises(alterflow.UserError, match="^connect: catalog_url must be a database URL, not ''$"):
        alterflow.connect(catalog_url="", env=env)
    with pytest.raises(alterflow.UserError, match="^connect: warehouse must be a folder path or an s3:// URI, not '3'$"):
        alterflow.connect(warehouse=3, env=env)
    with pytest.raises(alterflow.UserError, match=r"^connect: warehouse 's3://b/wh': 'b' is not a bucket name"):
        alterflow.connect(warehouse="s3://b/wh", env=env)
    with pytest.raises(alterflow.UserError, match="^ALTERFLOW_WAREHOUSE 'gs://b': gs:// is not a warehouse this release keeps; s3:// is"):
        alterflow.connect(env={**env, "ALTERFLOW_WAREHOUSE": "gs://b"})
    with pytest.raises(alterflow.UserError, match="cannot open the catalog of ALTERFLOW_CATALOG_URL"):
        alterflow.connect(catalog_url="nosuchdriver://x/y", env=env)
    with pytest.raises(alterflow.UserError, match="ALTERFLOW_LEASE_S"):
        alterflow.connect(env={**env, "ALTERFLOW_LEASE_S": "soon"})
    assert not isinstance(UnknownObject("x"), ConnectionClosed)
    assert list(tmp_path.iterdir()) == []


def test_a_home_or_warehouse_connect_cannot_write_is_one_line(catalog_url, tmp_path):
    """A file, a folder under a file, a read-only mount (root is not stopped by chmod)."""
    from tests.support.mounts import tmpfs

    afile = tmp_path / "afile"
    afile.write_text("")
    env = {"ALTERFLOW_HOME": str(tmp_path / "home")}
    with pytest.raises(alterflow.UserError) as caught:
        alterflow.connect(catalog_url, env={"ALTERFLOW_HOME": str(afile / "sub")})
    assert str(caught.value) == f"ALTERFLOW_HOME '{afile}/sub' cannot be a folder: '{afile}' is a file"
    with pytest.raises(alterflow.UserError) as caught:
        alterflow.connect(catalog_url, warehouse=afile, env=env)
    assert str(caught.value) == f"the warehouse (ALTERFLOW_WAREHOUSE) '{afile}' cannot be a folder: it is a file"
    with tmpfs(tmp_path / "ro", "1m", read_only=True) as ro:
        with pytest.raises(alterflow.UserError) as caught:
            alterflow.connect(catalog_url, warehouse=ro, env=env)
        assert str(caught.value) == f"the warehouse (ALTERFLOW_WAREHOUSE) '{ro}' is not writable: read-only file system"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "ro"], "a refused connect made a home or a catalog"


def test_import_alterflow_loads_nothing_until_used():
    """`import alterflow` is free: the API's names load on first use (a lightweight CLI statement
    imports neither SQLAlchemy nor pyarrow through the package)."""
    code = (
        "import sys, alterflow; "
        "assert 'sqlalchemy' not in sys.modules and 'pyarrow' not in sys.modules, sorted(sys.modules); "
        "assert alterflow.connect.__module__ == 'alterflow.api.connection'; "
        "assert sorted(set(alterflow.__all__) - set(dir(alterflow))) == []; "
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = alterflow.nothing
