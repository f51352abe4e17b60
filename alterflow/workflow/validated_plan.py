"""What `alter_steps.validate` answers: the plan of one ALTER, checked, in the form the later steps take.

A driver that runs the steps in other processes (the Airflow DAG's tasks, through XCom) passes it
as plain JSON: `to_json` at one end, `from_json` at the other."""

from __future__ import annotations

from dataclasses import dataclass

from alterflow.catalog.states import JobKind


@dataclass(frozen=True)
class ValidatedPlan:
    kind: JobKind  # LIGHT: `commit` is next; HEAVY: `start`
    from_version: int  # the version it was planned against: the later steps plan again against it
    to_version: int
    clauses: tuple[tuple[str, str, str], ...] = ()  # each clause's (text, verdict, reason)
    # Set when the request takes over the same ALTER's orphaned job (docs/heavyweight.md) instead of planning anew.
    job_id: int | None = None

    def to_json(self) -> dict:
        return {
            "kind": self.kind.value,
            "from_version": self.from_version,
            "to_version": self.to_version,
            "clauses": [list(clause) for clause in self.clauses],
            "job_id": self.job_id,
        }

    @classmethod
    def from_json(cls, data: dict) -> ValidatedPlan:
        job_id = data.get("job_id")
        return cls(
            JobKind(data["kind"]),
            int(data["from_version"]),
            int(data["to_version"]),
            tuple(tuple(clause) for clause in data.get("clauses") or ()),
            int(job_id) if job_id is not None else None,
        )
