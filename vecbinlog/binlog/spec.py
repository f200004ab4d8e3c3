"""The binlog v4 byte layout, written once as data.

A binlog file (MySQL 5.0+, MariaDB) is::

    offset 0   4 bytes   magic  fe 62 69 6e  ("\\xfebin")
    offset 4   events, back to back, each:

        common header (19 bytes, little-endian)          binlog_event.h, LOG_EVENT_HEADER_LEN
          0  timestamp   uint32  seconds since the epoch, UTC
          4  type_code   uint8   EventType
          5  server_id   uint32
          9  event_size  uint32  header + post-header + body + checksum
         13  log_pos     uint32  end of this event in the *source* binlog (0 in some relay events)
         17  flags       uint16  LogEventFlag
        post-header   length fixed per event type, given by the FORMAT_DESCRIPTION_EVENT
        body          variable
        checksum      4 bytes CRC32 of everything before it, when the FDE says CRC32

The first event is the FORMAT_DESCRIPTION_EVENT (control_events.h, Format_description_event)::

     0  binlog_version     uint16   4 (1 and 3 are pre-5.0 formats, not supported)
     2  server_version     char[50] NUL-padded, e.g. "8.0.32" or "10.11.6-MariaDB-log"
    52  create_timestamp   uint32
    56  header_length      uint8    19
    57  post_header_len    uint8[n] one per event type code 1..n
        checksum_alg       uint8    only from MySQL 5.6.1 / MariaDB 5.3 on (ChecksumAlg)
        checksum           uint32   when checksum_alg is CRC32

The FDE's own CRC32 is computed with LOG_EVENT_BINLOG_IN_USE_F cleared, since the server
sets and clears that flag in place while the file is open (binlog.cc, MYSQL_BIN_LOG::open).

Packed integers (``net_field_length_ll``, the "length-encoded integer")::

    first byte < 251   the value itself
    251                NULL (in rows: not used; treated as malformed)
    252                uint16 follows
    253                uint24 follows
    254                uint64 follows
"""

from __future__ import annotations

import struct
from typing import Protocol, overload

import numpy as np

from ..errors import MalformedEventError

MAGIC = b"\xfebin"
MAGIC_LEN = 4

#: LOG_EVENT_HEADER_LEN: the v4 common header.
COMMON_HEADER_LEN = 19
#: BINLOG_CHECKSUM_LEN
CHECKSUM_LEN = 4

# dtype of the common header, field offsets as in the module docstring.
COMMON_HEADER = np.dtype(
    [
        ("timestamp", "<u4"),
        ("type_code", "u1"),
        ("server_id", "<u4"),
        ("event_size", "<u4"),
        ("log_pos", "<u4"),
        ("flags", "<u2"),
    ]
)
assert COMMON_HEADER.itemsize == COMMON_HEADER_LEN
#: Offset of event_size within the common header.
EVENT_SIZE_OFFSET = 9

# FORMAT_DESCRIPTION_EVENT body (after the common header; read field by field in file.py).
FDE_SERVER_VERSION_LEN = 50  # ST_SERVER_VER_LEN
FDE_POST_HEADER_LENGTHS_OFFSET = 57
#: checksum_alg byte + CRC32 at the end of a 5.6.1+ FDE.
FDE_CHECKSUM_TRAILER_LEN = 1 + CHECKSUM_LEN
#: First server versions that write the checksum_alg byte (checksum_version_split).
CHECKSUM_VERSION_SPLIT_MYSQL = (5, 6, 1)
CHECKSUM_VERSION_SPLIT_MARIADB = (5, 3, 0)

# ROTATE_EVENT post-header: next file's first position (uint64); body: next file name.
ROTATE_POSITION = struct.Struct("<Q")

# QUERY_EVENT post-header (control_events.h, Query_event)::
#   0 thread_id uint32, 4 exec_time uint32, 8 db_len uint8, 9 error_code uint16,
#  11 status_vars_len uint16 (only when the post-header is 13 bytes, v4)
# then status_vars, the db name, 0x00, the statement (events.py reads it)
QUERY_POST_HEADER = struct.Struct("<IIBH")
QUERY_DB_LEN_AT = 8
QUERY_STATUS_LEN_AT = 11
#: a v4 QUERY_EVENT's post-header (with status_vars_len)
QUERY_POST_HEADER_LEN = 13
_QUERY_LENGTHS = struct.Struct("<BxxH")  # db_len, error_code (skipped), status_vars_len


def query_lengths(buf: np.ndarray | bytes, body: int) -> tuple[int, int]:
    """(db_len, status_vars_len) of a v4 QUERY_EVENT whose post-header starts at ``body``
    (the caller has checked that its 13 bytes are there)."""
    # (numpy's stubs make an array a Buffer from Python 3.12 only, when __buffer__ came: here too)
    db_len, status_len = _QUERY_LENGTHS.unpack_from(buf, body + QUERY_DB_LEN_AT)  # type: ignore[arg-type]
    return db_len, status_len

# XID_EVENT body: the InnoDB transaction id.
XID = struct.Struct("<Q")

# Rows events post-header (rows_event.h)::
#   0  table_id   uint48 (uint32 when the post-header length is 6, pre-5.1.? servers)
#   6  flags      uint16
#   8  extra_len  uint16 (version 2 only): length of the extra data *including* these 2 bytes
ROWS_HEADER_LEN_V1 = 8
ROWS_HEADER_LEN_V2 = 10
#: where extra_len is in a v2 rows event's post-header
ROWS_EXTRA_LEN_AT = 8
# TABLE_MAP post-header: table_id uint48 (or uint32 when the post-header length is 6), flags uint16.

#: the post-header length of TABLE_MAP/ROWS events that marks the old 4-byte table id
#: (MySQL 5.1.x before 5.1.4 wrote 6-byte post-headers with a 4-byte id); every later
#: server writes a 6-byte id (``Table_map_log_event``, ``TABLE_ID_LEN``)
OLD_TABLE_ID_POST_HEADER_LEN = 6


@overload
def table_id_width(post_header_len: int) -> int: ...
@overload
def table_id_width(post_header_len: np.ndarray) -> np.ndarray: ...
def table_id_width(post_header_len: int | np.ndarray) -> int | np.ndarray:
    """Bytes of the table id of a TABLE_MAP or ROWS event, from its post-header length."""
    if isinstance(post_header_len, np.ndarray):
        return np.where(post_header_len == OLD_TABLE_ID_POST_HEADER_LEN, 4, 6)
    return 4 if post_header_len == OLD_TABLE_ID_POST_HEADER_LEN else 6


_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")


class Located(Protocol):
    """What a :class:`Cursor` needs of the bytes it reads to locate an error (an ``EventSource``)."""

    def file_offset(self, offset: int) -> int: ...


class Cursor:
    """A bounds-checked reader over ``buf[start:end]`` for the small, per-event structures.

    Every read names what it reads, so a malformed event fails with what was expected,
    what was left, and the absolute file offset (``src.file_offset`` of the position in
    ``buf`` when ``src`` is given: a file, a window of it or an unpacked buffer; else
    ``base`` + position).
    """

    __slots__ = ("buf", "pos", "end", "base", "path", "event_type", "src")

    def __init__(self, buf: np.ndarray | bytes, start: int, end: int, *, base: int = 0, path: str | None = None,
                 event_type: str | None = None, src: Located | None = None) -> None:
        self.buf = buf
        self.pos = start
        self.end = end
        self.base = base
        self.path = path
        self.event_type = event_type
        self.src = src  #: what ``buf`` is the bytes of: its ``file_offset`` locates errors

    def error(self, message: str) -> MalformedEventError:
        offset = self.src.file_offset(self.pos) if self.src is not None else self.base + self.pos
        return MalformedEventError(message, path=self.path, offset=offset, event_type=self.event_type)

    def remaining(self) -> int:
        return self.end - self.pos

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.end:
            raise self.error(f"{what}: needs {n} bytes, {self.end - self.pos} left in the event")

    def take(self, n: int, what: str) -> bytes:
        self.need(n, what)
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out

    def u8(self, what: str) -> int:
        self.need(1, what)
        v = self.buf[self.pos]
        self.pos += 1
        return int(v)

    def u16(self, what: str) -> int:
        self.need(2, what)
        (v,) = _U16.unpack_from(self.buf, self.pos)  # type: ignore[arg-type]  # an array: see query_lengths
        self.pos += 2
        return v

    def u32(self, what: str) -> int:
        self.need(4, what)
        (v,) = _U32.unpack_from(self.buf, self.pos)  # type: ignore[arg-type]  # an array: see query_lengths
        self.pos += 4
        return v

    def uint(self, n: int, what: str) -> int:
        """Little-endian unsigned integer of ``n`` bytes (n <= 8)."""
        return int.from_bytes(self.take(n, what), "little")

    def packed(self, what: str) -> int:
        """A packed (length-encoded) integer, see the module docstring."""
        first = self.u8(what)
        if first < 251:
            return first
        if first == 252:
            return self.uint(2, what)
        if first == 253:
            return self.uint(3, what)
        if first == 254:
            return self.uint(8, what)
        self.pos -= 1
        raise self.error(f"{what}: packed integer starts with 0x{first:02x}, which is not a length")

    def packed_bytes(self, what: str) -> bytes:
        """A packed length followed by that many bytes."""
        n = self.packed(f"{what} length")
        return self.take(n, what)


def version_tuple(server_version: str) -> tuple[int, int, int]:
    """``"5.6.41-debug-log"`` -> (5, 6, 41); parts that are not numbers count as 0."""
    parts = []
    for piece in server_version.split("-", 1)[0].split(".")[:3]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        parts.append(int(digits) if digits else 0)
    while len(parts) < 3:
        parts.append(0)
    return (parts[0], parts[1], parts[2])
