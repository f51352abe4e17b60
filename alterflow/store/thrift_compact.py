"""A lossless reader and writer of Thrift's compact protocol, the encoding of a Parquet footer.

It needs no IDL: the compact protocol names each field's wire type, so a struct decodes into its
fields (id, wire type, value) in the order they came, unknown fields included, and encodes back
to the same bytes. `alterflow.store.column_splice` edits a footer this way (offsets, names) and
keeps every field a newer writer may add (statistics, size statistics, ...).

Why not a library: pyarrow exposes the footer read-only; fastparquet's codec is internal to it
and brings pandas into every load; thriftpy2 and Apache Thrift need the IDL and drop the fields
it does not declare.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

__all__ = ["BINARY", "LIST", "STRUCT", "Struct", "ThriftError", "ThriftList", "ThriftMap", "decode_struct", "encode_struct"]

# Compact protocol wire types.
STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)


class ThriftError(ValueError):
    """Bytes that are not a well-formed compact-protocol struct."""


@dataclass
class ThriftList:
    element_type: int
    items: list
    is_set: bool = False


@dataclass
class ThriftMap:
    key_type: int
    value_type: int
    items: list[tuple]


@dataclass
class Struct:
    """A struct's fields: id -> (wire type, value), in the order they are written."""

    fields: dict[int, tuple[int, object]] = field(default_factory=dict)

    def get(self, field_id: int, default=None):
        entry = self.fields.get(field_id)
        return default if entry is None else entry[1]

    def __contains__(self, field_id: int) -> bool:
        return field_id in self.fields

    def set(self, field_id: int, value, wire_type: int | None = None) -> None:
        """Set a field's value; a new field needs its wire type and takes its place by id."""
        if field_id in self.fields:
            self.fields[field_id] = (wire_type or self.fields[field_id][0], value)
            return
        if wire_type is None:
            raise KeyError(f"field {field_id} is new: give its wire type")
        self.fields[field_id] = (wire_type, value)
        self.fields = dict(sorted(self.fields.items()))

    def copy(self) -> Struct:
        """A copy whose field table can change without touching this one (values are shared)."""
        return Struct(dict(self.fields))


# --- decoding ---------------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: bytes | memoryview, pos: int):
        self.data = memoryview(data).cast("B")  # a pyarrow Buffer's view holds signed bytes
        self.pos = pos

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ThriftError("compact protocol: unexpected end of data")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise ThriftError("compact protocol: varint too long")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise ThriftError("compact protocol: a length runs past the end of the data")
        value = bytes(self.data[self.pos : self.pos + size])
        self.pos += size
        return value

    def value(self, wire_type: int):
        if wire_type in (TRUE, FALSE):  # a bool inside a container: one byte
            return self.byte() == TRUE
        if wire_type == BYTE:
            b = self.byte()
            return b - 256 if b > 127 else b
        if wire_type in (I16, I32, I64):
            return self.zigzag()
        if wire_type == DOUBLE:
            return struct.unpack("<d", self.take(8))[0]
        if wire_type == BINARY:
            return self.take(self.varint())
        if wire_type in (LIST, SET):
            header = self.byte()
            size, element_type = header >> 4, header & 0x0F
            if size == 15:
                size = self.varint()
            return ThriftList(element_type, [self.value(element_type) for _ in range(size)], wire_type == SET)
        if wire_type == MAP:
            size = self.varint()
            if size == 0:
                return ThriftMap(0, 0, [])
            types = self.byte()
            key_type, value_type = types >> 4, types & 0x0F
            return ThriftMap(key_type, value_type, [(self.value(key_type), self.value(value_type)) for _ in range(size)])
        if wire_type == STRUCT:
            return self.struct()
        raise ThriftError(f"compact protocol: unknown wire type {wire_type}")

    def struct(self) -> Struct:
        fields: dict[int, tuple[int, object]] = {}
        last = 0
        while True:
            header = self.byte()
            if header == STOP:
                return Struct(fields)
            delta, wire_type = header >> 4, header & 0x0F
            field_id = last + delta if delta else self.zigzag()
            if wire_type in (TRUE, FALSE):
                fields[field_id] = (TRUE, wire_type == TRUE)
            else:
                fields[field_id] = (wire_type, self.value(wire_type))
            last = field_id


def decode_struct(data: bytes | memoryview, pos: int = 0) -> tuple[Struct, int]:
    """The struct encoded at `pos`, and the position just after it."""
    reader = _Reader(data, pos)
    return reader.struct(), reader.pos


# --- encoding ---------------------------------------------------------------------------------


def _varint(n: int, out: bytearray) -> None:
    if n < 0:
        raise ThriftError(f"compact protocol: a varint cannot be negative ({n})")
    while True:
        if n < 0x80:
            out.append(n)
            return
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def _zigzag(n: int, out: bytearray) -> None:
    _varint(2 * n if n >= 0 else -2 * n - 1, out)


def _encode_value(wire_type: int, value, out: bytearray) -> None:
    if wire_type in (TRUE, FALSE):
        out.append(TRUE if value else FALSE)
    elif wire_type == BYTE:
        out.append(value & 0xFF)
    elif wire_type in (I16, I32, I64):
        _zigzag(value, out)
    elif wire_type == DOUBLE:
        out += struct.pack("<d", value)
    elif wire_type == BINARY:
        _varint(len(value), out)
        out += value
    elif wire_type in (LIST, SET):
        size = len(value.items)
        if size < 15:
            out.append(size << 4 | value.element_type)
        else:
            out.append(0xF0 | value.element_type)
            _varint(size, out)
        for item in value.items:
            _encode_value(value.element_type, item, out)
    elif wire_type == MAP:
        _varint(len(value.items), out)
        if value.items:
            out.append(value.key_type << 4 | value.value_type)
            for key, item in value.items:
                _encode_value(value.key_type, key, out)
                _encode_value(value.value_type, item, out)
    elif wire_type == STRUCT:
        _encode_struct(value, out)
    else:
        raise ThriftError(f"compact protocol: unknown wire type {wire_type}")


def _encode_struct(value: Struct, out: bytearray) -> None:
    last = 0
    for field_id, (wire_type, item) in value.fields.items():
        header_type = (TRUE if item else FALSE) if wire_type in (TRUE, FALSE) else wire_type
        delta = field_id - last
        if 0 < delta <= 15:
            out.append(delta << 4 | header_type)
        else:
            out.append(header_type)
            _zigzag(field_id, out)
        if wire_type not in (TRUE, FALSE):
            _encode_value(wire_type, item, out)
        last = field_id
    out.append(STOP)


def encode_struct(value: Struct) -> bytes:
    out = bytearray()
    _encode_struct(value, out)
    return bytes(out)
