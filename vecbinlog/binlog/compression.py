"""Compressed events: unpacked into the plain events they stand for, then decoded as usual.

Layouts::

    TRANSACTION_PAYLOAD_EVENT (40)      MySQL 8.0.20+, binlog_transaction_compression=ON
        body     (right after the common header, whatever the FDE's post-header length)
                 fields, each: type (packed int), length (packed int), value (that many bytes,
                 a packed int): 1 payload size, 2 compression type (0 ZSTD, 255 NONE),
                 3 uncompressed size; type 0 ends the fields
                 then the payload: a whole transaction's events (BEGIN, TABLE_MAPs, rows
                 events, XID) back to back, each with its common header and *no* checksum
        (libs/mysql/binlog/event/control_events.h, Transaction_payload_event;
         codecs/binary.cpp, Transaction_payload)

    QUERY_COMPRESSED_EVENT (165)        MariaDB 10.2+, log_bin_compress=ON
        a QUERY_EVENT whose statement is a compressed block
    *_ROWS_COMPRESSED_EVENT (166-171)   166-168 stand for rows events v1 (23-25),
                                        169-171 for v2 (30-32)
        a rows event whose row images (everything after the column bitmaps) are a
        compressed block
    compressed block
        header   1 byte: 0x80 | algorithm << 4 | n   (algorithm 0 = zlib; n = 1..4)
        length   n bytes, big-endian: the uncompressed size
        data     a zlib stream
        (sql/log_event.cc, binlog_buf_compress / binlog_buf_uncompress)

A segment that holds compressed events is rewritten as a new buffer in which each
compressed event is replaced by the plain events it stands for; the event index of that
buffer keeps, for every event, where it is in the file (``pos``: the compressed event's
offset) and, for events from a transaction payload, its offset inside the payload
(``inner``). Plain events are copied unchanged. Decompression is per event by nature
(one codec call per compressed event); nothing is done per row.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..constants import EventType, event_type_name
from ..errors import BinlogError, MalformedEventError, UnsupportedError
from ..jit import read_only
from .file import relocated
from .format import FormatDescription
from .headers import EventIndex, code_table, walk_headers
from .eventsource import EventSource
from .spec import (
    COMMON_HEADER_LEN,
    EVENT_SIZE_OFFSET,
    QUERY_POST_HEADER_LEN,
    ROWS_EXTRA_LEN_AT,
    ROWS_HEADER_LEN_V2,
    Cursor,
    query_lengths,
)

__all__ = ["COMPRESSED_EVENTS", "Unpacked", "unpack_segment", "mariadb_plain_event", "payload_info"]

#: compressed event type -> the plain event type it stands for (MariaDB numbers them so
#: that ``code - WRITE_ROWS_COMPRESSED_EVENT + WRITE_ROWS_EVENT`` holds; log_event.h)
MARIADB_COMPRESSED: dict[int, int] = {
    EventType.QUERY_COMPRESSED_EVENT: EventType.QUERY_EVENT,
    EventType.WRITE_ROWS_COMPRESSED_EVENT_V1: EventType.WRITE_ROWS_EVENT_V1,
    EventType.UPDATE_ROWS_COMPRESSED_EVENT_V1: EventType.UPDATE_ROWS_EVENT_V1,
    EventType.DELETE_ROWS_COMPRESSED_EVENT_V1: EventType.DELETE_ROWS_EVENT_V1,
    EventType.WRITE_ROWS_COMPRESSED_EVENT: EventType.WRITE_ROWS_EVENT,
    EventType.UPDATE_ROWS_COMPRESSED_EVENT: EventType.UPDATE_ROWS_EVENT,
    EventType.DELETE_ROWS_COMPRESSED_EVENT: EventType.DELETE_ROWS_EVENT,
}
COMPRESSED_EVENTS = frozenset({EventType.TRANSACTION_PAYLOAD_EVENT, *MARIADB_COMPRESSED})
_COMPRESSED = code_table(sorted(COMPRESSED_EVENTS))

# Transaction_payload_event field types and compression types (control_events.h)
_PAYLOAD_END_MARK = 0
_PAYLOAD_SIZE = 1
_PAYLOAD_COMPRESSION_TYPE = 2
_PAYLOAD_UNCOMPRESSED_SIZE = 3
_ZSTD = 0
_NONE = 255

#: A segment's compressed events may unpack to at most this many times their own size
#: (plus MIN_UNPACK_BUDGET): real zstd/zlib ratios on row data stay far below it; a
#: hostile event claiming more would only make the reader allocate without bound.
MAX_UNPACK_RATIO = 1024
MIN_UNPACK_BUDGET = 64 << 20


class Unpacked:
    """The :class:`~vecbinlog.binlog.eventsource.EventSource` of a segment whose compressed events were
    unpacked: decoding reads ``buf`` like a file's map; errors name the real file and the
    compressed event's offset. Checksums were verified on the file's bytes before unpacking
    (unpacked events have none).

    ``buf`` is made of pieces: piece ``k`` starts at ``starts[k]`` and comes from the file at
    ``pos[k]``, either copied (plain events, each byte at its own file offset) or unpacked
    (every byte located at the compressed event).
    """

    verify_checksums = False

    def __init__(self, file: EventSource, buf: np.ndarray, starts: np.ndarray, pos: np.ndarray, copied: np.ndarray):
        self.file = file
        self.buf = read_only(buf)  # (see jit.read_only)
        self.path = file.path
        self.name = file.name
        self._starts, self._pos, self._copied = starts, pos, copied

    @property
    def formats(self) -> list[FormatDescription]:
        return self.file.formats

    def verify_checksums_of(self, index: EventIndex, which: np.ndarray | None = None) -> None:
        """Nothing to do: the compressed events' checksums were checked before unpacking."""

    def file_offset(self, offset: int) -> int:
        """Where a byte of ``buf`` is in the file: itself (plain events copied), or the
        compressed event it came from."""
        k = int(np.searchsorted(self._starts, offset, side="right")) - 1
        return int(self._pos[k] + (offset - self._starts[k]) * self._copied[k])

    def relocate(self, exc: BinlogError) -> BinlogError:
        """The same error, at the file offset of what went wrong (not the unpacked buffer's)."""
        if exc.offset is None:
            return exc
        copied = self._copied[int(np.searchsorted(self._starts, exc.offset, side="right")) - 1]
        return relocated(exc, self.path, self.file_offset(exc.offset), "" if copied else " (in a compressed event)")


@dataclass
class _Piece:
    """A run of the new buffer: plain events copied from the file, or unpacked ones."""

    start: int  #: offset in the new buffer
    pos: int  #: offset in the file of the (first) event it comes from
    fmt: int
    payload: bool  #: events from a transaction payload (their offset inside it is kept)
    checksum: bool  #: the events carry their 4-byte checksum
    copied: bool  #: plain events copied from the file (each keeps its own offset)


def unpack_segment(file: EventSource, index: EventIndex) -> tuple[Unpacked, EventIndex] | None:
    """Replace the compressed events of ``index`` by the events they stand for.

    Returns None when there are none (the common case: nothing is copied).
    """
    comp = _COMPRESSED[index.type_code]
    if not comp.any():
        return None
    file.verify_checksums_of(index, comp)
    chunks: list[bytes | memoryview] = []
    pieces: list[_Piece] = []
    mem = file.buf.data
    size = 0
    budget = MAX_UNPACK_RATIO * int(index.event_size[comp].astype(np.int64).sum()) + MIN_UNPACK_BUDGET
    run_start = None  # index of the first event of the current run of plain events

    def flush_run(upto: int) -> None:
        nonlocal size, run_start
        if run_start is None:
            return
        a, b = int(index.offset[run_start]), int(index.offset[upto - 1] + index.event_size[upto - 1])
        fmt = index.fmt[run_start : upto]
        # one piece per run of events under the same format (relay logs switch formats)
        cuts = [run_start, *(run_start + 1 + np.flatnonzero(np.diff(fmt))).tolist(), upto]
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            pieces.append(_Piece(size + int(index.offset[lo]) - a, int(index.pos[lo]), int(index.fmt[lo]), False,
                                 bool(index.checksum[lo]), True))
        chunks.append(mem[a:b])
        size += b - a
        run_start = None

    for i in range(len(index)):
        if not comp[i]:
            if run_start is None:
                run_start = i
            continue
        flush_run(i)
        off, code, f = int(index.offset[i]), int(index.type_code[i]), int(index.fmt[i])
        end = int(index.body_end[i])
        if code == EventType.TRANSACTION_PAYLOAD_EVENT:
            data = _payload(file, off, end, budget - size)
            pieces.append(_Piece(size, int(index.pos[i]), f, True, False, False))
        else:
            data = _mariadb_event(file, off, end, code, int(index.post_header_len[i]), budget - size)
            pieces.append(_Piece(size, int(index.pos[i]), f, False, False, False))
        chunks.append(data)
        size += len(data)
    flush_run(len(index))

    buf = np.frombuffer(b"".join(chunks), np.uint8)
    out, _, stop = walk_headers(buf, 0, len(buf), len(buf))
    if stop is not None:
        # every plain event was whole in the file: the fault is in an unpacked payload
        starts = np.array([p.start for p in pieces], np.int64)
        bad = int(np.searchsorted(starts, stop.offset, side="right") - 1)
        raise MalformedEventError(
            f"the decompressed payload does not hold whole events: {stop.reason}",
            path=file.path, offset=pieces[bad].pos, event_type=event_type_name(int(EventType.TRANSACTION_PAYLOAD_EVENT)),
        )
    starts = np.array([p.start for p in pieces], np.int64)
    pos = np.array([p.pos for p in pieces], np.int64)
    copied = np.array([p.copied for p in pieces], bool)
    offsets = out.offset
    k = np.searchsorted(starts, offsets, side="right") - 1
    p_pos = pos[k]
    p_payload = np.array([p.payload for p in pieces], bool)[k]
    p_copied = copied[k]
    rel = offsets - starts[k]
    out.pos = np.where(p_copied, p_pos + rel, p_pos)
    out.inner = np.where(p_payload, rel, -1)
    out.apply_formats(file.formats, np.array([p.fmt for p in pieces], np.int32)[k],
                      np.array([p.checksum for p in pieces], bool)[k])
    if p_payload.any():
        _check_payload_events(file, out, p_payload)
    return Unpacked(file, buf, starts, pos, copied), out


def payload_fields(file: EventSource, off: int, end: int) -> tuple[dict[int, int], int]:
    """The fields of the TRANSACTION_PAYLOAD_EVENT at ``off`` (``{field type: value}``) and
    where its payload starts."""
    name = "TRANSACTION_PAYLOAD_EVENT"
    # The fields start right after the common header: the FDE's post-header length for this
    # type (40) is the most the fields may take, not a fixed block (the server reads them so).
    cur = Cursor(file.buf, off + COMMON_HEADER_LEN, end, path=file.path, src=file, event_type=name)
    fields: dict[int, int] = {}
    while True:
        kind = cur.packed("payload field type")
        if kind == _PAYLOAD_END_MARK:
            break
        length = cur.packed("payload field length")
        value = Cursor(file.buf, cur.pos, cur.pos + length, path=file.path, src=file, event_type=name)
        cur.need(length, "payload field value")
        fields[kind] = value.packed("payload field value")
        cur.pos += length
    return fields, cur.pos


def payload_info(file: EventSource, off: int, end: int) -> str:
    """What ``SHOW BINLOG EVENTS`` says of a TRANSACTION_PAYLOAD_EVENT
    (Transaction_payload_log_event::pack_info)."""
    fields, _ = payload_fields(file, off, end)
    compression = fields.get(_PAYLOAD_COMPRESSION_TYPE, _NONE)
    kind = {_ZSTD: "ZSTD", _NONE: "NONE"}.get(compression, str(compression))
    return f"compression='{kind}', decompressed_size={fields.get(_PAYLOAD_UNCOMPRESSED_SIZE, 0)} bytes"


def _payload(file: EventSource, off: int, end: int, budget: int) -> bytes:
    """The decompressed payload of the TRANSACTION_PAYLOAD_EVENT at ``off``."""
    name = "TRANSACTION_PAYLOAD_EVENT"
    fields, start = payload_fields(file, off, end)
    compression = fields.get(_PAYLOAD_COMPRESSION_TYPE, _NONE)
    payload = file.buf.data[start:end]
    declared = fields.get(_PAYLOAD_SIZE)
    if declared is not None and declared != len(payload):
        raise MalformedEventError(
            f"payload size field says {declared} bytes, the event holds {len(payload)}",
            path=file.path, offset=file.file_offset(off), event_type=name,
        )
    if compression == _NONE:
        return bytes(payload)
    if compression != _ZSTD:
        raise UnsupportedError(
            f"compression type {compression}; MySQL writes 0 (ZSTD) or 255 (NONE)",
            path=file.path, offset=file.file_offset(off), event_type=name,
        )
    size = fields.get(_PAYLOAD_UNCOMPRESSED_SIZE)
    if size is None:
        raise MalformedEventError("no uncompressed size field", path=file.path, offset=file.file_offset(off), event_type=name)
    _check_budget(file, off, name, size, budget)
    try:
        return pa.Codec("zstd").decompress(payload, decompressed_size=size, asbytes=True)
    except (OSError, pa.ArrowException) as exc:
        raise MalformedEventError(
            f"zstd payload does not decompress to its declared {size} bytes ({exc})",
            path=file.path, offset=file.file_offset(off), event_type=name,
        ) from exc


def _check_budget(file: EventSource, off: int, name: str, size: int, budget: int) -> None:
    if size > budget:
        raise MalformedEventError(
            f"declares {size} uncompressed bytes, more than this segment's compressed events may unpack to "
            f"({MAX_UNPACK_RATIO}x their size + {MIN_UNPACK_BUDGET >> 20} MiB)",
            path=file.path, offset=file.file_offset(off), event_type=name,
        )


def mariadb_plain_event(file: EventSource, off: int, end: int, code: int, post_header_len: int) -> Unpacked:
    """The plain event a MariaDB compressed event at ``off`` stands for (its header says the
    plain type; no checksum), at offset 0 of the returned source's ``buf``."""
    data = _mariadb_event(file, off, end, code, post_header_len, MAX_UNPACK_RATIO * (end - off) + MIN_UNPACK_BUDGET)
    return Unpacked(file, np.frombuffer(data, np.uint8), np.zeros(1, np.int64),
                    np.array([file.file_offset(off)], np.int64), np.zeros(1, bool))


def _mariadb_event(file: EventSource, off: int, end: int, code: int, ph: int, budget: int) -> bytes:
    """The plain event (header, post-header of ``ph`` bytes, bitmaps, decompressed data; no checksum)."""
    name = event_type_name(code)
    buf = file.buf
    cur = Cursor(buf, off + COMMON_HEADER_LEN, end, path=file.path, src=file, event_type=name)
    cur.take(ph, "post-header")
    if code == EventType.QUERY_COMPRESSED_EVENT:
        if ph < QUERY_POST_HEADER_LEN:
            raise cur.error(f"post-header of {ph} bytes; a query event has {QUERY_POST_HEADER_LEN}")
        db_len, status_len = query_lengths(buf, off + COMMON_HEADER_LEN)
        cur.take(status_len + db_len + 1, "status variables and database name")
    else:
        if ph == ROWS_HEADER_LEN_V2:  # v2: extra data, its length counting its own 2 bytes
            at = off + COMMON_HEADER_LEN + ROWS_EXTRA_LEN_AT
            extra = int(buf[at]) | int(buf[at + 1]) << 8
            cur.take(max(extra - 2, 0), "extra row data")
        width = cur.packed("column count")
        n_bitmaps = 2 if MARIADB_COMPRESSED[code] in (EventType.UPDATE_ROWS_EVENT_V1, EventType.UPDATE_ROWS_EVENT) else 1
        cur.take(n_bitmaps * ((width + 7) // 8), "column bitmaps")
    prefix_end = cur.pos
    head = cur.u8("compressed block header")
    if not head & 0x80 or (head >> 4) & 0x07 != 0 or not 1 <= head & 0x07 <= 4:
        raise cur.error(f"compressed block header is 0x{head:02x}; expected 0x81..0x84 (zlib)")
    size = int.from_bytes(cur.take(head & 0x07, "uncompressed length"), "big")
    _check_budget(file, off, name, size, budget)
    d = zlib.decompressobj()
    try:
        data = d.decompress(bytes(buf[cur.pos : end]), size)
    except zlib.error as exc:
        raise MalformedEventError(f"zlib data does not decompress ({exc})", path=file.path, offset=file.file_offset(off), event_type=name) from exc
    if len(data) != size or not d.eof:
        raise MalformedEventError(
            f"zlib data decompresses to {'more than ' if not d.eof and len(data) == size else ''}{len(data)} bytes, "
            f"the block declares {size}",
            path=file.path, offset=file.file_offset(off), event_type=name,
        )
    header = bytearray(buf[off : off + COMMON_HEADER_LEN])
    header[4] = MARIADB_COMPRESSED[code]
    body = bytes(buf[off + COMMON_HEADER_LEN : prefix_end])
    total = COMMON_HEADER_LEN + len(body) + len(data)
    header[EVENT_SIZE_OFFSET : EVENT_SIZE_OFFSET + 4] = total.to_bytes(4, "little")
    return bytes(header) + body + data


def _check_payload_events(file: EventSource, index: EventIndex, inner: np.ndarray) -> None:
    """Events inside a payload are a transaction's: no FDE, ROTATE, nor another payload."""
    bad = inner & np.isin(index.type_code, [EventType.FORMAT_DESCRIPTION_EVENT, EventType.ROTATE_EVENT,
                                             EventType.TRANSACTION_PAYLOAD_EVENT])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise MalformedEventError(
            f"a transaction payload holds a {event_type_name(int(index.type_code[i]))}",
            path=file.path, offset=int(index.pos[i]), event_type="TRANSACTION_PAYLOAD_EVENT",
        )
