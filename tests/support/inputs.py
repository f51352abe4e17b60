"""A load input read whole, the reference the streaming reads of `alterflow.load.inputs` are
compared with (loads themselves stream `open_input`)."""

from __future__ import annotations

import pathlib

import pyarrow as pa

from alterflow.load.inputs import LoadInputError, open_input


def read_input(path: pathlib.Path, fmt: str | None = None) -> pa.Table:
    """The whole input as one table."""
    batches = list(open_input(path, fmt).batches())
    if not batches:
        return pa.table({})
    try:
        return pa.concat_tables([pa.Table.from_batches([b]) for b in batches], promote_options="permissive")
    except pa.ArrowInvalid as exc:
        raise LoadInputError(f"the files under {path} do not share one schema: {exc}") from None
