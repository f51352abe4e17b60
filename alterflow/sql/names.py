"""SQL names: what one may be (`valid_name`: letters, digits and underscores, not starting with a
digit, up to MAX_NAME characters) and how two compare (case-insensitively, the way Spark resolves
them). The parser, both planners and the Airflow layer's checks of a run's parameters share them."""

from __future__ import annotations

import re

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_NAME = 128


def valid_name(name: str) -> bool:
    return isinstance(name, str) and len(name) <= MAX_NAME and NAME_RE.fullmatch(name) is not None


def name_key(name: str) -> str:
    """The form names are compared and indexed in."""
    return name.lower()
