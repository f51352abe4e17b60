"""Reading the input of `alterflow load`: Parquet, CSV (with a header) or JSON lines, one file or a
directory of them, as a stream of Arrow record batches, so a load's memory stays bounded whatever
the input's size. CSV values are read as text (`''`, `NULL` and `\\N` are NULL) and converted by
the table's column types (alterflow.values.load_coercion)."""

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

from alterflow.errors import UserError, shown

FORMATS = {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}
CSV_NULLS = ["", "NULL", "\\N"]
BLOCK_BYTES = 8 << 20  # CSV / JSON bytes parsed per batch
PARQUET_BATCH_ROWS = 256 * 1024
READ_AHEAD = 2  # batches parsed ahead of the one being converted
WHOLE_CSV_BYTES = 64 << 20  # a CSV up to this size is parsed in one go (threads across its blocks)


class LoadInputError(UserError):
    """The input of a bulk load cannot be read."""


def _format_of(path: pathlib.Path, given: str | None) -> str:
    if given:
        return given
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise LoadInputError(f"cannot tell the format of {_path(path)}; pass --format parquet|csv|json")
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
    try:
        if not path.exists():
            raise LoadInputError(f"{_path(path)} does not exist")
        if path.is_dir():
            files = sorted(
                p for p in path.iterdir() if p.is_file() and (fmt or FORMATS.get(p.suffix.lower())) and not p.name.startswith((".", "_"))
            )
            if not files:
                raise LoadInputError(f"{_path(path)} holds no file to load")
        else:
            files = [path]
        return LoadInput(tuple(InputFile(p, _format_of(p, fmt), p.stat().st_size) for p in files))
    except OSError as exc:  # a name too long, a directory that cannot be listed...
        raise LoadInputError(f"cannot read {_path(path)}: {exc.strerror or type(exc).__name__}") from None


def _path(path: pathlib.Path) -> str:
    """A path as a message shows it: as typed when short and plain, else quoted and shortened."""
    text = str(path)
    return text if len(text) <= 200 and text.isprintable() else shown(text, 200)


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
        raise LoadInputError(f"cannot read {_path(one.path)} as {one.format}: {str(exc).splitlines()[0]}") from None


def csv_header(path: pathlib.Path) -> list[str]:
    with pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=1 << 16)) as reader:
        return reader.schema.names


def _text_columns(header: list[str]) -> pacsv.ConvertOptions:
    """Every column as text: the table's types decide what a value means, not the reader's guess."""
    return pacsv.ConvertOptions(
        column_types={name: pa.string() for name in header},
        strings_can_be_null=True,
        null_values=CSV_NULLS,
    )


def _csv_batches(path: pathlib.Path) -> Iterator[pa.RecordBatch]:
    header = csv_header(path)
    options = _text_columns(header)
    if path.stat().st_size <= WHOLE_CSV_BYTES:  # small enough to parse at once, on every core
        yield from pacsv.read_csv(path, convert_options=options).to_batches()
        return
    with pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=BLOCK_BYTES), convert_options=options) as reader:
        yield from reader


@dataclass(frozen=True)
class CsvSplit:
    """The lines of one CSV file whose first byte lies in [start, end): a Spark task's share of a
    big input. As in Spark's and Hadoop's line readers, a value may not hold a line break."""

    path: str
    place: int  # the file's place in the load
    start: int
    end: int


def csv_splits(source: LoadInput, max_bytes: int, parallelism: int, min_bytes: int = 1 << 20) -> list[CsvSplit]:
    """`source`'s CSV files cut into byte ranges of at most `max_bytes`, as many as a multiple of
    `parallelism` (so that every core gets the same share), each at least `min_bytes`."""
    total = max(source.size, 1)
    count = -(-total // max_bytes)
    count = -(-count // parallelism) * parallelism
    size = max(min_bytes, -(-total // count))
    splits = []
    for place, one in enumerate(source.files):
        for start in range(0, max(one.size, 1), size):
            splits.append(CsvSplit(str(one.path.resolve()), place, start, min(start + size, one.size)))
    return splits


def _after_line_break(file, position: int) -> int:
    """The offset just after the first line break at or after `position` (the file's size if none)."""
    file.seek(position)
    while True:
        chunk = file.read(1 << 16)
        if not chunk:
            return file.tell()
        found = chunk.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(chunk)


def csv_split_batches(split: CsvSplit, header: list[str]) -> Iterator[pa.RecordBatch]:
    """The rows of `split` as text columns, with the same NULL texts as a whole file's read. The
    first split holds the header line; the others are named by `header`."""
    with open(split.path, "rb") as file:
        begin = 0 if split.start == 0 else _after_line_break(file, split.start - 1)
        finish = _after_line_break(file, split.end - 1) if split.end > 0 else 0
    if finish <= begin:
        return
    options = pacsv.ReadOptions(block_size=BLOCK_BYTES, use_threads=False, column_names=None if begin == 0 else header)
    try:
        with pa.memory_map(split.path) as mapped:
            data = mapped.read_at(finish - begin, begin)
            with pacsv.open_csv(pa.BufferReader(data), read_options=options, convert_options=_text_columns(header)) as reader:
                if reader.schema.names != header:
                    raise LoadInputError(f"{split.path}: the header is {reader.schema.names}, expected {header}")
                yield from reader
    except (pa.ArrowInvalid, OSError) as exc:
        raise LoadInputError(f"cannot read {split.path} as csv: {str(exc).splitlines()[0]}") from None
