"""Comparing query results strictly: the Python type of a value counts too."""

from __future__ import annotations

from decimal import Decimal


def strict(value):
    """A comparison key that also tells int / bool / float / Decimal (with its scale) / date / datetime apart."""
    if isinstance(value, Decimal):
        return ("Decimal", value, value.as_tuple().exponent)
    if isinstance(value, (tuple, list)):
        return tuple(strict(v) for v in value)
    return (type(value).__name__, value)
