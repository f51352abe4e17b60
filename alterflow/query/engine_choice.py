"""Which engine runs a query (docs/semantics.md, "Queries: two engines, Spark's answers"): `auto` (the default) runs it in this process
when the local engine reproduces every construct it uses and the tables it reads, views'
included, hold at most the conversion's threshold (`rewrite/engines.py`: LOCAL_AUTO_ROWS rows and
LOCAL_AUTO_BYTES of files); Spark runs the rest. `SET engine = local` forces the local engine
(refused over LOCAL_MAX_ROWS or LOCAL_MAX_BYTES, or for a construct it does not reproduce);
`SET engine = spark` forces Spark. EXPLAIN SELECT prints the choice and its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from alterflow.catalog.snapshot_reads import SnapshotReads
from alterflow.catalog.states import Engine
from alterflow.errors import AlterflowError, UserError, first_line
from alterflow.query.expression_core import NotLocal
from alterflow.query.local_engine import LocalPlan, plan_local
from alterflow.rewrite.engines import LOCAL_AUTO_BYTES, LOCAL_AUTO_ROWS, LOCAL_MAX_BYTES, LOCAL_MAX_ROWS


class LocalEngineRefused(UserError):
    """`engine` = `local` for a query the local engine cannot run."""


@dataclass(frozen=True)
class EngineChoice:
    engine: str  # "local" or "spark"
    reason: str
    plan: LocalPlan | None = None


def _size_text(rows: int, nbytes: int) -> str:
    return f"{rows} rows in {nbytes / (1 << 20):.1f} MiB of files"


def _planned(catalog: SnapshotReads, sql: str, names: tuple[str, ...]) -> LocalPlan:
    """`plan_local`, where a failure of the translation itself (a bug: the fuzzing test looks for
    them) hands the query to Spark untouched instead of failing a query Spark would answer."""
    try:
        return plan_local(catalog, sql, names)
    except (NotLocal, AlterflowError):
        raise
    except Exception as exc:
        raise NotLocal(f"the local engine could not translate it ({type(exc).__name__}: {first_line(exc)})") from exc


def choose_query_engine(catalog: SnapshotReads, sql: str, names: tuple[str, ...], requested: str) -> EngineChoice:
    if requested == Engine.SPARK:
        return EngineChoice("spark", "spark (engine = spark)")
    try:
        plan = _planned(catalog, sql, names)
    except NotLocal as exc:
        if requested == Engine.LOCAL:
            raise LocalEngineRefused(f"engine = local cannot run this query: {exc}; SET engine = auto lets Spark run it") from None
        return EngineChoice("spark", f"spark: {exc}, which runs on Spark only")
    size = _size_text(plan.rows, plan.nbytes)
    if requested == Engine.LOCAL:
        if plan.rows > LOCAL_MAX_ROWS or plan.nbytes > LOCAL_MAX_BYTES:
            raise LocalEngineRefused(
                f"engine = local reads at most {LOCAL_MAX_ROWS} rows and {LOCAL_MAX_BYTES >> 20} MiB of files, "
                f"the query reads {size}; SET engine = auto or spark"
            )
        return EngineChoice("local", f"local (engine = local): {size}", plan)
    limit = f"{LOCAL_AUTO_ROWS} rows and {LOCAL_AUTO_BYTES >> 20} MiB"
    if plan.rows <= LOCAL_AUTO_ROWS and plan.nbytes <= LOCAL_AUTO_BYTES:
        return EngineChoice("local", f"local: {size}, within {limit}", plan)
    return EngineChoice("spark", f"spark: {size}, over {limit}")
