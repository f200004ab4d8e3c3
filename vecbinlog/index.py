"""The header walk: from a byte range of a binlog to an :class:`EventIndex` of typed arrays.

Events form a chain (each header gives the size of its event, hence where the next one
starts), so finding the boundaries is a walk over ``event_size`` fields, compiled
(:mod:`vecbinlog.walk`). Everything else about the headers is then gathered for all events
at once with NumPy. What an event's FORMAT_DESCRIPTION_EVENT says of it (its post-header
length, whether it ends with a checksum, hence where its body ends and how wide a table id
is) is computed here once per event (:meth:`EventIndex.apply_formats`): every decoder reads
these columns instead of asking the formats again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from . import walk
from .layout import CHECKSUM_LEN, COMMON_HEADER_LEN, table_id_width

if TYPE_CHECKING:
    from .file import FormatDescription

__all__ = ["EventIndex", "WalkStop", "walk_headers", "code_table"]


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


def walk_headers(buf: np.ndarray, start: int, stop: int, limit: int) -> tuple[EventIndex, int, WalkStop | None]:
    """The events that start in ``[start, stop)``, their headers as columns (a compiled walk:
    :mod:`vecbinlog.walk`; ``fmt`` and ``body_end`` are set by the caller, who knows the formats).

    Parameters
    ----------
    buf : uint8 array of the whole file (a view on the mmap).
    start : offset of the first event.
    stop : the walk ends at the first event boundary at or after ``stop``.
    limit : the end of the data (the file size); no event may end past it.

    Returns
    -------
    index : the complete events' headers.
    next_offset : where the walk ended (the next event's start, or ``limit``).
    walk_stop : None, or why the walk could not go on before ``stop``.
    """
    room = max(min(stop, limit) - start, 0) // COMMON_HEADER_LEN + 1
    cols = {name: np.empty(room, dtype) for name, dtype in _HEADER_COLUMNS}
    n, pos, status, size = walk.walk_event_headers(buf, start, stop, limit, *cols.values())
    walk_stop = None
    if status == walk.HEADER_TRUNCATED:
        walk_stop = WalkStop(
            pos, f"the file ends {limit - pos} bytes into an event header of {COMMON_HEADER_LEN} bytes", "truncated"
        )
    elif status == walk.HEADER_TOO_SMALL:
        walk_stop = WalkStop(pos, f"event_size is {size}, smaller than the {COMMON_HEADER_LEN}-byte header", "malformed")
    elif status == walk.EVENT_TRUNCATED:
        walk_stop = WalkStop(pos, f"event_size is {size} but only {limit - pos} bytes are left in the file", "truncated")
    cols = {name: a[:n].copy() for name, a in cols.items()}  # the room not used is let go
    index = EventIndex(**cols, fmt=np.zeros(n, np.int32), body_end=cols["offset"] + cols["event_size"])
    return index, int(pos), walk_stop


#: the columns of the common header as the walk writes them (layout.COMMON_HEADER's fields)
_HEADER_COLUMNS = (("offset", np.int64), ("type_code", np.uint8), ("event_size", np.uint32),
                   ("timestamp", np.uint32), ("server_id", np.uint32), ("log_pos", np.uint32), ("flags", np.uint16))


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
    pos: np.ndarray | None = None
    #: int64, offset inside the decompressed TRANSACTION_PAYLOAD_EVENT, -1 for other events
    inner: np.ndarray | None = None
    #: int64, the post-header length the event's format gives its type (0 before
    #: :meth:`apply_formats`)
    post_header_len: np.ndarray | None = None
    #: bool, the event ends with a CRC32 (``body_end`` is 4 bytes before its end)
    checksum: np.ndarray | None = None
    #: int8, bytes of the table id of a TABLE_MAP or rows event (4 or 6, :func:`layout.table_id_width`)
    table_id_width: np.ndarray | None = None

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
        post_header = np.zeros((len(formats), 256), np.int64)  # (format, type code) -> length
        for f, fde in enumerate(formats):
            lengths = np.frombuffer(fde.post_header_lengths, np.uint8)[:255]  # entry i: type i + 1
            post_header[f, 1 : 1 + len(lengths)] = lengths
        self.fmt = np.asarray(fmt, np.int32)
        self.post_header_len = post_header[self.fmt, self.type_code]
        if checksum is None:
            checksum = np.array([f.has_checksum for f in formats], bool)[self.fmt]
        self.checksum = checksum
        self.table_id_width = table_id_width(self.post_header_len).astype(np.int8)
        self.body_end = self.offset + self.event_size.astype(np.int64) - CHECKSUM_LEN * self.checksum

    @classmethod
    def empty(cls) -> EventIndex:
        """No event."""
        return cls(**{name: np.zeros(0, dtype) for name, dtype in _HEADER_COLUMNS}, fmt=np.zeros(0, np.int32),
                   body_end=np.zeros(0, np.int64))

    def __len__(self) -> int:
        return len(self.offset)

    def take(self, idx: np.ndarray) -> EventIndex:
        """The events at positions ``idx`` (an int array or a boolean mask)."""
        return EventIndex(
            **{name: getattr(self, name)[idx] for name in self.__dataclass_fields__}
        )

    @classmethod
    def concat(cls, parts: list[EventIndex]) -> EventIndex:
        if not parts:
            return cls.empty()
        return cls(
            **{
                name: np.concatenate([getattr(p, name) for p in parts])
                for name in cls.__dataclass_fields__
            }
        )
