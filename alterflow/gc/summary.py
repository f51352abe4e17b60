"""One line of text per garbage-collection step result (`alterflow.gc.gc_steps`' result dataclasses), for
`alterflow gc` and task logs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from alterflow.errors import escaped

if TYPE_CHECKING:  # pragma: no cover
    from alterflow.gc.gc_steps import Compaction, DeletedFiles, DroppedIndexes, GcStepResult, ResumedJobs, VersionsCollected


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _delete_files_text(result: DeletedFiles) -> str:
    text = f"{_plural(result.files_deleted, 'file')} that left their tables deleted"
    text += f", {_plural(len(result.orphan_files), 'unreferenced file')} deleted"
    if result.staging_dirs_deleted:
        text += f", {_plural(len(result.staging_dirs_deleted), 'staging folder')} deleted"
    if result.uploads_aborted:
        text += f", {_plural(len(result.uploads_aborted), 'incomplete upload')} aborted"
    if result.files_kept_for_retention:
        text += f", {_plural(result.files_kept_for_retention, 'file')} kept until the retention period has passed"
    if result.orphans_waiting:
        first = min(w.due for w in result.orphans_waiting).isoformat(sep=" ", timespec="seconds")
        text += (
            f", {_plural(len(result.orphans_waiting), 'unreferenced file')} kept until the orphan retention has passed (first at {first})"
        )
    for skipped in result.skipped:
        text += f"; skipped {escaped(skipped.path)}: {skipped.why}"
    return text


def _resumed_text(result: ResumedJobs) -> str:
    text = f"{_plural(len(result.jobs), 'orphaned job')} resumed"
    for resumed in result.jobs:
        job = resumed.job
        since = job.no_runner_since.isoformat(sep=" ", timespec="seconds")
        text += f"; job {job.job_id} on {job.table} (no runner since {since}): {resumed.outcome}"
    return text


def _dropped_text(result: DroppedIndexes) -> str:
    ids = ", ".join(str(i) for i in result.dropped_indexes)
    text = f"{_plural(len(result.dropped_indexes), 'index')} dropped" + (f" ({ids})" if ids else "")
    text = text.replace("indexs", "indexes")
    return text + f", {_plural(result.index_files_dropped, 'file')} of them dropped"


def _compaction_text(result: Compaction) -> str:
    text = (
        f"{_plural(result.tablets_compacted, 'tablet')} compacted "
        f"({_plural(result.files_replaced, 'file')} replaced, {_plural(result.rows_written, 'row')} written)"
    )
    for skipped in result.skipped_tables:
        text += f"; skipped table {skipped.table}: {skipped.reason}"
    for conflict in result.conflicts:
        text += f"; tablet {conflict.tablet_id} of {conflict.table} left for the next run: {conflict.reason}"
    return text


def _versions_text(result: VersionsCollected) -> str:
    text = f"{_plural(result.versions_deleted, 'schema version')} deleted"
    if result.tables:
        text += " (" + "; ".join(f"{t.table_name}: {', '.join(str(v) for v in t.versions)}" for t in result.tables) + ")"
    return text


def step_line(step: str, result: GcStepResult) -> str:
    if step == "abort_expired_loads":
        text = f"{_plural(result.expired_transaction_files, 'file')} of expired transactions dropped (deleted after the retention period)"
    elif step == "resume_orphaned_jobs":
        text = _resumed_text(result)
    elif step == "drop_origin_indexes":
        text = _dropped_text(result)
    elif step == "delete_files":
        text = _delete_files_text(result)
    elif step == "compact":
        text = _compaction_text(result)
    elif step == "collect_versions":
        text = _versions_text(result)
    else:
        raise ValueError(f"unknown garbage-collection step {step!r}")
    return f"{step}: {text}"
