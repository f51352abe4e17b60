"""A heavyweight job's long steps run in a niced thread (alterflow/workflow/background.py): the
thread's niceness is raised, the caller's is not, what the thread starts inherits it, and the
work's result or exception reaches the caller."""

from __future__ import annotations

import contextvars
import os
import subprocess
import sys
import threading

import pytest

from alterflow.settings import SettingError, Settings
from alterflow.workflow.background import can_nice_threads, raise_thread_niceness, run_niced

pytestmark = pytest.mark.skipif(not can_nice_threads(), reason="a thread's niceness of its own is Linux's")


def niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_the_work_runs_in_a_thread_of_raised_niceness_and_the_caller_keeps_its_own():
    before = niceness()
    wanted = max(before, 10)
    seen = run_niced(10, lambda: (threading.current_thread().name, niceness()))
    assert seen == ("alterflow-background", wanted)
    assert niceness() == before


def test_a_process_the_thread_starts_inherits_its_niceness():
    child = "import os; print(os.getpriority(os.PRIO_PROCESS, 0))"
    printed = run_niced(12, lambda: subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout)
    assert int(printed) == max(12, niceness())


def test_the_works_exception_is_raised_to_the_caller_as_it_is():
    class Refused(Exception):
        """The work's own error, to be raised to the caller unchanged."""

    def work():
        raise Refused("no")

    with pytest.raises(Refused, match="no") as caught:
        run_niced(10, work)
    assert caught.traceback[-1].name == "work"  # where it was raised, in the thread


def test_the_thread_sees_the_callers_context_variables():
    request = contextvars.ContextVar("request")
    request.set("run 7")
    assert run_niced(10, request.get) == "run 7"


def test_a_niceness_of_zero_runs_the_work_in_the_callers_thread():
    assert run_niced(0, threading.current_thread) is threading.current_thread()


def test_a_higher_niceness_is_never_lowered():
    """A worker started with `nice -n 15` keeps 15 for its conversions."""
    script = (
        "import os, threading\n"
        "from alterflow.workflow.background import raise_thread_niceness, run_niced\n"
        "print(run_niced(10, lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))\n"
    )
    done = subprocess.run(["nice", "-n", "15", sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert int(done.stdout) == max(15, niceness())
    raise_thread_niceness(0)  # 0: nothing, even where the caller runs niced
    assert niceness() >= 0


@pytest.mark.parametrize("text", ["20", "-1", "ten", "1.5"])
def test_a_bad_niceness_setting_is_one_line_naming_it(text):
    with pytest.raises(SettingError) as refused:
        Settings.from_env({"ALTERFLOW_BACKGROUND_NICE": text})
    message = str(refused.value)
    assert message.startswith("ALTERFLOW_BACKGROUND_NICE must be a whole number of nice levels from 0 to 19") and "\n" not in message


def test_the_niceness_setting_defaults_to_10_and_takes_0_to_19():
    assert Settings.from_env({}).background_nice == 10
    assert Settings.from_env({"ALTERFLOW_BACKGROUND_NICE": "0"}).background_nice == 0
    assert Settings.from_env({"ALTERFLOW_BACKGROUND_NICE": " 19 "}).background_nice == 19
