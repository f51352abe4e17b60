"""The `alterflow` command: `sql`, `load`."""

from __future__ import annotations

import argparse
import pathlib
import sys

from alterflow.output import to_json, to_table


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
    return parser


def _sql(args) -> int:
    from alterflow.session import ResultSet, Session

    if args.file is not None:
        try:
            text = pathlib.Path(args.file).read_text()
        except OSError as exc:
            print(f"error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 1
    else:
        text = args.text
    from alterflow.sql import split_statements

    try:
        session = Session()
        pieces = split_statements(text)
    except Exception as exc:
        print(f"error: {_message(exc)}", file=sys.stderr)
        return 1
    for piece in pieces:
        try:
            results = list(session.run(piece))
        except Exception as exc:  # every failure is one line; statements before it stay done
            print(f"error: {_message(exc)}", file=sys.stderr)
            return 1
        for result in results:
            if isinstance(result, ResultSet):
                print(to_json(result) if args.format == "json" else to_table(result), flush=True)
            elif args.format == "table":
                print(result.message, flush=True)
    return 0


def _load(args) -> int:
    from alterflow.loading import read_input
    from alterflow.session import Session

    try:
        data = read_input(pathlib.Path(args.path), args.format)
        session = Session()
        result = session.load(args.table, data, label=f"load {args.path}", by_name=True)
    except Exception as exc:
        print(f"error: {_message(exc)}", file=sys.stderr)
        return 1
    print(result.message)
    return 0


def _message(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return {"sql": _sql, "load": _load}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
