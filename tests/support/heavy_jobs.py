"""Helpers shared by the heavyweight-job tests (docs/heavyweight.md): driving the steps one at a time and
looking at what a job left in the catalog and on disk."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import sys

import pyarrow.parquet as pq

from alterflow.catalog.catalog import AlterJob
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.models import SchemaVersionRow
from alterflow.engine.session import SHOW_ALTER_COLUMNS, Session
from alterflow.rewrite.tablet_conversion import ConversionResult
from alterflow.store.layout import absolute, index_dir
from alterflow.workflow import alter_steps, heavy_steps
from alterflow.workflow.request import AlterRequest
from tests.support import child_pythonpath
from tests.support.catalog_rows import index_state, txn_state  # noqa: F401 (the tests import them from here too)
from tests.support.statements import sql, versions  # noqa: F401


def short_leases(session: Session, monkeypatch, seconds: float) -> None:
    """Leases of `seconds` for the processes a test spawns (their environment) and for this
    process's session (its Settings, read once when it was made)."""
    monkeypatch.setenv("ALTERFLOW_LEASE_S", str(seconds))
    monkeypatch.setattr(session, "settings", dataclasses.replace(session.settings, lease_s=seconds))


def request(statement: str, **properties) -> AlterRequest:
    table = statement.split()[2]
    return AlterRequest(table, statement, {k: str(v) for k, v in properties.items()})


def start(session: Session, statement: str, **properties) -> int:
    """validate + start of a heavyweight ALTER; returns the job id (the job is PENDING)."""
    req = request(statement, **properties)
    validated = alter_steps.validate(session.catalog, req)
    assert validated.kind == "HEAVY", validated
    return heavy_steps.start(session.catalog, req, validated).job_id


def orphan_of_an_airflow_run(session: Session, statement: str, run_id: str, lease_s: float) -> int:
    """A job started as the Airflow run `run_id` (its lease group) under a lease of `lease_s` that
    nobody renews, once it is orphaned (an Airflow run's hand-off grace is four leases)."""
    import time

    from alterflow.catalog.job_leases import JobLeases
    from alterflow.held_leases import airflow_run_group

    alter = request(statement)
    driver = {"group": airflow_run_group(run_id), "lease_s": lease_s}
    job_id = heavy_steps.start(session.catalog, alter, alter_steps.validate(session.catalog, alter), **driver).job_id
    deadline = time.monotonic() + 30
    while job_id not in [j.id for j in JobLeases(session.catalog).orphaned()] and time.monotonic() < deadline:
        time.sleep(0.2)
    return job_id


def job(session: Session, job_id: int) -> AlterJob:
    return HeavyJobs(session.catalog).job(job_id)


def wait(session: Session, job_id: int) -> None:
    result = heavy_steps.wait_for_boundary(session.catalog, session.warehouse, job_id)
    assert result == heavy_steps.BOUNDARY_REACHED, result


def convert(session: Session, spark, job_id: int, parallelism: int = 2) -> ConversionResult | heavy_steps.StepSkipped:
    return heavy_steps.convert(spark, session.catalog, session.warehouse, job_id, parallelism)


def check(session: Session, spark, job_id: int) -> heavy_steps.CheckResult | heavy_steps.StepSkipped:
    return heavy_steps.check(spark, session.catalog, session.warehouse, job_id)


def swap(session: Session, job_id: int) -> heavy_steps.SwapResult:
    return heavy_steps.swap(session.catalog, session.warehouse, job_id)


def to_validating(session: Session, spark, job_id: int, parallelism: int = 2) -> ConversionResult | heavy_steps.StepSkipped:
    wait(session, job_id)
    return convert(session, spark, job_id, parallelism)


def show_alter(session: Session, table: str) -> list[dict]:
    rows = sql(session, f"SHOW ALTER TABLE COLUMN FROM {table}")
    return [dict(zip(SHOW_ALTER_COLUMNS, r)) for r in rows]


def show_job(session: Session, table: str, job_id: int) -> dict:
    found = [r for r in show_alter(session, table) if r["JobId"] == job_id]
    assert len(found) == 1, found
    return found[0]


def describe(session: Session, table: str) -> dict[str, tuple]:
    return {r[0]: r[1:] for r in sql(session, f"DESCRIBE {table}")}


def shadow_dir(session: Session, j: AlterJob) -> pathlib.Path:
    return absolute(session.warehouse, index_dir(j.table_id, j.shadow_index_id))


def origin_dir(session: Session, j: AlterJob) -> pathlib.Path:
    return absolute(session.warehouse, index_dir(j.table_id, j.origin_index_id))


def parquet_files(path: pathlib.Path) -> list[pathlib.Path]:
    """Every file under `path` (data files, staging leftovers, temporaries), recursively."""
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []


def version_state(session: Session, table_id: int, version: int) -> str | None:
    with session.catalog.db_session() as s:
        row = s.get(SchemaVersionRow, (table_id, version))
        return None if row is None else row.state


def live_paths(session: Session, table: str) -> list[str]:
    """Paths of the live committed files of the table's current index."""
    return sorted(f.path for f in session.catalog.snapshot(table).files)


def origin_state(session: Session, table: str) -> tuple:
    """What a cancel must leave untouched: current version and index, live files, DESCRIBE."""
    info = session.catalog.table(table)
    return info.current_version, info.current_index_id, live_paths(session, table), sql(session, f"DESCRIBE {table}")


def index_files(session: Session, j: AlterJob, index_id: int) -> list:
    """Live committed files of any index of the job's table."""
    return list(session.catalog.index_snapshot(j.table_id, index_id, j.to_version).files)


def read_file(session: Session, relative: str):
    return pq.read_table(absolute(session.warehouse, relative))


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text, f"not one line: {text!r}"
    return text


def subprocess_env(home: pathlib.Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    env["PYTHONPATH"] = child_pythonpath(env.get("PYTHONPATH"))
    if home is not None:
        env["ALTERFLOW_HOME"] = str(home)
    return env
