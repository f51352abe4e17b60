"""A RUNNING job's Progress (docs/heavyweight.md, "The steps"): tablets done/total, rows done/total, bytes, throughput and
ETA, from the moment the job is RUNNING: `tablets 3/8, rows 1.2M/3.0M, 41 MB/s, ETA 0:00:44`.

Totals are the origin files below the boundary (the rows and bytes the conversion reads); a tablet
counts as done once its conversion has committed. Throughput is what this runner converted since it
started (a resumed job does not count the tablets an earlier runner did), and the ETA is the bytes
left at that rate; both read `-` until this runner has finished a tablet.
"""

from __future__ import annotations

from dataclasses import dataclass

from alterflow.catalog.catalog import AlterJob, Catalog
from alterflow.catalog.heavy_jobs import HeavyJobs


def count_text(n: int) -> str:
    """1234 -> 1.2K, 3000000 -> 3.0M."""
    for limit, suffix in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "K")):
        if n >= limit:
            return f"{n / limit:.1f}{suffix}"
    return str(n)


def duration_text(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


@dataclass(frozen=True)
class TabletSize:
    rows: int
    bytes: int


@dataclass(frozen=True)
class ConversionProgress:
    tablets: dict[int, TabletSize]  # every origin tablet the job converts, with the size it reads
    done: frozenset[int]  # tablets converted (by any runner)
    done_here: frozenset[int] = frozenset()  # of those, converted by this runner
    seconds: float = 0.0  # since this runner started converting

    def text(self) -> str:
        rows_total = sum(t.rows for t in self.tablets.values())
        bytes_total = sum(t.bytes for t in self.tablets.values())
        rows_done = sum(self.tablets[t].rows for t in self.done if t in self.tablets)
        bytes_done = sum(self.tablets[t].bytes for t in self.done if t in self.tablets)
        bytes_here = sum(self.tablets[t].bytes for t in self.done_here if t in self.tablets)
        head = f"tablets {len(self.done)}/{len(self.tablets)}, rows {count_text(rows_done)}/{count_text(rows_total)}"
        if not self.done_here or self.seconds <= 0:
            return f"{head}, - MB/s, ETA -"
        rate = bytes_here / self.seconds
        eta = (bytes_total - bytes_done) / rate if rate > 0 else 0.0
        return f"{head}, {rate / 1e6:.1f} MB/s, ETA {duration_text(eta)}"


def sizes_of(tablet_ids, files_by_tablet: dict[int, list]) -> dict[int, TabletSize]:
    """{tablet: the rows and bytes of its files} for every tablet id (none: 0 and 0)."""
    return {
        t: TabletSize(sum(f.row_count for f in files_by_tablet.get(t, ())), sum(f.byte_size for f in files_by_tablet.get(t, ())))
        for t in tablet_ids
    }


def tablet_sizes(catalog: Catalog, job: AlterJob) -> dict[int, TabletSize]:
    """Every origin tablet of the job, with the rows and bytes of its files below the boundary."""
    return sizes_of(catalog.tablets(job.origin_index_id), HeavyJobs(catalog).origin_files_below_boundary(job))
