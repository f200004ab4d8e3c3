"""Column types: one table of what vecbinlog knows of each MySQL/MariaDB column type.

A TABLE_MAP gives each column a type code (``enum_field_types``) and some bytes of field
metadata; everything else follows from those two, and is written here once, per type:

==============  =====================================================================
``meta_len``    bytes of field metadata the type writes (``Field::do_save_field_metadata``
                in sql/field.cc); 0: none
``meta_order``  how two metadata bytes make one integer: ``"le"`` (VARCHAR's max length,
                BIT's bits/bytes) or ``"be"`` (byte 0 high: DECIMAL's precision/scale,
                STRING's real type/length, ENUM/SET's real type/pack length)
``storage``     how a value sits in a row image, from the column's metadata:
                ``("fixed", bytes)`` or ``("prefixed", bytes of the length prefix)``
                (``calc_field_size`` in sql/log_event.cc); None: unknown, rows refused
``sized_alone`` the type writes metadata but its size is known without it: FLOAT/DOUBLE
                (4/8 bytes), decodable from the TABLE_MAPs of MySQL 5.1.15-5.1.17, which
                write no metadata at all (like every type with ``meta_len`` 0)
``check``       why a metadata value is impossible for a server family (their limits)
``numeric``     the SIGNEDNESS metadata has a bit for it (``is_numeric_type``)
``character``   DEFAULT/COLUMN_CHARSET have an entry for it (``is_character_type``;
                GEOMETRY and VECTOR depend on the server, see :mod:`vecbinlog.tables.table_map`)
``decoder``     the module of :mod:`vecbinlog.decode.decoders` that turns its column into Arrow
``arrow``       (signed, unsigned) Arrow types of the integer types; the other families'
                Arrow types depend on metadata and options and are their decoder's
``sql``         the SQL types (as the DDL interpreter names them) logged as this code
``mariadb_old`` MariaDB 5.3-10.0 wrote it with fractional seconds and no metadata: its
                size in a MariaDB binlog is a guess (MySQL's is exact)
==============  =====================================================================

Codes not in :data:`TYPES` (``TYPED_ARRAY``, ``TINY_BLOB``..., unknown ones) have no known
metadata size: a TABLE_MAP holding one is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa

from ..constants import ColumnType as T
from ..constants import column_type_name
from ..errors import UnsupportedError

__all__ = [
    "TypeInfo", "TYPES", "type_info", "FIELD_METADATA_LEN", "NUMERIC_TYPES", "CHARACTER_TYPES_BASE",
    "ENUM_SET_TYPES", "CHARSET_TYPES", "MARIADB_OLD_TEMPORAL", "LOGGED_AS", "decimal_bin_size",
    "DECIMAL_MAX_PRECISION", "DECIMAL_MAX_SCALE", "DATETIME_MAX_DECIMALS",
]

Storage = tuple[str, int]


class ColumnLike(Protocol):
    """What the registry asks of a column: a TABLE_MAP's :class:`~.table_map.ColumnSpec` is one."""

    @property
    def index(self) -> int: ...
    @property
    def meta(self) -> int: ...
    @property
    def real_type(self) -> int: ...
    @property
    def max_length(self) -> int: ...
    @property
    def type_name(self) -> str: ...

#: Server limits the field metadata must respect (my_decimal.h DECIMAL_MAX_PRECISION and
#: DECIMAL_MAX_SCALE, my_time.h DATETIME_MAX_DECIMALS).
DECIMAL_MAX_PRECISION = 65
#: DECIMAL_MAX_SCALE per server family: MySQL 30, MariaDB 38 (since 10.2.1, MDEV-10138)
DECIMAL_MAX_SCALE = {"mysql": 30, "mariadb": 38}
DATETIME_MAX_DECIMALS = 6

# decimal_bin_size (strings/decimal.cc): bytes for 0..9 leftover digits.
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_bin_size(precision: int, scale: int) -> int:
    """Bytes of a NEWDECIMAL(precision, scale) value (9 digits per 4 bytes)."""
    intg = precision - scale
    return (intg // 9) * 4 + _DIG2BYTES[intg % 9] + (scale // 9) * 4 + _DIG2BYTES[scale % 9]


# --- how a value is stored, from the column (its type's metadata) ---------------------------

def _fixed(n: int) -> Callable[[ColumnLike], Storage]:
    return lambda spec: ("fixed", n)


def _float(default: int) -> Callable[[ColumnLike], Storage]:
    return lambda spec: ("fixed", spec.meta or default)


def _fractional(base: int) -> Callable[[ColumnLike], Storage]:
    """TIME2/DATETIME2/TIMESTAMP2: ``base`` bytes and (fsp + 1) / 2 bytes of fraction."""
    return lambda spec: ("fixed", base + (spec.meta + 1) // 2)


def _decimal(spec: ColumnLike) -> Storage:
    return ("fixed", decimal_bin_size(spec.meta >> 8, spec.meta & 0xFF))


def _bit(spec: ColumnLike) -> Storage:
    bits, nbytes = spec.meta & 0xFF, spec.meta >> 8
    return ("fixed", nbytes + (1 if bits else 0))


def _pack_length(spec: ColumnLike) -> Storage:
    """ENUM/SET: the pack length (1-2 / 1-8 bytes) in the metadata's low byte."""
    return ("fixed", spec.meta & 0xFF)


def _string(spec: ColumnLike) -> Storage:
    """CHAR/BINARY, and ENUM/SET logged as STRING with their real type in the metadata."""
    if spec.real_type in ENUM_SET_TYPES:
        return _pack_length(spec)
    return ("prefixed", 2 if spec.max_length > 255 else 1)


def _varchar(spec: ColumnLike) -> Storage:
    return ("prefixed", 2 if spec.meta > 255 else 1)


def _blob(spec: ColumnLike) -> Storage:
    """BLOB/TEXT, JSON, GEOMETRY, VECTOR: a 1-4 byte length prefix, its size the metadata."""
    if not 1 <= spec.meta <= 4:
        raise UnsupportedError(f"column {spec.index + 1}: {spec.type_name} length prefix of {spec.meta} bytes")
    return ("prefixed", spec.meta)


# --- metadata limits ---------------------------------------------------------------------

def _check_decimal(t: int, meta: int, flavor: str) -> str | None:
    precision, scale = meta >> 8, meta & 0xFF
    max_scale = DECIMAL_MAX_SCALE.get(flavor, DECIMAL_MAX_SCALE["mysql"])
    if not 1 <= precision <= DECIMAL_MAX_PRECISION or scale > min(precision, max_scale):
        return (f"DECIMAL({precision},{scale}) is beyond what a {flavor} server writes (precision "
                f"1-{DECIMAL_MAX_PRECISION}, scale 0-{max_scale} and <= precision)")
    return None


def _check_fsp(t: int, meta: int, flavor: str) -> str | None:
    if meta > DATETIME_MAX_DECIMALS:
        return f"{column_type_name(t)} with {meta} fractional digits (at most 6)"
    return None


def _check_bit(t: int, meta: int, flavor: str) -> str | None:
    if meta & 0xFF > 7 or (meta >> 8) > 8 or (meta >> 8) * 8 + (meta & 0xFF) > 64:
        return f"BIT of {meta >> 8} bytes and {meta & 0xFF} bits (at most 64 bits)"
    return None


def _check_float(t: int, meta: int, flavor: str) -> str | None:
    return f"{column_type_name(t)} of {meta} bytes" if meta not in (0, 4, 8) else None


@dataclass(frozen=True)
class TypeInfo:
    """What one column type code means; see the module docstring for each field."""

    meta_len: int = 0
    meta_order: str = "le"
    storage: Callable[[ColumnLike], Storage] | None = None
    sized_alone: bool = False
    check: Callable[[int, int, str], str | None] | None = None
    numeric: bool = False
    character: bool = False
    decoder: str = "raw"
    arrow: tuple[pa.DataType, pa.DataType] | None = None
    sql: tuple[str, ...] = ()
    mariadb_old: bool = False


_TEXT = ("TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB")
_CHAR = ("CHAR", "NCHAR", "BINARY", "INET", "UUID")
_VARCHAR = ("VARCHAR", "NVARCHAR", "VARBINARY")
_INT, _STR, _TEMPORAL = "ints", "strings", "temporal"

#: type code -> what it means. One line per type; the order is enum_field_types'.
TYPES: dict[int, TypeInfo] = {
    T.MYSQL_TYPE_DECIMAL: TypeInfo(sql=("DECIMAL",)),  # pre-5.0 DECIMAL: size unknown, refused
    T.MYSQL_TYPE_TINY: TypeInfo(storage=_fixed(1), numeric=True, decoder=_INT,
                                arrow=(pa.int8(), pa.uint8()), sql=("TINYINT", "BOOLEAN")),
    T.MYSQL_TYPE_SHORT: TypeInfo(storage=_fixed(2), numeric=True, decoder=_INT,
                                 arrow=(pa.int16(), pa.uint16()), sql=("SMALLINT",)),
    T.MYSQL_TYPE_LONG: TypeInfo(storage=_fixed(4), numeric=True, decoder=_INT,
                                arrow=(pa.int32(), pa.uint32()), sql=("INT",)),
    T.MYSQL_TYPE_FLOAT: TypeInfo(meta_len=1, storage=_float(4), sized_alone=True, check=_check_float,
                                 numeric=True, decoder="floats", sql=("FLOAT", "DOUBLE")),
    T.MYSQL_TYPE_DOUBLE: TypeInfo(meta_len=1, storage=_float(8), sized_alone=True, check=_check_float,
                                  numeric=True, decoder="floats", sql=("FLOAT", "DOUBLE")),
    T.MYSQL_TYPE_NULL: TypeInfo(storage=_fixed(0)),
    T.MYSQL_TYPE_TIMESTAMP: TypeInfo(storage=_fixed(4), decoder=_TEMPORAL,
                                     sql=("TIMESTAMP", "TIMESTAMPTZ"), mariadb_old=True),
    T.MYSQL_TYPE_LONGLONG: TypeInfo(storage=_fixed(8), numeric=True, decoder=_INT,
                                    arrow=(pa.int64(), pa.uint64()), sql=("BIGINT",)),
    T.MYSQL_TYPE_INT24: TypeInfo(storage=_fixed(3), numeric=True, decoder=_INT,
                                 arrow=(pa.int32(), pa.uint32()), sql=("MEDIUMINT",)),
    T.MYSQL_TYPE_DATE: TypeInfo(storage=_fixed(3), decoder=_TEMPORAL, sql=("DATE",)),
    T.MYSQL_TYPE_TIME: TypeInfo(storage=_fixed(3), decoder=_TEMPORAL, sql=("TIME",),
                                mariadb_old=True),
    T.MYSQL_TYPE_DATETIME: TypeInfo(storage=_fixed(8), decoder=_TEMPORAL,
                                    sql=("DATETIME",), mariadb_old=True),
    T.MYSQL_TYPE_YEAR: TypeInfo(storage=_fixed(1), decoder=_INT,
                                arrow=(pa.uint16(), pa.uint16()), sql=("YEAR",)),
    T.MYSQL_TYPE_NEWDATE: TypeInfo(storage=_fixed(3), decoder=_TEMPORAL, sql=("DATE",)),
    T.MYSQL_TYPE_VARCHAR: TypeInfo(meta_len=2, storage=_varchar, character=True, decoder=_STR, sql=_VARCHAR),
    T.MYSQL_TYPE_BIT: TypeInfo(meta_len=2, storage=_bit, check=_check_bit, decoder="bits", sql=("BIT",)),
    T.MYSQL_TYPE_TIMESTAMP2: TypeInfo(meta_len=1, storage=_fractional(4), check=_check_fsp,
                                      decoder=_TEMPORAL, sql=("TIMESTAMP", "TIMESTAMPTZ")),
    T.MYSQL_TYPE_DATETIME2: TypeInfo(meta_len=1, storage=_fractional(5), check=_check_fsp,
                                     decoder=_TEMPORAL, sql=("DATETIME",)),
    T.MYSQL_TYPE_TIME2: TypeInfo(meta_len=1, storage=_fractional(3), check=_check_fsp,
                                 decoder=_TEMPORAL, sql=("TIME",)),
    T.MYSQL_TYPE_BLOB_COMPRESSED: TypeInfo(meta_len=1, storage=_blob, character=True,
                                           decoder="compressed_columns", sql=_TEXT),
    T.MYSQL_TYPE_VARCHAR_COMPRESSED: TypeInfo(meta_len=2, storage=_varchar, character=True,
                                              decoder="compressed_columns", sql=_VARCHAR),
    T.MYSQL_TYPE_VECTOR: TypeInfo(meta_len=1, storage=_blob, decoder="vector", sql=("VECTOR",)),
    T.MYSQL_TYPE_BOOL: TypeInfo(),  # never logged by a server; refused in rows
    T.MYSQL_TYPE_JSON: TypeInfo(meta_len=1, storage=_blob, decoder="mysqljson", sql=("JSON",)),
    T.MYSQL_TYPE_NEWDECIMAL: TypeInfo(meta_len=2, meta_order="be", storage=_decimal, check=_check_decimal,
                                      numeric=True, decoder="decimal", sql=("DECIMAL",)),
    T.MYSQL_TYPE_ENUM: TypeInfo(meta_len=2, meta_order="be", storage=_pack_length, decoder="enums",
                                sql=("ENUM",)),
    T.MYSQL_TYPE_SET: TypeInfo(meta_len=2, meta_order="be", storage=_pack_length, decoder="enums",
                               sql=("SET",)),
    T.MYSQL_TYPE_BLOB: TypeInfo(meta_len=1, storage=_blob, character=True, decoder=_STR,
                                sql=(*_TEXT, "JSON")),  # MariaDB's JSON is a LONGTEXT
    T.MYSQL_TYPE_VAR_STRING: TypeInfo(meta_len=2, storage=_varchar, character=True, decoder=_STR, sql=_VARCHAR),
    T.MYSQL_TYPE_STRING: TypeInfo(meta_len=2, meta_order="be", storage=_string, character=True,
                                  decoder=_STR, sql=_CHAR),
    T.MYSQL_TYPE_GEOMETRY: TypeInfo(meta_len=1, storage=_blob, decoder="geometry", sql=("GEOMETRY",)),
}


def type_info(code: int) -> TypeInfo | None:
    """The registry's entry for a type code, or None for a code with no known metadata size."""
    return TYPES.get(code)


# --- views of the table, for the code that asks one question of many types ---------------

#: code -> bytes of field metadata, for the types that write some
FIELD_METADATA_LEN: dict[int, int] = {t: i.meta_len for t, i in TYPES.items() if i.meta_len}
#: types whose SIGNEDNESS bit is written
NUMERIC_TYPES = frozenset(t for t, i in TYPES.items() if i.numeric)
#: types counted as character columns by every server (GEOMETRY/VECTOR: see table_map)
CHARACTER_TYPES_BASE = frozenset(t for t, i in TYPES.items() if i.character)
ENUM_SET_TYPES = frozenset({T.MYSQL_TYPE_ENUM, T.MYSQL_TYPE_SET})
#: types with a character set in the TABLE_MAP's charset metadata (text and blobs, ENUM/SET)
CHARSET_TYPES = CHARACTER_TYPES_BASE | ENUM_SET_TYPES
#: TIMESTAMP, TIME, DATETIME: in a MariaDB binlog their size is a guess (see ``mariadb_old``)
MARIADB_OLD_TEMPORAL = frozenset(t for t, i in TYPES.items() if i.mariadb_old)
#: SQL type (as ddl.ColumnInfo.type) -> the binlog types a column of it is logged as
LOGGED_AS: dict[str, frozenset[int]] = {
    name: frozenset(t for t, i in TYPES.items() if name in i.sql)
    for name in dict.fromkeys(s for i in TYPES.values() for s in i.sql)
}
