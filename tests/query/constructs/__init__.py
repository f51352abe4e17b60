"""Examples of each construct of the local engine's set, and of each it leaves to Spark or that
Spark refuses, with Spark's answers recorded beside them: docs/semantics.md's lists, made tests.

A family module here (`dates.py`, `scalars.py`, ...) defines three dicts, construct -> query:

- `LOCAL`: runs in process (EXPLAIN says local) and gives Spark's answer;
- `SPARK_ONLY`: goes to Spark (EXPLAIN says spark);
- `REJECTED`: Spark refuses it; the local engine refuses it with Spark's line or hands it to Spark,
  never answers it;

and may define `SETUP`, statements creating and loading tables of its own (beside the differential
corpus's tables: nums, small, evolved, keyed, pinned, recent; tests/query/corpus.py). Spark's
answers are recorded in `<family>.json` by

    python -m tests.query.constructs [family ...]

(an answer digest per query, as tests/query/spark_answers.py records the corpus's), which a new or
changed example needs; tests/query/test_constructs.py compares and re-runs a sample on Spark.

docs/semantics.md lists the constructs by these names, in a section `docs_section()` writes
(`python -m tests.query.constructs --docs`); test_constructs checks the docs say the same.
"""

from __future__ import annotations

import importlib
import json
import pathlib
import pkgutil
from dataclasses import dataclass
from enum import Enum

HERE = pathlib.Path(__file__).parent


class Expectation(Enum):
    LOCAL = "local"
    SPARK_ONLY = "spark_only"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Example:
    family: str
    construct: str
    sql: str
    expectation: Expectation

    @property
    def id(self) -> str:
        return f"{self.family}: {self.construct}"


def families() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if not m.name.startswith("_"))


def _module(family: str):
    return importlib.import_module(f"{__name__}.{family}")


def examples(family: str) -> list[Example]:
    module = _module(family)
    found = []
    for expectation in Expectation:
        for construct, sql in getattr(module, expectation.name, {}).items():
            found.append(Example(family, construct, sql, expectation))
    return found


def all_examples() -> list[Example]:
    return [e for family in families() for e in examples(family)]


def setup_statements() -> list[str]:
    return [s for family in families() for s in getattr(_module(family), "SETUP", [])]


def recording_path(family: str) -> pathlib.Path:
    return HERE / f"{family}.json"


def load(family: str) -> dict[str, str]:
    """{digest of an example's SQL: digest of Spark's answer}; empty before the first recording."""
    path = recording_path(family)
    return json.loads(path.read_text()) if path.exists() else {}


DOCS = pathlib.Path(__file__).resolve().parents[3] / "docs" / "semantics.md"
DOCS_START = "<!-- constructs: written by python -m tests.query.constructs --docs -->"
DOCS_END = "<!-- end of constructs -->"
_HEADINGS = {
    Expectation.LOCAL: "**In process**, with Spark's answers, types and names",
    Expectation.SPARK_ONLY: "**On Spark only**, whatever the size (the reason after the colon or in brackets)",
    Expectation.REJECTED: "**Refused as Spark refuses them** (in one line, or by Spark itself)",
}


def docs_section() -> str:
    """The lists docs/semantics.md carries: each family's constructs by expectation, plus the
    differential corpus's Spark-only constructs (tests/query/corpus.py)."""
    from tests.query.corpus import SPARK_ONLY as CORPUS_SPARK_ONLY

    found = all_examples()
    lines = []
    for expectation in Expectation:
        lines += ["", _HEADINGS[expectation] + ":", ""]
        for family in families():
            names = [e.construct for e in found if e.family == family and e.expectation is expectation]
            if names:
                lines.append(f"- *{family.replace('_', ' ')}*: " + "; ".join(names) + ".")
        if expectation is Expectation.SPARK_ONLY:
            lines.append("- *generated corpus*: " + "; ".join(CORPUS_SPARK_ONLY) + ".")
    return "\n".join(lines[1:])


def docs_text() -> str:
    text = DOCS.read_text(encoding="utf-8")
    return text[text.index(DOCS_START) + len(DOCS_START) : text.index(DOCS_END)].strip()


def write_docs() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start, end = text.index(DOCS_START) + len(DOCS_START), text.index(DOCS_END)
    DOCS.write_text(text[:start] + "\n" + docs_section() + "\n" + text[end:], encoding="utf-8")
