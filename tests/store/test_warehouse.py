"""`Warehouse` on its own (SQLite and PostgreSQL catalogs): the owner marker, what `sync` flushes,
and that nothing it is asked to touch lies outside the warehouse, a symlinked root included."""

from __future__ import annotations

import json
import pathlib

import pytest

import alterflow.store.warehouse as warehouse_module
from alterflow.store.warehouse import MARKER, Warehouse, WarehouseNotOwned


def test_the_first_write_claims_and_a_second_catalog_is_refused(catalog, tmp_path):
    from alterflow.catalog.catalog import Catalog

    store = Warehouse(tmp_path / "w", catalog)
    assert store.owner() is None
    store.check_owner(claim=False)
    assert not (tmp_path / "w" / MARKER).exists(), "a look claims nothing"
    store.check_owner()
    marker = json.loads((tmp_path / "w" / MARKER).read_text())
    assert marker["catalog_id"] == catalog.catalog_id() and len(marker["catalog_id"]) == 32

    other = Catalog(f"sqlite:///{tmp_path / 'other.db'}")
    with pytest.raises(WarehouseNotOwned) as refused:
        Warehouse(tmp_path / "w", other).prepare("t1/i1/b1/x.parquet")
    assert str(refused.value).startswith(f"warehouse {tmp_path / 'w'} belongs to catalog {catalog.catalog_id()}, not to this catalog ")
    assert not (tmp_path / "w" / "t1").exists()


def test_sync_flushes_each_file_and_every_folder_up_to_the_root_once(catalog, tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)  # a symlinked root: folders compare by their real paths
    store = Warehouse(tmp_path / "link", catalog)
    for relative in ("t1/i1/b1/a.parquet", "t1/i1/b1/b.parquet", "t1/i1/b2/c.parquet"):
        store.prepare(relative).write_bytes(b"x")
    flushed: list[tuple[pathlib.Path, bool]] = []
    monkeypatch.setattr(warehouse_module, "fsync_path", lambda path, directory=False: flushed.append((path, directory)))
    assert store.sync(["t1/i1/b1/a.parquet", "t1/i1/b1/b.parquet", "t1/i1/b2/c.parquet"]) == 3
    files = [p.relative_to(real) for p, directory in flushed if not directory]
    folders = [p for p, directory in flushed if directory]
    assert sorted(str(p) for p in files) == ["t1/i1/b1/a.parquet", "t1/i1/b1/b.parquet", "t1/i1/b2/c.parquet"]
    assert sorted(str(p.relative_to(real)) for p in folders) == [".", "t1", "t1/i1", "t1/i1/b1", "t1/i1/b2"]
    assert len(folders) == len(set(folders)), "each folder once"
    # In no particular order (they run at once, so the journal commits the entries together):
    # nothing is visible before the catalog commit that follows, so only their completion counts.


def test_nothing_outside_the_warehouse_is_touched(catalog, tmp_path):
    store = Warehouse(tmp_path / "w", catalog)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.parquet").write_bytes(b"x")
    with pytest.raises(ValueError):
        store.delete(["../outside/keep.parquet"])
    with pytest.raises(ValueError):
        store.remove_scratch(outside)
    with pytest.raises(ValueError):
        store.remove_scratch(tmp_path / "w")  # the root itself is no scratch folder
    assert (outside / "keep.parquet").exists()


def test_a_missing_file_cannot_be_made_visible(catalog, tmp_path):
    """A commit whose file is not there fails at the flush, before the catalog commit."""
    store = Warehouse(tmp_path / "w", catalog)
    with pytest.raises(FileNotFoundError):
        store.sync(["t1/i1/b1/never-written.parquet"])
