"""Columns this version does not decode into a typed value yet: their stored bytes, as binary.

The Arrow field carries ``vecbinlog.undecoded = <MySQL type name>`` in its metadata so that
such a column is never mistaken for a real binary column.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...tables.table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, binary_like, gather_var

UNDECODED_KEY = b"vecbinlog.undecoded"


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    return pa.binary()


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    if col.lengths is None:  # a fixed-width type (MYSQL_TYPE_NULL: 0 bytes), its values as the walk copied them
        data = np.ascontiguousarray(col.fixed_bytes()).reshape(-1)
        return binary_like(pa.binary(), n, np.arange(n + 1, dtype=np.int64) * col.width, data, col.valid)
    offsets, data = gather_var(col)
    return binary_like(pa.binary(), n, offsets, data, col.valid)
