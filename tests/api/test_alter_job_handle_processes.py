"""A heavyweight ALTER through the Python API in a user's own process, whatever runs it (issue 35):
`python -c`, `python -` (stdin), `runpy` from `python -c`, a thread of such a process, an embedded
interpreter (tests/support/embedded_python.c; a notebook kernel's `__main__` is of the same kind,
without file or spec). Each runs in
an environment without the Spark Connect dependencies the project pins (zstandard made
unimportable first), where pyspark's import check used to `sys.exit(0)`: the driver thread died
in VALIDATING and `wait()` raised an ImportError. (`python -` names its main module's file
`<stdin>`, so pyspark's check passes it by; it is run all the same, as users run it.)

And a driver thread that dies of SystemExit or KeyboardInterrupt at a real step (the crash points'
`:exit` / `:interrupt`): `wait()` raises one line saying so, the process lives on, the job is
orphaned where it stopped, and RESUME finishes it with every row exactly once."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from alterflow.catalog.job_leases import is_orphaned
from alterflow.errors import MAX_LINE
from tests.support.embedded_python import compile_embedded_python

ROWS = 20_000
WITHOUT_ZSTANDARD = "import sys\nsys.modules['zstandard'] = None  # as if it were not installed\n"

# The user's program. Its table has no primary key: a row written twice would be counted twice.
CREATE_AND_ALTER = """
import alterflow, pyarrow as pa

with alterflow.connect() as af:
    af.sql("CREATE TABLE events (id BIGINT NOT NULL, code STRING) DISTRIBUTED BY HASH(id) BUCKETS 4")
    events = af.table("events")
    events.append(pa.table({"id": list(range(ROWS)), "code": [str(i % 1000) for i in range(ROWS)]}))
    job = events.alter("MODIFY COLUMN code INT")
    print("wait", job.wait(timeout=600).state)
    rows = events.scan().to_arrow()
    print("rows", rows.num_rows, len(set(rows.column("id").to_pylist())), rows.schema.field("code").type)
""".replace("ROWS", str(ROWS))

IN_A_THREAD = """
import threading

def user_code():
{body}

thread = threading.Thread(target=user_code)
thread.start()
thread.join()
"""

ALTER_ONLY = """
import alterflow

with alterflow.connect() as af:
    job = af.table("events").alter("MODIFY COLUMN code INT")
    try:
        job.wait(timeout=600)
        print("wait returned", job.state)
    except alterflow.UserError as exc:
        print(type(exc).__name__, exc)
    print("alive", job.done, job.state)
"""


def _env(home, catalog_url: str | None = None, warehouse=None, crash_at: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALTERFLOW_")}
    env["ALTERFLOW_HOME"] = str(home)
    if catalog_url:
        env.update(ALTERFLOW_CATALOG_URL=catalog_url, ALTERFLOW_WAREHOUSE=str(warehouse))
    if crash_at:
        env["ALTERFLOW_CRASH_AT"] = crash_at
    return env


def _run(command: list[str], env: dict[str, str], cwd, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(command, input=stdin, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def embedded_python(tmp_path_factory):
    return compile_embedded_python(tmp_path_factory.mktemp("embedded"))


def _command(how: str, program: str, request, tmp_path) -> tuple[list[str], str | None]:
    if how == "an embedded interpreter":
        return [str(request.getfixturevalue("embedded_python")), sys.executable, program], None
    if how == "python -c":
        return [sys.executable, "-c", program], None
    if how == "python -":
        return [sys.executable, "-"], program
    if how == "runpy from python -c":  # run_path keeps the `-c` module as __main__
        script = tmp_path / "user_program.py"
        script.write_text(program)
        return [sys.executable, "-c", f"import runpy; runpy.run_path({str(script)!r})"], None
    # a thread of a `python -c` process: the ALTER's driver is then a thread of a thread
    body = "\n".join("    " + line for line in program.splitlines())
    return [sys.executable, "-c", IN_A_THREAD.format(body=body)], None


@pytest.mark.parametrize("how", ["python -c", "python -", "runpy from python -c", "a thread of python -c", "an embedded interpreter"])
def test_a_heavy_alter_finishes_under_any_main_without_the_pinned_extras(how, request, tmp_path):
    command, stdin = _command(how, WITHOUT_ZSTANDARD + CREATE_AND_ALTER, request, tmp_path)
    done = _run(command, _env(tmp_path / "home"), tmp_path, stdin)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["wait FINISHED", f"rows {ROWS} {ROWS} int32"], done.stderr[-3000:]
    assert "Skipping doctests" not in done.stderr


@pytest.fixture
def events(api):
    api.sql("CREATE TABLE events (id BIGINT NOT NULL, code STRING) DISTRIBUTED BY HASH(id) BUCKETS 4")
    ids = np.arange(ROWS, dtype=np.int64)
    api.table("events").append(pa.table({"id": ids, "code": pc.cast(pa.array(ids % 1000), pa.string())}))
    return api.table("events")


@pytest.mark.parametrize(
    "crash_at, died_of, stays",
    [
        ("validating:exit@1", "SystemExit: crash point validating", "VALIDATING"),
        ("tablet_2:interrupt@1", "KeyboardInterrupt: crash point tablet_2", "RUNNING"),
    ],
)
def test_a_driver_thread_killed_by_a_base_exception_leaves_its_job_resumable(api, events, tmp_path, crash_at, died_of, stays):
    env = _env(api.settings.home, api.settings.catalog_url, api.warehouse, crash_at)
    done = _run([sys.executable, "-c", ALTER_ONLY], env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]  # the process lived on: only the thread died
    line, alive = done.stdout.splitlines()
    job = events.jobs()[-1]
    assert line == (
        f"DriverDied ALTER TABLE events: the thread driving its job died ({died_of}); job {job.id} stays {stays} "
        f"with nothing of it visible; RESUME ALTER TABLE COLUMN FROM events drives it on"
    ), done.stderr[-3000:]
    assert len(line.removeprefix("DriverDied ")) <= MAX_LINE and alive == f"alive True {stays}"
    assert job.state == stays and is_orphaned(job)  # its lease let go as the thread unwound: no waiting for it
    assert events.schema().column("code").type.sql() == "STRING" and events.scan().to_arrow().num_rows == ROWS

    resumed = api.sql("RESUME ALTER TABLE COLUMN FROM events")
    assert resumed.message == f"RESUME ALTER TABLE COLUMN FROM events: job {job.id} FINISHED, schema version 2"
    rows = events.scan().to_arrow()
    ids = rows.column("id").to_numpy()
    assert rows.num_rows == ROWS and len(np.unique(ids)) == ROWS and ids.min() == 0 and ids.max() == ROWS - 1
    assert rows.schema.field("code").type == pa.int32()
    assert pc.all(pc.equal(rows.column("code"), pc.cast(pc.cast(ids % 1000, pa.int64()), pa.int32()))).as_py()
