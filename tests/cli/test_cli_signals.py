"""Ctrl-C (SIGINT) and SIGTERM in a CLI heavy ALTER, `migrate apply` and a load, and output into a
closed pipe (docs/semantics.md#interrupts-and-closed-pipes). Real `alterflow` processes, real
signals: each is sent at a moment the catalog shows (a job waiting for a transaction this test
holds open, a load's PREPARE transaction) or after a seeded random delay; the process prints one
line with the state of the work and the command that continues it, exits 130 or 143, nothing of
the work is visible, and that command then finishes it with every row once."""

from __future__ import annotations

import json
import os
import pathlib
import random
import re
import shlex
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.job_leases import is_orphaned
from alterflow.catalog.states import JobState
from alterflow.settings import Settings

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
TIMEOUT = 300
DEADLINE = 240  # seconds a polled state may take to show on a busy host
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
ROWS = 40


CATALOG_URLS: dict[pathlib.Path, str] = {}  # a home's catalog, when it is not the home's SQLite file


def env_of(home: pathlib.Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env.update(ALTERFLOW_HOME=str(home), ALTERFLOW_SPARK_MASTER="local[2]", PYSPARK_PYTHON=sys.executable, PYTHONFAULTHANDLER="1")
    if home in CATALOG_URLS:
        env.update(ALTERFLOW_CATALOG_URL=CATALOG_URLS[home])
    return env


def run(home: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ALTERFLOW), *args], env=env_of(home), cwd=home.parent, capture_output=True, text=True, timeout=TIMEOUT)


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr == "", proc.stderr
    return proc.stdout


def start(home: pathlib.Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(ALTERFLOW), *args],
        env=env_of(home),
        cwd=home.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def interrupt(proc: subprocess.Popen, signum: int, may_finish: bool = False) -> str | None:
    """Send `signum`; the process's one stderr line, once it exited with 130 or 143. With
    `may_finish`, None when the signal came after the work (the process was exiting: it ignores it)."""
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler (PYTHONFAULTHANDLER, env_of) prints every thread's stack
        out, err = proc.communicate(timeout=60)
        pytest.fail(f"still running {TIMEOUT} s after {signal.Signals(signum).name}; printed {out!r}, then its threads:\n{err}")
    if may_finish and proc.returncode == 0 and err == "":
        return None
    assert proc.returncode == EXIT[signum], (proc.returncode, out, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith(f"interrupted by {signal.Signals(signum).name}: ") and len(line) <= 300, line
    assert "Traceback" not in err and "internal error" not in err, err
    return line


def catalog_of(home: pathlib.Path) -> Catalog:
    return Catalog(Settings.from_env({k: v for k, v in env_of(home).items() if k.startswith("ALTERFLOW_")}).catalog_url)


def poll(what: str, check, proc: subprocess.Popen | None = None, every_s: float = 0.05):
    """`check()` until it answers something true (the process still running), within DEADLINE."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the process ended ({proc.returncode}) before {what}: {proc.communicate()}")
        time.sleep(every_s)
    pytest.fail(f"no {what} within {DEADLINE} s")


def rows(home: pathlib.Path, query: str) -> list[list]:
    return json.loads(ok(run(home, "sql", "--format", "json", "-e", query)))["rows"]


def job_in(home: pathlib.Path, states: tuple[str, ...]):
    jobs = [j for j in catalog_of(home).jobs() if j.kind == "HEAVY" and j.state in states]
    return jobs[-1] if jobs else None


@pytest.fixture
def home(request, tmp_path) -> pathlib.Path:
    """A home with table t of ROWS rows (id, v = id), its catalog on SQLite (or, parametrised
    indirectly with "postgresql", on PostgreSQL)."""
    home = tmp_path / "home"
    if getattr(request, "param", "sqlite") == "postgresql":
        CATALOG_URLS[home] = request.getfixturevalue("pg_url")
        request.addfinalizer(lambda: CATALOG_URLS.pop(home))
    values = ", ".join(f"({i}, {i})" for i in range(1, ROWS + 1))
    ok(run(home, "sql", "-e", f"CREATE TABLE t (id INT NOT NULL, v INT, PRIMARY KEY (id)); INSERT INTO t VALUES {values}"))
    return home


def blocker(home: pathlib.Path) -> int:
    """A load transaction this test holds open: a heavyweight job on t waits for it in WAITING_TXN."""
    catalog = catalog_of(home)
    return catalog.begin_transaction(catalog.table("t").id, "held by the test", 3600)


def heavy_done(home: pathlib.Path) -> None:
    """The heavy ALTER (v INT to SMALLINT) finished once: every row once, v converted."""
    assert [j.state for j in catalog_of(home).jobs() if j.kind == "HEAVY"] == [JobState.FINISHED]
    described = {r[0]: r[1] for r in rows(home, "DESCRIBE t")}
    assert described["v"] == "SMALLINT"
    assert rows(home, "SELECT id, v FROM t ORDER BY id") == [[i, i] for i in range(1, ROWS + 1)]


def continue_command(line: str) -> list[str]:
    """The command the line says continues the work."""
    match = re.search(r"continue it with: (alterflow sql -e \"[^\"]+\")", line)
    assert match, line
    return shlex.split(match.group(1))[1:]


@pytest.mark.parametrize(
    ("signum", "home"),
    [
        pytest.param(signal.SIGINT, "sqlite", id="SIGINT-sqlite"),
        pytest.param(signal.SIGTERM, "postgresql", id="SIGTERM-postgresql", marks=pytest.mark.postgres),
    ],
    indirect=["home"],
)
def test_heavy_alter_interrupted_while_waiting_resumes_at_once(home, signum):
    held = blocker(home)
    proc = start(home, "sql", "-e", "ALTER TABLE t MODIFY COLUMN v SMALLINT")
    job = poll("job in WAITING_TXN", lambda: job_in(home, (JobState.WAITING_TXN,)), proc)
    line = interrupt(proc, signum)
    assert f"job {job.id} stopped in WAITING_TXN with its lease released" in line, line
    assert continue_command(line) == ["sql", "-e", "RESUME ALTER TABLE COLUMN FROM t"]
    # Nothing of it visible, and nobody drives it: its lease was let go, not left to lapse.
    assert {r[0]: r[1] for r in rows(home, "DESCRIBE t")}["v"] == "INT"
    stopped = catalog_of(home).job_by_request(job.request_id)
    assert stopped.state == JobState.WAITING_TXN
    assert is_orphaned(stopped), stopped
    catalog_of(home).abort_transaction(held, "the test lets the job go on")
    assert "job 1 FINISHED" in ok(run(home, *continue_command(line)))  # at once: no lease to wait out
    heavy_done(home)


@pytest.mark.parametrize("seed", [2, 11])
def test_heavy_alter_interrupted_at_a_seeded_moment_is_finished_by_what_the_line_says(home, seed):
    chance = random.Random(seed)
    signum = chance.choice([signal.SIGINT, signal.SIGTERM])
    proc = start(home, "sql", "-e", "ALTER TABLE t MODIFY COLUMN v SMALLINT")
    time.sleep(chance.uniform(0.5, 4.0))
    line = interrupt(proc, signum, may_finish=True)
    print(line)  # which moment this seed met, in the report of a failure
    if line is not None and "continue it with: " in line:  # None: the work was over first on this host
        assert "RESUME" in ok(run(home, *continue_command(line)))
    elif line is not None and any(
        says in line for says in ("run it again", "run the same command again", "the same command run again continues it")
    ):
        assert {r[0]: r[1] for r in rows(home, "DESCRIBE t")}["v"] == "INT"
        ok(run(home, "sql", "-e", "ALTER TABLE t MODIFY COLUMN v SMALLINT"))
    elif line is not None:
        assert "nothing to run again" in line, line
    heavy_done(home)


def big_csv(path: pathlib.Path, first: int, count: int) -> pathlib.Path:
    """`count` rows (id from `first` up, v = id % 30000): a load that writes for seconds."""
    ids = pa.array(range(first, first + count), pa.int64())
    pacsv.write_csv(pa.table({"id": ids, "v": pc.remainder(ids, 30000)}), path)
    return path


LOAD_ROWS = 3_000_000


def loaded(home: pathlib.Path) -> list:
    return rows(home, "SET engine = local; SELECT count(*), count(DISTINCT id), sum(id) FROM t")[0]


def load_done(home: pathlib.Path) -> None:
    """Table t holds its ROWS rows and the load's once."""
    first, last = ROWS + 1, ROWS + LOAD_ROWS
    assert loaded(home) == [ROWS + LOAD_ROWS, ROWS + LOAD_ROWS, sum(range(1, ROWS + 1)) + (first + last) * LOAD_ROWS // 2]


def open_load(home: pathlib.Path):
    catalog = catalog_of(home)
    table_id = catalog.table("t").id
    return next((t for t in catalog.blocking_transactions(table_id, 1 << 62) if t.label.startswith("load ")), None)


@pytest.mark.parametrize(
    ("signum", "home"),
    [
        pytest.param(signal.SIGINT, "sqlite", id="SIGINT-sqlite"),
        pytest.param(signal.SIGTERM, "postgresql", id="SIGTERM-postgresql", marks=pytest.mark.postgres),
    ],
    indirect=["home"],
)
def test_load_interrupted_mid_write_is_aborted_and_loads_once_again(home, tmp_path, signum):
    data = big_csv(tmp_path / "data.csv", ROWS + 1, LOAD_ROWS)
    proc = start(home, "load", "t", str(data), "--engine", "local")
    txn = poll("load transaction in PREPARE", lambda: open_load(home), proc, every_s=0.01)
    line = interrupt(proc, signum)
    assert f"the load into t was aborted (transaction {txn.id}), none of its rows are visible; run it again: alterflow load t" in line
    assert loaded(home) == [ROWS, ROWS, sum(range(1, ROWS + 1))]
    assert open_load(home) is None  # aborted, not left to its lease
    ok(run(home, "load", "t", str(data), "--engine", "local"))
    load_done(home)


@pytest.mark.parametrize("seed", [3])
def test_load_interrupted_at_a_seeded_moment_then_run_as_the_line_says(home, tmp_path, seed):
    chance = random.Random(seed)
    data = big_csv(tmp_path / "data.csv", ROWS + 1, LOAD_ROWS)
    for signum in (signal.SIGTERM, signal.SIGINT):
        proc = start(home, "load", "t", str(data), "--engine", "local")
        time.sleep(chance.uniform(0.2, 2.0))
        line = interrupt(proc, signum, may_finish=True)
        print(line)  # which moment this seed met, in the report of a failure
        if line is None or "do not run it again" in line:  # the load committed first
            break
        assert any(says in line for says in ("run it again", "run the same command again", "the same command run again continues it")), line
        assert loaded(home) == [ROWS, ROWS, sum(range(1, ROWS + 1))]
    else:
        ok(run(home, "load", "t", str(data), "--engine", "local"))
    load_done(home)


def migrations(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "V1__add_a.sql").write_text("ALTER TABLE t ADD COLUMN a INT DEFAULT 7;\n")
    (folder / "V2__narrow_v.sql").write_text("ALTER TABLE t MODIFY COLUMN v SMALLINT;\n")
    (folder / "V3__more_rows.sql").write_text(
        f"INSERT INTO t (id, v) VALUES ({ROWS + 1}, 1), ({ROWS + 2}, 2);\nALTER TABLE t ADD COLUMN b INT DEFAULT 1;\n"
    )
    return folder


@pytest.mark.parametrize(
    ("signum", "home"),
    [
        pytest.param(signal.SIGINT, "sqlite", id="SIGINT-sqlite"),
        pytest.param(signal.SIGTERM, "postgresql", id="SIGTERM-postgresql", marks=pytest.mark.postgres),
    ],
    indirect=["home"],
)
def test_migrate_apply_interrupted_in_a_heavy_alter_is_finished_by_apply_again(home, tmp_path, signum):
    folder = migrations(tmp_path)
    held = blocker(home)
    proc = start(home, "migrate", "--dir", str(folder), "apply")
    poll("job in WAITING_TXN", lambda: job_in(home, (JobState.WAITING_TXN,)), proc)
    line = interrupt(proc, signum)
    assert "migrate apply stopped; V2__narrow_v.sql line 1 was running;" in line, line
    assert line.endswith(f"continue with: alterflow migrate --dir {folder} apply"), line
    assert {r[0]: r[1] for r in rows(home, "DESCRIBE t")} == {"id": "INT", "v": "INT", "a": "INT"}
    catalog_of(home).abort_transaction(held, "the test lets the job go on")
    out = ok(run(home, "migrate", "--dir", str(folder), "apply"))
    assert "V3__more_rows.sql APPLIED" in out and "applied 2 file(s), 3 statement(s)" in out, out
    states = json.loads(ok(run(home, "migrate", "--dir", str(folder), "status", "--format", "json")))
    assert [f["state"] for f in states["migrations"]] == ["APPLIED"] * 3, states
    expected = [[i, i, 7, 1] for i in range(1, ROWS + 1)] + [[ROWS + 1, 1, 7, 1], [ROWS + 2, 2, 7, 1]]
    assert rows(home, "SELECT id, v, a, b FROM t ORDER BY id") == expected


def test_long_select_into_head_ends_quietly(home, tmp_path):
    values = ", ".join(f"({i}, {i})" for i in range(ROWS + 1, 30_001))
    (tmp_path / "insert.sql").write_text(f"INSERT INTO t VALUES {values}")
    ok(run(home, "sql", "-f", str(tmp_path / "insert.sql")))
    command = shlex.quote(str(ALTERFLOW))
    for statements, tail, status in (
        ("SELECT * FROM t ORDER BY id; SHOW SCHEMA VERSIONS FROM t", "", 0),  # every statement runs: status 0
        ("SELECT * FROM t ORDER BY id; SELECT nothing FROM t", "2>&1", 1),  # stderr into the closed pipe too
    ):
        script = f"{command} sql -e '{statements}' {tail} | head -1; echo \"status ${{PIPESTATUS[0]}}\" >&2"
        proc = subprocess.run(["bash", "-c", script], env=env_of(home), cwd=home.parent, capture_output=True, text=True, timeout=TIMEOUT)
        assert proc.stdout.splitlines() == ["+-------+-------+"], proc.stdout
        assert proc.stderr == f"status {status}\n", proc.stderr  # no BrokenPipeError, no internal error line


def test_migrate_apply_into_a_closed_pipe_applies_every_file(home, tmp_path):
    folder = tmp_path / "migrations"
    folder.mkdir()
    for n in range(1, 13):
        (folder / f"V{n}__add_c{n}.sql").write_text(f"ALTER TABLE t ADD COLUMN c{n} INT DEFAULT {n};\n")
    reader, writer = os.pipe()
    proc = subprocess.Popen(
        [str(ALTERFLOW), "migrate", "--dir", str(folder), "apply"],
        env=env_of(home),
        cwd=home.parent,
        stdout=writer,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(writer)
    with os.fdopen(reader, "rb") as out:
        first = out.readline()  # then the reader goes away, as `| head -1`
    assert first.startswith(b"V1__add_c1.sql:1 ")
    err = proc.communicate(timeout=TIMEOUT)[1]
    assert (proc.returncode, err) == (0, "")
    states = json.loads(ok(run(home, "migrate", "--dir", str(folder), "status", "--format", "json")))
    assert [f["state"] for f in states["migrations"]] == ["APPLIED"] * 12, states
    assert rows(home, "SELECT c1, c12 FROM t WHERE id = 1") == [[1, 12]]


def test_gc_interrupted_while_it_drives_an_orphaned_job_lets_it_go_and_gc_again_finishes_it(home):
    held = blocker(home)
    alter = start(home, "sql", "-e", "ALTER TABLE t MODIFY COLUMN v SMALLINT")
    poll("job in WAITING_TXN", lambda: job_in(home, (JobState.WAITING_TXN,)), alter)
    assert "RESUME" in interrupt(alter, signal.SIGINT)
    orphan = job_in(home, (JobState.WAITING_TXN,))
    assert is_orphaned(orphan)
    gc = start(home, "gc")
    poll("gc driving the orphaned job", lambda: not is_orphaned(catalog_of(home).job_by_request(orphan.request_id)), gc)
    line = interrupt(gc, signal.SIGTERM)
    assert "alterflow gc stopped after its step 'abort_expired_loads'" in line and line.endswith("run it again: alterflow gc"), line
    assert is_orphaned(catalog_of(home).job_by_request(orphan.request_id))  # let go, not left to lapse
    catalog_of(home).abort_transaction(held, "the test lets the job go on")
    assert "1 orphaned job resumed" in ok(run(home, "gc"))
    heavy_done(home)


def test_spark_load_interrupted_prints_one_line_and_loads_once_again(home, tmp_path):
    """Ctrl-C still reaches the command's own SIGINT handler once Spark runs (it cancels Spark's jobs,
    as PySpark's does), and a Py4J call it interrupts logs nothing on stderr."""
    data = big_csv(tmp_path / "data.csv", ROWS + 1, LOAD_ROWS)
    proc = start(home, "load", "t", str(data), "--engine", "spark")
    txn = poll("load transaction in PREPARE", lambda: open_load(home), proc)
    line = interrupt(proc, signal.SIGINT)
    assert f"the load into t was aborted (transaction {txn.id}), none of its rows are visible; run it again" in line
    assert loaded(home) == [ROWS, ROWS, sum(range(1, ROWS + 1))]
    ok(run(home, "load", "t", str(data), "--engine", "local"))
    load_done(home)


SWALLOWED = """
import os, signal, sys, time, weakref
from alterflow.cli import signals
signals.install()
which = signal.SIGTERM if sys.argv[1] == "SIGTERM" else signal.SIGINT
Thing = type("Thing", (), {})  # an object whose collection runs `callback`
def callback(_ref):  # Python cannot raise from here: "Exception ignored in ..."
    os.kill(os.getpid(), which)
    end = time.monotonic() + 0.2
    while time.monotonic() < end:  # the signal's handler runs in this loop
        time.sleep(0)
thing = Thing()
ref = weakref.ref(thing, callback)
try:
    del thing
    time.sleep(30)
    print("not interrupted")
except KeyboardInterrupt as exc:
    print(type(exc).__name__)
"""


IMPORTING = """
import pathlib, signal, sys, time
from alterflow.cli import signals
signals.install()
signals.IMPORT_GRACE_S = float(sys.argv[2])
folder = pathlib.Path(sys.argv[1])
(folder / "slow_module.py").write_text(
    "import pathlib, sys, time\\n"
    f"pathlib.Path({str(folder / 'importing')!r}).touch()\\n"
    "START = time.monotonic()\\n"
    f"while not pathlib.Path({str(folder / 'release')!r}).exists():  # until the test lets the import end (60 s at most)\\n"
    "    time.sleep(0.02)\\n"
    "    assert time.monotonic() < START + 60\\n"
    "WHOLE = True\\n"
)
sys.path.insert(0, str(folder))
try:
    import slow_module
    print("imported", slow_module.WHOLE, flush=True)
    time.sleep(30)
    print("not interrupted")
except KeyboardInterrupt as exc:
    print(type(exc).__name__, "slow_module" in sys.modules, (folder / "release").exists())
"""


@pytest.mark.parametrize(("signame", "raised"), [("SIGTERM", "Terminated"), ("SIGINT", "KeyboardInterrupt")])
def test_an_interrupt_during_an_import_is_raised_once_the_import_finished(tmp_path, signame, raised):
    """An exception raised inside an import leaves the process's imports broken (a half-initialised
    module, a module lock never released: in CI a gc that SIGTERM reached while it imported went
    on for 300 s without its line): the interrupt waits for the import, then is raised."""
    child = subprocess.Popen(
        [sys.executable, "-c", IMPORTING, str(tmp_path), "10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    poll("the import under way", lambda: (tmp_path / "importing").exists(), child)
    child.send_signal(getattr(signal, signame))
    time.sleep(0.5)  # the signal waits for the import, which goes on until released
    (tmp_path / "release").touch()
    out, err = child.communicate(timeout=60)
    assert (out, err) == (f"imported True\n{raised} True True\n", ""), (out, err)


def test_an_import_that_takes_longer_than_the_grace_is_interrupted_inside(tmp_path):
    """An import that does not finish within the grace (one waiting on another thread's import) is
    interrupted where it is (the import is never released): the command ends, as it would without
    the grace."""
    child = subprocess.Popen(
        [sys.executable, "-c", IMPORTING, str(tmp_path), "0.2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    poll("the import under way", lambda: (tmp_path / "importing").exists(), child)
    child.send_signal(signal.SIGTERM)
    out, err = child.communicate(timeout=60)
    assert (out, err) == ("Terminated False False\n", ""), (out, err)


@pytest.mark.parametrize(("signame", "raised"), [("SIGTERM", "Terminated"), ("SIGINT", "KeyboardInterrupt")])
def test_an_interrupt_that_lands_in_a_weakref_callback_is_raised_again_in_the_work(signame, raised):
    """A signal handled while a weakref callback runs (importlib's module-lock callback, in CI: a
    gc that SIGTERM reached there went on for 300 s) raises where Python swallows the exception:
    the command sends it again, and it is raised in the work under way, with nothing on stderr."""
    done = subprocess.run([sys.executable, "-c", SWALLOWED, signame], capture_output=True, text=True, timeout=20)
    assert (done.stdout, done.stderr) == (f"{raised}\n", ""), done


def test_an_error_raised_while_an_interrupt_unwinds_is_reported_as_the_interrupt():
    """Py4J turns the KeyboardInterrupt of a call that Ctrl-C cut into an error of its own ("Gateway
    must be connected to send cancel cmd."): the command reports the interrupt, not an internal error."""
    from alterflow.cli.output import report_failure

    try:
        try:
            raise KeyboardInterrupt()
        except KeyboardInterrupt:
            raise RuntimeError("Gateway must be connected to send cancel cmd.") from None
    except RuntimeError as exc:
        error = exc
    with pytest.raises(KeyboardInterrupt):
        report_failure(error)
