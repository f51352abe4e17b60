"""`alterflow migrate status`: every migration file with its state, and the drift between the
directory, the history and the catalog (docs/migrations.md):

- edited        an applied (or started) file whose text changed since (checksum)
- deleted       a recorded file that is no longer in the directory
- restored      a file back in the directory that `repair` had marked DELETED (until `repair`
                adopts it again)
- out_of_order  a pending file whose version is below an applied one (apply refuses it, unless
                `out_of_order = true` in `[tool.alterflow.migrate]` or `--out-of-order`)
- future        a version in the history above every file in the directory (an older checkout):
                a warning, or blocking with `future = "error"`
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
from alterflow.migrate.config import MigrateConfig, load_migrate_config
from alterflow.migrate.migration_files import MigrationFile, RepeatableFile, read_migrations, version_key
from alterflow.migrate.repeatable import RepeatableStatus, repeatable_status
from alterflow.migrate.sum_file import verify_sum

PENDING = "PENDING"
BELOW_BASELINE = "BELOW_BASELINE"
FUTURE = "FUTURE"  # a recorded version above every file in the directory (status only)


@dataclass(frozen=True)
class FileState:
    version: str
    description: str
    script: str
    state: str  # PENDING, APPLYING, APPLIED, FAILED, BASELINE (the baseline's own row), BELOW_BASELINE, DELETED, FUTURE
    checksum_ok: bool
    installed_by: str | None = None
    installed_at: str | None = None
    error: str = ""
    statements: int = 0  # statements in the file
    statements_done: int = 0
    kind: str = "VERSIONED"  # or REPEATABLE (an R__ file: no version)
    checksum: str | None = None  # a repeatable file's checksum on disk

    def as_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Drift:
    kind: str  # edited, deleted, restored, out_of_order, future, outside
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
    config: MigrateConfig = field(default_factory=MigrateConfig)
    out_of_order: dict[str, str] = field(default_factory=dict)  # pending script -> the applied version it is below
    repeatables: list[RepeatableStatus] = field(default_factory=list)  # R__ files, in description order

    @property
    def pending_repeatables(self) -> list[RepeatableFile]:
        """Repeatable files an apply runs after the versioned ones: never applied, or changed since."""
        return [r.file for r in self.repeatables if r.pending]

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
            if self.deleted_row(file.version) is not None:
                continue  # restored after `repair` marked it DELETED: blocking drift, never run again
            recorded = self.recorded(file.version)
            if recorded is None or recorded.state != APPLIED:
                result.append(file)
        return result

    def deleted_row(self, version: str) -> RecordedMigration | None:
        """The history row `repair` marked DELETED of this version, if any."""
        key = version_key(version)
        return next((m for m in self.history if m.state == DELETED and version_key(m.version) == key), None)

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
        """Drift that stops an apply until `repair` (edited, deleted, restored) or a rename
        (out_of_order, unless the config allows it); future too when the config says "error"."""
        kinds = {"edited", "deleted", "restored"}
        if not self.config.out_of_order:
            kinds.add("out_of_order")
        if self.config.future == "error":
            kinds.add("future")
        return [d for d in self.drift if d.kind in kinds]

    def warnings(self) -> list[Drift]:
        """Drift that lint, status and apply warn of and go past: future versions by default."""
        return [d for d in self.drift if d.kind == "future" and self.config.future == "warning"]

    def as_json(self) -> dict:
        return {"migrations": [s.as_json() for s in self.states], "drift": [d.as_json() for d in self.drift], "baseline": self.baseline}


def _time(value) -> str | None:
    return value.isoformat(sep=" ", timespec="seconds") if value is not None else None


def migration_status(catalog: Catalog, directory: pathlib.Path, config: MigrateConfig | None = None) -> MigrationStatus:
    """Every migration file with its state (the baseline's row first, the files of the directory,
    then recorded files no longer there), and the drift found. `config`: the project's
    `[tool.alterflow.migrate]` (read from its pyproject.toml when not given)."""
    verify_sum(directory)  # a directory that does not match its alterflow.sum: one line, before its files are read
    directory_files = read_migrations(directory)
    files = directory_files.versioned
    if config is None:
        config = load_migrate_config(directory)
    history = MigrationHistory(catalog)
    recorded = history.migrations()
    status = MigrationStatus(files, recorded, config=config)
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
        deleted = status.deleted_row(file.version) if row is None else None
        if deleted is not None:
            _add_restored(status, file, deleted)
        elif row is None:
            _add_unrecorded(status, file, highest_applied)
        else:
            _add_recorded(status, file, row)
    on_disk = {f.key for f in files}
    highest_file = max(on_disk, default=None)
    for row in sorted(recorded, key=lambda m: version_key(m.version)):  # in version order
        if row.state == DELETED:
            if version_key(row.version) not in on_disk:
                status.states.append(
                    FileState(row.version, row.description, row.script, DELETED, True, row.installed_by, _time(row.finished_at))
                )
        elif row.state != BASELINE and version_key(row.version) not in on_disk:
            if highest_file is None or version_key(row.version) > highest_file:
                _add_future(status, row)
            else:
                _add_deleted(status, row)
    status.drift.extend(_outside(history, recorded))
    status.repeatables = repeatable_status(catalog, directory_files.repeatable)
    status.states.extend(_repeatable_state(r) for r in status.repeatables)
    return status


def _repeatable_state(status: RepeatableStatus) -> FileState:
    """A repeatable file's line: its state, and whether its checksum is the one last applied."""
    last, file = status.last, status.file
    when = _time(last.finished_at or last.started_at) if last is not None else None
    return FileState(
        "",
        file.description,
        file.script,
        status.state,
        last is None or last.checksum == file.checksum,
        last.installed_by if last is not None else None,
        when,
        last.error if last is not None else "",
        len(file.statements),
        len(file.statements) if status.state == "APPLIED" else 0,
        "REPEATABLE",
        file.checksum,
    )


def _add_unrecorded(status: MigrationStatus, file: MigrationFile, highest_applied: tuple[int, ...] | None) -> None:
    """A file the history has no row of: PENDING (out of order below an applied version), or
    BELOW_BASELINE."""
    below = status.baseline is not None and file.key <= version_key(status.baseline)
    state = BELOW_BASELINE if below else PENDING
    status.states.append(FileState(file.version, file.description, file.script, state, True, statements=len(file.statements)))
    if state == PENDING and highest_applied is not None and file.key < highest_applied:
        above = next(m.version for m in status.history if m.state in (APPLIED, BASELINE) and version_key(m.version) == highest_applied)
        status.out_of_order[file.script] = above
        if status.config.out_of_order:
            detail = f"{file.script} is pending below applied V{above}; apply runs it out of order (out_of_order is on)"
        else:
            detail = (
                f"{file.script} is pending but a higher version is already applied; apply refuses it "
                "(give it a version above the applied ones, or allow out_of_order in [tool.alterflow.migrate])"
            )
        status.drift.append(Drift("out_of_order", detail, script=file.script))


def _add_restored(status: MigrationStatus, file: MigrationFile, row: RecordedMigration) -> None:
    """A file back in the directory that `repair` marked DELETED: blocking until `repair` adopts
    it again (and, when its text is not the one recorded, edited too)."""
    ok = row.checksum == file.checksum
    done = sum(1 for s in row.statements if s.state == DONE)
    status.states.append(
        FileState(
            file.version,
            file.description,
            file.script,
            DELETED,
            ok,
            row.installed_by,
            _time(row.finished_at or row.started_at),
            row.error,
            len(file.statements),
            done,
        )
    )
    status.drift.append(
        Drift(
            "restored",
            f"{file.script} is back in the directory but DELETED in the history; review it, then `alterflow migrate repair` adopts it again",
            script=file.script,
        )
    )
    if not ok:
        status.drift.append(
            Drift(
                "edited",
                f"{file.script} was edited since it was applied (checksum); review the change, then `alterflow migrate repair`",
                script=file.script,
            )
        )


def _add_future(status: MigrationStatus, row: RecordedMigration) -> None:
    """A recorded version above every file in the directory: applied by a newer checkout."""
    status.states.append(
        FileState(
            row.version,
            row.description,
            row.script,
            FUTURE,
            True,
            row.installed_by,
            _time(row.finished_at or row.started_at),
            row.error,
            statements_done=sum(1 for s in row.statements if s.state == DONE),
        )
    )
    if status.config.future == "error":
        tail = 'apply refuses (future = "error" in [tool.alterflow.migrate]); check out the newer migrations'
    else:
        tail = 'apply goes on with the pending files (future = "warning")'
    status.drift.append(
        Drift(
            "future",
            f"{row.script} ({row.state}) is in the history above every file in the directory (an older checkout?); {tail}",
            script=row.script,
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
