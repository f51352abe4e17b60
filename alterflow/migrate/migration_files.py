"""The migrations directory, named as Flyway names it: versioned `V<version>__<description>.sql`
files, their versions compared as numbers (`.` or `_` between the parts: `V1_2__x.sql` is version
1.2, after `V1.1__x.sql` and before `V1.10__x.sql`), the description optional (`V3.sql`) and free
text (`V2__add order channel.sql`); repeatable `R__<description>.sql` files
(`alterflow.migrate.repeatable` applies them); their text's checksum (a UTF-8 byte-order mark
aside) and their statements with the line each starts on. A Flyway undo file (`U<version>__...`)
is refused, pointing at `ALTER TABLE ... REVERT TO VERSION`.

Refusals are one line naming the file (`MigrationFileError`); reading changes nothing.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
from dataclasses import dataclass
from functools import cached_property

from alterflow.errors import UserError, shown
from alterflow.text_files import read_utf8

# Flyway's file names (prefix VERSION separator DESCRIPTION suffix): the prefix and the `.sql` suffix
# as Flyway spells them (case-sensitive), `.` or `_` between the version's parts, the description
# after the first `__`, optional, any printable text (its `_` read as spaces).
VERSIONED_NAME = re.compile(r"V(?P<version>[0-9]+(?:[._][0-9]+)*)(?:__(?P<words>.*))?\.sql", re.DOTALL)
REPEATABLE_NAME = re.compile(r"R__(?P<words>.*)\.sql", re.DOTALL)
UNDO_NAME = re.compile(r"U[0-9][0-9._]*(?:__.*)?\.sql", re.DOTALL)
MAX_FILE_BYTES = 16 << 20  # a migration is SQL text; a bigger file is surely not one


class MigrationFileError(UserError):
    """The directory or one of its files cannot be used; the message names it. Nothing changed."""


VERSIONED, REPEATABLE = "VERSIONED", "REPEATABLE"


def version_key(version: str) -> tuple[int, ...]:
    """`"1.10"` -> (1, 10): versions compare as numbers, part by part (trailing zeros aside, so
    `1` and `1.0` are the same version)."""
    parts = [int(p) for p in version.replace("_", ".").split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def checksum(text: str) -> str:
    """sha256 of the text with its line ends as `\\n` (a checkout on Windows does not count as an edit)."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()


def statement_hash(text: str) -> str:
    """sha256 of a statement with its white space normalised: reformatting does not change it."""
    return hashlib.sha256(" ".join(text.split()).rstrip(";").strip().encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FileStatement:
    position: int  # 1-based, in the file
    line: int  # the line it starts on
    text: str

    @property
    def text_hash(self) -> str:
        return statement_hash(self.text)


class SqlFile:
    """What a versioned and a repeatable file share: a name (`script`), a description, a text
    (without a byte-order mark), its checksum and its statements."""

    description: str
    script: str
    text: str

    @cached_property
    def checksum(self) -> str:
        return checksum(self.text)

    @cached_property
    def statements(self) -> tuple[FileStatement, ...]:
        """Each statement with its line; a file the tokenizer cannot read is refused naming it."""
        from alterflow.sql.parser import SqlError, statement_spans

        try:
            spans = statement_spans(self.text)
        except SqlError as exc:
            raise MigrationFileError(f"{self.script}: {exc}") from None
        return tuple(FileStatement(i, self.text.count("\n", 0, start) + 1, piece) for i, (start, piece) in enumerate(spans, 1))


@dataclass(frozen=True)
class MigrationFile(SqlFile):
    """A versioned file: applied once, in version order."""

    version: str  # dotted, as written: "3", "1.2" (`V1_2__x.sql` is "1.2")
    description: str  # the words, `_` as spaces ("" when the name has none)
    script: str  # the file name
    path: pathlib.Path
    text: str
    kind = VERSIONED

    @property
    def key(self) -> tuple[int, ...]:
        return version_key(self.version)


@dataclass(frozen=True)
class RepeatableFile(SqlFile):
    """A repeatable file (`R__<description>.sql`): applied after the versioned files whenever its
    checksum changed, in the order of its description."""

    description: str
    script: str
    path: pathlib.Path
    text: str
    version = None  # it has none (a plan's JSON shows null)
    kind = REPEATABLE

    @property
    def order_key(self) -> tuple[str, str]:
        return (self.description.casefold(), self.description)


@dataclass(frozen=True)
class MigrationDirectory:
    """Every migration file of a directory: the versioned ones in version order, the repeatable
    ones in the order of their descriptions."""

    versioned: list[MigrationFile]
    repeatable: list[RepeatableFile]


def migrations_dir(given: str | os.PathLike | None, default: str) -> pathlib.Path:
    """`--dir`, else `default` (ALTERFLOW_MIGRATIONS, else `migrations/` under the working
    directory: `Settings.migrations`)."""
    return pathlib.Path(given or default)


def parse_name(name: str) -> tuple[str, str]:
    """(version, description) of a versioned migration file name (Flyway's rules), or one line
    saying what it should be."""
    match = VERSIONED_NAME.fullmatch(name)
    if match is None or not _printable(match["words"]):
        raise MigrationFileError(_name_refusal(name))
    return match["version"].replace("_", "."), _description(match["words"])


def _description(words: str | None) -> str:
    return (words or "").replace("_", " ")


def _printable(words: str | None) -> bool:
    return words is None or words.isprintable()


def _name_refusal(name: str) -> str:
    """The one line that says why `name` (a `.sql` file) is no migration file name."""
    shown_name = shown(name, 120)
    if UNDO_NAME.fullmatch(name):
        return (
            f"{shown_name}: an undo migration (Flyway's U prefix); alterflow does not run undo files: "
            "undo a change with a new versioned file, e.g. ALTER TABLE t REVERT TO VERSION n, then delete this one"
        )
    if name[:1] in ("v", "r", "u") and (VERSIONED_NAME.fullmatch(name[0].upper() + name[1:]) or name[1:3] == "__"):
        return f"{shown_name}: the prefix must be an upper-case {name[0].upper()} (as in Flyway, whose prefixes are case-sensitive); rename the file"
    if name.startswith("R") and not name.startswith("R__"):
        return f"{shown_name}: a repeatable migration has no version; use R__<description>.sql, e.g. R__views.sql"
    return (
        f"{shown_name}: not a migration file name; use V<version>__<description>.sql, e.g. V3__widen_amount.sql "
        "(version: numbers separated by . or _; the description is optional), or R__<description>.sql for a repeatable one"
    )


def read_directory(directory: pathlib.Path, allow_empty_files: bool = False) -> list[MigrationFile]:
    """The versioned migration files of `directory`, in version order (`read_migrations` reads
    the repeatable ones too, and refuses what it refuses)."""
    return read_migrations(directory, allow_empty_files).versioned


def read_migrations(directory: pathlib.Path, allow_empty_files: bool = False) -> MigrationDirectory:
    """Every migration file of `directory`. Refused in one line: a missing directory, a `.sql`
    file whose name does not parse (an undo file among them), two versioned files of one version,
    two repeatable files of one description, a file that is not UTF-8 text, or (unless
    `allow_empty_files`) a file without a statement. Files that do not end in `.sql` (a README)
    and hidden files are ignored. A UTF-8 byte-order mark at the start of a file is dropped."""
    if not directory.exists():
        raise MigrationFileError(f"migrations directory {shown(str(directory), 200)} does not exist (--dir or ALTERFLOW_MIGRATIONS)")
    if not directory.is_dir():
        raise MigrationFileError(f"migrations directory {shown(str(directory), 200)} is not a directory")
    found: dict[tuple[int, ...], MigrationFile] = {}
    repeatable: dict[str, RepeatableFile] = {}
    for path in sorted(directory.iterdir()):
        if path.name.startswith(".") or not path.name.lower().endswith(".sql") or not path.is_file():
            continue
        repeatable_match = REPEATABLE_NAME.fullmatch(path.name)
        if repeatable_match is not None and _printable(repeatable_match["words"]):
            file = RepeatableFile(_description(repeatable_match["words"]), path.name, path, _read_text(path))
            if not file.description.strip():
                raise MigrationFileError(f"{shown(path.name, 120)}: a repeatable migration needs a description, e.g. R__views.sql")
            same = repeatable.get(file.description.casefold())
            if same is not None:
                raise MigrationFileError(
                    f"{same.script} and {path.name} have the same description {file.description!r}; "
                    "a repeatable migration is known by its description, which must be unique"
                )
            _check_statements(file, allow_empty_files)
            repeatable[file.description.casefold()] = file
            continue
        version, description = parse_name(path.name)
        migration = MigrationFile(version, description, path.name, path, _read_text(path))
        if migration.key in found:
            raise MigrationFileError(
                f"{found[migration.key].script} and {path.name} have the same version {version}; versions must be unique"
            )
        _check_statements(migration, allow_empty_files)
        found[migration.key] = migration
    return MigrationDirectory([found[key] for key in sorted(found)], sorted(repeatable.values(), key=lambda f: f.order_key))


def _check_statements(file: SqlFile, allow_empty_files: bool) -> None:
    if not allow_empty_files and not file.statements:
        raise MigrationFileError(f"{file.script} holds no statement; write the change into it, or delete it")


def _read_text(path: pathlib.Path) -> str:
    """The file's text without a leading UTF-8 byte-order mark (`read_utf8` drops it): a file with
    one and without it have one checksum, and their statements parse alike."""
    return read_utf8(path, path.name, MigrationFileError, MAX_FILE_BYTES, "a migration file is SQL text")


def new_file(directory: pathlib.Path, words: str) -> pathlib.Path:
    """Create the next migration file, empty (`x` mode: never over a file): version one more than the highest's first part
    (`V7__add_region.sql` after `V6.2__x.sql`). The words become the name's description."""
    cleaned = "_".join(re.findall(r"[A-Za-z0-9]+", words))
    if not cleaned:
        raise MigrationFileError(f"migrate new: {shown(words)} has no letter or digit to name the file with")
    if len(cleaned) > 120:
        raise MigrationFileError(f"migrate new: the description is {len(cleaned)} characters; use at most 120")
    if not directory.exists():
        directory.mkdir(parents=True)
    existing = read_directory(directory, allow_empty_files=True)
    version = str(existing[-1].key[0] + 1) if existing else "1"
    path = directory / f"V{version}__{cleaned}.sql"
    path.open("x", encoding="utf-8").close()  # "x": never over a file
    return path
