"""`Warehouse` on both storages (a local folder and a bucket of a real S3-protocol server), with
catalogs on SQLite and PostgreSQL: one owner, the claim raced, binding, the listing, deletes,
and the check before a commit. Storage-specific behaviour (fsync, links) is in test_warehouse.py."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from alterflow.catalog.catalog import Catalog
from alterflow.object_store import ObjectStoreFiles, parse_object_store_uri
from alterflow.store.object_warehouse import ObjectWarehouse
from alterflow.store.warehouse import MARKER, MarkerRecord, WarehouseNotOwned
from alterflow.store.warehouse_kinds import open_warehouse

DATA = "t1/i1/b1/5-000000000000000000000000-0123456789abcdef0123456789abcdef.parquet"


@dataclass
class Storage:
    """A warehouse root and how a test puts, finds and reads objects there behind its back."""

    root: object
    put: Callable[[str, bytes], None]
    exists: Callable[[str], bool]
    read: Callable[[str], bytes]


@pytest.fixture(params=["local", "s3"])
def storage(request, tmp_path):
    if request.param == "local":
        root = tmp_path / "w"

        def put(relative: str, data: bytes) -> None:
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(data)

        return Storage(root, put, lambda r: (root / r).exists(), lambda r: (root / r).read_bytes())
    bucket = request.getfixturevalue("s3_bucket")
    location = parse_object_store_uri(f"s3://{bucket}/w", "ALTERFLOW_WAREHOUSE", os.environ)
    files = ObjectStoreFiles(location)
    return Storage(location, files.write_bytes, lambda r: files.size(r) is not None, files.read_bytes)


def test_a_bucket_root_makes_an_object_warehouse(storage, catalog):
    store = open_warehouse(storage.root, catalog)
    assert isinstance(store, ObjectWarehouse) == (not hasattr(storage.root, "mkdir"))


def test_the_first_write_claims_and_a_second_catalog_is_refused(storage, catalog, tmp_path):
    store = open_warehouse(storage.root, catalog)
    assert store.owner() is None
    store.check_owner(claim=False)
    assert not storage.exists(MARKER), "a look claims nothing"
    store.prepare(DATA)
    marker = json.loads(storage.read(MARKER))
    assert marker["catalog_id"] == catalog.catalog_id()

    other = Catalog(f"sqlite:///{tmp_path / 'other.db'}")
    with pytest.raises(WarehouseNotOwned) as refused:
        open_warehouse(storage.root, other).prepare(DATA)
    assert str(refused.value) == (
        f"warehouse {storage.root} belongs to catalog {catalog.catalog_id()}, not to this catalog {other.catalog_id()}: "
        "check ALTERFLOW_CATALOG_URL and ALTERFLOW_WAREHOUSE; `alterflow db bind-warehouse` re-binds"
    )


def test_of_catalogs_claiming_at_once_exactly_one_owns_it(storage, tmp_path):
    catalogs = [Catalog(f"sqlite:///{tmp_path / f'c{i}.db'}") for i in range(4)]
    start, outcome = threading.Barrier(len(catalogs)), {}

    def claim(catalog: Catalog) -> None:
        start.wait()
        try:
            open_warehouse(storage.root, catalog).check_owner()
            outcome[catalog.catalog_id()] = "owner"
        except WarehouseNotOwned:
            outcome[catalog.catalog_id()] = "refused"

    threads = [threading.Thread(target=claim, args=(c,)) for c in catalogs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    owners = [c for c, said in outcome.items() if said == "owner"]
    assert len(owners) == 1 and json.loads(storage.read(MARKER))["catalog_id"] == owners[0]


def test_an_unreadable_marker_is_one_line_and_bind_replaces_it(storage, catalog):
    storage.put(MARKER, b"{not json")
    with pytest.raises(WarehouseNotOwned, match=rf"^warehouse {storage.root} has an unreadable owner marker {MARKER}: "):
        open_warehouse(storage.root, catalog).check_owner()
    said = open_warehouse(storage.root, catalog).bind()
    assert said == f"warehouse {storage.root} bound to catalog {catalog.catalog_id()} (its marker was unreadable)"
    open_warehouse(storage.root, catalog).check_owner()


def test_a_fresh_catalog_never_claims_another_catalogs_unmarked_warehouse(storage, catalog):
    storage.put(DATA, b"x")
    with pytest.raises(WarehouseNotOwned, match=r"is another catalog's warehouse: it holds 1 table folder\(s\) and this catalog has none"):
        open_warehouse(storage.root, catalog).check_owner()
    assert not storage.exists(MARKER)


def test_bind_is_refused_over_unknown_files_and_forced_moves_the_owner(storage, catalog, tmp_path):
    open_warehouse(storage.root, catalog).check_owner()
    storage.put(DATA, b"x")  # a file of transaction 5, which the new catalog never began
    fresh = Catalog(f"sqlite:///{tmp_path / 'fresh.db'}")
    with pytest.raises(WarehouseNotOwned, match=r"holds 1 data file\(s\) catalog [0-9a-f]{32} has no record of"):
        open_warehouse(storage.root, fresh).bind()
    said = open_warehouse(storage.root, fresh).bind(force=True)
    assert said.endswith(f"from catalog {catalog.catalog_id()}; 1 unknown file(s) left to GC")
    assert json.loads(storage.read(MARKER))["catalog_id"] == fresh.catalog_id()
    with pytest.raises(WarehouseNotOwned, match="belongs to catalog"):
        open_warehouse(storage.root, catalog).check_owner()


def test_the_high_water_mark_never_overwrites_a_bind_made_meanwhile(storage, catalog, tmp_path):
    store = open_warehouse(storage.root, catalog)
    store.check_owner()
    store.record_high_water(7)
    assert json.loads(storage.read(MARKER))["high_water"] == 7
    other = Catalog(f"sqlite:///{tmp_path / 'other.db'}")
    open_warehouse(storage.root, other).bind(force=True)  # while `store` still holds the marker it read
    store.record_high_water(9)
    marker = json.loads(storage.read(MARKER))
    if isinstance(store, ObjectWarehouse):  # a conditional replace: the bind stands
        assert marker["catalog_id"] == other.catalog_id()
    else:  # on a disk the marker is replaced by rename: the later writer wins (docs/storage.md)
        assert marker["catalog_id"] == catalog.catalog_id()


def test_the_store_honours_the_markers_conditions(storage, catalog, tmp_path):
    """What the one-owner promise rests on in a bucket: a create over an existing marker writes
    nothing, and a replace conditional on a marker that has changed since writes nothing."""
    store = open_warehouse(storage.root, catalog)
    store.check_owner()
    first = storage.read(MARKER)
    other = Catalog(f"sqlite:///{tmp_path / 'other.db'}")
    open_warehouse(storage.root, other)._create_marker(MarkerRecord(other.catalog_id()))
    assert storage.read(MARKER) == first, "a second claim leaves the first"
    if not isinstance(store, ObjectWarehouse):
        return
    stale = open_warehouse(storage.root, catalog)
    stale.read_marker()  # remembers this version of the marker
    store.record_high_water(3)  # the marker changes
    assert stale._replace_marker(MarkerRecord(catalog.catalog_id(), 1)) is False
    assert json.loads(storage.read(MARKER))["high_water"] == 3


def test_the_listing_sorts_the_layout_and_leaves_the_rest_alone(storage, catalog):
    store = open_warehouse(storage.root, catalog)
    store.check_owner()
    for relative in (
        DATA,
        "t1/i1/b2/6-0123456789abcdef0123456789abcdef.parquet",
        "t1/i2/_staging/o1-abc/7-0123456789abcdef0123456789abcdef.parquet",
        "t1/i2/_compact/x8/8-0123456789abcdef0123456789abcdef.parquet",
        "t1/i2/_load/l9/9-0123456789abcdef0123456789abcdef.parquet",
        "t1/i1/b1/notes.txt",  # not a data file's name
        "t1/readme",
        "other/t2/i1/b1/5-0123456789abcdef0123456789abcdef.parquet",
    ):
        storage.put(relative, b"x")
    scan = store.scan()
    assert sorted(scan.tables) == [1]
    assert [i.relative for i in scan.indexes] == ["t1/i1", "t1/i2"]
    assert [f.path for f in scan.files] == [DATA, "t1/i1/b2/6-0123456789abcdef0123456789abcdef.parquet"]
    assert [f.txn_id for f in scan.files] == [5, 6]
    assert [(s.relative, s.txn_id) for s in scan.staging] == [("t1/i2/_compact/x8", 8), ("t1/i2/_load/l9", 9), ("t1/i2/_staging", None)]
    store.remove_scratch("t1/i2/_load/l9")
    assert [s.relative for s in store.scan().staging] == ["t1/i2/_compact/x8", "t1/i2/_staging"]
    assert storage.exists("t1/i1/b1/notes.txt") and storage.exists("t1/readme")


def test_delete_removes_only_what_it_is_given_and_nothing_outside(storage, catalog):
    store = open_warehouse(storage.root, catalog)
    store.check_owner()
    keep = "t1/i1/b1/6-0123456789abcdef0123456789abcdef.parquet"
    storage.put(DATA, b"x")
    storage.put(keep, b"y")
    with pytest.raises(ValueError, match="outside the warehouse"):
        store.delete([DATA, "../elsewhere/x.parquet"])
    assert storage.exists(DATA), "nothing goes when one path is outside"
    assert store.delete([DATA, "t1/i1/b1/never-there.parquet"]) == 1
    assert not storage.exists(DATA) and storage.exists(keep)
    assert store.exists(keep) and store.size(keep) == 1 and not store.exists(DATA)


def test_a_missing_file_cannot_be_made_visible(storage, catalog):
    store = open_warehouse(storage.root, catalog)
    store.check_owner()
    storage.put(DATA, b"x")
    with pytest.raises(FileNotFoundError):
        store.sync([DATA, "t1/i1/b1/never-written.parquet"])


def test_a_disk_has_no_incomplete_uploads_and_a_bucket_lists_its_own(storage, catalog, tmp_path):
    store = open_warehouse(storage.root, catalog)
    store.check_owner()
    if not isinstance(store, ObjectWarehouse):
        assert store.incomplete_uploads() == []
        return
    client = storage.root.client
    begun = client.create_multipart_upload(Bucket=storage.root.bucket, Key=f"w/{DATA}")["UploadId"]
    client.create_multipart_upload(Bucket=storage.root.bucket, Key="elsewhere/x.parquet")  # not under the prefix
    [upload] = store.incomplete_uploads()
    assert (upload.path, upload.upload_id) == (DATA, begun)
    assert store.abort_uploads([upload, upload]) == 1, "an upload already aborted is skipped"
    assert store.incomplete_uploads() == []


def test_the_marker_record_round_trips(storage, catalog):
    store = open_warehouse(storage.root, catalog)
    store.check_owner()
    assert store.read_marker() == MarkerRecord(catalog.catalog_id())
