"""DuckDB macros the local engine's translations call (Spark's casts from strings, its date
parser), created on a query's connection only when its SQL names them: each costs about half a
millisecond to create, which a light query should not pay for macros it does not use.
"""

from __future__ import annotations

import re

# name -> (parameters, body); a macro may call those defined before it.
MACROS: dict[str, tuple[str, str]] = {}


def define(name: str, parameters: str, body: str) -> str:
    """Registers the macro `name`; returns its name, for the translations to call."""
    MACROS[name] = (parameters, " ".join(body.split()))
    return name


def statements(*sql: str) -> list[str]:
    """CREATE statements for the macros `sql` calls, and those they call, in definition order."""
    text = " ".join(sql)
    wanted: set[str] = set()
    for name in reversed(MACROS):  # a macro only calls earlier ones: one backward pass finds them all
        if re.search(rf"\b{name}\(", text) or any(re.search(rf"\b{name}\(", MACROS[w][1]) for w in wanted):
            wanted.add(name)
    return [f"CREATE OR REPLACE TEMP MACRO {n}({MACROS[n][0]}) AS {MACROS[n][1]}" for n in MACROS if n in wanted]
