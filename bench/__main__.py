"""`python -m bench [--quick] [--output PATH] [--skip NAME]...`: every benchmark in order, then one
Markdown table.

The full run writes the table to bench/RESULTS.md; `--quick` (small sizes, no goal judged) writes
only where `--output` says. The light ALTER runs first: it checks that no Spark starts, so it must
run before the benchmarks that use Spark.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import pathlib
import platform
import sys
import time
import traceback

from bench import RESULTS_PATH, ResultRow, markdown_table

BENCHMARKS = (
    "light_alter",
    "lease_cost",
    "cli_alter",
    "query_cli",
    "spark_golden",
    "migrations",
    "analyze_checks",
    "object_store",  # before the first that starts Spark: Spark's workers take its AWS variables
    "evolved_read",
    "heavy_alter",
    "load_throughput",
    "table_append",
    "spark_write",
    "airflow_runs",
    "fleet_load",  # three Celery fleets of its own: the longest, last
)


README_PATH = pathlib.Path(__file__).resolve().parent.parent / "README.md"
SUMMARY_START, SUMMARY_END = "<!-- bench summary: written by python -m bench -->", "<!-- end of bench summary -->"


def summary_table(rows: list[ResultRow]) -> str:
    """The README's short form of the results: each judged case's ratio (or first figure), goal and verdict."""
    lines = ["| Benchmark (case) | Ratio | Goal | Met |", "|---|---|---|---|"]
    for row in rows:
        if row.goal.startswith("—"):  # shown for context only: in bench/RESULTS.md
            continue
        # the ratio's number, or the result's figure without its explanation ("77.2% (672 of 870): ...")
        ratio = row.ratio.split(" ", 1)[0] if row.ratio != "—" else " ".join(row.result.split(" (", 1)[0].split(" ")[:2])
        name = row.summary or f"{row.benchmark} ({row.case})"
        goal = row.goal.split(" (", 1)[0]
        lines.append(f"| {name} | {ratio} | {goal} | {row.met} |")
    return "\n".join(lines)


def write_readme_summary(rows: list[ResultRow], readme: pathlib.Path) -> None:
    """Replace the summary between the README's markers (the full table stays in bench/RESULTS.md)."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(SUMMARY_START) + len(SUMMARY_START), text.index(SUMMARY_END)
    readme.write_text(text[:start] + "\n" + summary_table(rows) + "\n" + text[end:], encoding="utf-8")


def _load() -> str:
    try:
        one, five, _fifteen = os.getloadavg()
        return f"{one:.1f} / {five:.1f} (1 / 5 min)"
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description="alterflow's benchmarks")
    parser.add_argument("--quick", action="store_true", help="small sizes (the smoke test); no goal is judged")
    parser.add_argument("--output", type=pathlib.Path, help=f"where to write the table (default: {RESULTS_PATH} for a full run)")
    parser.add_argument(
        "--skip", action="append", default=[], choices=BENCHMARKS, metavar="NAME", help="leave a benchmark out (repeatable)"
    )
    args = parser.parse_args(argv)
    output = args.output or (None if args.quick else RESULTS_PATH)

    import importlib

    started, load_before = time.perf_counter(), _load()
    rows: list[ResultRow] = []
    failed = []
    for name in (b for b in BENCHMARKS if b not in args.skip):
        print(f"\n== {name} ==", flush=True)
        began = time.perf_counter()
        try:
            rows += importlib.import_module(f"bench.{name}").run(quick=args.quick)
        except Exception as exc:  # noqa: BLE001 - report it, run the others, exit non-zero
            traceback.print_exc()
            failed.append(name)
            rows.append(ResultRow(name, "—", f"FAILED: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
        print(f"   ({name}: {time.perf_counter() - began:.1f} s)", flush=True)
    elapsed = time.perf_counter() - started

    from alterflow.spark_session import stop_spark

    stop_spark()

    table = markdown_table(rows)
    print("\n## alterflow benchmark results" + (" (--quick)" if args.quick else "") + "\n")
    print(table, flush=True)
    if output is not None:
        output.write_text(
            "# alterflow benchmark results" + (" (--quick)" if args.quick else "") + "\n\n"
            f"`python -m bench{' --quick' if args.quick else ''}` on {dt.datetime.now().isoformat(timespec='seconds')}; "
            f"{os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.system()} {platform.release()}; "
            f"load average {load_before} at the start, {_load()} at the end; {elapsed:.0f} s in all.\n\n"
            f"{table}\n\n"
            'Ratios compare with a baseline measured in the same run. "Reference" figures were measured '
            "elsewhere (PyIceberg on this kind of machine) and are not re-measured here. Wall time is what the "
            "goals judge; CPU time is shown because other processes on a small machine inflate wall time.\n",
            encoding="utf-8",
        )
        print(f"\nwritten to {output}")
        if output == RESULTS_PATH:
            write_readme_summary(rows, README_PATH)
            print(f"summary written to {README_PATH}")
    print(f"total {elapsed:.0f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
