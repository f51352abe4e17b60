"""Reading load inputs (alterflow.load.inputs): a CSV cut into byte ranges for Spark tasks reads every
row exactly once, in order, whatever the cut points."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from alterflow.load.inputs import CsvSplit, LoadInputError, csv_header, csv_split_batches, csv_splits, open_input
from tests.support.inputs import read_input


def _rows_of(batches) -> list[dict]:
    return [row for batch in batches for row in batch.to_pylist()]


def _write(path, lines: list[str], newline: str, trailing: bool) -> None:
    path.write_bytes((newline.join(lines) + (newline if trailing else "")).encode())


@pytest.mark.parametrize("seed", range(6))
def test_any_cut_points_read_every_row_once_in_order(tmp_path, seed):
    rnd = random.Random(seed)
    path = tmp_path / "in.csv"
    notes = ["", "NULL", "\\N", "plain", '"quoted, comma"']
    lines = ["id,name,note"] + [f"{i},{'x' * rnd.randrange(0, 40)}ü,{rnd.choice(notes)}" for i in range(400)]
    _write(path, lines, rnd.choice(["\n", "\r\n"]), trailing=rnd.random() < 0.5)
    expected = read_input(path).to_pylist()
    size = path.stat().st_size
    cuts = sorted({0, size, *(rnd.randrange(1, size) for _ in range(rnd.randrange(1, 30)))})
    if seed == 0:  # every single byte a boundary: each line break, each first byte of a line
        cuts = list(range(size + 1))
    header = csv_header(path)
    rows = _rows_of(b for start, end in zip(cuts, cuts[1:]) for b in csv_split_batches(CsvSplit(str(path), 0, start, end), header))
    assert rows == expected
    assert any(r["note"] is None for r in rows) and any(r["note"] == "quoted, comma" for r in rows)


def test_splits_cover_every_file_and_give_each_core_the_same_share(tmp_path):
    for name, lines in (("a.csv", 3000), ("b.csv", 1000), ("c.csv", 0)):
        _write(tmp_path / name, ["id,v"] + [f"{i},{i * 7}" for i in range(lines)], "\n", trailing=True)
    source = open_input(tmp_path)
    splits = csv_splits(source, max_bytes=4096, parallelism=4, min_bytes=1)
    by_file = {}
    for split in splits:
        by_file.setdefault(split.place, []).append((split.start, split.end))
    for place, one in enumerate(source.files):
        ranges = by_file[place]
        assert ranges[0][0] == 0 and ranges[-1][1] == one.size
        assert all(end == next_start for (_s, end), (next_start, _e) in zip(ranges, ranges[1:]))
    sizes = {end - start for ranges in by_file.values() for start, end in ranges[:-1]}
    assert len(sizes) == 1 and sizes.pop() <= 4096
    assert len(csv_splits(source, max_bytes=1 << 30, parallelism=4, min_bytes=1)) >= 4
    assert [(s.start, s.end) for s in csv_splits(source, 1 << 30, 4, min_bytes=1 << 20) if s.place == 0] == [(0, source.files[0].size)]
    header = csv_header(tmp_path / "a.csv")
    rows = _rows_of(b for split in splits for b in csv_split_batches(split, header))
    assert rows == read_input(tmp_path).to_pylist()


def test_a_split_with_a_broken_row_names_the_file(tmp_path):
    path = tmp_path / "bad.csv"
    _write(path, ["id,v", "1,a", "2,b,extra", "3,c"], "\n", trailing=True)
    with pytest.raises(LoadInputError, match=r"^cannot read .*bad\.csv as csv: "):
        list(csv_split_batches(CsvSplit(str(path), 0, 0, path.stat().st_size), ["id", "v"]))


def test_text_columns_keep_what_a_typed_reader_would_guess(tmp_path):
    path = tmp_path / "t.csv"
    _write(path, ["id,v", "007,1e3", "8,"], "\n", trailing=False)
    batches = list(csv_split_batches(CsvSplit(str(path), 0, 0, path.stat().st_size), ["id", "v"]))
    assert pa.Table.from_batches(batches).to_pylist() == [{"id": "007", "v": "1e3"}, {"id": "8", "v": None}]
    assert pacsv.read_csv(path).column("id").type == pa.int64()  # what the reader alone would have made of it
