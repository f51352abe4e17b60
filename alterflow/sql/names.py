"""SQL names: what one may be (`valid_name`: letters, digits and underscores, not starting with a
digit, up to MAX_NAME characters) and how two compare (case-insensitively, the way Spark resolves
them). The parser, both planners and the Airflow layer's checks of a run's parameters share them."""

from __future__ import annotations

import re

from alterflow.errors import shown

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_NAME = 128


def valid_name(name: str) -> bool:
    return isinstance(name, str) and len(name) <= MAX_NAME and NAME_RE.fullmatch(name) is not None


def named(name: str) -> str:
    """A name as a message gives it: as written when it could be a name; escaped and shortened
    (`alterflow.errors.shown`, without quotes) when it is longer than MAX_NAME characters or holds
    control characters, so a 2 MB name the API was handed never makes a 2 MB message."""
    return shown(name, MAX_NAME, quote="")


def name_key(name: str) -> str:
    """The form names are compared and indexed in."""
    return name.lower()
