"""The states the catalog records, one enum each. Members are `StrEnum`s whose values are what the
database stores, so a state read back as a plain string compares equal to its member.

- `JobState`: an alter job (docs/heavyweight.md). A lightweight job is FINISHED when it is recorded; a
  heavyweight one goes PENDING -> WAITING_TXN -> RUNNING -> VALIDATING -> (READY_TO_SWAP ->)
  FINISHED, or CANCELLED from any state before FINISHED.
- `JobKind`: LIGHT (metadata only) or HEAVY (a rewrite).
- `IndexState`: ACTIVE (the table's current index), SHADOW (a heavyweight job's new index),
  RETIRED (replaced by a swap, kept for the retention), DROPPED (collected by GC, or a cancelled
  job's shadow).
- `TransactionState`: PREPARE (files being written, invisible), COMMITTED (visible), ABORTED.
- `FileState`: LIVE, REPLACED (by a compaction), DELETED.
- `VersionState`: COMMITTED (is or was current), PENDING (a heavyweight job's shadow version).

And the two properties of an ALTER whose values are a fixed set (stored in the job's properties
JSON, `records.AlterProperties`):
- `OnCastError`: what a heavyweight change does with a value its cast cannot convert (docs/semantics.md, "SQL"):
  FAIL (the job is cancelled), NULL (the value becomes NULL), QUARANTINE (its row goes to
  the quarantine table, unconverted).
- `Engine`: what converts a heavyweight job's history: SPARK, LOCAL (Arrow in the runner's
  process), or AUTO (`alterflow.rewrite.engines` picks by size).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["JobState", "JobKind", "IndexState", "TransactionState", "FileState", "VersionState", "OnCastError", "Engine"]


class JobState(StrEnum):
    PENDING = "PENDING"
    WAITING_TXN = "WAITING_TXN"
    RUNNING = "RUNNING"
    VALIDATING = "VALIDATING"
    READY_TO_SWAP = "READY_TO_SWAP"
    FINISHED = "FINISHED"
    CANCELLED = "CANCELLED"


class JobKind(StrEnum):
    LIGHT = "LIGHT"
    HEAVY = "HEAVY"


class IndexState(StrEnum):
    ACTIVE = "ACTIVE"
    SHADOW = "SHADOW"
    RETIRED = "RETIRED"
    DROPPED = "DROPPED"


class TransactionState(StrEnum):
    PREPARE = "PREPARE"
    COMMITTED = "COMMITTED"
    ABORTED = "ABORTED"


class FileState(StrEnum):
    LIVE = "LIVE"
    REPLACED = "REPLACED"
    DELETED = "DELETED"


class VersionState(StrEnum):
    COMMITTED = "COMMITTED"
    PENDING = "PENDING"


class OnCastError(StrEnum):
    FAIL = "fail"
    NULL = "null"
    QUARANTINE = "quarantine"


class Engine(StrEnum):  # in this order in the planner's message: "must be auto, spark or local"
    AUTO = "auto"
    SPARK = "spark"
    LOCAL = "local"
