"""What a user asks for: one ALTER statement on one table, with its properties."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass(frozen=True)
class AlterRequest:
    table: str
    statement: str  # the full ALTER TABLE statement
    properties: dict[str, str] = field(default_factory=dict)  # added to (and overriding) the statement's PROPERTIES
    request_id: str = field(default_factory=lambda: uuid.uuid4().hex)  # idempotency key: one job per request

    def to_json(self) -> dict:
        return {"table": self.table, "statement": self.statement, "properties": dict(self.properties), "request_id": self.request_id}

    @classmethod
    def from_json(cls, data: dict) -> "AlterRequest":
        return cls(data["table"], data["statement"], dict(data.get("properties") or {}), data["request_id"])
