"""Whose write a warehouse path is, by the layout's names (alterflow.store.layout.path_writer):
GC aborts an incomplete upload only when the catalog proves that writer over."""

from __future__ import annotations

import pytest

from alterflow.store.layout import (
    PathWriter,
    compaction_staging_path,
    conversion_staging_path,
    data_file_path,
    load_staging_path,
    path_writer,
)


def test_each_kind_of_path_names_its_writer():
    assert path_writer(data_file_path(3, 4, 5, 17)) == PathWriter(txn_id=17)
    assert path_writer(data_file_path(3, 4, 5, 17, seq=2) + ".tmp") == PathWriter(txn_id=17)
    assert path_writer(f"{conversion_staging_path(3, 9, 5, 'a1b2')}/part-0.parquet") == PathWriter(
        shadow_index_id=9, staging="t3/i9/_staging"
    )
    assert path_writer(f"{compaction_staging_path(3, 4, 21)}/part-0.parquet") == PathWriter(
        txn_id=21, staging=compaction_staging_path(3, 4, 21)
    )
    assert path_writer(f"{load_staging_path(3, 4, 22)}/part-0.parquet") == PathWriter(txn_id=22, staging=load_staging_path(3, 4, 22))


@pytest.mark.parametrize(
    "path",
    [
        "notes/big.bin",
        "_alterflow_warehouse.json",
        "t3/i4/b5/readme.txt",  # not a data file's name
        "t3/i4/b5/x/17-000000000000000000000000-0123456789abcdef0123456789abcdef.parquet",  # too deep
        "t3/i4/_compact/y21/part-0.parquet",  # not a compaction's folder
        "t3/i4/_load/l22",  # the folder itself, no object in it
        "tx/i4/b5/17-000000000000000000000000-0123456789abcdef0123456789abcdef.parquet",
        "",
    ],
)
def test_a_path_outside_the_layout_has_no_known_writer(path):
    assert path_writer(path) is None
