"""A Parquet file made from another one's encoded column chunks: only the columns that change are
encoded again.

During a dual write whose job keeps the tablets, key and sort order, each origin file has a shadow
file with the same rows, and most of its columns are the origin's unchanged (a MODIFY COLUMN
changes one). Encoding and compressing those columns a second time was most of what a dual write
added to a load. Here the shadow file takes the origin file's bytes for each unchanged column
chunk as they are, pyarrow encodes only the converted columns (in the same row groups), and a new
footer places every chunk: offsets moved, a renamed column's name changed, the Arrow schema of
the new file in `ARROW:schema`. Parquet readers see an ordinary file: for the same rows it is
byte for byte the file `pq.write_table` would write, which tests/store/test_column_splice.py checks.

A chunk is taken as it is when the new file's column is the origin column's very data (the same
Arrow buffers, as a conversion passes an unchanged column through) under the same field id (or
name, for a column without one) and nullability. Anything this module does not place by
hand (nested columns, page indexes, bloom filters, encryption, sorting columns) makes `splice`
answer None, and the caller writes the file in full.
"""

from __future__ import annotations

import base64
import logging
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from alterflow.arrow_schema import FIELD_ID_KEY
from alterflow.catalog.states import OnCastError
from alterflow.crash_points import crash_point
from alterflow.store.tablets import same_files, write_encoded, write_options
from alterflow.store.thrift_compact import BINARY, LIST, STRUCT, Struct, ThriftList, decode_struct, encode_struct

__all__ = ["EncodedFile", "encode_parquet", "shadow_from_origin", "splice", "write_with_shadow"]

log = logging.getLogger(__name__)

MAGIC = b"PAR1"
ARROW_SCHEMA_KEY = b"ARROW:schema"

# Field ids of parquet.thrift (parquet-format), the ones this module reads or moves.
_FILE_SCHEMA, _FILE_ROW_GROUPS, _FILE_KEY_VALUES, _FILE_COLUMN_ORDERS = 2, 4, 5, 7
_FILE_ENCRYPTION = (8, 9)
_ELEMENT_NAME, _ELEMENT_CHILDREN = 4, 5
_GROUP_COLUMNS, _GROUP_BYTES, _GROUP_ROWS, _GROUP_SORTING, _GROUP_OFFSET, _GROUP_COMPRESSED = 1, 2, 3, 4, 5, 6
_CHUNK_OFFSET, _CHUNK_META = 2, 3
_CHUNK_UNPLACED = (1, 4, 5, 6, 7, 8, 9)  # file path, page indexes, encryption: not moved here
_META_PATH, _META_UNCOMPRESSED, _META_COMPRESSED = 3, 6, 7
_META_DATA_PAGE, _META_INDEX_PAGE, _META_DICTIONARY_PAGE = 9, 10, 11
_META_UNPLACED = (14, 15)  # bloom filter
_KEY, _VALUE = 1, 2


def encode_parquet(data: pa.Table, row_groups: Sequence[int] | None = None) -> pa.Buffer:
    """`data` as the bytes of a Parquet file; `row_groups` fixes each row group's row count (their
    sum is `data`'s rows), or pyarrow's default splits it."""
    sink = pa.BufferOutputStream()
    if row_groups is None:
        pq.write_table(data, sink, **write_options(data))
    else:
        with pq.ParquetWriter(sink, data.schema, **write_options(data)) as writer:
            start = 0
            for rows in row_groups:
                writer.write_table(data.slice(start, rows), row_group_size=max(rows, 1))
                start += rows
    return sink.getvalue()


@dataclass(frozen=True)
class EncodedFile:
    """A Parquet file's bytes and its decoded footer."""

    data: memoryview
    footer: Struct

    @classmethod
    def parse(cls, data: bytes | pa.Buffer | memoryview) -> EncodedFile:
        view = memoryview(data).cast("B")  # a pyarrow Buffer's view holds signed bytes
        if len(view) < 12 or view[:4] != MAGIC or view[-4:] != MAGIC:
            raise ValueError("not a Parquet file")
        length = struct.unpack("<I", view[-8:-4])[0]
        start = len(view) - 8 - length
        if start < 4:
            raise ValueError("Parquet footer length out of range")
        footer, _ = decode_struct(view[start : len(view) - 8])
        return cls(view, footer)

    @property
    def leaves(self) -> list[Struct]:
        return self.footer.get(_FILE_SCHEMA).items[1:]

    @property
    def row_groups(self) -> list[Struct]:
        return self.footer.get(_FILE_ROW_GROUPS).items

    def flat(self) -> bool:
        """Whether every column is one leaf of the root, and nothing needs placing by hand."""
        schema = self.footer.get(_FILE_SCHEMA).items
        if any(key in self.footer for key in _FILE_ENCRYPTION) or schema[0].get(_ELEMENT_CHILDREN) != len(schema) - 1:
            return False
        if any(leaf.get(_ELEMENT_CHILDREN) for leaf in schema[1:]):
            return False
        for group in self.row_groups:
            if _GROUP_SORTING in group:
                return False
            for chunk in group.get(_GROUP_COLUMNS).items:
                if any(key in chunk for key in _CHUNK_UNPLACED) or any(key in chunk.get(_CHUNK_META) for key in _META_UNPLACED):
                    return False
        return True


def _key(field: pa.Field) -> tuple[str, bytes | str]:
    field_id = (field.metadata or {}).get(FIELD_ID_KEY)
    return ("id", field_id) if field_id is not None else ("name", field.name)


def _same_data(origin: pa.ChunkedArray, target: pa.ChunkedArray) -> bool:
    """Whether two columns are the very same Arrow data: the same buffers, offsets and lengths
    (a column a conversion passed through), not merely equal types or values."""
    if origin.type != target.type or origin.num_chunks != target.num_chunks:
        return False
    for a, b in zip(origin.chunks, target.chunks):
        if (a.offset, len(a)) != (b.offset, len(b)):
            return False
        if [x and x.address for x in a.buffers()] != [x and x.address for x in b.buffers()]:
            return False
    return True


def _chunk_range(meta: Struct) -> tuple[int, int]:
    """(first byte, length) of a column chunk: its dictionary page, if any, then its data pages."""
    start = meta.get(_META_DATA_PAGE)
    dictionary = meta.get(_META_DICTIONARY_PAGE)
    if dictionary:
        start = min(start, dictionary)
    return start, meta.get(_META_COMPRESSED)


def _moved(chunk: Struct, delta: int, name: str) -> Struct:
    """A column chunk's metadata for bytes moved by `delta`, under column name `name`."""
    meta = chunk.get(_CHUNK_META).copy()
    for key in (_META_DATA_PAGE, _META_INDEX_PAGE, _META_DICTIONARY_PAGE):
        if meta.get(key):
            meta.set(key, meta.get(key) + delta)
    meta.set(_META_PATH, ThriftList(BINARY, [name.encode()]))
    moved = chunk.copy()
    moved.set(_CHUNK_META, meta)
    if moved.get(_CHUNK_OFFSET):
        moved.set(_CHUNK_OFFSET, moved.get(_CHUNK_OFFSET) + delta)
    return moved


def _named(element: Struct, name: str) -> Struct:
    renamed = element.copy()
    renamed.set(_ELEMENT_NAME, name.encode())
    return renamed


def _key_values(origin: EncodedFile, schema: pa.Schema) -> ThriftList | None:
    """The origin's key-value metadata with the new file's Arrow schema (as pyarrow stores it)."""
    entries = origin.footer.get(_FILE_KEY_VALUES)
    if entries is None:
        return None
    stored = base64.b64encode(schema.serialize().to_pybytes())
    items = []
    for entry in entries.items:
        if entry.get(_KEY) == ARROW_SCHEMA_KEY:
            entry = entry.copy()
            entry.set(_VALUE, stored)
        items.append(entry)
    return ThriftList(STRUCT, items)


def splice(origin: EncodedFile, origin_rows: pa.Table, target: pa.Table) -> list[memoryview | bytes] | None:
    """The pieces of a Parquet file holding `target`, whose rows are `origin_rows` (the table the
    origin file was written from) in the same order. A column of `target` that is an origin
    column's very data (the same Arrow buffers: a conversion passed it through) under the same
    field id and nullability has its chunks taken from `origin` as they are; the others are
    encoded. None when nothing can be taken, or the file holds something this module does not
    place: then write `target` in full."""
    if origin_rows.schema.metadata != target.schema.metadata or target.num_rows == 0 or not origin.flat():
        return None
    if len(origin.leaves) != origin_rows.num_columns or sum(g.get(_GROUP_ROWS) for g in origin.row_groups) != target.num_rows:
        return None
    sources, replaced = _chunk_sources(origin_rows, target)
    if len(replaced) == len(target.schema) or len(set(target.schema.names)) != len(target.schema):
        return None
    files = {"origin": origin}
    if replaced:
        new = _encoded_replacements(origin, target.select(replaced))
        if new is None:
            return None
        files["new"] = new
    pieces: list[memoryview | bytes] = [MAGIC]
    position = len(MAGIC)
    groups = []
    for number, group in enumerate(origin.row_groups):
        placed, position = _placed_row_group(files, number, group, target.schema, sources, pieces, position)
        groups.append(placed)
    encoded = encode_struct(_footer(files, target.schema, sources, groups))
    pieces += [encoded, struct.pack("<I", len(encoded)), MAGIC]
    return pieces


def _chunk_sources(origin_rows: pa.Table, target: pa.Table) -> tuple[list[tuple[str, int]], list[str]]:
    """Where each column of `target` comes from: ("origin", its leaf in the origin file) for an
    origin column's very data under the same key and nullability, else ("new", its leaf in the file
    of the encoded columns); and the names of those encoded columns, in order."""
    by_key = {_key(f): i for i, f in enumerate(origin_rows.schema) if _key(f)[1] is not None}
    sources: list[tuple[str, int]] = []
    replaced: list[str] = []
    for field, values in zip(target.schema, target.columns):
        index = by_key.get(_key(field))
        if (
            index is not None
            and origin_rows.schema.field(index).nullable == field.nullable
            and _same_data(origin_rows.column(index), values)
        ):
            sources.append(("origin", index))
        else:
            sources.append(("new", len(replaced)))
            replaced.append(field.name)
    return sources, replaced


def _encoded_replacements(origin: EncodedFile, columns: pa.Table) -> EncodedFile | None:
    """`columns` encoded in row groups of the origin file's row counts; None when pyarrow did not
    keep those row groups or the file holds something this module does not place."""
    counts = [g.get(_GROUP_ROWS) for g in origin.row_groups]
    new = EncodedFile.parse(encode_parquet(columns, counts))
    if [g.get(_GROUP_ROWS) for g in new.row_groups] != counts or not new.flat():
        return None
    return new


def _placed_row_group(
    files: dict[str, EncodedFile],
    number: int,
    group: Struct,
    schema: pa.Schema,
    sources: list[tuple[str, int]],
    pieces: list[memoryview | bytes],
    position: int,
) -> tuple[Struct, int]:
    """Row group `number` of the new file, whose bytes so far (`pieces`) end at `position`: each
    column's chunk bytes appended to `pieces`; the group's metadata with every chunk placed where
    its bytes now are, and where the file's bytes end then."""
    chunks, uncompressed = [], 0
    for field, (source, leaf) in zip(schema, sources):
        chunk = files[source].row_groups[number].get(_GROUP_COLUMNS).items[leaf]
        start, length = _chunk_range(chunk.get(_CHUNK_META))
        pieces.append(files[source].data[start : start + length])
        chunks.append(_moved(chunk, position - start, field.name))
        uncompressed += chunk.get(_CHUNK_META).get(_META_UNCOMPRESSED)
        position += length
    first = _chunk_range(chunks[0].get(_CHUNK_META))[0]
    moved = group.copy()
    moved.set(_GROUP_COLUMNS, ThriftList(STRUCT, chunks))
    moved.set(_GROUP_BYTES, uncompressed)
    for key, value in ((_GROUP_COMPRESSED, position - first), (_GROUP_OFFSET, first)):
        if key in group:
            moved.set(key, value)
    return moved, position


def _footer(files: dict[str, EncodedFile], schema: pa.Schema, sources: list[tuple[str, int]], groups: list[Struct]) -> Struct:
    """The origin file's footer for the new file: its schema elements (renamed), its row groups,
    the Arrow schema of the new file and each column's order."""
    origin = files["origin"]
    root = origin.footer.get(_FILE_SCHEMA).items[0].copy()
    root.set(_ELEMENT_CHILDREN, len(schema))
    elements = [root] + [_named(files[s].leaves[leaf], f.name) for f, (s, leaf) in zip(schema, sources)]
    footer = origin.footer.copy()
    footer.set(_FILE_SCHEMA, ThriftList(STRUCT, elements))
    footer.set(_FILE_ROW_GROUPS, ThriftList(STRUCT, groups))
    key_values = _key_values(origin, schema)
    if key_values is not None:
        footer.set(_FILE_KEY_VALUES, key_values)
    orders = origin.footer.get(_FILE_COLUMN_ORDERS)
    if orders is not None:
        items = [files[s].footer.get(_FILE_COLUMN_ORDERS).items[leaf] for s, leaf in sources]
        footer.set(_FILE_COLUMN_ORDERS, ThriftList(orders.element_type, items), LIST)
    return footer


def shadow_from_origin(old, target) -> bool:
    """Whether a dual write into `target` (a `DualWriteTarget`) from rows of version `old` makes
    each shadow file from its origin file (`write_with_shadow`): the job keeps the tablets, key
    and sort order (`tablets.same_files`), and quarantines nothing (the shadow then holds every
    row of the origin's file)."""
    return target.on_cast_error != OnCastError.QUARANTINE and same_files(old, target.version)


def write_with_shadow(warehouse, origin_path: str, shadow_path: str, rows: pa.Table, old, new) -> tuple[int, int]:
    """Write a load's origin file of `rows` (a tablet's rows of schema version `old`, already
    deduplicated and sorted) and the shadow's file of the same rows converted to version `new`,
    when `shadow_from_origin` says so: the shadow's file takes
    the origin's encoded chunks of every column the conversion passes through. Values that fail
    are NULL here: the caller has checked the rows (failing the load, or counting the NULLs).
    Both paths are relative to `warehouse` (a folder or an object store's location). Returns both
    files' sizes."""
    from alterflow.conversion.arrow_convert import convert_arrow

    encoded = encode_parquet(rows)
    origin_size = write_encoded(warehouse, origin_path, [encoded])
    crash_point("load_origin_written")
    converted = convert_arrow(rows, old, new, OnCastError.NULL).table
    try:
        pieces = splice(EncodedFile.parse(encoded), rows, converted)
    except Exception:  # a footer it cannot read must not fail the load: the file is written in full
        log.warning("could not make %s from %s's column chunks; writing it in full", shadow_path, origin_path, exc_info=True)
        pieces = None
    if pieces is None:
        pieces = [encode_parquet(converted)]
    return origin_size, write_encoded(warehouse, shadow_path, pieces)
