"""`alterflow migrate status|lint|apply|baseline|set|repair|new|diff|hash` (docs/migrations.md). Every refusal is one
line on stderr and exit status 1 (`alterflow.cli.output.report_failure`); `lint` also exits 1 when a finding is
an error."""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from alterflow.errors import UserError


class MigrateUsageError(UserError):
    """A bad `alterflow migrate` argument."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise MigrateUsageError(f"{self.prog}: {message}")


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="alterflow migrate", description="Versioned migration files: status, lint, apply (docs/migrations.md).")
    top.add_argument("--dir", default=None, help="the migrations directory (default: ALTERFLOW_MIGRATIONS, else ./migrations)")
    sub = top.add_subparsers(dest="action", required=True, parser_class=_Parser)
    status = sub.add_parser("status", help="every file's state, and drift")
    status.add_argument("--format", choices=("text", "json"), default="text")
    _out_of_order_flag(status)
    lint = sub.add_parser("lint", help="plan every pending statement in order and check the rules; exit 1 on an error")
    lint.add_argument("--analyze", action="store_true", help="add EXPLAIN ANALYZE figures of each rewrite on today's data")
    lint.add_argument("--format", choices=("text", "json", "github"), default="text")
    _out_of_order_flag(lint)
    apply = sub.add_parser("apply", help="apply pending files in order")
    apply.add_argument("--to", default=None, metavar="V", help="stop after version V")
    apply.add_argument("--dry-run", action="store_true", help="print what would run, with its plan; change nothing")
    _out_of_order_flag(apply)
    baseline = sub.add_parser("baseline", help="adopt migrations up to version V on an existing catalog")
    baseline.add_argument("version", metavar="V")
    set_ = sub.add_parser("set", help="record the pending files up to version V as applied without running them")
    set_.add_argument("version", metavar="V")
    sub.add_parser("repair", help="accept edited checksums after review, clear FAILED, settle deleted files")
    new = sub.add_parser("new", help="create the next migration file, empty")
    new.add_argument("words", nargs="+")
    diff = sub.add_parser("diff", help="write the next migration file that takes the catalog to the CREATE TABLEs of FILE")
    diff.add_argument("--to", dest="desired", required=True, metavar="FILE")
    sub.add_parser("hash", help="write migrations/alterflow.sum (the directory's integrity file) after review")
    return top


def _out_of_order_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--out-of-order",
        action="store_true",
        help="pending files below an applied version are applied (and reported), as out_of_order = true in [tool.alterflow.migrate]",
    )


def _config(directory: pathlib.Path, args):
    """[tool.alterflow.migrate] of the project, with --out-of-order when given."""
    from alterflow.migrate.config import load_migrate_config

    return load_migrate_config(directory).with_out_of_order(getattr(args, "out_of_order", False))


def main(argv: list[str]) -> int:
    from alterflow.cli.output import report_failure

    try:
        args = parser().parse_args(argv)
        return _run(args)
    except Exception as exc:
        return report_failure(exc)


def _run(args) -> int:
    from alterflow.migrate.migration_files import migrations_dir, new_file
    from alterflow.migrate.sum_file import keeping_sum, rehash
    from alterflow.settings import migrations_from_env

    directory = migrations_dir(args.dir, migrations_from_env())
    if args.action == "new":
        with keeping_sum(directory):
            created = new_file(directory, " ".join(args.words))
        print(f"created {created}")
        return 0
    if args.action == "hash":
        print(rehash(directory))
        return 0
    from alterflow.engine.session import Session

    session = Session()
    catalog = session.catalog
    if args.action == "status":
        from alterflow.migrate.status import migration_status
        from alterflow.migrate.sum_file import SUM_FILE, verify_sum

        status = migration_status(catalog, directory, _config(directory, args))  # refuses a directory that does not match its alterflow.sum
        checked = verify_sum(directory).value
        if args.format == "json":
            print(json.dumps({**status.as_json(), "sum_file": checked}, indent=2))
        else:
            print(status_text(status))
            if checked == "missing":
                print(f"note: no {SUM_FILE}: the directory is not checked for integrity; `alterflow migrate hash` writes it")
        return 0
    if args.action == "lint":
        return _lint(session, directory, args)
    if args.action == "apply":
        return _apply(session, directory, args)
    if args.action == "baseline":
        from alterflow.migrate.apply import baseline

        print(baseline(catalog, directory, args.version))
        return 0
    if args.action == "set":
        from alterflow.migrate.apply import set_applied

        for line in set_applied(catalog, directory, args.version):
            print(line)
        return 0
    if args.action == "repair":
        from alterflow.migrate.apply import repair

        for line in repair(catalog, directory):
            print(line)
        return 0
    from alterflow.migrate.diff import write_diff

    with keeping_sum(directory):
        report = write_diff(session, directory, pathlib.Path(args.desired))
    print(report)
    return 0


def _lint(session, directory: pathlib.Path, args) -> int:
    """Lint in the chosen format; exit 1 on an error finding. With ALTERFLOW_AIRFLOW_URL, the
    backward-incompatible findings name the DAGs reading each table's asset."""
    from alterflow.migrate.lint import lint_migrations
    from alterflow.migrate.readers import AirflowDagReaders
    from alterflow.migrate.rules import load_rules
    from alterflow.migrate.status import migration_status

    status = migration_status(session.catalog, directory, _config(directory, args))
    dag_readers = AirflowDagReaders.from_settings(session.settings)  # None without ALTERFLOW_AIRFLOW_URL
    try:
        report = lint_migrations(
            session.catalog,
            directory,
            load_rules(directory),
            session.warehouse,
            analyze=args.analyze,
            spark=lambda: session.spark,
            status=status,
            dag_readers=dag_readers,
        )
    finally:
        if dag_readers is not None:
            dag_readers.close()
    print(
        json.dumps(report.as_json(), indent=2) if args.format == "json" else report.github() if args.format == "github" else report.text()
    )
    return 1 if report.errors else 0


def _apply(session, directory: pathlib.Path, args) -> int:
    from alterflow.cli import signals
    from alterflow.cli.work_state import apply_state
    from alterflow.errors import escaped
    from alterflow.migrate.apply import MigrationApply
    from alterflow.migrate.lint import findings_of
    from alterflow.migrate.rules import load_rules

    rules = load_rules(directory)
    if not args.dry_run:
        signals.under_way(lambda: apply_state(session, directory))
    apply = MigrationApply(
        session, directory, on_line=lambda line: print(escaped(line), flush=True), approve_rules=rules, config=_config(directory, args)
    )
    result = apply.run(to=args.to, dry_run=args.dry_run)
    if args.dry_run:
        for plan in result.planned:
            print(f"would run {plan.script}:{plan.statement.line}  {escaped(' '.join(plan.statement.text.split())[:160])}")
            print(f"  {plan.kind:<8} {plan.reason}")
            for finding in findings_of(plan, rules):
                print(f"  {finding.level:<8} {finding.rule}: {finding.message}")
        for line in result.out_of_order:
            print(f"would be {line}")
        print(f"dry run: {len(result.planned)} statement(s) would run; nothing was changed")
        return 0
    if not result.applied and not result.statements:
        print("nothing to apply: every migration file is applied")
    else:
        print(f"applied {len(result.applied)} file(s), {result.statements} statement(s)")
    return 0


def status_text(status) -> str:
    lines = [f"{'Version':<10} {'State':<15} {'Checksum':<9} {'Done':<7} Script"]
    for s in status.states:
        done = f"{s.statements_done}/{s.statements}" if s.statements else ""
        version = s.version or "repeatable"
        checksum = "ok" if s.checksum_ok else "changed" if s.kind == "REPEATABLE" else "EDITED"  # a changed repeatable runs again
        lines.append(f"{version:<10} {s.state:<15} {checksum:<9} {done:<7} {s.script}" + (f"  ({s.error})" if s.error else ""))
    if status.drift:
        lines.append("drift:")
        lines.extend(f"  {d.kind}: {d.detail}" for d in status.drift)
    else:
        lines.append("no drift")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
