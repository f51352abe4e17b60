"""Migrations as code (issue 24): `alterflow migrate lint` and `alterflow migrate apply`, whole
processes, as CI and a deploy run them.

1. `migrate lint` (no --analyze) of 200 pending statements in 10 files, one ALTER on each of 200
   tables of 100 rows (a quarter heavy: `MODIFY COLUMN v BIGINT` of a STRING column; the rest light:
   ADD COLUMN, RENAME COLUMN, a widening MODIFY COLUMN). Goal: the process under 2 s. The ratio
   compares the plan inside lint (`lint_migrations` in this process) with what a team has without
   it: each of the same statements planned alone with `EXPLAIN ALTER TABLE ...` through
   `alterflow.engine.session.Session`, in this process, one after the other.
2. `migrate apply` of 50 light statements (ADD COLUMN on 10 tables, in 5 files) against the same 50
   statements run by `alterflow sql -f FILE`, both from start to exit on a fresh copy of the same
   catalog (10 tables of 100 rows). Goal: at most 1.2×. Runs of the two are interleaved, each
   first every other run. Wall and CPU times are shown: apply makes two more durable (fsync'd)
   commits per statement than `sql -f` (its history: RUNNING before, DONE after), which a busy
   disk makes slower without costing CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from bench import ResultRow, fresh_home, markdown_table, median, settings_for, verdict

FULL = {"lint_tables": 200, "apply_tables": 10, "apply_statements": 50, "lint_runs": 5, "apply_runs": 7}
QUICK = {"lint_tables": 20, "apply_tables": 5, "apply_statements": 10, "lint_runs": 1, "apply_runs": 1}
GOAL_LINT_S = 2.0
GOAL_APPLY = 1.2
ROWS = 100
FILES = 10  # lint: the statements are spread over this many migration files
APPLY_FILES = 5
TABLE = "CREATE TABLE {name} (id BIGINT NOT NULL, v STRING, n INT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"


def _rows() -> pa.Table:
    ids = np.arange(ROWS, dtype=np.int64)
    return pa.table({"id": ids, "v": pa.array(ids.astype(str)), "n": (ids % 7).astype(np.int32)})


def lint_statement(i: int) -> str:
    """Table i's statement: every fourth rewrites (HEAVY), the others change metadata only."""
    return (
        f"ALTER TABLE t{i} MODIFY COLUMN v BIGINT",
        f'ALTER TABLE t{i} ADD COLUMN c INT DEFAULT "1"',
        f"ALTER TABLE t{i} RENAME COLUMN n TO n2",
        f"ALTER TABLE t{i} MODIFY COLUMN n BIGINT",
    )[i % 4]


def write_files(directory: pathlib.Path, statements: list[str], files: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    per_file = -(-len(statements) // files)
    for f in range(files):
        chunk = statements[f * per_file : (f + 1) * per_file]
        if chunk:
            (directory / f"V{f + 1}__step_{f + 1}.sql").write_text("".join(f"{s};\n" for s in chunk), encoding="utf-8")


def make_catalog(home: pathlib.Path, tables: int) -> None:
    from alterflow.engine.session import Session

    session = Session(settings_for(home))
    rows = _rows()
    for i in range(tables):
        list(session.run(TABLE.format(name=f"t{i}")))
        session.load(f"t{i}", rows, label="bench", by_name=True)


def _env(home: pathlib.Path) -> dict:
    env = {**os.environ, "ALTERFLOW_HOME": str(home)}
    for name in ("ALTERFLOW_CATALOG_URL", "ALTERFLOW_AIRFLOW_URL", "ALTERFLOW_MIGRATIONS", "ALTERFLOW_CRASH_AT"):
        env.pop(name, None)
    return env


@dataclass(frozen=True)
class Timed:
    wall: float
    cpu: float  # the process's user + system seconds
    stdout: str


def _timed(command: list[str], env: dict, cwd: pathlib.Path, ok=(0,)) -> Timed:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ok:
        raise RuntimeError(f"{' '.join(command[1:4])} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(elapsed, cpu, done.stdout)


def run_lint(sizes: dict, quick: bool) -> ResultRow:
    from alterflow.engine.session import Session
    from alterflow.migrate.lint import lint_migrations
    from alterflow.migrate.rules import load_rules

    count, runs = sizes["lint_tables"], sizes["lint_runs"]
    cli = str(pathlib.Path(sys.executable).parent / "alterflow")
    statements = [lint_statement(i) for i in range(count)]
    with fresh_home("migrate-lint") as home:
        make_catalog(home, count)
        directory = home / "migrations"
        write_files(directory, statements, FILES)
        env = _env(home)
        command = [cli, "migrate", "--dir", str(directory), "lint", "--format", "json"]
        process, process_cpu, in_process, explained = [], [], [], []
        session = Session(settings_for(home))
        rules = load_rules(directory)
        for i in range(runs + 1):  # run 0 warms the file cache
            timed = _timed(command, env, home)
            report = json.loads(timed.stdout)
            kinds = [s["kind"] for s in report["statements"]]
            assert len(kinds) == count and kinds.count("HEAVY") == (count + 3) // 4 and "REJECTED" not in kinds, kinds
            started = time.perf_counter()
            linted = lint_migrations(session.catalog, directory, rules, session.warehouse)
            ours = time.perf_counter() - started
            assert len(linted.statements) == count
            started = time.perf_counter()
            for statement in statements:
                list(session.run(f"EXPLAIN {statement}"))
            base = time.perf_counter() - started
            if i:
                process.append(timed.wall), process_cpu.append(timed.cpu), in_process.append(ours), explained.append(base)
    ratio = median(in_process) / median(explained)
    print(
        f"  lint of {count} statements on {count} tables: process {median(process):.2f} s (CPU {median(process_cpu):.2f} s); "
        f"the plan inside it "
        f"{median(in_process):.3f} s; EXPLAIN of each {median(explained):.3f} s; ratio {ratio:.2f}"
    )
    return ResultRow(
        "migrate lint, CLI process",
        f"{count} pending ALTERs (¼ heavy) in {FILES} files, {count} tables of {ROWS} rows, no --analyze",
        f"median {median(process):.2f} s, CPU {median(process_cpu):.2f} s ({runs} runs); lint_migrations in-process {median(in_process):.3f} s",
        baseline=f"EXPLAIN of each statement through Session, in-process: {median(explained):.3f} s",
        ratio=f"{ratio:.2f} (lint/EXPLAIN each, in-process)",
        goal=f"process < {GOAL_LINT_S:g} s",
        met=verdict(median(process) < GOAL_LINT_S, quick),
        summary=f"migrate lint, CLI, {count} ALTERs",
    )


def run_apply(sizes: dict, quick: bool) -> ResultRow:
    tables, count, runs = sizes["apply_tables"], sizes["apply_statements"], sizes["apply_runs"]
    cli = str(pathlib.Path(sys.executable).parent / "alterflow")
    statements = [f'ALTER TABLE t{i % tables} ADD COLUMN c{i} INT DEFAULT "{i}"' for i in range(count)]
    with fresh_home("migrate-apply") as root:
        template = root / "template"
        make_catalog(template, tables)
        directory = root / "migrations"
        write_files(directory, statements, APPLY_FILES)
        script = root / "statements.sql"
        script.write_text("".join(f"{s};\n" for s in statements), encoding="utf-8")
        applied, through_sql, applied_cpu, through_sql_cpu = [], [], [], []
        for i in range(runs + 1):  # run 0 warms the file cache
            times: dict[str, Timed] = {}
            for way in ("apply", "sql"):
                shutil.copytree(template, root / f"{way}{i}")  # the same catalog and warehouse, fresh for each run
            os.sync()  # neither run pays for writing the copies back (their commits are fsync'd)
            for way in ("apply", "sql") if i % 2 else ("sql", "apply"):  # each goes first every other run
                home = root / f"{way}{i}"
                command = [cli, "migrate", "--dir", str(directory), "apply"] if way == "apply" else [cli, "sql", "-f", str(script)]
                times[way] = _timed(command, _env(home), home)
                assert times[way].stdout.count("FINISHED") == count, times[way].stdout[-2000:]
            if i:
                applied.append(times["apply"].wall), through_sql.append(times["sql"].wall)
                applied_cpu.append(times["apply"].cpu), through_sql_cpu.append(times["sql"].cpu)
    ratio = median(applied) / median(through_sql)
    cpu_ratio = median(applied_cpu) / median(through_sql_cpu)
    print(
        f"  apply of {count} light statements: {median(applied):.2f} s (CPU {median(applied_cpu):.2f} s); "
        f"alterflow sql -f {median(through_sql):.2f} s (CPU {median(through_sql_cpu):.2f} s); ratio {ratio:.2f}, CPU {cpu_ratio:.2f}"
    )
    return ResultRow(
        "migrate apply, CLI process",
        f"{count} light ALTERs (ADD COLUMN) in {APPLY_FILES} files, {tables} tables, fresh SQLite catalog",
        f"median {median(applied):.2f} s, CPU {median(applied_cpu):.2f} s ({runs} runs)",
        baseline=f"the same statements through `alterflow sql -f`: {median(through_sql):.2f} s, CPU {median(through_sql_cpu):.2f} s",
        ratio=f"{ratio:.2f} (apply/sql -f); CPU {cpu_ratio:.2f}",
        goal=f"≤ {GOAL_APPLY:g}×",
        met=verdict(ratio <= GOAL_APPLY, quick),
        summary=f"migrate apply, CLI, {count} ALTERs",
    )


def run(quick: bool = False) -> list[ResultRow]:
    sizes = QUICK if quick else FULL
    return [run_lint(sizes, quick), run_apply(sizes, quick)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    parser.add_argument("--only", choices=("lint", "apply"), help="one of the two")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    rows = [run_lint(sizes, args.quick)] if args.only != "apply" else []
    rows += [run_apply(sizes, args.quick)] if args.only != "lint" else []
    print(markdown_table(rows))
