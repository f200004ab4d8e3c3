"""FLOAT and DOUBLE: IEEE 754 little-endian, 4 or 8 bytes (the pack length in the metadata)."""

from __future__ import annotations

import pyarrow as pa

from ...constants import ColumnType as T
from ...tables.table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, validity


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    return pa.float32() if spec.type == T.MYSQL_TYPE_FLOAT else pa.float64()


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    atype = arrow_type(col.spec, col.name, col.options)
    if col.width != atype.bit_width // 8:
        # A pack length other than sizeof(float)/sizeof(double) has never been written by a
        # server; keep the bytes rather than guess.
        from . import raw

        return raw.decode(col)
    values = col.fixed_bytes().view(f"<f{col.width}").reshape(n)
    vbuf, nulls = validity(col.valid)
    return pa.Array.from_buffers(atype, n, [vbuf, pa.py_buffer(values)], null_count=nulls)
