"""MariaDB's compressed columns (``VARCHAR(n) COMPRESSED``, ``TEXT COMPRESSED``; types 140/141).

Each non-empty value starts with a header byte (sql/field.cc, compress_zlib/uncompress_zlib)::

    0x00                      the value follows uncompressed (short values)
    0x80 | 8? | n (n = 1-4)   zlib: n bytes of big-endian original length, then the deflate
                              stream; bit 0x08 set = raw deflate (no zlib wrapper)

Values are inflated one by one (zlib has no column-at-a-time entry point; this is genuinely
per-value work), then decoded exactly like the uncompressed VARCHAR/TEXT they hold.
"""

from __future__ import annotations

import zlib
from dataclasses import replace

import numpy as np
import pyarrow as pa

from ...constants import ColumnType as T
from ...tables.table_map import ColumnSpec
from . import strings
from .common import ColumnData, DecodeOptions, gather_var


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


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    offsets, data = gather_var(col)
    raw = data.tobytes()
    bounds = offsets.tolist()
    limit = _max_length(col.spec)
    values = []
    for i in range(n):
        try:
            values.append(inflate(raw[bounds[i] : bounds[i + 1]], limit))
        except (ValueError, zlib.error) as exc:
            raise col.error(f"compressed value: {exc}", i) from exc
    # Decode the inflated bytes as the plain type would be: a small buffer of their own.
    lengths = np.array([len(v) for v in values], np.int64)
    starts = np.zeros(n, np.int64)
    if n:
        starts[1:] = np.cumsum(lengths)[:-1]
    plain = ColumnData(
        spec=replace(col.spec, type=T.MYSQL_TYPE_BLOB if col.spec.type == T.MYSQL_TYPE_BLOB_COMPRESSED else T.MYSQL_TYPE_VARCHAR),
        name=col.name, buf=np.frombuffer(b"".join(values) + b"\0", np.uint8), offsets=starts, lengths=lengths,
        width=0, valid=col.valid, options=col.options, path=col.path,
    )
    arr = strings.decode(plain)
    col.warnings.extend(plain.warnings)
    return arr
