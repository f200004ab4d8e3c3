"""A deliberately simple, row-at-a-time reference decoder for MySQL/MariaDB binlogs.

It exists only to check the fast (vectorised) decoder against.  It is written
from the format descriptions in the MySQL / MariaDB server sources
(``libs/mysql/binlog/event/{binlog_event.h,control_events.cpp,rows_event.cpp,
binary_log_funcs.cpp}``, ``sql/rpl_utility.cc`` and, for MariaDB,
``sql/log_event.cc`` / ``sql/log_event_client.cc``), never from the code in
``vecbinlog/``.  Clarity wins over speed everywhere: one ``struct.unpack_from``
per field, one Python loop per event, row and column.

Entry points
------------
``decode_file(path, strict=True)`` / ``decode_bytes(data, strict=True)``
                                -> :class:`RefBinlog` (events, formats,
                                   table_maps, rows_events, stop, CRC results)
``decode_event(buf, fmt, pos, table_maps)``  one stand-alone event buffer
``RefFormat.synthetic()``       a v4 format (MySQL >= 5.6 defaults) for that
``walk_events(data)``           the lenient header walk: every complete event's
                                   (offset, size, type), where and why it stopped
``format_of(data)``             the file's first FORMAT_DESCRIPTION_EVENT
``read_table_map(data, fmt, e)`` / ``read_rows_header(data, fmt, e)``
                                one event's structure with absolute offsets (what
                                the fuzz tests mutate), no row image decoded
``value_storage(type, meta)``   how a value is stored: ("fixed", n) / ("prefixed", n)
``read_packed(buf, pos)``       a packed integer: (value, position after it)
``decode_int(raw, signed)``, ``decode_float(raw)``, and for tests that want
values: ``decode_decimal``, ``decode_timestamp2``, ``decode_datetime2``,
``decode_time2`` (checked against mariadb-binlog's output).

Scope: v4 binlogs (FDE, CRC32), TABLE_MAP, rows events v1 (23-25) and v2
(30-32), PARTIAL_UPDATE_ROWS (39; its JSON diffs as :class:`PartialJson`),
pre-GA rows events (20-22: header and bitmap only), and the events
inside TRANSACTION_PAYLOAD (40; zstd, via pyarrow's codec): those are in
``RefBinlog.payload_events`` and their TABLE_MAPs / rows events in
``table_maps`` / ``rows_events`` with ``pos`` = the payload event's offset and
``inner`` = their offset inside the payload.  Not decoded: MariaDB compressed
events; they are listed in
``RefBinlog.skipped_rows_events``.

Row images are lists over *all* table columns of ``ABSENT`` (column not in the
image), ``None`` (SQL NULL) or the raw ``bytes`` of the value exactly as stored
in the event, with the length prefix of variable-length types removed; a JSON
value of a PARTIAL_UPDATE_ROWS after image whose partial bit is set is a
:class:`PartialJson` (its diffs, read by ``read_json_diffs``).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = [
    "ABSENT",
    "PartialJson",
    "read_json_diffs",
    "RefDecodeError",
    "RefEvent",
    "RefFormat",
    "RefTableMap",
    "RefRowsEvent",
    "RefStop",
    "RefBinlog",
    "EventBounds",
    "RefRowsHeader",
    "walk_events",
    "format_of",
    "read_table_map",
    "read_rows_header",
    "value_storage",
    "read_packed",
    "decode_file",
    "decode_bytes",
    "decode_event",
    "decode_int",
    "decode_float",
    "decode_decimal",
    "decode_timestamp2",
    "decode_datetime2",
    "decode_time2",
    "value_size",
    "EVENT_TYPE_NAMES",
    "COLUMN_TYPE_NAMES",
    "OPTIONAL_METADATA_NAMES",
]

BINLOG_MAGIC = b"\xfebin"
COMMON_HEADER_LEN = 19  # LOG_EVENT_MINIMAL_HEADER_LEN (binlog v4)
CHECKSUM_LEN = 4
LOG_EVENT_BINLOG_IN_USE_F = 0x1

# --------------------------------------------------------------------------
# event types (binlog_event.h Log_event_type, plus MariaDB's 160..)
# --------------------------------------------------------------------------
UNKNOWN_EVENT = 0
START_EVENT_V3 = 1
QUERY_EVENT = 2
STOP_EVENT = 3
ROTATE_EVENT = 4
INTVAR_EVENT = 5
LOAD_EVENT = 6
SLAVE_EVENT = 7
CREATE_FILE_EVENT = 8
APPEND_BLOCK_EVENT = 9
EXEC_LOAD_EVENT = 10
DELETE_FILE_EVENT = 11
NEW_LOAD_EVENT = 12
RAND_EVENT = 13
USER_VAR_EVENT = 14
FORMAT_DESCRIPTION_EVENT = 15
XID_EVENT = 16
BEGIN_LOAD_QUERY_EVENT = 17
EXECUTE_LOAD_QUERY_EVENT = 18
TABLE_MAP_EVENT = 19
PRE_GA_WRITE_ROWS_EVENT = 20
PRE_GA_UPDATE_ROWS_EVENT = 21
PRE_GA_DELETE_ROWS_EVENT = 22
WRITE_ROWS_EVENT_V1 = 23
UPDATE_ROWS_EVENT_V1 = 24
DELETE_ROWS_EVENT_V1 = 25
INCIDENT_EVENT = 26
HEARTBEAT_LOG_EVENT = 27
IGNORABLE_LOG_EVENT = 28
ROWS_QUERY_LOG_EVENT = 29
WRITE_ROWS_EVENT = 30
UPDATE_ROWS_EVENT = 31
DELETE_ROWS_EVENT = 32
GTID_LOG_EVENT = 33
ANONYMOUS_GTID_LOG_EVENT = 34
PREVIOUS_GTIDS_LOG_EVENT = 35
TRANSACTION_CONTEXT_EVENT = 36
VIEW_CHANGE_EVENT = 37
XA_PREPARE_LOG_EVENT = 38
PARTIAL_UPDATE_ROWS_EVENT = 39
TRANSACTION_PAYLOAD_EVENT = 40
HEARTBEAT_LOG_EVENT_V2 = 41
GTID_TAGGED_LOG_EVENT = 42

EVENT_TYPE_NAMES = {
    0: "UNKNOWN", 1: "START_V3", 2: "QUERY", 3: "STOP", 4: "ROTATE", 5: "INTVAR",
    6: "LOAD", 7: "SLAVE", 8: "CREATE_FILE", 9: "APPEND_BLOCK", 10: "EXEC_LOAD",
    11: "DELETE_FILE", 12: "NEW_LOAD", 13: "RAND", 14: "USER_VAR", 15: "FDE",
    16: "XID", 17: "BEGIN_LOAD_QUERY", 18: "EXECUTE_LOAD_QUERY", 19: "TABLE_MAP",
    20: "PRE_GA_WRITE_ROWS", 21: "PRE_GA_UPDATE_ROWS", 22: "PRE_GA_DELETE_ROWS",
    23: "WRITE_ROWS_V1", 24: "UPDATE_ROWS_V1", 25: "DELETE_ROWS_V1", 26: "INCIDENT",
    27: "HEARTBEAT", 28: "IGNORABLE", 29: "ROWS_QUERY", 30: "WRITE_ROWS_V2",
    31: "UPDATE_ROWS_V2", 32: "DELETE_ROWS_V2", 33: "GTID", 34: "ANONYMOUS_GTID",
    35: "PREVIOUS_GTIDS", 36: "TRANSACTION_CONTEXT", 37: "VIEW_CHANGE",
    38: "XA_PREPARE", 39: "PARTIAL_UPDATE_ROWS", 40: "TRANSACTION_PAYLOAD",
    41: "HEARTBEAT_V2", 42: "GTID_TAGGED",
    160: "MARIA_ANNOTATE_ROWS", 161: "MARIA_BINLOG_CHECKPOINT", 162: "MARIA_GTID",
    163: "MARIA_GTID_LIST", 164: "MARIA_START_ENCRYPTION",
}

# kind and format "version" of the rows events this reference decodes
ROWS_EVENTS = {
    PRE_GA_WRITE_ROWS_EVENT: ("insert", 0),
    PRE_GA_UPDATE_ROWS_EVENT: ("update", 0),
    PRE_GA_DELETE_ROWS_EVENT: ("delete", 0),
    WRITE_ROWS_EVENT_V1: ("insert", 1),
    UPDATE_ROWS_EVENT_V1: ("update", 1),
    DELETE_ROWS_EVENT_V1: ("delete", 1),
    WRITE_ROWS_EVENT: ("insert", 2),
    UPDATE_ROWS_EVENT: ("update", 2),
    DELETE_ROWS_EVENT: ("delete", 2),
    PARTIAL_UPDATE_ROWS_EVENT: ("update", 2),
}

# Event-type permutation of the pre-GA "wl2325 / drop5 / drop6" source trees
# (Format_description_event constructor in control_events.cpp): the type byte
# found in the file (index) is to be read as the modern type (value).
_OLD_TREE_PERMUTATION = (
    UNKNOWN_EVENT, START_EVENT_V3, QUERY_EVENT, STOP_EVENT, ROTATE_EVENT,
    INTVAR_EVENT, LOAD_EVENT, SLAVE_EVENT, CREATE_FILE_EVENT,
    APPEND_BLOCK_EVENT, EXEC_LOAD_EVENT, DELETE_FILE_EVENT, NEW_LOAD_EVENT,
    RAND_EVENT, USER_VAR_EVENT, FORMAT_DESCRIPTION_EVENT, TABLE_MAP_EVENT,
    PRE_GA_WRITE_ROWS_EVENT, PRE_GA_UPDATE_ROWS_EVENT, PRE_GA_DELETE_ROWS_EVENT,
    XID_EVENT, BEGIN_LOAD_QUERY_EVENT, EXECUTE_LOAD_QUERY_EVENT,
)

# --------------------------------------------------------------------------
# column types (field_types.h enum_field_types)
# --------------------------------------------------------------------------
T_DECIMAL = 0
T_TINY = 1
T_SHORT = 2
T_LONG = 3
T_FLOAT = 4
T_DOUBLE = 5
T_NULL = 6
T_TIMESTAMP = 7
T_LONGLONG = 8
T_INT24 = 9
T_DATE = 10
T_TIME = 11
T_DATETIME = 12
T_YEAR = 13
T_NEWDATE = 14
T_VARCHAR = 15
T_BIT = 16
T_TIMESTAMP2 = 17
T_DATETIME2 = 18
T_TIME2 = 19
T_TYPED_ARRAY = 20
T_VECTOR = 242
T_JSON = 245
T_NEWDECIMAL = 246
T_ENUM = 247
T_SET = 248
T_TINY_BLOB = 249
T_MEDIUM_BLOB = 250
T_LONG_BLOB = 251
T_BLOB = 252
T_VAR_STRING = 253
T_STRING = 254
T_GEOMETRY = 255

COLUMN_TYPE_NAMES = {
    0: "DECIMAL", 1: "TINY", 2: "SHORT", 3: "LONG", 4: "FLOAT", 5: "DOUBLE",
    6: "NULL", 7: "TIMESTAMP", 8: "LONGLONG", 9: "INT24", 10: "DATE", 11: "TIME",
    12: "DATETIME", 13: "YEAR", 14: "NEWDATE", 15: "VARCHAR", 16: "BIT",
    17: "TIMESTAMP2", 18: "DATETIME2", 19: "TIME2", 20: "TYPED_ARRAY",
    242: "VECTOR", 245: "JSON", 246: "NEWDECIMAL", 247: "ENUM", 248: "SET",
    249: "TINY_BLOB", 250: "MEDIUM_BLOB", 251: "LONG_BLOB", 252: "BLOB",
    253: "VAR_STRING", 254: "STRING", 255: "GEOMETRY",
}

# TABLE_MAP optional metadata field types (rows_event.h Optional_metadata_field_type)
OPT_COLUMN_NAME = 4
OPTIONAL_METADATA_NAMES = {
    1: "SIGNEDNESS", 2: "DEFAULT_CHARSET", 3: "COLUMN_CHARSET", 4: "COLUMN_NAME",
    5: "SET_STR_VALUE", 6: "ENUM_STR_VALUE", 7: "GEOMETRY_TYPE", 8: "SIMPLE_PRIMARY_KEY",
    9: "PRIMARY_KEY_WITH_PREFIX", 10: "ENUM_AND_SET_DEFAULT_CHARSET",
    11: "ENUM_AND_SET_COLUMN_CHARSET", 12: "COLUMN_VISIBILITY", 13: "VECTOR_DIMENSIONALITY",
}


# --------------------------------------------------------------------------
# errors and small records
# --------------------------------------------------------------------------
class RefDecodeError(Exception):
    """Malformed input; ``offset`` is the absolute file offset of the problem."""

    def __init__(self, message: str, offset: int):
        super().__init__(f"{message} (at offset {offset})")
        self.message = message
        self.offset = offset


class _Absent:
    """Sentinel: the column is not part of this row image."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self):
        return (_Absent, ())


ABSENT = _Absent()


@dataclass(frozen=True)
class PartialJson:
    """A JSON diff vector in place of a document (PARTIAL_UPDATE_ROWS after images).

    ``diffs``: (operation byte, path text, binary JSON value or None for REMOVE), in order."""

    raw: bytes
    diffs: tuple[tuple[int, str, bytes | None], ...]


def read_json_diffs(raw: bytes, base: int = 0) -> PartialJson:
    """Json_diff_vector::read_binary (sql/json_diff.cc) over the bytes after the 4-byte
    length: operation byte, packed path length and path, then unless REMOVE (2) a packed
    value length and a binary JSON value; until the bytes end."""
    diffs = []
    off = 0
    while off < len(raw):
        op = raw[off]
        if op > 2:
            raise RefDecodeError(f"JSON diff operation {op}", base + off)
        n, k = _packed_int(raw, off + 1, base, "JSON diff path length")
        off += 1 + k
        _need(raw, off, n, base, "JSON diff path")
        path = raw[off:off + n].decode("utf-8")
        off += n
        value = None
        if op != 2:
            n, k = _packed_int(raw, off, base, "JSON diff value length")
            off += k
            _need(raw, off, n, base, "JSON diff value")
            value = bytes(raw[off:off + n])
            off += n
        diffs.append((op, path, value))
    return PartialJson(bytes(raw), tuple(diffs))


@dataclass(frozen=True)
class RefEvent:
    pos: int              # file offset of the event's first byte
    type: int             # the type byte exactly as stored in the header
    size: int             # event_size from the header (header + body + checksum)
    timestamp: int
    server_id: int
    log_pos: int          # "next position" / end_log_pos from the header
    flags: int
    logical_type: int     # ``type`` after the pre-GA permutation (== type normally)
    crc_stored: int | None = None   # the trailing CRC32, when the event has one
    crc_ok: bool | None = None      # None when the event carries no checksum

    @property
    def name(self) -> str:
        return EVENT_TYPE_NAMES.get(self.logical_type, f"?({self.logical_type})")


@dataclass(frozen=True)
class EventBounds:
    """Where an event is: what the 19-byte header walk alone tells."""

    offset: int
    size: int
    type: int


@dataclass(frozen=True)
class RefFormat:
    """What a FORMAT_DESCRIPTION_EVENT says about the events after it."""

    pos: int
    binlog_version: int
    server_version: str
    create_timestamp: int
    header_length: int
    post_header_len: tuple[int, ...]  # indexed by (logical) type - 1
    checksum_alg: int | None          # None: no alg byte (pre 5.6.1 / MariaDB 5.3)
    permutation: tuple[int, ...] | None = None  # raw type -> logical type

    @property
    def is_mariadb(self) -> bool:
        return "MariaDB" in self.server_version

    @property
    def has_crc32(self) -> bool:
        """Whether the events *after* this FDE end in a CRC32."""
        return self.checksum_alg == 1

    def logical_type(self, raw_type: int) -> int:
        if self.permutation is not None and raw_type < len(self.permutation):
            return self.permutation[raw_type]
        return raw_type

    def post_header(self, logical_type: int) -> int | None:
        if 1 <= logical_type <= len(self.post_header_len):
            return self.post_header_len[logical_type - 1]
        return None

    @classmethod
    def synthetic(cls, checksum_alg: int | None = 1,
                  server_version: str = "8.0.0") -> RefFormat:
        """A format with the standard v4 post-header lengths of MySQL >= 5.6
        (TABLE_MAP 8, rows v1 8, rows v2 10), for decoding stand-alone events."""
        ph = [0] * 42
        ph[QUERY_EVENT - 1] = 13
        ph[ROTATE_EVENT - 1] = 8
        ph[FORMAT_DESCRIPTION_EVENT - 1] = 98
        ph[TABLE_MAP_EVENT - 1] = 8
        for t in (WRITE_ROWS_EVENT_V1, UPDATE_ROWS_EVENT_V1, DELETE_ROWS_EVENT_V1):
            ph[t - 1] = 8
        for t in (WRITE_ROWS_EVENT, UPDATE_ROWS_EVENT, DELETE_ROWS_EVENT,
                  PARTIAL_UPDATE_ROWS_EVENT):
            ph[t - 1] = 10
        return cls(pos=-1, binlog_version=4, server_version=server_version,
                   create_timestamp=0, header_length=COMMON_HEADER_LEN,
                   post_header_len=tuple(ph), checksum_alg=checksum_alg)


@dataclass(frozen=True)
class RefTableMap:
    pos: int
    table_id: int
    flags: int
    db: str
    table: str
    ncols: int
    column_types: tuple[int, ...]   # the type bytes as stored
    real_types: tuple[int, ...]     # STRING resolved to ENUM/SET (and CHAR kept STRING)
    column_meta: tuple[int, ...]    # metadata per column, composed as table_def does
    nullable: tuple[bool, ...]
    optional_metadata: tuple[tuple[int, bytes], ...]
    column_names: tuple[str, ...] | None  # from COLUMN_NAME optional metadata
    field_metadata_raw: bytes = b""
    column_meta_raw: tuple[bytes, ...] = ()  # each column's field metadata bytes
    null_bits: bytes = b""                   # the nullability bitmap as stored
    column_count_at: int = -1     # absolute offset of the packed column count
    column_count_end: int = -1    # and of the byte after it
    event: EventBounds | None = None  # the whole event (read_table_map only)


@dataclass
class RefRowsEvent:
    pos: int
    table_id: int
    db: str
    table: str
    kind: str                     # 'insert' | 'update' | 'delete'
    ncols: int
    present_before: list[bool]    # for insert/delete: the (single) columns bitmap
    present_after: list[bool]     # for update: the second bitmap, else == before
    images: list[list] | None     # None: not decodable (pre-GA record format)
    type: int = 0                 # logical event type
    version: int = 1              # 0 = pre-GA (20-22), 1 = v1, 2 = v2
    flags: int = 0
    extra_data: bytes | None = None  # v2 extra row info (without its length)
    rows_data: bytes = b""        # the raw bytes after the bitmap(s)
    inner: int | None = None      # offset inside a TRANSACTION_PAYLOAD (pos is the payload's)

    @property
    def rows(self) -> list[tuple]:
        """Images grouped per row: (before, after) for updates, (image,) else."""
        if self.images is None:
            return []
        if self.kind == "update":
            return [tuple(self.images[i:i + 2]) for i in range(0, len(self.images), 2)]
        return [(img,) for img in self.images]


@dataclass(frozen=True)
class RefRowsHeader:
    """A rows event up to its first row image, offsets absolute (no TABLE_MAP needed)."""

    event: EventBounds | None
    table_id: int
    table_id_at: int      # where the table id is
    table_id_len: int     # 6, or 4 for a 6-byte post-header
    flags: int
    extra_data: bytes | None   # v2 extra row info (without its length)
    width: int            # the column count
    width_at: int         # where the packed column count is
    width_end: int        # and the byte after it
    present_before: list[bool]
    present_after: list[bool]
    images_at: int        # the first row image
    body_end: int         # end of the rows (before the CRC32)


@dataclass(frozen=True)
class RefStop:
    offset: int       # where the walk stopped
    reason: str
    trailing_bytes: int


@dataclass
class RefBinlog:
    size: int
    events: list[RefEvent] = field(default_factory=list)
    formats: list[RefFormat] = field(default_factory=list)
    table_maps: dict[int, RefTableMap] = field(default_factory=dict)  # by pos
    rows_events: list[RefRowsEvent] = field(default_factory=list)
    skipped_rows_events: list[tuple[int, str]] = field(default_factory=list)
    payload_events: list[tuple[int, int, RefEvent]] = field(default_factory=list)  # (payload pos, inner, event)
    stop: RefStop | None = None
    crc_checked: int = 0
    crc_mismatches: list[int] = field(default_factory=list)  # event positions

    def type_counts(self, logical: bool = False) -> dict[int, int]:
        counts: dict[int, int] = {}
        for ev in self.events:
            t = ev.logical_type if logical else ev.type
            counts[t] = counts.get(t, 0) + 1
        return counts


# --------------------------------------------------------------------------
# primitive readers
# --------------------------------------------------------------------------
def _need(buf: bytes, off: int, n: int, base: int, what: str) -> None:
    if n < 0 or off + n > len(buf):
        raise RefDecodeError(f"{what}: need {n} bytes, {len(buf) - off} left", base + off)


def _uint(buf: bytes, off: int, n: int, base: int = 0, what: str = "uint") -> int:
    _need(buf, off, n, base, what)
    return int.from_bytes(buf[off:off + n], "little")


def _packed_int(buf: bytes, off: int, base: int = 0, what: str = "packed int") -> tuple[int, int]:
    """net_field_length_ll: returns (value, bytes used)."""
    _need(buf, off, 1, base, what)
    first = buf[off]
    if first < 251:
        return first, 1
    if first == 251:  # NULL marker in the protocol; never valid here
        raise RefDecodeError(f"{what}: unexpected 0xfb", base + off)
    if first == 252:
        return _uint(buf, off + 1, 2, base, what), 3
    if first == 253:
        return _uint(buf, off + 1, 3, base, what), 4
    return _uint(buf, off + 1, 8, base, what), 9


def read_packed(buf: bytes, pos: int) -> tuple[int, int]:
    """A packed integer at ``pos``: (value, position after it)."""
    value, used = _packed_int(buf, pos, 0)
    return value, pos + used


def _bits(data: bytes, n: int) -> list[bool]:
    """LSB-first bitmap of n bits."""
    return [bool(data[i // 8] >> (i % 8) & 1) for i in range(n)]


def decode_int(raw: bytes, signed: bool) -> int:
    """Little-endian integer of any width (TINY..LONGLONG, INT24 included)."""
    return int.from_bytes(raw, "little", signed=signed)


def decode_float(raw: bytes) -> float:
    """FLOAT (4 bytes) or DOUBLE (8 bytes), little-endian IEEE 754."""
    if len(raw) == 4:
        return struct.unpack("<f", raw)[0]
    if len(raw) == 8:
        return struct.unpack("<d", raw)[0]
    raise ValueError(f"float value must be 4 or 8 bytes, got {len(raw)}")


def decode_decimal(raw: bytes, precision: int, scale: int) -> str:
    """NEWDECIMAL binary (bin2decimal) -> plain decimal text with exactly
    ``scale`` fraction digits, e.g. '-12.3400' (no leading zeros; '0.50')."""
    if len(raw) != decimal_bin_size(precision, scale):
        raise ValueError("DECIMAL value has the wrong size")
    data = bytearray(raw)
    negative = not data[0] & 0x80
    data[0] ^= 0x80
    if negative:
        data = bytearray(b ^ 0xFF for b in data)
    intg = precision - scale
    groups = []  # (bytes, digits)
    if intg % 9:
        groups.append((_DIG2BYTES[intg % 9], intg % 9))
    groups += [(4, 9)] * (intg // 9)
    int_text = ""
    off = 0
    for nbytes, ndigits in groups:
        int_text += str(int.from_bytes(data[off:off + nbytes], "big")).zfill(ndigits)
        off += nbytes
    frac_text = ""
    for nbytes, ndigits in [(4, 9)] * (scale // 9) + (
            [(_DIG2BYTES[scale % 9], scale % 9)] if scale % 9 else []):
        frac_text += str(int.from_bytes(data[off:off + nbytes], "big")).zfill(ndigits)
        off += nbytes
    text = (int_text.lstrip("0") or "0") + ("." + frac_text if scale else "")
    return ("-" if negative else "") + text


def _fraction_usec(raw: bytes, fsp: int, signed: bool) -> int:
    """Fractional seconds part of TIME2/DATETIME2/TIMESTAMP2 (big-endian)."""
    nbytes = (fsp + 1) // 2
    if nbytes == 0:
        return 0
    value = int.from_bytes(raw[:nbytes], "big", signed=signed)
    return value * {1: 10000, 2: 100, 3: 1}[nbytes]


def decode_timestamp2(raw: bytes, fsp: int) -> tuple[int, int]:
    """TIMESTAMP2 -> (seconds since the epoch, microseconds)."""
    return int.from_bytes(raw[:4], "big"), _fraction_usec(raw[4:], fsp, False)


def decode_datetime2(raw: bytes, fsp: int) -> tuple[int, int, int, int, int, int, int]:
    """DATETIME2 -> (year, month, day, hour, minute, second, microsecond)."""
    intpart = int.from_bytes(raw[:5], "big") - 0x8000000000
    usec = _fraction_usec(raw[5:], fsp, True)
    if intpart < 0:
        raise ValueError("negative DATETIME2")
    ymd, hms = intpart >> 17, intpart % (1 << 17)
    ym = ymd >> 5
    return (ym // 13, ym % 13, ymd % 32, hms >> 12, (hms >> 6) % 64, hms % 64, usec)


def decode_time2(raw: bytes, fsp: int) -> tuple[bool, int, int, int, int]:
    """TIME2 -> (negative, hours, minutes, seconds, microseconds)."""
    nfrac = (fsp + 1) // 2
    if nfrac == 3:
        packed = int.from_bytes(raw[:6], "big") - 0x800000000000
    else:
        intpart = int.from_bytes(raw[:3], "big") - 0x800000
        frac = int.from_bytes(raw[3:3 + nfrac], "big", signed=True) if nfrac else 0
        if intpart < 0 and frac:
            intpart += 1
            frac -= 0x100 if nfrac == 1 else 0x10000
        packed = (intpart << 24) + frac * (10000 if nfrac == 1 else 100)
    negative = packed < 0
    packed = -packed if negative else packed
    hms, usec = packed >> 24, packed % (1 << 24)
    return negative, (hms >> 12) % (1 << 10), (hms >> 6) % 64, hms % 64, usec


# --------------------------------------------------------------------------
# FORMAT_DESCRIPTION_EVENT
# --------------------------------------------------------------------------
def _version_tuple(server_version: str) -> tuple[int, int, int]:
    """Leading 'x.y.z' of a server version (like do_server_version_split)."""
    parts = []
    s = server_version
    for _ in range(3):
        digits = ""
        while s and s[0].isdigit():
            digits += s[0]
            s = s[1:]
        parts.append(int(digits) if digits else 0)
        if s.startswith("."):
            s = s[1:]
        else:
            break
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts[:3])  # type: ignore[return-value]


def _has_checksum_alg_byte(server_version: str) -> bool:
    """FDEs carry the checksum-algorithm byte from MySQL 5.6.1 / MariaDB 5.3.0."""
    split = (5, 3, 0) if "MariaDB" in server_version else (5, 6, 1)
    return _version_tuple(server_version) >= split


def _is_old_tree_version(server_version: str) -> bool:
    """The 5.1.[1-5]-a_drop5*, 5.1.4-a_drop6*, 5.2.[0-2]-a_drop6* pre-GA trees
    whose event type ids are permuted (see control_events.cpp)."""
    v = server_version
    if len(v) < 13 or v[0] != "5" or v[1] != "." or v[3] != "." or v[5:12] != "-a_drop":
        return False
    return ((v[2] == "1" and "1" <= v[4] <= "5" and v[12] == "5")
            or (v[2] == "1" and v[4] == "4" and v[12] == "6")
            or (v[2] == "2" and "0" <= v[4] <= "2" and v[12] == "6"))


def _parse_fde(event: bytes, pos: int) -> tuple[RefFormat, bool]:
    """Parse a whole FDE buffer (common header included).

    Returns the format and whether the FDE itself ends in a CRC32 trailer
    (always the case when the alg byte is present: the FDE is checksummed
    even when the algorithm it announces for the other events is OFF)."""
    body_off = COMMON_HEADER_LEN  # an FDE's header is always 19 bytes
    binlog_version = _uint(event, body_off, 2, pos, "FDE binlog_version")
    _need(event, body_off + 2, 50, pos, "FDE server_version")
    raw_version = event[body_off + 2:body_off + 52]
    server_version = raw_version.split(b"\0", 1)[0].decode("latin-1")
    create_timestamp = _uint(event, body_off + 52, 4, pos, "FDE create_timestamp")
    header_length = _uint(event, body_off + 56, 1, pos, "FDE header_length")
    if header_length < COMMON_HEADER_LEN:
        raise RefDecodeError(f"FDE header_length {header_length} < 19", pos + body_off + 56)
    rest = event[body_off + 57:]
    if _has_checksum_alg_byte(server_version):
        if len(rest) < 1 + CHECKSUM_LEN:
            raise RefDecodeError("FDE too short for checksum alg + CRC", pos)
        post = rest[:-(1 + CHECKSUM_LEN)]
        alg = rest[-(1 + CHECKSUM_LEN)]
        fde_has_crc = True
    else:
        post = rest
        alg = None
        fde_has_crc = False
    permutation = None
    post_list = list(post)
    if _is_old_tree_version(server_version):
        if len(post_list) != 22:
            raise RefDecodeError("pre-GA tree FDE must list 22 post-header lengths", pos)
        permutation = _OLD_TREE_PERMUTATION
        # re-index the lengths by the modern type ids, as the server does
        permuted = [0] * (len(permutation) - 1)
        for raw in range(1, len(permutation)):
            permuted[permutation[raw] - 1] = post_list[raw - 1]
        post_list = permuted
    fmt = RefFormat(pos=pos, binlog_version=binlog_version, server_version=server_version,
                    create_timestamp=create_timestamp, header_length=header_length,
                    post_header_len=tuple(post_list), checksum_alg=alg,
                    permutation=permutation)
    return fmt, fde_has_crc


# --------------------------------------------------------------------------
# TABLE_MAP
# --------------------------------------------------------------------------
def _read_field_metadata(meta: bytes, off: int, ctype: int, base: int) -> tuple[int, int, int]:
    """One column's metadata as rpl_utility.cc read_field_metadata composes it.

    Returns (metadata value, bytes used, real column type)."""
    if ctype == T_TYPED_ARRAY:
        inner = _uint(meta, off, 1, base, "TYPED_ARRAY inner type")
        if inner == T_VARCHAR:
            return _uint(meta, off + 1, 3, base, "array VARCHAR meta"), 4, inner
        value, used, real = _read_field_metadata(meta, off + 1, inner, base)
        return value, used + 1, real
    if ctype in (T_TINY_BLOB, T_BLOB, T_MEDIUM_BLOB, T_LONG_BLOB, T_DOUBLE, T_FLOAT,
                 T_GEOMETRY, T_JSON, T_VECTOR, T_TIME2, T_DATETIME2, T_TIMESTAMP2):
        return _uint(meta, off, 1, base, "1-byte field metadata"), 1, ctype
    if ctype in (T_STRING, T_ENUM, T_SET):
        byte0 = _uint(meta, off, 1, base, "STRING metadata")
        byte1 = _uint(meta, off + 1, 1, base, "STRING metadata")
        value = (byte0 << 8) | byte1
        real = ctype
        if ctype == T_STRING:
            if (byte0 & 0x30) != 0x30:
                real = byte0 | 0x30  # long CHAR(): length bits folded into byte0
            else:
                real = byte0
        return value, 2, real
    if ctype == T_BIT:
        bits = _uint(meta, off, 1, base, "BIT metadata")
        nbytes = _uint(meta, off + 1, 1, base, "BIT metadata")
        return bits | (nbytes << 8), 2, ctype
    if ctype in (T_VARCHAR, T_VAR_STRING):
        return _uint(meta, off, 2, base, "VARCHAR metadata"), 2, ctype
    if ctype == T_NEWDECIMAL:
        precision = _uint(meta, off, 1, base, "NEWDECIMAL metadata")
        scale = _uint(meta, off + 1, 1, base, "NEWDECIMAL metadata")
        return (precision << 8) | scale, 2, ctype
    return 0, 0, ctype


def _table_id_and_flags(body: bytes, body_pos: int, post_header_len: int, what: str) -> tuple[int, int]:
    """The post-header's table id (4 bytes in the intermediate pre-5.1.4 trees whose post-header
    is 6 bytes, else 6) and the 2-byte flags after it."""
    id_len = 4 if post_header_len == 6 else 6
    return _uint(body, 0, id_len, body_pos, "table id"), _uint(body, id_len, 2, body_pos, what)


def _parse_table_map(body: bytes, body_pos: int, post_header_len: int, pos: int) -> RefTableMap:
    """body: post-header + payload (no common header, no CRC)."""
    table_id, tm_flags = _table_id_and_flags(body, body_pos, post_header_len, "TABLE_MAP flags")
    off = post_header_len
    dblen, n = _packed_int(body, off, body_pos, "db name length")
    off += n
    _need(body, off, dblen + 1, body_pos, "db name")
    db = body[off:off + dblen].decode("utf-8", "surrogateescape")
    off += dblen + 1
    tbllen, n = _packed_int(body, off, body_pos, "table name length")
    off += n
    _need(body, off, tbllen + 1, body_pos, "table name")
    table = body[off:off + tbllen].decode("utf-8", "surrogateescape")
    off += tbllen + 1
    count_at = off
    ncols, n = _packed_int(body, off, body_pos, "column count")
    off += n
    count_end = off
    _need(body, off, ncols, body_pos, "column types")
    column_types = tuple(body[off:off + ncols])
    off += ncols
    meta_raw = b""
    null_raw = bytes((ncols + 7) // 8)
    if off < len(body):  # very old servers wrote neither metadata nor null bits
        meta_len, n = _packed_int(body, off, body_pos, "metadata length")
        off += n
        if meta_len > ncols * 4:
            raise RefDecodeError("field metadata longer than 4 bytes per column", body_pos + off)
        _need(body, off, meta_len, body_pos, "field metadata")
        meta_raw = body[off:off + meta_len]
        meta_base = body_pos + off
        off += meta_len
        nbytes = (ncols + 7) // 8
        _need(body, off, nbytes, body_pos, "null bitmap")
        null_raw = body[off:off + nbytes]
        off += nbytes
    else:
        meta_base = body_pos + off
    metas, reals, metas_raw = [], [], []
    moff = 0
    for ctype in column_types:
        if meta_raw:
            value, used, real = _read_field_metadata(meta_raw, moff, ctype, meta_base)
        else:
            value, used, real = 0, 0, ctype
        metas.append(value)
        reals.append(real)
        metas_raw.append(bytes(meta_raw[moff:moff + used]))
        moff += used
    if moff != len(meta_raw):
        raise RefDecodeError(f"field metadata: used {moff} of {len(meta_raw)} bytes", meta_base)
    opt = []
    column_names = None
    while off < len(body):
        otype = body[off]
        olen, n = _packed_int(body, off + 1, body_pos, "optional metadata length")
        vstart = off + 1 + n
        _need(body, vstart, olen, body_pos, "optional metadata value")
        value = body[vstart:vstart + olen]
        opt.append((otype, value))
        if otype == OPT_COLUMN_NAME:
            names = []
            p = 0
            while p < len(value):
                ln, m = _packed_int(value, p, body_pos + vstart, "column name length")
                p += m
                _need(value, p, ln, body_pos + vstart, "column name")
                names.append(value[p:p + ln].decode("utf-8", "surrogateescape"))
                p += ln
            column_names = tuple(names)
        off = vstart + olen
    return RefTableMap(pos=pos, table_id=table_id, flags=tm_flags, db=db, table=table,
                       ncols=ncols, column_types=column_types, real_types=tuple(reals),
                       column_meta=tuple(metas), nullable=tuple(_bits(null_raw, ncols)),
                       optional_metadata=tuple(opt), column_names=column_names,
                       field_metadata_raw=bytes(meta_raw), column_meta_raw=tuple(metas_raw),
                       null_bits=bytes(null_raw), column_count_at=body_pos + count_at,
                       column_count_end=body_pos + count_end)


# --------------------------------------------------------------------------
# row values
# --------------------------------------------------------------------------
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_bin_size(precision: int, scale: int) -> int:
    intg = precision - scale
    intg0, frac0 = intg // 9, scale // 9
    return intg0 * 4 + _DIG2BYTES[intg - intg0 * 9] + frac0 * 4 + _DIG2BYTES[scale - frac0 * 9]


_FIXED_SIZES = {
    T_TINY: 1, T_YEAR: 1, T_SHORT: 2, T_INT24: 3, T_LONG: 4, T_LONGLONG: 8,
    T_FLOAT: 4, T_DOUBLE: 8, T_NULL: 0, T_DATE: 3, T_NEWDATE: 3, T_TIME: 3,
    T_TIMESTAMP: 4, T_DATETIME: 8,
}


def value_storage(ctype: int, meta: int, at: int = -1) -> tuple[str, int]:
    """How a value of this column is stored in a row image (calc_field_size):
    ``("fixed", bytes)``, or ``("prefixed", bytes of its length prefix)``. ``at`` (the
    value's offset) is only for errors."""
    if ctype in _FIXED_SIZES:
        return "fixed", _FIXED_SIZES[ctype]
    if ctype == T_TIME2:
        return "fixed", 3 + (meta + 1) // 2
    if ctype == T_TIMESTAMP2:
        return "fixed", 4 + (meta + 1) // 2
    if ctype == T_DATETIME2:
        return "fixed", 5 + (meta + 1) // 2
    if ctype == T_NEWDECIMAL:
        precision, scale = meta >> 8, meta & 0xFF
        if precision == 0 or scale > precision:
            raise RefDecodeError(f"bad DECIMAL({precision},{scale}) metadata", at)
        return "fixed", decimal_bin_size(precision, scale)
    if ctype == T_BIT:
        nbytes, nbits = meta >> 8, meta & 0xFF
        return "fixed", nbytes + (1 if nbits else 0)
    if ctype in (T_STRING, T_ENUM, T_SET):
        byte0, byte1 = meta >> 8, meta & 0xFF
        if byte0 in (T_ENUM, T_SET):
            return "fixed", byte1
        if ctype == T_STRING and (byte0 & 0x30) != 0x30:
            max_len = byte1 | (((byte0 & 0x30) ^ 0x30) << 4)
        else:
            max_len = byte1
        return "prefixed", 2 if max_len > 255 else 1
    if ctype in (T_VARCHAR, T_VAR_STRING):
        return "prefixed", 2 if meta > 255 else 1
    if ctype in _BLOB_LIKE:
        if meta not in (1, 2, 3, 4):
            raise RefDecodeError(f"BLOB-like column with length-bytes metadata {meta}", at)
        return "prefixed", meta
    raise RefDecodeError(f"no size rule for column type {ctype} "
                         f"({COLUMN_TYPE_NAMES.get(ctype, '?')})", at)


_BLOB_LIKE = (T_TINY_BLOB, T_MEDIUM_BLOB, T_LONG_BLOB, T_BLOB, T_JSON, T_GEOMETRY, T_VECTOR)
_PREFIX_NAMES = {T_STRING: "CHAR length", T_ENUM: "CHAR length", T_SET: "CHAR length",
                 T_VARCHAR: "VARCHAR length", T_VAR_STRING: "VARCHAR length"}


def value_size(ctype: int, meta: int, buf: bytes, off: int, base: int = 0) -> tuple[int, int]:
    """Size of one stored value (calc_field_size), split as (prefix, data).

    ``prefix`` is the length prefix of variable-length types (0 otherwise);
    ``data`` the number of value bytes after it."""
    how, n = value_storage(ctype, meta, base + off)
    if how == "fixed":
        return 0, n
    return n, _uint(buf, off, n, base, _PREFIX_NAMES.get(ctype, "BLOB length"))


def _read_image(data: bytes, off: int, tm: RefTableMap, present: list[bool],
                base: int, partial_ai: bool = False) -> tuple[list, int]:
    """One row image: null bitmap over the present columns, then the values.

    ``partial_ai``: an after image of PARTIAL_UPDATE_ROWS, which starts with
    value_options (packed int) and, when it has PARTIAL_JSON_UPDATES (1), one bit
    per JSON column of the table, present or not (log_event.cc,
    print_verbose_one_row)."""
    partial = [False] * tm.ncols
    if partial_ai:
        options, k = _packed_int(data, off, base, "value_options")
        off += k
        if options & 1:
            json_cols = [c for c in range(tm.ncols) if tm.column_types[c] == T_JSON]
            nb = (len(json_cols) + 7) // 8
            _need(data, off, nb, base, "partial JSON bits")
            for c, bit in zip(json_cols, _bits(data[off:off + nb], len(json_cols))):
                partial[c] = bit
            off += nb
    npresent = sum(present)
    nbytes = (npresent + 7) // 8
    _need(data, off, nbytes, base, "row null bitmap")
    nulls = _bits(data[off:off + nbytes], npresent)
    off += nbytes
    image: list = []
    k = 0  # index among the present columns
    for col in range(tm.ncols):
        if not present[col]:
            image.append(ABSENT)
            continue
        if nulls[k]:
            image.append(None)
        else:
            plen, dlen = value_size(tm.column_types[col], tm.column_meta[col], data, off, base)
            _need(data, off + plen, dlen, base,
                  f"value of column {col + 1} ({COLUMN_TYPE_NAMES.get(tm.column_types[col])})")
            raw = bytes(data[off + plen:off + plen + dlen])
            image.append(read_json_diffs(raw, base + off + plen) if partial[col] else raw)
            off += plen + dlen
        k += 1
    return image, off


def _rows_header(body: bytes, body_pos: int, logical_type: int,
                 post_header_len: int) -> RefRowsHeader:
    """A rows event's post-header, extra data, column count and bitmaps (``body``: the
    event after its common header, without CRC32, starting at file offset ``body_pos``)."""
    kind, version = ROWS_EVENTS[logical_type]
    table_id, flags = _table_id_and_flags(body, body_pos, post_header_len, "rows flags")
    off = post_header_len
    extra = None
    if post_header_len == 10:  # ROWS_HEADER_LEN_V2: extra-data length counts itself
        off = 8
        var_len = _uint(body, off, 2, body_pos, "extra data length")
        if var_len < 2:
            raise RefDecodeError("rows v2 extra data length < 2", body_pos + off)
        _need(body, off + 2, var_len - 2, body_pos, "extra data")
        extra = bytes(body[off + 2:off + var_len])
        off += var_len
    width_at = off
    width, n = _packed_int(body, off, body_pos, "column count")
    off += n
    width_end = off
    if width == 0:
        raise RefDecodeError("rows event with 0 columns", body_pos + off)
    nbytes = (width + 7) // 8
    _need(body, off, nbytes, body_pos, "columns bitmap")
    before = _bits(body[off:off + nbytes], width)
    off += nbytes
    if kind == "update" and version > 0:
        _need(body, off, nbytes, body_pos, "after-image columns bitmap")
        after = _bits(body[off:off + nbytes], width)
        off += nbytes
    else:
        after = list(before)
    return RefRowsHeader(None, table_id, body_pos, 4 if post_header_len == 6 else 6, flags, extra,
                         width, body_pos + width_at, body_pos + width_end, before, after,
                         body_pos + off, body_pos + len(body))


def _parse_rows(body: bytes, body_pos: int, logical_type: int, post_header_len: int,
                pos: int, table_maps: dict[int, RefTableMap]) -> RefRowsEvent:
    kind, version = ROWS_EVENTS[logical_type]
    head = _rows_header(body, body_pos, logical_type, post_header_len)
    table_id, width, off = head.table_id, head.width, head.images_at - body_pos
    tm = table_maps.get(table_id)
    if tm is None:
        raise RefDecodeError(f"rows event for unmapped table id {table_id}", pos)
    before, after = head.present_before, head.present_after
    ev = RefRowsEvent(pos=pos, table_id=table_id, db=tm.db, table=tm.table, kind=kind,
                      ncols=width, present_before=before, present_after=after,
                      images=None, type=logical_type, version=version, flags=head.flags,
                      extra_data=head.extra_data, rows_data=bytes(body[off:]))
    if version == 0:
        # PRE_GA rows carry rows in the storage-engine record format (the
        # table's own null bytes, then Field::pack() data): the layout depends
        # on the table definition of the writing server and cannot be read from
        # the binlog alone.  Keep the header, leave the images undecoded.
        return ev
    if width != tm.ncols:
        raise RefDecodeError(f"rows event has {width} columns, table map {tm.ncols}", pos)
    images: list[list] = []
    while off < len(body):
        img, off = _read_image(body, off, tm, before, body_pos)
        images.append(img)
        if kind == "update":
            img, off = _read_image(body, off, tm, after, body_pos,
                                   partial_ai=logical_type == PARTIAL_UPDATE_ROWS_EVENT)
            images.append(img)
    ev.images = images
    return ev


# --------------------------------------------------------------------------
# events and files
# --------------------------------------------------------------------------
def _header(buf: bytes, off: int) -> tuple[int, int, int, int, int, int]:
    return struct.unpack_from("<IBIIIH", buf, off)


def _check_crc(event: bytes, is_fde: bool) -> tuple[int, bool]:
    stored = struct.unpack_from("<I", event, len(event) - CHECKSUM_LEN)[0]
    data = bytearray(event[:-CHECKSUM_LEN])
    if is_fde:  # the server computed it before setting LOG_EVENT_BINLOG_IN_USE_F
        data[17] &= ~LOG_EVENT_BINLOG_IN_USE_F & 0xFF
    return stored, zlib.crc32(bytes(data)) == stored


def decode_event(buf: bytes, fmt: RefFormat | None = None, pos: int = 0,
                 table_maps: dict[int, RefTableMap] | None = None):
    """Decode one stand-alone event (common header .. checksum).

    Returns (RefEvent, payload) where payload is a RefTableMap, a RefRowsEvent,
    a RefFormat (for an FDE) or None.  ``table_maps`` (by table id) is needed
    for rows events."""
    fmt = fmt or RefFormat.synthetic()
    if len(buf) < COMMON_HEADER_LEN:
        raise RefDecodeError("event shorter than its header", pos)
    size = _header(buf, 0)[3]
    if size != len(buf):
        raise RefDecodeError(f"event_size {size} != buffer length {len(buf)}", pos)
    ev, payload, _ = _decode_one(bytes(buf), pos, fmt, table_maps or {})
    return ev, payload


def _decode_one(event: bytes, pos: int, fmt: RefFormat | None,
                by_id: dict[int, RefTableMap]):
    ts, raw_type, server_id, size, log_pos, flags = _header(event, 0)
    if raw_type == FORMAT_DESCRIPTION_EVENT:
        new_fmt, fde_has_crc = _parse_fde(event, pos)
        crc_stored = crc_ok = None
        if fde_has_crc:
            crc_stored, crc_ok = _check_crc(event, True)
        ev = RefEvent(pos, raw_type, size, ts, server_id, log_pos, flags,
                      FORMAT_DESCRIPTION_EVENT, crc_stored, crc_ok)
        return ev, new_fmt, new_fmt
    logical = fmt.logical_type(raw_type) if fmt else raw_type
    crc_stored = crc_ok = None
    body_end = size
    if fmt is not None and fmt.has_crc32:
        if size < COMMON_HEADER_LEN + CHECKSUM_LEN:
            raise RefDecodeError("event too short for its CRC32", pos)
        crc_stored, crc_ok = _check_crc(event, False)
        body_end = size - CHECKSUM_LEN
    ev = RefEvent(pos, raw_type, size, ts, server_id, log_pos, flags, logical,
                  crc_stored, crc_ok)
    payload = None
    if logical == TABLE_MAP_EVENT or logical in ROWS_EVENTS:
        if fmt is None:
            raise RefDecodeError("TABLE_MAP/rows event before any FDE", pos)
        hlen = fmt.header_length
        body = event[hlen:body_end]
        ph = fmt.post_header(logical)
        if ph is None:
            raise RefDecodeError(f"FDE lists no post-header length for type {logical}", pos)
        if logical == TABLE_MAP_EVENT:
            payload = _parse_table_map(body, pos + hlen, ph, pos)
        else:
            payload = _parse_rows(body, pos + hlen, logical, ph, pos, by_id)
    return ev, payload, fmt


def _decode_header_only(event: bytes, pos: int, fmt: RefFormat | None) -> RefEvent:
    ts, raw_type, server_id, size, log_pos, flags = _header(event, 0)
    logical = fmt.logical_type(raw_type) if fmt else raw_type
    crc_stored = crc_ok = None
    if fmt is not None and fmt.has_crc32:
        crc_stored, crc_ok = _check_crc(event, False)
    return RefEvent(pos, raw_type, size, ts, server_id, log_pos, flags, logical,
                    crc_stored, crc_ok)


def walk_events(data: bytes, start: int = 4) -> tuple[list[EventBounds], int, str | None]:
    """The lenient header walk: every complete event by its event_size, where the walk
    stopped and why (None at the end of the data, "truncated" or "malformed")."""
    events, pos = [], start
    while pos < len(data):
        if pos + COMMON_HEADER_LEN > len(data):
            return events, pos, "truncated"
        size = _header(data, pos)[3]
        if size < COMMON_HEADER_LEN:
            return events, pos, "malformed"
        if pos + size > len(data):
            return events, pos, "truncated"
        events.append(EventBounds(pos, size, data[pos + 4]))
        pos += size
    return events, pos, None


def format_of(data: bytes) -> RefFormat:
    """The FORMAT_DESCRIPTION_EVENT right after the magic."""
    size = _uint(data, 4 + 9, 4, 0, "FDE event_size")
    _need(data, 4, size, 0, "FDE")
    return _parse_fde(data[4:4 + size], 4)[0]


def _body(data: bytes, fmt: RefFormat, e: EventBounds) -> tuple[bytes, int]:
    """The event's bytes after its common header, without CRC32, and where they start."""
    start = e.offset + fmt.header_length
    return data[start:e.offset + e.size - (CHECKSUM_LEN if fmt.has_crc32 else 0)], start


def read_table_map(data: bytes, fmt: RefFormat, e: EventBounds) -> RefTableMap:
    """The TABLE_MAP ``e`` of ``data``, with ``event`` set."""
    body, start = _body(data, fmt, e)
    tm = _parse_table_map(body, start, fmt.post_header(TABLE_MAP_EVENT), e.offset)
    return replace(tm, event=e)


def read_rows_header(data: bytes, fmt: RefFormat, e: EventBounds) -> RefRowsHeader:
    """The rows event ``e`` of ``data`` up to its first image (no TABLE_MAP needed)."""
    logical = fmt.logical_type(e.type)
    body, start = _body(data, fmt, e)
    return replace(_rows_header(body, start, logical, fmt.post_header(logical)), event=e)


def decode_bytes(data: bytes, strict: bool = True) -> RefBinlog:
    """Walk a whole binlog file held in memory.

    A truncated last event (or trailing bytes shorter than a header) ends the
    walk cleanly and is reported in ``stop``.  Any other malformation raises
    :class:`RefDecodeError`, except that with ``strict=False`` a TABLE_MAP or
    rows event whose *body* cannot be decoded is recorded in
    ``skipped_rows_events`` as ``(pos, message)`` and the walk goes on (the
    event itself is still listed in ``events``).  Rows events this reference
    does not decode at all (rows inside TRANSACTION_PAYLOAD 40) are listed in
    ``skipped_rows_events`` too."""
    out = RefBinlog(size=len(data))
    if len(data) < 4 or data[:4] != BINLOG_MAGIC:
        raise RefDecodeError("not a binlog: bad magic", 0)
    fmt: RefFormat | None = None
    by_id: dict[int, RefTableMap] = {}
    bounds, end, why = walk_events(data)
    for b in bounds:
        pos, size = b.offset, b.size
        event = data[pos:pos + size]
        try:
            ev, payload, fmt = _decode_one(event, pos, fmt, by_id)
        except RefDecodeError as exc:
            raw_type = data[pos + 4]
            logical = fmt.logical_type(raw_type) if fmt else raw_type
            if strict or not (logical == TABLE_MAP_EVENT or logical in ROWS_EVENTS):
                raise
            out.skipped_rows_events.append((pos, exc.message))
            ev, payload = _decode_header_only(event, pos, fmt), None
        if ev.logical_type == TRANSACTION_PAYLOAD_EVENT and fmt is not None:
            body_end = size - (CHECKSUM_LEN if fmt.has_crc32 else 0)
            for inner, (iev, ipayload) in _payload_events(event[COMMON_HEADER_LEN:body_end], pos, fmt, by_id):
                out.payload_events.append((pos, inner, iev))
                if isinstance(ipayload, RefTableMap):
                    out.table_maps[(pos, inner)] = ipayload
                    by_id[ipayload.table_id] = ipayload
                elif isinstance(ipayload, RefRowsEvent):
                    ipayload.inner = inner
                    out.rows_events.append(ipayload)
        out.events.append(ev)
        if ev.crc_ok is not None:
            out.crc_checked += 1
            if not ev.crc_ok:
                out.crc_mismatches.append(pos)
        if isinstance(payload, RefFormat):
            out.formats.append(payload)
        elif isinstance(payload, RefTableMap):
            out.table_maps[pos] = payload
            by_id[payload.table_id] = payload
        elif isinstance(payload, RefRowsEvent):
            out.rows_events.append(payload)
    left = len(data) - end
    if why == "malformed":
        raise RefDecodeError(f"event_size {_header(data, end)[3]} < 19", end + 9)
    if why == "truncated" and left < COMMON_HEADER_LEN:
        out.stop = RefStop(end, f"truncated event header ({left} bytes)", left)
    elif why == "truncated":
        out.stop = RefStop(end, f"truncated event: event_size {_header(data, end)[3]}, {left} bytes left", left)
    return out


def _payload_events(body: bytes, pos: int, fmt: RefFormat, by_id: dict[int, RefTableMap]):
    """The events of a TRANSACTION_PAYLOAD_EVENT body (control_events.h,
    Transaction_payload_event): fields (type, length, value as packed ints) up to
    type 0, then the payload, zstd-compressed (type 0) or not (255); the events
    in it have common headers and no checksums."""
    import pyarrow as pa  # only for its zstd codec

    fields = {}
    off = 0
    while True:
        kind, used = _packed_int(body, off, pos, "payload field type")
        off += used
        if kind == 0:
            break
        length, used = _packed_int(body, off, pos, "payload field length")
        off += used
        fields[kind], _ = _packed_int(body[off:off + length], 0, pos, "payload field value")
        off += length
    data = body[off:]
    if fields.get(2, 255) == 0:
        data = pa.Codec("zstd").decompress(data, decompressed_size=fields[3], asbytes=True)
    inner_fmt = RefFormat(fmt.pos, fmt.binlog_version, fmt.server_version, fmt.create_timestamp,
                          fmt.header_length, fmt.post_header_len, 0, fmt.permutation)
    at = 0
    while at < len(data):
        size = _header(data, at)[3]
        if size < COMMON_HEADER_LEN or at + size > len(data):
            raise RefDecodeError(f"payload event at {at} of size {size} does not fit", pos)
        ev, payload, _ = _decode_one(data[at:at + size], pos, inner_fmt, by_id)
        yield at, (ev, payload)
        at += size


def decode_file(path: str | Path, strict: bool = True) -> RefBinlog:
    return decode_bytes(Path(path).read_bytes(), strict=strict)
