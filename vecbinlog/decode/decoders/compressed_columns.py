"""MariaDB's compressed columns (``VARCHAR(n) COMPRESSED``, ``TEXT COMPRESSED``; types 140/141).

Each non-empty value starts with a header byte (sql/field.cc, compress_zlib/uncompress_zlib)::

    0x00                      the value follows uncompressed (short values)
    0x80 | 8? | n (n = 1-4)   zlib: n bytes of big-endian original length, then the deflate
                              stream; bit 0x08 set = raw deflate (no zlib wrapper)

Values are inflated one by one (zlib has no column-at-a-time entry point), in a compiled loop
that calls zlib's ``inflate`` on one ``z_stream`` reset per value (:mod:`vecbinlog.zlibcalls`;
Python's ``zlib`` one value at a time where that cannot be used), into one buffer; then decoded
exactly like the uncompressed VARCHAR/TEXT they hold. A value that does not inflate is told by
the Python path's message, read again there.
"""

from __future__ import annotations

import zlib
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
from numba import types

from ...constants import ColumnType as T
from ...jit import kernel
from ...tables.table_map import ColumnSpec
from ...zlibcalls import AVAIL_IN, AVAIL_OUT, NEXT_IN, NEXT_OUT, TOTAL_OUT, ZSTREAM_WORDS, inflate_stream, register, symbol
from . import strings
from .common import ColumnData, DecodeOptions, gather_var

#: zlib's inflate functions as kernels call them (Any: numba, not Python, types that call)
_inflate_init: Any = types.ExternalFunction(symbol("inflateInit2_"),
                                            types.int32(types.uintp, types.int32, types.uintp, types.int32))
_inflate_reset: Any = types.ExternalFunction(symbol("inflateReset2"), types.int32(types.uintp, types.int32))
_inflate: Any = types.ExternalFunction(symbol("inflate"), types.int32(types.uintp, types.int32))
_inflate_end: Any = types.ExternalFunction(symbol("inflateEnd"), types.int32(types.uintp))
_Z_FINISH, _Z_STREAM_END, _MAX_WBITS = 4, 1, 15


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    return strings.arrow_type(spec, name, options)


def _max_length(spec: ColumnSpec) -> int:
    if spec.type == T.MYSQL_TYPE_VARCHAR_COMPRESSED:
        return spec.meta
    return (1 << (8 * spec.meta)) - 1


def inflate(value: bytes, limit: int) -> bytes:
    """One stored value -> its original bytes; ValueError when it is not a valid one."""
    if not value:
        return value
    head = value[0]
    if head == 0:
        return value[1:]
    n = head & 0x07
    if not head & 0x80 or not 1 <= n <= 4 or len(value) < 1 + n:
        raise ValueError(f"header byte 0x{head:02x}")
    size = int.from_bytes(value[1 : 1 + n], "big")
    if size > limit:
        raise ValueError(f"original length {size} over the column's {limit}")
    d = zlib.decompressobj(-zlib.MAX_WBITS if head & 0x08 else zlib.MAX_WBITS)
    out = d.decompress(value[1 + n :], size)
    if len(out) != size or not d.eof:
        raise ValueError(f"deflate stream gives {len(out)} bytes, the header says {size}")
    return out


@kernel
def _inflate_values(data, bounds, head_len, sizes, out, out_at, stream, version):  # pragma: no cover - compiled
    """Value ``i`` (``data[bounds[i]:bounds[i + 1]]``, its header ``head_len[i]`` bytes) into
    ``out[out_at[i]:out_at[i] + sizes[i]]``: copied (header byte 0) or inflated by zlib (raw
    deflate when bit 0x08 of the header is set), ending exactly there. The caller checked the
    headers, and that every range is inside its array. Returns the first value that does not
    inflate to its size, -2 when zlib's stream cannot be set up, else -1."""
    strm = stream.ctypes.data
    if _inflate_init(strm, np.int32(_MAX_WBITS), version.ctypes.data, np.int32(8 * ZSTREAM_WORDS)) != 0:
        return -2
    base_in, base_out = data.ctypes.data, out.ctypes.data
    bad = -1
    for i in range(len(sizes)):
        a, b, h, size, at = bounds[i], bounds[i + 1], head_len[i], sizes[i], out_at[i]
        if a < 0 or b > len(data) or a + h > b or size < 0 or at < 0 or at + size > len(out):
            bad = i  # (the caller's checks say otherwise: a second line of defence)
            break
        if b == a:
            continue
        if data[a] == 0:
            for j in range(size):
                out[at + j] = data[a + 1 + j]
            continue
        if _inflate_reset(strm, np.int32(-_MAX_WBITS if data[a] & 0x08 else _MAX_WBITS)) != 0:
            bad = i
            break
        stream[NEXT_IN] = np.uint64(base_in + a + h)
        stream[AVAIL_IN] = np.uint64(b - a - h)
        stream[NEXT_OUT] = np.uint64(base_out + at)
        stream[AVAIL_OUT] = np.uint64(size)
        if _inflate(strm, np.int32(_Z_FINISH)) != _Z_STREAM_END or stream[TOTAL_OUT] != np.uint64(size):
            bad = i
            break
    _inflate_end(strm)
    return bad


_COMPILED: bool | None = None  #: whether the compiled loop is used (None: not asked yet)


def _compiled() -> bool:
    """Whether zlib's inflate can be called from the kernel here, and inflates a test vector as
    Python's ``zlib`` does (raw and wrapped, stored, and a stream cut short found)."""
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = False
        if inflate_stream() is not None and register("inflateInit2_", "inflateReset2", "inflate", "inflateEnd"):
            text = bytes(range(256)) * 9
            raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
            values = [b"", b"\0short", _as_stored(text, raw.compress(text) + raw.flush(), raw=True),
                      _as_stored(text[:700], zlib.compress(text[:700]), raw=False)]
            try:
                _COMPILED = (_inflated(values) == [b"", b"short", text, text[:700]]
                             and _inflated([values[2][:-3]]) is None)  # (a stream cut short)
            except Exception:  # noqa: BLE001 - a kernel this LLVM cannot build: Python's zlib
                _COMPILED = False
    return _COMPILED


def _as_stored(plain: bytes, deflated: bytes, raw: bool) -> bytes:
    """A value as MariaDB stores it: its header (4-byte length), then the deflate stream."""
    return bytes([0x80 | (0x08 if raw else 0) | 4]) + len(plain).to_bytes(4, "big") + deflated


def _inflated(values: list[bytes]) -> list[bytes] | None:
    """``values`` through :func:`_headers` and :func:`_inflate_all` (the test vector of
    :func:`_compiled`); None when one is refused."""
    data = np.frombuffer(b"".join(values) + b"\0", np.uint8)
    bounds = np.zeros(len(values) + 1, np.int64)
    bounds[1:] = np.cumsum([len(v) for v in values])
    heads = _headers(data, bounds, 1 << 16)
    if isinstance(heads, int):
        return None
    out, out_at, bad = _inflate_all(data, bounds, *heads)
    return None if bad != -1 else [out[a:a + n].tobytes() for a, n in zip(out_at.tolist(), heads[1].tolist())]


#: deflate makes at most this many bytes of one (zlib's "maximum compression factor"): a header
#: that says more is refused before any room is taken for it (read again by the Python path,
#: which inflates what there is and says so)
_MAX_RATIO = 1032


def _headers(data: np.ndarray, bounds: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray] | int:
    """Each value's header length and original size (column at once), or the first value whose
    header is not a valid one (or says more than its stream can hold)."""
    starts, lengths = bounds[:-1], np.diff(bounds)
    present = lengths > 0
    head = np.zeros(len(lengths), np.int64)
    head[present] = data[starts[present]]
    stored = present & (head == 0)
    nbytes = head & 0x07
    packed = present & ~stored
    ok = ~packed | ((head & 0x80) != 0) & (nbytes >= 1) & (nbytes <= 4) & (lengths >= 1 + nbytes)
    size = np.zeros(len(lengths), np.int64)
    for k in range(1, 5):  # the big-endian length: at most 4 bytes, read column at once
        more = packed & ok & (nbytes >= k)
        size[more] = (size[more] << 8) | data[starts[more] + k]
    ok &= ~packed | (size <= limit) & (size <= _MAX_RATIO * (lengths - 1 - nbytes) + 64)
    if not ok.all():
        return int(np.argmin(ok))
    head_len = np.where(stored, 1, np.where(packed, 1 + nbytes, 0))
    size = np.where(stored, lengths - 1, size)
    return head_len, size


def _inflate_all(data: np.ndarray, bounds: np.ndarray, head_len: np.ndarray,
                 size: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The values inflated back to back (:func:`_inflate_values`): the buffer, where each starts,
    and the first that fails (-1: none)."""
    out_at = np.zeros(len(size), np.int64)
    if len(size) > 1:
        np.cumsum(size[:-1], out=out_at[1:])
    out = np.empty(int(size.sum()) + 1, np.uint8)  # (+1: never an empty buffer)
    stream, version = inflate_stream()  # type: ignore[misc]  # (_compiled: known here)
    bad = int(_inflate_values(data, bounds, head_len, size, out, out_at, stream, version))
    if bad == -2:
        raise MemoryError("zlib could not set up an inflate stream")
    return out, out_at, bad


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    offsets, data = gather_var(col)
    limit = _max_length(col.spec)
    heads = _headers(data, offsets, limit) if _compiled() else None
    bad = -1
    if heads is not None and not isinstance(heads, int):
        buf, starts, bad = _inflate_all(data, offsets, *heads)
        lengths = heads[1]
    if heads is None or isinstance(heads, int) or bad >= 0:  # Python's zlib: its message for the value that fails
        raw = data.tobytes()
        bounds = offsets.tolist()
        values = []
        for i in range(n):
            try:
                values.append(inflate(raw[bounds[i] : bounds[i + 1]], limit))
            except (ValueError, zlib.error) as exc:
                raise col.error(f"compressed value: {exc}", i) from exc
        lengths = np.array([len(v) for v in values], np.int64)
        starts = np.zeros(n, np.int64)
        if n:
            starts[1:] = np.cumsum(lengths)[:-1]
        buf = np.frombuffer(b"".join(values) + b"\0", np.uint8)
    # Decode the inflated bytes as the plain type would be: a buffer of their own.
    plain = ColumnData(
        spec=replace(col.spec, type=T.MYSQL_TYPE_BLOB if col.spec.type == T.MYSQL_TYPE_BLOB_COMPRESSED else T.MYSQL_TYPE_VARCHAR),
        name=col.name, buf=buf, offsets=starts, lengths=lengths,
        width=0, valid=col.valid, options=col.options, path=col.path,
    )
    arr = strings.decode(plain)
    col.warnings.extend(plain.warnings)
    return arr
