"""Named points where a process can be made to die with SIGKILL, for the kill-anywhere tests.

`ALTERFLOW_CRASH_AT=after_start` (a comma-separated list of names) makes a runner kill itself,
with the same signal as `kill -9`, the moment it reaches that point; `name@k` the k-th time this
process reaches it (`migrate_statement_recorded@3`: after the third statement an apply records).
`name:exit` and `name:interrupt` (`validating:exit@1`) raise SystemExit or KeyboardInterrupt in
the thread that reaches the point instead: a driver thread that dies, not its process.
`name:stop` stops the whole process with SIGSTOP there (every time, or the k-th), for a test that
must hold a process at a moment it could not catch from outside; SIGCONT lets it go on.
Unset (always, in production) a crash point costs one dictionary look-up. The points of a
heavyweight job:

after_start    the job is recorded (PENDING) and the step that started it is done
waiting_txn    the job moved to WAITING_TXN
running        the job moved to RUNNING
tablet_<k>     this runner committed its k-th converted tablet
quarantined    a tablet's quarantined rows are written and recorded under its conversion
               transaction, not yet committed (`"on_cast_error" = "quarantine"`)
validating     the conversion is done: the job moved to VALIDATING
before_swap    the validation passed; the swap is next

and of a load through Spark (alterflow.load.spark_load):

load_tasks_done   every Spark task wrote its files into the transaction's staging folder
load_files_moved  the files are recorded under the PREPARE transaction and moved into their tablets

and of a dual-writing load on either engine (alterflow.store.column_splice):

load_origin_written  an origin file is written; the shadow's file made from it is not yet

and of a data file's upload to a warehouse in object storage (alterflow.store.tablets):

object_uploading  the file's bytes are handed to its upload; the upload is not complete

and of a data file written to a warehouse on a disk (alterflow.store.tablets):

file_writing  the file's bytes are in its `.tmp`, not yet renamed to its final name

and of `alterflow migrate apply` (alterflow.migrate.apply):

migrate_statement_ran       a statement finished (its job too); its history row still says RUNNING
migrate_statement_recorded  a statement is recorded DONE; the next one has not started
repeatable_views_dropped    a repeatable file's views are dropped; its statements have not run
"""

from __future__ import annotations

import os
import signal
from collections import Counter

from alterflow.settings import crash_points_wanted

_reached: Counter[str] = Counter()  # times this process reached each wanted point
_RAISED = {"exit": SystemExit, "interrupt": KeyboardInterrupt}


def crash_point(name: str) -> None:
    wanted = crash_points_wanted()
    if not wanted:
        return
    for entry in wanted.split(","):
        point, _, nth = entry.partition("@")
        point, _, how = point.partition(":")
        if point != name:
            continue
        _reached[name] += 1
        if not nth or _reached[name] == int(nth):
            if how == "stop":
                os.kill(os.getpid(), signal.SIGSTOP)
                return
            if how:
                raise _RAISED[how](f"crash point {name}")
            _die()
        return


def _die() -> None:
    if os.getpgrp() == os.getpid():  # the leader of its own group: its children (Spark's JVM) die too
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)
