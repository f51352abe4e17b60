"""The embedded runner: the steps of an ALTER in this process, in order."""

from __future__ import annotations

from alterflow.workflow import steps
from alterflow.workflow.request import AlterRequest
from catalog.catalog import AlterJob, Catalog


def run_alter(catalog: Catalog, request: AlterRequest) -> AlterJob:
    """Run an ALTER to its end. A request already run returns its job (idempotent retry)."""
    done = catalog.job_by_request(request.request_id)
    if done is not None:
        return done
    validated = steps.validate(catalog, request)
    if validated["kind"] != "LIGHT":
        heavy = "; ".join(f"{text}: {reason}" for text, verdict, reason in validated["clauses"] if verdict == "HEAVY")
        raise steps.HeavyChangeUnavailable(
            f"ALTER TABLE {request.table}: heavyweight change ({heavy or 'rewrite requested'}) needs the "
            "heavyweight executor, which this build does not have yet; nothing was changed"
        )
    committed = steps.commit(catalog, request, validated)
    return catalog.job_by_request(request.request_id) or _missing(committed)


def _missing(committed: dict) -> AlterJob:
    raise RuntimeError(f"job {committed['job_id']} was committed but cannot be read back")
