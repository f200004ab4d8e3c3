"""Arrow arrays made from their buffers, and NumPy arrays read from them, without pandas.

pyarrow imports pandas (0.3-0.45 s) the first time ``pa.array``, ``pa.scalar``,
``Array.to_numpy`` or a compute function given a Python scalar is called, whatever it is
given: 0.3 s of start-up for every CLI run and Spark task that reads a binlog. Arrays made
with ``pa.Array.from_buffers`` do not, so the reading paths build theirs here: numbers and
booleans from NumPy arrays, strings from Python lists, scalars (as element 0 of a one-element
array) for the compute functions, and back to NumPy for fixed-width arrays.
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

__all__ = ["pooled", "validity", "binary_like", "binary_parts", "numbers", "strings", "scalar", "to_numpy",
           "valid_mask", "decimal_text"]

_INT32_MAX = np.iinfo(np.int32).max


#: bytes from which :func:`pooled` takes Arrow's pool (under it, glibc's heap reuses memory itself)
POOLED_BYTES = 4 << 20


def pooled(n: int, dtype: Any = np.uint8) -> np.ndarray:
    """An uninitialised NumPy array of ``n`` items; of POOLED_BYTES or more, in Arrow's memory
    pool (mimalloc or jemalloc), which hands out again what earlier batches freed, where such
    a NumPy allocation is fresh pages each time, mapped and zeroed by the kernel (the value
    copies of the 189 MB text bench file: 5 000 page faults and 10-20 ms of system time a
    read). Smaller ones stay NumPy's: the pool measured no better, or worse, on many small batches."""
    dt = np.dtype(dtype)
    if n * dt.itemsize < POOLED_BYTES:
        return np.empty(n, dt)
    return np.frombuffer(pa.allocate_buffer(n * dt.itemsize), dt, n)


def validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    """Arrow validity bitmap (LSB first) and null count; no buffer when nothing is null."""
    null_count = int(len(valid) - np.count_nonzero(valid))
    if null_count == 0:
        return None, 0
    return pa.py_buffer(np.packbits(valid, bitorder="little")), null_count


def binary_like(
    arrow_type: pa.DataType, n: int, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray
) -> pa.Array:
    """A (large_)string or (large_)binary array from offsets and data, nulls where not valid
    (a string or binary type becomes the large one when the data outgrow 32-bit offsets)."""
    large = (pa.types.is_large_string(arrow_type) or pa.types.is_large_binary(arrow_type)
             or int(offsets[-1]) > _INT32_MAX)
    if large:
        if pa.types.is_string(arrow_type):
            arrow_type = pa.large_string()
        elif pa.types.is_binary(arrow_type):
            arrow_type = pa.large_binary()
        off_buf = pa.py_buffer(np.ascontiguousarray(offsets, np.int64))
    else:
        off_buf = pa.py_buffer(offsets.astype(np.int32))
    vbuf, null_count = validity(valid)
    return pa.Array.from_buffers(arrow_type, n, [vbuf, off_buf, pa.py_buffer(data)], null_count=null_count)


def binary_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (large_)string or (large_)binary array as :func:`binary_like` takes it: offsets (int64,
    n + 1, from 0), the values' bytes (uint8, a view) and valid (bool, n)."""
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    odt = np.dtype(np.int64 if large else np.int32)
    n, bufs = len(arr), arr.buffers()
    offsets = np.frombuffer(bufs[1], odt, count=n + 1, offset=arr.offset * odt.itemsize).astype(np.int64)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    start = int(offsets[0])
    return offsets - start, data[start : int(offsets[-1])], valid_mask(arr)


@functools.lru_cache(maxsize=256)
def _storage(t: pa.DataType) -> np.dtype:
    """The NumPy dtype of the values buffer of a fixed-width type (temporal: its integers; kept
    per type: every fixed-width column asks)."""
    width = t.bit_width // 8
    if pa.types.is_floating(t):
        return np.dtype(f"<f{width}")
    return np.dtype(f"<u{width}" if pa.types.is_unsigned_integer(t) else f"<i{width}")


def numbers(values: np.ndarray, type: pa.DataType | None = None, valid: np.ndarray | None = None) -> pa.Array:
    """A fixed-width array (integer, float, boolean, timestamp, date, time, duration) of
    ``values``, null where ``valid`` (bool, True = a value) is False; the type is the dtype's
    when not given. The values are not copied when they already are the type's; otherwise
    they are converted only when no value can change (TypeError if not: an int64 for an int32
    type), as ``pa.array`` would refuse them."""
    values = np.asarray(values)
    if type is None:
        type = pa.from_numpy_dtype(values.dtype)
    if pa.types.is_boolean(type):
        data = np.packbits(values.astype(bool, casting="safe", copy=False), bitorder="little")
    else:
        dtype = _storage(type)
        if values.dtype.kind in "mM" and values.dtype.itemsize == dtype.itemsize:
            values = values.view(dtype)  # datetime64/timedelta64 for a temporal type
        data = np.ascontiguousarray(values.astype(dtype, casting="safe", copy=False))
    vbuf, nulls = validity(valid) if valid is not None else (None, 0)
    return pa.Array.from_buffers(type, len(values), [vbuf, pa.py_buffer(data)], null_count=nulls)


def strings(items: Sequence[str | None] | Sequence[bytes | None], type: pa.DataType = pa.string()) -> pa.Array:
    """A (large_)string array of Python strings, or a (large_)binary one of bytes; None is null."""
    values: list[Any] = list(items)  # all str or all bytes: the branches below take them as either
    valid = np.fromiter((x is not None for x in values), bool, len(values))
    present = values if valid.all() else [x for x in values if x is not None]
    if present and isinstance(present[0], str):
        joined = "".join(present)
        encoded = present if joined.isascii() else [s.encode("utf-8") for s in present]  # ASCII: a byte a character
        data = joined.encode("ascii") if encoded is present else b"".join(encoded)
    else:
        encoded = present
        data = b"".join(present)
    lengths = np.zeros(len(values), np.int64)
    lengths[valid] = np.fromiter(map(len, encoded), np.int64, len(encoded))
    offsets = np.zeros(len(values) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return binary_like(type, len(values), offsets, np.frombuffer(data, np.uint8), valid)


def scalar(value: Any, type: pa.DataType) -> pa.Scalar:
    """``value`` as an Arrow scalar of ``type`` (string, binary or fixed-width), to give a
    compute function instead of a Python value."""
    if pa.types.is_string(type) or pa.types.is_large_string(type) or pa.types.is_binary(type) \
            or pa.types.is_large_binary(type):
        return strings([value], type)[0]
    return numbers(np.array([value], bool if pa.types.is_boolean(type) else _storage(type)), type)[0]


def to_numpy(arr: pa.Array) -> np.ndarray:
    """The values of a fixed-width array without nulls (booleans unpacked): a view of its
    buffer, not a copy, except for booleans."""
    if arr.null_count:
        raise ValueError(f"to_numpy: the array has {arr.null_count} nulls")
    n, buf = len(arr), arr.buffers()[1]
    if pa.types.is_boolean(arr.type):
        return _bits(buf, arr.offset, n)
    dtype = _storage(arr.type)
    return np.frombuffer(buf, dtype, count=n, offset=arr.offset * dtype.itemsize)


def valid_mask(arr: pa.Array) -> np.ndarray:
    """bool per value of ``arr``: True where it is not null."""
    n = len(arr)
    if arr.null_count == 0:
        return np.ones(n, bool)
    bitmap = arr.buffers()[0]
    if bitmap is None:  # the null type
        return np.zeros(n, bool)
    return _bits(bitmap, arr.offset, n)


def _bits(buf: pa.Buffer, offset: int, n: int) -> np.ndarray:
    """bool (n,) of the bits (LSB first) ``offset`` to ``offset + n`` of ``buf``."""
    raw = np.frombuffer(buf, np.uint8)[offset // 8 : (offset + n + 7) // 8]
    start = offset % 8
    return np.unpackbits(raw, bitorder="little")[start : start + n].view(bool)


def decimal_text(arr: pa.Array) -> pa.Array:
    """A decimal array as plain text with all ``scale`` fraction digits, as MySQL prints it
    (``-0.000000000000000000000000000001``, never Arrow's ``-1E-30``), for every value at once."""
    import pyarrow.compute as pc

    t = arr.type
    # the same bytes read as a decimal of scale 0: the unscaled integer, printed without exponent
    as_integer = (pa.decimal256 if t.bit_width == 256 else pa.decimal128)(t.precision, 0)
    unscaled = pa.Array.from_buffers(as_integer, len(arr), arr.buffers(), offset=arr.offset).cast(pa.string())
    if t.scale <= 0:
        return unscaled
    digits = pc.utf8_lpad(pc.utf8_ltrim(unscaled, characters="-"), width=t.scale + 1, padding="0")
    minus, empty, point = (scalar(s, pa.string()) for s in ("-", "", "."))
    whole = pc.binary_join_element_wise(
        pc.if_else(pc.starts_with(unscaled, "-"), minus, empty), pc.utf8_slice_codeunits(digits, 0, -t.scale), empty
    )
    fraction = pc.utf8_slice_codeunits(digits, -t.scale, 2**31 - 1)
    return pc.binary_join_element_wise(whole, fraction, point)
