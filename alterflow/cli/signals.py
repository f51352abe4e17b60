"""Ctrl-C, SIGTERM and a closed stdout in the `alterflow` command
(docs/semantics.md#interrupts-and-closed-pipes).

SIGINT raises KeyboardInterrupt in the main thread, cancelling Spark's jobs first; SIGTERM raises
`Terminated`, a KeyboardInterrupt too, the same way (`install`). Neither is raised inside an import:
it waits for the import to finish (`_raise_later`). The work under way unwinds as on any error: a
load aborts its transaction, a heavyweight job's runner releases its lease, `migrate apply` releases
the apply lease and leaves its running statement RUNNING for the next apply. Each commit
is one catalog transaction, so nothing is half visible. `interrupted` then prints one line, what
state the work is in and the command that continues it (each command says what it is doing with
`under_way`), and the command exits 130 (SIGINT) or 143 (SIGTERM).

A reader that goes away (`alterflow sql -e "SELECT ..." | head -1`) ends the output quietly: the
first write that meets the closed pipe points stdout at the null device, and the command finishes
its work with its output dropped and exits with its own status (`QuietStream`).
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable

from alterflow.errors import capped


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread where Ctrl-C raises KeyboardInterrupt: the work under way
    unwinds the same way (every `except Exception` lets it through)."""


def _terminate(signum, frame) -> None:
    """SIGTERM: `Terminated` in the main thread, never inside an import (`_raise_later`); Spark's
    jobs are cancelled first."""
    if _raise_later(signum, frame):
        return
    _cancel_spark_jobs()
    raise Terminated()


def _interrupt(signum, frame) -> None:
    """SIGINT: Python's KeyboardInterrupt, never inside an import (`_raise_later`); Spark's jobs are
    cancelled first, as PySpark's own handler does (the process keeps this handler when its
    SparkContext starts: `alterflow.spark_session`)."""
    if _raise_later(signum, frame):
        return
    _cancel_spark_jobs()
    raise KeyboardInterrupt()


_interrupt.cancels_spark_jobs = True  # kept when Spark starts (`alterflow.spark_session`)


def _cancel_spark_jobs() -> None:
    """As PySpark's own SIGINT handler does: no Spark job outlives the process's work."""
    context = getattr(sys.modules.get("pyspark"), "SparkContext", None)
    spark = getattr(context, "_active_spark_context", None)
    if spark is not None:  # from another thread: this one may be inside a Py4J call on its own connection
        threading.Thread(target=_cancel_jobs, args=(spark,), name="cancel-spark-jobs", daemon=True).start()


REDELIVER_AFTER_S = 0.05  # how long a swallowed or postponed interrupt waits to be raised again
IMPORT_GRACE_S = 10.0  # the longest an import under way postpones an interrupt
_postponed_since: list[float] = []


def _raise_later(signum: int, frame) -> bool:
    """Whether the interrupt is sent again in a moment instead of being raised now: the main thread
    is importing a module. An exception raised inside Python's import machinery (between a module
    lock's bookkeeping steps, or in a module's top-level code) leaves the process's imports broken:
    a half-initialised numpy or pandas fails every later import of it, and a module lock left
    unreleased held the next import, and the command, for good (a `gc` that SIGTERM reached while
    it imported went on for minutes without its line). The import finishes first, within
    IMPORT_GRACE_S (an import waiting on another thread's may wait longer: then it is raised there).
    One raised inside a catalog statement is safe: the connection is closed, its transaction
    with it (`alterflow.catalog.database`)."""
    if not _importing(frame):
        _postponed_since.clear()
        return False
    now = time.monotonic()
    if not _postponed_since:
        _postponed_since.append(now)
    elif now - _postponed_since[0] > IMPORT_GRACE_S:
        _postponed_since.clear()
        return False
    _send_again(signum)
    return True


def _importing(frame) -> bool:
    """Whether `frame` runs inside an import: some frame of its stack is importlib's own."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _send_again(signum: int) -> None:
    """Send `signum` to this process again REDELIVER_AFTER_S from now (from a timer thread)."""
    timer = threading.Timer(REDELIVER_AFTER_S, os.kill, (os.getpid(), signum))
    timer.daemon = True
    timer.start()


def _redeliver_swallowed(unraisable) -> None:
    """`sys.unraisablehook`: an interrupt raised where Python cannot raise it (the signal handler ran
    inside a weakref callback or a `__del__`: "Exception ignored in ...") would be lost, and the
    command would go on as if no signal came. Sent again a moment later, it is raised in the
    code under way; nothing is printed for it. Any other unraisable exception goes to the hook
    that was there before."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        _send_again(signal.SIGTERM if isinstance(unraisable.exc_value, Terminated) else signal.SIGINT)
        return
    _previous_unraisablehook(unraisable)


_previous_unraisablehook = sys.unraisablehook


def _cancel_jobs(spark) -> None:
    try:
        spark.cancelAllJobs()
    except Exception:  # noqa: BLE001 - a JVM already gone has no job left to cancel
        return


def _not_py4j(record) -> bool:
    """Py4J logs on the root logger (so, unconfigured, on stderr with a traceback) when a signal
    interrupts one of its calls, or the call fails: the exception itself is what the command reports."""
    return record.module not in ("java_gateway", "clientserver")


class QuietStream:
    """Standard output (or error) that a closed pipe silences instead of failing: on BrokenPipeError the
    stream's descriptor is pointed at the null device (what is still buffered goes there too), and
    every later write succeeds without going anywhere."""

    def __init__(self, stream):
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._drop()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()
            self._stream.flush()

    def _drop(self) -> None:
        self.reader_gone = True
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self._stream.fileno())
        finally:
            os.close(null)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def install() -> None:
    """For the `alterflow` process (never an in-process caller of `main`): SIGTERM raises
    `Terminated` in the main thread and SIGINT KeyboardInterrupt, neither inside an import
    (`_raise_later`); an interrupt Python had to swallow is sent again (`_redeliver_swallowed`),
    and stdout goes quiet when its reader goes away."""
    import atexit
    import logging

    global _previous_unraisablehook

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _interrupt)
    if sys.unraisablehook is not _redeliver_swallowed:
        _previous_unraisablehook, sys.unraisablehook = sys.unraisablehook, _redeliver_swallowed
    logging.getLogger().addFilter(_not_py4j)
    for name in ("py4j.java_gateway", "py4j.clientserver"):  # a logger's filter sees only its own records
        logging.getLogger(name).addFilter(_not_py4j)
    atexit.register(_ignore_from_now)  # the first registered runs last: just before Python's own teardown
    if not isinstance(sys.stdout, QuietStream) and sys.stdout is not None:
        sys.stdout = QuietStream(sys.stdout)
    if not isinstance(sys.stderr, QuietStream) and sys.stderr is not None:  # `2>&1 | head`
        sys.stderr = QuietStream(sys.stderr)


_BEFORE = "alterflow stopped before its work began, or in a catalog transaction that commits whole: nothing is half visible"
_WHOLE = (
    "every commit is whole, nothing is half visible; SHOW ALTER TABLE COLUMN and alterflow migrate status "
    "show where the work stands, and the same command run again continues it"
)
_under_way: list[Callable[[], str]] = []


def under_way(describe: Callable[[], str]) -> None:
    """Say what the command is doing now: after an interrupt `describe()` gives the state of the
    work and the command that continues it, in one line."""
    _under_way[:] = [describe]


def again() -> str:
    """This command line, as the user can run it again."""
    return capped(shlex.join(["alterflow", *sys.argv[1:]]), 160)


def interrupted(exc: KeyboardInterrupt) -> int:
    """Print the interrupt's one line on stderr; the exit status (130 for SIGINT, 143 for SIGTERM).
    A second signal while the line is worked out (it reads the catalog) ends the process at once."""
    signum = signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT
    code = 128 + signum
    prefix = f"interrupted by {signal.Signals(signum).name}: "

    def now(second, _frame) -> None:
        name = signal.Signals(second).name
        _say(f"{prefix}a second {name} stopped it before the state of the work was read; {_WHOLE}")
        os._exit(code)

    signal.signal(signal.SIGINT, now)
    signal.signal(signal.SIGTERM, now)
    _let_go(exc)
    describe = _under_way[0] if _under_way else (lambda: f"{_BEFORE}; run the same command again: {again()}")
    try:
        state = describe()
    except Exception as error:  # noqa: BLE001 - the catalog cannot say: the line says so
        from alterflow.errors import first_line

        state = f"the state of the work could not be read ({first_line(error, 80)}); {_WHOLE}"
    print(capped(prefix + state), file=sys.stderr, flush=True)
    return code


def _say(line: str) -> None:
    """`line` on stderr from a signal handler that ends the process next (unbuffered; a closed
    stderr is no reason not to end)."""
    try:
        os.write(2, (line + "\n").encode())
    except OSError:
        return


def _let_go(exc: BaseException) -> None:
    """Free what the interrupted frames held: a catalog connection the signal caught between its
    BEGIN and the code that would end it (on SQLite, holding the write lock) is closed, and the
    state can be read."""
    import gc
    import traceback

    if exc.__traceback__ is not None:
        traceback.clear_frames(exc.__traceback__)
        exc.__traceback__ = None
    exc.__context__ = None
    gc.collect()


def exiting() -> None:
    """The command's work is over (done, failed or interrupted) and its lines printed: a signal
    while the process ends (its catalog connections closed, Spark's JVM stopped) ends it at once,
    with one line saying so."""

    def now(signum, _frame) -> None:
        name = signal.Signals(signum).name
        _say(f"interrupted by {name}: alterflow had finished its work and was exiting; the lines above say what it did")
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, now)
    signal.signal(signal.SIGTERM, now)


def _ignore_from_now() -> None:
    """The last step before the interpreter's teardown, which puts back the default action of every
    signal it handled (death, without a line or 130): from here on SIGINT and SIGTERM are ignored,
    the output is printed and the process is a moment from its end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def holder_prefix() -> str:
    """`host:pid:`, how every lease this process takes begins (`alterflow.held_leases.new_holder`)."""
    from alterflow.held_leases import new_holder

    return new_holder().rsplit(":", 1)[0] + ":"
