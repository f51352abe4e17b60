"""What Airflow's ProvidersManager reads of alterflow (the `apache_airflow_provider` entry point in
pyproject.toml): the connection type `alterflow`, its hook, and the fields of its form.

No Airflow import: Airflow calls `get_provider_info()` in every component when it lists providers,
and the form is declared here (`conn-fields`, `ui-field-behaviour`) rather than by the hook's
`get_connection_form_widgets` / `get_ui_field_behaviour`, which Airflow 3.2 deprecated."""

from __future__ import annotations

CONN_TYPE = "alterflow"
DEFAULT_CONN_ID = "alterflow_default"
HOOK_CLASS = "alterflow.airflow.hooks.AlterflowHook"

# The connection's own fields, kept in its extra (encrypted by Airflow with the rest of the extra).
CATALOG_URL_FIELD = "catalog_url"
WAREHOUSE_FIELD = "warehouse"
AWS_CONN_FIELD = "aws_conn_id"
# A bucket warehouse's credentials and endpoint in the connection's own fields, named as Airflow's
# AWS connection names them in its extras, and the AWS variable each stands for.
AWS_FIELDS = {
    "aws_access_key_id": "AWS_ACCESS_KEY_ID",
    "aws_secret_access_key": "AWS_SECRET_ACCESS_KEY",
    "aws_session_token": "AWS_SESSION_TOKEN",
    "endpoint_url": "AWS_ENDPOINT_URL",
    "region_name": "AWS_REGION",
}


# The connection form's fields (stored in the connection's extras under these names).
CONN_FIELDS = {
    CATALOG_URL_FIELD: {
        "label": "Catalog URL",
        "description": "SQLAlchemy URL of the catalog database (SQLite or PostgreSQL), without its password: "
        "put that in Catalog password. Empty: ALTERFLOW_CATALOG_URL of the worker.",
        "schema": {"type": ["string", "null"]},
    },
    WAREHOUSE_FIELD: {
        "label": "Warehouse",
        "description": "The folder of the data files or an s3:// URI, the same on every worker, triggerer and "
        "api-server. Empty: ALTERFLOW_WAREHOUSE of the worker.",
        "schema": {"type": ["string", "null"]},
    },
    AWS_CONN_FIELD: {
        "label": "AWS connection",
        "description": "For an s3:// warehouse: an Airflow AWS connection whose keys, region and "
        "endpoint_url to use. Empty: aws_default where it exists and the worker has no AWS keys.",
        "schema": {"type": ["string", "null"]},
    },
    "aws_access_key_id": {
        "label": "AWS access key id",
        "description": "For an s3:// warehouse, over the AWS connection's. Empty: the AWS connection's or the worker's.",
        "schema": {"type": ["string", "null"]},
    },
    "aws_secret_access_key": {
        "label": "AWS secret access key",
        "description": "With the access key id (Airflow masks it in task logs).",
        "schema": {"type": ["string", "null"], "format": "password"},
    },
    "endpoint_url": {
        "label": "S3 endpoint URL",
        "description": "A store that is not AWS (MinIO, Ceph, GCS's S3 API), as http://host:port.",
        "schema": {"type": ["string", "null"]},
    },
    "region_name": {
        "label": "AWS region",
        "description": "The bucket's region.",
        "schema": {"type": ["string", "null"]},
    },
}


def get_provider_info() -> dict:
    return {
        "package-name": "alterflow",
        "name": "alterflow",
        "description": "Online schema changes for analytic tables: the alterflow connection type, its hook "
        "(AlterflowHook), AlterflowLoadOperator and AlterflowSchemaChangeOperator.",
        "hooks": [{"integration-name": "alterflow", "python-modules": ["alterflow.airflow.hooks"]}],
        "operators": [{"integration-name": "alterflow", "python-modules": ["alterflow.airflow.operators"]}],
        "triggers": [{"integration-name": "alterflow", "python-modules": ["alterflow.airflow.triggers"]}],
        "connection-types": [
            {
                "hook-class-name": HOOK_CLASS,
                "hook-name": "alterflow",
                "connection-type": CONN_TYPE,
                "ui-field-behaviour": {
                    "hidden-fields": ["host", "schema", "login", "port", "extra"],
                    "relabeling": {"password": "Catalog password"},
                    "placeholders": {
                        CATALOG_URL_FIELD: "postgresql+psycopg://alterflow@catalog-db:5432/alterflow",
                        WAREHOUSE_FIELD: "/srv/alterflow/warehouse",
                        "password": "the catalog database's password, if its URL names a user",
                    },
                },
                "conn-fields": CONN_FIELDS,
            }
        ],
    }
