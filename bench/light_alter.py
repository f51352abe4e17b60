"""Lightweight ALTER latency: `ALTER TABLE t ADD COLUMN cN INT DEFAULT N` through the embedded
path (`Session.run`: parse + plan + one catalog commit), on a small and a big table.

A lightweight change is metadata only, so its cost must not depend on the table's size: the
baseline is the small table measured in the same run, the ratio is big / small. No Spark may
start. The PostgreSQL row runs when the server answers and is skipped otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import time
import uuid
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from bench import ResultRow, fresh_home, markdown_table, ms, percentile, rows_text, settings_for, verdict

GOAL_P50_S = 0.010  # p50 <= 10 ms on SQLite
GOAL_RATIO = 1.3  # big / small
PYICEBERG_P50 = "PyIceberg `add_column`, SQLite catalog: 16.4 ms p50 (both sizes)"
PG_ADMIN_URL = os.environ.get("ALTERFLOW_BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")

FULL = {"small": 1_000, "big": 2_000_000, "runs": 50, "warmup": 3, "batch": 500_000}
QUICK = {"small": 2_000, "big": 20_000, "runs": 10, "warmup": 1, "batch": 10_000}


@dataclass(frozen=True)
class Latency:
    rows: int
    catalog: str
    samples: tuple[float, ...]  # wall seconds
    cpu: tuple[float, ...]  # this process's CPU seconds (all of SQLite's work; PostgreSQL's server is not counted)
    first: float  # the first ALTER of the table (warm-up, not in the samples)

    @property
    def p50(self) -> float:
        return percentile(self.samples, 50)

    @property
    def p90(self) -> float:
        return percentile(self.samples, 90)

    @property
    def max(self) -> float:
        return max(self.samples)

    def text(self) -> str:
        return (
            f"p50 {ms(self.p50)} · p90 {ms(self.p90)} · max {ms(self.max)} ({len(self.samples)} runs; "
            f"CPU p50 {ms(percentile(self.cpu, 50))}; first ALTER on the table {ms(self.first)})"
        )


_NAMES = pa.array([f"name-{i}" for i in range(5000)], pa.string())


def _batch(start: int, count: int) -> pa.Table:
    ids = np.arange(start, start + count, dtype=np.int64)
    return pa.table(
        {
            "id": pa.array(ids),
            "v": pa.array((ids % 100_003).astype(np.int32)),
            "s": _NAMES.take(pa.array(ids % 5000)),
        }
    )


class Case:
    """One table `t` of `rows` rows in its own catalog, ready to be ALTERed."""

    def __init__(self, home, rows: int, batch: int, catalog_url: str | None = None):
        from alterflow.engine.session import Session

        self.rows, self.catalog = rows, "PostgreSQL" if catalog_url else "SQLite"
        self.session = Session(settings_for(home, catalog_url))
        list(self.session.run("CREATE TABLE t (id BIGINT NOT NULL, v INT, s STRING)"))
        for start in range(0, rows, batch):
            self.session.load("t", _batch(start, min(batch, rows - start)), f"bench load {start}", by_name=True)
        self.samples: list[float] = []
        self.cpu: list[float] = []
        self.first = 0.0

    def alter(self, statement: str) -> tuple[float, float]:
        started, started_cpu = time.perf_counter(), time.process_time()
        list(self.session.run(statement))
        return time.perf_counter() - started, time.process_time() - started_cpu

    def result(self, expected_versions: int) -> Latency:
        info, version = self.session.catalog.current_schema("t")
        assert version.version == expected_versions, f"expected {expected_versions} versions, got {version.version}"
        assert self.session.catalog.table_stats(info.id)[0] == self.rows
        return Latency(self.rows, self.catalog, tuple(self.samples), tuple(self.cpu), self.first)

    def close(self) -> None:
        self.session.catalog.engine.dispose()


def measure(cases: list[Case], runs: int, warmup: int) -> list[Latency]:
    """`warmup` untimed ALTERs on each case, then `runs` timed ones, the cases taking turns so that
    every case sees the same machine (other processes come and go on a shared 2-core box)."""
    for n in range(1, warmup + 1):
        for case in cases:
            wall, _cpu = case.alter(f"ALTER TABLE t ADD COLUMN w{n} INT DEFAULT {n}")
            case.first = case.first or wall
    gc.collect()
    for n in range(1, runs + 1):
        for case in cases:
            wall, cpu = case.alter(f"ALTER TABLE t ADD COLUMN c{n} INT DEFAULT {n}")
            case.samples.append(wall)
            case.cpu.append(cpu)
    return [case.result(1 + warmup + runs) for case in cases]


def _pg_admin():
    """An autocommit engine on the PostgreSQL server, or None when it does not answer."""
    import sqlalchemy

    from alterflow.catalog.database import normalise_url

    try:
        engine = sqlalchemy.create_engine(normalise_url(PG_ADMIN_URL), isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
        return engine
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable": skip the row
        print(f"  PostgreSQL not reachable at {PG_ADMIN_URL}: {str(exc).strip().splitlines()[0]}")
        return None


@contextlib.contextmanager
def postgres_schema():
    """A fresh schema on the PostgreSQL server as a catalog URL (dropped afterwards), or None."""
    admin = _pg_admin()
    if admin is None:
        yield None
        return
    schema = f"af_bench_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
        url = f"{PG_ADMIN_URL}?options=-csearch_path%3D{schema}"
        from alterflow.catalog.database import upgrade_catalog

        upgrade_catalog(url)  # `alterflow db upgrade`: PostgreSQL catalogs are never migrated implicitly
        yield url
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.dispose()


def run(quick: bool = False) -> list[ResultRow]:
    from alterflow.spark_session import spark_started

    sizes = QUICK if quick else FULL
    print(f"light ALTER: {sizes['runs']} timed runs per case (+{sizes['warmup']} warm-up), the cases taking turns")
    with contextlib.ExitStack() as stack:
        cases = []
        try:
            cases.append(Case(stack.enter_context(fresh_home("alter-small")), sizes["small"], sizes["batch"]))
            cases.append(Case(stack.enter_context(fresh_home("alter-big")), sizes["big"], sizes["batch"]))
            pg_url = stack.enter_context(postgres_schema())
            if pg_url is not None:
                cases.append(Case(stack.enter_context(fresh_home("alter-pg")), sizes["small"], sizes["batch"], pg_url))
            results = measure(cases, sizes["runs"], sizes["warmup"])
        finally:
            for case in cases:
                case.close()
    small, big = results[0], results[1]
    pg = results[2] if len(results) > 2 else None
    ratio = big.p50 / small.p50
    print(f"  SQLite, {rows_text(small.rows)}: {small.text()}")
    print(f"  SQLite, {rows_text(big.rows)}: {big.text()}")
    print(f"  ratio big/small (p50): {ratio:.2f} (goal <= {GOAL_RATIO})")
    if pg is not None:
        print(f"  PostgreSQL, {rows_text(pg.rows)}: {pg.text()}; PostgreSQL/SQLite (p50): {pg.p50 / small.p50:.2f}")
    assert not spark_started(), "a lightweight ALTER started Spark"
    print("  Spark started: no")

    goal = f"p50 ≤ {GOAL_P50_S * 1000:.0f} ms"
    rows = [
        ResultRow(
            "light ALTER",
            f"SQLite, {rows_text(small.rows)}",
            small.text(),
            goal=goal,
            reference=PYICEBERG_P50,
            met=verdict(small.p50 <= GOAL_P50_S, quick),
            summary=f"light ALTER, SQLite, {rows_text(small.rows)}",
        ),
        ResultRow(
            "light ALTER",
            f"SQLite, {rows_text(big.rows)}",
            big.text(),
            baseline=f"{rows_text(small.rows)}: p50 {ms(small.p50)}",
            ratio=f"{ratio:.2f} (big/small p50)",
            goal=f"{goal}; ratio ≤ {GOAL_RATIO}",
            reference=PYICEBERG_P50,
            met=verdict(big.p50 <= GOAL_P50_S and ratio <= GOAL_RATIO, quick),
            summary=f"light ALTER, SQLite, {rows_text(big.rows)}",
        ),
    ]
    if pg is None:
        rows.append(
            ResultRow(
                "light ALTER",
                f"PostgreSQL, {rows_text(sizes['small'])}",
                "skipped: server not reachable",
                summary="light ALTER, PostgreSQL",
            )
        )
    else:
        rows.append(
            ResultRow(
                "light ALTER",
                f"PostgreSQL, {rows_text(pg.rows)}",
                pg.text(),
                baseline=f"SQLite, {rows_text(small.rows)}: p50 {ms(small.p50)}",
                ratio=f"{pg.p50 / small.p50:.2f} (PostgreSQL/SQLite p50)",
                goal="— (the goal is on SQLite)",
                reference=PYICEBERG_P50,
                met="—",
                summary=f"light ALTER, PostgreSQL, {rows_text(pg.rows)}",
            )
        )
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    print(markdown_table(run(parser.parse_args().quick)))
