"""Spark's SQL golden files (inputs/*.sql, results/*.sql.out), read as SQLQueryTestSuite reads
them: comment lines (`--`) dropped, the rest split at `;` outside quotes; `--IMPORT` and `--SET`
directives in the comments; each statement sorted into setup (temporary views, tables and their
rows), a change of Spark's configuration (`SET`), another command, or a query.

The results are written and read in the suite's `.sql.out` format:

    -- !query
    <sql>
    -- !query schema
    struct<name:type,...>
    -- !query output
    <one line per row, columns separated by tabs>   (or `!exception: ` and the error's first line)
"""

from __future__ import annotations

import json
import pathlib
import re
from dataclasses import dataclass

HERE = pathlib.Path(__file__).parent
INPUTS = HERE / "inputs"
RESULTS = HERE / "results"
TABLES = HERE / "tables"

_SETUP = re.compile(
    r"^\s*(create\s+(or\s+replace\s+)?((global\s+)?temp(orary)?\s+)?view|create\s+table|insert\s+(into|overwrite)|drop\s+(view|table))\b",
    re.IGNORECASE,
)
_SET = re.compile(r"^\s*(set|reset)\b", re.IGNORECASE)
EXCEPTION = "!exception: "  # the line that stands for the output of a statement that failed
_QUERY = re.compile(r"^\s*(select|with|values|from|table|\()", re.IGNORECASE)


@dataclass(frozen=True)
class Statement:
    sql: str
    kind: str  # "setup", "set", "query" or "command"


def input_files() -> list[pathlib.Path]:
    return sorted(INPUTS.rglob("*.sql"))


def file_name(path: pathlib.Path) -> str:
    """The file's name relative to inputs/ (`subquery/in-subquery/in-basic.sql`)."""
    return path.relative_to(INPUTS).as_posix()


def directives(text: str) -> list[str]:
    """The `--IMPORT` and `--SET` lines: a file with them needs what the runner does not do."""
    return [line.strip() for line in text.splitlines() if re.match(r"^\s*--(IMPORT|SET)\b", line)]


def split_statements(text: str) -> list[str]:
    code = "\n".join(line for line in text.splitlines() if not line.strip().startswith("--"))
    statements, current, quote = [], [], None
    for ch in code:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
            current.append(ch)
        elif ch == ";":
            statements.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    statements.append("".join(current).strip())
    return [s for s in statements if s]


def classify(sql: str) -> str:
    if _SETUP.match(sql):
        return "setup"
    if _SET.match(sql):
        return "set"
    if _QUERY.match(sql):
        return "query"
    return "command"


def statements(path: pathlib.Path) -> list[Statement]:
    return [Statement(s, classify(s)) for s in split_statements(path.read_text())]


# -- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    sql: str
    schema: str  # "struct<...>"; "struct<>" for a statement without rows or an error
    output: tuple[str, ...]  # lines
    error: str | None = None  # the exception's condition (error class) or first line


def write_results(path: pathlib.Path, outcomes: list[Outcome], header: str) -> None:
    parts = [header]
    for o in outcomes:
        lines = (f"{EXCEPTION}{o.error}",) if o.error is not None else o.output
        parts.append(f"-- !query\n{o.sql}\n-- !query schema\n{o.schema}\n-- !query output\n" + "".join(f"{line}\n" for line in lines))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(parts))


def read_results(path: pathlib.Path) -> list[Outcome]:
    outcomes = []
    text = path.read_bytes().decode()  # not read_text: it would turn a carriage return in a name into a newline
    for block in text.split("-- !query\n")[1:]:
        sql, rest = block.split("\n-- !query schema\n", 1)
        schema, output = rest.split("\n-- !query output\n", 1)
        lines = output.rstrip("\n").split("\n") if output.strip("\n") else []
        if len(lines) == 1 and lines[0].startswith(EXCEPTION):
            outcomes.append(Outcome(sql, schema, (), lines[0].removeprefix(EXCEPTION)))
        else:
            outcomes.append(Outcome(sql, schema, tuple(lines)))
    return outcomes


def results_path(name: str) -> pathlib.Path:
    return RESULTS / f"{name}.out"


def tables_path(name: str) -> pathlib.Path:
    return TABLES / f"{name.removesuffix('.sql')}.json"


def read_events(name: str) -> dict[int, list[dict]]:
    """{statement index: the table events recorded after that setup statement}."""
    data = json.loads(tables_path(name).read_text())
    return {int(k): v for k, v in data.items()}
