"""Small file systems of their own for the tests of full and read-only disks: a tmpfs mounted on a
folder (the tests run as root; where mounting is impossible they skip), unmounted afterwards."""

from __future__ import annotations

import contextlib
import pathlib
import subprocess
from collections.abc import Iterator

import pytest


@contextlib.contextmanager
def tmpfs(where: pathlib.Path, size: str = "2m", read_only: bool = False) -> Iterator[pathlib.Path]:
    """`where` (made if missing) as a tmpfs of `size`; read-only with `read_only` (which stops root
    too, where chmod would not)."""
    where.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def fill(folder: pathlib.Path) -> None:
    """Write into `folder` until its file system is full (ENOSPC): what is left is a few blocks at
    most, fewer than any write needs."""
    with contextlib.suppress(OSError), open(folder / "filler", "wb") as out:  # closing flushes: full too
        while True:
            out.write(b"\0" * 4096)
            out.flush()
