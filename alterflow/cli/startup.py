"""What a CLI process does before its work, to start sooner."""

from __future__ import annotations

import gc
import importlib


def import_paused(name: str) -> None:
    """Import module `name` with Python's cyclic garbage collector paused, then freeze what exists
    (modules, classes, functions: they live as long as the process) and resume it. An import makes
    hundreds of thousands of objects and no garbage, and each collection while it runs walks them
    again: about a fifth of a light ALTER's imports on this host (docs/benchmarks.md)."""
    gc.disable()
    try:
        importlib.import_module(name)
    finally:
        gc.freeze()
        gc.enable()
