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

from ..binlog.spec import Cursor, table_id_width
from ..constants import ColumnType as T
from ..constants import OptionalMetadataType as M
from ..constants import column_type_name
from ..errors import MalformedEventError, UnsupportedError
from .types import CHARACTER_TYPES_BASE, ENUM_SET_TYPES, FIELD_METADATA_LEN, NUMERIC_TYPES, type_info

__all__ = ["ColumnSpec", "TableMap", "parse_table_map", "FIELD_METADATA_LEN"]

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
        """How a value sits in a row image: ``("fixed", n)`` or ``("prefixed", bytes_of_length)``
        (the type's ``storage`` in :data:`vecbinlog.tables.types.TYPES`).

        Raises UnsupportedError for column types whose size is unknown.
        """
        info = type_info(self.type)
        if info is None or info.storage is None:
            raise UnsupportedError(f"column {self.index + 1}: type {self.type_name} has no known size in a row image")
        return info.storage(self)


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


#: MySQL 9's 16383-entry VECTOR
VECTOR_MAX_DIMENSIONALITY = 16383


def _check_metadata(t: int, meta: int, flavor: str = "mysql") -> str | None:
    """Why a column's field metadata is impossible for a server of ``flavor``, or None."""
    info = type_info(t)
    return info.check(t, meta, flavor) if info is not None and info.check is not None else None


def _without_metadata(db: str, tbl: str, flags: int, types: bytes, path: str | None, offset: int,
                      server_version: str | None) -> TableMap:
    """A TABLE_MAP of MySQL 5.1.15-5.1.17: column types only. Types whose size needs no field
    metadata (integers, old temporals, FLOAT and DOUBLE of their usual 4 and 8 bytes) decode;
    nullability is not said, so every column may be NULL (each row image has its null bits)."""
    for i, t in enumerate(types):
        info = type_info(t)
        if info is None or (info.meta_len and not info.sized_alone):
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


def _field_metadata(cur: Cursor, types: bytes, table: str, flavor: str, path: str | None, offset: int) -> list[int]:
    """Each column's field metadata as an integer (size and byte order from the type registry),
    checked against the limits of a server of ``flavor``."""
    meta_len = cur.packed("field metadata length")
    meta_start = cur.pos
    metas: list[int] = []
    for i, t in enumerate(types):
        info = type_info(t)
        if info is None:
            raise UnsupportedError(
                f"column {i + 1} of {table} has type code {t} ({column_type_name(t)}), "
                "whose metadata size is unknown", path=path, offset=offset, event_type="TABLE_MAP_EVENT",
            )
        raw = cur.take(info.meta_len, f"field metadata of column {i + 1}")
        metas.append(int.from_bytes(raw, "big" if info.meta_order == "be" else "little"))
    for i, (t, m) in enumerate(zip(types, metas)):
        problem = _check_metadata(t, m, flavor)
        if problem:
            raise MalformedEventError(
                f"column {i + 1} of {table}: {problem}", path=path, offset=offset, event_type="TABLE_MAP_EVENT"
            )
    if cur.pos - meta_start != meta_len:
        cur.pos = meta_start
        raise cur.error(
            f"field metadata block says {meta_len} bytes, the column types need {sum(FIELD_METADATA_LEN.get(t, 0) for t in types)}"
        )
    return metas


def _optional_tlvs(cur: Cursor, body_end: int) -> tuple[list[tuple[int, bytes]], list[int]]:
    """The optional metadata TLVs up to the body's end, and where each value starts."""
    tlvs: list[tuple[int, bytes]] = []
    tlv_starts: list[int] = []
    while cur.pos < body_end:
        kind = cur.u8("optional metadata type")
        length = cur.packed("optional metadata length")
        tlv_starts.append(cur.pos)
        tlvs.append((kind, cur.take(length, f"optional metadata {kind} value")))
    return tlvs, tlv_starts


def _apply_optional(cols: list[dict], tlvs: list[tuple[int, bytes]], tlv_starts: list[int], flavor: str,
                    server_major: int, path: str | None) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """Set what each optional metadata TLV says on the columns (``cols``, ColumnSpec fields);
    returns the primary key and its prefixes. Unknown TLV types are kept raw only."""
    ncols = len(cols)
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
    return primary_key, prefixes


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
    metas = _field_metadata(cur, types, f"{db}.{tbl}", flavor, path, offset)
    null_bits = cur.take((ncols + 7) // 8, "null bitmap")
    nullable = [bool(null_bits[i // 8] & (1 << (i % 8))) for i in range(ncols)]

    tlvs, tlv_starts = _optional_tlvs(cur, body_end)
    cols = [dict(index=i, type=t, meta=m, nullable=nullable[i]) for i, (t, m) in enumerate(zip(types, metas))]
    primary_key, prefixes = _apply_optional(cols, tlvs, tlv_starts, flavor, server_major, path)
    if primary_key is not None and any(k >= ncols for k in primary_key):
        raise cur.error(f"primary key names column {max(primary_key) + 1} of a {ncols}-column table")
    columns = tuple(ColumnSpec(**c) for c in cols)
    return table_id, TableMap(
        database=db, table=tbl, flags=flags, columns=columns, primary_key=primary_key,
        primary_key_prefixes=prefixes, optional_metadata=tuple(tlvs),
    )
