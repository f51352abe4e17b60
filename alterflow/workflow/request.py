"""What a user asks for: one ALTER statement on one table, with its properties."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from alterflow.sql.ast import AlterTable


def new_request_id() -> str:
    """A fresh idempotency key for a request made in this process."""
    return uuid.uuid4().hex


def property_text(value: object) -> str | None:
    """A property's value as a statement's PROPERTIES hold it: text, a number as written, a boolean
    as true/false; None for anything else (the caller refuses it in its own words)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    return None


@dataclass(frozen=True)
class AlterRequest:
    table: str
    statement: str  # the full ALTER TABLE statement
    properties: dict[str, str] = field(default_factory=dict)  # added to (and overriding) the statement's PROPERTIES
    request_id: str = field(default_factory=new_request_id)  # idempotency key: one job per request
    # Set when this request takes over an orphaned job (GC, the Schema changes page, RESUME through
    # Airflow): that job and no other; if it is over by then, the request does nothing.
    resume_job_id: int | None = None
    # The statement as parsed where the request was made, so the steps of this process plan it
    # without parsing its text again (`alter_steps.parse_alter`). It never leaves the process: the JSON,
    # a DAG run's conf and the catalog's job carry `statement`, parsed again where they arrive.
    parsed: AlterTable | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict:
        return {
            "table": self.table,
            "statement": self.statement,
            "properties": dict(self.properties),
            "request_id": self.request_id,
            "resume_job_id": self.resume_job_id,
        }

    def run_conf(self) -> dict:
        """The conf of the `alterflow_schema_change` DAG run that runs this request (the run's id is
        the request's)."""
        conf = {"table": self.table, "statement": self.statement, "properties": dict(self.properties)}
        if self.resume_job_id is not None:
            conf["resume_job_id"] = self.resume_job_id
        return conf

    @classmethod
    def from_json(cls, data: dict) -> AlterRequest:
        return cls(
            data["table"],
            data["statement"],
            dict(data.get("properties") or {}),
            data["request_id"],
            data.get("resume_job_id"),
        )
