"""The hash bucket of a distribution key: Spark's own `hash()`, computed by Spark, numpy or Python.

A row's bucket is `pmod(hash(k1, k2, ...), buckets)` where `hash` is Spark's Murmur3Hash
expression (`pyspark.sql.functions.hash`): Murmur3_x86_32 with seed 42, each key column's value
hashed with the running hash as its seed, a NULL leaving the running hash unchanged, and the
32-bit result read as a signed int. Using Spark's own function means a Spark rewrite
(`spark_bucket_expr`) and a pyarrow load (`bucket_array`) put a row into the same tablet by
construction rather than by a re-implementation of some text form in both; `bucket_of` is the
same rule for one row of Python values.

How Spark hashes each value (HashExpression in Spark's hash.scala, Murmur3_x86_32.java), after
casting it to the column's Spark type (`types.to_spark`):

- BOOLEAN: hashInt(1 or 0); TINYINT, SMALLINT, INT: hashInt(value); DATE: hashInt(days since
  1970-01-01);
- BIGINT: hashLong(value); DATETIME (TIMESTAMP_NTZ): hashLong(microseconds since 1970-01-01);
- DECIMAL(p, s) with p <= 18: hashLong(unscaled value);
- DECIMAL with p > 18, and LARGEINT (= DECIMAL(38, 0)): hashUnsafeBytes of Java's
  `BigInteger.toByteArray()` of the unscaled value (big-endian two's complement, minimal length);
- CHAR / VARCHAR / STRING: hashUnsafeBytes of the UTF-8 bytes.

hashUnsafeBytes is Spark's legacy byte hash, not standard Murmur3: 4-byte little-endian blocks,
then each remaining byte on its own, as a SIGNED byte, through mixK1/mixH1, and the final mix
with the byte length. FLOAT and DOUBLE are never distribution columns.

Importing this module never imports pyspark: `spark_bucket_expr` imports it lazily.
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from alterflow.values.types import DataType, InvalidType, to_arrow, to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column

__all__ = ["SEED", "bucket_array", "bucket_of", "hash_array", "hash_of", "spark_bucket_expr"]

SEED = 42  # Murmur3Hash's default seed in Spark
MAX_LONG_DIGITS = 18  # Spark hashes a decimal of at most this precision as a long

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK = 0xFFFFFFFF
_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_UNSCALED = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)  # Spark's cast rounds half up


# --------------------------------------------------------------------------------------------
# Key checks and Spark
# --------------------------------------------------------------------------------------------


def _check_key(count: int, types: tuple[DataType, ...], buckets: int) -> None:
    if count == 0 or count != len(types):
        raise ValueError(f"a distribution key needs one type per column, got {count} and {len(types)}")
    if buckets < 1:
        raise ValueError(f"bucket count must be at least 1, got {buckets}")
    for t in types:
        if t.is_float:
            raise InvalidType(f"{t.sql()} cannot be a distribution column")


def spark_bucket_expr(columns: list[str], types: tuple[DataType, ...], buckets: int) -> Column:
    """The Spark column of the bucket of `columns` (each first cast to its type, as stored)."""
    from pyspark.sql import functions as F

    _check_key(len(columns), types, buckets)
    hashed = F.hash(*[F.col(name).cast(to_spark(t)) for name, t in zip(columns, types)])
    return F.pmod(hashed, F.lit(buckets))


# --------------------------------------------------------------------------------------------
# One row, in Python
# --------------------------------------------------------------------------------------------


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix_k1(k1: int) -> int:
    return (_rotl((k1 * _C1) & _MASK, 15) * _C2) & _MASK


def _mix_h1(h1: int, k1: int) -> int:
    return (_rotl(h1 ^ k1, 13) * 5 + 0xE6546B64) & _MASK


def _fmix(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    return h1 ^ (h1 >> 16)


def _hash_int(value: int, seed: int) -> int:
    return _fmix(_mix_h1(seed, _mix_k1(value & _MASK)), 4)


def _hash_long(value: int, seed: int) -> int:
    h1 = _mix_h1(seed, _mix_k1(value & _MASK))
    h1 = _mix_h1(h1, _mix_k1((value >> 32) & _MASK))
    return _fmix(h1, 8)


def _hash_bytes(data: bytes, seed: int) -> int:
    """Spark's hashUnsafeBytes: little-endian 4-byte blocks, then each tail byte sign-extended."""
    aligned = len(data) - len(data) % 4
    h1 = seed
    for i in range(0, aligned, 4):
        h1 = _mix_h1(h1, _mix_k1(int.from_bytes(data[i : i + 4], "little")))
    for byte in data[aligned:]:
        h1 = _mix_h1(h1, _mix_k1((byte - 256 if byte >= 128 else byte) & _MASK))
    return _fmix(h1, len(data))


def _big_integer_bytes(value: int) -> bytes:
    """Java's BigInteger.toByteArray(): big-endian two's complement with the fewest bytes."""
    bits = value.bit_length() if value >= 0 else (~value).bit_length()
    return value.to_bytes(bits // 8 + 1, "big", signed=True)


def _decimal_precision(t: DataType) -> int:
    return 38 if t.name == "LARGEINT" else t.precision


def _unscaled(value: object, t: DataType) -> int:
    scale = t.scale if t.name == "DECIMAL" else 0
    return int(decimal.Decimal(value).scaleb(scale, _UNSCALED).to_integral_value(context=_UNSCALED))


def _hash_value(value: object, t: DataType, seed: int) -> int:
    """Spark's Murmur3 hash of one non-NULL value of type `t` (alterflow's Python representation)."""
    name = t.name
    if name == "BOOLEAN":
        return _hash_int(1 if value else 0, seed)
    if name in ("TINYINT", "SMALLINT", "INT"):
        return _hash_int(int(value), seed)
    if name == "BIGINT":
        return _hash_long(int(value), seed)
    if name == "DATE":
        return _hash_int((value - _EPOCH_DATE).days, seed)
    if name == "DATETIME":
        return _hash_long((value - _EPOCH) // _dt.timedelta(microseconds=1), seed)
    if name in ("DECIMAL", "LARGEINT"):
        unscaled = _unscaled(value, t)
        if _decimal_precision(t) <= MAX_LONG_DIGITS:
            return _hash_long(unscaled, seed)
        return _hash_bytes(_big_integer_bytes(unscaled), seed)
    if t.is_string:
        return _hash_bytes(str(value).encode("utf-8"), seed)
    raise InvalidType(f"{t.sql()} cannot be a distribution column")


def hash_of(values: tuple, types: tuple[DataType, ...]) -> int:
    """Spark's `hash(values...)` of one row, as the signed 32-bit int Spark returns."""
    _check_key(len(values), types, 1)
    h1 = SEED
    for value, t in zip(values, types):
        if value is not None:
            h1 = _hash_value(value, t, h1)
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def bucket_of(values: tuple, types: tuple[DataType, ...], buckets: int) -> int:
    """The bucket of one distribution key (Python values), equal to `spark_bucket_expr`'s."""
    _check_key(len(values), types, buckets)
    return hash_of(values, types) % buckets  # Python's % of a positive modulus is Spark's pmod


# --------------------------------------------------------------------------------------------
# Arrow columns, with numpy: every step is uint32 arithmetic over all rows at once
# --------------------------------------------------------------------------------------------

_INT_DTYPES = {"TINYINT": np.int8, "SMALLINT": np.int16, "INT": np.int32, "DATE": np.int32}  # DATE: days
_U_C1 = np.uint32(_C1)
_U_C2 = np.uint32(_C2)
_U_5 = np.uint32(5)
_U_N = np.uint32(0xE6546B64)
_U_F1 = np.uint32(0x85EBCA6B)
_U_F2 = np.uint32(0xC2B2AE35)


def _rotl_u32(x: np.ndarray, r: int) -> np.ndarray:
    """Rotate left IN PLACE: callers pass a temporary of their own (saves an allocation per step)."""
    carry = x >> np.uint32(32 - r)
    x <<= np.uint32(r)
    x |= carry
    return x


def _mix_k1_u32(k1: np.ndarray) -> np.ndarray:
    k1 = k1 * _U_C1
    k1 = _rotl_u32(k1, 15)
    k1 *= _U_C2
    return k1


def _mix_h1_u32(h1: np.ndarray, k1: np.ndarray) -> np.ndarray:
    h1 = h1 ^ k1
    h1 = _rotl_u32(h1, 13)
    h1 *= _U_5
    h1 += _U_N
    return h1


def _fmix_u32(h1: np.ndarray, length) -> np.ndarray:
    h1 = h1 ^ length
    h1 ^= h1 >> np.uint32(16)
    h1 *= _U_F1
    h1 ^= h1 >> np.uint32(13)
    h1 *= _U_F2
    h1 ^= h1 >> np.uint32(16)
    return h1


def _hash_int_u32(values: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """hashInt of int32-or-narrower values (sign-extended to 32 bits first, as Java does)."""
    words = values.astype(np.int32, copy=False).view(np.uint32)
    return _fmix_u32(_mix_h1_u32(seed, _mix_k1_u32(words)), np.uint32(4))


def _hash_long_u32(values: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """hashLong of int64 values: the low 32 bits first, then the high 32 bits."""
    bits = values.astype(np.int64, copy=False).view(np.uint64)
    h1 = _mix_h1_u32(seed, _mix_k1_u32(bits.astype(np.uint32)))
    h1 = _mix_h1_u32(h1, _mix_k1_u32((bits >> np.uint64(32)).astype(np.uint32)))
    return _fmix_u32(h1, np.uint32(8))


def _hash_bytes_u32(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """hashUnsafeBytes of many byte strings at once: value i is data[starts[i]:starts[i]+lengths[i]].

    Block k of every value that has one is mixed in one numpy step, so the Python loop runs as
    many times as the longest value has blocks (plus at most 3 tail steps), never once per row.
    The set of values still being mixed shrinks as they run out of blocks, so one long value
    among many short ones costs little more than its own blocks."""
    h1 = seed.copy()
    data = np.ascontiguousarray(data, dtype=np.uint8)
    blocks = lengths >> 2
    # Every 4-byte window of the data as a little-endian uint32: word at byte p is words[p].
    words = np.ndarray((max(len(data) - 3, 0),), dtype="<u4", buffer=data, strides=(1,))
    active = np.flatnonzero(blocks > 0)
    position = starts[active]
    k = 0
    while len(active):
        h1[active] = _mix_h1_u32(h1[active], _mix_k1_u32(words[position]))
        k += 1
        going_on = blocks[active] > k
        if not going_on.all():
            active, position = active[going_on], position[going_on]
        position = position + 4
    signed = data.view(np.int8)
    tail_start = starts + (blocks << 2)
    tail_length = lengths & 3
    for j in range(3):
        rows = np.flatnonzero(tail_length > j)
        if not len(rows):
            break
        tail_byte = signed[tail_start[rows] + j].astype(np.int32).view(np.uint32)
        h1[rows] = _mix_h1_u32(h1[rows], _mix_k1_u32(tail_byte))
    return _fmix_u32(h1, lengths.astype(np.uint32))


def _fixed_width(array: pa.Array, dtype: np.dtype, per_value: int = 1) -> np.ndarray:
    """The values buffer of a fixed-width array as numpy (no copy), honouring the array's offset.
    Slots of NULL values hold arbitrary numbers: callers keep the seed for them."""
    buffer = array.buffers()[1]
    count = (array.offset + len(array)) * per_value
    if buffer is None:
        return np.zeros(len(array) * per_value, dtype=dtype)
    return np.frombuffer(buffer, dtype=dtype, count=count)[array.offset * per_value :]


def _string_parts(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data bytes, start of each value, length of each value) of a string or large_string array."""
    offset_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type, count=array.offset + len(array) + 1)
    offsets = offsets[array.offset :].astype(np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    return data, offsets[:-1], np.diff(offsets)


def _big_decimal_parts(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data, starts, lengths) of the BigInteger.toByteArray() of each decimal128's unscaled value.

    Each value's 16 little-endian bytes are reversed to big-endian; the minimal two's complement
    form drops leading bytes that only repeat the sign: it keeps the significant bytes of the
    value (of its complement when negative) plus one more when their top bit would read as sign."""
    n = len(array)
    big_endian = _fixed_width(array, np.uint8, 16).reshape(n, 16)[:, ::-1]
    negative = big_endian[:, 0] >= 0x80
    magnitude = np.where(negative[:, None], ~big_endian, big_endian)
    nonzero = magnitude != 0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), 16)
    top = magnitude[np.arange(n), np.minimum(first, 15)]
    lengths = np.maximum(16 - first + (top >= 0x80), 1).astype(np.int64)
    data = np.ascontiguousarray(big_endian).reshape(-1)
    starts = np.arange(n, dtype=np.int64) * 16 + (16 - lengths)
    return data, starts, lengths


def _storage(array: pa.Array, t: DataType) -> pa.Array:
    """The array in `t`'s Arrow storage type (cast when given another one, as Spark casts)."""
    if t.is_string:
        if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
            return array
        return array.cast(pa.string())
    target = to_arrow(t)
    return array if array.type == target else array.cast(target)


def _hash_chunk(array: pa.Array, t: DataType, seed: np.ndarray) -> np.ndarray:
    """Spark's Murmur3 of every value of one Arrow array, each with its own seed (NULL: the seed)."""
    array = _storage(array, t)
    name = t.name
    if name == "BOOLEAN":
        hashed = _hash_int_u32(pc.fill_null(array, False).to_numpy(zero_copy_only=False), seed)
    elif name in ("TINYINT", "SMALLINT", "INT", "DATE"):
        hashed = _hash_int_u32(_fixed_width(array, _INT_DTYPES[name]), seed)
    elif name in ("BIGINT", "DATETIME"):
        hashed = _hash_long_u32(_fixed_width(array, np.int64), seed)
    elif name in ("DECIMAL", "LARGEINT") and _decimal_precision(t) <= MAX_LONG_DIGITS:
        # |unscaled| < 10**18 < 2**63: the low 8 bytes of the decimal128 are the value as an int64.
        hashed = _hash_long_u32(_fixed_width(array, np.int64, 2)[0::2], seed)
    elif name in ("DECIMAL", "LARGEINT"):
        hashed = _hash_bytes_u32(*_big_decimal_parts(array), seed)
    elif t.is_string:
        hashed = _hash_bytes_u32(*_string_parts(array), seed)
    else:
        raise InvalidType(f"{t.sql()} cannot be a distribution column")
    if array.null_count:
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        hashed = np.where(valid, hashed, seed)
    return hashed


def _hash_column(column: pa.Array | pa.ChunkedArray, t: DataType, seed: np.ndarray) -> np.ndarray:
    if isinstance(column, pa.Array):
        return _hash_chunk(column, t, seed)
    hashed = np.empty_like(seed)
    start = 0
    for chunk in column.chunks:
        end = start + len(chunk)
        if end > start:
            hashed[start:end] = _hash_chunk(chunk, t, seed[start:end])
        start = end
    return hashed


def hash_array(columns: Sequence[pa.Array | pa.ChunkedArray], types: tuple[DataType, ...]) -> np.ndarray:
    """Spark's `hash(columns...)` of every row, as int32 (vectorised; see the module docstring)."""
    _check_key(len(columns), types, 1)
    lengths = {len(column) for column in columns}
    if len(lengths) != 1:
        raise ValueError(f"distribution key columns differ in length: {sorted(lengths)}")
    h1 = np.full(lengths.pop(), SEED, dtype=np.uint32)
    for column, t in zip(columns, types):
        h1 = _hash_column(column, t, h1)
    return h1.view(np.int32)


def bucket_array(columns: Sequence[pa.Array | pa.ChunkedArray], types: tuple[DataType, ...], buckets: int) -> np.ndarray:
    """The bucket of every row of the key `columns` (Arrow, each in its type's storage type), as
    int64; equal to `spark_bucket_expr` and `bucket_of` row by row."""
    _check_key(len(columns), types, buckets)
    hashed = hash_array(columns, types)
    if buckets & (buckets - 1) == 0 and buckets <= 1 << 32:  # a power of two: pmod of the signed hash is its low bits
        return (hashed.view(np.uint32) & np.uint32(buckets - 1)).astype(np.int64)
    return np.mod(hashed.astype(np.int64), buckets)  # numpy's mod of a positive modulus is pmod
