"""Column decoders, one module per type family, chosen by the column's real type.

Each module has ``arrow_type(spec, name, options) -> pyarrow.DataType`` and
``decode(ColumnData) -> pyarrow.Array``; both work on whole columns at once.
"""

from __future__ import annotations

from types import ModuleType

import pyarrow as pa

from ..constants import ColumnType as T
from ..table_map import ColumnSpec
from . import bits, compressed, decimal, enums, floats, geometry, ints, raw, strings, temporal, vector
from . import mysqljson
from .common import ColumnData, DecodeOptions

__all__ = ["ColumnData", "DecodeOptions", "decoder_for", "arrow_field", "decode_column"]

#: real type -> decoder module
DECODERS: dict[int, ModuleType] = {
    T.MYSQL_TYPE_TINY: ints,
    T.MYSQL_TYPE_SHORT: ints,
    T.MYSQL_TYPE_INT24: ints,
    T.MYSQL_TYPE_LONG: ints,
    T.MYSQL_TYPE_LONGLONG: ints,
    T.MYSQL_TYPE_YEAR: ints,
    T.MYSQL_TYPE_FLOAT: floats,
    T.MYSQL_TYPE_DOUBLE: floats,
    T.MYSQL_TYPE_VARCHAR: strings,
    T.MYSQL_TYPE_VAR_STRING: strings,
    T.MYSQL_TYPE_STRING: strings,
    T.MYSQL_TYPE_BLOB: strings,
    T.MYSQL_TYPE_NEWDECIMAL: decimal,
    T.MYSQL_TYPE_VARCHAR_COMPRESSED: compressed,
    T.MYSQL_TYPE_BLOB_COMPRESSED: compressed,
    T.MYSQL_TYPE_BIT: bits,
    T.MYSQL_TYPE_ENUM: enums,
    T.MYSQL_TYPE_SET: enums,
    T.MYSQL_TYPE_GEOMETRY: geometry,
    T.MYSQL_TYPE_VECTOR: vector,
    T.MYSQL_TYPE_JSON: mysqljson,
    T.MYSQL_TYPE_DATE: temporal,
    T.MYSQL_TYPE_NEWDATE: temporal,
    T.MYSQL_TYPE_TIME: temporal,
    T.MYSQL_TYPE_TIME2: temporal,
    T.MYSQL_TYPE_DATETIME: temporal,
    T.MYSQL_TYPE_DATETIME2: temporal,
    T.MYSQL_TYPE_TIMESTAMP: temporal,
    T.MYSQL_TYPE_TIMESTAMP2: temporal,
}


def decoder_for(spec: ColumnSpec) -> ModuleType:
    return DECODERS.get(spec.real_type, raw)


def arrow_field(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.Field:
    """The Arrow field a column decodes to (before any data-driven fallback)."""
    module = decoder_for(spec)
    metadata = {b"mysql_type": spec.type_name.encode()}
    if module in (strings, compressed):
        cs = strings.column_charset(spec, name, options)
        metadata[b"mysql_charset"] = (cs or "unknown").encode()
    if module is geometry and spec.geometry_type is not None:
        metadata[b"geometry_type"] = str(spec.geometry_type).encode()
    if module is raw:
        metadata[raw.UNDECODED_KEY] = spec.type_name.encode()
    if spec.vector_dimensionality:
        metadata[b"mysql_vector_dimensionality"] = str(spec.vector_dimensionality).encode()
    return pa.field(name, module.arrow_type(spec, name, options), nullable=True, metadata=metadata)


def decode_column(col: ColumnData) -> pa.Array:
    return decoder_for(col.spec).decode(col)
