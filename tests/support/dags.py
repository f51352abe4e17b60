"""Helpers of the DAG tests: an alterflow under tmp_path that the DAG's tasks find through the
ALTERFLOW_* environment, and `dag.test()` runs of the project's DAGs (loaded from dags/ the way
Airflow loads them)."""

from __future__ import annotations

import json
import pathlib
import threading
import time

from alterflow.catalog.catalog import AlterJob
from alterflow.engine.session import Session
from alterflow.settings import Settings
from tests.support import REPO
from tests.support.statements import sql, versions  # noqa: F401 (the tests import them from here too)

DAGS = REPO / "dags"
SCHEMA_CHANGE = "alterflow_schema_change"
# A user's own DAG folders: the operator tests' DAGs and examples/dags (bundles of their own, see `add_bundles`).
DOOR_DAGS = REPO / "tests" / "dags" / "door"
EXAMPLE_DAGS = REPO / "examples" / "dags"
LOCAL_BUNDLE = "airflow.dag_processing.bundles.local.LocalDagBundle"


def asset_events(uri: str) -> list[tuple[dict, str]]:
    """(extra, source run id) of every event on the asset `uri`, oldest first."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as s:
        rows = s.execute(
            select(AssetEvent.extra, AssetEvent.source_run_id)
            .join(AssetModel, AssetModel.id == AssetEvent.asset_id)
            .where(AssetModel.uri == uri)
            .order_by(AssetEvent.id)
        ).all()
    return [(dict(extra), run_id) for extra, run_id in rows]


def alterflow_env(monkeypatch, tmp_path: pathlib.Path) -> Settings:
    """ALTERFLOW_* for the tasks (and the spark-submit they start) pointing under tmp_path."""
    home = tmp_path / "home"
    monkeypatch.setenv("ALTERFLOW_HOME", str(home))
    monkeypatch.setenv("ALTERFLOW_CATALOG_URL", f"sqlite:///{home / 'catalog.db'}")
    monkeypatch.setenv("ALTERFLOW_WAREHOUSE", str(tmp_path / "warehouse"))
    monkeypatch.setenv("ALTERFLOW_SPARK_MASTER", "local[2]")
    monkeypatch.delenv("ALTERFLOW_AIRFLOW_URL", raising=False)
    return Settings.from_env()


def dag_bag():
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAGS))


def load_dag(dag_id: str):
    bag = dag_bag()
    assert not bag.import_errors, bag.import_errors
    return bag.dags[dag_id]


def run_dag(dag, conf) -> tuple[str, dict[str, str], object]:
    """dag.test() of one run: (run state, {task_id: state}, the run)."""
    run = dag.test(run_conf=conf)
    states = {ti.task_id: ti.state for ti in run.get_task_instances()}
    return run.state, states, run


def jobs(session: Session, table: str) -> list[AlterJob]:
    return session.catalog.jobs(session.catalog.table(table).id)


def sync_dags_to_airflow() -> None:
    """The project's DAGs into the test Airflow's metadata database, as its dag-processor would."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db

    manager = DagBundlesManager()
    manager.sync_bundles_to_db()
    for bundle in manager.get_all_dag_bundles():
        if not bundle.is_initialized:
            bundle.initialize()
        bag = BundleDagBag(dag_folder=bundle.path, bundle_path=bundle.path, bundle_name=bundle.name)
        sync_bag_to_db(bag, bundle.name, bundle.version)


def add_bundles(monkeypatch, **folders: pathlib.Path) -> None:
    """DAG bundles besides the project's dags/ (`name=folder`), so `dag.test()` of a DAG found in
    one of those folders finds it serialized (it syncs the DAG's bundle first)."""
    bundles = [{"name": "dags-folder", "classpath": LOCAL_BUNDLE, "kwargs": {}}]
    bundles += [
        {"name": name, "classpath": LOCAL_BUNDLE, "kwargs": {"path": str(folder), "refresh_interval": 0}}
        for name, folder in folders.items()
    ]
    monkeypatch.setenv("AIRFLOW__DAG_PROCESSOR__DAG_BUNDLE_CONFIG_LIST", json.dumps(bundles))


def load_dag_from(folder: pathlib.Path, dag_id: str):
    """A DAG of a folder of `add_bundles`, parsed anew (dag.test() merges a run's conf into its operators)."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(folder))
    assert not bag.import_errors, bag.import_errors
    return bag.dags[dag_id]


class LoadAbortedOnceWaitedFor:
    """A thread that, once the table's job is WAITING_TXN on transaction `held` (a load left open
    below its boundary), notes the job's message in `msg` and aborts the load, so the job goes on.
    Use it as a context manager around the DAG run."""

    def __init__(self, catalog, table_id: int, held: int, within_s: float = 300):
        self.catalog, self.table_id, self.held, self.within_s = catalog, table_id, held, within_s
        self.msg = ""
        self._thread = threading.Thread(target=self._watch, name="abort-load")

    def _watch(self) -> None:
        deadline = time.monotonic() + self.within_s
        while time.monotonic() < deadline:
            waiting = [j for j in self.catalog.jobs(self.table_id) if j.state == "WAITING_TXN" and str(self.held) in j.msg]
            if waiting:
                self.msg = waiting[0].msg
                break
            time.sleep(0.3)
        self.catalog.abort_transaction(self.held, "given up by the test")

    def __enter__(self) -> LoadAbortedOnceWaitedFor:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._thread.join(60)


def note_of(run_id: str) -> str | None:
    """The note of the DAG run `run_id`, as Airflow's database holds it."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return session.scalar(select(DagRun).where(DagRun.run_id == run_id)).note
