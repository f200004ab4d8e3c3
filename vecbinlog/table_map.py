"""TABLE_MAP_EVENT: what a table id means, and how each column's values are stored.

Layout (rows_event.h / rows_event.cpp, Table_map_event; the internals manual's null-bitmap
length "(column-count + 8) / 7" is wrong, the reader uses ``(column_count + 7) / 8``)::

    post-header   table_id  uint48 (uint32 when the FDE gives this event a 6-byte post-header)
                  flags     uint16  TableMapFlag
    body          db_len    uint8, db name, 0x00
                  tbl_len   uint8, table name, 0x00
                  colcnt    packed int
                  coltype   uint8[colcnt]              ColumnType per column
                  meta_len  packed int
                  metadata  meta_len bytes             per column, FIELD_METADATA_LEN bytes
                  null_bits uint8[(colcnt + 7) / 8]    bit i (LSB first) = column i nullable
                  optional  TLVs until the body ends   (type uint8, packed length, value)

Only binlog_row_metadata=FULL writes names, ENUM/SET labels and primary keys; MINIMAL
writes signedness and charsets; MariaDB's default NO_LOG writes none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .constants import (
    ColumnType as T,
    OptionalMetadataType as M,
    column_type_name,
)
from .errors import MalformedEventError, UnsupportedError
from .layout import Cursor, table_id_width

__all__ = ["ColumnSpec", "TableMap", "parse_table_map", "FIELD_METADATA_LEN"]

#: Bytes of field metadata each column type writes (Field::do_save_field_metadata in
#: sql/field.cc). Types not listed write none.
FIELD_METADATA_LEN: dict[int, int] = {
    T.MYSQL_TYPE_FLOAT: 1,  # pack length (4)
    T.MYSQL_TYPE_DOUBLE: 1,  # pack length (8)
    T.MYSQL_TYPE_BLOB: 1,  # bytes of the length prefix, 1-4
    T.MYSQL_TYPE_GEOMETRY: 1,
    T.MYSQL_TYPE_JSON: 1,
    T.MYSQL_TYPE_VECTOR: 1,
    T.MYSQL_TYPE_BLOB_COMPRESSED: 1,
    T.MYSQL_TYPE_TIME2: 1,  # fractional-second precision, 0-6
    T.MYSQL_TYPE_DATETIME2: 1,
    T.MYSQL_TYPE_TIMESTAMP2: 1,
    T.MYSQL_TYPE_VARCHAR: 2,  # uint16 LE: max length in bytes
    T.MYSQL_TYPE_VAR_STRING: 2,
    T.MYSQL_TYPE_VARCHAR_COMPRESSED: 2,
    T.MYSQL_TYPE_BIT: 2,  # bits % 8, bytes
    T.MYSQL_TYPE_NEWDECIMAL: 2,  # precision, scale
    T.MYSQL_TYPE_STRING: 2,  # real type and length, packed (see ColumnSpec.real_type)
    T.MYSQL_TYPE_ENUM: 2,
    T.MYSQL_TYPE_SET: 2,
}
_NO_METADATA = frozenset(
    {
        T.MYSQL_TYPE_DECIMAL, T.MYSQL_TYPE_TINY, T.MYSQL_TYPE_SHORT, T.MYSQL_TYPE_LONG,
        T.MYSQL_TYPE_NULL, T.MYSQL_TYPE_TIMESTAMP, T.MYSQL_TYPE_LONGLONG, T.MYSQL_TYPE_INT24,
        T.MYSQL_TYPE_DATE, T.MYSQL_TYPE_TIME, T.MYSQL_TYPE_DATETIME, T.MYSQL_TYPE_YEAR,
        T.MYSQL_TYPE_NEWDATE, T.MYSQL_TYPE_BOOL,
    }
)

#: Fixed value sizes in a row image (calc_field_size in sql/log_event.cc).
FIXED_WIDTH: dict[int, int] = {
    T.MYSQL_TYPE_TINY: 1,
    T.MYSQL_TYPE_SHORT: 2,
    T.MYSQL_TYPE_INT24: 3,
    T.MYSQL_TYPE_LONG: 4,
    T.MYSQL_TYPE_LONGLONG: 8,
    T.MYSQL_TYPE_YEAR: 1,
    T.MYSQL_TYPE_DATE: 3,
    T.MYSQL_TYPE_NEWDATE: 3,
    T.MYSQL_TYPE_TIME: 3,
    T.MYSQL_TYPE_TIMESTAMP: 4,
    T.MYSQL_TYPE_DATETIME: 8,
    T.MYSQL_TYPE_NULL: 0,
}

#: Types whose SIGNEDNESS bit is written (is_numeric_type in sql/log_event.cc).
NUMERIC_TYPES = frozenset(
    {
        T.MYSQL_TYPE_TINY, T.MYSQL_TYPE_SHORT, T.MYSQL_TYPE_INT24, T.MYSQL_TYPE_LONG,
        T.MYSQL_TYPE_LONGLONG, T.MYSQL_TYPE_NEWDECIMAL, T.MYSQL_TYPE_FLOAT, T.MYSQL_TYPE_DOUBLE,
    }
)
#: Types counted as "character columns" by DEFAULT_CHARSET / COLUMN_CHARSET
#: (is_character_type in sql/log_event.cc). MySQL 8.0 and MariaDB count GEOMETRY (its base
#: class is the blob); MySQL 9 counts VECTOR instead. COLUMN_CHARSET's length tells which.
CHARACTER_TYPES_BASE = frozenset(
    {T.MYSQL_TYPE_STRING, T.MYSQL_TYPE_VAR_STRING, T.MYSQL_TYPE_VARCHAR, T.MYSQL_TYPE_BLOB,
     T.MYSQL_TYPE_VARCHAR_COMPRESSED, T.MYSQL_TYPE_BLOB_COMPRESSED}
)
ENUM_SET_TYPES = frozenset({T.MYSQL_TYPE_ENUM, T.MYSQL_TYPE_SET})

# decimal_bin_size (strings/decimal.cc): bytes for 0..9 leftover digits.
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_bin_size(precision: int, scale: int) -> int:
    """Bytes of a NEWDECIMAL(precision, scale) value (9 digits per 4 bytes)."""
    intg = precision - scale
    return (intg // 9) * 4 + _DIG2BYTES[intg % 9] + (scale // 9) * 4 + _DIG2BYTES[scale % 9]


@dataclass(frozen=True)
class ColumnSpec:
    """One column of a TABLE_MAP, with what the optional metadata says about it."""

    index: int  #: 0-based position in the table
    type: int  #: the binlog type code (ColumnType)
    meta: int  #: field metadata as an integer (layout per type, see ``FIELD_METADATA_LEN``)
    nullable: bool
    name: str | None = None  #: COLUMN_NAME (FULL metadata only)
    unsigned: bool | None = None  #: SIGNEDNESS; None when the binlog does not say
    collation: int | None = None  #: DEFAULT_CHARSET / COLUMN_CHARSET (and the ENUM/SET ones)
    enum_values: tuple[bytes, ...] | None = None  #: ENUM_STR_VALUE labels
    set_values: tuple[bytes, ...] | None = None  #: SET_STR_VALUE labels
    geometry_type: int | None = None
    visible: bool | None = None  #: COLUMN_VISIBILITY
    vector_dimensionality: int | None = None

    @property
    def real_type(self) -> int:
        """The type as the table declares it: STRING metadata hides ENUM and SET.

        Field_string::do_save_field_metadata packs the real type in byte 0 and the length in
        byte 1; lengths over 255 put their bits 8-9, inverted, into bits 4-5 of byte 0 (Bug#37426).
        """
        if self.type == T.MYSQL_TYPE_STRING:
            byte0 = self.meta >> 8
            return byte0 if (byte0 & 0x30) == 0x30 else byte0 | 0x30
        return self.type

    @property
    def max_length(self) -> int:
        """Declared length in bytes of CHAR/VARCHAR (metadata), else 0."""
        if self.type == T.MYSQL_TYPE_STRING:
            byte0, byte1 = self.meta >> 8, self.meta & 0xFF
            if (byte0 & 0x30) != 0x30:
                return byte1 | (((byte0 & 0x30) ^ 0x30) << 4)
            return byte1
        if self.type in (T.MYSQL_TYPE_VARCHAR, T.MYSQL_TYPE_VAR_STRING, T.MYSQL_TYPE_VARCHAR_COMPRESSED):
            return self.meta
        return 0

    @property
    def type_name(self) -> str:
        return column_type_name(self.real_type)

    def storage(self) -> tuple[str, int]:
        """How a value sits in a row image: ``("fixed", n)`` or ``("prefixed", bytes_of_length)``.

        Raises UnsupportedError for column types whose size is unknown.
        """
        t, meta = self.type, self.meta
        if t in FIXED_WIDTH:
            return ("fixed", FIXED_WIDTH[t])
        if t in (T.MYSQL_TYPE_FLOAT, T.MYSQL_TYPE_DOUBLE):
            return ("fixed", meta or (4 if t == T.MYSQL_TYPE_FLOAT else 8))
        if t == T.MYSQL_TYPE_TIME2:
            return ("fixed", 3 + (meta + 1) // 2)
        if t == T.MYSQL_TYPE_TIMESTAMP2:
            return ("fixed", 4 + (meta + 1) // 2)
        if t == T.MYSQL_TYPE_DATETIME2:
            return ("fixed", 5 + (meta + 1) // 2)
        if t == T.MYSQL_TYPE_NEWDECIMAL:
            return ("fixed", decimal_bin_size(meta >> 8, meta & 0xFF))
        if t == T.MYSQL_TYPE_BIT:
            bits, nbytes = meta & 0xFF, meta >> 8
            return ("fixed", nbytes + (1 if bits else 0))
        if t in (T.MYSQL_TYPE_ENUM, T.MYSQL_TYPE_SET):
            return ("fixed", meta & 0xFF)
        if t == T.MYSQL_TYPE_STRING:
            if self.real_type in (T.MYSQL_TYPE_ENUM, T.MYSQL_TYPE_SET):
                return ("fixed", meta & 0xFF)
            return ("prefixed", 2 if self.max_length > 255 else 1)
        if t in (T.MYSQL_TYPE_VARCHAR, T.MYSQL_TYPE_VAR_STRING, T.MYSQL_TYPE_VARCHAR_COMPRESSED):
            return ("prefixed", 2 if meta > 255 else 1)
        if t in (T.MYSQL_TYPE_BLOB, T.MYSQL_TYPE_GEOMETRY, T.MYSQL_TYPE_JSON, T.MYSQL_TYPE_VECTOR,
                 T.MYSQL_TYPE_BLOB_COMPRESSED):
            if not 1 <= meta <= 4:
                raise UnsupportedError(f"column {self.index + 1}: {self.type_name} length prefix of {meta} bytes")
            return ("prefixed", meta)
        raise UnsupportedError(f"column {self.index + 1}: type {self.type_name} has no known size in a row image")


@dataclass(frozen=True)
class TableMap:
    """A decoded TABLE_MAP_EVENT (the table id aside, which is per file and per event)."""

    database: str
    table: str
    flags: int
    columns: tuple[ColumnSpec, ...]
    primary_key: tuple[int, ...] | None = None  #: column indexes (SIMPLE_PRIMARY_KEY / PRIMARY_KEY_WITH_PREFIX)
    primary_key_prefixes: tuple[int, ...] | None = None  #: prefix length per key column, 0 = whole
    optional_metadata: tuple[tuple[int, bytes], ...] = field(default=(), repr=False)  #: raw TLVs

    @property
    def name(self) -> str:
        """``"db.table"``."""
        return f"{self.database}.{self.table}"

    @property
    def column_names(self) -> list[str]:
        """COLUMN_NAME when the binlog has it, else ``@1, @2, ...`` as mysqlbinlog prints them."""
        return [c.name if c.name is not None else f"@{c.index + 1}" for c in self.columns]


#: Server limits the field metadata must respect (my_decimal.h DECIMAL_MAX_PRECISION and
#: DECIMAL_MAX_SCALE, my_time.h DATETIME_MAX_DECIMALS, MySQL 9's 16383-entry VECTOR).
DECIMAL_MAX_PRECISION = 65
#: DECIMAL_MAX_SCALE per server family: MySQL 30, MariaDB 38 (since 10.2.1, MDEV-10138)
DECIMAL_MAX_SCALE = {"mysql": 30, "mariadb": 38}
DATETIME_MAX_DECIMALS = 6
VECTOR_MAX_DIMENSIONALITY = 16383


def _check_metadata(t: int, meta: int, flavor: str = "mysql") -> str | None:
    """Why a column's field metadata is impossible for a server of ``flavor``, or None."""
    if t == T.MYSQL_TYPE_NEWDECIMAL:
        precision, scale = meta >> 8, meta & 0xFF
        max_scale = DECIMAL_MAX_SCALE.get(flavor, DECIMAL_MAX_SCALE["mysql"])
        if not 1 <= precision <= DECIMAL_MAX_PRECISION or scale > min(precision, max_scale):
            return (f"DECIMAL({precision},{scale}) is beyond what a {flavor} server writes (precision "
                    f"1-{DECIMAL_MAX_PRECISION}, scale 0-{max_scale} and <= precision)")
    elif t in (T.MYSQL_TYPE_TIME2, T.MYSQL_TYPE_DATETIME2, T.MYSQL_TYPE_TIMESTAMP2) and meta > DATETIME_MAX_DECIMALS:
        return f"{column_type_name(t)} with {meta} fractional digits (at most 6)"
    elif t == T.MYSQL_TYPE_BIT and (meta & 0xFF > 7 or (meta >> 8) > 8 or (meta >> 8) * 8 + (meta & 0xFF) > 64):
        return f"BIT of {meta >> 8} bytes and {meta & 0xFF} bits (at most 64 bits)"
    elif t in (T.MYSQL_TYPE_FLOAT, T.MYSQL_TYPE_DOUBLE) and meta not in (0, 4, 8):
        return f"{column_type_name(t)} of {meta} bytes"
    return None


def _without_metadata(db: str, tbl: str, flags: int, types: bytes, path: str | None, offset: int,
                      server_version: str | None) -> TableMap:
    """A TABLE_MAP of MySQL 5.1.15-5.1.17: column types only. Types whose size needs no field
    metadata (integers, old temporals, FLOAT and DOUBLE of their usual 4 and 8 bytes) decode;
    nullability is not said, so every column may be NULL (each row image has its null bits)."""
    for i, t in enumerate(types):
        if t not in _NO_METADATA and t not in (T.MYSQL_TYPE_FLOAT, T.MYSQL_TYPE_DOUBLE):
            raise UnsupportedError(
                f"{db}.{tbl}: the TABLE_MAP has no field metadata, the pre-GA layout of MySQL 5.1.15-5.1.17 "
                f"(this file's server: {server_version or 'unknown'}), and column {i + 1} is "
                f"{column_type_name(t)}, whose size in a row image only the field metadata gives: its rows "
                "cannot be decoded",
                path=path, offset=offset, event_type="TABLE_MAP_EVENT",
            )
    columns = tuple(ColumnSpec(index=i, type=t, meta=0, nullable=True) for i, t in enumerate(types))
    return TableMap(database=db, table=tbl, flags=flags, columns=columns)


def _names(cur: Cursor, end: int) -> list[str]:
    out = []
    while cur.pos < end:
        out.append(_ident(cur.packed_bytes("column name")))
    return out


def _ident(raw: bytes) -> str:
    # Identifiers are written in the system charset (utf8mb3).
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "backslashreplace")


def _msb_bits(value: bytes, n: int) -> list[bool]:
    """The first ``n`` bits of ``value``, most significant bit of each byte first."""
    return [bool(value[i // 8] & (0x80 >> (i % 8))) for i in range(n)]


def _charsets(cur: Cursor, end: int, default_form: bool, count: int) -> list[int | None]:
    """DEFAULT_CHARSET-style (default + (index, collation) pairs) or COLUMN_CHARSET-style list."""
    if default_form:
        default = cur.packed("default collation")
        out: list[int | None] = [default] * count
        while cur.pos < end:
            i = cur.packed("charset column index")
            coll = cur.packed("charset collation")
            if i >= count:
                raise cur.error(f"charset override for character column {i}, but there are {count}")
            out[i] = coll
        return out
    out = []
    while cur.pos < end:
        out.append(cur.packed("column collation"))
    return out


def _str_values(cur: Cursor, end: int) -> list[tuple[bytes, ...]]:
    out = []
    while cur.pos < end:
        n = cur.packed("label count")
        if n > cur.remaining():
            raise cur.error(f"{n} labels cannot fit in {cur.remaining()} bytes")
        out.append(tuple(cur.packed_bytes("label") for _ in range(n)))
    return out


def parse_table_map(
    buf, offset: int, body_start: int, body_end: int, post_header_len: int, *, path: str | None = None,
    flavor: str = "mysql", server_major: int = 8, server_version: str | None = None,
) -> tuple[int, TableMap]:
    """Decode the TABLE_MAP event at ``offset``; returns ``(table_id, TableMap)``.

    ``body_start`` is the offset after the common header, ``body_end`` the end of the
    event without its checksum. An event that ends after its column types is the layout of
    MySQL 5.1.15-5.1.17 (field metadata and null bitmap came in 5.1.18; the server reads them
    only "if (bytes_read < event_len)", Table_map_log_event in sql/log_event.cc): its columns
    are read without metadata when their types need none, otherwise UnsupportedError names
    ``server_version`` (the FDE's).
    """
    cur = Cursor(buf, body_start, body_end, path=path, event_type="TABLE_MAP_EVENT")
    id_len = table_id_width(post_header_len)
    table_id = cur.uint(id_len, "table_id")
    flags = cur.u16("flags")
    if post_header_len > id_len + 2:
        cur.take(post_header_len - id_len - 2, "post-header")
    db = _ident(cur.take(cur.u8("db name length"), "db name"))
    cur.u8("db name terminator")
    tbl = _ident(cur.take(cur.u8("table name length"), "table name"))
    cur.u8("table name terminator")
    ncols = cur.packed("column count")
    if ncols > cur.remaining():
        raise cur.error(f"column count {ncols} but only {cur.remaining()} bytes left for the column types")
    types = cur.take(ncols, "column types")
    if cur.pos == body_end and ncols:
        return table_id, _without_metadata(db, tbl, flags, types, path, offset, server_version)
    meta_len = cur.packed("field metadata length")
    meta_start = cur.pos
    metas = []
    for i, t in enumerate(types):
        n = FIELD_METADATA_LEN.get(t)
        if n is None:
            if t not in _NO_METADATA:
                raise UnsupportedError(
                    f"column {i + 1} of {db}.{tbl} has type code {t} ({column_type_name(t)}), "
                    "whose metadata size is unknown", path=path, offset=offset, event_type="TABLE_MAP_EVENT",
                )
            metas.append(0)
            continue
        raw = cur.take(n, f"field metadata of column {i + 1}")
        if t in (T.MYSQL_TYPE_VARCHAR, T.MYSQL_TYPE_VAR_STRING, T.MYSQL_TYPE_VARCHAR_COMPRESSED, T.MYSQL_TYPE_BIT):
            metas.append(raw[0] | (raw[1] << 8))  # little-endian
        elif n == 2:
            metas.append((raw[0] << 8) | raw[1])  # NEWDECIMAL, STRING, ENUM, SET: byte0 high
        else:
            metas.append(raw[0])
    for i, (t, m) in enumerate(zip(types, metas)):
        problem = _check_metadata(t, m, flavor)
        if problem:
            raise MalformedEventError(
                f"column {i + 1} of {db}.{tbl}: {problem}", path=path, offset=offset, event_type="TABLE_MAP_EVENT"
            )
    if cur.pos - meta_start != meta_len:
        cur.pos = meta_start
        raise cur.error(
            f"field metadata block says {meta_len} bytes, the column types need {sum(FIELD_METADATA_LEN.get(t, 0) for t in types)}"
        )
    null_bits = cur.take((ncols + 7) // 8, "null bitmap")
    nullable = [bool(null_bits[i // 8] & (1 << (i % 8))) for i in range(ncols)]

    # optional metadata TLVs
    tlvs: list[tuple[int, bytes]] = []
    tlv_starts: list[int] = []
    while cur.pos < body_end:
        kind = cur.u8("optional metadata type")
        length = cur.packed("optional metadata length")
        tlv_starts.append(cur.pos)
        tlvs.append((kind, cur.take(length, f"optional metadata {kind} value")))

    cols = [dict(index=i, type=t, meta=m, nullable=nullable[i]) for i, (t, m) in enumerate(zip(types, metas))]
    specs_tmp = [ColumnSpec(**c) for c in cols]
    real = [s.real_type for s in specs_tmp]
    numeric = [i for i, t in enumerate(real) if t in NUMERIC_TYPES]
    enum_set = [i for i, t in enumerate(real) if t in ENUM_SET_TYPES]
    enums = [i for i, t in enumerate(real) if t == T.MYSQL_TYPE_ENUM]
    sets = [i for i, t in enumerate(real) if t == T.MYSQL_TYPE_SET]
    geoms = [i for i, t in enumerate(real) if t == T.MYSQL_TYPE_GEOMETRY]
    vectors = [i for i, t in enumerate(real) if t == T.MYSQL_TYPE_VECTOR]
    base_chars = [i for i, t in enumerate(real) if t in CHARACTER_TYPES_BASE]
    with_geom = sorted(base_chars + geoms)
    with_vec = sorted(base_chars + vectors)
    default_chars = with_vec if (flavor == "mysql" and server_major >= 9) else with_geom

    primary_key = prefixes = None
    for (kind, value), vstart in zip(tlvs, tlv_starts):
        vcur = Cursor(value, 0, len(value), base=vstart, path=path, event_type="TABLE_MAP_EVENT")
        n = len(value)
        if kind == M.SIGNEDNESS:
            if len(value) * 8 < len(numeric):
                raise vcur.error(f"SIGNEDNESS has {len(value) * 8} bits for {len(numeric)} numeric columns")
            for i, bit in zip(numeric, _msb_bits(value, len(numeric))):
                cols[i]["unsigned"] = bit
        elif kind in (M.DEFAULT_CHARSET, M.COLUMN_CHARSET):
            if kind == M.COLUMN_CHARSET:
                colls = _charsets(vcur, n, False, 0)
                # The number of collations tells which columns the writer counted.
                targets = next(
                    (c for c in (default_chars, with_geom, with_vec, base_chars) if len(c) == len(colls)), None
                )
                if targets is None:
                    raise vcur.error(f"COLUMN_CHARSET has {len(colls)} collations for {len(default_chars)} character columns")
            else:
                targets = default_chars
                colls = _charsets(vcur, n, True, len(targets))
            for i, coll in zip(targets, colls):
                cols[i]["collation"] = coll
        elif kind in (M.ENUM_AND_SET_DEFAULT_CHARSET, M.ENUM_AND_SET_COLUMN_CHARSET):
            colls = _charsets(vcur, n, kind == M.ENUM_AND_SET_DEFAULT_CHARSET, len(enum_set))
            if len(colls) != len(enum_set):
                raise vcur.error(f"ENUM/SET charset list has {len(colls)} entries for {len(enum_set)} columns")
            for i, coll in zip(enum_set, colls):
                cols[i]["collation"] = coll
        elif kind == M.COLUMN_NAME:
            names = _names(vcur, n)
            if len(names) != ncols:
                raise vcur.error(f"COLUMN_NAME has {len(names)} names for {ncols} columns")
            for c, name in zip(cols, names):
                c["name"] = name
        elif kind in (M.ENUM_STR_VALUE, M.SET_STR_VALUE):
            targets, key = (enums, "enum_values") if kind == M.ENUM_STR_VALUE else (sets, "set_values")
            values = _str_values(vcur, n)
            if len(values) != len(targets):
                raise vcur.error(f"{M(kind).name} has labels for {len(values)} columns, the table has {len(targets)}")
            for i, labels in zip(targets, values):
                cols[i][key] = labels
        elif kind == M.GEOMETRY_TYPE:
            vals = []
            while vcur.pos < n:
                vals.append(vcur.packed("geometry type"))
            for i, g in zip(geoms, vals):
                cols[i]["geometry_type"] = g
        elif kind == M.SIMPLE_PRIMARY_KEY:
            keys = []
            while vcur.pos < n:
                keys.append(vcur.packed("primary key column"))
            primary_key, prefixes = tuple(keys), tuple(0 for _ in keys)
        elif kind == M.PRIMARY_KEY_WITH_PREFIX:
            keys, pre = [], []
            while vcur.pos < n:
                keys.append(vcur.packed("primary key column"))
                pre.append(vcur.packed("primary key prefix"))
            primary_key, prefixes = tuple(keys), tuple(pre)
        elif kind == M.COLUMN_VISIBILITY:
            if n * 8 < ncols:
                raise vcur.error(f"COLUMN_VISIBILITY has {n * 8} bits for {ncols} columns")
            for c, bit in zip(cols, _msb_bits(value, ncols)):
                c["visible"] = bit
        elif kind == M.VECTOR_DIMENSIONALITY:
            dims = []
            while vcur.pos < n:
                dims.append(vcur.packed("vector dimensionality"))
                if not 1 <= dims[-1] <= VECTOR_MAX_DIMENSIONALITY:
                    raise vcur.error(f"VECTOR dimensionality {dims[-1]} (at most {VECTOR_MAX_DIMENSIONALITY})")
            for i, d in zip(vectors, dims):
                cols[i]["vector_dimensionality"] = d
        # unknown TLV types are kept raw in optional_metadata
    if primary_key is not None and any(k >= ncols for k in primary_key):
        raise cur.error(f"primary key names column {max(primary_key) + 1} of a {ncols}-column table")
    columns = tuple(ColumnSpec(**c) for c in cols)
    return table_id, TableMap(
        database=db, table=tbl, flags=flags, columns=columns, primary_key=primary_key,
        primary_key_prefixes=prefixes, optional_metadata=tuple(tlvs),
    )
