"""`alterflow gc` (docs/gc.md; docs/semantics.md): garbage collection and compaction on the embedded default, one line
per step; bad flags and a bad environment give one error line and change nothing. The rows are
read back in this process (`select`: the test run's SparkSession, not a JVM started per check)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from alterflow.engine.session import Session
from alterflow.settings import Settings
from alterflow.store.warehouse import MARKER
from tests.support.statements import sql

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
TIMEOUT = 300


def run(home: pathlib.Path, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(home), ALTERFLOW_SPARK_MASTER="local[2]", PYSPARK_PYTHON=sys.executable)
    env.update(env_extra)
    return subprocess.run(
        [str(ALTERFLOW), *args],
        env=env,
        cwd=home.parent,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def error_of(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert proc.stdout == ""
    return lines[0][len("error: ") :]


def versions(home: pathlib.Path) -> list[int]:
    out = ok(run(home, "sql", "--format", "json", "-e", "SHOW SCHEMA VERSIONS FROM t"))
    return [row[0] for row in json.loads(out)["rows"]]


def select(home: pathlib.Path, query: str) -> list[list]:
    """The rows of `query` through a Session of this process on the CLI's catalog and warehouse under `home`."""
    return [list(row) for row in sql(Session(Settings.from_env({"ALTERFLOW_HOME": str(home)})), query)]


def files(home: pathlib.Path) -> list[str]:
    root = home / "warehouse"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != MARKER)


@pytest.mark.spark
def test_gc_compacts_and_collects(tmp_path, spark):
    home = tmp_path / "home"
    ok(
        run(
            home,
            "sql",
            "-e",
            "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)); INSERT INTO t VALUES (1, 'a'), (2, 'b');"
            "ALTER TABLE t ADD COLUMN n INT DEFAULT 3; INSERT INTO t VALUES (2, 'bb', 4);"
            "ALTER TABLE t DROP COLUMN v",
        )
    )
    assert versions(home) == [1, 2, 3]
    before = select(home, "SELECT * FROM t ORDER BY id")
    assert before == [[1, 3], [2, 4]]
    old = files(home)

    # Within the retention (the default hour) compaction runs, versions stay.
    out = ok(run(home, "gc"))
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "abort_expired_loads",
        "resume_orphaned_jobs",
        "drop_origin_indexes",
        "compact",
        "collect_versions",
        "delete_files",
    ], out
    assert lines[3] == "compact: 1 tablet compacted (2 files replaced, 2 rows written)", out
    assert lines[4] == "collect_versions: 0 schema versions deleted", out
    assert lines[5] == (
        "delete_files: 0 files that left their tables deleted, 0 unreferenced files deleted, "
        "2 files kept until the retention period has passed"
    ), out
    assert versions(home) == [1, 2, 3]
    assert set(old) < set(files(home)) and len(files(home)) == 3, "the replaced files stay for the retention period"

    # A dry run lists what a run with no retention would delete, and why, and deletes nothing.
    out = ok(run(home, "gc", "--dry-run", "--retention", "0"))
    assert sorted(line.split(": ")[0] for line in out.splitlines()[:-1]) == sorted(f"would delete {p}" for p in old), out
    assert all(line.endswith(tuple("0123456789")) and "replaced by a compaction, at " in line for line in out.splitlines()[:-1]), out
    assert out.splitlines()[-1] == "dry run: 2 file(s) or folder(s) would be deleted; nothing was changed", out
    assert set(old) < set(files(home)) and versions(home) == [1, 2, 3]

    out = ok(run(home, "gc", "--retention", "0"))
    assert out.splitlines()[4] == "collect_versions: 2 schema versions deleted (t: 1, 2)", out
    assert out.splitlines()[5] == "delete_files: 2 files that left their tables deleted, 0 unreferenced files deleted", out
    assert versions(home) == [3]
    assert not set(old) & set(files(home)) and len(files(home)) == 1
    assert select(home, "SELECT * FROM t ORDER BY id") == before

    out = ok(run(home, "gc", ALTERFLOW_GC_RETENTION="0"))
    assert out.splitlines() == [
        "abort_expired_loads: 0 files of expired transactions dropped (deleted after the retention period)",
        "resume_orphaned_jobs: 0 orphaned jobs resumed",
        "drop_origin_indexes: 0 indexes dropped, 0 files of them dropped",
        "compact: 0 tablets compacted (0 files replaced, 0 rows written)",
        "collect_versions: 0 schema versions deleted",
        "delete_files: 0 files that left their tables deleted, 0 unreferenced files deleted",
    ], out
    assert ok(run(home, "gc", "--dry-run")) == "dry run: 0 file(s) or folder(s) would be deleted; nothing was changed\n"


BAD = [
    (("--bogus",), {}, "alterflow gc: unrecognized arguments: --bogus"),
    (("extra",), {}, "alterflow gc: unrecognized arguments: extra"),
    (("--retention",), {}, "alterflow gc: argument --retention: expected one argument"),
    (("--retention", "-5"), {}, "--retention must be a whole number of seconds"),
    (("--retention", "soon"), {}, "--retention must be a whole number of seconds"),
    (("--retention", "1e300"), {}, "--retention must be a whole number of seconds from 0 to 3162240000, not '1e300'"),
    (("--retention", "9" * 30), {}, "--retention must be a whole number of seconds from 0 to 3162240000"),
    (("--retention", "²"), {}, "--retention must be a whole number of seconds from 0 to 3162240000, not '²'"),
    (
        (),
        {"ALTERFLOW_GC_RETENTION": "an hour"},
        "ALTERFLOW_GC_RETENTION must be a whole number of seconds from 0 to 3162240000, not 'an hour'",
    ),
    ((), {"ALTERFLOW_GC_RETENTION": "-1"}, "ALTERFLOW_GC_RETENTION must be a whole number of seconds from 0 to 3162240000, not '-1'"),
    ((), {"ALTERFLOW_CATALOG_URL": "nonsense"}, "cannot open the catalog of ALTERFLOW_CATALOG_URL"),
    ((), {"ALTERFLOW_LEASE_S": "soon"}, "ALTERFLOW_LEASE_S must be a number of seconds from 0.5 to 86400, not 'soon'"),
    ((), {"ALTERFLOW_LEASE_S": "0"}, "ALTERFLOW_LEASE_S must be a number of seconds from 0.5 to 86400, not '0'"),
]


def test_gc_bad_flags_and_environment_change_nothing(tmp_path, monkeypatch, capsys):
    from alterflow.cli.command import main

    home = tmp_path / "home"
    ok(run(home, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, PRIMARY KEY (id)); ALTER TABLE t ADD COLUMN n INT"))
    # Two as real processes, every case through the command's entry point in this process.
    assert "unrecognized arguments: --bogus" in error_of(run(home, "gc", "--bogus", ALTERFLOW_GC_RETENTION="0"))
    assert "ALTERFLOW_GC_RETENTION" in error_of(run(home, "gc", ALTERFLOW_GC_RETENTION="x"))
    for name in [k for k in os.environ if k.startswith("ALTERFLOW_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ALTERFLOW_HOME", str(home))
    for args, env, expected in BAD:
        # Retention 0 unless the case sets it: a bad flag that was ignored would collect version 1.
        for name, value in {"ALTERFLOW_GC_RETENTION": "0", **env}.items():
            monkeypatch.setenv(name, value)
        code = main(["gc", *args])
        captured = capsys.readouterr()
        message = error_of(subprocess.CompletedProcess(args, code, captured.out, captured.err))
        assert expected in message, (args, env, message)
        for name in env:
            monkeypatch.delenv(name)
    assert versions(home) == [1, 2], "nothing was collected"
    assert "--retention SECONDS" in ok(run(home, "gc", "--help"))
    assert "gc" in ok(run(home, "--help"))


def test_gc_asks_the_airflow_of_alterflow_airflow_url_about_a_jobs_run_and_an_unreachable_one_is_one_line(tmp_path):
    """An orphaned job whose last driver is an Airflow run: `alterflow gc` asks ALTERFLOW_AIRFLOW_URL's
    Airflow whether that run still drives it (docs/gc.md). An Airflow that does not answer stops GC
    with one line, after the steps before; the job is not taken over."""
    from alterflow.catalog.heavy_jobs import HeavyJobs
    from alterflow.held_leases import airflow_run_group
    from tests.support.heavy_jobs import orphan_of_an_airflow_run
    from tests.support.ports import free_port

    home = tmp_path / "home"
    ok(run(home, "sql", "-e", "CREATE TABLE t (id INT NOT NULL, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"))
    ok(run(home, "sql", "-e", "INSERT INTO t VALUES (1, '10'), (2, '20')"))
    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(home)}))
    job_id = orphan_of_an_airflow_run(session, "ALTER TABLE t MODIFY COLUMN v INT", "manual__waiting", lease_s=0.5)
    before = HeavyJobs(session.catalog).job(job_id)
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens
    proc = run(home, "gc", ALTERFLOW_AIRFLOW_URL=url, ALTERFLOW_AIRFLOW_PASSWORD="x")
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith(f"error: cannot reach Airflow at {url} (ALTERFLOW_AIRFLOW_URL): "), proc.stderr
    assert proc.stdout.startswith("abort_expired_loads"), proc.stdout  # the step before ran
    job = HeavyJobs(session.catalog).job(job_id)
    assert (job.state, job.lease_holder, job.lease_group) == (before.state, before.lease_holder, before.lease_group), job
    assert job.lease_group == airflow_run_group("manual__waiting")
