"""Reading the input of `alterflow load`: Parquet, CSV (with a header) or JSON lines, one file or a
directory of them. CSV values are read as text and converted by the table's column types."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

FORMATS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}


class LoadInputError(ValueError):
    """The input of a bulk load cannot be read."""


def _format_of(path: pathlib.Path, given: str | None) -> str:
    if given:
        return given
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise LoadInputError(f"cannot tell the format of {path}; pass --format parquet|csv|json")
    return found


def _read_one(path: pathlib.Path, fmt: str) -> pa.Table:
    try:
        if fmt == "parquet":
            return pq.read_table(path)
        if fmt == "csv":
            header = pacsv.read_csv(path, read_options=pacsv.ReadOptions(block_size=1 << 20)).column_names
            return pacsv.read_csv(
                path,
                convert_options=pacsv.ConvertOptions(
                    column_types={name: pa.string() for name in header}, strings_can_be_null=True,
                    null_values=["", "NULL", "\\N"],
                ),
            )
        return pajson.read_json(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise LoadInputError(f"cannot read {path} as {fmt}: {str(exc).splitlines()[0]}") from None


def read_input(path: pathlib.Path, fmt: str | None) -> pa.Table:
    if not path.exists():
        raise LoadInputError(f"{path} does not exist")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and (fmt or FORMATS.get(p.suffix.lower())) and not p.name.startswith((".", "_")))
        if not files:
            raise LoadInputError(f"{path} holds no file to load")
        tables = [_read_one(p, _format_of(p, fmt)) for p in files]
        try:
            return pa.concat_tables(tables, promote_options="permissive")
        except pa.ArrowInvalid as exc:
            raise LoadInputError(f"the files under {path} do not share one schema: {exc}") from None
    return _read_one(path, _format_of(path, fmt))
