"""A load that its driver may run again (an Airflow task's retry after the load committed but before
the task was recorded as done) and that still writes its rows once: the load's transaction carries
a label naming the driver's unit of work, and a run that finds that label committed writes nothing.

An earlier try's transaction still in PREPARE (its worker lost, or stuck) is aborted before this run
writes: its writer, should it still be alive, can then neither add a file nor commit."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from alterflow.catalog.catalog import Catalog
from alterflow.catalog.catalog_errors import MAX_LABEL, checked_label
from alterflow.catalog.labelled_loads import abort_open_loads, committed_load
from alterflow.errors import escaped

__all__ = ["LoadOnce", "load_once", "fitted_label", "MAX_LABEL"]


def fitted_label(text: str) -> str:
    """A label made from `text` (a path, a task instance) that the catalog keeps: control
    characters escaped, and a longer one cut to MAX_LABEL characters ending in a digest of the
    whole, so two long texts still give two labels."""
    label = escaped(text)
    if len(label) <= MAX_LABEL:
        return label
    digest = hashlib.sha256(label.encode()).hexdigest()[:32]
    return f"{label[: MAX_LABEL - len(digest) - 2]} #{digest}"


@dataclass(frozen=True)
class LoadOnce:
    txn_id: int
    rows: int
    earlier: bool  # True: an earlier run committed it, and this one wrote nothing


def load_once(catalog: Catalog, table_id: int, label: str, write: Callable[[], tuple[int, int]]) -> LoadOnce:
    """`write()` (which loads as one transaction labelled `label` and returns (transaction id,
    rows)), unless a load of the table with that label committed already: then what it wrote."""
    checked_label(label, "load")  # before the label is looked for: PostgreSQL refuses a NUL even in a query
    done = committed_load(catalog, table_id, label)
    if done is None:
        abort_open_loads(catalog, table_id, label, f"a later run of the same load ({label}) replaced it")
        done = committed_load(catalog, table_id, label)  # one that committed while it was being aborted
    if done is not None:
        return LoadOnce(done.txn_id, done.rows, earlier=True)
    txn_id, rows = write()
    return LoadOnce(txn_id, rows, earlier=False)
