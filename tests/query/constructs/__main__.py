"""Record Spark's answers to the construct examples: `python -m tests.query.constructs [family ...]`
(every family when none is named; Spark takes 0.4 to 2 s a query), or, with `--docs`, write their
lists into docs/semantics.md."""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

from tests.query import constructs, spark_answers


def record(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as home:
        session = spark_answers.build_session(pathlib.Path(home))
        for statement in constructs.setup_statements():
            list(session.run(statement))
        for family in names:
            answers = {}
            for example in constructs.examples(family):
                outcome = spark_answers.outcome(session, "spark", example.sql)
                if example.expectation is constructs.Expectation.REJECTED and outcome[0] != "error":
                    raise SystemExit(f"{example.id}: Spark answers it, so it is not an example of a query Spark refuses")
                answers[spark_answers.digest(example.sql)] = spark_answers.answer_digest(outcome, False)
                print(f"{example.id}: {outcome[0]}" + (f" {outcome[1]}" if outcome[0] == "error" else ""), flush=True)
            constructs.recording_path(family).write_text(json.dumps(answers, indent=0, sort_keys=True) + "\n")
            print(f"{len(answers)} answers written to {constructs.recording_path(family)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--docs"]:
        constructs.write_docs()
    else:
        record(sys.argv[1:] or constructs.families())
