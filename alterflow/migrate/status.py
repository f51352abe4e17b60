"""`alterflow migrate status`: every migration file with its state, and the drift between the
directory, the history and the catalog (SPEC §10):

- edited        an applied (or started) file whose text changed since (checksum)
- deleted       a recorded file that is no longer in the directory
- out_of_order  a pending file whose version is below an applied one (apply refuses it)
- outside       a schema version made since migrations began that no migration statement made
                (an ALTER typed at a prompt): reported, never blocking

Reading only; nothing changes.
"""

from __future__ import annotations

import dataclasses
import pathlib
from dataclasses import dataclass, field

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.migration_history import APPLIED, BASELINE, DELETED, DONE, MigrationHistory, RecordedMigration
from alterflow.migrate.files import MigrationFile, read_directory, version_key
from alterflow.migrate.sum_file import verify_sum

PENDING = "PENDING"
BELOW_BASELINE = "BELOW_BASELINE"


@dataclass(frozen=True)
class FileState:
    version: str
    description: str
    script: str
    state: str  # PENDING, APPLYING, APPLIED, FAILED, BASELINE (the baseline's own row), BELOW_BASELINE
    checksum_ok: bool
    installed_by: str | None = None
    installed_at: str | None = None
    error: str = ""
    statements: int = 0  # statements in the file
    statements_done: int = 0

    def as_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Drift:
    kind: str  # edited, deleted, out_of_order, outside
    detail: str
    script: str | None = None
    table: str | None = None
    version: int | None = None  # outside: the schema version
    statement: str | None = None  # outside: the statement that made it
    time: str | None = None

    def as_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class MigrationStatus:
    files: list[MigrationFile]
    history: list[RecordedMigration]
    states: list[FileState] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)
    baseline: str | None = None

    def recorded(self, version: str) -> RecordedMigration | None:
        key = version_key(version)
        return next((m for m in self.history if m.state not in (BASELINE, DELETED) and version_key(m.version) == key), None)

    @property
    def pending(self) -> list[MigrationFile]:
        """Files an apply runs, in order: not APPLIED, above the baseline (APPLYING and FAILED ones
        included: an apply continues them; out-of-order ones too: apply refuses them)."""
        result = []
        for file in self.files:
            if self.baseline is not None and file.key <= version_key(self.baseline):
                continue
            recorded = self.recorded(file.version)
            if recorded is None or recorded.state != APPLIED:
                result.append(file)
        return result

    @property
    def done_statements(self) -> frozenset[tuple[str, int]]:
        """(version, position) of every statement recorded DONE, of the files on disk."""
        done = set()
        for file in self.files:
            recorded = self.recorded(file.version)
            if recorded is not None:
                done.update((file.version, s.position) for s in recorded.statements if s.state == DONE)
        return frozenset(done)

    def blocking(self) -> list[Drift]:
        """Drift that stops an apply until `repair` (edited, deleted) or a rename (out_of_order)."""
        return [d for d in self.drift if d.kind in ("edited", "deleted", "out_of_order")]

    def as_json(self) -> dict:
        return {"migrations": [s.as_json() for s in self.states], "drift": [d.as_json() for d in self.drift], "baseline": self.baseline}


def _time(value) -> str | None:
    return value.isoformat(sep=" ", timespec="seconds") if value is not None else None


def migration_status(catalog: Catalog, directory: pathlib.Path) -> MigrationStatus:
    """Every migration file with its state (the baseline's row first, the files of the directory,
    then recorded files no longer there), and the drift found."""
    verify_sum(directory)  # a directory that does not match its alterflow.sum: one line, before its files are read
    files = read_directory(directory)
    history = MigrationHistory(catalog)
    recorded = history.migrations()
    status = MigrationStatus(files, recorded)
    baseline = next((m for m in recorded if m.state == BASELINE), None)
    status.baseline = baseline.version if baseline else None
    highest_applied = max((version_key(m.version) for m in recorded if m.state in (APPLIED, BASELINE)), default=None)
    if baseline is not None:
        status.states.append(
            FileState(
                baseline.version, baseline.description, baseline.script, BASELINE, True, baseline.installed_by, _time(baseline.started_at)
            )
        )
    for file in files:
        row = status.recorded(file.version)
        if row is None:
            _add_unrecorded(status, file, highest_applied)
        else:
            _add_recorded(status, file, row)
    on_disk = {f.key for f in files}
    for row in recorded:
        if row.state == DELETED:
            status.states.append(
                FileState(row.version, row.description, row.script, DELETED, True, row.installed_by, _time(row.finished_at))
            )
        elif row.state != BASELINE and version_key(row.version) not in on_disk:
            _add_deleted(status, row)
    status.drift.extend(_outside(history, recorded))
    return status


def _add_unrecorded(status: MigrationStatus, file: MigrationFile, highest_applied: tuple[int, ...] | None) -> None:
    """A file the history has no row of: PENDING (out of order below an applied version), or
    BELOW_BASELINE."""
    below = status.baseline is not None and file.key <= version_key(status.baseline)
    state = BELOW_BASELINE if below else PENDING
    status.states.append(FileState(file.version, file.description, file.script, state, True, statements=len(file.statements)))
    if state == PENDING and highest_applied is not None and file.key < highest_applied:
        status.drift.append(
            Drift(
                "out_of_order",
                f"{file.script} is pending but a higher version is already applied; apply refuses it (give it a version above the applied ones)",
                script=file.script,
            )
        )


def _add_recorded(status: MigrationStatus, file: MigrationFile, row: RecordedMigration) -> None:
    """A file with its history row: the row's state, and drift when the file was edited since."""
    ok = row.checksum == file.checksum
    done = sum(1 for s in row.statements if s.state == DONE)
    status.states.append(
        FileState(
            file.version,
            file.description,
            file.script,
            row.state,
            ok,
            row.installed_by,
            _time(row.finished_at or row.started_at),
            row.error,
            len(file.statements),
            done,
        )
    )
    if not ok:
        status.drift.append(
            Drift(
                "edited",
                f"{file.script} was edited since it was {row.state.lower()} (checksum); review the change, then `alterflow migrate repair`",
                script=file.script,
            )
        )


def _add_deleted(status: MigrationStatus, row: RecordedMigration) -> None:
    """A recorded file that is no longer in the directory (and not marked DELETED): drift."""
    status.states.append(
        FileState(
            row.version,
            row.description,
            row.script,
            row.state,
            False,
            row.installed_by,
            _time(row.finished_at or row.started_at),
            row.error,
        )
    )
    status.drift.append(
        Drift(
            "deleted",
            f"{row.script} is {row.state} in the history but no longer in the directory; restore it, or `alterflow migrate repair`",
            script=row.script,
        )
    )


def _outside(history: MigrationHistory, recorded: list[RecordedMigration]) -> list[Drift]:
    """Schema versions made since the first history record that no migration statement made."""
    if not recorded:
        return []
    since = min(m.started_at for m in recorded)
    made = {
        (s.table_id, s.schema_version) for m in recorded for s in m.statements if s.table_id is not None and s.schema_version is not None
    }
    for m in recorded:  # a heavy statement still running: its job's version is the migration's
        for s in m.statements:
            if s.state != DONE:
                job = history.job_of_request(s.request_id)
                if job is not None:
                    made.add((job[1], job[3]))
    found = []
    for version in history.schema_versions_since(since):
        if (version.table_id, version.version) in made:
            continue
        found.append(
            Drift(
                "outside",
                f"{version.table_name} version {version.version} was made outside migrations: {' '.join(version.statement.split())[:200]}",
                table=version.table_name,
                version=version.version,
                statement=version.statement,
                time=_time(version.created_at),
            )
        )
    return found
