"""The share of Spark's own SQL golden queries (tests/query/spark_golden) that alterflow answers
in process, each answer equal to Spark's recorded one. No Spark runs: Spark's outcomes were
recorded once by tests/query/spark_golden/record.py. A share, not a speed: the baseline is the
issue's goal, and the wrong answers (each listed in tests/query/test_spark_golden.py) are shown.

`--quick` reads the first three golden files only.
"""

from __future__ import annotations

from bench import ResultRow, verdict

GOAL = 0.70
QUICK_FILES = 3


def run(quick: bool = False) -> list[ResultRow]:
    from tests.query.spark_golden import golden, runner

    paths = golden.input_files()
    report = runner.run(paths[:QUICK_FILES] if quick else paths)
    eligible, local = len(report.eligible), len(report.in_process)
    right, refused, wrong = (len(report.of(s)) for s in ("local_right", "refused_right", "wrong"))
    crashes = len(report.of("crash"))
    print(report.text(top=10))
    return [
        ResultRow(
            "Spark golden queries answered in process",
            f"{eligible} eligible queries of {len(paths[:QUICK_FILES] if quick else paths)} Spark golden files "
            f"({len(report.of('skipped'))} skipped), no Spark",
            f"{100 * report.share:.1f}% ({local} of {eligible}): right {right}, refused as Spark fails {refused}, "
            f"wrong {wrong}, crashes {crashes}; {report.seconds:.1f} s",
            baseline=f"Spark: {len(report.of('spark'))} of {eligible}",
            goal=f"≥ {100 * GOAL:.0f}%",
            reference="42.6% of 256 eligible queries (19 files) when the runner landed",
            met=verdict(report.share >= GOAL and not crashes, quick),
            summary="Spark golden queries in process",
        )
    ]
