"""Evolved read: a table whose rows were written across many schema versions, read in full with
Spark, against the same final rows written once under a single version (the baseline, measured in
the same run).

The evolved table starts as `(id BIGINT, a INT, b STRING, c DOUBLE)` and goes through lightweight
ALTERs (adds with defaults, a rename, INT -> BIGINT widenings, a drop, a move, a default change);
an equal share of the rows is loaded after each version, so every version has files. The baseline
table is created with the evolved table's final columns and gets the same final rows (the values
the evolved table reads: casts applied, initial defaults where a column did not exist yet), in as
many loads. Both are read with `read_snapshot` and written to Spark's `noop` sink, which
materialises every column of every row. A checksum over all columns proves both reads return the
same rows before anything is timed.
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import time

import numpy as np
import pyarrow as pa

from bench import ResultRow, fresh_home, markdown_table, median, rows_text, settings_for, verdict

GOAL_RATIO = 1.15
PYICEBERG_RATIO = "PyIceberg, same setup: 1.19"

CREATE = "CREATE TABLE {t} (id BIGINT NOT NULL, a INT, b STRING, c DOUBLE)"
ALTERS = (  # applied in order: version k + 1 = ALTERS[k - 1]
    "ALTER TABLE {t} ADD COLUMN d INT DEFAULT 7",
    "ALTER TABLE {t} RENAME COLUMN b TO label",
    "ALTER TABLE {t} MODIFY COLUMN a BIGINT",
    "ALTER TABLE {t} ADD COLUMN e STRING DEFAULT 'x'",
    "ALTER TABLE {t} MODIFY COLUMN d BIGINT",
    "ALTER TABLE {t} ADD COLUMN f DOUBLE DEFAULT 1.5",
    "ALTER TABLE {t} DROP COLUMN c",
    "ALTER TABLE {t} ADD COLUMN g INT DEFAULT 3 AFTER id",
    "ALTER TABLE {t} ALTER COLUMN e SET DEFAULT 'y'",
)

FULL = {"rows": 2_000_000, "versions": 10, "runs": 5}
QUICK = {"rows": 21_000, "versions": 3, "runs": 1}

_WORDS = pa.array([f"word-{i:05d}" for i in range(5000)], pa.string())


def _values(column, ids: np.ndarray) -> pa.Array:
    """Deterministic values of one column (by column id, so a rename keeps them) in its type."""
    import pyarrow.compute as pc

    from alterflow.values.types import to_arrow

    if column.id == 1:  # the key
        return pa.array(ids, pa.int64())
    arrow_type = to_arrow(column.type)
    if pa.types.is_integer(arrow_type):
        return pa.array((ids * (31 + 17 * column.id)) % 100_003).cast(arrow_type)  # fits INT: widening keeps it
    if pa.types.is_floating(arrow_type):
        return pa.array(ids * 0.25 + column.id, pa.float64())
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return pc.cast(_WORDS.take(pa.array((ids + column.id) % len(_WORDS))), arrow_type)
    raise TypeError(f"no generator for {column.type.sql()}")


def _initial(column, length: int) -> pa.Array:
    from alterflow.values.types import to_arrow

    return pa.array([column.initial_default] * length, to_arrow(column.type))


def _final_rows(written_under, final, ids: np.ndarray) -> pa.Table:
    """Rows written under `written_under` as read under `final` (docs/semantics.md), named as in `final`."""
    arrays = []
    for column in final.columns:
        old = written_under.column_by_id(column.id)
        if old is None:
            arrays.append(_initial(column, len(ids)))
        else:
            from alterflow.values.types import to_arrow

            arrays.append(_values(old, ids).cast(to_arrow(column.type)))
    return pa.table(arrays, names=[c.name for c in final.columns])


def build(session, sizes: dict) -> tuple[int, int]:
    """Load the evolved table `t_evolved` and the baseline `t_final`; returns (rows, versions)."""
    from alterflow.engine.session import column_text

    versions, per_load = sizes["versions"], sizes["rows"] // sizes["versions"]
    catalog = session.catalog
    list(session.run(CREATE.format(t="t_evolved")))
    history = []  # (schema version, ids) of each load
    for number in range(1, versions + 1):
        if number > 1:
            list(session.run(ALTERS[number - 2].format(t="t_evolved")))
        _info, version = catalog.current_schema("t_evolved")
        assert version.version == number
        ids = np.arange((number - 1) * per_load, number * per_load, dtype=np.int64)
        data = pa.table([_values(c, ids) for c in version.columns], names=[c.name for c in version.columns])
        session.load("t_evolved", data, f"bench evolved v{number}", by_name=True)
        history.append((version, ids))

    _info, final = catalog.current_schema("t_evolved")
    list(session.run(f"CREATE TABLE t_final ({column_text(final)})"))
    for number, (version, ids) in enumerate(history, start=1):
        session.load("t_final", _final_rows(version, final, ids), f"bench final {number}", by_name=True)
    return per_load * versions, versions


def _checksum(frame):
    from pyspark.sql import functions as F

    columns = [F.col(f"`{name}`") for name in frame.columns]
    row = frame.agg(F.count(F.lit(1)).alias("n"), F.sum(F.xxhash64(*columns).cast("decimal(38,0)")).alias("h")).first()
    return row["n"], row["h"]


def _read(spark, session, table: str):
    from alterflow.read.evolved_read import read_snapshot

    return read_snapshot(spark, session.warehouse, session.catalog.snapshot(table))


def _jvm_cpu(spark):
    """A function returning the Spark JVM's CPU seconds so far (Linux), else None."""
    import os

    try:
        pid = spark._jvm.java.lang.ProcessHandle.current().pid()
        tick = os.sysconf("SC_CLK_TCK")
        stat = pathlib.Path(f"/proc/{pid}/stat")

        def read() -> float:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick

        read()
        return read
    except Exception:  # noqa: BLE001 - CPU time is extra information only
        return None


def _timed_read(spark, session, table: str, cpu_clock) -> tuple[float, float | None]:
    """One full read: catalog snapshot, plan, and every column of every row materialised.
    Returns (wall seconds, Spark JVM CPU seconds or None)."""
    cpu_before = cpu_clock() if cpu_clock else None
    started = time.perf_counter()
    _read(spark, session, table).write.format("noop").mode("overwrite").save()
    wall = time.perf_counter() - started
    return wall, (cpu_clock() - cpu_before) if cpu_clock else None


def run(quick: bool = False, sizes: dict | None = None) -> list[ResultRow]:
    """The benchmark at FULL sizes (QUICK with `quick`), or at `sizes` (the goal is judged at the
    full row count and number of versions only)."""
    from alterflow.engine.session import Session
    from alterflow.spark_session import get_spark

    sizes = sizes or (QUICK if quick else FULL)
    judged = not quick and (sizes["rows"], sizes["versions"]) == (FULL["rows"], FULL["versions"])
    print(
        f"evolved read: {rows_text(sizes['rows'])} over {sizes['versions']} schema versions vs 1 version, "
        f"{sizes['runs']} timed runs each (+1 warm-up), Spark local[2]"
    )
    with fresh_home("evolved-read") as home:
        session = Session(settings_for(home))
        try:
            started = time.perf_counter()
            rows, versions = build(session, sizes)
            snapshot = session.catalog.snapshot("t_evolved")
            files = (len(snapshot.files), len(session.catalog.snapshot("t_final").files))
            used = sorted({f.schema_version for f in snapshot.files})
            assert used == list(range(1, versions + 1)), f"every version must have files, got {used}"
            print(f"  loaded {rows_text(rows)} twice ({files[0]} + {files[1]} files) in {time.perf_counter() - started:.1f} s")
            choice = session.engine_choice("SELECT * FROM t_evolved", ("t_evolved",))
            print(f"  a SELECT of it under engine auto: {choice.reason}")
            assert choice.engine == "spark" or not judged, choice.reason  # over the local engine's threshold

            spark = get_spark(dataclasses.replace(session.settings, spark_master="local[2]"))
            evolved_sum, final_sum = _checksum(_read(spark, session, "t_evolved")), _checksum(_read(spark, session, "t_final"))
            assert evolved_sum == final_sum, f"the two tables read differently: {evolved_sum} != {final_sum}"
            assert evolved_sum[0] == rows
            assert _read(spark, session, "t_evolved").columns == _read(spark, session, "t_final").columns

            cpu_clock = _jvm_cpu(spark)
            _timed_read(spark, session, "t_evolved", cpu_clock)  # warm-up
            _timed_read(spark, session, "t_final", cpu_clock)
            evolved, baseline = [], []
            for _ in range(sizes["runs"]):  # alternating, so both see the same machine
                evolved.append(_timed_read(spark, session, "t_evolved", cpu_clock))
                baseline.append(_timed_read(spark, session, "t_final", cpu_clock))
        finally:
            session.catalog.engine.dispose()

    wall = lambda runs: median([w for w, _ in runs])  # noqa: E731
    cpu = lambda runs: median([c for _, c in runs]) if cpu_clock else None  # noqa: E731
    ratio = wall(evolved) / wall(baseline)
    cpu_ratio = cpu(evolved) / cpu(baseline) if cpu_clock and cpu(baseline) else None
    listing = lambda runs: ", ".join(f"{w:.2f}" for w, _ in runs)  # noqa: E731
    cpu_text = lambda runs: f"; JVM CPU {cpu(runs):.2f} s" if cpu_clock else ""  # noqa: E731
    print(f"  evolved ({versions} versions): median {wall(evolved):.3f} s{cpu_text(evolved)}  [{listing(evolved)}]")
    print(f"  baseline (1 version):   median {wall(baseline):.3f} s{cpu_text(baseline)}  [{listing(baseline)}]")
    print(f"  ratio evolved/baseline: {ratio:.3f} (goal <= {GOAL_RATIO})" + (f"; JVM CPU ratio {cpu_ratio:.3f}" if cpu_ratio else ""))
    return [
        ResultRow(
            "evolved read (Spark local[2], noop sink)",
            f"{rows_text(rows)}, {versions} versions ({files[0]} files); a SELECT under auto: {choice.engine}",
            f"median {wall(evolved):.3f} s{cpu_text(evolved)} ({sizes['runs']} runs)",
            baseline=f"same rows, 1 version ({files[1]} files): median {wall(baseline):.3f} s{cpu_text(baseline)}",
            ratio=f"{ratio:.3f} (evolved/baseline)" + (f"; JVM CPU {cpu_ratio:.3f}" if cpu_ratio else ""),
            goal=f"ratio ≤ {GOAL_RATIO}",
            reference=PYICEBERG_RATIO,
            met=verdict(ratio <= GOAL_RATIO, not judged),
            summary=f"evolved read, Spark, {rows_text(rows)}",
        )
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    parser.add_argument("--rows", type=int, help=f"rows in all (default {FULL['rows']:,}); the goal is judged at the default only")
    parser.add_argument("--runs", type=int, help=f"timed runs of each read (default {FULL['runs']})")
    args = parser.parse_args()
    chosen = None
    if args.rows or args.runs:
        chosen = dict(QUICK if args.quick else FULL)
        chosen.update({k: v for k, v in (("rows", args.rows), ("runs", args.runs)) if v})
    print(markdown_table(run(args.quick, chosen)))
