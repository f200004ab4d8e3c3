"""GEOMETRY -> ``struct<srid: uint32, wkb: binary>``.

MySQL stores a geometry as a 4-byte little-endian SRID followed by the WKB (OGC
well-known binary); both are kept, the SRID as its own field so that the ``wkb`` field is
plain WKB any GIS library reads. The GEOMETRY_TYPE metadata (FULL only) is in the Arrow
field's metadata as ``geometry_type`` (0 GEOMETRY, 1 POINT, 2 LINESTRING, 3 POLYGON,
4 MULTIPOINT, 5 MULTILINESTRING, 6 MULTIPOLYGON, 7 GEOMETRYCOLLECTION).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...arrowbuild import numbers
from ...tables.table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, binary_like, gather_fixed, gather_var, validity

GEOMETRY = pa.struct([pa.field("srid", pa.uint32()), pa.field("wkb", pa.binary())])


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    return GEOMETRY


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    assert col.offsets is not None and col.lengths is not None  # a length-prefixed column's
    short = col.valid & (col.lengths < 4)
    if short.any():
        i = int(np.flatnonzero(short)[0])
        raise col.error(f"GEOMETRY value of {int(col.lengths[i])} bytes has no room for its SRID", i)
    srid = gather_fixed(col.buf, np.where(col.valid, col.offsets, 0), 4).view("<u4").reshape(n)
    offsets, data = gather_var(col, skip=4)
    vbuf, nulls = validity(col.valid)
    srids = pa.Array.from_buffers(pa.uint32(), n, [vbuf, pa.py_buffer(np.ascontiguousarray(srid))], null_count=nulls)
    wkb = binary_like(pa.binary(), n, offsets, data, col.valid)
    return pa.StructArray.from_arrays([srids, wkb], fields=list(GEOMETRY), mask=numbers(~col.valid))
