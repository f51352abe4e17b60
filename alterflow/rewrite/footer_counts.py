"""Rows and NULLs per column of a Parquet file, by field id, from the file's footer.

A conversion of a table without a primary key reads every row of its origin files and writes
every row to its staged files, so its counts come from the two sides' footers instead of being
counted inside the conversion query (which would cost the query a pass through an observer):
rows read = the origin files' rows, and values lost to a failed cast = NULLs written minus NULLs
read, since a conversion gives NULL exactly for a NULL or a value that fails.

A column chunk without a NULL count in its statistics has its values counted (pyarrow reads that
column): the counts are exact either way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow.parquet as pq

from alterflow.arrow_schema import FIELD_ID_KEY
from alterflow.store.layout import FileSource


@dataclass(frozen=True)
class FileCounts:
    rows: int
    nulls: dict[int, int | None]  # field id -> NULLs in that column; None: the file has no such column


def _footer_nulls(metadata: pq.FileMetaData, index: int, name: str) -> int | None:
    """The NULL count of leaf column `index` over all row groups, or None when some row group's
    statistics do not say."""
    total = 0
    for group in range(metadata.num_row_groups):
        chunk = metadata.row_group(group).column(index)
        statistics = chunk.statistics
        if chunk.path_in_schema != name or statistics is None or not statistics.has_null_count:
            return None
        total += statistics.null_count
    return total


def file_counts(source: FileSource, field_ids: Iterable[int]) -> FileCounts:
    """The rows of the file at `source` and the NULLs of each of its columns with one of
    `field_ids` (flat schemas: every column is a leaf, as alterflow writes them)."""
    metadata = pq.read_metadata(source.path, filesystem=source.filesystem)
    schema = metadata.schema.to_arrow_schema()
    index_by_id = {}
    for index, field in enumerate(schema):
        if field.metadata and FIELD_ID_KEY in field.metadata:
            index_by_id[int(field.metadata[FIELD_ID_KEY])] = index
    nulls: dict[int, int | None] = {}
    for field_id in field_ids:
        index = index_by_id.get(field_id)
        if index is None:
            nulls[field_id] = None
            continue
        name = schema.field(index).name
        counted = _footer_nulls(metadata, index, name)
        if counted is None:  # no statistics to go by: count the values
            counted = pq.read_table(source.path, columns=[name], filesystem=source.filesystem).column(0).null_count
        nulls[field_id] = counted
    return FileCounts(metadata.num_rows, nulls)
