"""The Arrow types of a change log mapped to types a lake table holds, and a lake table's
schema checked against a new stretch's (schema evolution).

Delta Lake and Iceberg have no unsigned integers, no durations, no dictionaries and no
decimals over 38 digits; Iceberg has no 8- or 16-bit integers either. Every value keeps a type
that holds it exactly (as :mod:`vecbinlog.spark.types` maps them for Spark):

=====================================  =============================  ===========================
Arrow (MySQL)                          Delta                          Iceberg
=====================================  =============================  ===========================
int8, int16 (TINYINT, SMALLINT)        byte, short                    int
uint8, uint16 (UNSIGNED, YEAR)         short, int                     int
uint32 (INT UNSIGNED)                  long                           long
uint64 (BIGINT UNSIGNED, BIT)          decimal(20,0)                  decimal(20,0)
decimal256 (DECIMAL over 38 digits)    string: the exact text         string
duration[us] (TIME)                    long: microseconds             long: microseconds
dictionary (ENUM)                      string: the label              string
list<string> (SET)                     string: ``a,b`` as MySQL       string
struct<srid, wkb> (GEOMETRY)           binary: the WKB                binary
timestamp[us] (DATETIME)               timestamp_ntz                  timestamp
timestamp[us, UTC] (TIMESTAMP)         timestamp                      timestamptz
=====================================  =============================  ===========================

The rest (int32/64, floats, decimal128, string, binary, date32, lists of floats for VECTOR)
is the same. A GEOMETRY's SRID is not in its WKB: a column with SRIDs other than 0 says so
with a :class:`~vecbinlog.lake.errors.LakeWarning`.

Schema evolution (:func:`fit_schema`): a column the lake table lacks is added; a column whose
new type the lake's holds exactly is cast to it; a wider new type is taken where the format
can widen (Iceberg: int to long, float to double, a decimal's precision); anything else is a
:class:`~vecbinlog.lake.errors.LakeSchemaError` naming the column.
"""

from __future__ import annotations

import warnings
from typing import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..decode.tableplan import widen_type
from .errors import LakeSchemaError, LakeWarning

__all__ = ["FORMATS", "lake_type", "lake_table", "fit_schema", "same_type"]

#: the lake formats, as results and messages name them
FORMATS = ("delta", "iceberg")
_UNSIGNED = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
             pa.uint64(): pa.decimal128(20, 0)}
#: Iceberg's narrowest integer is int (32 bits)
_ICEBERG_INTS = {pa.int8(): pa.int32(), pa.int16(): pa.int32()}


def lake_type(t: pa.DataType, fmt: str = "delta") -> pa.DataType:
    """The Arrow type a ``fmt`` lake table holds every value of ``t`` in (the module's table)."""
    if t in _UNSIGNED:
        return lake_type(_UNSIGNED[t], fmt)
    if fmt == "iceberg" and t in _ICEBERG_INTS:
        return _ICEBERG_INTS[t]
    if pa.types.is_dictionary(t):
        return lake_type(t.value_type, fmt)
    if pa.types.is_duration(t):
        return pa.int64()
    if pa.types.is_decimal(t) and t.precision > 38:
        return pa.string()
    if _is_set(t):
        return pa.string()
    if _is_geometry(t):
        return pa.binary()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(lake_type(t.value_type, fmt))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(lake_type(t.field(i).type, fmt)) for i in range(t.num_fields)])
    if pa.types.is_float16(t):
        return pa.float32()
    return t


def _is_set(t: pa.DataType) -> bool:
    """A SET's members (list<string>; VECTOR is a list of floats)."""
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and (
        pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)
        or (pa.types.is_dictionary(t.value_type) and pa.types.is_string(t.value_type.value_type)))


def _is_geometry(t: pa.DataType) -> bool:
    """GEOMETRY: struct<srid: uint32, wkb: binary> (docs/types.md)."""
    return pa.types.is_struct(t) and sorted(t.field(i).name for i in range(t.num_fields)) == ["srid", "wkb"]


def _lake_column(col: pa.ChunkedArray, name: str, fmt: str) -> pa.ChunkedArray:
    """``col`` as :func:`lake_type` says, whole-column Arrow kernels only."""
    t = col.type
    if pa.types.is_duration(t):
        return col.cast(pa.duration("us")).cast(pa.int64())
    if _is_set(t):
        return pc.binary_join(col.cast(pa.list_(pa.string())), ",")
    if _is_geometry(t):
        srids = pc.unique(pc.struct_field(col, "srid")).drop_null()
        srids = srids.filter(pc.not_equal(srids, 0))
        if len(srids):
            warnings.warn(f"column {name!r}: GEOMETRY values with SRIDs {sorted(srids.to_pylist())} are written as "
                          "their WKB, which has no SRID", LakeWarning, stacklevel=4)
        return pc.struct_field(col, "wkb").cast(pa.binary())
    return col.cast(lake_type(t, fmt))


def lake_table(table: pa.Table, columns: Sequence[str], fmt: str, required: Sequence[str] = ()) -> pa.Table:
    """``columns`` of ``table`` in lake types (:func:`lake_type`), without field metadata;
    ``required`` columns (an Iceberg table's key: its identifier fields) not nullable."""
    arrays, fields = [], []
    for name in columns:
        col = _lake_column(table.column(name), name, fmt)
        arrays.append(col)
        fields.append(pa.field(name, col.type, nullable=name not in required))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def same_type(a: pa.DataType, b: pa.DataType) -> bool:
    """Whether a lake holds ``a`` and ``b`` as one type (large and plain text are one, list
    item names and nullability do not count)."""
    norm = {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}
    a, b = norm.get(a, a), norm.get(b, b)
    if (pa.types.is_list(a) or pa.types.is_large_list(a)) and (pa.types.is_list(b) or pa.types.is_large_list(b)):
        return same_type(a.value_type, b.value_type)
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        return a.num_fields == b.num_fields and all(
            a.field(i).name == b.field(i).name and same_type(a.field(i).type, b.field(i).type)
            for i in range(a.num_fields))
    return a == b


def _widens(old: pa.DataType, new: pa.DataType, fmt: str) -> bool:
    """Whether a ``fmt`` table's column of type ``old`` can be widened to ``new`` in place
    (Iceberg's type promotions; Delta has none without its type-widening table feature)."""
    if fmt != "iceberg":
        return False
    if (old, new) in ((pa.int32(), pa.int64()), (pa.float32(), pa.float64())):
        return True
    return (pa.types.is_decimal128(old) and pa.types.is_decimal128(new) and old.scale == new.scale
            and old.precision <= new.precision)


def fit_schema(lake: pa.Schema, rows: pa.Table, fmt: str, path: str | None = None,
               offset: int | None = None) -> tuple[pa.Table, bool]:
    """``rows`` (lake types) fitted to a lake table of schema ``lake``: columns its types
    hold exactly cast to them; returns (rows, whether the lake's schema must evolve: new
    columns, or types it widens). Raises :class:`LakeSchemaError` naming the first column
    whose type cannot follow (``path``, ``offset``: the binlog file and offset its stretch
    starts at)."""
    evolve = False
    for i, f in enumerate(rows.schema):
        k = lake.get_field_index(f.name)
        if k < 0:
            evolve = True
            continue
        old = lake.field(k).type
        if same_type(old, f.type):
            continue
        if _holds(old, f.type):
            rows = rows.set_column(i, f.with_type(old), rows.column(i).cast(old))
        elif _widens(old, f.type, fmt):
            evolve = True
        else:
            raise LakeSchemaError(
                f"column {f.name!r} is {f.type} in the binlog from here on, and the {fmt.title()} table's column is "
                f"{old}, which does not hold it and cannot be widened to it ({_why(fmt)}); nothing of this stretch "
                "was written: sync it into a new lake table, or change the lake table's column yourself",
                path=path, offset=offset)
    return rows, evolve


def _holds(old: pa.DataType, new: pa.DataType) -> bool:
    """Whether every value of ``new`` is a value of ``old`` (a narrower new type)."""
    if pa.types.is_string(old) and pa.types.is_large_string(new):
        return True
    if pa.types.is_binary(old) and pa.types.is_large_binary(new):
        return True
    try:
        wide = widen_type(old, new)
    except (TypeError, ValueError):
        return False
    return wide is not None and same_type(wide, old)


def _why(fmt: str) -> str:
    if fmt == "iceberg":
        return "Iceberg widens int to long, float to double and a decimal's precision only"
    return "Delta Lake tables written by deltalake have no type widening"
