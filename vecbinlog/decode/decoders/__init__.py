"""Column decoders, one module per type family, chosen by the column's real type.

Each module has ``arrow_type(spec, name, options) -> pyarrow.DataType`` and
``decode(ColumnData) -> pyarrow.Array``; both work on whole columns at once.
"""

from __future__ import annotations

from types import ModuleType

import pyarrow as pa

from ...tables.table_map import ColumnSpec
from ...tables.types import TYPES
from . import (
    bits,
    compressed_columns,
    decimal,
    enums,
    floats,
    geometry,
    ints,
    mysqljson,
    raw,
    strings,
    temporal,
    vector,
)
from .common import ColumnData, DecodeOptions

__all__ = ["ColumnData", "DecodeOptions", "decoder_for", "arrow_field", "decode_column", "gathers_values"]

#: decoder modules by the name :data:`vecbinlog.tables.types.TYPES` gives them
_MODULES: dict[str, ModuleType] = {
    m.__name__.rsplit(".", 1)[1]: m
    for m in (bits, compressed_columns, decimal, enums, floats, geometry, ints, mysqljson, raw, strings, temporal, vector)
}
#: real type -> decoder module (``raw`` for the types no decoder knows)
DECODERS: dict[int, ModuleType] = {t: _MODULES[info.decoder] for t, info in TYPES.items()}


#: decoders that take a column's values as they are first (``common.gather_var``): a batch
#: copies those of several such columns at once (``common.gather_columns``)
GATHERING = frozenset({strings, raw, mysqljson, compressed_columns})


def decoder_for(spec: ColumnSpec) -> ModuleType:
    return DECODERS.get(spec.real_type, raw)


def gathers_values(spec: ColumnSpec) -> bool:
    """Whether the column's decoder takes its values as they are first (:data:`GATHERING`)."""
    return decoder_for(spec) in GATHERING


def arrow_field(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.Field:
    """The Arrow field a column decodes to (before any data-driven fallback)."""
    module = decoder_for(spec)
    metadata = {b"mysql_type": spec.type_name.encode()}
    if module in (strings, compressed_columns):
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
