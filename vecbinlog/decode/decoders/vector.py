"""VECTOR (MySQL 9) -> ``list<float32>``; values are little-endian float32.

Not ``fixed_size_list<float32>[d]``, although VECTOR_DIMENSIONALITY may give d: a fixed-size
list keeps d slots for every NULL row (64 KB for VECTOR(16383)), so a column of mostly NULL
vectors would decode to thousands of times the file's size. The dimensionality is kept in the
field's metadata (``mysql_vector_dimensionality``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...arrowbuild import numbers
from ...tables.table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, gather_var


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    return pa.list_(pa.float32())


def decode(col: ColumnData) -> pa.Array:
    assert col.lengths is not None  # a length-prefixed column's
    odd = col.valid & (col.lengths % 4 != 0)
    if odd.any():
        i = int(np.flatnonzero(odd)[0])
        raise col.error(f"VECTOR value of {int(col.lengths[i])} bytes is not a whole number of float32", i)
    offsets, data = gather_var(col)
    floats = numbers(data.view("<f4"), pa.float32())
    return pa.ListArray.from_arrays(numbers((offsets // 4).astype(np.int32)), floats, mask=numbers(~col.valid))
