"""Reading the input of `alterflow load`: Parquet, CSV (with a header) or JSON lines, one file or a
directory of them, as a stream of Arrow record batches, so a load's memory stays bounded whatever
the input's size. CSV values are read as text (`''`, `NULL` and `\\N` are NULL) and converted by
the table's column types (alterflow.store.coercion)."""

from __future__ import annotations

import pathlib
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

FORMATS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}
CSV_NULLS = ["", "NULL", "\\N"]
BLOCK_BYTES = 8 << 20  # CSV / JSON bytes parsed per batch
PARQUET_BATCH_ROWS = 256 * 1024
READ_AHEAD = 2  # batches parsed ahead of the one being converted
WHOLE_CSV_BYTES = 64 << 20  # a CSV up to this size is parsed in one go (threads across its blocks)


class LoadInputError(ValueError):
    """The input of a bulk load cannot be read."""


def _format_of(path: pathlib.Path, given: str | None) -> str:
    if given:
        return given
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise LoadInputError(f"cannot tell the format of {path}; pass --format parquet|csv|json")
    return found


@dataclass(frozen=True)
class InputFile:
    path: pathlib.Path
    format: str
    size: int


@dataclass(frozen=True)
class LoadInput:
    """The files of one load, in the order they are loaded (a directory: by name)."""

    files: tuple[InputFile, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def formats(self) -> set[str]:
        return {f.format for f in self.files}

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Every row of every file, batch by batch (one file's batches share a schema). A reader
        thread parses the next batches while the caller converts and buckets this one."""
        return read_ahead(b for one in self.files for b in _batches(one))


_DONE = object()


def read_ahead(batches: Iterator[pa.RecordBatch], depth: int = READ_AHEAD) -> Iterator[pa.RecordBatch]:
    """`batches`, produced by a thread of their own up to `depth` batches ahead (Arrow's readers
    release the GIL while they parse). An error of the reader is raised here, where its batch
    would have come; closing this generator early stops the reader."""
    slots: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(item) -> bool:
        """Queue `item`, waiting for room; False once the consumer has gone."""
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for batch in batches:
                if not offer(batch):
                    return
            item = _DONE
        except BaseException as exc:  # handed to the consumer
            item = exc
        offer(item)

    reader = threading.Thread(target=produce, name="load-reader", daemon=True)
    reader.start()
    try:
        while True:
            item = slots.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join()


def open_input(path: pathlib.Path, fmt: str | None = None) -> LoadInput:
    """The files to load at `path` (checked to exist; nothing is read yet)."""
    if not path.exists():
        raise LoadInputError(f"{path} does not exist")
    if path.is_dir():
        files = sorted(
            p for p in path.iterdir()
            if p.is_file() and (fmt or FORMATS.get(p.suffix.lower())) and not p.name.startswith((".", "_"))
        )
        if not files:
            raise LoadInputError(f"{path} holds no file to load")
    else:
        files = [path]
    return LoadInput(tuple(InputFile(p, _format_of(p, fmt), p.stat().st_size) for p in files))


def _batches(one: InputFile) -> Iterator[pa.RecordBatch]:
    try:
        if one.format == "parquet":
            yield from pq.ParquetFile(one.path).iter_batches(batch_size=PARQUET_BATCH_ROWS)
        elif one.format == "csv":
            yield from _csv_batches(one.path)
        else:
            with pajson.open_json(one.path, read_options=pajson.ReadOptions(block_size=BLOCK_BYTES)) as reader:
                yield from reader
    except (pa.ArrowInvalid, OSError) as exc:
        raise LoadInputError(f"cannot read {one.path} as {one.format}: {str(exc).splitlines()[0]}") from None


def csv_header(path: pathlib.Path) -> list[str]:
    with pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=1 << 16)) as reader:
        return reader.schema.names


def _csv_batches(path: pathlib.Path) -> Iterator[pa.RecordBatch]:
    """Every column as text: the table's types decide what a value means, not the reader's guess."""
    header = csv_header(path)
    options = pacsv.ConvertOptions(
        column_types={name: pa.string() for name in header}, strings_can_be_null=True, null_values=CSV_NULLS,
    )
    if path.stat().st_size <= WHOLE_CSV_BYTES:  # small enough to parse at once, on every core
        yield from pacsv.read_csv(path, convert_options=options).to_batches()
        return
    with pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=BLOCK_BYTES), convert_options=options) as reader:
        yield from reader


def read_input(path: pathlib.Path, fmt: str | None = None) -> pa.Table:
    """The whole input as one table (for small inputs and tests; loads stream `open_input`)."""
    source = open_input(path, fmt)
    batches = list(source.batches())
    if not batches:
        return pa.table({})
    try:
        return pa.concat_tables([pa.Table.from_batches([b]) for b in batches], promote_options="permissive")
    except pa.ArrowInvalid as exc:
        raise LoadInputError(f"the files under {path} do not share one schema: {exc}") from None
