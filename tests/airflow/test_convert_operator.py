"""The conversion task's spark-submit: the master comes from the `spark_default` connection and is
`local[*]` when there is none (the provider's own fallback would be yarn); the Spark settings are
those of `alterflow.rewrite.spark_submit`, the application the repo's spark_jobs/convert_history.py."""

from __future__ import annotations

import pathlib

import pytest

from alterflow.airflow.operators import ConvertHistoryOperator

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("connection", "master"),
    [
        (None, "local[*]"),
        ('{"conn_type": "spark", "host": "local[2]"}', "local[2]"),
        ("spark://spark-master:7077", "spark://spark-master:7077"),
    ],
)
def test_master_from_the_spark_default_connection(monkeypatch, connection, master, airflow_db):
    if connection is None:
        monkeypatch.delenv("AIRFLOW_CONN_SPARK_DEFAULT", raising=False)
    else:
        monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", connection)
    operator = ConvertHistoryOperator(task_id="convert", job_id="1")
    operator.choose_connection()
    hook = operator._get_hook()
    assert hook._connection["master"] == master
    assert not hook._is_yarn and not hook._is_kubernetes


@pytest.mark.parametrize(
    ("connection", "given", "expected"),
    [
        (None, None, "127.0.0.1"),  # local[*]: the driver binds to loopback
        ('{"conn_type": "spark", "host": "local[2]"}', None, "127.0.0.1"),
        ("spark://spark-master:7077", None, None),  # a cluster's executors must reach the driver
        ("spark://spark-master:7077", "10.0.0.5", "10.0.0.5"),  # what the environment says wins
    ],
)
def test_spark_local_ip_only_defaults_to_loopback_on_a_local_master(monkeypatch, connection, given, expected, airflow_db):
    from alterflow.airflow.operators import _local_master, _submit_env

    if connection is None:
        monkeypatch.delenv("AIRFLOW_CONN_SPARK_DEFAULT", raising=False)
    else:
        monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", connection)
    if given is None:
        monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    else:
        monkeypatch.setenv("SPARK_LOCAL_IP", given)
    assert _submit_env(_local_master("spark_default")).get("SPARK_LOCAL_IP") == expected


def test_the_application_is_the_repos_convert_history():
    operator = ConvertHistoryOperator(task_id="convert", job_id="{{ ti.xcom_pull(task_ids='start')['job_id'] }}")
    assert pathlib.Path(operator.application) == ROOT / "spark_jobs" / "convert_history.py"
    assert "job_id" in operator.template_fields and operator._conn_id == "spark_default"
