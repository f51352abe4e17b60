"""`migrations/alterflow.sum`: the migrations directory's integrity file, after Atlas's `atlas.sum`.

    <sha256 of the lines below, hex>
    <sha256 of the file's bytes, hex>  V1__orders.sql
    <sha256 of the file's bytes, hex>  V2__region.sql

Line 1 is the hash of the whole; each line after it is one `.sql` file of the directory (every
one, hidden files aside, whatever its name) in `sha256sum`'s format, ordered by name with numbers
compared as numbers. Each file's hash is of its raw bytes, as they are on disk (a byte-order mark
and `\\r\\n` included): the sum vouches for the bytes, whatever reading them makes of them.

Two branches that each add a file both change line 1, so git cannot merge them silently: the second
merge conflicts in this file, not in production. After resolving it (one file gets a higher
version), `alterflow migrate hash` writes the file again.

`verify_sum` is called wherever the directory is read for the catalog (`migration_status`: status,
lint, apply and its dry run, baseline, repair, diff, the Airflow tasks): a directory that does not
match its sum file is refused in one line naming the files added, removed and edited. A directory
without the file is not checked (a team adopting migrations starts there); `migrate hash` creates
it, and `migrate new` and `migrate diff` create it in a directory with no migration yet and keep it
current wherever it exists.
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import os
import pathlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from alterflow.errors import shown
from alterflow.migrate.migration_files import MAX_FILE_BYTES, MigrationFileError

SUM_FILE = "alterflow.sum"
MAX_SUM_BYTES = 4 << 20  # a line per migration file: far more files than any directory holds
LISTED = 3  # names listed per kind of difference in the one line; the rest are counted
FIX = "review the changes, then run `alterflow migrate hash`"

_HASH = re.compile(r"[0-9a-f]{64}")
_FILE_LINE = re.compile(r"(?P<digest>[0-9a-f]{64})  (?P<script>.+)")
_CONFLICT = re.compile(r"^(<{7}|={7}|>{7}|\|{7})( |$)")


class SumMismatch(MigrationFileError):
    """The directory does not match its alterflow.sum (or that file is unreadable); the line names
    the files and the fix. Nothing changed."""


class SumState(enum.Enum):
    CHECKED = "checked"  # the directory matches its sum file
    MISSING = "missing"  # no sum file: the directory is not checked


@dataclass(frozen=True)
class FileHash:
    script: str  # the file name, as in the directory
    digest: str  # sha256 of its bytes, hex

    @property
    def line(self) -> str:
        return f"{self.digest}  {self.script}"


@dataclass(frozen=True)
class DirectorySum:
    """What an alterflow.sum holds: the total (line 1) and one hash per file."""

    total: str
    files: tuple[FileHash, ...]

    @property
    def text(self) -> str:
        return "".join(f"{line}\n" for line in (self.total, *(f.line for f in self.files)))

    def digests(self) -> dict[str, str]:
        return {f.script: f.digest for f in self.files}


@dataclass(frozen=True)
class SumDifference:
    """How the directory differs from its sum file, by file name."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.edited)

    def described(self) -> str:
        """`added V7__a.sql; edited V3__b.sql, V4__c.sql and 2 more`."""
        parts = []
        for kind, names in (("added", self.added), ("removed", self.removed), ("edited", self.edited)):
            if names:
                listed = ", ".join(shown(n, 80, quote="") for n in names[:LISTED])
                more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""
                parts.append(f"{kind} {listed}{more}")
        return "; ".join(parts)


def sum_path(directory: pathlib.Path) -> pathlib.Path:
    return directory / SUM_FILE


def _name_key(name: str) -> tuple:
    """Names in order with their numbers compared as numbers: `V2__x.sql` before `V10__x.sql`."""
    return tuple(int(part) if i % 2 else part for i, part in enumerate(re.split(r"([0-9]+)", name))), name


def _sql_files(directory: pathlib.Path) -> list[pathlib.Path]:
    """Every `.sql` file of the directory that `read_directory` looks at (hidden files aside)."""
    if not directory.exists():
        raise MigrationFileError(f"migrations directory {shown(str(directory), 200)} does not exist (--dir or ALTERFLOW_MIGRATIONS)")
    if not directory.is_dir():
        raise MigrationFileError(f"migrations directory {shown(str(directory), 200)} is not a directory")
    with os.scandir(directory) as entries:  # one system call for the names and kinds
        found = [directory / e.name for e in entries if not e.name.startswith(".") and e.name.lower().endswith(".sql") and e.is_file()]
    return sorted(found, key=lambda p: _name_key(p.name))


def _total(files: tuple[FileHash, ...]) -> str:
    """sha256 of the file lines as written (`tail -n +2 alterflow.sum | sha256sum`)."""
    return hashlib.sha256("".join(f"{f.line}\n" for f in files).encode("utf-8")).hexdigest()


def _file_hash(path: pathlib.Path) -> FileHash:
    if "\n" in path.name or "\r" in path.name:
        raise MigrationFileError(f"{shown(path.name, 120)}: a migration file's name cannot hold a line break; rename it")
    with path.open("rb") as file:
        data = file.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise MigrationFileError(f"{shown(path.name, 120)} is over {MAX_FILE_BYTES} bytes; a migration file is SQL text")
    return FileHash(path.name, hashlib.sha256(data).hexdigest())


def directory_sum(directory: pathlib.Path) -> DirectorySum:
    """The sum of the directory as it is now."""
    files = tuple(_file_hash(p) for p in _sql_files(directory))
    return DirectorySum(_total(files), files)


def read_sum(directory: pathlib.Path) -> DirectorySum | None:
    """The directory's sum file, or None when it has none. One line when it cannot be read: not
    UTF-8, a line that is not `<sha256>  <file>`, a file listed twice, git's conflict markers."""
    path = sum_path(directory)
    where = shown(str(path), 200, quote="")
    if not path.is_file():
        if path.exists():
            raise SumMismatch(f"{where} is not a file; remove it, then run `alterflow migrate hash`")
        return None
    if path.stat().st_size > MAX_SUM_BYTES:
        raise SumMismatch(f"{where} is over {MAX_SUM_BYTES} bytes: not an integrity file; run `alterflow migrate hash`")
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise SumMismatch(f"{where} is not UTF-8 text; run `alterflow migrate hash` to write it again") from None
    conflict = next((n for n, line in enumerate(lines, 1) if _CONFLICT.match(line)), None)
    if conflict is not None:
        raise SumMismatch(
            f"{where} line {conflict} is a git merge conflict marker: two branches added or changed migrations; "
            "give the files of one a version above the other's, then run `alterflow migrate hash`"
        )
    if not lines or not _HASH.fullmatch(lines[0]):
        raise SumMismatch(f"{where} line 1 is not the hash of the whole (64 hex digits); run `alterflow migrate hash` after review")
    files: list[FileHash] = []
    seen: set[str] = set()
    for number, line in enumerate(lines[1:], 2):
        match = _FILE_LINE.fullmatch(line)
        if match is None:
            raise SumMismatch(f"{where} line {number} is not `<sha256>  <file name>`; run `alterflow migrate hash` after review")
        if match["script"] in seen:
            raise SumMismatch(f"{where} line {number} lists {shown(match['script'], 80)} again; run `alterflow migrate hash` after review")
        seen.add(match["script"])
        files.append(FileHash(match["script"], match["digest"]))
    return DirectorySum(lines[0], tuple(files))


def difference(recorded: DirectorySum, now: DirectorySum) -> SumDifference:
    before, after = recorded.digests(), now.digests()
    return SumDifference(
        added=tuple(f.script for f in now.files if f.script not in before),
        removed=tuple(f.script for f in recorded.files if f.script not in after),
        edited=tuple(f.script for f in now.files if f.script in before and before[f.script] != f.digest),
    )


def verify_sum(directory: pathlib.Path) -> SumState:
    """Whether the directory matches its sum file (MISSING: it has none, nothing is checked); a
    mismatch is refused in one line naming the files and the fix."""
    recorded = read_sum(directory)
    if recorded is None:
        return SumState.MISSING
    where = shown(str(sum_path(directory)), 200, quote="")
    if recorded.total != _total(recorded.files):
        raise SumMismatch(f"{where} line 1 does not match the lines below it (edited by hand, or a merge kept both sides?); {FIX}")
    changed = difference(recorded, directory_sum(directory))
    if changed:
        raise SumMismatch(f"{where} does not match the directory: {changed.described()}; {FIX}")
    return SumState.CHECKED


def write_sum(directory: pathlib.Path) -> DirectorySum:
    """Write the directory's sum file as the directory is now (a new file renamed over the old one:
    a reader sees the old sum or the new, never half of one)."""
    current = directory_sum(directory)
    path = sum_path(directory)
    partial = directory / f".{SUM_FILE}.{os.getpid()}.tmp"
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as out:
            out.write(current.text)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return current


def rehash(directory: pathlib.Path) -> str:
    """`alterflow migrate hash`: write the sum file after review; the line says what it changed."""
    _sql_files(directory)  # a missing directory: one line
    if sum_path(directory).exists() and not sum_path(directory).is_file():
        read_sum(directory)  # its one line: not a file, remove it
    try:
        before = read_sum(directory)
        unreadable = False
    except SumMismatch:
        before, unreadable = None, True
    now = write_sum(directory)
    where = shown(str(sum_path(directory)), 200, quote="")
    if unreadable:
        change = "it replaced an unreadable one"
    elif before is None:
        change = "new"
    else:
        change = difference(before, now).described() or "unchanged"
    return f"wrote {where}: {len(now.files)} file(s) ({change})"


@contextlib.contextmanager
def keeping_sum(directory: pathlib.Path) -> Iterator[None]:
    """Around `migrate new` and `migrate diff`, which add one file: the directory must match its sum
    file before; after, the sum file is written again where it exists, and created where the
    directory held no `.sql` file before (a new project starts with one)."""
    if directory.is_dir():
        state = verify_sum(directory)
        keep = state is SumState.CHECKED or not _sql_files(directory)
    else:
        keep = True
    yield
    if keep and directory.is_dir() and (sum_path(directory).exists() or _sql_files(directory)):
        if read_sum(directory) != directory_sum(directory):
            write_sum(directory)
