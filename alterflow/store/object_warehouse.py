"""`ObjectWarehouse`: a `Warehouse` whose root is a bucket and prefix (alterflow.object_store),
keeping the warehouse's promises with what an object store offers (docs/storage.md):

- **One owner.** The marker `_alterflow_warehouse.json` is created with a conditional write
  (`If-None-Match: *`): of two catalogs claiming at once, exactly one creates it. A marker is
  replaced only if it is still the one read (`If-Match` on its ETag), so a GC recording its high
  water never overwrites a re-bind that happened meanwhile.
- **Durable before visible.** An object exists only once its upload completed, and then durably
  (the store's guarantee, acknowledged before the upload's completion returns): there is nothing to
  flush, so `sync` only checks that every file is there before the catalog commit.
- **Deletes are deferred**, as on a disk; a listing is one listing of the prefix (links and special
  files do not exist here). Folders do not exist either: a "folder" is the objects under a prefix.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterable
from datetime import UTC

from alterflow.catalog.catalog import Catalog
from alterflow.errors import shown_path
from alterflow.object_store import ObjectStoreError, ObjectStoreFiles, ObjectStoreLocation
from alterflow.store.layout import INDEX_DIR, TABLE_DIR, path_writer
from alterflow.store.warehouse import (
    MARKER,
    FoundFile,
    IncompleteUpload,
    IndexFolder,
    MarkerRecord,
    StagingFolder,
    Warehouse,
    WarehouseScan,
)


class ObjectWarehouse(Warehouse):
    """The files of one catalog's tables under a bucket's prefix."""

    def __init__(self, root: ObjectStoreLocation, catalog: Catalog):
        self.root = root
        self.catalog = catalog
        self.files = ObjectStoreFiles(root)
        self._owned = False
        self.record = None
        self.skipped = []  # nothing is ever skipped: an object store has no links or special files
        self._marker_etag: str | None = None

    def path(self, relative: str) -> str:
        """The object's key (`bucket/prefix/relative`), refusing anything outside the prefix."""
        return self.root.key(relative)

    def exists(self, relative: str) -> bool:
        return self.files.size(relative) is not None

    def size(self, relative: str) -> int:
        found = self.files.size(relative)
        if found is None:
            raise FileNotFoundError(f"{self.path(relative)}: no such object")
        return found

    # -- who owns it --------------------------------------------------------------------------
    @property
    def marker(self) -> str:
        return self.path(MARKER)

    def _client(self):
        """boto3's S3 client for the marker's conditional writes and the uploads' listing (pyarrow
        has neither); one line without boto3."""
        try:
            return self.root.client
        except ImportError:
            raise ObjectStoreError(f"warehouse {shown_path(self.root)} is in object storage: install alterflow[s3] (boto3)") from None

    def _store_failed(self, exc: Exception, what: str) -> ObjectStoreError:
        """One line for a request the store (or the way to it) failed: not a refusal of this catalog."""
        code = getattr(exc, "response", {}).get("Error", {}).get("Code") if hasattr(exc, "response") else None
        return ObjectStoreError(f"warehouse {shown_path(self.root)}: {what} failed: {code or str(exc).splitlines()[0]}")

    def _marker_key(self) -> str:
        return self.marker.split("/", 1)[1]

    def _marker_text(self) -> str | None:
        client = self._client()
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            reply = client.get_object(Bucket=self.root.bucket, Key=self._marker_key())
            body = reply["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                self._marker_etag = None
                return None
            raise self._store_failed(exc, f"reading its owner marker {MARKER}") from None
        except BotoCoreError as exc:
            raise self._store_failed(exc, f"reading its owner marker {MARKER}") from None
        self._marker_etag = reply.get("ETag")
        try:
            return body.decode("utf-8")
        except ValueError:
            raise self._unreadable() from None

    def _put_marker(self, record: MarkerRecord, condition: dict) -> bool:
        """Write the marker under `condition` (If-None-Match or If-Match); False when the condition
        did not hold (another process wrote or is writing it)."""
        client = self._client()
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            reply = client.put_object(Bucket=self.root.bucket, Key=self._marker_key(), Body=self._marker_body(record).encode(), **condition)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("PreconditionFailed", "ConditionalRequestConflict"):
                return False
            raise self._store_failed(exc, f"writing its owner marker {MARKER}") from None
        except BotoCoreError as exc:
            raise self._store_failed(exc, f"writing its owner marker {MARKER}") from None
        self._marker_etag = reply.get("ETag")  # of what this process wrote: the next replace is conditional on it
        return True

    def _create_marker(self, record: MarkerRecord) -> None:
        """Create the marker unless one exists (If-None-Match: of racing claims, one creates it)."""
        self._put_marker(record, {"IfNoneMatch": "*"})

    def _marker_body(self, record: MarkerRecord) -> str:
        import os
        import socket

        return record.to_json(f"{socket.gethostname()}:{os.getpid()}")

    def _replace_marker(self, record: MarkerRecord) -> bool:
        """Replace the marker this process read or wrote last (If-Match on its ETag), or create it
        where there was none. False, with nothing written, when another process changed it
        meanwhile: its change stands (a bind, a claim, a GC's high water)."""
        condition = {"IfMatch": self._marker_etag} if self._marker_etag else {"IfNoneMatch": "*"}
        if not self._put_marker(record, condition):
            return False
        self.record = record
        return True

    def _move_unreadable_marker(self) -> str | None:
        """An unreadable marker object is simply replaced (an object store has no folder to move aside)."""
        return None

    # -- listing ------------------------------------------------------------------------------
    def scan(self) -> WarehouseScan:
        """One listing of the prefix, sorted into the layout's table, index, tablet and staging
        "folders" by the keys' parts; objects outside the layout are left alone."""
        found = WarehouseScan()
        indexes: dict[str, IndexFolder] = {}
        staging: dict[str, StagingFolder] = {}
        for stored in self.files.list():
            parts = stored.path.split("/")
            table = TABLE_DIR.fullmatch(parts[0]) if len(parts) > 1 else None
            if table is None:
                continue
            found.tables.setdefault(int(table.group(1)), self.path(parts[0]))
            index = INDEX_DIR.fullmatch(parts[1]) if len(parts) > 2 else None
            if index is None:
                continue
            relative = f"{parts[0]}/{parts[1]}"
            folder = indexes.setdefault(relative, IndexFolder(relative, int(table.group(1)), int(index.group(1)), self.path(relative)))
            writer = path_writer(stored.path)
            if writer is None:
                continue
            if writer.staging is None:
                found.files.append(FoundFile(stored.path, self.path(stored.path), stored.modified))
            else:
                staging.setdefault(writer.staging, StagingFolder(writer.staging, folder.index_id, writer.txn_id))
        found.indexes = sorted(indexes.values(), key=lambda i: i.relative)
        found.staging = sorted(staging.values(), key=lambda s: s.relative)
        return found

    def _still_there(self, found: FoundFile) -> bool:
        return self.exists(found.path)

    # -- writing ------------------------------------------------------------------------------
    def prepare(self, relative: str) -> str:
        """The key a writer may create `relative` at, after the ownership check (no folders to make)."""
        self.check_owner()
        return self.path(relative)

    def move(self, source: pathlib.Path | str, relative: str) -> str:
        """Copy a staged object into place and delete the staged one (an object store has no
        rename; docs/storage.md: a crash between leaves both, the staged one for GC's sweep)."""
        source = str(source)
        if not source.startswith(self.root.root + "/") or ".." in source.split("/"):
            raise ValueError(f"{source} is not an object of the warehouse {self.root}")
        target = self.prepare(relative)
        self.files.move(source, target)
        return target

    def sync(self, relatives: Iterable[str]) -> int:
        """Nothing to flush (a completed upload is durable); every file must be there before the
        catalog commit that makes it visible: FileNotFoundError otherwise."""
        self.check_owner()
        count = 0
        for relative in relatives:
            self.size(relative)
            count += 1
        return count

    # -- deleting -----------------------------------------------------------------------------
    def delete(self, relatives: Iterable[str]) -> int:
        """Delete objects by their catalog paths; returns how many existed. Only GC's sweep calls this."""
        self.check_owner()
        relatives = list(relatives)
        for relative in relatives:
            self.path(relative)  # nothing outside the prefix, before anything goes
        return self.files.delete(relatives)

    def remove_scratch(self, folder: pathlib.Path | str) -> None:
        """Delete every object under a staging "folder", by its catalog path."""
        relative = str(folder)
        parts = relative.split("/")
        if not relative or any(p in ("", ".", "..") for p in parts) or len(parts) < 3:
            raise ValueError(f"{folder} is not a folder inside the warehouse {self.root}")
        objects = [o.path for o in self.files.list(relative)]
        if objects:
            self.check_owner()
            self.files.delete(objects)

    def incomplete_uploads(self) -> list[IncompleteUpload]:
        """Every multipart upload under the prefix that was begun and never completed or aborted
        (the store lists them by key and start time)."""
        client = self._client()
        prefix = f"{self.root.prefix}/" if self.root.prefix else ""
        found, markers = [], {}
        while True:
            page = client.list_multipart_uploads(Bucket=self.root.bucket, Prefix=prefix, **markers)
            for upload in page.get("Uploads", ()):
                initiated = upload["Initiated"].astimezone(UTC).replace(tzinfo=None)
                found.append(IncompleteUpload(upload["Key"][len(prefix) :], upload["UploadId"], initiated))
            if not page.get("IsTruncated"):
                return found
            markers = {"KeyMarker": page["NextKeyMarker"], "UploadIdMarker": page["NextUploadIdMarker"]}

    def abort_uploads(self, uploads: Iterable[IncompleteUpload]) -> int:
        """Abort incomplete uploads (their parts go); one already completed or aborted is skipped."""
        from botocore.exceptions import ClientError

        self.check_owner()
        client, aborted = self._client(), 0
        for upload in uploads:
            try:
                client.abort_multipart_upload(
                    Bucket=self.root.bucket, Key=self.path(upload.path).split("/", 1)[1], UploadId=upload.upload_id
                )
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "NoSuchUpload":
                    raise
                continue
            aborted += 1
        return aborted

    def remove_dropped_index_folder(self, index: IndexFolder) -> None:
        """An object store has no folders: once a dropped index's objects are deleted, nothing of
        it is left to remove."""
        return None
