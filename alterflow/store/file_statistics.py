"""What a table's files hold, read from their Parquet footers (no rows are read): the range of an
integer column's stored values, which decides whether a REVERT TO VERSION that narrows a
widened column back can read today's files as they are (docs/semantics.md)."""

from __future__ import annotations

import pathlib

from alterflow.catalog.catalog import TableSnapshot
from alterflow.store.layout import FileSource, file_source

FIELD_ID = b"PARQUET:field_id"
# (lowest, highest) stored value; (None, None) when no value is stored (no rows, or only NULLs)
ValueRange = tuple[int | None, int | None]


def _widen(found: ValueRange, low: int, high: int) -> ValueRange:
    return (low if found[0] is None else min(found[0], low), high if found[1] is None else max(found[1], high))


def _file_range(source: FileSource, column_id: int, default: int | None) -> ValueRange | None:
    """The column's range in one file (its initial `default` when the file was written before it
    existed), None when a row group has no statistics for it."""
    with source.parquet() as parquet:  # pyarrow imported here: planning a light statement never reads a footer
        schema, metadata = parquet.schema_arrow, parquet.metadata
    position = next(
        (i for i, f in enumerate(schema) if f.metadata and f.metadata.get(FIELD_ID) == str(column_id).encode()),
        None,
    )
    found: ValueRange = (None, None)
    if position is None:  # the file was written before the column existed: its rows read the default
        return found if default is None else (default, default)
    for group in range(metadata.num_row_groups):
        chunk = metadata.row_group(group).column(position)
        stats = chunk.statistics
        if stats is None:
            return None
        if stats.has_null_count and stats.null_count == chunk.num_values:
            continue  # only NULLs
        if not stats.has_min_max or not isinstance(stats.min, int) or not isinstance(stats.max, int):
            return None
        found = _widen(found, stats.min, stats.max)
    return found


class FileRanges:
    """Integer column ranges of a table's files, each file's footer read once: a REVERT's plan,
    its commit's second plan and the commit's check under the table's lock share one, so the
    check only reads the files committed since."""

    def __init__(self, warehouse: pathlib.Path):
        self.warehouse = warehouse
        self._files: dict[tuple[str, int], ValueRange | None] = {}

    def of_files(self, files, column_id: int, default: int | None) -> ValueRange | None:
        """The range of an integer column's values over `files` (its initial `default` for the
        files written before it existed), or None when some file has no statistics to tell."""
        found: ValueRange = (None, None)
        for data_file in files:
            key = (data_file.path, column_id)
            if key not in self._files:
                self._files[key] = _file_range(file_source(self.warehouse, data_file.path), column_id, default)
            file_range = self._files[key]
            if file_range is None:
                return None
            if file_range[0] is not None:
                found = _widen(found, file_range[0], file_range[1])
        return found

    def of_snapshot(self, snapshot: TableSnapshot, column_id: int) -> ValueRange | None:
        column = snapshot.current.column_by_id(column_id)
        default = column.initial_default if column is not None else None
        return self.of_files(snapshot.files, column_id, default if isinstance(default, int) else None)
