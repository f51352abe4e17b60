"""A RUNNING job's Progress text (docs/heavyweight.md, "The steps"): tablets, rows done/total, throughput and ETA."""

from __future__ import annotations

from alterflow.rewrite.progress import ConversionProgress, TabletSize, count_text, duration_text

SIZES = {
    1: TabletSize(1_000_000, 40_000_000),
    2: TabletSize(1_000_000, 40_000_000),
    3: TabletSize(1_000_000, 40_000_000),
    4: TabletSize(0, 0),
}


def test_counts_and_durations_read_as_the_spec_shows_them():
    assert [count_text(n) for n in (0, 999, 1_000, 1_234, 1_200_000, 3_000_000_000)] == ["0", "999", "1.0K", "1.2K", "1.2M", "3.0G"]
    assert [duration_text(s) for s in (0, 44, 61, 3_725.4, -3)] == ["0:00:00", "0:00:44", "0:01:01", "1:02:05", "0:00:00"]


def test_before_a_tablet_is_done_the_totals_show_and_the_rate_is_unknown():
    assert ConversionProgress(SIZES, frozenset()).text() == "tablets 0/4, rows 0/3.0M, - MB/s, ETA -"


def test_rate_and_eta_come_from_what_this_runner_converted():
    # An earlier runner did tablet 1; this one did tablet 2 (40 MB) in 2 s: 20 MB/s, 40 MB left -> 2 s.
    progress = ConversionProgress(SIZES, frozenset({1, 2}), frozenset({2}), seconds=2.0)
    assert progress.text() == "tablets 2/4, rows 2.0M/3.0M, 20.0 MB/s, ETA 0:00:02"
    resumed_only = ConversionProgress(SIZES, frozenset({1}), frozenset(), seconds=5.0)
    assert resumed_only.text() == "tablets 1/4, rows 1.0M/3.0M, - MB/s, ETA -"
    finished = ConversionProgress(SIZES, frozenset(SIZES), frozenset(SIZES), seconds=6.0)
    assert finished.text() == "tablets 4/4, rows 3.0M/3.0M, 20.0 MB/s, ETA 0:00:00"
