"""Reading a user's text file (a statements file, a migration, a desired schema) with one line for
every way it can fail: missing or unreadable, too big, not UTF-8. A leading UTF-8 byte-order mark
(editors on Windows write one) is not part of the text."""

from __future__ import annotations

import pathlib

from alterflow.errors import UserError

BOM = "\ufeff"


def read_utf8(path: pathlib.Path, label: str, error: type[UserError], max_bytes: int | None = None, what: str = "text") -> str:
    """The file's text, without a leading byte-order mark; `error(<one line naming label>)` when it cannot be read, is over
    `max_bytes`, or is not UTF-8 (the first bad byte and its offset)."""
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            raise error(f"{label} is over {max_bytes >> 20} MB; {what}")
        data = path.read_bytes()
    except OSError as exc:
        raise error(f"cannot read {label}: {exc.strerror or type(exc).__name__}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{label} is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}") from None
    return text.removeprefix(BOM)
