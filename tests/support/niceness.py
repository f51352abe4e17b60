"""The niceness steps ran at: a step wrapped by `NicenessNotes.noting` notes the niceness of the
thread that called it under its name (Linux keeps a niceness per thread)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable


def thread_niceness() -> int:
    """The calling thread's own niceness."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


class NicenessNotes(dict):
    """Step name -> the niceness of the thread that last called it."""

    def noting(self, step: Callable) -> Callable:
        def noted(*args, **kwargs):
            self[step.__name__] = thread_niceness()
            return step(*args, **kwargs)

        return noted
