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
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..binlog.spec import Cursor, table_id_width
from ..constants import ColumnType as T
from ..constants import OptionalMetadataType as M
from ..constants import column_type_name
from ..errors import MalformedEventError, UnsupportedError
from .types import CHARACTER_TYPES_BASE, ENUM_SET_TYPES, FIELD_METADATA_LEN, NUMERIC_TYPES, type_info

if TYPE_CHECKING:
    import numpy as np

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
        need = sum(FIELD_METADATA_LEN.get(t, 0) for t in types)
        raise cur.error(f"field metadata block says {meta_len} bytes, the column types need {need}")
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


@dataclass
class _Optional:
    """The columns each optional-metadata field speaks of (indexes into the table's columns,
    by the type each field counts), and the primary key once a field gives it."""

    cols: list[dict]  #: the ColumnSpec fields of each column, filled in by the fields
    numeric: list[int]
    enum_set: list[int]
    enums: list[int]
    sets: list[int]
    geoms: list[int]
    vectors: list[int]
    base_chars: list[int]
    with_geom: list[int]
    with_vec: list[int]
    default_chars: list[int]  #: the character columns the writer's charset fields count
    primary_key: tuple[int, ...] | None = None
    prefixes: tuple[int, ...] | None = None

    @classmethod
    def of(cls, cols: list[dict], flavor: str, server_major: int) -> _Optional:
        real = [ColumnSpec(**c).real_type for c in cols]

        def where(test: Callable[[int], bool]) -> list[int]:
            return [i for i, t in enumerate(real) if test(t)]

        base_chars = where(lambda t: t in CHARACTER_TYPES_BASE)
        geoms, vectors = where(lambda t: t == T.MYSQL_TYPE_GEOMETRY), where(lambda t: t == T.MYSQL_TYPE_VECTOR)
        with_geom, with_vec = sorted(base_chars + geoms), sorted(base_chars + vectors)
        # MySQL 9 counts VECTOR columns among the character columns of its charset fields, not GEOMETRY ones
        default_chars = with_vec if (flavor == "mysql" and server_major >= 9) else with_geom
        return cls(cols, where(lambda t: t in NUMERIC_TYPES), where(lambda t: t in ENUM_SET_TYPES),
                   where(lambda t: t == T.MYSQL_TYPE_ENUM), where(lambda t: t == T.MYSQL_TYPE_SET), geoms, vectors,
                   base_chars, with_geom, with_vec, default_chars)

    def set(self, targets: list[int], key: str, values: Iterable[Any]) -> None:
        for i, v in zip(targets, values):
            self.cols[i][key] = v


def _packed_list(vcur: Cursor, what: str) -> list[int]:
    """Packed integers up to the end of the field."""
    out = []
    while vcur.pos < vcur.end:
        out.append(vcur.packed(what))
    return out


def _signedness(o: _Optional, vcur: Cursor, value: bytes) -> None:
    if len(value) * 8 < len(o.numeric):
        raise vcur.error(f"SIGNEDNESS has {len(value) * 8} bits for {len(o.numeric)} numeric columns")
    o.set(o.numeric, "unsigned", _msb_bits(value, len(o.numeric)))


def _default_charset(o: _Optional, vcur: Cursor, value: bytes) -> None:
    o.set(o.default_chars, "collation", _charsets(vcur, len(value), True, len(o.default_chars)))


def _column_charset(o: _Optional, vcur: Cursor, value: bytes) -> None:
    colls = _charsets(vcur, len(value), False, 0)
    # The number of collations tells which columns the writer counted.
    targets = next((c for c in (o.default_chars, o.with_geom, o.with_vec, o.base_chars) if len(c) == len(colls)), None)
    if targets is None:
        raise vcur.error(f"COLUMN_CHARSET has {len(colls)} collations for {len(o.default_chars)} character columns")
    o.set(targets, "collation", colls)


def _enum_set_charset(default: bool) -> Callable[[_Optional, Cursor, bytes], None]:
    def apply(o: _Optional, vcur: Cursor, value: bytes) -> None:
        colls = _charsets(vcur, len(value), default, len(o.enum_set))
        if len(colls) != len(o.enum_set):
            raise vcur.error(f"ENUM/SET charset list has {len(colls)} entries for {len(o.enum_set)} columns")
        o.set(o.enum_set, "collation", colls)
    return apply


def _column_name(o: _Optional, vcur: Cursor, value: bytes) -> None:
    names = _names(vcur, len(value))
    if len(names) != len(o.cols):
        raise vcur.error(f"COLUMN_NAME has {len(names)} names for {len(o.cols)} columns")
    o.set(list(range(len(o.cols))), "name", names)


def _labels(kind: M, key: str) -> Callable[[_Optional, Cursor, bytes], None]:
    def apply(o: _Optional, vcur: Cursor, value: bytes) -> None:
        targets = o.enums if kind == M.ENUM_STR_VALUE else o.sets
        values = _str_values(vcur, len(value))
        if len(values) != len(targets):
            raise vcur.error(f"{kind.name} has labels for {len(values)} columns, the table has {len(targets)}")
        o.set(targets, key, values)
    return apply


def _geometry_type(o: _Optional, vcur: Cursor, value: bytes) -> None:
    o.set(o.geoms, "geometry_type", _packed_list(vcur, "geometry type"))


def _simple_primary_key(o: _Optional, vcur: Cursor, value: bytes) -> None:
    keys = _packed_list(vcur, "primary key column")
    o.primary_key, o.prefixes = tuple(keys), tuple(0 for _ in keys)


def _primary_key_with_prefix(o: _Optional, vcur: Cursor, value: bytes) -> None:
    keys, pre = [], []
    while vcur.pos < vcur.end:
        keys.append(vcur.packed("primary key column"))
        pre.append(vcur.packed("primary key prefix"))
    o.primary_key, o.prefixes = tuple(keys), tuple(pre)


def _column_visibility(o: _Optional, vcur: Cursor, value: bytes) -> None:
    if len(value) * 8 < len(o.cols):
        raise vcur.error(f"COLUMN_VISIBILITY has {len(value) * 8} bits for {len(o.cols)} columns")
    o.set(list(range(len(o.cols))), "visible", _msb_bits(value, len(o.cols)))


def _vector_dimensionality(o: _Optional, vcur: Cursor, value: bytes) -> None:
    dims = []
    while vcur.pos < vcur.end:
        dims.append(vcur.packed("vector dimensionality"))
        if not 1 <= dims[-1] <= VECTOR_MAX_DIMENSIONALITY:
            raise vcur.error(f"VECTOR dimensionality {dims[-1]} (at most {VECTOR_MAX_DIMENSIONALITY})")
    o.set(o.vectors, "vector_dimensionality", dims)


#: optional metadata field (TLV type) -> what it sets on the columns (rows_event.h,
#: Table_map_event::Optional_metadata_field_type); other types are kept raw only
_OPTIONAL_FIELDS: dict[int, Callable[[_Optional, Cursor, bytes], None]] = {
    M.SIGNEDNESS: _signedness,
    M.DEFAULT_CHARSET: _default_charset,
    M.COLUMN_CHARSET: _column_charset,
    M.ENUM_AND_SET_DEFAULT_CHARSET: _enum_set_charset(True),
    M.ENUM_AND_SET_COLUMN_CHARSET: _enum_set_charset(False),
    M.COLUMN_NAME: _column_name,
    M.ENUM_STR_VALUE: _labels(M.ENUM_STR_VALUE, "enum_values"),
    M.SET_STR_VALUE: _labels(M.SET_STR_VALUE, "set_values"),
    M.GEOMETRY_TYPE: _geometry_type,
    M.SIMPLE_PRIMARY_KEY: _simple_primary_key,
    M.PRIMARY_KEY_WITH_PREFIX: _primary_key_with_prefix,
    M.COLUMN_VISIBILITY: _column_visibility,
    M.VECTOR_DIMENSIONALITY: _vector_dimensionality,
}


def _apply_optional(cols: list[dict], tlvs: list[tuple[int, bytes]], tlv_starts: list[int], flavor: str,
                    server_major: int, path: str | None) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """Set what each optional metadata TLV says on the columns (``cols``, ColumnSpec fields);
    returns the primary key and its prefixes. Unknown TLV types are kept raw only."""
    o = _Optional.of(cols, flavor, server_major)
    for (kind, value), vstart in zip(tlvs, tlv_starts):
        apply = _OPTIONAL_FIELDS.get(kind)
        if apply is not None:
            apply(o, Cursor(value, 0, len(value), base=vstart, path=path, event_type="TABLE_MAP_EVENT"), value)
    return o.primary_key, o.prefixes


def parse_table_map(
    buf: np.ndarray | bytes, offset: int, body_start: int, body_end: int, post_header_len: int, *, path: str | None = None,
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
    cols: list[dict[str, Any]] = [dict(index=i, type=t, meta=m, nullable=nullable[i]) for i, (t, m) in enumerate(zip(types, metas))]
    primary_key, prefixes = _apply_optional(cols, tlvs, tlv_starts, flavor, server_major, path)
    if primary_key is not None and any(k >= ncols for k in primary_key):
        raise cur.error(f"primary key names column {max(primary_key) + 1} of a {ncols}-column table")
    columns = tuple(ColumnSpec(**c) for c in cols)
    return table_id, TableMap(
        database=db, table=tbl, flags=flags, columns=columns, primary_key=primary_key,
        primary_key_prefixes=prefixes, optional_metadata=tuple(tlvs),
    )
