"""What leases cost (docs/heavyweight.md: runner and load leases).

- **Load latency**: loads of 1,000 rows through `load_table` with the load lease (the lease
  columns, the renewal thread, the expiry check at commit) against the same loads without a lease
  (`lease_s=None`: only the timeout bounds the transaction), interleaved A/B in one process.
- **Light ALTER latency** (`ADD COLUMN ... DEFAULT`, the embedded path) while a heavyweight job on
  another table has its runner lease renewed by this process, against the same ALTERs with no
  lease held; blocks of ten ALTERs alternate A/B. Once at the default lease (30 s, renewed every
  5 s), the goal's case; once as a stress case with a 1 s lease renewed every 0.17 s (30 times the
  default rate), where the renewals' writes really compete with the ALTERs for the SQLite catalog
  (shown, not judged).

The goal: leases cost less than 5% of either p50 at the defaults. No Spark starts.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from alterflow.settings import DEFAULT_LEASE_S, RENEWALS_PER_LEASE
from bench import ResultRow, fresh_home, markdown_table, median, ms, settings_for, verdict

GOAL_RATIO = 1.05
FULL = {"loads": 120, "load_rows": 1_000, "alters": 200, "block": 10}
QUICK = {"loads": 10, "load_rows": 200, "alters": 20, "block": 5}


def _batch(start: int, n: int) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table({"id": ids, "code": pa.array([str(i % 997) for i in range(n)]), "amount": ids * 3})


def load_cost(sizes: dict, quick: bool) -> ResultRow:
    from alterflow.engine.session import Session
    from alterflow.load.local_load import load_table
    from alterflow.load.rows import rows_from_arrow

    with fresh_home("lease-load") as home:
        session = Session(settings_for(home))
        list(
            session.run(
                "CREATE TABLE t (id BIGINT NOT NULL, code STRING, amount BIGINT, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 4"
            )
        )
        info, version = session.catalog.current_schema("t")
        batches = [
            rows_from_arrow(version, info.name, _batch(i * sizes["load_rows"], sizes["load_rows"])) for i in range(2 * sizes["loads"] + 4)
        ]
        with_lease, without = [], []
        for i, data in enumerate(batches):
            lease_s = 30.0 if i % 2 == 0 else None
            began = time.perf_counter()
            load_table(session.catalog, session.warehouse, info, version, data, "bench", 3600, lease_s)
            elapsed = time.perf_counter() - began
            if i >= 4:  # the first two of each: warm-up
                (with_lease if lease_s else without).append(elapsed)
    ratio = median(with_lease) / median(without)
    print(
        f"  load of {sizes['load_rows']} rows: p50 {ms(median(with_lease))} with a lease, {ms(median(without))} without; ratio {ratio:.3f}"
    )
    return ResultRow(
        "lease cost",
        f"load of {sizes['load_rows']:,} rows ({len(with_lease)} each, interleaved)",
        f"p50 {ms(median(with_lease))} with the load lease",
        baseline=f"no lease: p50 {ms(median(without))}",
        ratio=f"{ratio:.3f} (lease/no lease p50)",
        goal=f"≤ {GOAL_RATIO}×",
        met=verdict(ratio <= GOAL_RATIO, quick),
        summary="lease cost of a load",
    )


def light_alter_cost(sizes: dict, quick: bool, lease_s: float) -> ResultRow:
    from alterflow.engine.session import Session
    from alterflow.held_leases import JobLease
    from alterflow.workflow import alter_steps, heavy_steps
    from alterflow.workflow.request import AlterRequest

    with fresh_home("lease-alter") as home:
        session = Session(settings_for(home))
        list(session.run("CREATE TABLE a (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id))"))
        list(session.run("CREATE TABLE b (id BIGINT NOT NULL, v STRING, PRIMARY KEY (id))"))
        list(session.run("INSERT INTO b VALUES (1, '1')"))
        request = AlterRequest("b", "ALTER TABLE b MODIFY COLUMN v INT")
        job_id = heavy_steps.start(session.catalog, request, alter_steps.validate(session.catalog, request)).job_id
        counter = iter(range(1, 10**6))

        def alter() -> float:
            n = next(counter)
            began = time.perf_counter()
            list(session.run(f"ALTER TABLE a ADD COLUMN c{n} INT DEFAULT {n}"))
            return time.perf_counter() - began

        for _ in range(5):
            alter()  # warm-up
        leased, plain = [], []
        for block in range(2 * sizes["alters"] // sizes["block"]):
            if block % 2 == 0:
                with JobLease(session.catalog, job_id, lease_s=lease_s):
                    leased += [alter() for _ in range(sizes["block"])]
            else:
                plain += [alter() for _ in range(sizes["block"])]
    ratio = median(leased) / median(plain)
    every = lease_s / RENEWALS_PER_LEASE
    judged = lease_s == DEFAULT_LEASE_S
    print(
        f"  light ALTER (lease renewed every {every:.2f} s): p50 {ms(median(leased))} beside a renewing lease, "
        f"{ms(median(plain))} without; ratio {ratio:.3f}"
    )
    return ResultRow(
        "lease cost",
        f"light ALTER beside a job lease renewed every {every:.2g} s ({len(leased)} each)",
        f"p50 {ms(median(leased))}",
        baseline=f"no lease held: p50 {ms(median(plain))}",
        ratio=f"{ratio:.3f} (lease/no lease p50)",
        goal=f"≤ {GOAL_RATIO}×" if judged else "— (stress: 30× the default renewal rate)",
        met=verdict(ratio <= GOAL_RATIO, quick) if judged else "—",
        summary=f"lease cost, job lease renewed every {every:.2g} s",
    )


def run(quick: bool = False) -> list[ResultRow]:
    sizes = QUICK if quick else FULL
    return [
        load_cost(sizes, quick),
        light_alter_cost(sizes, quick, DEFAULT_LEASE_S),
        light_alter_cost(sizes, quick, 1.0),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test); no goal is judged")
    print(markdown_table(run(parser.parse_args().quick)))
