"""What a column definition means: the servers' type names and synonyms, the character set a
text column gets, and the columns a server adds by itself.

Both readers of DDL (sqlglot's tree in :mod:`.tree`, the tolerant token reader in
:mod:`.scan`) turn a column definition into a :class:`ColumnDecl`, what the statement
wrote; :func:`column_info` resolves it, against the table's default character set, into the
:class:`ColumnInfo` that decoding uses, as the server does when the column is defined. So a
column means the same whichever reader read it.

The columns a server adds that no statement names:

* MariaDB's ``WITH SYSTEM VERSIONING`` without explicit period columns: ``row_start`` and
  ``row_end``, ``TIMESTAMP(6)``, after every other column (``Vers_parse_info::default_start``
  and ``default_end`` in sql/handler.cc); hidden from ``information_schema.COLUMNS``, but in
  the TABLE_MAP and every row image;
* MariaDB's ``CREATE SEQUENCE``: the eight columns of ``sequence_structure`` in
  sql/sql_sequence.cc (the first four of the sequence's ``AS`` type since 11.5);
* MySQL's functional key parts (``INDEX i ((a + 1))``, 8.0.13+): one hidden virtual column
  per part, ``!hidden!<index>!<part>!<n>`` (``make_functional_index_column_name`` in
  sql/sql_table.cc), in the row images of 8.0.13-8.0.17 only (later servers leave them out;
  mysql-test ``rpl_unfiltered_hidden_gcol``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...collations import (
    CHARSET_ALIASES,
    UNMAPPED,
    charset_for,
    codec_for,
    collation_id,
    decode_table_for,
    decode_text,
)
from ...errors import VecbinlogError

__all__ = [
    "ROW_END",
    "ROW_START",
    "TEXT_TYPES",
    "TYPE_WORDS",
    "ColumnDecl",
    "ColumnInfo",
    "DdlError",
    "charset_name",
    "charset_of_collation",
    "column_info",
    "convert_column",
    "functional_column",
    "sequence_decls",
    "versioning_columns",
]


class DdlError(VecbinlogError, ValueError):
    """A DDL statement that could not be parsed or interpreted.

    ``table`` is the ``db.table`` it names when that much could be read (it is then
    forgotten), else None.
    """

    def __init__(self, message: str, table: str | None = None) -> None:
        super().__init__(message)
        self.table = table


@dataclass(frozen=True)
class ColumnInfo:
    """One column as the DDL (or a user schema) defines it."""

    name: str
    type: str | None = None  #: the server's DATA_TYPE, upper case ("INT", "VARCHAR", "JSON"...); None: not known
    unsigned: bool | None = None
    charset: str | None = None  #: resolved: the column's, else the table's, else the database's
    collation: str | None = None
    enum_values: tuple[str, ...] | None = None
    set_values: tuple[str, ...] | None = None
    generated: str | None = None  #: VIRTUAL, STORED, ROW START or ROW END
    implicit: bool = False  #: added by the server (row_start/row_end): new columns go before it
    hidden: bool = False  #: MySQL's functional key part: in the row images of some servers only
    invisible: bool = False  #: INVISIBLE (or implicit): not in a ``SELECT *``, but in the row images


@dataclass(frozen=True)
class ColumnDecl:
    """A column definition as a statement writes it, before the table's defaults apply."""

    name: str
    type: str | None  #: a value of :data:`TYPE_WORDS`; None: a type not known here (a plugin's)
    unsigned: bool = False  #: UNSIGNED, ZEROFILL or SERIAL
    charset: str | None = None
    collation: str | None = None
    binary: bool = False  #: the BINARY attribute: the charset's binary collation
    national: bool = False  #: NCHAR, NATIONAL CHAR...: utf8mb3
    labels: tuple[str | bytes, ...] | None = None  #: ENUM/SET members: text, or bytes in the column's charset
    labels_text: str | None = None  #: the type's text, when its members are not all understood
    length: int | None = None  #: the one number in parentheses: TEXT(n), BLOB(n), FLOAT(p)
    generated: str | None = None  #: VIRTUAL, STORED, ROW START or ROW END
    versioning: bool | None = None  #: WITH (True) or WITHOUT (False) SYSTEM VERSIONING on the column
    primary_key: bool = False
    invisible: bool = False


#: A type's (first) word -> the type it names: the server's DATA_TYPE, upper case (MariaDB's
#: sql_yacc.yy field_type rules, MySQL's type rules: INTEGER, INT1-INT8, MIDDLEINT, BOOL,
#: REAL, FLOAT4/8, DEC, NUMERIC, FIXED, LONG...). NCHAR, NATIONAL, DOUBLE PRECISION, CHAR
#: VARYING, LONG VARBINARY and the like are read by the readers around these words.
TYPE_WORDS: dict[str, str] = {
    "TINYINT": "TINYINT", "INT1": "TINYINT", "BOOL": "TINYINT", "BOOLEAN": "TINYINT",
    "SMALLINT": "SMALLINT", "INT2": "SMALLINT", "MEDIUMINT": "MEDIUMINT", "INT3": "MEDIUMINT",
    "MIDDLEINT": "MEDIUMINT", "INT": "INT", "INTEGER": "INT", "INT4": "INT", "BIGINT": "BIGINT",
    "INT8": "BIGINT", "SERIAL": "BIGINT",
    "FLOAT": "FLOAT", "FLOAT4": "FLOAT", "DOUBLE": "DOUBLE", "REAL": "DOUBLE", "FLOAT8": "DOUBLE",
    "DECIMAL": "DECIMAL", "DEC": "DECIMAL", "NUMERIC": "DECIMAL", "FIXED": "DECIMAL", "NUMBER": "DECIMAL",
    "BIT": "BIT", "DATE": "DATE", "TIME": "TIME", "DATETIME": "DATETIME", "TIMESTAMP": "TIMESTAMP",
    "YEAR": "YEAR",
    "CHAR": "CHAR", "CHARACTER": "CHAR", "NCHAR": "CHAR", "VARCHAR": "VARCHAR", "VARCHARACTER": "VARCHAR",
    "VARCHAR2": "VARCHAR", "NVARCHAR": "VARCHAR", "BINARY": "BINARY", "VARBINARY": "VARBINARY",
    "RAW": "VARBINARY",
    "TINYTEXT": "TINYTEXT", "TEXT": "TEXT", "MEDIUMTEXT": "MEDIUMTEXT", "LONGTEXT": "LONGTEXT",
    "LONG": "MEDIUMTEXT", "CLOB": "LONGTEXT",
    "TINYBLOB": "TINYBLOB", "BLOB": "BLOB", "MEDIUMBLOB": "MEDIUMBLOB", "LONGBLOB": "LONGBLOB",
    "JSON": "JSON", "ENUM": "ENUM", "SET": "SET",
    "GEOMETRY": "GEOMETRY", "POINT": "POINT", "LINESTRING": "LINESTRING", "POLYGON": "POLYGON",
    "MULTIPOINT": "MULTIPOINT", "MULTILINESTRING": "MULTILINESTRING", "MULTIPOLYGON": "MULTIPOLYGON",
    "GEOMETRYCOLLECTION": "GEOMETRYCOLLECTION", "GEOMCOLLECTION": "GEOMCOLLECTION",
    "INET4": "INET4", "INET6": "INET6", "UUID": "UUID", "VECTOR": "VECTOR",
}
#: Types whose values are text in a character set.
TEXT_TYPES = frozenset({"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET"})
_NUMERIC = frozenset({"TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"})
#: Types whose values have no character set (collation ``binary``).
_BINARY_TYPES = frozenset({
    "BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "INET4", "INET6", "UUID", "GEOMETRY",
    "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION",
    "GEOMCOLLECTION",
})
#: A text type and the type it is with the ``binary`` character set (``CHAR(3) BYTE`` is BINARY(3)).
_AS_BINARY = {"CHAR": "BINARY", "VARCHAR": "VARBINARY", "TINYTEXT": "TINYBLOB", "TEXT": "BLOB",
              "MEDIUMTEXT": "MEDIUMBLOB", "LONGTEXT": "LONGBLOB"}
#: The TEXT and BLOB types by the bytes they hold (the smallest that holds ``TEXT(n)`` is
#: chosen, and ``CONVERT TO CHARACTER SET`` moves a text column up as its bytes grow).
_LOB_SIZES = (("TINYTEXT", "TINYBLOB", 255), ("TEXT", "BLOB", 65535), ("MEDIUMTEXT", "MEDIUMBLOB", 16777215),
              ("LONGTEXT", "LONGBLOB", 4294967295))
_TEXT_BYTES = {text: size for text, _, size in _LOB_SIZES}
#: Bytes per character at most (mbmaxlen in strings/ctype-*.c); every other charset: 1.
_MBMAXLEN = {"big5": 2, "cp932": 2, "eucjpms": 3, "euckr": 2, "gb2312": 2, "gbk": 2, "gb18030": 4, "sjis": 2,
             "ucs2": 2, "ujis": 3, "utf16": 4, "utf16le": 4, "utf32": 4, "utf8mb3": 3, "utf8mb4": 4}

#: The names MariaDB gives the implicit period columns of WITH SYSTEM VERSIONING.
ROW_START, ROW_END = "row_start", "row_end"


def charset_name(name: str | None) -> str | None:
    """A character set's name as the server reports it (``utf8`` is ``utf8mb3``); DEFAULT: None."""
    if name is None or name.upper() == "DEFAULT":
        return None
    low = name.lower()
    return CHARSET_ALIASES.get(low, low)


def _collation_name(name: str | None) -> str | None:
    if name is None or name.upper() == "DEFAULT":
        return None
    low = name.lower()
    prefix, sep, rest = low.partition("_")
    return f"{CHARSET_ALIASES.get(prefix, prefix)}{sep}{rest}"


def charset_of_collation(collation: str) -> str | None:
    """The character set of a collation named in SQL (``latin1_bin`` -> latin1), or None."""
    if collation.lower() == "binary":
        return "binary"
    for flavor in ("mariadb", "mysql"):
        cid = collation_id(collation, None, flavor)
        if cid is not None:
            found = charset_for(cid, flavor)
            if found is not None:
                return found
    return None


def _lob(text_type: bool, nbytes: int) -> str:
    """The smallest TEXT (or BLOB) type that holds ``nbytes``."""
    for text, blob, size in _LOB_SIZES:
        if nbytes <= size:
            return text if text_type else blob
    return "LONGTEXT" if text_type else "LONGBLOB"


def _mbmaxlen(charset: str | None) -> int:
    return _MBMAXLEN.get(charset or "", 1)


def column_info(decl: ColumnDecl, table_charset: str | None, table_collation: str | None,
                notes: list[str]) -> ColumnInfo:
    """The column ``decl`` defines in a table of that default charset and collation; what is
    not understood in it (ENUM/SET members) is said in ``notes``."""
    tname = decl.type
    charset, collation = charset_name(decl.charset), _collation_name(decl.collation)
    if tname in TEXT_TYPES:
        if decl.national and charset is None:
            charset = "utf8mb3"
        if charset is None and collation is None:
            charset, collation = charset_name(table_charset), _collation_name(table_collation)
        if charset is None and collation is not None:
            charset = charset_of_collation(collation)
        if decl.binary and charset is not None and collation is None and charset != "binary":
            collation = f"{charset}_bin"
        if tname == "TEXT" and decl.length is not None:
            tname = _lob(True, decl.length * _mbmaxlen(charset))
        if charset == "binary" and tname in _AS_BINARY:
            tname, collation = _AS_BINARY[tname], None
    elif tname == "JSON":  # MariaDB: LONGTEXT CHARSET utf8mb4 COLLATE utf8mb4_bin (MySQL: binary JSON)
        charset, collation = "utf8mb4", "utf8mb4_bin"
    elif tname in _BINARY_TYPES:
        if tname == "BLOB" and decl.length is not None:
            tname = _lob(False, decl.length)
        charset, collation = "binary", None
    else:
        charset = collation = None
        if tname == "FLOAT" and decl.length is not None and decl.length > 24:
            tname = "DOUBLE"  # FLOAT(p) with 25 <= p <= 53 is a DOUBLE
    enum_values = set_values = None
    if tname in ("ENUM", "SET"):
        labels = _labels(decl.labels, charset)
        if labels is None:
            notes.append(f"the {tname} members of column {decl.name!r} are not all understood: "
                         f"{(decl.labels_text or '')[:80]!r}; its values are read as their {tname} numbers")
        enum_values, set_values = (labels, None) if tname == "ENUM" else (None, labels)
    unsigned = decl.unsigned and tname in _NUMERIC
    return ColumnInfo(decl.name, tname, unsigned, charset, collation, enum_values, set_values, decl.generated,
                      invisible=decl.invisible)


def _labels(labels: tuple[str | bytes, ...] | None, charset: str | None) -> tuple[str, ...] | None:
    """ENUM/SET members as text: bytes (``0x41``, ``b'01000001'``) are the member in the
    column's character set (Item_hex_string and Item_bin_string in sql/item.cc)."""
    if labels is None:
        return None
    out = []
    for label in labels:
        if isinstance(label, bytes):
            try:
                label = decode_text(label, charset or "utf8mb4")
            except (UnicodeDecodeError, LookupError):
                return None
        out.append(label)
    return tuple(out)


def convert_column(c: ColumnInfo, charset: str | None, collation: str | None) -> ColumnInfo:
    """Column ``c`` after ``ALTER TABLE ... CONVERT TO CHARACTER SET charset``: every text
    column (JSON too, in MariaDB) takes the charset, and a TEXT type too small for its
    characters in the new charset's bytes becomes the next larger one (MariaDB 10.11: a latin1
    TEXT converted to utf8mb4 is a MEDIUMTEXT; CHAR and VARCHAR keep their type). ``charset``
    None: not known (the database's default, the database created before the log)."""
    if c.type not in TEXT_TYPES and c.type != "JSON":
        return c
    if c.charset == "binary":
        return c
    tname = c.type
    if tname in _TEXT_BYTES:
        chars = _TEXT_BYTES[tname] // _mbmaxlen(c.charset)
        tname = max(tname, _lob(True, chars * _mbmaxlen(charset)), key=lambda t: _TEXT_BYTES[t])
    if charset == "binary":
        tname, collation = _AS_BINARY.get(tname, tname), None
    enum_values, set_values = (tuple(_reinterpret(v, c.charset, charset) for v in labels) if labels else labels
                               for labels in (c.enum_values, c.set_values))
    return replace(c, type=tname, charset=charset, collation=collation, enum_values=enum_values,
                   set_values=set_values)


def _reinterpret(label: str, old: str | None, new: str | None) -> str:
    """An ENUM/SET member after CONVERT TO: MariaDB 10.11 keeps the member's bytes and reads
    them in the new charset (utf8mb4 ``'é'`` becomes latin1 ``'Ã©'``; latin1 ``'é'``, not
    UTF-8, becomes ``'?'``); the member unchanged where a charset is not known here."""
    if old is None or new is None or old == new:
        return label
    try:
        codec = codec_for(old)
        if codec is not None:
            raw = label.encode(codec)
        else:
            table = decode_table_for(old) or ""
            raw = bytes(table.index(ch) for ch in label)
        text = decode_text(raw, new, errors="replace")
    except (LookupError, ValueError, UnicodeError):
        return label
    return text.replace("\ufffd", "?").replace(UNMAPPED, "?")


def versioning_columns() -> tuple[ColumnInfo, ColumnInfo]:
    """MariaDB's implicit ``row_start`` and ``row_end`` of ``WITH SYSTEM VERSIONING``."""
    return (ColumnInfo(ROW_START, "TIMESTAMP", False, generated="ROW START", implicit=True, invisible=True),
            ColumnInfo(ROW_END, "TIMESTAMP", False, generated="ROW END", implicit=True, invisible=True))


#: The columns of a SEQUENCE table: (name, type, unsigned); None: the sequence's value type
#: (sequence_structure in MariaDB's sql/sql_sequence.cc).
_SEQUENCE = (("next_not_cached_value", None, None), ("minimum_value", None, None), ("maximum_value", None, None),
             ("start_value", None, None), ("increment", "BIGINT", False), ("cache_size", "BIGINT", True),
             ("cycle_option", "TINYINT", True), ("cycle_count", "BIGINT", False))


def sequence_decls(value_type: str = "BIGINT", unsigned: bool = False) -> tuple[ColumnDecl, ...]:
    """The columns MariaDB gives a sequence whose values are ``value_type`` (``AS TINYINT
    UNSIGNED``..., 11.5+; BIGINT before)."""
    return tuple(ColumnDecl(name, t or value_type, unsigned if u is None else u) for name, t, u in _SEQUENCE)


def functional_column(index: str, part: int, taken: set[str]) -> ColumnInfo:
    """MySQL's hidden column for key part ``part`` of functional index ``index``: the first free
    ``!hidden!<index>!<part>!<n>``; its type is the expression's, which only the TABLE_MAP says."""
    n = 0
    while f"!hidden!{index}!{part}!{n}".lower() in taken:
        n += 1
    return ColumnInfo(f"!hidden!{index}!{part}!{n}", generated="VIRTUAL", hidden=True, invisible=True)
