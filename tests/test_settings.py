"""Settings from the environment: a bad value is one line naming the variable, and changes nothing;
and nothing but alterflow/settings.py reads the environment (the rest is handed its Settings)."""

from __future__ import annotations

import ast
import pathlib

import pytest

from alterflow.cli import command as cli
from alterflow.settings import SettingError, Settings


@pytest.mark.parametrize("name", ["sales", "prod.eu-1", "a_b", "x" * 63])
def test_a_catalog_name_is_taken_as_given(name):
    assert Settings.from_env({"ALTERFLOW_HOME": "/tmp/h", "ALTERFLOW_CATALOG_NAME": name}).catalog_name == name


def test_the_catalog_name_defaults_to_default():
    assert Settings.from_env({"ALTERFLOW_HOME": "/tmp/h"}).catalog_name == "default"


@pytest.mark.parametrize("name", ["", "two words", "a/b", "-x", ".x", "x" * 64, "ü"])
def test_a_bad_catalog_name_is_one_line(name, monkeypatch, tmp_path, capsys):
    with pytest.raises(SettingError, match="ALTERFLOW_CATALOG_NAME must be"):
        Settings.from_env({"ALTERFLOW_HOME": "/tmp/h", "ALTERFLOW_CATALOG_NAME": name})
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_CATALOG_NAME", name)
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT)"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ALTERFLOW_CATALOG_NAME must be") and err.count("\n") == 1
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(
    ("text", "pool"), [(None, None), ("", None), ("  ", None), ("alterflow_long_steps", "alterflow_long_steps"), (" p.1-x ", "p.1-x")]
)
def test_the_long_steps_pool_is_a_name_or_none(text, pool):
    from alterflow.settings import long_steps_pool

    assert long_steps_pool({} if text is None else {"ALTERFLOW_AIRFLOW_LONG_POOL": text}) == pool


@pytest.mark.parametrize("text", ["two words", "a/b", "x" * 257, "ü", "a;b"])
def test_a_bad_long_steps_pool_is_one_line(text):
    from alterflow.settings import long_steps_pool

    with pytest.raises(SettingError, match="^ALTERFLOW_AIRFLOW_LONG_POOL must be an Airflow pool's name") as refused:
        long_steps_pool({"ALTERFLOW_AIRFLOW_LONG_POOL": text})
    assert "\n" not in str(refused.value)


# -- the warehouse: a folder path or a file:// URI, never an object store read as a folder ---------


@pytest.mark.parametrize(
    ("text", "folder"),
    [
        ("/srv/wh", "/srv/wh"),
        ("file:///srv/wh", "/srv/wh"),
        ("FILE:///srv/wh", "/srv/wh"),
        ("file://localhost/srv/my%20wh", "/srv/my wh"),
        ("file:/srv/wh", "/srv/wh"),
        ("  /srv/wh  ", "/srv/wh"),
        ("rel/wh", "{cwd}/rel/wh"),
        ("a:b", "{cwd}/a:b"),  # a relative folder whose name holds a colon, not a URI
    ],
)
def test_the_warehouse_is_a_folder_path_or_a_file_uri(text, folder):
    settings = Settings.from_env({"ALTERFLOW_HOME": "/tmp/h", "ALTERFLOW_WAREHOUSE": text})
    assert settings.warehouse == pathlib.Path(folder.format(cwd=pathlib.Path.cwd()))


def test_the_warehouse_defaults_to_the_home():
    assert Settings.from_env({"ALTERFLOW_HOME": "/tmp/h"}).warehouse == pathlib.Path("/tmp/h/warehouse")
    assert Settings.from_env({"ALTERFLOW_HOME": "/tmp/h", "ALTERFLOW_WAREHOUSE": ""}).warehouse == pathlib.Path("/tmp/h/warehouse")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s3://Bucket/wh", "ALTERFLOW_WAREHOUSE 's3://Bucket/wh': 'Bucket' is not a bucket name (3 to 63 lowercase"),
        ("S3A://bucket/wh?x=1", "ALTERFLOW_WAREHOUSE 'S3A://bucket/wh?x=1': unknown option 'x'"),
        ("gs://bucket", "ALTERFLOW_WAREHOUSE 'gs://bucket': gs:// is not a warehouse this release keeps; s3:// is (GCS, R2"),
        ("abfss://c@acct.dfs.core.windows.net/wh", "abfss:// is not a warehouse this release keeps"),
        ("hdfs://namenode:8020/wh", "hdfs:// is not a warehouse this release keeps"),
        ("http://example.com/wh", "ALTERFLOW_WAREHOUSE must be a folder path, a file:// URI or an s3:// URI, not 'http://example.com/wh'"),
        ("file://otherhost/srv/wh", "a file:// URI names a folder on this machine, as file:///path"),
        ("file:///srv/wh?x=1", "a file:// URI names a folder on this machine"),
        ("   ", "ALTERFLOW_WAREHOUSE must be a folder path, a file:// URI or an s3:// URI, not '   '"),
        ("/srv/\x00wh", "ALTERFLOW_WAREHOUSE must be a folder path, a file:// URI or an s3:// URI"),
    ],
)
def test_a_warehouse_that_is_no_folder_is_one_line_and_makes_nothing(text, message, monkeypatch, tmp_path, capsys):
    with pytest.raises(SettingError) as raised:
        Settings.from_env({"ALTERFLOW_HOME": "/tmp/h", "ALTERFLOW_WAREHOUSE": text})
    assert message in str(raised.value) and "\n" not in str(raised.value), raised.value
    if "\x00" in text:
        return  # an environment variable cannot hold a NUL byte
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_WAREHOUSE", text)
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT)"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ALTERFLOW_WAREHOUSE") and message in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []  # no home, and no folder named 's3:' in the working directory


def test_an_s3_warehouse_is_a_bucket_and_prefix_with_the_environments_endpoint():
    from alterflow.object_store import ObjectStoreLocation

    env = {
        "ALTERFLOW_HOME": "/tmp/h",
        "ALTERFLOW_WAREHOUSE": "s3://bucket/wh/",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_REGION": "eu-west-1",
    }
    assert Settings.from_env(env).warehouse == ObjectStoreLocation("bucket", "wh", "127.0.0.1:9000", "http", "eu-west-1")


def test_an_s3_warehouse_that_cannot_be_used_is_one_line_and_makes_nothing(s3_bucket, monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ALTERFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ALTERFLOW_WAREHOUSE", "s3://no-such-bucket-here/wh")
    assert cli.main(["sql", "-e", "CREATE TABLE t (a INT)"]) == 1
    err = capsys.readouterr().err
    assert (
        err == "error: the warehouse (ALTERFLOW_WAREHOUSE) s3://no-such-bucket-here/wh: the bucket 'no-such-bucket-here' does not exist\n"
    )
    assert list(tmp_path.iterdir()) == []


# -- nothing but alterflow/settings.py reads the environment --------------------------------------

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("alterflow", "catalog", "expectations", "spark_jobs")  # the folders installed as alterflow.*
SETTINGS = ROOT / "alterflow" / "settings.py"
# Writing an environment for what this process starts (a JVM, spark-submit, a library) is no read.
WRITES = {"setdefault", "update", "pop"}


def environment_reads(source: str) -> list[int]:
    """The lines of `source` that read the process's environment: `os.environ` used in any way but
    an assignment, a deletion or one of WRITES; `os.getenv`; `from os import environ` or `getenv`."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            lines += [node.lineno for alias in node.names if alias.name in ("environ", "environb", "getenv", "getenvb")]
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"):
            continue
        if node.attr in ("getenv", "getenvb"):
            lines.append(node.lineno)
        elif node.attr in ("environ", "environb"):
            parent = parents[node]
            written = isinstance(parent, ast.Subscript) and isinstance(parent.ctx, (ast.Store, ast.Del))
            called = isinstance(parent, ast.Attribute) and parent.attr in WRITES and isinstance(parents[parent], ast.Call)
            if not (written or called):
                lines.append(node.lineno)
    return sorted(lines)


def test_the_reads_are_found():
    source = """
import os
from os import environ
a = os.environ.get("A")
b = os.getenv("B")
c = dict(os.environ)
d = "D" in os.environ
e = os.environ["E"]
os.environ["F"] = "1"
os.environ.setdefault("G", "1")
del os.environ["H"]
"""
    assert environment_reads(source) == [3, 4, 5, 6, 7, 8]


def test_only_the_settings_module_reads_the_environment():
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path != SETTINGS:
                found += [f"{path.relative_to(ROOT)}:{line}" for line in environment_reads(path.read_text())]
    assert found == [], "read through alterflow.settings (a Settings field, passed down) instead"
