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


# Each integral type's bounds and the numbers just past them, as text: the edge cases of every
# cast from a string to TINYINT, SMALLINT, INT or BIGINT.
INTEGER_BOUNDARY_TEXTS = tuple(
    text
    for bits in (8, 16, 32, 64)
    for text in (str(2 ** (bits - 1) - 1), str(2 ** (bits - 1)), str(-(2 ** (bits - 1))), str(-(2 ** (bits - 1)) - 1))
)
