"""The `alterflow` command: `sql`, `load`, `gc`, `migrate`, `db upgrade`, `spark-archive`.

Every failure is one line on stderr and exit status 1. A refusal (`UserError`) prints its own
message; anything else is an internal error: its line names the exception's type and the log file
under `$ALTERFLOW_HOME/logs/` that holds its traceback, so a bug never passes for a user's mistake.
Ctrl-C and SIGTERM print one line, the state of the work and what continues it, and exit 130 or
143; a closed stdout silences the output and the work goes on (`alterflow.cli.signals`).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys
from typing import NoReturn

from alterflow.cli import signals
from alterflow.cli.output import report_failure
from alterflow.cli.startup import import_paused
from alterflow.engine.result_text import to_json, to_table
from alterflow.errors import UserError, escaped, shown
from alterflow.text_files import read_utf8


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="alterflow", description="Online schema changes for analytic tables.")
    sub = parser.add_subparsers(dest="command", required=True)

    sql = sub.add_parser("sql", help="run SQL statements in order")
    source = sql.add_mutually_exclusive_group(required=True)
    source.add_argument("-e", dest="text", metavar="SQL", help="statements separated by ;")
    source.add_argument("-f", dest="file", metavar="FILE", help="a file of statements")
    sql.add_argument("--format", choices=("table", "json"), default="table")

    load = sub.add_parser("load", help="bulk-load a file (or a directory of files) as one transaction")
    load.add_argument("table")
    load.add_argument("path")
    load.add_argument("--format", choices=("parquet", "csv", "json"), default=None)
    load.add_argument(
        "--engine",
        choices=("auto", "local", "spark"),
        default="auto",
        help="local: stream through Arrow in this process; spark: convert and write with Spark on "
        "ALTERFLOW_SPARK_MASTER; auto (default): Spark from ALTERFLOW_SPARK_LOAD_MB (4096) of input up",
    )
    load.add_argument(
        "--label",
        default=None,
        help="name this load (1 to 256 printable characters): a load of the table with this label that "
        "committed already makes this one write nothing, so a load run again after an error counts once",
    )

    # Listed for --help; their own arguments are parsed by _gc_parser and alterflow.cli.migrate_command (one-line errors).
    sub.add_parser("gc", help="garbage collection and compaction now", add_help=False)
    sub.add_parser("migrate", help="versioned migration files: status, lint, apply, baseline, repair, new, diff", add_help=False)

    db = sub.add_parser("db", help="the catalog database")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    db_sub.add_parser(
        "upgrade",
        help="migrate the catalog of ALTERFLOW_CATALOG_URL to this release's schema "
        "(a SQLite catalog is also migrated whenever it is opened; any other never is)",
    )
    bind = db_sub.add_parser(
        "bind-warehouse",
        help="make this catalog the owner of ALTERFLOW_WAREHOUSE on purpose (after a restore or a move); "
        "refused while the warehouse holds data files this catalog has no record of",
    )
    bind.add_argument("--force", action="store_true", help="re-bind even so (GC then deletes those files)")

    sub.add_parser(
        "spark-archive",
        help="record the archive of Spark's classes (ALTERFLOW_SPARK_CLASS_ARCHIVE) that Spark drivers started on this "
        "machine map: they start about twice as fast (make install writes it)",
    )
    return parser


class _GcUsageError(UserError):
    """A bad `alterflow gc` argument."""


class _GcParser(argparse.ArgumentParser):
    def error(self, message):
        raise _GcUsageError(f"alterflow gc: {message}")


def _gc_parser() -> argparse.ArgumentParser:
    parser = _GcParser(
        prog="alterflow gc",
        description="Drop origin indexes past the retention period, compact tablets written under old "
        "schema versions, delete schema versions nothing needs and files nothing references.",
    )
    parser.add_argument(
        "--retention",
        metavar="SECONDS",
        default=None,
        help="how long a file that left its table, a retired origin index and a superseded schema version are kept "
        "(default: ALTERFLOW_GC_RETENTION, else 3600)",
    )
    parser.add_argument(
        "--orphan-retention",
        metavar="SECONDS",
        default=None,
        help="how old a file no catalog row names must be before it is deleted, by its modification time "
        "(default: ALTERFLOW_GC_ORPHAN_RETENTION, else 259200: 3 days; never less than --retention or the lease)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list every file a run would delete now, and why, and the files that wait; change nothing"
    )
    return parser


_WHOLE = re.compile(r"[0-9]{1,20}")


def _gc_seconds(flag: str, given: str | None, default: int, most: int) -> int:
    if given is None:
        return default
    text = given.strip()
    if not _WHOLE.fullmatch(text) or int(text) > most:
        raise _GcUsageError(f"alterflow gc: {flag} must be a whole number of seconds from 0 to {most}, not {shown(given)}")
    return int(text)


def _gc(argv: list[str]) -> int:
    from alterflow.settings import MAX_SECONDS, Settings

    try:
        args = _gc_parser().parse_args(argv)
        settings = Settings.from_env()
        retention = _gc_seconds("--retention", args.retention, settings.gc_retention_s, MAX_SECONDS)
        orphan_retention = _gc_seconds("--orphan-retention", args.orphan_retention, settings.gc_orphan_retention_s, MAX_SECONDS)
        from alterflow.catalog.catalog import Catalog

        with settings.dirs_for_catalog():
            catalog = Catalog(settings.catalog_url)
        if args.dry_run:
            from alterflow.gc.gc_steps import dry_run

            listed = dry_run(catalog, settings.warehouse, retention, None, orphan_retention, settings.lease_s)
            doomed = [item for item in listed if not item.get("wait") and not item.get("skip")]
            for item in listed:
                verb = "waits" if item.get("wait") else "skips" if item.get("skip") else "would delete"
                print(f"{verb} {escaped(item['path'])}: {item['why']}")
            waiting = sum(1 for item in listed if item.get("wait"))
            print(
                f"dry run: {len(doomed)} file(s) or folder(s) would be deleted"
                + (f", {waiting} unreferenced file(s) wait for the orphan retention" if waiting else "")
                + "; nothing was changed"
            )
            return 0
        from alterflow.cli.work_state import gc_state
        from alterflow.gc.gc_runner import run_gc
        from alterflow.gc.summary import step_line
        from alterflow.spark_session import get_spark

        def on_step(name, result) -> None:
            signals.under_way(lambda: gc_state(name))
            print(step_line(name, result), flush=True)

        signals.under_way(lambda: gc_state(None))
        airflow = _airflow_of(settings)  # with ALTERFLOW_AIRFLOW_URL: asked whether a job's run still drives it
        run_gc(
            catalog,
            settings.warehouse,
            lambda: get_spark(settings),
            retention,
            on_step=on_step,
            lease_s=settings.lease_s,
            orphan_retention_s=orphan_retention,
            run_is_alive=None if airflow is None else airflow.run_is_alive,
        )
    except Exception as exc:
        return report_failure(exc)
    return 0


def _airflow_of(settings):
    """The client of ALTERFLOW_AIRFLOW_URL's Airflow, or None where it is not set."""
    if not settings.airflow_url:
        return None
    from alterflow.airflow_client import AirflowClient

    return AirflowClient.from_settings(settings)


def _db(args) -> int:
    """`alterflow db upgrade` and `alterflow db bind-warehouse`: one line saying what it did."""
    from alterflow.catalog.database import upgrade_catalog
    from alterflow.settings import Settings

    try:
        settings = Settings.from_env()
        with settings.dirs_for_catalog():
            if args.db_command == "bind-warehouse":
                from alterflow.catalog.catalog import Catalog
                from alterflow.store.warehouse_kinds import open_warehouse

                print(open_warehouse(settings.warehouse, Catalog(settings.catalog_url)).bind(force=args.force))
                return 0
            before, after = upgrade_catalog(settings.catalog_url)
    except Exception as exc:
        return report_failure(exc)
    if before == after:
        print(f"catalog already at migration {after}")
    elif before is None:
        print(f"catalog created at migration {after}")
    else:
        print(f"catalog upgraded from migration {before} to {after}")
    return 0


def _spark_archive(_args) -> int:
    """`alterflow spark-archive` (no arguments: the archive's path is a setting): one line saying
    where the archive is, its size and the time it took."""
    from alterflow.settings import Settings
    from alterflow.spark_class_archive import write_class_archive

    try:
        print(write_class_archive(Settings.from_env()).message)
    except Exception as exc:
        return report_failure(exc)
    return 0


def _sql(args) -> int:
    from alterflow.engine.session import Session
    from alterflow.results import ResultSet

    if args.file is not None:
        try:
            text = _read_sql_file(args.file)
        except UserError as exc:
            return report_failure(exc)
    else:
        text = args.text
    from alterflow.sql import split_statements

    try:
        session = Session()
        pieces = split_statements(text)
    except Exception as exc:
        return report_failure(exc)
    for number, piece in enumerate(pieces, 1):
        signals.under_way(lambda number=number, piece=piece: _sql_state(session, number, len(pieces), piece))
        try:
            results = list(session.run(piece))
        except Exception as exc:  # statements before it stay done
            return report_failure(exc)
        for result in results:
            if isinstance(result, ResultSet):
                print(to_json(result) if args.format == "json" else to_table(result), flush=True)
            elif args.format == "table":
                print(result.message, flush=True)
    return 0


def _sql_state(session, number: int, total: int, piece: str) -> str:
    from alterflow.cli.work_state import sql_state

    return sql_state(session, number, total, piece)


class _FileError(UserError):
    """An `alterflow sql -f` file that cannot be read as text."""


def _read_sql_file(name: str) -> str:
    """The text of a statements file, or one line saying why not (missing, a directory, not
    readable, not UTF-8)."""
    return read_utf8(pathlib.Path(name), shown(name, 200), _FileError)


def _load(args) -> int:
    from alterflow.engine.session import Session
    from alterflow.load.inputs import open_input
    from alterflow.load.load_once import fitted_label

    label = fitted_label(f"load {args.path}") if args.label is None else args.label
    try:
        if args.label is not None:
            from alterflow.catalog.catalog_errors import checked_label

            checked_label(label, "load")  # before anything is opened or made
        source = open_input(pathlib.Path(args.path), args.format)
        session = Session()
        signals.under_way(lambda: _load_state(session, args.table, label))
        if args.label is None:
            message = session.load_input(args.table, source, label=label, engine=args.engine).message
        else:
            done = session.load_input_once(args.table, source, label, args.engine)
            message = _labelled_load_message(session.catalog.table(args.table).name, label, done)
    except Exception as exc:
        return report_failure(exc)
    print(message)
    return 0


def _labelled_load_message(table: str, label: str, done) -> str:
    if done.earlier:
        return f"{table}: label {shown(label)} was loaded already (transaction {done.txn_id}, {done.rows} rows); nothing written"
    return f"{done.rows} rows loaded into {table} (transaction {done.txn_id})"


def _load_state(session, table: str, label: str) -> str:
    from alterflow.cli.work_state import load_state

    return load_state(session, table, label)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "gc":
        return _gc(argv[1:])
    if argv and argv[0] == "migrate":
        from alterflow.cli.migrate_command import main as migrate

        return migrate(argv[1:])
    args = _parser().parse_args(argv)
    return {"sql": _sql, "load": _load, "db": _db, "spark-archive": _spark_archive}[args.command](args)


def command() -> NoReturn:
    """The `alterflow` console script: `main`, then `exit_now`. `alterflow sql` imports the session
    beforehand, with the garbage collector paused (`import_paused`); `alterflow migrate` the
    session, the catalog and what status, lint and apply share, unless it only makes a new file.
    SIGINT and SIGTERM end it with one line and 130 or 143 (`signals.interrupted`)."""
    signals.install()
    try:
        if sys.argv[1:2] == ["sql"]:
            import_paused("alterflow.engine.session")
        elif sys.argv[1:2] == ["migrate"] and "new" not in sys.argv[2:]:
            import_paused("alterflow.engine.session")
            import_paused("alterflow.migrate.apply")
        code = main()
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM (signals.Terminated)
        code = signals.interrupted(exc)
    signals.exiting()
    exit_now(code)


def exit_now(code: int) -> NoReturn:
    """End the process with `code`. When nothing is left running (no other thread, no Spark JVM),
    it ends at once: the catalog's connections closed, the atexit handlers run, stdout and stderr
    flushed, then `os._exit`. Python's own exit would then only free every object of every module
    (SQLAlchemy's, sqlglot's) one by one, which costs more than a light ALTER's whole work
    (docs/benchmarks.md). Otherwise, and if a stream cannot be flushed, Python's ordinary exit."""
    import threading

    if threading.active_count() == 1 and not _jvm_started():
        import atexit
        import os

        database = sys.modules.get("alterflow.catalog.database")
        try:
            if database is not None:
                database.close_engines()
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - the ordinary exit reports it as it always has
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


def _jvm_started() -> bool:
    pyspark = sys.modules.get("pyspark")
    context = getattr(pyspark, "SparkContext", None)
    return getattr(context, "_gateway", None) is not None


if __name__ == "__main__":
    command()
