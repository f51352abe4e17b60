"""`Session`: runs parsed statements against the catalog, the tablet store and Spark.

Spark is started only by statements that need it: a query (SELECT, INSERT ... SELECT, CREATE
VIEW's check) that the local engine does not run (`alterflow.query`: over the threshold, or a
construct only Spark answers), a heavyweight ALTER that converts on Spark; DDL, INSERT ... VALUES,
ALTER, DESCRIBE and SHOW are catalog work and Arrow writes only. Arrow itself is
imported by the statements that write or convert rows only: a lightweight ALTER, DESCRIBE or SHOW
imports neither pyarrow nor pandas (tests/cli/test_cli_imports.py pins what it imports).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import pathlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from alterflow import sql as ast
from alterflow.catalog.catalog_errors import CatalogLost, LoadOvertaken
from alterflow.catalog.records import ViewDependency, utcnow
from alterflow.catalog.schema import SchemaVersion
from alterflow.catalog.snapshot_reads import SnapshotReads, sqlite_snapshot_reads
from alterflow.catalog.states import Engine, JobState
from alterflow.errors import UserError, first_line, out_of_room, shown
from alterflow.load.bad_rows import BadRows
from alterflow.object_store import ObjectStoreLocation
from alterflow.results import Done, Result, ResultSet
from alterflow.settings import Settings
from alterflow.sql.parser import check_name
from alterflow.sql.quoting import quote_string
from alterflow.values.types import format_value
from alterflow.workflow.request import AlterRequest

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

    from alterflow.catalog.catalog import Catalog
    from alterflow.load.inputs import LoadInput
    from alterflow.load.load_once import LoadOnce
    from alterflow.load.local_load import LoadResult


class StatementError(UserError):
    """A statement failed; the message is the one line the user sees."""


# The columns of SHOW ALTER TABLE COLUMN, one row a job.
SHOW_ALTER_COLUMNS = (
    "JobId",
    "TableName",
    "CreateTime",
    "FinishTime",
    "Kind",
    "SchemaVersion",
    "TransactionId",
    "State",
    "Msg",
    "Progress",
    "Timeout",
)


def default_sql(value, dtype) -> str:
    """A default as SQL: quoted unless it is a number or a boolean."""
    text = format_value(value, dtype)
    return text if dtype.is_number or dtype.name == "BOOLEAN" else quote_string(text)


def column_text(version: SchemaVersion) -> str:
    parts = []
    for c in version.columns:
        text = f"{c.name} {c.type.sql()}{'' if c.nullable else ' NOT NULL'}"
        if c.write_default is not None:
            text += f" DEFAULT {default_sql(c.write_default, c.type)}"
        parts.append(text)
    return ", ".join(parts)


class Session:
    def __init__(self, settings: Settings | None = None, catalog: Catalog | None = None):
        self.settings = settings or Settings.from_env()
        self._catalog = catalog
        # A query on a SQLite catalog binds its names through sqlite3 (`catalog/snapshot_reads.py`):
        # the Catalog, with SQLAlchemy, is opened by the first statement that writes or plans. Any
        # other URL (or a SQLite catalog that needs creating or migrating) opens it now, so that a
        # bad URL is refused here as before, and leaves no folder behind.
        with self.settings.dirs_for_catalog():
            self._reads = sqlite_snapshot_reads(self.settings.catalog_url) if catalog is None else None
            if catalog is None and self._reads is None:
                self._catalog = self.catalog
        self.warehouse: pathlib.Path = self.settings.warehouse
        self.query_engine = self.settings.query_engine  # SET engine = ... changes it
        self.alter_request: AlterRequest | None = None  # the last ALTER's request

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            from alterflow.catalog.catalog import Catalog

            self._catalog = Catalog(self.settings.catalog_url)
        return self._catalog

    @property
    def catalog_opened(self) -> bool:
        """Whether the Catalog is open: every write goes through it, so until then nothing was written."""
        return self._catalog is not None

    @property
    def reads(self) -> SnapshotReads:
        """The catalog reads that bind a query's names: the Catalog once it is open, else sqlite3's."""
        return self._catalog if self._catalog is not None else self._reads

    # -- entry points -------------------------------------------------------------------------
    def run(self, text: str) -> Iterator[Result]:
        """Run each statement of `text` in order, yielding its result; stops at the first error."""
        try:
            statements = ast.parse_statements(text)
        except ast.SqlError as exc:
            raise StatementError(str(exc)) from None
        for statement in statements:
            yield self.execute(statement)

    def execute(self, statement: ast.Statement, request_id: str | None = None) -> Result:
        """Run one statement. `request_id` (a migration's statement, `alterflow.migrate.apply`) is
        the idempotency key it runs under: an ALTER's job request (and DAG run id), an INSERT's
        transaction label, so a run that is killed can be found again."""
        try:
            if request_id is not None and isinstance(statement, ast.AlterTable | ast.Insert):
                return self._run(statement, request_id)
            return self._run(statement)
        except (StatementError, CatalogLost):  # CatalogLost: a passing state, which an Airflow task retries
            raise
        except UserError as exc:  # every refusal, worded by the layer that refused
            raise StatementError(str(exc)) from None
        except RecursionError:  # an expression the parser's limits let through, too deep for a layer below
            raise StatementError("expression too deep: too many nested operations to evaluate") from None
        except Exception as exc:
            if _is_spark_error(exc):  # Spark's analysis of the user's query: its first line
                raise StatementError(first_line(exc)) from None
            raise

    @functools.singledispatchmethod
    def _run(self, statement, *_request_id) -> Result:
        """The statement's handler: one method per AST class, registered below."""
        raise StatementError(f"unsupported statement {type(statement).__name__}")

    @property
    def spark(self):
        from alterflow.spark_session import get_spark

        return get_spark(self.settings)

    # -- tables -------------------------------------------------------------------------------
    @_run.register(ast.CreateTable)
    def _create_table(self, stmt: ast.CreateTable) -> Result:
        from alterflow.planner import plan_create_table  # each statement imports what it runs: a query none of this

        def build(table_id: int):
            version, next_id = plan_create_table(stmt, table_id)
            return dataclasses.replace(version, statement=_statement_text(stmt)), next_id

        from alterflow.store.warehouse_kinds import open_warehouse

        # The table's files will go to the warehouse: it must be this catalog's (claimed when it
        # proves to be), before the catalog records a table (docs/gc.md, "Claims need proof").
        open_warehouse(self.warehouse, self.catalog).check_owner()
        created = self.catalog.create_table(stmt.name, build, _statement_text(stmt), stmt.if_not_exists)
        return Done(f"CREATE TABLE {stmt.name}" if created else f"table {stmt.name} exists, skipped")

    @_run.register(ast.DropTable)
    def _drop_table(self, stmt: ast.DropTable) -> Result:
        dropped = self.catalog.drop_table(stmt.name, stmt.if_exists)
        if dropped is None:
            return Done(f"table {stmt.name} does not exist, skipped")
        # Its files stay for the retention period (a query that planned before the drop still
        # reads them); GC then drops its retired indexes and deletes them (docs/gc.md).
        return Done(f"DROP TABLE {stmt.name}")

    @_run.register(ast.Describe)
    def _describe(self, stmt: ast.Describe) -> Result:
        if self.catalog.object_kind(stmt.table) == "view":
            raise StatementError(f"DESCRIBE {stmt.table}: {stmt.table} is a view; DESCRIBE takes a table")
        _info, version = self.catalog.current_schema(stmt.table)
        rows = tuple(
            (
                c.name,
                c.type.sql(),
                "YES" if c.nullable else "NO",
                "true" if c.id in version.primary_key else "false",
                None if c.write_default is None else format_value(c.write_default, c.type),
            )
            for c in version.columns
        )
        return ResultSet(("Field", "Type", "Null", "Key", "Default"), rows)

    # -- loads --------------------------------------------------------------------------------
    @_run.register(ast.Insert)
    def _insert(self, stmt: ast.Insert, label: str | None = None) -> Result:
        info, version = self.catalog.current_schema(stmt.table)
        label = label or f"insert into {info.name}"
        if stmt.rows is not None:
            from alterflow.load.rows import rows_from_literals

            data = rows_from_literals(version, info.name, stmt.columns, stmt.rows)
            return self.load(info.name, data, label=label)
        select = ast.parse_statements(stmt.query)[0]
        names = list(stmt.columns if stmt.columns is not None else (c.name for c in version.columns))
        local = self._local_query(select.sql, self.query_names(select))
        if local is not None:  # converted and written as a load of the query's rows
            if len(names) != len(local.names):
                raise StatementError(f"INSERT INTO {info.name}: {len(names)} columns are named but the query returns {len(local.names)}")
            try:
                return self.load(info.name, local.table.rename_columns(names), label, by_name=True)
            except BadRows as exc:
                raise StatementError(str(exc)) from None
        # On Spark, Spark tasks convert and write the result; nothing is collected here.
        from alterflow.load.spark_load import query_result, spark_load

        def write(frame):
            return spark_load(
                self.spark,
                self.catalog,
                self.warehouse,
                info,
                version,
                query_result(info, frame, names),
                label,
                self.settings,
            )

        _frame, result = self._read(select.sql, self.query_names(select), write)
        return Done(f"{result.rows} rows loaded into {info.name} (transaction {result.txn_id})")

    def load(self, table: str, data: pa.Table, label: str, by_name: bool = False) -> Result:
        """One transaction writing `data` into `table` (by_name: match columns by name, for bulk loads)."""
        return self.load_batches(table, [data], label, by_name)

    def load_batches(self, table: str, batches: Iterable[pa.Table | pa.RecordBatch], label: str, by_name: bool = True) -> Result:
        """One transaction writing a stream of batches into `table`, converted batch by batch
        (by_name: columns matched by name and converted to the table's types)."""
        result = self.load_result(table, batches, label, by_name)
        return Done(f"{result.rows} rows loaded into {self.catalog.table(table).name} (transaction {result.txn_id})")

    def load_result(self, table: str, batches: Iterable[pa.Table | pa.RecordBatch], label: str, by_name: bool = True) -> LoadResult:
        """`load_batches`, returning what was written (the Python API's `Table.append`). Batches
        given as a list or tuple (data in memory) are written again, to the table as it now is, when
        a heavyweight ALTER overtook the load (`LoadOvertaken`: nothing of it committed), up to
        LOAD_OVERTAKEN_TRIES times in all, as a load of files is; a one-pass stream cannot be."""
        tries = LOAD_OVERTAKEN_TRIES if isinstance(batches, list | tuple) else 1
        for _try in range(tries - 1):
            try:
                return self._load_result_once(table, batches, label, by_name)
            except LoadOvertaken:
                continue  # nothing of it committed: written again
        return self._load_result_once(table, batches, label, by_name)

    def _load_result_once(self, table: str, batches: Iterable[pa.Table | pa.RecordBatch], label: str, by_name: bool) -> LoadResult:
        from alterflow.load.local_load import load_batches
        from alterflow.load.rows import rows_from_arrow

        info, version = self.catalog.current_schema(table)
        conform = None
        if by_name:

            def conform(batch: pa.Table, first_row: int) -> pa.Table:
                return rows_from_arrow(version, info.name, batch, first_row=first_row)

        return load_batches(
            self.catalog,
            self.warehouse,
            info,
            version,
            batches,
            label,
            self.settings.txn_timeout_s,
            self.settings.lease_s,
            conform=conform,
            target_file_mb=self.settings.target_file_mb,
            buffer_mb=self.settings.load_buffer_mb,
        )

    def load_input(self, table: str, source: LoadInput, label: str, engine: str = "auto") -> Result:
        """`alterflow load`: one transaction loading every file of `source`, streamed through Arrow
        in this process or, for big inputs (`engine` auto) or on request (`spark`), through Spark."""
        result = self.load_input_result(table, source, label, engine)
        return Done(f"{result.rows} rows loaded into {self.catalog.table(table).name} (transaction {result.txn_id})")

    def load_input_result(self, table: str, source: LoadInput, label: str, engine: str = "auto") -> LoadResult:
        """`load_input`, returning what was written (the Airflow layer's `AlterflowLoadOperator`).
        A load whose commit a heavyweight ALTER refused, having started or swapped after the load
        chose where to write (`LoadOvertaken`: nothing of it committed), reads its files again and
        writes to the table as it now is, up to LOAD_OVERTAKEN_TRIES times in all."""
        for _try in range(LOAD_OVERTAKEN_TRIES - 1):
            try:
                return self._load_input_result_once(table, source, label, engine)
            except LoadOvertaken:
                continue  # nothing of it committed: its files are read again
        return self._load_input_result_once(table, source, label, engine)

    def _load_input_result_once(self, table: str, source: LoadInput, label: str, engine: str) -> LoadResult:
        if engine not in LOAD_ENGINES:
            raise StatementError(f"load: unknown engine {shown(engine)}; use one of {', '.join(LOAD_ENGINES)}")
        try:
            check_name(table)  # a name as a statement would take it (and a huge one shortened in the line)
        except ast.SqlError as exc:
            raise StatementError(f"load: {exc}") from None
        big = source.size >= self.settings.spark_load_mb << 20
        if engine == Engine.SPARK or (engine == Engine.AUTO and big and not isinstance(self.warehouse, ObjectStoreLocation)):
            from alterflow.load.spark_load import input_files, spark_load

            info, version = self.catalog.current_schema(table)
            try:
                result = spark_load(
                    self.spark,
                    self.catalog,
                    self.warehouse,
                    info,
                    version,
                    input_files(self.spark, info, source),
                    label,
                    self.settings,
                )
            except BadRows as exc:
                raise StatementError(str(exc)) from None
            return result
        try:
            return self.load_result(table, source.batches(), label)
        except BadRows as exc:
            raise StatementError(str(exc)) from None

    def load_input_once(self, table: str, source: LoadInput, label: str, engine: str = "auto") -> LoadOnce:
        """`load_input_result` under a label the caller chose, once: a load of `table` whose
        transaction carries `label` and committed already makes this write nothing (Doris's load
        labels; docs/semantics.md#bad-input for what a label may hold)."""
        from alterflow.load.load_once import load_once

        table_id = self.catalog.table(table).id  # an unknown table: one line, before the label is looked for

        def write() -> tuple[int, int]:
            done = self.load_input_result(table, source, label, engine)
            return done.txn_id, done.rows

        return load_once(self.catalog, table_id, label, write)

    # -- queries and views --------------------------------------------------------------------
    def engine_choice(self, sql: str, names: tuple[str, ...]):
        """Which engine runs the query, and why (`alterflow.query.engine_choice`)."""
        from alterflow.query.engine_choice import choose_query_engine

        return choose_query_engine(self.reads, sql, names, self.query_engine)

    def _local_query(self, sql: str, names: tuple[str, ...], as_rows: bool = False):
        """The query's rows from the local engine (`LocalResult`), or None where Spark runs it.
        Files a snapshot read are deleted only after the retention period; a file compaction
        replaced and GC deleted meanwhile makes the query plan again, as on Spark."""
        from alterflow.query.local_engine import LocalQueryError, SparkNeeded, run_local

        attempt = 1
        while True:
            choice = self.engine_choice(sql, names)
            if choice.engine != Engine.LOCAL:
                return None
            try:
                return run_local(self.warehouse, choice.plan, as_rows)
            except LocalQueryError as exc:
                raise StatementError(str(exc)) from None
            except SparkNeeded as exc:
                if self.query_engine == Engine.LOCAL:
                    raise StatementError(f"engine = local cannot run this query: {exc}; SET engine = auto lets Spark run it") from None
                return None
            except FileNotFoundError as exc:
                if attempt >= READ_ATTEMPTS:
                    raise StatementError(f"a data file the query read is gone: {first_line(exc)}") from None
            attempt += 1

    def _query(self, sql: str, names: tuple[str, ...]):
        from alterflow.read.query_binding import run_query

        return run_query(self.spark, self.catalog, self.warehouse, sql, names)

    def _read(self, sql: str, names: tuple[str, ...], fetch):
        """(frame, fetch(frame)) of a query over a snapshot of the catalog. Compaction may replace
        and delete a file of that snapshot while the query runs (GC is not held back by readers):
        the query is then planned again on a new snapshot, up to READ_ATTEMPTS times."""
        attempt = 1
        while True:
            frame = self._query(sql, names)
            try:
                return frame, fetch(frame)
            except Exception as exc:
                if attempt >= READ_ATTEMPTS or not _file_vanished(exc):
                    raise
            attempt += 1

    def query_names(self, stmt: ast.Query | ast.CreateView) -> tuple[str, ...]:
        """The catalog objects a query reads; for a query sqlglot could not parse, those of its
        words that name one (binding an extra table for Spark is harmless)."""
        if not stmt.unparsed:
            return stmt.tables
        return tuple(name for name in stmt.tables if self.catalog.object_kind(name) is not None)

    @_run.register(ast.Select)
    def _select(self, stmt: ast.Select) -> Result:
        names = self.query_names(stmt)
        local = _in_date_range(lambda: self._local_query(stmt.sql, names, as_rows=True))
        if local is not None:
            return ResultSet(local.names, local.rows, tuple(str(t) for t in local.types))
        frame, collected = self._read(stmt.sql, names, lambda f: _in_date_range(f.collect))
        # LARGEINT is a DECIMAL(38,0) inside Spark; columns read straight from a table say so in
        # their metadata, and come back as integers.
        integral = [f.metadata.get("alterflow.type") == "LARGEINT" for f in frame.schema.fields]
        rows = tuple(tuple(int(v) if flag and v is not None else v for v, flag in zip(row, integral)) for row in collected)
        types = tuple(f.dataType.simpleString() for f in frame.schema.fields)
        return ResultSet(tuple(frame.columns), rows, types)

    @_run.register(ast.ExplainSelect)
    def _explain_select(self, stmt: ast.ExplainSelect) -> Result:
        choice = self.engine_choice(stmt.sql, self.query_names(stmt))
        return ResultSet(("Engine", "Reason"), ((choice.engine, choice.reason),))

    @_run.register(ast.SetOption)
    def _set_option(self, stmt: ast.SetOption) -> Result:
        self.query_engine = stmt.value
        return Done(f"SET {stmt.name} = {stmt.value}")

    @_run.register(ast.CreateView)
    def _create_view(self, stmt: ast.CreateView) -> Result:
        from alterflow.sql.view_columns import columns_used

        tables = self._spark_view_tables(stmt) if stmt.unparsed else stmt.tables
        dependencies = []
        for name in tables:
            kind = self.catalog.object_kind(name)
            if kind == "table":
                info, version = self.catalog.current_schema(name)
                used = tuple(c.id for c in version.columns) if stmt.unparsed else columns_used(stmt.query, version)
                dependencies.append(ViewDependency(name, info.id, version.version, used))
            elif kind == "view":
                dependencies.append(ViewDependency(name, dep_view_id=self.catalog.view(name).id))
            else:
                raise StatementError(f"CREATE VIEW {stmt.name}: unknown table or view {name}")
        if self.catalog.object_kind(stmt.name) is not None:
            raise StatementError(f"CREATE VIEW {stmt.name}: a table or view named {stmt.name} already exists")
        from alterflow.query.spark_refusals import SparkRefusal

        try:  # analyse now: a broken query never becomes a view (one the local engine binds is sound)
            if self.engine_choice(stmt.query, tables).engine != Engine.LOCAL:
                _ = self._query(stmt.query, tables).schema
        except Exception as exc:
            if not (_is_spark_error(exc) or isinstance(exc, SparkRefusal)):  # Spark's line, from either engine
                raise
            raise StatementError(f"CREATE VIEW {stmt.name}: {first_line(exc)}") from None  # an AnalysisException
        self.catalog.create_view(stmt.name, stmt.query, dependencies)
        return Done(f"CREATE VIEW {stmt.name}")

    def _spark_view_tables(self, stmt: ast.CreateView) -> tuple[str, ...]:
        """The tables and views a query sqlglot cannot parse reads, as Spark's own parser finds
        them (the view records each, with every column of a table as read)."""
        from alterflow.read.query_binding import relation_names

        try:
            read = {name.lower() for name in relation_names(self.spark, stmt.query)}
        except Exception as exc:
            if not _is_spark_error(exc):
                raise
            raise StatementError(f"CREATE VIEW {stmt.name}: {first_line(exc)}") from None  # Spark's ParseException
        return tuple(name for name in self.query_names(stmt) if name.lower() in read)

    @_run.register(ast.DropView)
    def _drop_view(self, stmt: ast.DropView) -> Result:
        dropped = self.catalog.drop_view(stmt.name, stmt.if_exists)
        return Done(f"DROP VIEW {stmt.name}" if dropped else f"view {stmt.name} does not exist, skipped")

    # -- ALTER --------------------------------------------------------------------------------
    @_run.register(ast.AlterTable)
    def _alter_table(self, stmt: ast.AlterTable, request_id: str | None = None) -> Result:
        if stmt.explain:
            return self._explain(stmt)
        driver = self.alter_driver()
        request = driver.request(stmt.table, stmt.sql or _statement_text(stmt), request_id=request_id, parsed=stmt)
        self.alter_request = request  # an interrupted `alterflow sql` finds its job by it (cli/work_state.py)
        try:
            job = self._run_driven(driver, lambda: driver.run(request))
        except Exception as exc:
            reason = out_of_room(exc)
            if reason is None:
                raise
            raise StatementError(self._stopped_for_room(stmt.table, reason)) from None
        return Done(f"ALTER TABLE {stmt.table}: job {job.id} {job.state}, schema version {job.to_version}")

    def alter_driver(self):
        """The ALTER driver the settings choose (`alterflow.workflow.alter_driver`): this process's
        runner, or a DAG run of alterflow_schema_change with ALTERFLOW_AIRFLOW_URL."""
        from alterflow.workflow.alter_driver import alter_driver

        return alter_driver(self.catalog, self.warehouse, self.settings, lambda: self.spark)

    @staticmethod
    def _run_driven(driver, work):
        """`work()` of `driver`: through Airflow, Airflow's refusals (unreachable, a failed run)
        become the statement's line (the Airflow client is imported only then: a light ALTER
        here imports no HTTP client)."""
        if not driver.via_airflow:
            return work()
        from alterflow.airflow_client import AirflowRequestError

        try:
            return work()
        except AirflowRequestError as exc:
            raise StatementError(str(exc)) from None

    def _stopped_for_room(self, table: str, reason: str) -> str:
        """The line of an ALTER that a full disk (or a read-only one) stopped: its job, unfinished
        and resumable, or nothing committed."""
        open_jobs = [j for j in self.catalog.jobs(self.catalog.table(table).id) if j.state not in (JobState.FINISHED, JobState.CANCELLED)]
        if not open_jobs:
            return f"ALTER TABLE {table}: {reason}: nothing was committed; free space and run it again"
        job = open_jobs[-1]
        return (
            f"ALTER TABLE {table}: {reason}: job {job.id} stopped in {job.state} and nothing of it is visible; "
            f"free space and RESUME ALTER TABLE COLUMN FROM {table} (or CANCEL it)"
        )

    def _explain(self, stmt: ast.AlterTable) -> Result:
        from alterflow.workflow.explain import explain_alter

        return explain_alter(self.catalog, self.warehouse, stmt, lambda: self.spark)

    @_run.register(ast.ShowAlter)
    def _show_alter(self, stmt: ast.ShowAlter) -> Result:
        from alterflow.catalog.job_leases import is_orphaned, runner_text

        table_id = self.catalog.table(stmt.table).id if stmt.table else None
        now = utcnow()

        def msg(job) -> str:  # an orphaned job says so first (docs/heavyweight.md)
            if not is_orphaned(job, now):
                return job.msg
            return runner_text(job, now) + (f"; {job.msg}" if job.msg else "")

        rows = tuple(
            (
                job.id,
                job.table_name,
                _time(job.created_at),
                _time(job.finished_at),
                job.kind,
                job.to_version,
                job.boundary_txn,
                job.state,
                msg(job),
                job.progress,
                job.timeout_s,
            )
            for job in self.catalog.jobs(table_id)
        )
        return ResultSet(SHOW_ALTER_COLUMNS, rows)

    @_run.register(ast.ShowSchemaVersions)
    def _show_schema_versions(self, stmt: ast.ShowSchemaVersions) -> Result:
        info = self.catalog.table(stmt.table)
        rows = tuple((v.version, _time(v.created_at), v.statement, column_text(v)) for v in self.catalog.schema_versions(info.id))
        return ResultSet(("Version", "CreateTime", "Statement", "Columns"), rows)

    @_run.register(ast.CancelAlter)
    def _cancel_alter(self, stmt: ast.CancelAlter) -> Result:
        from alterflow.workflow import job_control

        name = self.catalog.table(stmt.table).name
        try:
            job = job_control.cancel_table_job(self.catalog, self.warehouse, stmt.table, "cancelled by CANCEL ALTER TABLE COLUMN")
        except job_control.JobControlRefused as exc:
            raise StatementError(f"CANCEL ALTER TABLE COLUMN FROM {name}: {exc}") from None
        return Done(f"CANCEL ALTER TABLE COLUMN FROM {name}: job {job.id} CANCELLED")

    @_run.register(ast.ResumeAlter)
    def _resume_alter(self, stmt: ast.ResumeAlter) -> Result:
        """A postponed swap, or an orphaned job taken over and driven to its end: in this process,
        or, with ALTERFLOW_AIRFLOW_URL, as a DAG run of the same statement (which takes it over)."""
        from alterflow.workflow import job_control

        name = self.catalog.table(stmt.table).name
        try:
            job = job_control.table_job_to_resume(self.catalog, stmt.table)
            driver = self.alter_driver()
            job = self._run_driven(driver, lambda: driver.resume_job(job))
        except job_control.JobControlRefused as exc:
            raise StatementError(f"RESUME ALTER TABLE COLUMN FROM {name}: {exc}") from None
        return Done(f"RESUME ALTER TABLE COLUMN FROM {name}: job {job.id} {job.state}, schema version {job.to_version}")


READ_ATTEMPTS = 3
# Tries of a load of files that heavyweight ALTERs overtook (LoadOvertaken): each needs a job that
# started or swapped meanwhile, and a table has one job at a time.
LOAD_OVERTAKEN_TRIES = 3
LOAD_ENGINES = ("auto", "local", "spark")


DATE_RANGE_ERROR = "a DATE or DATETIME of the result is outside the years 1 to 9999, which a result holds"


def _is_date_range_error(exc: BaseException) -> bool:
    """Python's dates end at year 9999: a query computing a later (or an earlier) one."""
    return isinstance(exc, ValueError) and "year" in str(exc) and "out of range" in str(exc)


def _in_date_range(fetch):
    """fetch() (a result's values), with Python's date range as one line when a value is past it."""
    try:
        return fetch()
    except ValueError as exc:
        if _is_date_range_error(exc):
            raise StatementError(DATE_RANGE_ERROR) from None
        raise


def _file_vanished(exc: BaseException) -> bool:
    """Spark could not find a data file of the snapshot it read (compaction deleted it meanwhile)."""
    return "java.io.FileNotFoundException" in str(exc) or "FILE_NOT_EXIST" in str(exc)


def _time(value) -> str | None:
    return value.isoformat(sep=" ", timespec="seconds") if value is not None else None


def _is_spark_error(exc: BaseException) -> bool:
    """An error Spark raised about a query (an AnalysisException, a parse error of Spark SQL)."""
    return type(exc).__module__.startswith(("pyspark", "py4j"))


def _statement_text(stmt) -> str:
    return getattr(stmt, "sql", "") or json.dumps(dataclasses.asdict(stmt), default=str)
