"""Integer columns: TINY, SHORT, INT24, LONG, LONGLONG (and YEAR), little-endian in row images.

Signedness comes from the SIGNEDNESS metadata; when the binlog does not have it (MySQL
before 8.0 MINIMAL, MariaDB NO_LOG) columns are signed unless the user says otherwise.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...constants import ColumnType as T
from ...tables.table_map import ColumnSpec
from ...tables.types import TYPES
from .common import ColumnData, DecodeOptions, validity


def is_unsigned(spec: ColumnSpec, name: str, options: DecodeOptions) -> bool:
    """User override by column name or ``@N``, else SIGNEDNESS, else signed."""
    for key in (name, f"@{spec.index + 1}"):
        if key in options.signedness:
            return options.signedness[key]
    return bool(spec.unsigned)


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    pair = TYPES[spec.type].arrow
    assert pair is not None  # every integer type's registry line has its two types
    signed, unsigned = pair
    return unsigned if is_unsigned(spec, name, options) else signed


def decode(col: ColumnData) -> pa.Array:
    spec = col.spec
    n = len(col)
    raw = col.fixed_bytes()
    if spec.type == T.MYSQL_TYPE_YEAR:
        # One byte: year - 1900, and 0 for the year 0000 (Field_year::pack).
        b = raw[:, 0].astype(np.uint16)
        values: np.ndarray = np.where(b == 0, 0, b + 1900).astype(np.uint16)
    elif spec.type == T.MYSQL_TYPE_INT24:
        v = (raw[:, 0].astype(np.int32) | (raw[:, 1].astype(np.int32) << 8) | (raw[:, 2].astype(np.int32) << 16))
        if is_unsigned(spec, col.name, col.options):
            values = v.astype(np.uint32)
        else:
            values = (v ^ 0x800000) - 0x800000  # sign-extend 24 bits
    else:
        width = col.width
        unsigned = is_unsigned(spec, col.name, col.options)
        values = raw.view(f"<{'u' if unsigned else 'i'}{width}").reshape(n)
    atype = arrow_type(spec, col.name, col.options)
    vbuf, nulls = validity(col.valid)
    values = np.ascontiguousarray(values, dtype=atype.to_pandas_dtype())
    return pa.Array.from_buffers(atype, n, [vbuf, pa.py_buffer(values)], null_count=nulls)
