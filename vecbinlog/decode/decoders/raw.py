"""Columns this version does not decode into a typed value yet: their stored bytes, as binary.

The Arrow field carries ``vecbinlog.undecoded = <MySQL type name>`` in its metadata so that
such a column is never mistaken for a real binary column.
"""

from __future__ import annotations

import pyarrow as pa

from ...tables.table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, binary_like, gather_var

UNDECODED_KEY = b"vecbinlog.undecoded"


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    return pa.binary()


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    offsets, data = gather_var(col)
    return binary_like(pa.binary(), n, offsets, data, col.valid)
