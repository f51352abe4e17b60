"""`alterflow migrate diff --to FILE` (docs/migrations.md): FILE holds the desired `CREATE TABLE` statements;
the next migration file gets the statements that take the catalog there, and their plan is printed.

What it compares: the catalog's tables as the pending migration files would leave them (every
pending statement planned in order on `NextSchema`, as `migrate lint` does), so a diff written while
other files wait to be applied comes after them and builds on them.

What it writes, per table of FILE, in FILE's order:

- a table that does not exist: its `CREATE TABLE`, as written in FILE;
- a table that exists: one `ALTER TABLE` with every change (one schema version, at most one
  rewrite), guarded by `PROPERTIES ("expected_version" = "N")`, N the version it was diffed
  against. Its clauses, in this order: `RENAME COLUMN` (only where the desired column's line says
  `-- renamed from old_name`), then in FILE's column order `ADD COLUMN` / `MODIFY COLUMN` (type,
  NULL / NOT NULL, default, comment, position: `FIRST` / `AFTER`, as few moves as keep FILE's
  order) / `ALTER COLUMN ... SET DEFAULT | DROP DEFAULT`, then `ORDER BY`, `DISTRIBUTED BY`, and
  last `DROP COLUMN` for the columns FILE does not have (after a new `ORDER BY` has let go of them).

Renames cannot be guessed: a column missing on one side and new on the other is a DROP and an ADD,
unless the desired column's definition carries the comment `-- renamed from old_name` on one of its
lines. A mark whose rename is already done (the table has the new name, not the old) is ignored with
a note, so FILE can keep it.

FILE is read literally, as a CREATE TABLE would be: a column without NOT NULL is nullable, no
DEFAULT means none, no DISTRIBUTED BY means HASH(primary key) BUCKETS 1, no ORDER BY means no sort
key. What ALTER TABLE cannot do (change a primary key or partitioning, remove a distribution or a
sort key) is reported as REJECTED and not written.

Tables the catalog has and FILE does not mention are left alone: `diff` never drops a table (write
DROP TABLE in a migration by hand); they are listed in a note. Views are not compared.

Every generated statement is planned in order by the same planner as `migrate lint`; one the
planner rejects is reported, not written. When a table's ALTER is rejected for some of its clauses,
those are reported (each with its reason) and the ALTER is planned again without them. With no
difference no file is written.

Refused in one line, nothing written: FILE missing, not a file or not UTF-8, a statement the parser
refuses or that is not CREATE TABLE (with FILE and line), an invalid CREATE TABLE, one table
created twice, a `-- renamed from` mark that is not on a column's line, names the column itself or a
column the table does not have (or has besides the new name), two marks of one old column, renames
in a cycle, and FILE inside the migrations directory.
"""

from __future__ import annotations

import bisect
import pathlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from alterflow import sql as ast
from alterflow.catalog.catalog import Catalog
from alterflow.catalog.schema import Column, SchemaVersion, name_key
from alterflow.errors import UserError, escaped
from alterflow.migrate.migration_files import MAX_FILE_BYTES, FileStatement, MigrationFile, read_directory
from alterflow.migrate.plan import HEAVY, REJECTED, NextSchema, StatementPlan
from alterflow.migrate.status import migration_status
from alterflow.planner import CreateTableRejected, plan_create_table
from alterflow.planner.statement_parts import literal_sql
from alterflow.sql.parser import SqlError, Token, tokenize
from alterflow.sql.quoting import quote_string
from alterflow.text_files import read_utf8

MARK = re.compile(r"--\s*renamed\s+from\b(?P<rest>.*)", re.IGNORECASE)
MARK_NAME = re.compile(r"\s*(?:`(?P<quoted>[^`]*)`|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))")
COMMENT = re.compile(r"--[^\n]*|/\*[\s\S]*?(?:\*/|\Z)")
SHOWN_TABLES = 20  # tables a note lists by name before "and N more"


class DiffError(UserError):
    """FILE cannot be diffed; the line names FILE (and its line). Nothing was written."""


# ------------------------------------------------------------------------------------------------
# FILE
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DesiredTable:
    stmt: ast.CreateTable
    line: int  # where its CREATE TABLE starts in FILE
    version: SchemaVersion  # what the CREATE TABLE would make (column ids 1.. in FILE's order)
    renamed_from: dict[int, tuple[str, int]] = field(default_factory=dict)  # column index -> (old name, line of the mark)


_KIND = {
    ast.AlterTable: "ALTER TABLE",
    ast.DropTable: "DROP TABLE",
    ast.Insert: "INSERT",
    ast.Select: "SELECT",
    ast.CreateView: "CREATE VIEW",
    ast.DropView: "DROP VIEW",
    ast.Describe: "DESCRIBE",
}


def read_desired(path: pathlib.Path) -> list[DesiredTable]:
    """The CREATE TABLEs of FILE, each checked as CREATE TABLE would check it, with its rename marks."""
    label = escaped(str(path))
    text = _desired_text(path, label)
    tokens = _tokenized(text, label)
    pieces = _statement_tokens(tokens, label)
    line_of = _line_numbers(text)
    parsed = _parsed(text, pieces, label, line_of)
    tables, columns = _desired_tables(label, pieces, parsed, line_of)
    _read_marks(label, text, tokens, tables, columns, line_of)
    return tables


def _desired_text(path: pathlib.Path, label: str) -> str:
    """FILE's text; refused when it is missing, not a file, too big or not UTF-8."""
    if not path.exists():
        raise DiffError(f"desired schema file {label} does not exist")
    if not path.is_file():
        raise DiffError(f"desired schema file {label} is not a file")
    return read_utf8(path, label, DiffError, MAX_FILE_BYTES, "the desired schema is CREATE TABLE statements")


def _tokenized(text: str, label: str) -> list[Token]:
    try:
        return tokenize(text)
    except SqlError as exc:
        raise DiffError(f"{label}: {exc}") from None


def _statement_tokens(tokens: list[Token], label: str) -> list[list[Token]]:
    """The tokens of each statement (split at `;`); refused when FILE holds none."""
    pieces: list[list[Token]] = [[]]
    for tok in tokens:
        if tok.kind == "punct" and tok.text == ";":
            pieces.append([])
        else:
            pieces[-1].append(tok)
    pieces = [p for p in pieces if p]
    if not pieces:
        raise DiffError(f"{label} holds no statement; write the desired CREATE TABLE statements into it")
    return pieces


def _line_numbers(text: str) -> Callable[[int], int]:
    """The function giving the line (from 1) of an offset in `text`."""
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(offset: int) -> int:
        return bisect.bisect_left(newlines, offset) + 1

    return line_of


def _parsed(text: str, pieces: list[list[Token]], label: str, line_of: Callable[[int], int]) -> list[ast.Statement]:
    """FILE's statements parsed; a parse error names the line of the statement it is in."""
    try:
        return ast.parse_statements(text)
    except SqlError as exc:  # which statement: parse them one by one for its line
        for piece in pieces:
            try:
                ast.parse_statements(text[piece[0].start : piece[-1].end])
            except SqlError as exc_of_piece:
                raise DiffError(f"{label}:{line_of(piece[0].start)}: {exc_of_piece}") from None
        raise DiffError(f"{label}: {exc}") from None


def _desired_tables(
    label: str, pieces: list[list[Token]], parsed: list[ast.Statement], line_of: Callable[[int], int]
) -> tuple[list[DesiredTable], list[tuple[int, int, int, int]]]:
    """Each statement checked as a CREATE TABLE of its own table, and (start, end, table index,
    column index) of every column definition, in FILE's order."""
    tables: list[DesiredTable] = []
    first_line: dict[str, int] = {}
    columns: list[tuple[int, int, int, int]] = []
    for piece, stmt in zip(pieces, parsed):
        line = line_of(piece[0].start)
        version = _checked_create_table(label, line, piece, stmt, first_line)
        spans_of_columns = _column_definitions(piece)
        if len(spans_of_columns) != len(stmt.columns):  # the parser read the same tokens: cannot differ
            raise AssertionError(f"{len(spans_of_columns)} column definitions found for {len(stmt.columns)} columns")
        columns.extend((s, e, len(tables), i) for i, (s, e) in enumerate(spans_of_columns))
        tables.append(DesiredTable(stmt, line, version))
    return tables, columns


def _checked_create_table(label: str, line: int, piece: list[Token], stmt: ast.Statement, first_line: dict[str, int]) -> SchemaVersion:
    """The version a statement of FILE would create; refused unless it is a valid CREATE TABLE of a
    table FILE has not created before (`first_line`: the line of each table's, updated)."""
    if not isinstance(stmt, ast.CreateTable):
        kind = _KIND.get(type(stmt)) or piece[0].text.upper()[:20]
        raise DiffError(f"{label}:{line}: {kind} is not CREATE TABLE; the desired schema file holds CREATE TABLE statements only")
    key = name_key(stmt.name)
    if key in first_line:
        raise DiffError(
            f"{label}:{line}: table {stmt.name} is created twice (first at line {first_line[key]}); write one CREATE TABLE per table"
        )
    first_line[key] = line
    try:
        version, _next_id = plan_create_table(stmt, 0)
    except CreateTableRejected as exc:
        raise DiffError(f"{label}:{line}: {exc}") from None
    return version


def _read_marks(
    label: str,
    text: str,
    tokens: list[Token],
    tables: list[DesiredTable],
    columns: list[tuple[int, int, int, int]],
    line_of: Callable[[int], int],
) -> None:
    """Record each `-- renamed from` mark of FILE on the column definition whose line it is on."""
    starts = [t.start for t in tokens]
    column_starts = [c[0] for c in columns]
    for offset, mark in _marks(text, tokens):
        line = line_of(offset)
        old = _marked_name(mark)
        if not old:
            raise DiffError(f"{label}:{line}: `-- renamed from` needs the column's old name: -- renamed from old_name")
        index = bisect.bisect_right(column_starts, offset) - 1  # the last column definition starting before the mark
        if index < 0 or not _on_its_line(columns[index][1], offset, tokens, starts, line_of):
            raise DiffError(f"{label}:{line}: `-- renamed from {escaped(old)}` is not on a column definition's line")
        _start, _end, table_index, column_index = columns[index]
        _record_mark(label, line, old, tables[table_index], column_index)


def _marked_name(mark: str) -> str | None:
    """The old name a `-- renamed from` comment gives (None or "" when it gives none)."""
    rest = MARK.match(mark)["rest"]
    found = MARK_NAME.match(rest)
    return found and (found["quoted"] if found["quoted"] is not None else found["bare"])


def _record_mark(label: str, line: int, old: str, table: DesiredTable, column_index: int) -> None:
    """Record that column `column_index` of `table` is renamed from `old`; refused when it names the
    column itself, or the column or the old name has a mark already."""
    column = table.stmt.columns[column_index].name
    if name_key(old) == name_key(column):
        raise DiffError(f"{label}:{line}: `-- renamed from {escaped(old)}` names column {column} itself")
    if column_index in table.renamed_from:
        raise DiffError(
            f"{label}:{line}: column {column} has two `-- renamed from` marks (the other at line {table.renamed_from[column_index][1]})"
        )
    for other_index, (other_old, other_line) in table.renamed_from.items():
        if name_key(other_old) == name_key(old):
            other = table.stmt.columns[other_index].name
            raise DiffError(f"{label}:{line}: columns {other} (line {other_line}) and {column} are both `-- renamed from {escaped(old)}`")
    table.renamed_from[column_index] = (old, line)


def _on_its_line(end: int, offset: int, tokens: list[Token], starts: list[int], line_of) -> bool:
    """Whether a mark at `offset` belongs to the column definition ending at `end` that starts
    before it: inside the definition (one that spans lines), or after it on its last line with only
    `,`, `)` or `;` between (`amount INT,  -- renamed from amt`)."""
    if offset < end:
        return True
    between = tokens[bisect.bisect_left(starts, end) : bisect.bisect_left(starts, offset)]
    return line_of(offset) == line_of(end) and all(t.kind == "punct" and t.text in ",);" for t in between)


def _column_definitions(tokens: list[Token]) -> list[tuple[int, int]]:
    """(start, end) in FILE of each column definition of one CREATE TABLE's tokens: the elements of
    its parenthesised list, without PRIMARY KEY (...)."""
    first = next(i for i, t in enumerate(tokens) if t.kind == "punct" and t.text == "(")
    found: list[tuple[int, int]] = []
    element: list[Token] = []
    depth = 0

    def close() -> None:
        if element and element[0].key != "PRIMARY":
            found.append((element[0].start, element[-1].end))
        element.clear()

    for tok in tokens[first + 1 :]:
        if tok.kind == "punct" and tok.text == ")" and depth == 0:
            close()
            break
        if tok.kind == "punct" and tok.text == "," and depth == 0:
            close()
            continue
        if tok.kind == "punct" and tok.text == "(":
            depth += 1
        elif tok.kind == "punct" and tok.text == ")":
            depth -= 1
        element.append(tok)
    return found


def _marks(text: str, tokens: list[Token]) -> list[tuple[int, str]]:
    """(offset, text) of every `-- renamed from ...` comment. Comments are what lies between the
    tokenizer's tokens, so the same words inside a string (a COMMENT '...') are not a mark."""
    marks = []
    previous_end = 0
    for start, end in [(t.start, t.end) for t in tokens] + [(len(text), len(text))]:
        for comment in COMMENT.finditer(text, previous_end, start):
            if MARK.match(comment.group()):
                marks.append((comment.start(), comment.group()))
        previous_end = end
    return marks


# ------------------------------------------------------------------------------------------------
# One table: the clauses that take its version to the desired one
# ------------------------------------------------------------------------------------------------


@dataclass
class TableChanges:
    clauses: list[str] = field(default_factory=list)
    unsupported: list[tuple[str, str]] = field(default_factory=list)  # (what, why)
    notes: list[str] = field(default_factory=list)


def table_changes(label: str, table: str, current: SchemaVersion, want: DesiredTable) -> TableChanges:
    """The ALTER TABLE clauses (in the order they must run) that turn `current` into `want`."""
    changes = TableChanges()
    have = {name_key(c.name): c for c in current.columns}
    renamed_away = {name_key(old) for old, _line in want.renamed_from.values() if name_key(old) in have}
    source, renames = _renamed_sources(label, table, have, renamed_away, want, changes.notes)
    for index, column in enumerate(want.version.columns):
        if index in source:
            continue
        match = have.get(name_key(column.name))
        if match is not None and name_key(match.name) not in renamed_away:
            source[index] = match
    changes.clauses.extend(f"RENAME COLUMN {old.name} TO {new}" for old, new in _rename_order(label, table, current, renames))
    changes.clauses.extend(_ordered_column_clauses(current, want, source))
    _key_changes(current, want, source, changes)
    matched = {c.id for c in source.values()}
    changes.clauses.extend(f"DROP COLUMN {c.name}" for c in current.columns if c.id not in matched)
    return changes


def _renamed_sources(
    label: str, table: str, have: dict[str, Column], renamed_away: set[str], want: DesiredTable, notes: list[str]
) -> tuple[dict[int, Column], list[tuple[Column, str, int]]]:
    """The current column each marked desired column becomes ({desired index: column}), and the
    renames (current column, new name, line of the mark); a mark whose rename is done gets a note."""
    source: dict[int, Column] = {}
    renames: list[tuple[Column, str, int]] = []
    for index, (old, line) in sorted(want.renamed_from.items()):
        new = want.version.columns[index].name
        old_column, holder = have.get(name_key(old)), have.get(name_key(new))
        if old_column is None and holder is not None:
            notes.append(f"{table}.{new}: `-- renamed from {old}` is already done (the table has {new}, not {old}); the mark can go")
            continue
        if old_column is None:
            raise DiffError(f"{label}:{line}: `-- renamed from {escaped(old)}`: table {table} has no column {escaped(old)}")
        if holder is not None and name_key(holder.name) not in renamed_away:
            raise DiffError(
                f"{label}:{line}: `-- renamed from {escaped(old)}`: table {table} has both {old_column.name} and {holder.name}; "
                f"drop {holder.name} in a migration first, or remove the mark if the rename is done"
            )
        source[index] = old_column
        renames.append((old_column, new, line))
    return source, renames


def _ordered_column_clauses(current: SchemaVersion, want: DesiredTable, source: dict[int, Column]) -> list[str]:
    """In FILE's column order: ADD COLUMN for a new column, and what changes a kept one (type,
    nullability, default, comment, and its place where it is one of the fewest that must move)."""
    desired = want.version.columns
    by_id = {c.id: i for i, c in source.items()}
    work = [by_id[c.id] for c in current.columns if c.id in by_id]  # desired indexes, in today's order
    keep = _longest_increasing(work)
    clauses = []
    for index, column in enumerate(desired):
        before = desired[index - 1].name if index else None
        position = " FIRST" if before is None else f" AFTER {before}"
        if index not in source:
            if before is not None and work and work[-1] == index - 1:
                position = ""  # it lands at the end anyway
            clauses.append("ADD COLUMN " + _definition(column, want.stmt.columns[index]) + position)
            _place(work, index)
            continue
        move = index not in keep
        if move:
            work.remove(index)
            _place(work, index)
        clauses.extend(_column_clauses(source[index], column, want.stmt.columns[index], position if move else ""))
    return clauses


def _place(work: list[int], index: int) -> None:
    """Put desired column `index` in `work` (desired indexes in the table's order) where FILE has
    it: first, or after the column before it."""
    work.insert(work.index(index - 1) + 1 if index else 0, index)


def _key_changes(current: SchemaVersion, want: DesiredTable, source: dict[int, Column], changes: TableChanges) -> None:
    """The primary key, partitioning, sort key and distribution compared: ORDER BY and DISTRIBUTED
    BY clauses where ALTER TABLE can make the change, the rest unsupported."""
    keys = _Keys(want.version, {c.id: want.version.columns[i].name for i, c in source.items()})
    for title, attribute, why in _FIXED_KEYS:
        today_ids, wanted_ids = getattr(current, attribute), getattr(want.version, attribute)
        if not keys.same(today_ids, wanted_ids):
            changes.unsupported.append((f"{title} {_shown_keys(current, today_ids)} -> {_shown_keys(want.version, wanted_ids)}", why))
    if not keys.same(current.sort_key, want.version.sort_key):
        if want.version.sort_key:
            changes.clauses.append("ORDER BY (" + ", ".join(keys.wanted(want.version.sort_key)) + ")")
        else:
            changes.unsupported.append(
                (
                    f"ORDER BY {_shown_keys(current, current.sort_key)} -> none",
                    "ALTER TABLE cannot remove a sort key (ORDER BY needs a column); add ORDER BY to the desired CREATE TABLE",
                )
            )
    distribution = keys.wanted(want.version.distributed_by)
    if not keys.same(current.distributed_by, want.version.distributed_by) or current.buckets != want.version.buckets:
        if distribution:
            changes.clauses.append(f"DISTRIBUTED BY HASH({', '.join(distribution)}) BUCKETS {want.version.buckets}")
        else:
            changes.unsupported.append(
                (
                    f"DISTRIBUTED BY HASH{_shown_keys(current, current.distributed_by)} BUCKETS {current.buckets} -> none",
                    "ALTER TABLE cannot remove a distribution; add DISTRIBUTED BY to the desired CREATE TABLE",
                )
            )


# (clause, SchemaVersion attribute, why not) of the keys ALTER TABLE cannot change, in the order compared
_FIXED_KEYS = (
    (
        "PRIMARY KEY",
        "primary_key",
        "ALTER TABLE cannot change a primary key: create a new table and copy the rows (INSERT INTO ... SELECT)",
    ),
    (
        "PARTITION BY",
        "partition_by",
        "ALTER TABLE cannot change the partitioning: create a new table and copy the rows (INSERT INTO ... SELECT)",
    ),
)


@dataclass(frozen=True)
class _Keys:
    """Key columns (tuples of column ids) of the current version compared with the desired
    version's by the names the current columns will have (`to_desired`: column id -> desired name)."""

    desired: SchemaVersion
    to_desired: dict[int, str]

    def wanted(self, ids: tuple[int, ...]) -> list[str]:
        return [self.desired.column_by_id(i).name for i in ids]

    def same(self, today_ids: tuple[int, ...], wanted_ids: tuple[int, ...]) -> bool:
        today = [self.to_desired.get(i) for i in today_ids]
        return [x and name_key(x) for x in today] == [name_key(x) for x in self.wanted(wanted_ids)]


def _shown_keys(version: SchemaVersion, ids: tuple[int, ...]) -> str:
    return "(" + ", ".join(version.column_by_id(i).name for i in ids) + ")"


def _rename_order(label: str, table: str, current: SchemaVersion, renames: list[tuple[Column, str, int]]) -> list[tuple[Column, str]]:
    """The renames in an order where each new name is free when its rename runs (`b -> c` before
    `a -> b`); a cycle (`a -> b`, `b -> a`) cannot be ordered."""
    held = {name_key(c.name) for c in current.columns}
    left = list(renames)
    ordered = []
    while left:
        ready = [r for r in left if name_key(r[1]) not in held]
        if not ready:
            cycle = ", ".join(f"{old.name} -> {new}" for old, new, _line in left)
            raise DiffError(
                f"{label}:{left[0][2]}: the renames of table {table} form a cycle ({cycle}); rename through another name in a migration first"
            )
        for r in ready:
            held.discard(name_key(r[0].name))
            held.add(name_key(r[1]))
            ordered.append((r[0], r[1]))
            left.remove(r)
    return ordered


def _longest_increasing(values: list[int]) -> set[int]:
    """The values of one longest strictly increasing subsequence: the columns that keep their
    place; every other one moves, so the fewest MODIFY ... AFTER restore FILE's order."""
    tails: list[int] = []  # tails[k]: index in values of the smallest tail of an increasing run of length k + 1
    previous = [-1] * len(values)
    for i, value in enumerate(values):
        k = bisect.bisect_left([values[t] for t in tails], value)
        if k:
            previous[i] = tails[k - 1]
        if k == len(tails):
            tails.append(i)
        else:
            tails[k] = i
    kept = set()
    i = tails[-1] if tails else -1
    while i >= 0:
        kept.add(values[i])
        i = previous[i]
    return kept


def _definition(column: Column, cdef: ast.ColumnDef) -> str:
    """A new column as ADD COLUMN writes it (FILE's default literal as written)."""
    parts = [column.name, column.type.sql()]
    if not column.nullable:
        parts.append("NOT NULL")
    if column.write_default is not None:
        parts.append("DEFAULT " + literal_sql(cdef.default))
    if column.comment:
        parts.append("COMMENT " + quote_string(column.comment))
    return " ".join(parts)


def _column_clauses(old: Column, new: Column, cdef: ast.ColumnDef, position: str) -> list[str]:
    """What turns column `old` (already renamed) into `new`: MODIFY COLUMN for the type,
    nullability, comment or place (with the default when it changes too), else ALTER COLUMN SET
    DEFAULT; a default that goes is dropped first (before a type change would have to convert it)."""
    clauses = []
    name = new.name
    default_changed = old.write_default != new.write_default or (old.write_default is None) != (new.write_default is None)
    if default_changed and new.write_default is None:
        clauses.append(f"ALTER COLUMN {name} DROP DEFAULT")
    modify = []
    if old.nullable != new.nullable:
        modify.append("NULL" if new.nullable else "NOT NULL")
    if default_changed and new.write_default is not None:
        modify.append("DEFAULT " + literal_sql(cdef.default))
    if (old.comment or "") != (new.comment or ""):
        modify.append("COMMENT " + quote_string(new.comment or ""))
    restated = old.type != new.type or old.nullable != new.nullable or (old.comment or "") != (new.comment or "") or position
    if restated:
        clauses.append(" ".join([f"MODIFY COLUMN {name} {new.type.sql()}", *modify]) + position)
    elif default_changed and new.write_default is not None:
        clauses.append(f"ALTER COLUMN {name} SET DEFAULT {literal_sql(cdef.default)}")
    return clauses


# ------------------------------------------------------------------------------------------------
# The diff
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffStatement:
    text: str
    kind: str  # LIGHT, HEAVY, REJECTED
    reason: str
    table: str
    rows: int = 0  # rows a rewrite reads today (HEAVY)

    @property
    def written(self) -> bool:
        return self.kind != REJECTED


@dataclass
class SchemaDiff:
    desired: pathlib.Path
    directory: pathlib.Path
    script: str  # the file it writes (or would write)
    version: str
    description: str
    statements: list[DiffStatement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # scripts of the pending files it is relative to

    @property
    def written(self) -> list[DiffStatement]:
        return [s for s in self.statements if s.written]

    @property
    def rejected(self) -> list[DiffStatement]:
        return [s for s in self.statements if not s.written]

    def file_text(self) -> tuple[str, list[int]]:
        """The migration file's text and the line each written statement starts on."""
        name = escaped(self.desired.name)
        lines = [
            f"-- Written by `alterflow migrate diff --to {name}`: the statements that take the catalog",
            f"-- (after the migrations pending then) to the CREATE TABLE statements of {name}.",
            "-- A column is renamed only where the desired file marks it `-- renamed from old_name`.",
            "",
        ]
        starts = []
        for statement in self.written:
            starts.append(len(lines) + 1)
            lines.extend((statement.text + ";").split("\n"))
            lines.append("")
        return "\n".join(lines), starts

    def report(self, path: pathlib.Path | None) -> str:
        """The plan of every statement, the notes, and the summary line last."""
        lines = []
        if self.pending:
            shown = ", ".join(self.pending[:SHOWN_TABLES]) + (
                f" and {len(self.pending) - SHOWN_TABLES} more" if len(self.pending) > SHOWN_TABLES else ""
            )
            lines.append(f"relative to the catalog after {len(self.pending)} pending migration file(s): {shown}")
        starts = iter(self.file_text()[1])
        for s in self.statements:
            where = f"{self.script}:{next(starts)}" if s.written else "not written"
            lines.append(f"{where}  {' '.join(s.text.split())[:160]}")
            extra = f"; {s.rows} rows today" if s.kind == HEAVY else ""
            lines.append(f"  {s.kind:<8} {s.reason}{extra}")
        lines.extend(f"note: {n}" for n in self.notes)
        label = escaped(self.desired.name)
        if not self.statements:
            lines.append(
                f"no difference: the catalog{' (after the pending migrations)' if self.pending else ''} matches {label}; nothing written"
            )
        elif path is None:
            lines.append(f"nothing written: all {len(self.statements)} statement(s) were rejected")
        else:
            rejected = f"; {len(self.rejected)} rejected statement(s) not written" if self.rejected else ""
            lines.append(f"wrote {escaped(str(path))}: {len(self.written)} statement(s){rejected}")
        return "\n".join(lines)


def diff_schema(catalog: Catalog, directory: pathlib.Path, desired_path: pathlib.Path, warehouse: pathlib.Path | None = None) -> SchemaDiff:
    """The statements that take the catalog, after the pending migration files, to FILE, each
    planned in order. Writes nothing."""
    _check_outside_migrations(directory, desired_path)
    tables = read_desired(desired_path)
    label = escaped(str(desired_path))
    result = _next_migration(directory, desired_path)
    schema = NextSchema(catalog, warehouse)
    if directory.exists():
        _plan_pending(catalog, directory, schema, result)
    target = _TargetFile(schema, MigrationFile(result.version, result.description, result.script, directory / result.script, ""))
    left_alone = _left_alone(catalog, schema, tables)
    for want in tables:
        table = schema.table(want.stmt.name)
        if table is None:
            _diff_new_table(label, want, target, result)
        else:
            _diff_existing_table(label, table, want, target, result)
    if left_alone:
        more = f" and {len(left_alone) - SHOWN_TABLES} more" if len(left_alone) > SHOWN_TABLES else ""
        result.notes.append(
            f"{len(left_alone)} table(s) not in {escaped(desired_path.name)} are left alone (diff never drops a table): "
            + ", ".join(left_alone[:SHOWN_TABLES])
            + more
        )
    return result


def _check_outside_migrations(directory: pathlib.Path, desired_path: pathlib.Path) -> None:
    """Refuse a FILE that the migrations directory would take for a migration."""
    name = desired_path.name
    if directory.is_dir() and desired_path.resolve().parent == directory.resolve() and name.lower().endswith(".sql") and name[:1] != ".":
        raise DiffError(
            f"{escaped(str(desired_path))} is in the migrations directory, where every .sql file is a migration; keep the desired schema file elsewhere"
        )


def _next_migration(directory: pathlib.Path, desired_path: pathlib.Path) -> SchemaDiff:
    """An empty diff named as the next migration file (`migrate new`'s numbering), after FILE's name."""
    existing = read_directory(directory, allow_empty_files=True) if directory.exists() else []
    version = str(existing[-1].key[0] + 1) if existing else "1"
    words = "_".join(re.findall(r"[A-Za-z0-9]+", desired_path.stem))[:100] or "desired"
    description = f"diff_to_{words}"
    return SchemaDiff(desired_path, directory, f"V{version}__{description}.sql", version, description.replace("_", " "))


def _plan_pending(catalog: Catalog, directory: pathlib.Path, schema: NextSchema, result: SchemaDiff) -> None:
    """Plan the statements of the pending migration files not done yet on `schema`, in order;
    one the planner rejects gets a note."""
    status = migration_status(catalog, directory)
    done = status.done_statements
    for file in status.pending:
        result.pending.append(file.script)
        for statement in file.statements:
            if (file.version, statement.position) in done:
                continue
            planned = schema.plan(file, statement)
            if planned.kind == REJECTED:
                result.notes.append(
                    f"pending {file.script}:{statement.line} is rejected by the planner ({planned.reason}); the diff takes it as changing nothing"
                )


def _left_alone(catalog: Catalog, schema: NextSchema, tables: list[DesiredTable]) -> list[str]:
    """The tables (after the pending files) that FILE does not mention, by name."""
    desired_keys = {name_key(t.stmt.name) for t in tables}
    present = {name_key(t.name): t.name for t in catalog.tables()}
    for key, table in schema.tables.items():
        if table is None:
            present.pop(key, None)
        else:
            present[key] = table.name
    return sorted((name for key, name in present.items() if key not in desired_keys), key=str.lower)


@dataclass
class _TargetFile:
    """The migration file the diff writes, its statements planned in order on `schema` after the
    pending files."""

    schema: NextSchema
    file: MigrationFile
    position: int = 0

    def plan(self, text: str) -> StatementPlan:
        self.position += 1
        return self.schema.plan(self.file, FileStatement(self.position, 0, text))


def _planned(text: str, planned: StatementPlan, table: str) -> DiffStatement:
    return DiffStatement(text, planned.kind, planned.reason, table, planned.rows)


def _diff_new_table(label: str, want: DesiredTable, target: _TargetFile, result: SchemaDiff) -> None:
    """A table that does not exist yet: its CREATE TABLE as FILE writes it (no rename can apply)."""
    if want.renamed_from:
        old, line = next(iter(want.renamed_from.values()))
        raise DiffError(
            f"{label}:{line}: `-- renamed from {escaped(old)}`: table {want.stmt.name} does not exist yet, so nothing is renamed"
        )
    result.statements.append(_planned(want.stmt.sql, target.plan(want.stmt.sql), want.stmt.name))


def _diff_existing_table(label: str, table, want: DesiredTable, target: _TargetFile, result: SchemaDiff) -> None:
    """A table that exists: its unsupported changes reported, the rest as one guarded ALTER TABLE,
    planned again without the clauses the planner refuses (each reported) until it passes."""
    changes = table_changes(label, table.name, table.context.current, want)
    result.notes.extend(changes.notes)
    for what, why in changes.unsupported:
        result.statements.append(
            DiffStatement(f"ALTER TABLE {table.name}: {what}", REJECTED, f"ALTER TABLE {table.name}: {why}", table.name)
        )
    clauses = changes.clauses
    while clauses:
        guard = f'PROPERTIES ("expected_version" = "{table.context.current.version}")'
        text = f"ALTER TABLE {table.name}\n    " + ",\n    ".join(clauses) + f"\n    {guard}"
        planned = target.plan(text)
        refused = [i for i, c in enumerate(planned.alter.clauses) if c.verdict == REJECTED] if planned.alter is not None else []
        if planned.kind != REJECTED or not refused:
            result.statements.append(_planned(text, planned, table.name))
            break
        for i in refused:  # report each refused clause; plan the others again without them
            result.statements.append(
                DiffStatement(f"ALTER TABLE {table.name} {clauses[i]}", REJECTED, planned.alter.clauses[i].reason, table.name)
            )
        clauses = [c for i, c in enumerate(clauses) if i not in refused]


def write_diff(session, directory: pathlib.Path, desired_path: pathlib.Path) -> str:
    """`alterflow migrate diff --to FILE`: write the next migration file with the statements that
    take the catalog to FILE (none when nothing differs or every one is rejected); return the plan
    of each, the notes and a summary line."""
    result = diff_schema(session.catalog, directory, desired_path, session.warehouse)
    if not result.written:
        return result.report(None)
    text, _starts = result.file_text()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / result.script
    try:
        with path.open("x", encoding="utf-8") as out:  # "x": never over a file another process just wrote
            out.write(text)
    except FileExistsError:
        raise DiffError(f"{escaped(str(path))} appeared while the diff ran; run it again") from None
    return result.report(path)
