"""How SQL names compare: case-insensitively, the way Spark resolves them."""

from __future__ import annotations


def name_key(name: str) -> str:
    """The form names are compared and indexed in."""
    return name.lower()
