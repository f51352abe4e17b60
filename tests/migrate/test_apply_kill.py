"""`alterflow migrate apply` killed with SIGKILL, then run again (docs/migrations.md: "No statement runs
twice, even after `kill -9`"), with real processes and real signals.

A migrations directory of five files (CREATE TABLEs, INSERTs of 2,000 rows into a 4-bucket table,
light ALTERs, a heavyweight `MODIFY COLUMN v INT` of a VARCHAR column that the local engine
converts tablet by tablet, then a rename, more INSERTs and ALTERs and a DROP TABLE in a later
file) is applied by an `alterflow migrate apply` process that kills itself at a crash point
(`ALTERFLOW_CRASH_AT`): between two statements (`migrate_statement_recorded@k`, k seeded), inside
the heavy statement's conversion (`tablet_1`, also on PostgreSQL), and after a statement ran but
before it is recorded (`migrate_statement_ran@k`: one statement of each kind in turn, seeded); and
once at a seeded random moment, killed from outside. Each time the process must have died by
SIGKILL where it was meant to, and the next apply (without the crash) must finish with every file
APPLIED, every ALTER having made exactly one job and one schema version, every INSERT exactly one
committed transaction, and the tables holding exactly the rows of a Python model of the
statements. ALTERFLOW_KILL_SEED=n picks other statements and moments, reproducibly.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from sqlalchemy import select

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.migration_history import DONE, RUNNING, MigrationHistory
from alterflow.catalog.models import TableRow, TransactionRow
from alterflow.read.arrow_read import read_snapshot_arrow
from alterflow.settings import Settings
from tests.support.heavy_jobs import subprocess_env

ALTERFLOW = pathlib.Path(sys.executable).parent / "alterflow"
LEASE_S = 2.0  # a dead apply's lease (and its job's runner lease) runs out within seconds
# The seed of the random kills; another (ALTERFLOW_KILL_SEED=n) explores other moments, reproducibly.
SEED = int(os.environ.get("ALTERFLOW_KILL_SEED", "20261126"))
T_ROWS = 2000  # 4 tablets of t for the heavyweight conversion (local engine: far below its limits)
U_ROWS = 50
TIMEOUT_S = 240


# -- the migrations and their model ---------------------------------------------------------------
class Model:
    """What the tables must hold: each table's columns in order and its rows."""

    def __init__(self):
        self.columns: dict[str, list[str]] = {}
        self.rows: dict[str, list[dict]] = {}

    def create(self, table: str, *columns: str) -> None:
        self.columns[table], self.rows[table] = list(columns), []

    def insert(self, table: str, rows: list[dict]) -> None:
        self.rows[table].extend(rows)

    def add(self, table: str, column: str, default) -> None:
        self.columns[table].append(column)
        for row in self.rows[table]:
            row[column] = default

    def convert(self, table: str, column: str, to: Callable) -> None:
        for row in self.rows[table]:
            row[column] = to(row[column])

    def rename(self, table: str, old: str, new: str) -> None:
        self.columns[table] = [new if c == old else c for c in self.columns[table]]
        for row in self.rows[table]:
            row[new] = row.pop(old)

    def drop_table(self, table: str) -> None:
        del self.columns[table], self.rows[table]

    def drop(self, table: str, column: str) -> None:
        self.columns[table].remove(column)
        for row in self.rows[table]:
            del row[column]

    def expected(self, table: str) -> list[tuple]:
        """The rows as tuples in column order, sorted (the first column is the table's key)."""
        return sorted(tuple(r[c] for c in self.columns[table]) for r in self.rows[table])


@dataclass(frozen=True)
class Step:
    sql: str
    effect: Callable[[Model], None]

    @property
    def kind(self) -> str:
        return self.sql.split()[0].upper()

    @property
    def table(self) -> str:
        words = self.sql.replace("(", " ").split()
        return words[2]


def _t_rows(first: int, last: int) -> list[dict]:
    return [{"id": k, "v": str(k * 3), "n": k % 7} for k in range(first, last + 1)]


def _values(rows: list[dict], columns: list[str]) -> str:
    def literal(value):
        return f"'{value}'" if isinstance(value, str) else str(value)

    return ", ".join("(" + ", ".join(literal(r[c]) for c in columns) + ")" for r in rows)


def _insert(table: str, rows: list[dict], columns: list[str], named: bool = False) -> Step:
    into = f"{table} ({', '.join(columns)})" if named else table
    return Step(f"INSERT INTO {into} VALUES {_values(rows, columns)}", lambda m: m.insert(table, [dict(r) for r in rows]))


T_FIRST, T_SECOND = _t_rows(1, T_ROWS // 2), _t_rows(T_ROWS // 2 + 1, T_ROWS)
U_FIRST = [{"k": k, "label": f"u{k}"} for k in range(1, U_ROWS + 1)]
U_LATER = [{"k": k, "label": f"later{k}"} for k in range(U_ROWS + 1, U_ROWS + 11)]
T_LATER = [{"id": k, "v": k * 3, "m": k % 7, "a": 9, "b": f"b{k}"} for k in range(T_ROWS + 1, T_ROWS + 101)]
HEAVY = "ALTER TABLE t MODIFY COLUMN v INT"

# Files in version order (V10 sorts after V4: versions are numbers). The heavy ALTER opens its file.
MIGRATIONS: dict[str, list[Step]] = {
    "V1__create_tables.sql": [
        Step(
            "CREATE TABLE t (id INT NOT NULL, v VARCHAR(20), n INT) DISTRIBUTED BY HASH(id) BUCKETS 4",
            lambda m: m.create("t", "id", "v", "n"),
        ),
        Step("CREATE TABLE u (k INT NOT NULL, label VARCHAR(20)) DISTRIBUTED BY HASH(k) BUCKETS 2", lambda m: m.create("u", "k", "label")),
        Step(
            "CREATE TABLE old_events (id INT NOT NULL, payload VARCHAR(100)) DISTRIBUTED BY HASH(id) BUCKETS 1",
            lambda m: m.create("old_events", "id", "payload"),
        ),
    ],
    "V2__initial_rows.sql": [
        _insert("t", T_FIRST, ["id", "v", "n"]),
        _insert("t", T_SECOND, ["id", "v", "n"]),
        _insert("u", U_FIRST, ["k", "label"]),
    ],
    "V3__light_columns.sql": [
        Step('ALTER TABLE t ADD COLUMN a INT DEFAULT "5"', lambda m: m.add("t", "a", 5)),
        Step('ALTER TABLE u ADD COLUMN note VARCHAR(10) DEFAULT "x"', lambda m: m.add("u", "note", "x")),
    ],
    "V4__v_becomes_int.sql": [
        Step(HEAVY, lambda m: m.convert("t", "v", int)),
        Step('ALTER TABLE t ADD COLUMN b VARCHAR(10) DEFAULT "new"', lambda m: m.add("t", "b", "new")),
    ],
    "V10__later.sql": [
        Step("ALTER TABLE t RENAME COLUMN n TO m", lambda m: m.rename("t", "n", "m")),
        _insert("t", T_LATER, ["id", "v", "m", "a", "b"], named=True),
        Step("ALTER TABLE u DROP COLUMN note", lambda m: m.drop("u", "note")),
        Step('ALTER TABLE t ADD COLUMN c INT DEFAULT "7"', lambda m: m.add("t", "c", 7)),
        _insert("u", U_LATER, ["k", "label"]),
        Step("DROP TABLE old_events", lambda m: m.drop_table("old_events")),
    ],
}
STEPS = [step for steps in MIGRATIONS.values() for step in steps]
TABLES = ("t", "u")  # the tables left at the end (old_events is created, then dropped)
HEAVY_AT = next(i for i, s in enumerate(STEPS, start=1) if s.sql == HEAVY)  # its position in apply order


def write_migrations(directory: pathlib.Path) -> None:
    directory.mkdir(parents=True)
    for name, steps in MIGRATIONS.items():
        text = f"-- {name}: part of the kill test's history\n" + "".join(f"{step.sql};\n" for step in steps)
        (directory / name).write_text(text, encoding="utf-8")


def model_after_all() -> Model:
    model = Model()
    for step in STEPS:
        step.effect(model)
    return model


# -- processes -------------------------------------------------------------------------------------
@dataclass
class Place:
    """One catalog, warehouse and migrations directory."""

    root: pathlib.Path
    catalog_url: str

    @property
    def home(self) -> pathlib.Path:
        return self.root / "home"

    @property
    def migrations(self) -> pathlib.Path:
        return self.root / "migrations"

    def env(self, crash_at: str | None = None) -> dict[str, str]:
        env = subprocess_env(self.home)
        env.update(ALTERFLOW_CATALOG_URL=self.catalog_url, ALTERFLOW_LEASE_S=str(LEASE_S))
        if crash_at:
            env["ALTERFLOW_CRASH_AT"] = crash_at
        return env

    def spawn(self, *args: str, crash_at: str | None = None) -> subprocess.Popen:
        return subprocess.Popen(
            [str(ALTERFLOW), *args],
            env=self.env(crash_at),
            cwd=self.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: a SIGKILL of the group leaves nothing behind
        )

    def apply(self, crash_at: str | None = None) -> subprocess.CompletedProcess:
        proc = self.spawn("migrate", "--dir", str(self.migrations), "apply", crash_at=crash_at)
        try:
            out, err = proc.communicate(timeout=TIMEOUT_S)
        finally:
            kill_group(proc)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def cli_json(self, *args: str) -> list:
        done = subprocess.run([str(ALTERFLOW), *args], env=self.env(), cwd=self.root, capture_output=True, text=True, timeout=TIMEOUT_S)
        assert done.returncode == 0, f"{args}: {done.stderr}"
        decoder, text, documents = json.JSONDecoder(), done.stdout.strip(), []
        while text:  # one JSON document per statement (`sql`), or one indented document (`status`)
            document, end = decoder.raw_decode(text)
            documents.append(document)
            text = text[end:].lstrip()
        return documents

    def catalog(self) -> Catalog:
        return Catalog(self.catalog_url)

    def warehouse(self) -> pathlib.Path:
        return Settings.from_env({"ALTERFLOW_HOME": str(self.home), "ALTERFLOW_CATALOG_URL": self.catalog_url}).warehouse


def kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have ended by itself
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)


def place_on(root: pathlib.Path, catalog_url: str) -> Place:
    place = Place(root, catalog_url)
    write_migrations(place.migrations)
    return place


def statement_rows(place: Place) -> list[tuple[str, int, str]]:
    """(script, position, state) of every statement the history records, in apply order."""
    return [(m.script, s.position, s.state) for m in MigrationHistory(place.catalog()).migrations() for s in m.statements]


def killed(result: subprocess.CompletedProcess, where: str) -> None:
    assert result.returncode == -signal.SIGKILL, (
        f"{where}: apply was not killed (exit {result.returncode})\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
    )


def finished(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, (
        f"apply failed (exit {result.returncode})\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
    )


# -- the invariants --------------------------------------------------------------------------------
def assert_applied_once(place: Place) -> None:
    """Every file APPLIED; each ALTER made exactly one job and one schema version; each INSERT
    committed exactly one transaction; the dropped table was created once and is gone; the
    tables hold exactly the model's rows."""
    (status,) = place.cli_json("migrate", "--dir", str(place.migrations), "status", "--format", "json")
    assert [(m["script"], m["state"], m["statements_done"], m["statements"]) for m in status["migrations"]] == [
        (name, "APPLIED", len(steps), len(steps)) for name, steps in MIGRATIONS.items()
    ]
    assert status["drift"] == [], status["drift"]

    catalog = place.catalog()
    history = MigrationHistory(catalog).migrations()
    recorded = [s for m in history for s in m.statements]
    assert [s.state for s in recorded] == [DONE] * len(STEPS)
    jobs_recorded = [s.job_id for s in recorded if s.job_id is not None]
    assert len(jobs_recorded) == len(set(jobs_recorded)) == sum(1 for s in STEPS if s.kind == "ALTER")

    # CREATE TABLE old_events made one table, and DROP TABLE dropped it.
    with catalog.db_session() as s:
        made = list(s.execute(select(TableRow.name_key, TableRow.dropped_at).where(TableRow.name == "old_events")))
    assert len(made) == 1 and made[0][0] is None and made[0][1] is not None, made
    assert catalog.object_kind("old_events") is None

    model = model_after_all()
    assert set(model.columns) == set(TABLES)
    shown = place.cli_json(
        "sql", "--format", "json", "-e", "; ".join(f"SHOW ALTER TABLE COLUMN FROM {t}; SHOW SCHEMA VERSIONS FROM {t}" for t in TABLES)
    )
    for n, table in enumerate(TABLES):
        alters = [s.sql for s in STEPS if s.kind == "ALTER" and s.table == table]
        create = next(s.sql for s in STEPS if s.kind == "CREATE" and s.table == table)
        shown_jobs, shown_versions = shown[2 * n], shown[2 * n + 1]
        jobs = [dict(zip(shown_jobs["columns"], row)) for row in shown_jobs["rows"]]
        versions = [dict(zip(shown_versions["columns"], row)) for row in shown_versions["rows"]]
        # No schema version twice: CREATE, then each ALTER once, in file order.
        assert [v["Statement"] for v in versions] == [create, *alters]
        assert [v["Version"] for v in versions] == list(range(1, len(alters) + 2))
        # Each ALTER made exactly one job, which FINISHED (counted per statement text).
        assert all(j["State"] == "FINISHED" for j in jobs), jobs
        statement_of = {v["Version"]: v["Statement"] for v in versions}
        assert Counter(statement_of[j["SchemaVersion"]] for j in jobs) == Counter(alters)
        by_request = Counter(j.request_id for j in catalog.jobs(catalog.table(table).id))
        assert set(by_request.values()) == {1}
        # Each INSERT committed exactly one transaction, under its statement's request id.
        inserts = sum(1 for s in STEPS if s.kind == "INSERT" and s.table == table)
        with catalog.db_session() as s:
            labels = list(
                s.scalars(
                    select(TransactionRow.label).where(
                        TransactionRow.table_id == catalog.table(table).id,
                        TransactionRow.state == "COMMITTED",
                        TransactionRow.label.like("alterflow\\_\\_%", escape="\\"),
                    )
                )
            )
        assert len(labels) == len(set(labels)) == inserts, labels
        # Every row exactly once, with the values the statements give it.
        read = read_snapshot_arrow(place.warehouse(), catalog.snapshot(table))
        assert read.column_names == model.columns[table]
        got = sorted(tuple(r.values()) for r in read.to_pylist())
        want = model.expected(table)
        assert len(got) == len(want), f"{table}: {len(got)} rows, the model has {len(want)}"
        assert got == want


def assert_selected(place: Place, spark) -> None:
    """`SELECT` (Spark's read, through a Session as `alterflow sql` runs it) returns the model's rows too."""
    from alterflow.engine.session import Session

    session = Session(Settings.from_env({"ALTERFLOW_HOME": str(place.home), "ALTERFLOW_CATALOG_URL": place.catalog_url}))
    model = model_after_all()
    for table in TABLES:
        (result,) = session.run(f"SELECT * FROM {table} ORDER BY {model.columns[table][0]}")
        assert list(result.columns) == model.columns[table]
        assert [tuple(r) for r in result.rows] == model.expected(table)


# -- the tests -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Life:
    """How long an apply of the whole directory lives: until its first line (starting Python and
    importing), and in all."""

    first_line: float
    total: float


def apply_until_first_line(place: Place) -> tuple[subprocess.Popen, float]:
    """An apply started, once it printed its first line (its first statement ran); the time that took."""
    began = time.monotonic()
    proc = place.spawn("migrate", "--dir", str(place.migrations), "apply")
    if not proc.stdout.readline():
        out, err = proc.communicate(timeout=60)
        pytest.fail(f"apply printed nothing (exit {proc.returncode})\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-3000:]}")
    return proc, time.monotonic() - began


@pytest.fixture
def sqlite_place(tmp_path) -> Place:
    return place_on(tmp_path, f"sqlite:///{tmp_path / 'catalog.db'}")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Life:
    """One apply to the end, without a kill: the control (every check passes) and how long an
    apply lives, so that a random kill lands inside its life."""
    root = tmp_path_factory.mktemp("uninterrupted")
    place = place_on(root, f"sqlite:///{root / 'catalog.db'}")
    began = time.monotonic()
    proc, first_line = apply_until_first_line(place)
    out, err = proc.communicate(timeout=TIMEOUT_S)
    life = Life(first_line, time.monotonic() - began)
    finished(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert out.count(" APPLIED (") == len(MIGRATIONS)  # (the first line, read before, is a statement's)
    assert "was running when an apply stopped" not in out
    assert_applied_once(place)
    return life


def test_an_uninterrupted_apply_passes_the_checks(uninterrupted):
    assert 0 < uninterrupted.first_line < uninterrupted.total


def test_killed_between_statements_at_a_seeded_random_statement(sqlite_place):
    k = random.Random(SEED).randint(1, len(STEPS))
    print(f"seed {SEED}: killed after statement {k} of {len(STEPS)} is recorded")
    result = sqlite_place.apply(crash_at=f"migrate_statement_recorded@{k}")
    killed(result, f"migrate_statement_recorded@{k}")
    assert [state for _script, _position, state in statement_rows(sqlite_place)] == [DONE] * k
    again = sqlite_place.apply()
    finished(again)
    assert "was running when an apply stopped" not in again.stdout
    assert_applied_once(sqlite_place)


def _killed_inside_the_conversion(place: Place) -> None:
    result = place.apply(crash_at="tablet_1")
    killed(result, "tablet_1")
    rows = statement_rows(place)
    assert rows[-1] == ("V4__v_becomes_int.sql", 1, RUNNING) and len(rows) == HEAVY_AT
    catalog = place.catalog()
    (job,) = [j for j in catalog.jobs(catalog.table("t").id) if j.statement == HEAVY]
    assert job.state == "RUNNING" and job.kind == "HEAVY"
    before = HeavyJobs(catalog).converted(job.id)
    assert 1 <= len(before) <= len(catalog.tablets(job.origin_index_id)) == 4

    again = place.apply()
    finished(again)
    assert "V4__v_becomes_int.sql:2 was running when an apply stopped" in again.stdout
    assert f"job {job.id} FINISHED" in again.stdout and "(resumed)" in again.stdout
    after = HeavyJobs(catalog).converted(job.id)
    for tablet, record in before.items():  # a tablet converted before the kill is not converted again
        assert after[tablet].txn_id == record.txn_id
    assert_applied_once(place)


def test_killed_inside_the_heavy_conversion(sqlite_place):
    _killed_inside_the_conversion(sqlite_place)


@pytest.mark.postgres
def test_killed_inside_the_heavy_conversion_on_postgresql(tmp_path, pg_url):
    _killed_inside_the_conversion(place_on(tmp_path, pg_url))


def assert_took_effect(place: Place, step: Step, request_id: str) -> None:
    """What a statement an apply was killed after (and that its history still calls RUNNING) did."""
    catalog = place.catalog()
    if step.kind == "ALTER":  # its job finished
        assert [(j.request_id, j.state) for j in catalog.jobs(catalog.table(step.table).id) if j.statement == step.sql] == [
            (request_id, "FINISHED")
        ]
    elif step.kind == "INSERT":  # its transaction committed
        assert MigrationHistory(catalog).load_committed(request_id)
    else:
        assert catalog.object_kind(step.table) == ("table" if step.kind == "CREATE" else None)


def _sort(step: Step) -> str:
    return "HEAVY" if step.sql == HEAVY else step.kind


def test_killed_after_a_statement_of_each_kind_ran_before_it_is_recorded(sqlite_place):
    """Kills one after another, each after a statement ran and before it is recorded: one
    statement of each kind (CREATE TABLE, INSERT, light ALTER, heavy ALTER, DROP TABLE), chosen
    by the seed. Each next apply finds what the statement it was killed after did (it is not run
    again), runs on, and dies after the next chosen one ran (`migrate_statement_ran@k`)."""
    rng = random.Random(SEED)
    kinds = sorted({_sort(s) for s in STEPS})
    chosen = sorted(rng.choice([n for n, s in enumerate(STEPS, start=1) if _sort(s) == kind]) for kind in kinds)
    print(f"seed {SEED}: killed after statements {chosen} ran")
    previous = None
    for n in chosen:
        step = STEPS[n - 1]
        # This apply's statements that run: the one left RUNNING (found done) first, then the next ones.
        k = n if previous is None else n - previous + 1
        result = sqlite_place.apply(crash_at=f"migrate_statement_ran@{k}")
        killed(result, f"after statement {n} ({step.sql[:40]}) ran")
        if previous is not None:
            assert "was running when an apply stopped" in result.stdout and "(found done" in result.stdout, result.stdout
        recorded = [s for m in MigrationHistory(sqlite_place.catalog()).migrations() for s in m.statements]
        assert [s.state for s in recorded] == [DONE] * (n - 1) + [RUNNING], f"after statement {n}: {step.sql[:60]}"
        assert_took_effect(sqlite_place, step, recorded[-1].request_id)
        previous = n
    again = sqlite_place.apply()
    finished(again)
    assert "was running when an apply stopped" in again.stdout and "(found done" in again.stdout
    assert_applied_once(sqlite_place)


@pytest.mark.spark
def test_killed_at_a_seeded_random_moment(sqlite_place, uninterrupted, spark):
    """SIGKILL from outside, at a seeded random moment after the first statement ran."""
    delay = random.Random(SEED + 1).uniform(0.0, 0.9 * (uninterrupted.total - uninterrupted.first_line))
    proc, _ = apply_until_first_line(sqlite_place)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=delay)
    finished_first = proc.returncode is not None
    kill_group(proc)
    started = statement_rows(sqlite_place)
    print(
        f"seed {SEED + 1}: SIGKILL {delay:.2f} s after the first line of an apply that lives {uninterrupted.total:.2f} s: "
        + ("it finished first" if finished_first else f"{len(started)} statement(s) started, the last {started[-1]}")
    )
    if not finished_first:
        assert proc.returncode == -signal.SIGKILL
    again = sqlite_place.apply()
    finished(again)
    assert_applied_once(sqlite_place)
    assert_selected(sqlite_place, spark)
