"""alterflow's benchmarks (`make bench`, i.e. `python -m bench [--quick]`).

Speed is measured here and only here, never in timed unit tests. Every benchmark:
- works in a fresh temporary ALTERFLOW home (SQLite catalog unless it says otherwise),
- compares against a baseline measured in the same run and prints the ratio,
- returns rows for the one Markdown results table that `python -m bench` prints at the end.

`--quick` runs the same code on small sizes; it proves the benchmarks work (the smoke test uses
it) and judges no goal.
"""

from __future__ import annotations

import contextlib
import math
import pathlib
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

RESULTS_PATH = pathlib.Path(__file__).with_name("RESULTS.md")
HEADER = ("Benchmark", "Case", "Result", "Baseline (same run)", "Ratio", "Goal", "Reference (not measured)", "Goal met")


@dataclass(frozen=True)
class ResultRow:
    benchmark: str
    case: str
    result: str
    baseline: str = "—"
    ratio: str = "—"
    goal: str = "—"
    reference: str = "—"
    met: str = "—"
    summary: str = ""  # the README summary's name of the case, whole (the table above holds the rest)

    def cells(self) -> tuple[str, ...]:
        return (self.benchmark, self.case, self.result, self.baseline, self.ratio, self.goal, self.reference, self.met)


def verdict(ok: bool, quick: bool) -> str:
    if quick:
        return "not judged (--quick)"
    return "yes" if ok else "**NO**"


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


@contextlib.contextmanager
def fresh_home(prefix: str) -> Iterator[pathlib.Path]:
    """A new, empty ALTERFLOW home, deleted afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"alterflow-bench-{prefix}-") as home:
        yield pathlib.Path(home)


def settings_for(home: pathlib.Path, catalog_url: str | None = None, spark_master: str = "local[2]"):
    """Settings of an embedded alterflow under `home`; the caller's environment is not consulted,
    so the catalog is SQLite under the home unless `catalog_url` is given."""
    from alterflow.settings import Settings

    env = {"ALTERFLOW_HOME": str(home), "ALTERFLOW_SPARK_MASTER": spark_master}
    if catalog_url:
        env["ALTERFLOW_CATALOG_URL"] = catalog_url
    return Settings.from_env(env)


def markdown_table(rows: Sequence[ResultRow]) -> str:
    def escape(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join("---" for _ in HEADER) + "|",
    ]
    lines += ["| " + " | ".join(escape(c) for c in row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def rows_text(n: int) -> str:
    return f"{n:,} rows"


def timed_process(command: list[str], env: dict, quiet: bool = False) -> float:
    """Seconds one whole process takes, start to exit; it must succeed (and, when `quiet`, print
    nothing on stderr)."""
    import subprocess
    import time

    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or (quiet and done.stderr):
        raise RuntimeError(f"{command[:3]} failed or printed on stderr: {(done.stderr or done.stdout).strip()[-500:]}")
    return elapsed
