"""BIT(n) -> ``uint64``: 1 to 8 bytes, big-endian (Field_bit::pack), any n from 1 to 64."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...tables.table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, validity


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    return pa.uint64()


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    raw = col.fixed_bytes()
    if col.width > 8:
        raise col.error(f"BIT value of {col.width} bytes (at most 8)", 0)
    padded = np.zeros((n, 8), np.uint8)
    padded[:, 8 - col.width :] = raw
    values = padded.view(">u8").reshape(n).astype("<u8")
    vbuf, nulls = validity(col.valid)
    return pa.Array.from_buffers(pa.uint64(), n, [vbuf, pa.py_buffer(values)], null_count=nulls)
