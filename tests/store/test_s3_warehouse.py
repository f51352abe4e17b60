"""A warehouse in a bucket of a real S3-protocol server (moto's), through the real CLI and the
Python API as a user runs them: what runs there in this release, the one-line refusals of what
does not yet (each changing nothing), two catalogs on one bucket, and a load killed mid-upload."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from alterflow.object_store import ObjectStoreFiles, parse_object_store_uri
from alterflow.store.warehouse import MARKER

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"


def cli(home: pathlib.Path, warehouse: str, *args: str, catalog: str | None = None, **settings: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(home), ALTERFLOW_WAREHOUSE=warehouse, ALTERFLOW_SPARK_MASTER="local[1]", **settings)
    if catalog:
        env["ALTERFLOW_CATALOG_URL"] = catalog
    return subprocess.run([str(ALTERFLOW), *args], env=env, cwd=home.parent, capture_output=True, text=True, timeout=300)


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    return proc.stdout


def refused(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0][len("error: ") :]


def objects(uri: str) -> dict[str, int]:
    return {o.path: o.size for o in ObjectStoreFiles(parse_object_store_uri(uri, "W", os.environ)).list()}


def rows(home: pathlib.Path, uri: str, query: str) -> list[str]:
    """The query's rows, each as its values joined by commas."""
    out = ok(cli(home, uri, "sql", "--format", "json", "-e", query))
    return [",".join(str(v) for v in row) for row in json.loads(out)["rows"]]


def converted(home: pathlib.Path) -> list[tuple]:
    """(engine, failed casts, quarantined rows) of every converted tablet, in order."""
    from catalog.catalog import Catalog
    from catalog.models import ConvertedTabletRow

    with Catalog(f"sqlite:///{home / 'catalog.db'}").db_session() as s:
        found = s.query(ConvertedTabletRow).order_by(ConvertedTabletRow.id)
        return [(row.engine, row.failed_casts, row.quarantined) for row in found]


@pytest.fixture
def warehouse(s3_bucket, tmp_path):
    """(home, s3:// URI) of a fresh home whose warehouse is a prefix of the test's bucket."""
    home = tmp_path / "home"
    home.mkdir()
    return home, f"s3://{s3_bucket}/wh"


def test_tables_loads_queries_and_light_changes_run_on_a_bucket(warehouse, tmp_path):
    home, uri = warehouse
    csv = tmp_path / "rows.csv"
    csv.write_text("id,v\n1,a\n2,b\n3,c\n")
    ok(cli(home, uri, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"))
    assert ok(cli(home, uri, "load", "t", str(csv))) == "3 rows loaded into t (transaction 1)\n"
    ok(cli(home, uri, "sql", "-e", "INSERT INTO t VALUES (3, 'c2'), (4, 'd'); ALTER TABLE t ADD COLUMN n INT DEFAULT 7"))
    assert rows(home, uri, "SELECT id, v, n FROM t ORDER BY id") == ["1,a,7", "2,b,7", "3,c2,7", "4,d,7"]
    stored = objects(uri)
    assert MARKER in stored and len([p for p in stored if p.endswith(".parquet")]) == 2
    assert not (home.parent / "s3:").exists() and not list(home.rglob("*.parquet")), "nothing written on the local disk"

    # Heavyweight changes on the local engine: converted in process, validated, swapped; the
    # values that fail become NULL, or go to the quarantine table.
    ok(cli(home, uri, "sql", "-e", "INSERT INTO t VALUES (5, '50', 7)"))
    said = ok(cli(home, uri, "sql", "-e", "ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ('on_cast_error' = 'null')"))
    assert said == "ALTER TABLE t: job 2 FINISHED, schema version 3\n", said
    assert rows(home, uri, "SELECT id, v FROM t ORDER BY id") == ["1,None", "2,None", "3,None", "4,None", "5,50"]
    ok(
        cli(
            home, uri, "sql", "-e", "CREATE TABLE q (id INT NOT NULL, s STRING, PRIMARY KEY (id)); INSERT INTO q VALUES (1, '10'), (2, 'x')"
        )
    )
    ok(cli(home, uri, "sql", "-e", "ALTER TABLE q MODIFY COLUMN s INT PROPERTIES ('on_cast_error' = 'quarantine')"))
    assert rows(home, uri, "SELECT id, s FROM q") == ["1,10"]
    assert rows(home, uri, "SELECT id, s FROM q__quarantine") == ["2,x"]
    # A load while the job waits to swap writes both indexes (dual write).
    ok(cli(home, uri, "sql", "-e", "ALTER TABLE q MODIFY COLUMN s SMALLINT PROPERTIES ('postpone_swap' = 'true')"))
    ok(cli(home, uri, "sql", "-e", "INSERT INTO q VALUES (3, 30)"))
    ok(cli(home, uri, "sql", "-e", "RESUME ALTER TABLE COLUMN FROM q"))
    assert rows(home, uri, "SELECT id, s FROM q ORDER BY id") == ["1,10", "3,30"]

    import alterflow

    with alterflow.connect(catalog_url=f"sqlite:///{home / 'catalog.db'}", warehouse=uri) as connection:
        table = connection.table("t")
        assert table.scan().to_arrow().num_rows == 5
    stored = objects(uri)

    # GC: the swapped-out files go (every live file is of the current version: nothing to compact).
    out = ok(cli(home, uri, "gc", "--retention", "0"))
    assert "0 tablets compacted" in out, out
    assert rows(home, uri, "SELECT count(*) FROM t") == ["5"] and len(objects(uri)) < len(stored), "the swapped-out files went"


@pytest.fixture
def bucket_session(warehouse, spark):
    """(home, URI, an embedded session on the bucket warehouse sharing the test run's SparkSession):
    the Spark paths on a bucket without a JVM start per command (the CLI's door over the same
    session is tested above and in the killed-conversion test below)."""
    from alterflow.engine.session import Session
    from alterflow.settings import Settings

    home, uri = warehouse
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}, "ALTERFLOW_HOME": str(home)}
    env.update(ALTERFLOW_WAREHOUSE=uri, ALTERFLOW_SPARK_MASTER="local[2]")
    session = Session(Settings.from_env(env))
    yield home, uri, session
    session.catalog.engine.dispose()


def said(session, text: str) -> list[str]:
    """What each statement of `text` says: a Done's message, or a result set's rows joined by commas."""
    from alterflow.results import ResultSet

    out = []
    for result in session.run(text):
        if isinstance(result, ResultSet):
            out += [",".join(str(v) for v in row) for row in result.rows]
        else:
            out.append(result.message)
    return out


@pytest.mark.spark
def test_spark_conversions_run_on_a_bucket_through_their_python_workers(bucket_session):
    """Heavyweight changes on the Spark engine: the tasks read the origin files and write the
    converted ones through pyarrow, the commit copies each to its tablet; failed casts are counted
    (from the query on a keyed table, from the files' footers on another), quarantined rows reach
    the quarantine table, and no staging object is left."""
    home, uri, session = bucket_session
    said(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3")
    values = ", ".join(f"({i}, '{i if i % 100 else 'x'}')" for i in range(1, 1001))
    said(session, f"INSERT INTO t VALUES {values}; INSERT INTO t VALUES (1, '-1')")
    done = said(session, "ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ('engine' = 'spark', 'on_cast_error' = 'null')")
    assert done[0].startswith("ALTER TABLE t: job ") and done[0].endswith(" FINISHED, schema version 2"), done
    assert said(session, "SELECT count(*), count(v), sum(v) FROM t") == [f"1000,990,{sum(i for i in range(2, 1001) if i % 100) - 1}"]
    said(
        session,
        "CREATE TABLE d (id INT, s STRING); INSERT INTO d VALUES (1, '10'), (2, 'x'), (3, NULL), (4, '40');"
        " ALTER TABLE d MODIFY COLUMN s INT PROPERTIES ('engine' = 'spark', 'on_cast_error' = 'quarantine')",
    )
    tablets = converted(home)
    assert len(tablets) == 4 and {t[0] for t in tablets} == {"spark"} and sum(t[1] for t in tablets[:3]) == 10, tablets
    assert said(session, "SELECT id, s FROM d ORDER BY id") == ["1,10", "3,None", "4,40"]
    assert said(session, "SELECT id, s FROM d__quarantine") == ["2,x"]
    assert tablets[3:] == [("spark", 1, 1)], "counted from the files' footers"
    said(session, "ALTER TABLE d MODIFY COLUMN s BIGINT PROPERTIES ('engine' = 'spark')")
    assert said(session, "SELECT sum(s), count(*) FROM d") == ["50,3"]
    assert not [p for p in objects(uri) if "/_staging/" in p], "a staging object is left"

    # Compaction (Spark's; the CLI's gc runs the same steps): a tablet of files of two versions
    # becomes one file of the current one.
    from alterflow.gc.gc_runner import run_gc

    said(session, "ALTER TABLE d ADD COLUMN n INT DEFAULT 5; INSERT INTO d VALUES (7, 70, 8)")
    before = said(session, "SELECT id, s, n FROM d ORDER BY id")
    done = run_gc(session.catalog, session.warehouse, lambda: session.spark, retention_s=0)
    assert done["compact"].tablets_compacted == 1, done["compact"]
    assert said(session, "SELECT id, s, n FROM d ORDER BY id") == before == ["1,10,5", "3,None,5", "4,40,5", "7,70,8"]
    assert not [p for p in objects(uri) if "/_compact/" in p], "a staging object is left"
    assert not list(home.rglob("*.parquet")), "nothing written on the local disk"


@pytest.mark.spark
def test_spark_loads_and_queries_run_on_a_bucket_through_their_python_workers(bucket_session, tmp_path):
    """Spark loads (`load --engine spark`): Spark's tasks upload their files through pyarrow in their
    Python workers, the driver copies them into their tablets and commits; a dual-writing load
    writes both indexes; a bad value aborts the load with the local engine's line; no staging
    object is left. Spark's queries read the objects in their tasks the same way and answer as the
    local engine does, over files of several schema versions and a key updated by a later load."""
    from alterflow.errors import UserError
    from alterflow.load.inputs import open_input

    home, uri, session = bucket_session
    csv = tmp_path / "rows.csv"
    csv.write_text("id,v\n" + "".join(f"{i},{i % 7}\n" for i in range(1, 2001)))
    said(session, "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3")
    loaded = session.load_input("t", open_input(csv), label="csv", engine="spark")
    assert loaded.message == "2000 rows loaded into t (transaction 1)"
    assert said(session, "SELECT count(*), sum(id), count(DISTINCT v) FROM t") == ["2000,2001000,7"]
    said(session, "ALTER TABLE t MODIFY COLUMN v INT PROPERTIES ('postpone_swap' = 'true')")
    more = tmp_path / "more.csv"
    more.write_text("id,v\n" + "".join(f"{i},{i % 5}\n" for i in range(1990, 2101)))
    assert session.load_input("t", open_input(more), label="more", engine="spark").message.startswith(
        "111 rows loaded into t (transaction "
    )
    bad = tmp_path / "bad.csv"
    bad.write_text("id,v\n5000,1\nnot a number,2\n")
    before = objects(uri)
    with pytest.raises(UserError) as refusal:
        session.load_input("t", open_input(bad), label="bad", engine="spark")
    line = str(refusal.value)
    assert "row 2" in line and "'not a number'" in line and "\n" not in line, line
    assert objects(uri) == before, "the failed load left objects"
    said(session, "RESUME ALTER TABLE COLUMN FROM t")
    assert said(session, "SELECT count(*), sum(id), sum(v) FROM t") == [
        f"2100,{sum(range(1, 2101))},{sum(i % 7 for i in range(1, 1990)) + sum(i % 5 for i in range(1990, 2101))}"
    ]
    assert not [p for p in objects(uri) if "/_load/" in p], "a staging object is left"

    said(session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 7; ALTER TABLE t MODIFY COLUMN v BIGINT")
    said(session, "ALTER TABLE t RENAME COLUMN v TO w; INSERT INTO t VALUES (1, 100, 1), (9000, NULL, 2)")
    query = "SELECT id, w, n FROM t WHERE id < 5 OR id BETWEEN 2096 AND 9999 ORDER BY id"
    local = said(session, query)
    assert local[:2] == ["1,100,1", "2,2,7"] and local[-1] == "9000,None,2", local
    # An INSERT ... SELECT on Spark, then the query on Spark.
    assert said(session, f"SET engine = spark; INSERT INTO t SELECT id + 10000, w, n FROM t WHERE id <= 3; {query}")[2:] == local
    assert said(session, "SELECT id, w, n FROM t WHERE id > 9999 ORDER BY id") == ["10001,100,1", "10002,2,7", "10003,3,7"]
    assert not list(home.rglob("*.parquet")), "nothing written on the local disk"


@pytest.mark.spark
def test_a_read_that_outlives_a_compaction_and_a_restored_catalog_on_a_bucket(bucket_session):
    """A scan handed out its first batch; meanwhile GC (retention 0) compacted the tablet and
    deleted the files it replaced: the rest of the scan is one line, not a raw error of the store,
    and a new scan reads every row. Then a backup of the catalog taken before the compaction and
    a later commit, restored beside the bucket: its GC is refused as behind and deletes nothing."""
    import shutil

    import alterflow
    from alterflow.gc.gc_runner import run_gc

    home, uri, session = bucket_session
    said(session, "CREATE TABLE t (id INT, v STRING)")  # no key: a scan streams file by file (a keyed one merges first)
    for i in (1, 2, 3):
        said(session, f"INSERT INTO t VALUES ({i}, 'v{i}')")
    said(session, "ALTER TABLE t ADD COLUMN n INT DEFAULT 7; INSERT INTO t VALUES (4, 'v4', 8)")
    backup = home / "backup.db"
    for suffix in ("", "-wal"):  # the file with its write-ahead log: what a copy of the folder holds
        if (home / f"catalog.db{suffix}").exists():
            shutil.copyfile(home / f"catalog.db{suffix}", home / f"backup.db{suffix}")

    with alterflow.connect(f"sqlite:///{home / 'catalog.db'}", uri) as connection:
        stream = connection.table("t").scan().to_batches()
        first = next(stream)
        done = run_gc(session.catalog, session.warehouse, lambda: session.spark, retention_s=0)
        assert done["compact"].tablets_compacted == 1 and done["delete_files"], done
        with pytest.raises(alterflow.UserError) as caught:
            list(stream)
        assert str(caught.value) == (
            "scan of t: a data file it read is gone (GC deleted it: the scan ran longer than the retention period, "
            "ALTERFLOW_GC_RETENTION) after rows were handed out; run the scan again"
        )
        assert first.num_rows >= 1
        assert connection.table("t").scan().to_arrow().num_rows == 4

    said(session, "INSERT INTO t VALUES (5, 'v5', 9)")  # committed after the backup
    before = objects(uri)
    for args in (("gc", "--retention", "0", "--orphan-retention", "0"), ("gc", "--dry-run", "--retention", "0")):
        line = refused(cli(home, uri, *args, catalog=f"sqlite:///{backup}"))
        assert line.startswith("catalog ") and " is behind warehouse s3://" in line and "GC deletes nothing" in line, line
    assert objects(uri) == before
    assert said(session, "SELECT id, v, n FROM t ORDER BY id") == ["1,v1,7", "2,v2,7", "3,v3,7", "4,v4,8", "5,v5,9"]


def test_a_users_own_spark_job_writes_and_reads_a_bucket_table(warehouse, tmp_path):
    """alterflow.spark.write_table and read_table from a user's own spark-submit job (its session
    set up as a user's: another time zone, ANSI on, field-id reads off), the warehouse in a bucket:
    the job's Python workers reach the store with the AWS variables they inherit."""
    from alterflow.rewrite.spark_submit import spark_submit_binary
    from tests.support import REPO
    from tests.support.heavy_jobs import subprocess_env

    home, uri = warehouse
    ok(cli(home, uri, "sql", "-e", "CREATE TABLE t (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id)); INSERT INTO t VALUES (-1, '5')"))
    swapped = tmp_path / "swapped"
    swapped.touch()  # nothing to wait for: the job reads at once
    env = {**subprocess_env(home), "ALTERFLOW_WAREHOUSE": uri}
    job = REPO / "tests" / "support" / "spark_door_job.py"
    command = [str(spark_submit_binary()), "--master", "local[2]", "--conf", "spark.ui.enabled=false", str(job)]
    done = subprocess.run(
        [*command, "write-then-read", "t", "0", "5000", str(swapped)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    written, read = (json.loads(line) for line in done.stdout.splitlines() if line.startswith("{"))
    assert written["rows"] == 5000
    assert (read["rows"], read["ids"], read["v_sum"], read["min_id"], read["max_id"]) == (
        5001,
        5001,
        sum(i % 1000 for i in range(5000)) + 5,
        -1,
        4999,
    )
    assert rows(home, uri, "SELECT count(*) FROM t") == ["5001"]
    assert not list(home.rglob("*.parquet")), "nothing written on the local disk"


def test_a_second_catalog_on_the_same_bucket_is_refused(warehouse, tmp_path):
    home, uri = warehouse
    ok(cli(home, uri, "sql", "-e", "CREATE TABLE t (id INT); INSERT INTO t VALUES (1)"))
    before = objects(uri)
    line = refused(cli(home, uri, "sql", "-e", "CREATE TABLE t (id INT)", catalog=f"sqlite:///{tmp_path / 'other.db'}"))
    assert line.startswith(f"warehouse {uri} belongs to catalog ") and "not to this catalog" in line
    assert refused(cli(home, uri, "gc", "--retention", "0", catalog=f"sqlite:///{tmp_path / 'other.db'}")).startswith(
        f"warehouse {uri} belongs"
    )
    assert objects(uri) == before


LOADER = """
import sys, alterflow
import pyarrow as pa
with alterflow.connect(catalog_url=sys.argv[1], warehouse=sys.argv[2]) as connection:
    table = connection.table("t")
    ids = pa.array(range(int(sys.argv[3]), int(sys.argv[3]) + 200_000), pa.int64())
    print("loading", flush=True)
    table.append(pa.table({"id": ids, "v": pa.array([f"value {i}" for i in range(200_000)])}))
    print("done", flush=True)
"""


def _load(catalog: str, uri: str, crash_at: str | None = None) -> subprocess.Popen:
    """The loader in a process of its own, its transaction's lease 1 s: a killed one's ends soon."""
    env = {k: v for k, v in os.environ.items() if k != "ALTERFLOW_CRASH_AT"}
    env["ALTERFLOW_LEASE_S"] = "1"
    if crash_at:
        env["ALTERFLOW_CRASH_AT"] = crash_at
    return subprocess.Popen([sys.executable, "-c", LOADER, catalog, uri, "0"], stdout=subprocess.PIPE, text=True, env=env)


def test_a_load_killed_mid_upload_leaves_nothing_visible_and_the_retry_lands_every_row_once(warehouse, s3_server, s3_bucket):
    """kill -9 while the load's files upload (the 1st and the 3rd file's upload begun, not
    complete), then at a seeded moment of the whole load: no row of a killed load is visible but
    all of it or none, no object of a cut upload exists (only its parts, for the store's abort), and
    the same load run again lands every row exactly once; GC deletes nothing visible."""
    import random

    import boto3

    home, uri = warehouse
    catalog = f"sqlite:///{home / 'catalog.db'}"
    ok(cli(home, uri, "sql", "-e", "CREATE TABLE t (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"))
    ok(cli(home, uri, "sql", "-e", "INSERT INTO t VALUES (-1, 'before')"))
    before = objects(uri)
    client = boto3.client("s3", endpoint_url=s3_server.endpoint)
    for point in ("object_uploading@1", "object_uploading@3"):
        writer = _load(catalog, uri, point)
        assert writer.wait(120) == -signal.SIGKILL
        assert rows(home, uri, "SELECT count(*) FROM t") == ["1"], "nothing of the killed load is visible"
        if point.endswith("@1"):  # every upload passes the point before it completes: none has
            assert set(objects(uri)) == set(before), "a cut upload is no object"
    # The 3rd upload's kill may follow two completed ones: files the killed load registered under
    # its transaction, never committed: GC drops them once its lease ran out and the retention passed.
    leftovers = set(objects(uri)) - set(before)
    assert all(path.split("/")[-1].startswith("3-") for path in leftovers), leftovers
    assert client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads"), "the cut uploads' parts wait for an abort"

    moment = random.Random(38).uniform(0.05, 1.5)
    writer = _load(catalog, uri)
    assert writer.stdout.readline().strip() == "loading"
    time.sleep(moment)
    writer.send_signal(signal.SIGKILL)
    writer.wait(30)
    assert rows(home, uri, "SELECT count(*) FROM t") in (["1"], ["200001"]), f"all or nothing, killed {moment:.2f} s in"

    done = _load(catalog, uri)
    assert done.wait(300) == 0 and done.stdout.read().splitlines()[-1] == "done"
    assert rows(home, uri, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM t") == ["200001,200001,-1,199999"]
    # moto's server dates every incomplete upload 2010-11-10 (real stores give the moment it began):
    # each cut upload is past the orphan retention at once, and goes once its load's transaction
    # is aborted (its lease of 1 s ran out: the next load aborted it). What would go is the killed
    # loads' (transactions 2, 3 and 4; 1 is the first row, 5 the load that landed) and nothing else.
    time.sleep(1.5)
    dry = ok(cli(home, uri, "gc", "--dry-run", "--retention", "0"))
    doomed = [line.split()[2] for line in dry.splitlines() if line.startswith("would delete")]
    assert doomed and {path.rsplit("/", 1)[-1].split("-", 1)[0] for path in doomed} <= {"2", "3", "4"}, dry
    assert "(upload): an upload never completed (no object): its parts are aborted" in dry, dry

    out = ok(cli(home, uri, "gc", "--retention", "0", ALTERFLOW_LEASE_S="1"))
    assert "incomplete upload" in out and not client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads"), out
    assert rows(home, uri, "SELECT count(*), count(DISTINCT id) FROM t") == ["200001,200001"]


def _killed(home: pathlib.Path, uri: str, args: list[str], crash_at: str | None = None, after_s: float | None = None) -> None:
    """Run the CLI in its own process group and see it die by SIGKILL: at a crash point (which
    kills the group, Spark's JVM with it) or `after_s` seconds in (the test kills the group)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(home), ALTERFLOW_WAREHOUSE=uri, ALTERFLOW_SPARK_MASTER="local[2]", ALTERFLOW_LEASE_S="2")
    if crash_at:
        env["ALTERFLOW_CRASH_AT"] = crash_at
    proc = subprocess.Popen(
        [str(ALTERFLOW), *args], env=env, cwd=home.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        if after_s is not None:
            try:
                proc.wait(after_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def test_a_spark_conversion_killed_on_a_bucket_resumes_and_converts_every_row_once(warehouse):
    """kill -9 of a Spark conversion on a bucket after its first tablet committed, then of the GC
    that took the orphaned job over at a seeded moment: GC again finishes the job, every row is
    there once and converted, and GC's sweep leaves no staging object."""
    import random

    home, uri = warehouse
    ok(cli(home, uri, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"))
    for first in (0, 2000):
        values = ", ".join(f"({i}, '{i}')" for i in range(first, first + 2000))
        ok(cli(home, uri, "sql", "-e", f"INSERT INTO t VALUES {values}"))
    alter = "ALTER TABLE t MODIFY COLUMN v BIGINT PROPERTIES ('engine' = 'spark')"
    _killed(home, uri, ["sql", "-e", alter], crash_at="tablet_1")
    assert 1 <= len(converted(home)) < 4, "killed after its first tablet"
    time.sleep(2.5)  # its lease (2 s) ran out
    moment = random.Random(3801).uniform(3.0, 12.0)
    _killed(home, uri, ["gc"], after_s=moment)
    time.sleep(2.5)
    out = ok(cli(home, uri, "gc", "--retention", "0", ALTERFLOW_LEASE_S="2"))
    assert rows(home, uri, "SELECT count(*), count(DISTINCT id), sum(v), min(v), max(v) FROM t") == [
        f"4000,4000,{sum(range(4000))},0,3999"
    ], f"killed GC at {moment:.1f} s; {out}"
    tablets = converted(home)
    assert len(tablets) == 4 and {t[0] for t in tablets} == {"spark"}, tablets
    assert not [p for p in objects(uri) if "/_staging/" in p], "a staging object is left"


def test_gc_aborts_an_incomplete_upload_only_once_the_catalog_proves_its_writer_over(warehouse, s3_server, s3_bucket):
    """moto's server dates every incomplete upload 2010-11-10, so by its start time alone each is
    past the orphan retention, a live load's too (CI met it: the hourly GC run aborted a load's
    uploads under way, and the load failed at CompleteMultipartUpload). GC aborts an upload only
    when its path names a transaction of this catalog that is no longer PREPARE; an upload of an
    open transaction, of a transaction this catalog never gave, or outside the layout stays."""
    import boto3

    from alterflow.store.layout import conversion_staging_path, data_file_path
    from catalog.catalog import Catalog

    home, uri = warehouse
    ok(cli(home, uri, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id))"))
    catalog = Catalog(f"sqlite:///{home / 'catalog.db'}")
    table = catalog.table("t")
    live = catalog.begin_transaction(table.id, "a load under way", 3600)
    client = boto3.client("s3", endpoint_url=s3_server.endpoint)
    keys = {
        "live": data_file_path(table.id, table.current_index_id, 1, live),
        "unknown transaction": data_file_path(table.id, table.current_index_id, 1, 999),
        "a conversion's staging, no such index": f"{conversion_staging_path(table.id, 77, 1, 'a1')}/part-0.parquet",
        "outside the layout": "notes/big.bin",
    }
    for key in keys.values():
        client.create_multipart_upload(Bucket=s3_bucket, Key=f"wh/{key}")

    def uploads() -> set[str]:
        return {u["Key"].removeprefix("wh/") for u in client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads", ())}

    out = ok(cli(home, uri, "gc"))
    assert uploads() == set(keys.values()), out  # the live load's upload is not cut
    catalog.abort_transaction(live, "the load failed")
    dry = ok(cli(home, uri, "gc", "--dry-run"))
    assert f"{keys['live']} (upload)" in dry and dry.count("(upload)") == 1, dry
    out = ok(cli(home, uri, "gc"))
    assert "incomplete upload" in out, out
    assert uploads() == set(keys.values()) - {keys["live"]}, out
