"""ALTER TABLE ... PROPERTIES ("key" = "value", ...): parsing and validation."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from alterflow.errors import MAX_SHOWN
from alterflow.planner.errors import AlterRejected, one_line

__all__ = ["AlterProperties", "parse_properties", "KNOWN_PROPERTIES"]

KNOWN_PROPERTIES = ("timeout", "on_cast_error", "postpone_swap", "rewrite", "expected_version", "engine")
ENGINES = ("auto", "spark", "local")  # alterflow.rewrite.engines decides what auto means

ON_CAST_ERROR = ("fail", "null", "quarantine")
_DIGITS = re.compile(r"[0-9]+")
MAX_TIMEOUT = 366 * 86400  # a job may be given up to a year
MAX_VERSION = 2**63 - 1  # what the catalog's version columns hold


@dataclass(frozen=True)
class AlterProperties:
    timeout: int = 86400  # seconds a job may take before it is cancelled
    on_cast_error: str = "fail"  # "fail" | "null" | "quarantine"
    postpone_swap: bool = False
    rewrite: bool = False
    expected_version: int | None = None
    engine: str = "auto"  # "auto" | "spark" | "local": what converts history (SPEC §7)


def _quote(value: object) -> str:
    text = str(value)
    more = f" ({len(text)} characters)" if len(text) > MAX_SHOWN else ""
    return '"' + text[:MAX_SHOWN].replace('"', '\\"') + ("…" if more else "") + '"' + more


def parse_properties(table: str, props: Mapping[str, str] | None) -> AlterProperties:
    """Validate the PROPERTIES of an ALTER TABLE on `table`.

    Keys match case-insensitively; values are trimmed; booleans and `on_cast_error` are
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
        elif key == "on_cast_error":
            if text.lower() not in ON_CAST_ERROR:
                raise bad("must be fail, null or quarantine")
            values[key] = text.lower()
        elif key == "engine":
            if text.lower() not in ENGINES:
                raise bad("must be " + ", ".join(ENGINES[:-1]) + " or " + ENGINES[-1])
            values[key] = text.lower()
        elif key in ("postpone_swap", "rewrite"):
            if text.lower() not in ("true", "false"):
                raise bad("must be true or false")
            values[key] = text.lower() == "true"
        else:  # expected_version
            if not _DIGITS.fullmatch(text) or len(text) > 19 or int(text) > MAX_VERSION:
                raise bad(f"must be a non-negative integer, at most {MAX_VERSION}")
            values[key] = int(text)
    return AlterProperties(**values)
