"""The header walk: from a byte range of a binlog to an :class:`EventIndex` of typed arrays.

Events form a chain (each header gives the size of its event, hence where the next one
starts), so finding the boundaries is a walk over ``event_size`` fields, compiled
(:func:`walk_event_headers`: numba, every read checked against the end of the data). Everything else about the headers is then gathered for all events
at once with NumPy. What an event's FORMAT_DESCRIPTION_EVENT says of it (its post-header
length, whether it ends with a checksum, hence where its body ends and how wide a table id
is) is computed here once per event (:meth:`EventIndex.apply_formats`): every decoder reads
these columns instead of asking the formats again.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, Sequence

import numpy as np

from ..constants import ROWS_EVENTS, event_type_name
from ..errors import BinlogError, MalformedEventError
from ..jit import check_spans, kernel, prefetch, read_only
from .spec import CHECKSUM_LEN, COMMON_HEADER_LEN, EVENT_SIZE_OFFSET, table_id_width

if TYPE_CHECKING:
    from .format import FormatDescription

__all__ = ["EventIndex", "WalkStop", "walk_headers", "walk_event_headers", "code_table", "read_uint", "raise_at", "ROWS_CODES", "ROWS_KIND"]


# -- the compiled walk ---------------------------------------------------------------------------

#: status of :func:`walk_event_headers`
HEADER_OK, HEADER_TRUNCATED, HEADER_TOO_SMALL, EVENT_TRUNCATED, HEADER_ROOM = 0, 1, 2, 3, 4
_HEADER_LEN = COMMON_HEADER_LEN
_EVENT_SIZE_AT = EVENT_SIZE_OFFSET


@kernel(inline="always")
def _u32(buf, p):  # pragma: no cover - compiled
    return (np.int64(buf[p]) | (np.int64(buf[p + 1]) << 8) | (np.int64(buf[p + 2]) << 16)
            | (np.int64(buf[p + 3]) << 24))


#: the walk has room for an event per this many bytes first (most logs' events are larger:
#: OLTP ~135 bytes on average, bulk inserts KBs), or per more when told (a file's walk:
#: :meth:`~.file.BinlogFile.segments`), then for the rest at 19 bytes each
_LIKELY_EVENT_BYTES = 64
#: bytes ahead of the header walk asked for (a hint: a prefetch never faults, even past the data)
_WALK_AHEAD = 1024


@kernel
def walk_event_headers(buf, start, stop, limit, post_header_of, width_of, crc_len,
                       offset, type_code, event_size, timestamp, server_id, log_pos, flags,
                       post_header_len, table_id_width, checksum, body_end):  # pragma: no cover
    """The events that start in ``[start, stop)``: each one's offset and common header
    (spec.py) written to the arrays after ``crc_len``, as many as they hold (``(stop - start)
    // 19 + 1`` hold them all), and what one format says of it (``post_header_of`` and
    ``width_of``: by type code; ``crc_len``: 4 with CRC32s, else 0), as
    :meth:`EventIndex.apply_formats` would (a pass over the events, not four).

    Returns ``(count, next, status, size)``: ``next`` is where the walk ended (the first
    boundary at or after ``stop``, or the event that could not be read or had no room),
    ``status`` one of HEADER_OK, HEADER_TRUNCATED (the data ends inside a header),
    HEADER_TOO_SMALL (``event_size`` under 19), EVENT_TRUNCATED (the event ends past
    ``limit``) and HEADER_ROOM (the arrays are full), and ``size`` the event_size read there.
    """
    n = 0
    pos = start
    room = len(offset)
    ahead = start  # the bytes after the walk are asked for early: each header depends on the last
    while pos < stop:
        if n == room:
            return n, pos, HEADER_ROOM, 0
        ahead = max(ahead, pos)  # (past a large event, not every line of it)
        while ahead < pos + _WALK_AHEAD:
            prefetch(buf, ahead)
            ahead += 64
        if pos + _HEADER_LEN > limit:
            return n, pos, HEADER_TRUNCATED, 0
        size = _u32(buf, pos + _EVENT_SIZE_AT)
        if size < _HEADER_LEN:
            return n, pos, HEADER_TOO_SMALL, size
        if pos + size > limit:
            return n, pos, EVENT_TRUNCATED, size
        offset[n] = pos
        timestamp[n] = _u32(buf, pos)
        type_code[n] = buf[pos + 4]
        server_id[n] = _u32(buf, pos + 5)
        event_size[n] = size
        log_pos[n] = _u32(buf, pos + 13)
        flags[n] = np.int64(buf[pos + 17]) | (np.int64(buf[pos + 18]) << 8)
        code = buf[pos + 4]
        post_header_len[n] = post_header_of[code]
        table_id_width[n] = width_of[code]
        checksum[n] = crc_len != 0
        body_end[n] = pos + size - crc_len
        n += 1
        pos += size
    return n, pos, HEADER_OK, 0


# -- the index ------------------------------------------------------------------------------------

def code_table(codes: Sequence[int] | np.ndarray) -> np.ndarray:
    """256 booleans, True at ``codes`` (event type codes, or other codes 0-255): ``table[values]``
    says which ``values`` are among them in one pass (``np.isin`` takes 4x as long on a
    segment's events: a pass per code, or a sort)."""
    table = np.zeros(256, bool)
    table[np.asarray(codes, np.int64)] = True
    return table


@dataclass(frozen=True)
class WalkStop:
    """Why a walk ended before the end of the data it was given."""

    offset: int  #: absolute offset of the event that could not be read
    reason: str  #: what was wrong, for messages
    kind: str  #: "truncated" (the file ends inside the event) or "malformed" (its size is impossible)


def walk_headers(buf: np.ndarray, start: int, stop: int, limit: int, formats: Sequence[FormatDescription] = (),
                 fmt: int = 0, event_bytes: int | None = None) -> tuple[EventIndex, int, WalkStop | None]:
    """The events that start in ``[start, stop)``, their headers as columns (a compiled walk:
    :func:`walk_event_headers`), with what ``formats[fmt]`` says of each (as
    :meth:`EventIndex.apply_formats`; no format: no post-header, no checksum; an FDE in the
    range that brings another format is for the caller to apply).

    Parameters
    ----------
    buf : uint8 array of the whole file (a view on the mmap).
    start : offset of the first event.
    stop : the walk ends at the first event boundary at or after ``stop``.
    limit : the end of the data (the file size); no event may end past it.
    event_bytes : the walk first has room for an event per this many bytes, or per 64 if
        that is more (the room not written holds no memory, but huge pages are given a block
        of more than 4 MB as it is written: a good guess keeps the block to the events; a
        block of over 32 MB is never reused by the C library, each one's pages faulted in).

    Returns
    -------
    index : the complete events' headers.
    next_offset : where the walk ended (the next event's start, or ``limit``).
    walk_stop : None, or why the walk could not go on before ``stop``.
    """
    check_spans(len(buf), start, limit, "header walk")  # (events end at ``limit`` at most: the walk checks)
    buf = read_only(buf)
    tables = _walk_tables(formats[fmt] if formats else None)
    span = max(min(stop, limit) - start, 0)
    room = span // max(event_bytes or 0, _LIKELY_EVENT_BYTES) + 64
    cols = _columns(room)
    n, pos, status, size = walk_event_headers(buf, start, stop, limit, *tables, *cols.values())
    if status == HEADER_ROOM:  # smaller events than most logs have: room for the rest at 19 bytes each
        more = {name: np.empty(max(min(stop, limit) - pos, 0) // COMMON_HEADER_LEN + 1, dtype)
                for name, dtype in _WALK_COLUMNS}
        m, pos, status, size = walk_event_headers(buf, pos, stop, limit, *tables, *more.values())
        cols = {name: np.concatenate([a[:n], more[name][:m]]) for name, a in cols.items()}
        n += m
    elif n < room // 8:  # the room not used is let go (copied: a few large events; a file's walk
        # asks for room for events a quarter of the size it saw, so a quarter is used as a rule)
        cols = {name: a[:n].copy() for name, a in cols.items()}
    else:  # views: the room never written holds no memory (the copies: 29 -> 21 ms, the OLTP file)
        cols = {name: a[:n] for name, a in cols.items()}
    walk_stop = None
    if status == HEADER_TRUNCATED:
        walk_stop = WalkStop(
            pos, f"the file ends {limit - pos} bytes into an event header of {COMMON_HEADER_LEN} bytes", "truncated"
        )
    elif status == HEADER_TOO_SMALL:
        walk_stop = WalkStop(pos, f"event_size is {size}, smaller than the {COMMON_HEADER_LEN}-byte header", "malformed")
    elif status == EVENT_TRUNCATED:
        walk_stop = WalkStop(pos, f"event_size is {size} but only {limit - pos} bytes are left in the file", "truncated")
    index = EventIndex(**cols, fmt=np.full(n, fmt, np.int32))
    return index, int(pos), walk_stop


#: the rows events (ROWS_EVENTS) as a code table, and the RowsKind of each type code (-1: not a rows event)
ROWS_CODES = code_table(sorted(ROWS_EVENTS))
ROWS_KIND = np.full(256, -1, np.int8)
for _code, (_kind, _version) in ROWS_EVENTS.items():
    ROWS_KIND[_code] = _kind


def raise_at(path: str, index: EventIndex, bad: np.ndarray, message: str,
             cls: type[BinlogError] = MalformedEventError) -> NoReturn:
    """Raise for the first event where ``bad`` is True."""
    i = int(np.flatnonzero(bad)[0])
    raise cls(
        message, path=path, offset=int(index.pos[i]), event_type=event_type_name(int(index.type_code[i]))
    )


def read_uint(buf: np.ndarray, pos: np.ndarray, nbytes: np.ndarray | int) -> np.ndarray:
    """Little-endian unsigned ints of ``nbytes`` (<= 8, per element or one for all) at ``pos``
    (a compiled gather: the 2-d NumPy form, a byte per cell, took 4-8x as long). The caller
    checks the fields against their events' ends; a read past ``buf`` raises all the same."""
    pos = np.ascontiguousarray(pos, np.int64)
    nb = np.asarray(nbytes, np.int64)
    out = np.empty(pos.shape, np.uint64)
    bad = _read_uints(buf, pos, nb.reshape(-1), 1 if nb.ndim else 0, out)
    if bad >= 0:
        raise MalformedEventError(f"a {int(nb.reshape(-1)[bad if nb.ndim else 0])}-byte field at {int(pos[bad])} "
                                  f"runs past the end of the data ({len(buf)} bytes)")
    return out


@kernel
def _read_uints(buf, pos, nbytes, step, out):  # pragma: no cover - compiled
    """:func:`read_uint` into ``out``: returns the first element that does not fit in ``buf`` (or an
    ``nbytes`` over 8), else -1."""
    n = len(buf)
    for i in range(len(pos)):
        if i + 8 < len(pos):  # fields of events far apart: each a cache miss, asked for early to overlap
            prefetch(buf, pos[i + 8])
        p = pos[i]
        w = nbytes[i * step]
        if p < 0 or w < 0 or w > 8 or p + w > n:
            return i
        v = np.uint64(0)
        for j in range(w):
            v |= np.uint64(buf[p + j]) << np.uint64(8 * j)
        out[i] = v
    return -1


#: the columns of the common header as the walk writes them (layout.COMMON_HEADER's fields)
_HEADER_COLUMNS = (("offset", np.int64), ("type_code", np.uint8), ("event_size", np.uint32),
                   ("timestamp", np.uint32), ("server_id", np.uint32), ("log_pos", np.uint32), ("flags", np.uint16))


#: no format known (the walk of a file's first event): no post-header, no checksum
_NO_FORMAT = (np.zeros(256, np.int64), np.full(256, 6, np.int8), 0)
#: the columns the walk writes: the common header's, then what the event's format says of it
_WALK_COLUMNS = _HEADER_COLUMNS + (("post_header_len", np.int64), ("table_id_width", np.int8), ("checksum", np.bool_),
                                   ("body_end", np.int64))
_WALK_WIDTHS = [np.dtype(dtype).itemsize for _, dtype in _WALK_COLUMNS]


def _columns(room: int) -> dict[str, np.ndarray]:
    """Room for ``room`` events in each of the walk's columns, carved out of one allocation: a
    segment of small events takes one large block, which glibc's malloc then keeps in its heap
    for the next (600 page faults a read of the OLTP file, not 7 500: bench/TUNING.md)."""
    sizes = [-(-room * width // 64) * 64 for width in _WALK_WIDTHS]  # each column 64-byte aligned
    block = np.empty(sum(sizes), np.uint8)
    cols: dict[str, np.ndarray] = {}
    at = 0
    for (name, dtype), size in zip(_WALK_COLUMNS, sizes):
        cols[name] = block[at:at + size].view(dtype)[:room]
        at += size
    return cols


def _walk_tables(fde: FormatDescription | None) -> tuple[np.ndarray, np.ndarray, int]:
    """What :func:`walk_event_headers` is given of a format."""
    if fde is None:
        return _NO_FORMAT
    return _tables_of(fde.post_header_lengths, fde.has_checksum)


@functools.lru_cache(maxsize=64)
def _tables_of(post_header_lengths: bytes, checksum: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """(kept: the files of an archive share their formats' facts)"""
    lengths = np.zeros(256, np.int64)
    known = np.frombuffer(post_header_lengths, np.uint8)[:255]  # entry i: type i + 1
    lengths[1 : 1 + len(known)] = known
    return lengths, table_id_width(lengths).astype(np.int8), CHECKSUM_LEN if checksum else 0


def format_tables(formats: Sequence[FormatDescription]) -> tuple[np.ndarray, np.ndarray]:
    """(format, type code) -> post-header length (int64), and -> table id bytes (int8)."""
    tables = [_walk_tables(fde) for fde in formats] or [_NO_FORMAT]
    return np.stack([t[0] for t in tables]), np.stack([t[1] for t in tables])


#: the default of an :class:`EventIndex` column its ``__post_init__`` fills in (None, typed as the
#: array it always is once the index is made)
_FILLED: Any = None


@dataclass
class EventIndex:
    """The common headers of a run of events, as columns.

    All arrays have shape (n,) and are in file order.
    """

    offset: np.ndarray  #: int64, absolute offset of each event
    type_code: np.ndarray  #: uint8, EventType code
    event_size: np.ndarray  #: uint32
    timestamp: np.ndarray  #: uint32, seconds since the epoch (UTC)
    server_id: np.ndarray  #: uint32
    log_pos: np.ndarray  #: uint32, end position in the source binlog
    flags: np.ndarray  #: uint16
    fmt: np.ndarray  #: int32, index of the FORMAT_DESCRIPTION that governs the event
    body_end: np.ndarray  #: int64, end of the event minus its checksum
    #: int64, where the event is in the *file*: ``offset`` for events read from the file,
    #: the offset of the enclosing event for events unpacked from a compressed one
    pos: np.ndarray = _FILLED
    #: int64, offset inside the decompressed TRANSACTION_PAYLOAD_EVENT, -1 for other events
    inner: np.ndarray = _FILLED
    #: int64, the post-header length the event's format gives its type (0 before
    #: :meth:`apply_formats`)
    post_header_len: np.ndarray = _FILLED
    #: bool, the event ends with a CRC32 (``body_end`` is 4 bytes before its end)
    checksum: np.ndarray = _FILLED
    #: int8, bytes of the table id of a TABLE_MAP or rows event (4 or 6, :func:`layout.table_id_width`)
    table_id_width: np.ndarray = _FILLED

    def __post_init__(self) -> None:
        n = len(self.offset)
        if self.pos is None:
            self.pos = self.offset
        if self.inner is None:
            self.inner = np.full(n, -1, np.int64)
        if self.post_header_len is None:
            self.post_header_len = np.zeros(n, np.int64)
        if self.checksum is None:
            self.checksum = np.zeros(n, bool)
        if self.table_id_width is None:
            self.table_id_width = np.full(n, 6, np.int8)

    def apply_formats(self, formats: Sequence[FormatDescription], fmt: np.ndarray,
                      checksum: np.ndarray | None = None) -> None:
        """Set which format governs each event (``fmt``, indices into ``formats``) and what
        follows from it: ``post_header_len``, ``checksum``, ``table_id_width`` and ``body_end``.

        ``checksum``: per event, when it is not the format's (events unpacked from a
        compressed one carry none).
        """
        post_header, widths = format_tables(formats)
        self.fmt = np.asarray(fmt, np.int32)
        has_checksum = np.array([f.has_checksum for f in formats], bool)
        one = len(self.fmt) == 0 or bool((self.fmt == self.fmt[0]).all())
        if one:  # the usual segment: one format, a look-up by type code (not a 2-d gather)
            f = int(self.fmt[0]) if len(self.fmt) else 0
            self.post_header_len = post_header[f][self.type_code]
            self.table_id_width = widths[f][self.type_code]
        else:
            self.post_header_len = post_header[self.fmt, self.type_code]
            self.table_id_width = widths[self.fmt, self.type_code]
        if checksum is None:
            checksum = np.full(len(self.fmt), has_checksum[int(self.fmt[0])]) if one and len(self.fmt) else has_checksum[self.fmt]
        self.checksum = checksum
        self.body_end = self.offset + self.event_size.astype(np.int64)
        if checksum.any():
            self.body_end -= CHECKSUM_LEN * checksum

    @classmethod
    def empty(cls) -> EventIndex:
        """No event."""
        return cls(**{name: np.zeros(0, dtype) for name, dtype in _HEADER_COLUMNS}, fmt=np.zeros(0, np.int32),
                   body_end=np.zeros(0, np.int64))

    def __len__(self) -> int:
        return len(self.offset)

    def take(self, idx: np.ndarray | slice) -> EventIndex:
        """The events at positions ``idx`` (an int array, a boolean mask, or a slice: copied too,
        so that they hold no larger index); ``pos`` stays the same array as ``offset`` where it
        was (a file's own events: one gather less)."""
        same = self.pos is self.offset
        own = isinstance(idx, slice)
        if isinstance(idx, np.ndarray) and idx.dtype == np.bool_:  # one pass over the mask, not one per column
            idx = np.flatnonzero(idx)
        return EventIndex(**{name: getattr(self, name)[idx].copy() if own else getattr(self, name)[idx]
                             for name in self.__dataclass_fields__ if not (same and name == "pos")})

    @classmethod
    def concat(cls, parts: list[EventIndex]) -> EventIndex:
        if not parts:
            return cls.empty()
        same = all(p.pos is p.offset for p in parts)
        return cls(
            **{
                name: np.concatenate([getattr(p, name) for p in parts])
                for name in cls.__dataclass_fields__ if not (same and name == "pos")
            }
        )
