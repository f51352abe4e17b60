"""The connection type `alterflow` and AlterflowHook: Airflow finds the type, its hook and its
form's fields through the installed package's provider entry point; a configured connection
alterflow_default is what the hook, the schema-change DAG and the Schema changes page use; without
it, the ALTERFLOW_* environment, as before. Every refusal is one line."""

from __future__ import annotations

import json
import os

import pytest
from airflow.sdk import BaseHook

import alterflow
from alterflow.airflow.hooks import AlterflowConnectionError, AlterflowHook
from alterflow.airflow.provider import get_provider_info
from alterflow.settings import Settings
from tests.support.dags import SCHEMA_CHANGE, alterflow_env, load_dag, run_dag


def connection(monkeypatch, conn_id: str = "alterflow_default", conn_type: str = "alterflow", password: str | None = None, **extra):
    """An Airflow connection defined through the environment (AIRFLOW_CONN_<ID>), as JSON."""
    conn = {"conn_type": conn_type, "extra": extra} | ({"password": password} if password is not None else {})
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(conn))


@pytest.fixture
def env(monkeypatch, tmp_path, airflow_db) -> Settings:
    """The environment's settings (a catalog nothing uses unless the hook falls back to it)."""
    monkeypatch.delenv("AIRFLOW_CONN_ALTERFLOW_DEFAULT", raising=False)
    return alterflow_env(monkeypatch, tmp_path / "env")


def test_airflow_lists_the_connection_type_its_hook_and_its_form():
    from airflow.providers_manager import ProvidersManager
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    manager = ProvidersManager()  # the api-server's: the form
    assert manager.providers["alterflow"].data == {**get_provider_info(), "documentation-url": None}
    hook = ProvidersManagerTaskRuntime().hooks["alterflow"]  # a task's: BaseHook.get_hook of a connection
    assert (hook.hook_class_name, hook.connection_id_attribute_name, hook.hook_name) == (
        "alterflow.airflow.hooks.AlterflowHook",
        "alterflow_conn_id",
        "alterflow",
    )
    assert hook.connection_testable
    fields = {
        name: widget.field["schema"]["title"]
        for name, widget in manager.connection_form_widgets.items()
        if name.startswith("extra__alterflow__")
    }
    assert fields == {
        "extra__alterflow__catalog_url": "Catalog URL",
        "extra__alterflow__warehouse": "Warehouse",
        "extra__alterflow__aws_conn_id": "AWS connection",
        "extra__alterflow__aws_access_key_id": "AWS access key id",
        "extra__alterflow__aws_secret_access_key": "AWS secret access key",
        "extra__alterflow__endpoint_url": "S3 endpoint URL",
        "extra__alterflow__region_name": "AWS region",
    }
    behaviour = manager.field_behaviours["alterflow"]
    assert set(behaviour["hidden_fields"]) == {"host", "schema", "login", "port", "extra"}
    assert behaviour["relabeling"] == {"password": "Catalog password"}


def test_the_provider_info_is_what_airflows_schema_asks_for():
    import importlib.resources

    import jsonschema

    schema = json.loads(importlib.resources.files("airflow").joinpath("provider_info.schema.json").read_text())
    jsonschema.validate(get_provider_info(), schema)


def test_without_a_connection_the_hook_uses_the_environment(env):
    hook = AlterflowHook()
    assert hook.get_settings() == env and "environment" in hook.source
    with hook.get_conn() as af:
        assert af.settings.catalog_url == env.catalog_url and af.warehouse == env.warehouse


def test_a_connection_to_a_bucket_warehouse_opens_it(env, monkeypatch, tmp_path, s3_bucket):
    """The Warehouse field as an s3:// URI: the hook's Python API connection (the load operator's,
    the Test button's) reaches the same bucket, with the endpoint the URI names."""
    from alterflow.object_store import ObjectStoreLocation

    uri = f"s3://{s3_bucket}/wh?endpoint_override={os.environ['AWS_ENDPOINT_URL'][len('http://') :]}&scheme=http"
    connection(monkeypatch, catalog_url=f"sqlite:///{tmp_path / 'conn.db'}", warehouse=uri)
    with AlterflowHook().get_conn() as af:
        assert isinstance(af.warehouse, ObjectStoreLocation) and af.warehouse.bucket == s3_bucket
        af.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
        assert af.table("t").scan().to_arrow().num_rows == 1


def test_a_bucket_warehouse_takes_its_keys_and_endpoint_from_the_connections(env, monkeypatch, tmp_path, s3_bucket, s3_server):
    """A worker with no AWS variables at all: the keys, region and endpoint come from the alterflow
    connection's own fields, else from the AWS connection it names, else from `aws_default`; they
    travel with the location (to Spark's tasks, and into spark-submit's environment: `warehouse_keys`)."""
    from alterflow.settings import warehouse_keys

    aws = s3_server.env()
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    catalog_url = f"sqlite:///{tmp_path / 'conn.db'}"
    own = {
        "aws_access_key_id": aws["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": aws["AWS_SECRET_ACCESS_KEY"],
        "endpoint_url": aws["AWS_ENDPOINT_URL"],
        "region_name": "us-east-1",
    }
    connection(monkeypatch, catalog_url=catalog_url, warehouse=f"s3://{s3_bucket}/wh", **own)
    with AlterflowHook().get_conn() as af:
        af.sql("CREATE TABLE t (id INT); INSERT INTO t VALUES (1)")
        assert af.table("t").scan().to_arrow().num_rows == 1
        assert warehouse_keys(af.warehouse) == {
            "AWS_ACCESS_KEY_ID": aws["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": aws["AWS_SECRET_ACCESS_KEY"],
            "AWS_SESSION_TOKEN": "",
        }
        assert af.warehouse.endpoint == aws["AWS_ENDPOINT_URL"].removeprefix("http://")

    # The Amazon provider's connections: a named one, and aws_default without a name.
    as_aws = {"conn_type": "aws", "login": aws["AWS_ACCESS_KEY_ID"], "password": aws["AWS_SECRET_ACCESS_KEY"]}
    as_aws["extra"] = {"region_name": "us-east-1", "service_config": {"s3": {"endpoint_url": aws["AWS_ENDPOINT_URL"]}}}
    for conn_id, named in (("minio", {"aws_conn_id": "minio"}), ("aws_default", {})):
        monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(as_aws))
        connection(monkeypatch, catalog_url=catalog_url, warehouse=f"s3://{s3_bucket}/wh", **named)
        with AlterflowHook().get_conn() as af:
            assert af.table("t").scan().to_arrow().num_rows == 1, conn_id
            assert dict(af.warehouse.keys)["AWS_ACCESS_KEY_ID"] == aws["AWS_ACCESS_KEY_ID"]
        monkeypatch.delenv(f"AIRFLOW_CONN_{conn_id.upper()}")

    # Keys and endpoints are each taken from one source: the alterflow connection's own key pair
    # without the AWS connection's session token, its own endpoint over an S3-only one anywhere.
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")  # the worker's, nowhere
    as_aws["extra"] = {**as_aws["extra"], "aws_session_token": "a-token-of-other-keys"}
    monkeypatch.setenv("AIRFLOW_CONN_MINIO", json.dumps(as_aws))
    connection(monkeypatch, catalog_url=catalog_url, warehouse=f"s3://{s3_bucket}/wh", aws_conn_id="minio", **own)
    with AlterflowHook().get_conn() as af:
        assert af.table("t").scan().to_arrow().num_rows == 1
        assert set(dict(af.warehouse.keys)) == {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
        assert warehouse_keys(af.warehouse)["AWS_SESSION_TOKEN"] == ""  # spark-submit's own token blanked
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3")

    connection(monkeypatch, catalog_url=catalog_url, warehouse=f"s3://{s3_bucket}/wh", aws_conn_id="nobody")
    with pytest.raises(AlterflowConnectionError, match=r"^Airflow connection alterflow_default: its AWS connection nobody is not defined$"):
        AlterflowHook().get_settings()
    connection(monkeypatch, catalog_url=catalog_url, warehouse=f"s3://{s3_bucket}/wh", aws_access_key_id="only-the-id")
    with pytest.raises(AlterflowConnectionError, match=r"AWS_ACCESS_KEY_ID is set without AWS_SECRET_ACCESS_KEY"):
        AlterflowHook().get_settings()


def test_a_configured_connection_is_used_and_its_password_goes_into_the_url(env, monkeypatch, tmp_path):
    url, warehouse = f"sqlite:///{tmp_path / 'conn.db'}", tmp_path / "conn-warehouse"
    connection(monkeypatch, catalog_url=url, warehouse=str(warehouse))
    with AlterflowHook().get_conn() as af:
        af.sql("CREATE TABLE from_the_connection (id INT NOT NULL, PRIMARY KEY (id))")
        assert (af.settings.catalog_url, af.warehouse, af.tables()) == (url, warehouse, ["from_the_connection"])
    with alterflow.connect() as af:  # the environment's catalog: untouched
        assert af.tables() == []
    found = BaseHook.get_hook("alterflow_default")  # Airflow's own way to a connection's hook
    assert isinstance(found, AlterflowHook) and found.alterflow_conn_id == "alterflow_default"

    connection(monkeypatch, catalog_url="postgresql+psycopg://alterflow@db:5432/catalog", password="p@ss/word")
    settings = AlterflowHook().get_settings()
    assert settings.catalog_url == "postgresql+psycopg://alterflow:p%40ss%2Fword@db:5432/catalog"
    assert settings.warehouse == env.warehouse  # an empty field: the environment's

    connection(monkeypatch, conn_id="sales_catalog", **{"extra__alterflow__catalog_url": url})  # the older forms' key
    assert AlterflowHook("sales_catalog").get_settings().catalog_url == url


@pytest.mark.parametrize(
    ("conn_id", "conn", "message"),
    [
        ("nobody_made_it", None, "Airflow connection nobody_made_it is not defined"),
        ("alterflow_default", {"conn_type": "postgres"}, "is of type 'postgres', not alterflow"),
        ("alterflow_default", {"catalog_url": "not a url"}, "Catalog URL must be a database URL"),
        ("alterflow_default", {"catalog_url": 42}, "Catalog URL must be a database URL"),
        ("alterflow_default", {"catalog_url": "sqlite:////tmp/c.db", "password": "x"}, "needs a user name in the Catalog URL"),
        ("alterflow_default", {"catalog_url": "postgresql://u:old@h/db", "password": "x"}, "keep only the field"),
        ("alterflow_default", {"password": "x"}, "a Catalog password needs the Catalog URL"),
        ("alterflow_default", {"warehouse": ["a"]}, "Warehouse must be a folder path"),
        (
            "alterflow_default",
            {"warehouse": "s3://Bucket/wh"},
            "Warehouse 's3://Bucket/wh': 'Bucket' is not a bucket name",
        ),
        ("alterflow_default", {"warehouse": "ftp://host/wh"}, "Warehouse must be a folder path, a file:// URI or an s3:// URI"),
    ],
)
def test_a_connection_that_cannot_be_used_is_refused_in_one_line(env, monkeypatch, conn_id, conn, message):
    if conn is not None:
        conn = dict(conn)
        connection(monkeypatch, conn_id, conn.pop("conn_type", "alterflow"), conn.pop("password", None), **conn)
    with pytest.raises(AlterflowConnectionError) as raised:
        AlterflowHook(conn_id).get_settings()
    text = str(raised.value)
    assert message in text and "\n" not in text and len(text) <= 300, text


def test_the_test_button_opens_the_catalog_or_says_why_not(env, monkeypatch, tmp_path):
    connection(monkeypatch, catalog_url=f"sqlite:///{tmp_path / 'conn.db'}", warehouse=str(tmp_path / "w"))
    assert AlterflowHook().test_connection() == (True, f"catalog open: 0 tables; warehouse {tmp_path / 'w'}")
    connection(monkeypatch, catalog_url="sqlite:////no/such/folder/catalog.db")
    ok, line = AlterflowHook().test_connection()
    assert not ok and line.startswith("cannot open the catalog of Airflow connection alterflow_default (its Catalog URL)"), line


def test_the_schema_change_dag_and_the_page_use_the_configured_connection(env, monkeypatch, tmp_path):
    url, warehouse = f"sqlite:///{tmp_path / 'conn.db'}", tmp_path / "conn-warehouse"
    connection(monkeypatch, catalog_url=url, warehouse=str(warehouse))
    with alterflow.connect(catalog_url=url, warehouse=warehouse) as af:
        af.sql("CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))")

    state, tasks, run = run_dag(load_dag(SCHEMA_CHANGE), {"table": "t", "statement": "ALTER TABLE t ADD COLUMN n INT"})

    assert state == "success", tasks
    with alterflow.connect(catalog_url=url, warehouse=warehouse) as af:
        [job] = af.table("t").jobs()
        assert (job.request_id, job.state, job.to_version) == (run.run_id, "FINISHED", 2)
    assert not env.warehouse.exists()  # the environment's catalog was never opened

    from alterflow.airflow.web import open_catalog

    settings, catalog = open_catalog()
    assert (settings.catalog_url, [t.name for t in catalog.tables()]) == (url, ["t"])


def test_a_connection_whose_catalog_server_does_not_answer_is_a_passing_state(env, monkeypatch, tmp_path):
    """An Airflow connection whose Catalog URL names a PostgreSQL server that does not answer (a
    restart): CatalogLost, naming the connection, which a task retries, not a refusal for good."""
    from alterflow.catalog.catalog_errors import CatalogLost
    from tests.support.ports import free_port

    url = f"postgresql://postgres@127.0.0.1:{free_port()}/alterflow"
    connection(monkeypatch, conn_id="alterflow_down", catalog_url=url, warehouse=str(tmp_path / "wh"))
    with pytest.raises(CatalogLost) as lost:
        AlterflowHook("alterflow_down").get_conn()
    assert str(lost.value).startswith("cannot open the catalog of Airflow connection alterflow_down (its Catalog URL): connection failed")
    assert lost.value.transient
