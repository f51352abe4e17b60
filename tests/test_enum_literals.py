"""The catalog's enums (`alterflow.catalog.states`: JobState, JobKind, OnCastError, Engine...) are
compared through their members, never through their values spelled as strings: no comparison in
alterflow/, catalog/, expectations/ or spark_jobs/ (`==`, `!=`, or `in` / `not in` a tuple, list or
set written out) has a string constant that is the value of one of those enums. Each one found is
listed as file:line, with the members it could mean."""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator
from enum import Enum

from alterflow.catalog import states

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = ("alterflow", "catalog", "expectations", "spark_jobs")


def _members() -> dict[str, list[str]]:
    """Each value of the enums in `states.__all__` -> the members that have it."""
    found: dict[str, list[str]] = {}
    for name in states.__all__:
        enum = getattr(states, name)
        if isinstance(enum, type) and issubclass(enum, Enum):
            for member in enum:
                found.setdefault(member.value, []).append(f"{name}.{member.name}")
    return found


MEMBERS = _members()
# Other things spelled like an enum value, compared through an attribute of this name: (attribute, value) -> what it is.
OTHER_CONCEPTS = {
    ("kind", "null"): "a SQL literal's kind (alterflow.sql.ast.Literal.kind: null, bool, int, decimal, string), not OnCastError.NULL",
}


def _name(node: ast.expr) -> str | None:
    """The attribute or variable a compared expression reads (`lit.kind` -> "kind"), else None."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _compared_texts(node: ast.Compare) -> Iterator[tuple[str, ast.expr]]:
    """(string constant, what it is compared with), for each `==`, `!=`, `in` or `not in` a
    tuple, list or set written out in the comparison (chains included)."""
    operands = [node.left, *node.comparators]
    for op, left, right in zip(node.ops, operands, operands[1:]):
        if isinstance(op, ast.Eq | ast.NotEq):
            if _is_text(left):
                yield left.value, right
            if _is_text(right):
                yield right.value, left
        elif isinstance(op, ast.In | ast.NotIn) and isinstance(right, ast.Tuple | ast.List | ast.Set):
            yield from ((element.value, left) for element in right.elts if _is_text(element))


def literal_comparisons(source: str, filename: str) -> list[str]:
    """Every comparison in `source` with an enum's value spelled as a string, as file:line lines."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Compare):
            continue
        for value, other in _compared_texts(node):
            if value in MEMBERS and (_name(other), value) not in OTHER_CONCEPTS:
                found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}: compare with {' or '.join(MEMBERS[value])}")
    return found


def test_the_checker_finds_enum_values_and_leaves_other_strings():
    source = "\n".join(
        [
            'a = job.state == "FINISHED"',
            'b = "spark" != engine',
            'c = state in ("RUNNING", "other")',
            'd = x.on_cast_error not in ["null"]',
            'e = run.state == "failed" or ti.state in ("success", "running")',  # Airflow's states: lowercase, not ours
            'f = lit.kind == "null"',  # a SQL literal's kind
            'g = "RUNNING" in text',  # a substring test, not a comparison with a value
        ]
    )
    assert [line.split(":")[1] for line in literal_comparisons(source, "example.py")] == ["1", "2", "3", "4"]


def test_enum_values_are_compared_through_their_members():
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += literal_comparisons(path.read_text(), path.relative_to(ROOT).as_posix())
    assert not found, "\n".join(found)
