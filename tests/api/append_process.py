"""A user's plain Python process appending to an alterflow table (run by tests/api/test_append_processes.py).

    python -m tests.api.append_process TABLE START ROWS [--after-boundary] [--slow]

Appends ROWS rows (ids START.., `code` the id modulo 1000 as text) in batches of 100,000 as one
transaction through `alterflow.connect().table(TABLE).append(...)`. --after-boundary: first waits
until the table's running job has passed its boundary (RUNNING or later), so the rows are dual
written. --slow: one batch a second (a test kills it mid-write). Prints the AppendResult."""

from __future__ import annotations

import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import alterflow

BATCH = 100_000


def batches(start: int, rows: int, slow: bool):
    for first in range(start, start + rows, BATCH):
        ids = np.arange(first, min(first + BATCH, start + rows), dtype=np.int64)
        yield pa.table({"id": ids, "code": pc.cast(pa.array(ids % 1000), pa.string())})
        if slow:
            time.sleep(1)


def main(argv: list[str]) -> None:
    table, start, rows = argv[0], int(argv[1]), int(argv[2])
    with alterflow.connect() as af:
        t = af.table(table)
        if "--after-boundary" in argv:
            while not any(j.state in ("RUNNING", "VALIDATING", "READY_TO_SWAP", "FINISHED") for j in t.jobs()):
                time.sleep(0.02)
        print(t.append(batches(start, rows, "--slow" in argv), label=f"append {start}"), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
