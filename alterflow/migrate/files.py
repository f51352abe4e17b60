"""The migrations directory: `V<version>__<words>.sql` files, their versions compared as numbers
(dotted allowed: `V1.2__x.sql` comes after `V1.1__x.sql` and before `V1.10__x.sql`), their text's
checksum and their statements with the line each starts on.

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

NAME = re.compile(r"V(?P<version>[0-9]+(?:\.[0-9]+)*)__(?P<words>[A-Za-z0-9][A-Za-z0-9_]*)\.sql")
MAX_FILE_BYTES = 16 << 20  # a migration is SQL text; a bigger file is surely not one


class MigrationFileError(UserError):
    """The directory or one of its files cannot be used; the message names it. Nothing changed."""


def version_key(version: str) -> tuple[int, ...]:
    """`"1.10"` -> (1, 10): versions compare as numbers, part by part (trailing zeros aside, so
    `1` and `1.0` are the same version)."""
    parts = [int(p) for p in version.split(".")]
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


@dataclass(frozen=True)
class MigrationFile:
    version: str  # as written: "3", "1.2"
    description: str  # the words, `_` as spaces
    script: str  # the file name
    path: pathlib.Path
    text: str

    @property
    def key(self) -> tuple[int, ...]:
        return version_key(self.version)

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


def migrations_dir(given: str | os.PathLike | None, default: str) -> pathlib.Path:
    """`--dir`, else `default` (ALTERFLOW_MIGRATIONS, else `migrations/` under the working
    directory: `Settings.migrations`)."""
    return pathlib.Path(given or default)


def parse_name(name: str) -> tuple[str, str]:
    """(version, description) of a migration file name, or one line saying what it should be."""
    match = NAME.fullmatch(name)
    if match is None:
        raise MigrationFileError(
            f"{shown(name, 120)}: not a migration file name; use V<version>__<words>.sql, "
            "e.g. V3__widen_amount.sql (version: numbers, dotted allowed; words: letters, digits, _)"
        )
    return match["version"], match["words"].replace("_", " ")


def read_directory(directory: pathlib.Path, allow_empty_files: bool = False) -> list[MigrationFile]:
    """Every migration file of `directory`, in version order. Refused in one line: a missing
    directory, a `.sql` file whose name does not parse, two files of one version, a file that is
    not UTF-8 text, or (unless `allow_empty_files`) a file without a statement. Files that do not
    end in `.sql` (a README) and hidden files are ignored."""
    if not directory.exists():
        raise MigrationFileError(f"migrations directory {shown(str(directory), 200)} does not exist (--dir or ALTERFLOW_MIGRATIONS)")
    if not directory.is_dir():
        raise MigrationFileError(f"migrations directory {shown(str(directory), 200)} is not a directory")
    found: dict[tuple[int, ...], MigrationFile] = {}
    for path in sorted(directory.iterdir()):
        if path.name.startswith(".") or not path.name.lower().endswith(".sql") or not path.is_file():
            continue
        version, description = parse_name(path.name)
        text = _read_text(path)
        migration = MigrationFile(version, description, path.name, path, text)
        if migration.key in found:
            raise MigrationFileError(
                f"{found[migration.key].script} and {path.name} have the same version {version}; versions must be unique"
            )
        if not allow_empty_files and not migration.statements:
            raise MigrationFileError(f"{path.name} holds no statement; write the change into it, or delete it")
        found[migration.key] = migration
    return [found[key] for key in sorted(found)]


def _read_text(path: pathlib.Path) -> str:
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
