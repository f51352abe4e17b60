"""ALTER TABLE ... PROPERTIES ("key" = "value", ...): parsing and validation."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from enum import StrEnum

from alterflow.catalog.records import AlterProperties
from alterflow.catalog.states import Engine, OnCastError
from alterflow.errors import MAX_SHOWN
from alterflow.planner.rejections import AlterRejected, one_line

__all__ = ["AlterProperties", "parse_properties", "KNOWN_PROPERTIES"]

KNOWN_PROPERTIES = ("timeout", "on_cast_error", "postpone_swap", "rewrite", "expected_version", "engine")

_DIGITS = re.compile(r"[0-9]+")
MAX_TIMEOUT = 366 * 86400  # a job may be given up to a year
MAX_VERSION = 2**63 - 1  # what the catalog's version columns hold


def _quote(value: object) -> str:
    text = str(value)
    more = f" ({len(text)} characters)" if len(text) > MAX_SHOWN else ""
    return '"' + text[:MAX_SHOWN].replace('"', '\\"') + ("…" if more else "") + '"' + more


def _choice(choices: type[StrEnum], text: str, bad: Callable[[str], AlterRejected]) -> StrEnum:
    """The member of `choices` that `text` names, in any case; else `bad`, listing them."""
    for member in choices:
        if member == text.lower():
            return member
    names = [member.value for member in choices]
    raise bad("must be " + ", ".join(names[:-1]) + " or " + names[-1])


def parse_properties(table: str, props: Mapping[str, str] | None) -> AlterProperties:
    """Validate the PROPERTIES of an ALTER TABLE on `table`.

    Keys match case-insensitively; values are trimmed; booleans, `on_cast_error` and `engine` are
    case-insensitive. Raises AlterRejected naming the property for an unknown key or a bad value.
    """
    values: dict[str, object] = {}
    seen: dict[str, str] = {}
    for raw_key, raw_value in (props or {}).items():
        key = str(raw_key).strip().lower()
        shown = str(raw_key)

        def bad(rule: str, shown: str = shown, raw_value: object = raw_value) -> AlterRejected:
            return AlterRejected(one_line(f"ALTER TABLE {table}: property {_quote(shown)} {rule}, got {_quote(raw_value)}"))

        if key not in KNOWN_PROPERTIES:
            raise AlterRejected(one_line(f"ALTER TABLE {table}: unknown property {_quote(shown)} (known: {', '.join(KNOWN_PROPERTIES)})"))
        if key in seen:
            raise AlterRejected(one_line(f"ALTER TABLE {table}: property {_quote(shown)} is given twice"))
        seen[key] = shown
        text = "" if raw_value is None else str(raw_value).strip()
        if key == "timeout":
            if not _DIGITS.fullmatch(text) or len(text) > 18 or not 0 < int(text) <= MAX_TIMEOUT:
                raise bad(f"must be a positive integer number of seconds, at most {MAX_TIMEOUT}")
            values[key] = int(text)
        elif key in ("on_cast_error", "engine"):
            values[key] = _choice(OnCastError if key == "on_cast_error" else Engine, text, bad)
        elif key in ("postpone_swap", "rewrite"):
            if text.lower() not in ("true", "false"):
                raise bad("must be true or false")
            values[key] = text.lower() == "true"
        else:  # expected_version
            if not _DIGITS.fullmatch(text) or len(text) > 19 or int(text) > MAX_VERSION:
                raise bad(f"must be a non-negative integer, at most {MAX_VERSION}")
            values[key] = int(text)
    return AlterProperties(**values)
