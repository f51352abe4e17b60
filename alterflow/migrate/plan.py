"""Every pending statement planned in order, changing nothing (docs/migrations.md, `migrate lint`).

The catalog is read once for all the tables the statements name (`Catalog.alter_contexts`), and
a table's size only when a rewrite of it is planned; what the statements before change is kept in
memory (`NextSchema`): each ALTER is planned by the same planner as `alterflow sql` against the
version the pending statements before it leave, a CREATE TABLE adds a table, a DROP removes it,
views are tracked with the columns they use. Column ids carry over as the catalog would give them,
so a later statement finds a column an earlier one renamed by its id.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
from dataclasses import dataclass, field

from alterflow import sql as ast
from alterflow.catalog.catalog import Catalog
from alterflow.catalog.catalog_errors import UnknownObject
from alterflow.catalog.repeatable_history import RepeatableHistory
from alterflow.catalog.schema import SchemaVersion, name_key
from alterflow.errors import UserError
from alterflow.migrate.migration_files import FileStatement, MigrationFile, RepeatableFile
from alterflow.migrate.repeatable import created_views, parse_repeatable, refusal
from alterflow.planner import AlterPlan, AlterRejected, CreateTableRejected, TableContext, Verdict, plan_alter, plan_create_table

LIGHT, HEAVY, REJECTED, DATA = "LIGHT", "HEAVY", "REJECTED", "DATA"
ALLOWED = (ast.CreateTable, ast.DropTable, ast.AlterTable, ast.CreateView, ast.DropView, ast.Insert)


@dataclass
class _Table:
    name: str
    table_id: int | None  # None: created by a pending statement
    context: TableContext  # its current version and next column id after the pending statements so far
    catalog_version: SchemaVersion | None  # today's version in the catalog (what its files are read as)
    stats: tuple[int, int] | None = None  # (rows, bytes) today, read when a rewrite of it is planned
    changed_types: bool = False  # a pending statement before rewrote it


@dataclass(frozen=True)
class StatementPlan:
    file: MigrationFile | RepeatableFile
    statement: FileStatement
    kind: str  # LIGHT, HEAVY, REJECTED, DATA (an INSERT)
    reason: str
    table: str | None = None
    rows: int = 0  # rows a rewrite reads today (HEAVY)
    bytes: int = 0
    dropped_columns: tuple[str, ...] = ()
    renamed_columns: tuple[tuple[str, str], ...] = ()  # (old name, new name) of each column it renames
    views_reading_renamed: tuple[str, ...] = ()  # views (in the catalog or pending) that use a renamed column
    dropped_table: bool = False
    guarded: bool = False  # an ALTER with PROPERTIES ("expected_version" = ...)
    alter: AlterPlan | None = None
    catalog_version: SchemaVersion | None = None  # the table's version in the catalog today
    table_id: int | None = None

    @property
    def script(self) -> str:
        return self.file.script


@dataclass
class NextSchema:
    """The catalog's tables and views as the pending statements planned so far leave them."""

    catalog: Catalog
    warehouse: pathlib.Path | None = None
    tables: dict[str, _Table | None] = field(default_factory=dict)  # name key -> table, None: absent
    # name key -> (table key, column id) it reads (column id None: the table itself); None: absent
    views: dict[str, set[tuple[str, int | None]] | None] = field(default_factory=dict)
    _next_new_id: int = -1

    def table(self, name: str) -> _Table | None:
        key = name_key(name)
        if key not in self.tables:
            self.tables[key] = self._read_table(name)
        return self.tables[key]

    def _read_table(self, name: str) -> _Table | None:
        try:
            return self._table_of(self.catalog.alter_context(name))
        except UnknownObject:
            return None

    def read_tables(self, names: set[str]) -> None:
        """Read the named tables not read yet, all at once (what `table` reads one at a time)."""
        wanted = {name_key(n) for n in names} - set(self.tables)
        contexts = self.catalog.alter_contexts(wanted)
        for key in wanted:
            self.tables[key] = self._table_of(contexts[key]) if key in contexts else None

    def _table_of(self, context) -> _Table:
        from alterflow.workflow.alter_steps import planner_context

        planner = planner_context(self.catalog, context, context.current, self.warehouse)
        return _Table(context.table.name, context.table.id, planner, context.current)

    def _stats(self, table: _Table) -> tuple[int, int]:
        """(rows, bytes) a rewrite of `table` reads today; read once, and only for a rewrite."""
        if table.table_id is None:
            return 0, 0
        if table.stats is None:
            table.stats = self.catalog.table_stats(table.table_id)
        return table.stats

    def view_exists(self, name: str) -> bool:
        key = name_key(name)
        if key not in self.views:
            self.views[key] = set() if self.catalog.object_kind(name) == "view" else None
        return self.views[key] is not None

    def object_exists(self, name: str) -> bool:
        return self.table(name) is not None or self.view_exists(name)

    def views_of(self, table_key: str) -> dict[int, tuple[str, ...]]:
        """Column id -> views created by pending statements that use it."""
        uses: dict[int, list[str]] = {}
        for view, columns in self.views.items():
            for key, column_id in columns or ():
                if key == table_key and column_id is not None:
                    uses.setdefault(column_id, []).append(view)
        return {cid: tuple(names) for cid, names in uses.items()}

    # -- planning one statement ------------------------------------------------------------------
    def plan(self, file: MigrationFile, statement: FileStatement) -> StatementPlan:
        def result(kind: str, reason: str, **more) -> StatementPlan:
            return StatementPlan(file, statement, kind, reason, **more)

        try:
            parsed = ast.parse_statements(statement.text)
        except ast.SqlError as exc:
            return result(REJECTED, str(exc))
        if len(parsed) != 1:
            return result(REJECTED, "not one statement")
        stmt = parsed[0]
        if isinstance(stmt, ast.AlterTable) and stmt.explain:
            return result(REJECTED, "EXPLAIN is not allowed in a migration: a migration changes schemas; run EXPLAIN with alterflow sql")
        if not isinstance(stmt, ALLOWED):
            what = type(stmt).__name__
            return result(
                REJECTED,
                f"{what} is not allowed in a migration: use CREATE/DROP TABLE, ALTER TABLE, CREATE/DROP VIEW or INSERT",
            )
        return self.plan_parsed(stmt, result)

    def plan_parsed(self, stmt, result) -> StatementPlan:
        """The plan of one parsed statement of an ALLOWED class; a refusal is a REJECTED plan."""
        try:
            return self._plan_statement(stmt, result)
        except (AlterRejected, CreateTableRejected, UserError) as exc:
            return result(REJECTED, str(exc))

    @functools.singledispatchmethod
    def _plan_statement(self, stmt, result) -> StatementPlan:
        """The plan of one statement of an ALLOWED class: one method per AST class, registered below."""
        raise TypeError(f"no plan for {type(stmt).__name__}")

    @_plan_statement.register(ast.CreateTable)
    def _create_table(self, stmt: ast.CreateTable, result) -> StatementPlan:
        if self.object_exists(stmt.name):
            if stmt.if_not_exists and self.table(stmt.name) is not None:
                return result(LIGHT, f"table {stmt.name} exists, skipped", table=stmt.name)
            return result(REJECTED, f"CREATE TABLE {stmt.name}: a table or view named {stmt.name} already exists", table=stmt.name)
        version, next_id = plan_create_table(stmt, self._next_new_id)
        version = dataclasses.replace(version, statement=stmt.sql)
        context = TableContext(name=stmt.name, current=version, next_column_id=next_id)
        self.tables[name_key(stmt.name)] = _Table(stmt.name, None, context, None)
        self._next_new_id -= 1
        return result(LIGHT, f"new table {stmt.name} ({len(version.columns)} columns): metadata only", table=stmt.name)

    @_plan_statement.register(ast.DropTable)
    def _drop_table(self, stmt: ast.DropTable, result) -> StatementPlan:
        table = self.table(stmt.name)
        if table is None:
            if stmt.if_exists:
                return result(LIGHT, f"table {stmt.name} does not exist, skipped", table=stmt.name)
            return result(REJECTED, f"DROP TABLE {stmt.name}: unknown table {stmt.name}", table=stmt.name)
        key = name_key(stmt.name)
        pending = {view for view, reads in self.views.items() if reads and any(k == key for k, _cid in reads)}
        existing = set(self.catalog.views_reading_table(table.table_id)) if table.table_id is not None else set()
        views = sorted(pending | {v for v in existing if self.view_exists(v)})
        if views:
            return result(REJECTED, f"cannot drop table {table.name}: view {', '.join(views)} uses it", table=table.name)
        self.tables[name_key(stmt.name)] = None
        return result(
            LIGHT,
            f"table {table.name} dropped: metadata only, its files are kept for the retention period",
            table=table.name,
            dropped_table=True,
            table_id=table.table_id,
        )

    @_plan_statement.register(ast.AlterTable)
    def _alter_table(self, stmt: ast.AlterTable, result) -> StatementPlan:
        table = self.table(stmt.table)
        if table is None:
            return result(REJECTED, f"ALTER TABLE {stmt.table}: unknown table {stmt.table}", table=stmt.table)
        context = table.context
        pending_uses = self.views_of(name_key(stmt.table))
        if pending_uses:
            merged = dict(context.view_uses)
            for cid, names in pending_uses.items():
                merged[cid] = (*merged.get(cid, ()), *names)
            context = dataclasses.replace(context, view_uses=merged)
        plan = plan_alter(context, stmt)
        guarded = "expected_version" in {k.lower() for k in stmt.properties}
        if plan.rejected:
            return result(REJECTED, plan.rejection or "rejected", table=table.name, guarded=guarded, alter=plan)
        if plan.properties.postpone_swap:
            return result(
                REJECTED,
                f'ALTER TABLE {table.name}: PROPERTIES ("postpone_swap" = "true") is not allowed in a migration: apply runs each statement to its end',
                table=table.name,
            )
        dropped = tuple(plan.old.column_by_id(c.id).name for c in plan.old.columns if plan.new.column_by_id(c.id) is None)
        renamed, renamed_readers = self._renames(plan, context)
        # The next statement plans against the new version; the job this one leaves unfinished
        # (none: the apply waits for each statement's job to end) does not block it.
        table.context = dataclasses.replace(
            table.context,
            current=plan.new,
            next_column_id=plan.next_column_id,
            active_job=None,
            versions=_with_version(table.context, plan.new),
        )
        heavy = plan.kind is Verdict.HEAVY
        reason = "; ".join(f"{c.text}: {c.reason}" for c in plan.clauses)
        rows, nbytes = self._stats(table) if heavy else (0, 0)
        made = result(
            HEAVY if heavy else LIGHT,
            reason,
            table=table.name,
            rows=rows,
            bytes=nbytes,
            dropped_columns=dropped,
            renamed_columns=renamed,
            views_reading_renamed=renamed_readers,
            guarded=guarded,
            alter=plan,
            catalog_version=table.catalog_version,
            table_id=table.table_id,
        )
        if heavy:
            table.changed_types = True
        return made

    def _renames(self, plan: AlterPlan, context: TableContext) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
        """(old, new) name of each column `plan` renames, and the live views (in the catalog, or
        created by a pending statement and not dropped by one) that use one of them."""
        renamed = []
        for column in plan.new.columns:
            before = plan.old.column_by_id(column.id)
            if before is not None and before.name != column.name:
                renamed.append((column.id, before.name, column.name))
        views = {view for cid, _old, _new in renamed for view in context.view_uses.get(cid, ())}
        live = sorted((v for v in views if self.view_exists(v)), key=str.lower)
        return tuple((old, new) for _cid, old, new in renamed), tuple(live)

    @_plan_statement.register(ast.CreateView)
    def _create_view(self, stmt: ast.CreateView, result) -> StatementPlan:
        from alterflow.sql.view_columns import columns_used

        if self.object_exists(stmt.name):
            return result(REJECTED, f"CREATE VIEW {stmt.name}: a table or view named {stmt.name} already exists")
        uses: set[tuple[str, int | None]] = set()
        for name in stmt.tables:
            table = self.table(name)
            if table is not None:
                uses.add((name_key(name), None))
                current = table.context.current
                used = [c.id for c in current.columns] if stmt.unparsed else columns_used(stmt.query, current)
                uses.update((name_key(name), cid) for cid in used)
            elif not self.view_exists(name) and not stmt.unparsed:
                return result(REJECTED, f"CREATE VIEW {stmt.name}: unknown table or view {name}")
        self.views[name_key(stmt.name)] = uses
        if stmt.unparsed:  # its words that name tables count as read, every column of them
            return result(
                LIGHT, f"new view {stmt.name}: metadata only (alterflow's parser cannot read its query: Spark parses it when it is created)"
            )
        return result(LIGHT, f"new view {stmt.name}: metadata only (its query is analysed when it is created)")

    @_plan_statement.register(ast.DropView)
    def _drop_view(self, stmt: ast.DropView, result) -> StatementPlan:
        if not self.view_exists(stmt.name):
            if stmt.if_exists:
                return result(LIGHT, f"view {stmt.name} does not exist, skipped")
            return result(REJECTED, f"DROP VIEW {stmt.name}: unknown view {stmt.name}")
        self.views[name_key(stmt.name)] = None
        return result(LIGHT, f"view {stmt.name} dropped: metadata only")

    @_plan_statement.register(ast.Insert)
    def _insert(self, stmt: ast.Insert, result) -> StatementPlan:
        table = self.table(stmt.table)
        if table is None:
            return result(REJECTED, f"INSERT INTO {stmt.table}: unknown table {stmt.table}", table=stmt.table)
        names = {name_key(c.name) for c in table.context.current.columns}
        missing = [c for c in stmt.columns or () if name_key(c) not in names]
        if missing:
            return result(REJECTED, f"INSERT INTO {table.name}: unknown column {missing[0]}", table=table.name)
        what = f"{len(stmt.rows)} row(s)" if stmt.rows is not None else "the rows of a query"
        return result(DATA, f"a load of {what} into {table.name}, one transaction", table=table.name)


def _with_version(context: TableContext, version: SchemaVersion):
    """`context.versions` plus the pending `version` (REVERT TO VERSION may name it)."""
    earlier = context.versions

    def versions(number: int) -> SchemaVersion | None:
        return version if number == version.version else earlier(number)

    return versions


def plan_pending(
    catalog: Catalog,
    files: list[MigrationFile],
    warehouse: pathlib.Path | None = None,
    done: frozenset[tuple[str, int]] = frozenset(),
    repeatables: list[RepeatableFile] = (),
) -> list[StatementPlan]:
    """Every statement of `files` not in `done` ((version, position) of statements a partly
    applied file already ran), in order, planned against the schema the ones before leave; then
    every statement of the `repeatables` (`alterflow.migrate.repeatable`), after them."""
    schema = NextSchema(catalog, warehouse)
    pending = [(file, statement) for file in files for statement in file.statements if (file.version, statement.position) not in done]
    schema.read_tables(_tables_named(statement.text for _file, statement in pending))
    plans = [schema.plan(file, statement) for file, statement in pending]
    for file in repeatables:
        plans.extend(plan_repeatable(schema, file))
    return plans


def _tables_named(texts) -> set[str]:
    """The tables the statements name (a statement that does not parse names none: `plan` says why)."""
    names = set()
    for text in texts:
        try:
            parsed = ast.parse_statements(text)
        except ast.SqlError:
            continue
        for stmt in parsed:
            if isinstance(stmt, ast.AlterTable | ast.Insert):
                names.add(stmt.table)
            elif isinstance(stmt, ast.CreateTable | ast.DropTable):
                names.add(stmt.name)
    return names


def plan_repeatable(schema: NextSchema, file: RepeatableFile) -> list[StatementPlan]:
    """Every statement of a repeatable file (`alterflow.migrate.repeatable`) planned on `schema`
    (after the pending versioned statements), as an application runs it: the file's existing views dropped first, then each
    statement in order."""
    history = RepeatableHistory(schema.catalog)
    mine = {name_key(n) for n in created_views(file)}
    replaced: set[str] = set()
    blocked: dict[str, str] = {}
    for name in created_views(file):
        if not schema.view_exists(name):
            continue
        others = [v for v in history.views_using_view(name) if name_key(v) not in mine]
        if others:
            blocked[name_key(name)] = (
                f"view {name} cannot be replaced: view {', '.join(others)} uses it and is not made by this file "
                "(make both in one repeatable file, or drop it first)"
            )
        else:
            schema.views[name_key(name)] = None  # dropped by the application before its statements
            replaced.add(name_key(name))
    plans = []
    for statement in file.statements:

        def result(kind: str, reason: str, statement: FileStatement = statement, **more) -> StatementPlan:
            return StatementPlan(file, statement, kind, reason, **more)

        try:
            stmt = parse_repeatable(statement.text)
        except ast.SqlError as exc:
            plans.append(result(REJECTED, str(exc)))
            continue
        why = refusal(stmt)
        if why is None and isinstance(stmt, ast.CreateView):
            why = blocked.get(name_key(stmt.name))
        if why is not None:
            plans.append(result(REJECTED, why))
            continue
        plan = schema.plan_parsed(stmt, result)
        if plan.kind == DATA:
            table = schema.table(stmt.table)
            if not table.context.current.primary_key:
                plan = result(
                    REJECTED,
                    f"INSERT INTO {table.name}: the table has no primary key, so each run would add the rows again; put it in a versioned file",
                    table=table.name,
                )
            else:
                plan = result(
                    DATA, f"an upsert of {len(stmt.rows)} row(s) into {table.name} by primary key, one transaction", table=table.name
                )
        elif isinstance(stmt, ast.CreateView) and plan.kind != REJECTED and name_key(stmt.name) in replaced:
            plan = result(
                plan.kind, f"view {stmt.name} replaced: dropped and created again, pinned to today's table versions; metadata only"
            )
        plans.append(plan)
    return plans
