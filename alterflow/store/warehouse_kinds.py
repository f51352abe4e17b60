"""Which warehouse a root is: `open_warehouse` gives an `ObjectWarehouse` (alterflow.store.object_warehouse)
for a root in object storage (an `ObjectStoreLocation`, docs/storage.md) and a `Warehouse`
(alterflow.store.warehouse) for a folder on a local or mounted file system. Every door and step
opens its warehouse here, so neither kind needs to know of the other."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING

from alterflow.object_store import ObjectStoreLocation
from alterflow.store.warehouse import Warehouse

if TYPE_CHECKING:  # pragma: no cover
    from alterflow.catalog.catalog import Catalog


def open_warehouse(root: pathlib.Path | str | ObjectStoreLocation, catalog: Catalog) -> Warehouse:
    """The warehouse of `catalog` at `root`. Cheap: ownership is checked on its first write."""
    if isinstance(root, ObjectStoreLocation):
        from alterflow.store.object_warehouse import ObjectWarehouse

        return ObjectWarehouse(root, catalog)
    return Warehouse(root, catalog)
