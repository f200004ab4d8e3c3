"""VECTOR (MySQL 9) -> ``fixed_size_list<float32>[d]`` when VECTOR_DIMENSIONALITY gives d and
every value has d entries, else ``list<float32>``; values are little-endian float32."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, gather_var


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    if spec.vector_dimensionality:
        return pa.list_(pa.float32(), spec.vector_dimensionality)
    return pa.list_(pa.float32())


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    odd = col.valid & (col.lengths % 4 != 0)
    if odd.any():
        i = int(np.flatnonzero(odd)[0])
        raise col.error(f"VECTOR value of {int(col.lengths[i])} bytes is not a whole number of float32", i)
    offsets, data = gather_var(col.buf, col.offsets, col.lengths, col.valid)
    floats = pa.array(data.view("<f4"), pa.float32())
    mask = pa.array(~col.valid)
    dim = col.spec.vector_dimensionality
    counts = np.diff(offsets) // 4
    if dim and (counts[col.valid] == dim).all():
        # fixed-size lists need dim slots for null rows too: insert zeros there
        full = np.zeros((n, dim), np.float32)
        full[col.valid] = data.view("<f4").reshape(-1, dim)
        return pa.FixedSizeListArray.from_arrays(pa.array(full.reshape(-1), pa.float32()), dim, mask=mask)
    return pa.ListArray.from_arrays(pa.array((offsets // 4).astype(np.int32)), floats, mask=mask)
