"""EXPLAIN [ANALYZE] ALTER TABLE: the plan of an ALTER, changing nothing (docs/semantics.md, "SQL").

EXPLAIN gives one row per clause (`Clause, Kind, Reason, Rows, Bytes, Engine`) and a
`(statement)` row. EXPLAIN ANALYZE adds `FailedCasts, Samples, EstSeconds, Validation`: for a
heavyweight statement it reads and converts what the rewrite would read, on the engine the rewrite
would use (`alterflow.rewrite.cast_analysis`), evaluates every check the rewrite's validation will
run (`Validation`: those today's data would fail, with counts and samples), and estimates the rewrite's seconds from the conversion
throughput this catalog measured on earlier jobs of that engine (or, before the first, from the
analysis's own scan). Used by the session (SQL) and by the DAG's dry run.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from collections.abc import Callable

from alterflow import sql as ast
from alterflow.catalog.catalog import Catalog
from alterflow.catalog.heavy_jobs import HeavyJobs
from alterflow.catalog.states import Engine
from alterflow.planner import Verdict
from alterflow.results import ResultSet
from alterflow.rewrite.cast_analysis import SAMPLES
from alterflow.rewrite.validation_checks import CheckKind
from alterflow.workflow import alter_steps

COLUMNS = ("Clause", "Kind", "Reason", "Rows", "Bytes", "Engine")
ANALYZE_COLUMNS = (*COLUMNS, "FailedCasts", "Samples", "EstSeconds", "Validation")


def estimate_seconds(catalog: Catalog, analysis) -> float:
    """Seconds a rewrite of the analysed rows would take on the analysis's engine."""
    throughput = HeavyJobs(catalog).conversion_throughput(analysis.engine)
    if throughput is None and analysis.rows and analysis.seconds > 0:
        throughput = analysis.rows / analysis.seconds
    return round(analysis.rows / throughput, 1) if throughput else 0.0


def explain_alter(catalog: Catalog, warehouse: pathlib.Path, stmt: ast.AlterTable, spark: Callable[[], object]) -> ResultSet:
    from alterflow.planner import plan_alter
    from alterflow.rewrite.engines import choose_engine, engine_reason

    context = alter_steps.table_context(catalog, stmt.table, warehouse=warehouse)
    plan = plan_alter(context, dataclasses.replace(stmt, explain=False, analyze=False))
    rows_total, bytes_total = catalog.table_stats(catalog.table(stmt.table).id)
    heavy = plan.kind is Verdict.HEAVY
    engine = engine_reason(plan.properties.engine, rows_total, bytes_total) if heavy else ""
    rows = [
        [
            c.text,
            c.verdict.value,
            c.reason,
            rows_total if heavy and c.verdict is Verdict.HEAVY else 0,
            bytes_total if heavy and c.verdict is Verdict.HEAVY else 0,
            engine if c.verdict is Verdict.HEAVY else "",
        ]
        for c in plan.clauses
    ]
    summary = plan.rejection or (
        f"rewrite of {rows_total} rows into a shadow index under version {plan.new.version}"
        if heavy
        else f"metadata only: version {plan.new.version}, no file touched"
    )
    statement = [
        "(statement)",
        plan.kind.value,
        summary,
        rows_total if heavy else 0,
        bytes_total if heavy else 0,
        engine,
    ]
    if not stmt.analyze:
        return ResultSet(COLUMNS, tuple(tuple(r) for r in [*rows, statement]))

    analysis = None
    if heavy:
        from alterflow.rewrite.cast_analysis import analyze_local, analyze_spark

        snapshot = catalog.snapshot(stmt.table)
        on_cast_error = plan.properties.on_cast_error
        if choose_engine(plan.properties.engine, rows_total, bytes_total) == Engine.LOCAL:
            analysis = analyze_local(warehouse, snapshot, plan.old, plan.new, on_cast_error)
        else:
            analysis = analyze_spark(spark(), warehouse, snapshot, plan.old, plan.new, on_cast_error)
    _add_analysis(catalog, stmt, plan, analysis, rows, statement)
    return ResultSet(ANALYZE_COLUMNS, tuple(tuple(r) for r in [*rows, statement]))


def _add_analysis(catalog: Catalog, stmt: ast.AlterTable, plan, analysis, rows: list[list], statement: list) -> None:
    """`FailedCasts, Samples, EstSeconds, Validation` appended to each clause's row and the statement's."""
    seconds = estimate_seconds(catalog, analysis) if analysis else 0.0
    failures = analysis.failures if analysis else {}
    every = [s.as_json() for f in failures.values() for s in f.samples][:SAMPLES]
    total = sum(f.count for f in failures.values())
    failing = analysis.failing() if analysis else []
    for clause, plan_clause, row in zip(stmt.clauses, plan.clauses, rows):
        if plan_clause.verdict is not Verdict.HEAVY:
            row += [0, "[]", 0.0, "[]"]
        elif isinstance(clause, ast.RevertToVersion):  # a revert converts every column it changes
            row += [total, json.dumps(every), seconds, json.dumps([c.as_json() for c in failing])]
        else:
            found = failures.get(plan_clause.column_id)
            samples = [s.as_json() for s in found.samples] if found else []
            # the clause's own column's checks (NOT NULL), and its own failed casts when it has some
            own = [c.as_json() for c in failing if plan_clause.column_id in c.check.column_ids]
            own += [
                {**c.as_json(), "count": found.count, "samples": samples}
                for c in failing
                if c.check.kind is CheckKind.FAILED_CASTS and found and found.count
            ]
            row += [found.count if found else 0, json.dumps(samples), seconds, json.dumps(own)]
    statement += [total, json.dumps(every), seconds, json.dumps([c.as_json() for c in failing])]


def analyze_job(catalog: Catalog, warehouse: pathlib.Path, job_id: int) -> dict:
    """EXPLAIN ANALYZE of an unfinished heavyweight job's conversion (its origin version to the
    version it creates) over the table's rows now, on the local engine: the Schema changes page's
    Analyze. A table over the local engine's automatic limit is refused (the api-server starts no
    Spark): the DAG's dry run analyses those."""
    from alterflow.catalog.states import JobKind
    from alterflow.errors import UserError
    from alterflow.rewrite.cast_analysis import analyze_local
    from alterflow.rewrite.engines import choose_engine

    job = HeavyJobs(catalog).job(job_id)
    if job.kind != JobKind.HEAVY or job.finished_at is not None:
        raise UserError(f"job {job_id} is {job.state}: only an unfinished heavyweight job can be analysed")
    rows, nbytes = catalog.table_stats(job.table_id)
    if choose_engine(Engine.AUTO, rows, nbytes) != Engine.LOCAL:
        raise UserError(
            f"job {job_id}: {job.table_name} is too big to analyse here ({rows} rows); run the ALTER through the "
            "alterflow_schema_change DAG with dry_run"
        )
    old = catalog.schema_version(job.table_id, job.from_version)
    new = catalog.schema_version(job.table_id, job.to_version)
    analysis = analyze_local(warehouse, catalog.snapshot_by_id(job.table_id), old, new, job.properties.on_cast_error)
    return {
        "job_id": job.id,
        "table": job.table_name,
        "rows": analysis.rows,
        "failed_casts": sum(f.count for f in analysis.failures.values()),
        "columns": {
            new.column_by_id(cid).name: {"failed_casts": f.count, "samples": [s.as_json() for s in f.samples]}
            for cid, f in analysis.failures.items()
        },
        "est_seconds": estimate_seconds(catalog, analysis),
        "validation": [c.as_json() for c in analysis.failing()],  # the checks of its validation today's rows would fail
    }
