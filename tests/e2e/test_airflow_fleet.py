"""Airflow on the CeleryExecutor, live (`make test-fleet`): `make airflow AIRFLOW_EXECUTOR=celery`'s
command with two Celery workers on a Redis, Airflow's metadata and alterflow's catalog
in PostgreSQL, the warehouse in a bucket of an S3 server (moto's: the workers, their Spark
conversions and the CLI share nothing but the bucket and the catalog), ALTERs triggered through the
REST API as a team triggers them. The first test's conversions run on a Spark standalone cluster
(a master and a worker of the test's own).

- A worker killed (SIGKILL, its whole process tree, as a machine that dies) while it converts a
  table's history (its spark-submit's driver with it; the cluster's executor ends with its
  application): Airflow notices the task's missing heartbeat and retries it on the other
  worker, the retried task takes the job over (same DAG run) and finishes it; every row once.
- A worker killed while its task loads a file (a DAG of the test's own): the load's transaction is
  never committed, the retried task loads the file again; every row once.
- Then a reduced team load: tables with mixed light and heavy ALTERs triggered at once while
  loads land in every table from the CLI (ADD COLUMN and MODIFY COLUMN only: a load's CSV keeps
  its columns), and meanwhile the catalog's PostgreSQL (a server of the test's own) restarted in
  the middle of a heavy job, the broker (a Redis of the test's own) restarted and the scheduler
  killed and started again; a load cut off by the catalog's restart is run again as a pipeline's
  retry would (`--label`: it counts once); every run succeeds, every job FINISHED, every
  loaded row there once, no lease left held.

Every Airflow and task process is stopped at the end, also on failure."""

from __future__ import annotations

import csv
import os
import pathlib
import re
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.e2e.test_airflow_live import DAG, rows_as_dicts, sql, wait_for_dag, wait_for_run
from tests.support.live_airflow import BIN, LiveAirflow, _descendants, dags_folder
from tests.support.private_postgres import PrivatePostgres, postgres_bin
from tests.support.private_redis import Redis

pytestmark = [pytest.mark.fleet, pytest.mark.live, pytest.mark.postgres, pytest.mark.timeout(1200)]

BIG_ROWS = 400_000
TABLES = ["t1", "t2", "t3", "t4", "t5"]
START_ROWS = 200
LOAD_ROWS = 100
LOADS_PER_TABLE = 3  # at least: each table's loads go on until every run has ended
LOAD_TRIES = 10  # a load cut off by the catalog's restart is run again, 2 s apart
# Twelve ALTERs over five tables, light and heavy mixed, as a team sends them: first one on each
# table (five tables at once), then seven at once, several on one table. Each table's first asset
# event goes alone: Airflow 3.3 creates a table's asset on its first event, and two first events on
# one table in the same instant collide in Airflow's database (docs/limits.md).
FIRST_ALTERS = [(table, f"ALTER TABLE {table} ADD COLUMN a0 INT DEFAULT 0") for table in TABLES]
ALTERS = [
    ("t1", "ALTER TABLE t1 ADD COLUMN a1 INT DEFAULT 1"),
    ("t1", "ALTER TABLE t1 MODIFY COLUMN v SMALLINT"),
    ("t2", "ALTER TABLE t2 MODIFY COLUMN v SMALLINT"),
    ("t3", "ALTER TABLE t3 ADD COLUMN a1 INT"),
    ("t3", "ALTER TABLE t3 ADD COLUMN a2 INT"),
    ("t3", "ALTER TABLE t3 MODIFY COLUMN v SMALLINT"),
    ("t4", "ALTER TABLE t4 MODIFY COLUMN v BIGINT"),
]


@pytest.fixture
def redis(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (Debian's redis-server package)")
    server = Redis(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def catalog_pg():
    """The catalog's PostgreSQL, a server of the test's own that the test restarts mid-job (Airflow's
    own metadata stays on the machine's server)."""
    from alterflow.catalog.database import close_engine, upgrade_catalog

    if postgres_bin() is None:
        pytest.fail("PostgreSQL's server binaries are not installed (Debian's postgresql package)")
    server = PrivatePostgres()
    server.start()
    upgrade_catalog(server.url)
    yield server
    close_engine(server.url)
    server.remove()


LOAD_DAG = "fleet_load"
LOAD_ROWS_BIG = 1_000_000
# A team's own DAG beside the repository's: a load of a file into the table `landing`, retried 5 s
# after a failure (Airflow's default waits 5 minutes).
LOAD_DAG_FILE = f'''
from datetime import timedelta

import pendulum
from airflow.sdk import Param, dag

from alterflow.airflow.operators import AlterflowLoadOperator


@dag(dag_id="{LOAD_DAG}", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False,
     params={{"path": Param("", type="string")}})
def fleet_load():
    AlterflowLoadOperator(task_id="load", table="landing", path="{{{{ params.path }}}}", retries=2, retry_delay=timedelta(seconds=5))


fleet_load()
'''


@pytest.fixture
def spark_cluster(tmp_path, s3_bucket):
    """A Spark standalone master and worker (2 cores) for the fleet's conversions: a test that asks
    for it has its fleet submit them there (`spark_default`). Started after `s3_bucket`, so its
    executors have the AWS variables that reach the bucket, as a cluster's workers would."""
    from tests.support.spark_standalone import standalone_cluster

    base = tmp_path / "spark"
    base.mkdir()
    yield from standalone_cluster(base, cores=2, memory="2g")


@pytest.fixture
def fleet(request, tmp_path, catalog_pg, redis, s3_server, s3_bucket):
    spark = request.getfixturevalue("spark_cluster")["master"] if "spark_cluster" in request.fixturenames else "local[2]"
    dags = dags_folder(tmp_path / "dags", written={"fleet_load.py": LOAD_DAG_FILE})
    live = LiveAirflow(
        tmp_path,
        dags_folder=dags,
        executor="celery",
        workers=2,
        extra_env={
            "ALTERFLOW_CATALOG_URL": catalog_pg.url,
            "ALTERFLOW_WAREHOUSE": f"s3://{s3_bucket}/warehouse",
            **s3_server.env(),
            "ALTERFLOW_SPARK_MASTER": spark,
            "ALTERFLOW_CELERY_BROKER": redis.url,
            # A killed worker's task is noticed after 30 s without its heartbeat (Airflow's default: 5 min).
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "30",
        },
    )
    live.start()
    try:
        yield live
    finally:
        live.stop()


def write_csv(path: pathlib.Path, first_id: int, count: int) -> pathlib.Path:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "v", "note"])
        writer.writerows((i, i % 30_000, f"n{i}") for i in range(first_id, first_id + count))
    return path


def cli(live: LiveAirflow, *args: str) -> str:
    done = subprocess.run([str(BIN / "alterflow"), *args], env=live.cli_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"alterflow {' '.join(args)}: {done.stderr[-3000:]}"
    return done.stdout


def trigger(live: LiveAirflow, headers: dict, run_id: str, statement: str) -> None:
    body = {"dag_run_id": run_id, "logical_date": None, "conf": {"statement": statement}}
    answer = live.call("POST", f"/api/v2/dags/{DAG}/dagRuns", headers=headers, json=body)
    assert answer.status_code == 200, f"trigger {run_id}: {answer.status_code} {answer.text}"


def catalog_of(live: LiveAirflow):
    from alterflow.catalog.catalog import Catalog

    return Catalog(live.extra_env["ALTERFLOW_CATALOG_URL"])


def driven_job(live: LiveAirflow, timeout: float = 300, script: str | None = None):
    """The first heavy job RUNNING (converting) with a runner holding its lease; with `script`, a
    runner whose command line names it (`convert_history.py`: the Spark application's driver, not
    the step that let the job into RUNNING)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live.check_running()
        for job in catalog_of(live).jobs():
            if job.state == "RUNNING" and job.lease_holder and (script is None or script in _command_line(job.lease_holder)):
                return job
        time.sleep(0.2)
    raise AssertionError(f"no job RUNNING under a lease after {timeout} s: {catalog_of(live).jobs()}")


def holder_pid(holder: str) -> int:
    """The process id in a lease holder's name (`host:pid:uuid`)."""
    return int(holder.split(":")[1])


def _command_line(holder: str) -> str:
    """The command line of the lease holder `holder`'s process, if it runs."""
    try:
        return pathlib.Path(f"/proc/{holder_pid(holder)}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def worker_of(live: LiveAirflow, holder: str) -> str:
    """The Celery worker below which the lease holder `holder` runs."""
    pid = holder_pid(holder)
    for name, root in live.fleet_pids().items():
        if name.startswith("worker") and pid in _descendants(root):
            return name
    raise AssertionError(f"the lease holder {holder} runs below no Celery worker: {live.fleet_pids()}")


def kill_tree(root: int) -> None:
    """SIGSTOP then SIGKILL `root` and every process below it: a machine that dies."""
    tree = _descendants(root)
    for pid in tree:
        with _gone():
            os.kill(pid, signal.SIGSTOP)
    for pid in _descendants(root) | tree:
        with _gone():
            os.kill(pid, signal.SIGKILL)


class _gone:
    def __enter__(self):
        return self

    def __exit__(self, kind, _value, _tb):
        return kind is ProcessLookupError


def test_two_celery_workers_survive_a_killed_worker_and_carry_a_teams_load(
    spark_cluster: dict, fleet: LiveAirflow, redis: Redis, catalog_pg: PrivatePostgres, tmp_path
):
    try:
        _scenario(fleet, redis, catalog_pg, tmp_path)
    except BaseException:
        print(fleet.diagnostics(), flush=True)  # the fleet's logs and the task logs, in the report
        raise


def _scenario(fleet: LiveAirflow, redis: Redis, catalog_pg: PrivatePostgres, tmp_path: pathlib.Path) -> None:
    fleet.wait_healthy()
    headers = {"Authorization": f"Bearer {fleet.token()}"}
    wait_for_dag(fleet, headers)
    # The long steps' pool, made by the fleet's start: two workers of four slots, half kept
    # for short steps. Every conversion below takes its slot from it (none would run without it).
    pool = fleet.call("GET", "/api/v2/pools/alterflow_long_steps", headers=headers).json()
    assert (pool.get("name"), pool.get("slots")) == ("alterflow_long_steps", 4), pool
    _a_worker_killed_mid_conversion(fleet, headers, tmp_path)
    _a_worker_killed_mid_load(fleet, headers, tmp_path)

    def faults() -> None:
        _the_catalog_restarted_mid_job(fleet, catalog_pg)
        _the_broker_and_the_scheduler_restarted(fleet, redis)

    _a_teams_load(fleet, headers, tmp_path, faults=faults)


def unfinished_heavy_job(live: LiveAirflow, timeout: float = 300):
    """The first heavy job between its start and its end (a heavy DAG run's tasks, from `start` to
    `swap`, keep it there for many seconds; its conversion alone may last less than a second)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live.check_running()
        for job in catalog_of(live).jobs():
            if job.kind == "HEAVY" and job.state not in ("FINISHED", "CANCELLED"):
                return job
        time.sleep(0.2)
    raise AssertionError(f"no heavy job under way after {timeout} s: {catalog_of(live).jobs()}")


def _the_catalog_restarted_mid_job(live: LiveAirflow, catalog_pg: PrivatePostgres) -> None:
    """As soon as a heavy job is under way: the catalog's PostgreSQL stopped (every connection
    cut), 3 s refusing connections, started again."""
    job = unfinished_heavy_job(live)
    catalog_pg.restart(down_s=3.0)
    print(f"the catalog restarted while job {job.id} on table {job.table_id} was {job.state}", flush=True)


def _the_broker_and_the_scheduler_restarted(live: LiveAirflow, redis: Redis) -> None:
    """While the runs go on: Redis stopped and started again (its queue kept), then the
    scheduler killed (SIGKILL, its session) and started again by the fleet's supervisor."""
    time.sleep(5)
    redis.restart()
    time.sleep(5)
    scheduler = live.fleet_pids()["scheduler"]
    kill_tree(scheduler)
    deadline = time.monotonic() + 60
    while live.fleet_pids()["scheduler"] == scheduler:
        assert time.monotonic() < deadline, "the fleet did not start the scheduler again"
        time.sleep(0.5)


def _a_worker_killed_mid_conversion(live: LiveAirflow, headers: dict, tmp_path: pathlib.Path) -> None:
    cli(live, "sql", "-e", "CREATE TABLE big (id INT NOT NULL, v INT, note STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 8")
    cli(live, "load", "big", str(write_csv(tmp_path / "big.csv", 1, BIG_ROWS)))
    # On the Spark cluster (spark-submit from the worker's task; the check's session there too).
    trigger(live, headers, "fleet_big_to_smallint", 'ALTER TABLE big MODIFY COLUMN v SMALLINT PROPERTIES ("engine" = "spark")')
    job = driven_job(live, script="convert_history.py")
    victim = worker_of(live, job.lease_holder)
    kill_tree(live.fleet_pids()[victim])
    after = [j for j in catalog_of(live).jobs() if j.id == job.id][0]
    assert after.state == "RUNNING", after  # killed mid-conversion, not after it
    wait_for_run(live, headers, "fleet_big_to_smallint", timeout=600)
    # The task that was converting, `convert` (spark-submit), ran a second time, on the cluster.
    answer = live.call("GET", f"/api/v2/dags/{DAG}/dagRuns/fleet_big_to_smallint/taskInstances", headers=headers)
    tries = {ti["task_id"]: ti["try_number"] for ti in answer.json()["task_instances"] if ti["state"] == "success"}
    assert tries.get("convert") == 2, tries
    pools = {ti["task_id"]: ti["pool"] for ti in answer.json()["task_instances"]}
    assert (pools["convert"], pools["check"], pools["validate"]) == ("alterflow_long_steps", "alterflow_long_steps", "default_pool")
    master_log = tmp_path / "spark" / "master.log"  # the cluster's (the `spark_cluster` fixture): both tries ran there
    assert master_log.read_text().count(f"Registering app alterflow-convert-job-{job.id}") == 2, master_log.read_text()[-3000:]
    results = sql(
        live, "SHOW ALTER TABLE COLUMN FROM big; DESCRIBE big; SELECT count(*) AS n, count(DISTINCT id) AS d, sum(id) AS s FROM big"
    )
    assert [j["State"] for j in rows_as_dicts(results[0])] == ["FINISHED"], results[0]
    assert {r["Field"]: r["Type"] for r in rows_as_dicts(results[1])}["v"] == "SMALLINT"
    assert rows_as_dicts(results[2]) == [{"n": BIG_ROWS, "d": BIG_ROWS, "s": BIG_ROWS * (BIG_ROWS + 1) // 2}], results[2]


def loading_holder(live: LiveAirflow, timeout: float = 300) -> str:
    """The lease holder of the load transaction in progress (PREPARE) on `landing`."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(live.extra_env["ALTERFLOW_CATALOG_URL"])
    query = sqlalchemy.text("SELECT lease_holder FROM af_transactions WHERE state = 'PREPARE' AND lease_holder IS NOT NULL")
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            live.check_running()
            with engine.connect() as conn:
                holder = conn.execute(query).scalar()
            if holder:
                return holder
            time.sleep(0.2)
    finally:
        engine.dispose()
    raise AssertionError(f"no load transaction in progress after {timeout} s")


def _a_worker_killed_mid_load(live: LiveAirflow, headers: dict, tmp_path: pathlib.Path) -> None:
    """A worker killed while its task loads a file: the load's transaction is never committed (its
    lease lapses), the retried task loads the file again, and every row is there once."""
    wait_for_dag(live, headers, dag=LOAD_DAG)
    cli(live, "sql", "-e", "CREATE TABLE landing (id INT NOT NULL, v INT, note STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4")
    data = write_csv(tmp_path / "landing.csv", 1, LOAD_ROWS_BIG)
    body = {"dag_run_id": "fleet_load_killed", "logical_date": None, "conf": {"path": str(data)}}
    answer = live.call("POST", f"/api/v2/dags/{LOAD_DAG}/dagRuns", headers=headers, json=body)
    assert answer.status_code == 200, f"trigger {LOAD_DAG}: {answer.status_code} {answer.text}"
    kill_tree(live.fleet_pids()[worker_of(live, loading_holder(live))])
    wait_for_run(live, headers, "fleet_load_killed", timeout=600, dag=LOAD_DAG)
    answer = live.call("GET", f"/api/v2/dags/{LOAD_DAG}/dagRuns/fleet_load_killed/taskInstances", headers=headers)
    assert [ti["try_number"] for ti in answer.json()["task_instances"]] == [2], answer.json()
    counted = sql(live, "SELECT count(*) AS n, count(DISTINCT id) AS d, sum(id) AS s FROM landing")[0]
    assert rows_as_dicts(counted) == [{"n": LOAD_ROWS_BIG, "d": LOAD_ROWS_BIG, "s": LOAD_ROWS_BIG * (LOAD_ROWS_BIG + 1) // 2}]


class Loads:
    """The CLI loads of the team's load, one thread per table, until `stop` is set: what each
    committed, the errors of the tries run again, and the loads that failed every try."""

    def __init__(self, live: LiveAirflow, tmp_path: pathlib.Path):
        self.live, self.tmp_path = live, tmp_path
        self.failures: list[str] = []
        self.loaded = dict.fromkeys(TABLES, 0)  # loads committed per table (each of LOAD_ROWS new ids)
        self.retried: list[str] = []
        self.stop = threading.Event()

    def into(self, table: str) -> None:
        """One load after another into `table` until every run has ended, at least LOADS_PER_TABLE.
        A load that fails (the catalog restarted under it) is run again with the same file and
        label, as a pipeline's retry would, up to LOAD_TRIES times: the label keeps it once (a try
        whose commit landed though its answer was lost makes the next write nothing)."""
        n = 0
        while n < LOADS_PER_TABLE or not self.stop.is_set():
            data = write_csv(self.tmp_path / f"{table}-{n + 1}.csv", START_ROWS + n * LOAD_ROWS + 1, LOAD_ROWS)
            errors = []
            command = [str(BIN / "alterflow"), "load", table, str(data), "--label", f"{table} load {n + 1}"]
            for _try in range(LOAD_TRIES):
                done = subprocess.run(command, env=self.live.cli_env(), capture_output=True, text=True)
                if done.returncode == 0:
                    break
                errors.append(done.stderr.strip())
                time.sleep(2)
            else:
                self.failures.append(f"load {n + 1} into {table}, {LOAD_TRIES} tries: {errors}")
                return
            self.retried.extend(f"load {n + 1} into {table}:\n{error}" for error in errors)
            n += 1
            self.loaded[table] = n


def _a_teams_load(live: LiveAirflow, headers: dict, tmp_path: pathlib.Path, faults) -> None:
    for table in TABLES:
        cli(
            live,
            "sql",
            "-e",
            f"CREATE TABLE {table} (id INT NOT NULL, v INT, note STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2",
        )
        cli(live, "load", table, str(write_csv(tmp_path / f"{table}-0.csv", 1, START_ROWS)))
    loads = Loads(live, tmp_path)
    loaders = [threading.Thread(target=loads.into, args=(table,)) for table in TABLES]
    for loader in loaders:
        loader.start()
    first_ids = [f"fleet_first_{table}" for table, _ in FIRST_ALTERS]
    with ThreadPoolExecutor(5) as pool:
        list(pool.map(lambda item: trigger(live, headers, item[0], item[1][1]), zip(first_ids, FIRST_ALTERS)))
    for run_id in first_ids:
        wait_for_run(live, headers, run_id, timeout=600)
    run_ids = [f"fleet_{n}_{table}" for n, (table, _) in enumerate(ALTERS)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda item: trigger(live, headers, item[0], item[1][1]), zip(run_ids, ALTERS)))
    faults()
    try:
        for run_id in run_ids:
            wait_for_run(live, headers, run_id, timeout=600)
    finally:
        loads.stop.set()
        for loader in loaders:
            loader.join()
    assert loads.failures == [], loads.failures
    print(f"loads run again after an error: {len(loads.retried)}", *loads.retried, sep="\n    ", flush=True)
    # The catalog's restart, in its one line and nothing else: met in a command (the server gone
    # mid-statement) or while the command opened the catalog (no server yet, or one shutting down,
    # or a connection it had just made cut by the shutdown).
    lost = re.compile(
        r"^error: (the catalog database stopped answering \(|cannot open the catalog of ALTERFLOW_CATALOG_URL: "
        r"(connection failed|consuming input failed|terminating connection due to administrator command"
        r"|server closed the connection unexpectedly|the database system is))"
    )
    other = [error for error in loads.retried if not lost.search(error.splitlines()[-1]) or "Traceback" in error]
    assert other == [], other
    for table in TABLES:
        expected = START_ROWS + loads.loaded[table] * LOAD_ROWS
        results = sql(
            live, f"SHOW ALTER TABLE COLUMN FROM {table}; SELECT count(*) AS n, count(DISTINCT id) AS d, sum(id) AS s FROM {table}"
        )
        assert {j["State"] for j in rows_as_dicts(results[0])} == {"FINISHED"}, results[0]
        assert rows_as_dicts(results[1]) == [{"n": expected, "d": expected, "s": expected * (expected + 1) // 2}], (table, results[1])
    jobs = catalog_of(live).jobs()
    assert {job.state for job in jobs} == {"FINISHED"}, jobs
    from alterflow.catalog.records import utcnow

    held = [job for job in jobs if job.lease_expires_at is not None and job.lease_expires_at > utcnow()]
    assert held == [], held  # every runner let its lease go, the killed worker's included (taken over)


@pytest.mark.timeout(1800)  # the harness gives its runs 1500 s
def test_a_teams_full_load_ends_with_every_row_once_every_job_finished_and_no_lease_held(fleet: LiveAirflow):
    """The benchmark's team load (`bench.fleet_load`: 20 tables, 50 ALTERs light and heavy mixed,
    loads landing in every table throughout) on two Celery workers, judged by its end state only
    (its times are `make bench`'s): every run succeeded, every row once, every job FINISHED, no
    lease held. Before it, the benchmark's burst of light ALTERs at once, reduced (its end state:
    every run succeeded, each table's schema has its column)."""
    from bench.fleet_load import FULL, HEAVY, LIGHT, idle_light_runs, light_burst, measure_team_load

    fleet.wait_healthy()
    headers = {"Authorization": f"Bearer {fleet.token()}"}
    wait_for_dag(fleet, headers)
    try:
        from alterflow.engine.session import Session
        from alterflow.settings import Settings

        session = Session(Settings.from_env(fleet.cli_env()))
        idle = idle_light_runs(fleet, headers, session, 2)
        burst = light_burst(fleet, headers, session, count=3, trials=1)
        team = measure_team_load(fleet, FULL["tables"], rows=2_000)
    except BaseException:
        print(fleet.diagnostics(), flush=True)
        raise
    assert len(burst.seconds) == 3 and burst.slowest == [max(burst.seconds)], burst
    assert all("b0" in [column.name for column in session.catalog.current_schema(f"burst{n}")[1].columns] for n in range(3))
    print(f"idle light runs {idle}; burst {burst}; {len(team.runs)} runs in {team.seconds:.0f} s, loads {team.loads}", flush=True)
    assert team.failed_runs == [] and team.load_errors == [], (team.failed_runs, team.load_errors)
    assert (len(team.of(LIGHT)), len(team.of(HEAVY))) == (30, 20), team.runs
    assert min(team.loads.values()) >= 1, team.loads  # loads landed in every table
    assert team.tables_wrong == {}, team.tables_wrong
    assert team.jobs_not_finished == [] and team.leases_held == [], (team.jobs_not_finished, team.leases_held)
