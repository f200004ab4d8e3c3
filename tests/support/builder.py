"""Synthetic binlog bytes for the tests: events, whole files, row values, binary JSON.

Written from the format (MySQL ``libs/mysql/binlog/event/*.h``, MariaDB ``sql/log_event.h``,
``sql-common/json_binary.{h,cc}``; vecbinlog's ``layout.py`` docstring is the same spec),
never from vecbinlog's code. It only makes input: what a test expects of it comes from an
independent source (the server, the seeds' hex dumps, a peer's documented output, the
reference decoder). ``tests/test_builder.py`` checks it rebuilds real events byte for byte.

Events::

    event(type_code, body, checksum=True, at=None, ...)  header + body (+ CRC32)
    fde_body(...), start_v3_body(...), table_map_body(...), rows_body(...), row_image(...), query_body(...),
    xid_body(...), rotate_body(...), mariadb_gtid_body(...),
    transaction_payload_body(...), mariadb_compressed_body(...)
    BinlogWriter: magic + FDE + events with their sizes and next positions
    fix_crcs(data), replace_event(data, e, new), crc32_of(event)

Values: ``packed`` (net_store_length), ``prefixed`` (a length-prefixed value), ``bitmap``;
binary JSON: ``encode`` with ``UInt``, ``Opaque``, ``Large``, ``Pairs`` and the opaque
helpers ``decimal_opaque``, ``datetime_packed``, ``time_packed``, ``temporal_opaque``.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from . import reference as ref

MAGIC = b"\xfebin"
#: the common header (binlog_event.h): timestamp, type_code, server_id, event_size, log_pos, flags
HEADER = struct.Struct("<IBIIIH")
CHECKSUM_LEN = 4
LOG_EVENT_BINLOG_IN_USE_F = 0x1
#: post-header lengths of event types 1..40 in a MySQL 8.0.26 FDE (corpus binlog-invisible-columns)
MYSQL_POST_HEADER = bytes.fromhex("000d0008000000000400040000006100041a08000000080808020000000a0a0a2a2a001234000a28")
#: post-header lengths of types 1..171 in a MariaDB 10.11 FDE (data/sample/mariadb-bin.000001)
MARIADB_POST_HEADER = bytes.fromhex(
    "380d000800120004040404120000e400041a08000000080808020000000a0a0a0000000000000a0a0a"
    + "00" * 119 + "041304000d0808080a0a0a"
)
#: checksum_alg values (binlog_event.h enum_binlog_checksum_alg)
CHECKSUM_OFF, CHECKSUM_CRC32 = 0, 1


# -- primitives ---------------------------------------------------------------------------------


def packed(n: int) -> bytes:
    """net_store_length: a packed (length-encoded) integer."""
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + n.to_bytes(2, "little")
    if n < 1 << 24:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + n.to_bytes(8, "little")


def prefixed(value: bytes, length_bytes: int) -> bytes:
    """A value after its little-endian length of ``length_bytes`` bytes (VARCHAR, BLOB, JSON)."""
    return len(value).to_bytes(length_bytes, "little") + value


def bitmap(bits: Sequence[bool]) -> bytes:
    """Bits LSB first, ``(len + 7) // 8`` bytes."""
    out = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            out[i // 8] |= 1 << (i % 8)
    return bytes(out)


def crc32_of(event: bytes | bytearray) -> int:
    """The CRC32 of an event without its last 4 bytes; an FDE's with LOG_EVENT_BINLOG_IN_USE_F
    cleared, as the server computes it."""
    head = bytearray(event[:19])
    if head[4] == ref.FORMAT_DESCRIPTION_EVENT:
        head[17] &= ~LOG_EVENT_BINLOG_IN_USE_F & 0xFF
    return zlib.crc32(bytes(event[19:len(event) - CHECKSUM_LEN]), zlib.crc32(bytes(head)))


def event(type_code: int, body: bytes, *, checksum: bool = True, at: int | None = None,
          log_pos: int | None = None, timestamp: int = 0, server_id: int = 1, flags: int = 0) -> bytes:
    """A whole event: common header (event_size computed; log_pos given, or where the next
    event starts when the event is ``at`` that offset, else 0), ``body`` (post-header and
    payload) and, with ``checksum``, its CRC32."""
    size = HEADER.size + len(body) + (CHECKSUM_LEN if checksum else 0)
    if log_pos is None:
        log_pos = at + size if at is not None else 0
    out = HEADER.pack(timestamp, type_code, server_id, size, log_pos, flags) + body
    if checksum:
        out += crc32_of(out + bytes(CHECKSUM_LEN)).to_bytes(CHECKSUM_LEN, "little")
    return out


def header_fields(event_bytes: bytes) -> dict[str, int]:
    """timestamp, server_id, log_pos and flags of an event (to rebuild it with ``event``)."""
    timestamp, _, server_id, _, log_pos, flags = HEADER.unpack_from(event_bytes)
    return {"timestamp": timestamp, "server_id": server_id, "log_pos": log_pos, "flags": flags}


def replace_event(data: bytes | bytearray, e: ref.EventBounds, new: bytes | bytearray) -> bytearray:
    """``data`` with the event ``e`` replaced by ``new`` (a whole event), its event_size set
    to its length (log_pos and the CRC32 left as they are)."""
    new = bytearray(new)
    new[9:13] = len(new).to_bytes(4, "little")
    return bytearray(data[: e.offset]) + new + bytearray(data[e.offset + e.size:])


def fix_crcs(data: bytes | bytearray) -> bytearray:
    """Every event the header walk finds given its right CRC32 (for files that have them)."""
    data = bytearray(data)
    for e in ref.walk_events(bytes(data))[0]:
        if e.size >= HEADER.size + CHECKSUM_LEN:
            at = e.offset + e.size - CHECKSUM_LEN
            data[at:at + CHECKSUM_LEN] = crc32_of(data[e.offset:e.offset + e.size]).to_bytes(CHECKSUM_LEN, "little")
    return data


# -- event bodies (post-header + payload) ----------------------------------------------------------


def fde_body(server_version: str = "8.0.26", *, post_header: bytes = MYSQL_POST_HEADER,
             checksum_alg: int | None = CHECKSUM_CRC32, binlog_version: int = 4, create_timestamp: int = 0,
             header_length: int = 19) -> bytes:
    """FORMAT_DESCRIPTION_EVENT (control_events.h): version, server version (50 bytes),
    create timestamp, header length, post-header lengths, then (MySQL 5.6.1+ / MariaDB 5.3+)
    the checksum algorithm. ``event(15, ..., checksum=...)`` adds the FDE's own CRC32."""
    out = struct.pack("<H50sIB", binlog_version, server_version.encode(), create_timestamp, header_length)
    out += post_header
    if checksum_alg is not None:
        out += bytes([checksum_alg])
    return out


def start_v3_body(server_version: str, *, binlog_version: int = 3, created: int = 0) -> bytes:
    """START_EVENT_V3 (type 1, MySQL 4.x and 5.0 v3 logs): binlog version, server version
    (50 bytes), create timestamp."""
    return struct.pack("<H50sI", binlog_version, server_version.encode(), created)


def table_map_body(table_id: int, db: str | bytes, table: str | bytes, types: Sequence[int],
                   meta: Sequence[bytes], null_bits: bytes | None = None, *,
                   optional: Iterable[tuple[int, bytes]] = (), flags: int = 1, table_id_len: int = 6,
                   column_count: bytes | None = None) -> bytes:
    """TABLE_MAP_EVENT (rows_event.h, Table_map_event): table id, flags, db and table names
    (length byte, name, NUL), column count, types, field metadata (``meta``: each column's
    bytes), the nullability bitmap (default: every column nullable), then optional metadata
    TLVs (type, packed length, value). ``column_count``: other bytes in place of the count."""
    db = db.encode() if isinstance(db, str) else db
    table = table.encode() if isinstance(table, str) else table
    meta_bytes = b"".join(meta)
    if null_bits is None:
        null_bits = bitmap([True] * len(types))
    out = table_id.to_bytes(table_id_len, "little") + flags.to_bytes(2, "little")
    out += bytes([len(db)]) + db + b"\0" + bytes([len(table)]) + table + b"\0"
    out += (packed(len(types)) if column_count is None else column_count) + bytes(types)
    out += packed(len(meta_bytes)) + meta_bytes + null_bits
    return out + b"".join(bytes([t]) + packed(len(v)) + v for t, v in optional)


def table_map_like(tm: ref.RefTableMap, header: bytes, *, checksum: bool, **changes) -> bytes:
    """A TABLE_MAP event rebuilt from what the reference read of one (``header``: its first
    19 bytes, for the timestamp, server id, log_pos and flags), with some parts changed:
    ``table_id``, ``db``, ``table``, ``types``, ``meta``, ``null_bits``, ``optional``,
    ``flags``, ``column_count``."""
    db, table = (name.encode("utf-8", "surrogateescape") for name in (tm.db, tm.table))
    post_header = tm.column_count_at - tm.event.offset - HEADER.size - (len(db) + 2) - (len(table) + 2)
    table_id_len = post_header - 2  # the table id, then 2 bytes of flags
    parts = dict(table_id=tm.table_id, db=db, table=table, types=tm.column_types, meta=tm.column_meta_raw,
                 null_bits=tm.null_bits, optional=tm.optional_metadata, flags=tm.flags, table_id_len=table_id_len)
    parts.update(changes)
    return event(ref.TABLE_MAP_EVENT, table_map_body(**parts), checksum=checksum, **header_fields(header))


def row_image(values: Sequence[bytes | None], *, value_options: bytes = b"") -> bytes:
    """One row image over the *present* columns: (``value_options``, for PARTIAL_UPDATE_ROWS
    after images) null bits, then the non-NULL values as given (length prefixes included:
    see ``prefixed``)."""
    return value_options + bitmap([v is None for v in values]) + b"".join(v for v in values if v is not None)


def rows_body(table_id: int, width: int, images: bytes, *, present: Sequence[bool] | bytes | None = None,
              present_after: Sequence[bool] | bytes | None = None, extra: bytes | None = None, flags: int = 1,
              table_id_len: int = 6) -> bytes:
    """WRITE/UPDATE/DELETE_ROWS (rows_event.h, Rows_event): table id, flags, v2 extra data
    (``extra`` not None: its length counting its own 2 bytes), column count, the columns
    bitmap (default all present; bools, or the bytes as stored: servers set the unused high
    bits), for UPDATEs (``present_after`` given) the after-image bitmap, then ``images`` (row
    images back to back)."""
    def bits(value: Sequence[bool] | bytes) -> bytes:
        return value if isinstance(value, bytes) else bitmap(value)

    out = table_id.to_bytes(table_id_len, "little") + flags.to_bytes(2, "little")
    if extra is not None:
        out += (len(extra) + 2).to_bytes(2, "little") + extra
    out += packed(width) + bits([True] * width if present is None else present)
    if present_after is not None:
        out += bits(present_after)
    return out + images


def query_body(query: str | bytes, db: str | bytes = b"", *, thread_id: int = 0, exec_time: int = 0,
               error_code: int = 0, status: bytes = b"") -> bytes:
    """QUERY_EVENT (statement_events.h): thread id, exec time, db length, error code, status
    variables length (13-byte post-header), status variables, db, NUL, the statement."""
    db = db.encode() if isinstance(db, str) else db
    query = query.encode() if isinstance(query, str) else query
    return struct.pack("<IIBHH", thread_id, exec_time, len(db), error_code, len(status)) + status + db + b"\0" + query


def xid_body(xid: int) -> bytes:
    """XID_EVENT: the 8-byte transaction id."""
    return xid.to_bytes(8, "little")


def rotate_body(position: int, name: str) -> bytes:
    """ROTATE_EVENT: position in the next file (8 bytes), its name."""
    return position.to_bytes(8, "little") + name.encode()


def mariadb_gtid_body(seq_no: int, domain_id: int, *, flags: int = 0) -> bytes:
    """MariaDB GTID_EVENT (162): seq_no, domain id, flags2 (and padding to 19 bytes)."""
    return struct.pack("<QIB", seq_no, domain_id, flags).ljust(19, b"\0")


def transaction_payload_body(events: bytes, *, compression: str = "zstd") -> bytes:
    """TRANSACTION_PAYLOAD_EVENT (control_events.h): fields (type, length, value as packed
    ints): 2 compression type, 3 uncompressed size, 1 payload size, 0 end; then the payload
    (``events``: whole events without checksums), zstd-compressed or not."""
    import pyarrow as pa  # its zstd codec

    payload = pa.Codec("zstd").compress(events, asbytes=True) if compression == "zstd" else events
    kind = 0 if compression == "zstd" else 255

    def field(t: int, v: int) -> bytes:
        return packed(t) + packed(len(packed(v))) + packed(v)

    return field(2, kind) + field(3, len(events)) + field(1, len(payload)) + b"\0" + payload


def mariadb_compressed_block(data: bytes, length_bytes: int = 4) -> bytes:
    """MariaDB's compressed block (log_event.cc binlog_buf_compress): header
    0x80 | zlib (0) << 4 | n, the uncompressed length in n bytes big-endian, a zlib stream."""
    return bytes([0x80 | length_bytes]) + len(data).to_bytes(length_bytes, "big") + zlib.compress(data)


# -- whole files ----------------------------------------------------------------------------------


class BinlogWriter:
    """Magic, a FORMAT_DESCRIPTION_EVENT, then events added one by one, each with its size,
    next position and (``checksum``) CRC32 right. ``MariaDB`` in ``server_version`` gives
    MariaDB's post-header lengths by default."""

    def __init__(self, server_version: str = "8.0.26", *, checksum: bool = True, post_header: bytes | None = None,
                 timestamp: int = 0, server_id: int = 1) -> None:
        if post_header is None:
            post_header = MARIADB_POST_HEADER if "MariaDB" in server_version else MYSQL_POST_HEADER
        self.checksum, self.timestamp, self.server_id = checksum, timestamp, server_id
        self.data = bytearray(MAGIC)
        alg = CHECKSUM_CRC32 if checksum else CHECKSUM_OFF
        self.add(ref.FORMAT_DESCRIPTION_EVENT, fde_body(server_version, post_header=post_header, checksum_alg=alg),
                 checksum=True)

    def add(self, type_code: int, body: bytes, *, checksum: bool | None = None, **header) -> int:
        """Append an event; returns its offset."""
        at = len(self.data)
        header.setdefault("timestamp", self.timestamp)
        header.setdefault("server_id", self.server_id)
        self.data += event(type_code, body, checksum=self.checksum if checksum is None else checksum, at=at, **header)
        return at

    def bytes(self) -> bytes:
        return bytes(self.data)


# -- binary JSON (sql-common/json_binary.h, json_binary.cc) ----------------------------------------


@dataclass(frozen=True)
class UInt:
    """A JSON unsigned integer (J_UINT), e.g. CAST(CAST(12 AS UNSIGNED) AS JSON)."""

    value: int


@dataclass(frozen=True)
class Opaque:
    """An opaque value (J_OPAQUE): a MySQL field type and its bytes."""

    field_type: int
    data: bytes


class Large(NamedTuple):
    """Force the large storage format for this object/array."""

    value: object


class Pairs(NamedTuple):
    """An object whose members are stored in exactly this order (MySQL sorts them)."""

    items: tuple


def varlen(n: int) -> bytes:
    """The variable-length integer of JSON string and opaque lengths (7 bits a byte)."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _inline(value, large: bool):
    """attempt_inline_value(): (type, value) when the value fits in its entry."""
    if value is None:
        return 0x04, 0
    if value is True:
        return 0x04, 1
    if value is False:
        return 0x04, 2
    if isinstance(value, UInt):
        if value.value <= 0xFFFF:
            return 0x06, value.value
        if large and value.value <= 0xFFFFFFFF:
            return 0x08, value.value
        return None
    if isinstance(value, int):
        if -0x8000 <= value <= 0x7FFF:
            return 0x05, value & 0xFFFF
        if large and -0x80000000 <= value <= 0x7FFFFFFF:
            return 0x07, value & 0xFFFFFFFF
    return None


def _scalar(value) -> tuple[int, bytes]:
    """serialize_json_value() for scalars: (type byte, body)."""
    if value is None:
        return 0x04, b"\x00"
    if value is True:
        return 0x04, b"\x01"
    if value is False:
        return 0x04, b"\x02"
    if isinstance(value, UInt):
        v = value.value
        if v <= 0xFFFF:
            return 0x06, struct.pack("<H", v)
        if v <= 0xFFFFFFFF:
            return 0x08, struct.pack("<I", v)
        return 0x0A, struct.pack("<Q", v)
    if isinstance(value, int):
        if value > 0x7FFFFFFFFFFFFFFF:
            return _scalar(UInt(value))
        if -0x8000 <= value <= 0x7FFF:
            return 0x05, struct.pack("<h", value)
        if -0x80000000 <= value <= 0x7FFFFFFF:
            return 0x07, struct.pack("<i", value)
        return 0x09, struct.pack("<q", value)
    if isinstance(value, float):
        return 0x0B, struct.pack("<d", value)
    if isinstance(value, str):
        raw = value.encode()
        return 0x0C, varlen(len(raw)) + raw
    if isinstance(value, Opaque):
        return 0x0F, bytes([value.field_type]) + varlen(len(value.data)) + value.data
    raise TypeError(value)


class _TooBig(Exception):
    pass


def _container(value, large: bool) -> tuple[int, bytes]:
    is_obj = isinstance(value, (dict, Pairs))
    if isinstance(value, dict):
        items = sorted(((k.encode(), v) for k, v in value.items()), key=lambda kv: (len(kv[0]), kv[0]))
    elif isinstance(value, Pairs):
        items = [(k.encode(), v) for k, v in value.items]
    else:
        items = [(None, v) for v in value]
    osz = 4 if large else 2
    off = "<I" if large else "<H"
    n = len(items)
    header = 2 * osz + n * ((osz + 2) if is_obj else 0) + n * (1 + osz)
    keys = b"".join(k for k, _ in items) if is_obj else b""
    key_entries = b""
    pos = header
    if is_obj:
        for k, _ in items:
            key_entries += struct.pack(off, pos) + struct.pack("<H", len(k))
            pos += len(k)
    value_entries = b""
    body = b""
    for _, v in items:
        inl = _inline(v, large)
        if inl is not None:
            value_entries += bytes([inl[0]]) + struct.pack(off, inl[1])
            continue
        t, b = _encode_value(v, parent_large=large)
        if not large and pos + len(body) > 0xFFFF:
            raise _TooBig
        value_entries += bytes([t]) + struct.pack(off, pos + len(body))
        body += b
    size = header + len(keys) + len(body)
    if not large and (size > 0xFFFF or n > 0xFFFF):
        raise _TooBig
    t = (0x01 if large else 0x00) if is_obj else (0x03 if large else 0x02)
    return t, struct.pack(off, n) + struct.pack(off, size) + key_entries + value_entries + keys + body


def _encode_value(value, parent_large: bool = True) -> tuple[int, bytes]:
    if isinstance(value, Large):
        return _container(value.value, True)
    if isinstance(value, (dict, list, Pairs)):
        try:
            return _container(value, False)
        except _TooBig:
            if not parent_large:
                raise
            return _container(value, True)
    return _scalar(value)


def encode(value) -> bytes:
    """json_binary::serialize(): type byte + value."""
    t, body = _encode_value(value)
    return bytes([t]) + body


def decimal_opaque(text: str, precision: int, scale: int) -> Opaque:
    """Json_decimal::get_binary(): precision, scale, then decimal2bin()."""
    neg = text.startswith("-")
    ipart, _, fpart = text.lstrip("-").partition(".")
    fpart = fpart.ljust(scale, "0")
    intg = precision - scale
    dig2bytes = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
    ipart = ipart.zfill(intg)
    out = bytearray()
    lead = intg % 9
    if lead:
        out += int(ipart[:lead]).to_bytes(dig2bytes[lead], "big")
    for i in range(lead, intg, 9):
        out += int(ipart[i : i + 9]).to_bytes(4, "big")
    for i in range(0, scale - scale % 9, 9):
        out += int(fpart[i : i + 9]).to_bytes(4, "big")
    if scale % 9:
        out += int(fpart[scale - scale % 9 :]).to_bytes(dig2bytes[scale % 9], "big")
    if neg:
        out = bytearray(b ^ 0xFF for b in out)
    out[0] ^= 0x80
    return Opaque(246, bytes([precision, scale]) + bytes(out))


def datetime_packed(y, mo, d, h=0, mi=0, s=0, us=0) -> int:
    """TIME_to_longlong_datetime_packed (my_time.cc)."""
    ymd = ((y * 13 + mo) << 5) | d
    hms = (h << 12) | (mi << 6) | s
    return (((ymd << 17) | hms) << 24) + us


def time_packed(h, mi, s, us=0, neg=False) -> int:
    """TIME_to_longlong_time_packed (my_time.cc)."""
    v = (((h << 12) | (mi << 6) | s) << 24) + us
    return -v if neg else v


def temporal_opaque(field_type: int, packed_value: int) -> Opaque:
    return Opaque(field_type, struct.pack("<q", packed_value))
