"""Events of several files gathered into one buffer, read as one event source.

A table with little in each file of an archive of small files (many tables, rotated often)
would otherwise be decoded a file at a time, in batches of a few rows, each with the fixed
costs of a batch. Its rows events (a few percent of the bytes) are copied, whole and in log
order, into one buffer that the row walk reads like a file's map; every event keeps the file
and offset it came from, so errors and ``_log_file``/``_log_pos`` name the real place.

Two uses: the rows events of a run whose pieces come from several files (:func:`gather`:
checksums checked on the files' own bytes before, the copies not checked again), and whole
small files joined into one step of a walk (:mod:`vecbinlog.log.logwalk`: an archive of small
files walked as a few large segments; ``verify_checksums`` set, so that the CRC32 of each
event is checked where and when a file's would be, on its copy, and named by its file).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import BinlogError
from ..jit import check_spans, kernel, load_word, read_only, store_word
from .file import relocated, verify_events
from .format import FormatDescription
from .headers import EventIndex
from .eventsource import EventSource

__all__ = ["Gathered", "gather"]


@kernel
def _copy_events(src, start, size, dest, at):  # pragma: no cover - compiled
    """Copy ``src[start[i]:start[i] + size[i]]`` to ``dest[at[i]:]``; the caller has checked
    every range against both buffers (the header walk placed the events inside ``src``).
    Events that follow each other in both (a whole file's) are copied as one range, 8 bytes
    a step (a byte loop ran at an eighth of memcpy's speed)."""
    i = 0
    n_events = len(start)
    while i < n_events:
        a, d, n = start[i], at[i], size[i]
        i += 1
        while i < n_events and start[i] == a + n and at[i] == d + n:
            n += size[i]
            i += 1
        k = 0
        while k + 8 <= n:
            store_word(dest, d + k, load_word(src, a + k))
            k += 8
        while k < n:
            dest[d + k] = src[a + k]
            k += 1


class Gathered:
    """The :class:`~vecbinlog.binlog.eventsource.EventSource` of events gathered from several
    files: ``buf`` holds them back to back; event ``k`` starts at ``starts[k]``, came from
    file ``file_of[k]`` (an index into ``paths``) at offset ``pos[k]``."""

    def __init__(self, buf: np.ndarray, starts: np.ndarray, pos: np.ndarray, file_of: np.ndarray,
                 paths: Sequence[str], names: Sequence[str], formats: list[FormatDescription],
                 verify_checksums: bool = False) -> None:
        self.buf = read_only(buf)
        self.verify_checksums = verify_checksums
        self._starts, self._pos, self.file_of = starts, pos, file_of
        self.paths, self.names = list(paths), list(names)
        self.path = self.paths[0]
        self.name = self.names[0]
        self._formats = formats

    @property
    def formats(self) -> list[FormatDescription]:
        """The first file's formats (events are gathered only from files of one format)."""
        return self._formats

    def verify_checksums_of(self, index: EventIndex, which: np.ndarray | None = None) -> None:
        """Check the CRC32 of events of ``index`` (those ``which`` selects) on their copies, when
        ``verify_checksums`` (else they were checked in their files before gathering)."""
        verify_events(self, index, which, self.path_at)

    def path_at(self, offset: int) -> str:
        """The path of the file the byte at ``offset`` of ``buf`` came from."""
        return self.paths[int(self.file_of[self._event_at(offset)])]

    def _event_at(self, offset: int) -> int:
        return max(int(np.searchsorted(self._starts, offset, side="right")) - 1, 0)

    def file_offset(self, offset: int) -> int:
        """Where a byte of ``buf`` is in its file."""
        k = self._event_at(offset)
        return int(self._pos[k] + offset - self._starts[k])

    def relocate(self, exc: BinlogError) -> BinlogError:
        """The same error, at the file and offset of what went wrong."""
        if exc.offset is None:
            return exc
        k = self._event_at(exc.offset)
        return relocated(exc, self.paths[int(self.file_of[k])], self.file_offset(exc.offset))


def gather(pieces: Sequence[tuple[EventSource, EventIndex]], file_numbers: Sequence[int],
           paths: Sequence[str], names: Sequence[str], verify_checksums: bool = False) -> tuple[Gathered, EventIndex]:
    """The events of ``pieces`` (``(source, events)``, in log order; piece ``k`` from file
    ``file_numbers[k]`` of ``paths``/``names``) copied into one buffer: its source, and the
    events' index in it (``offset`` and ``body_end`` moved, ``pos`` still file offsets).
    ``verify_checksums``: the copies' CRC32s are checked when asked (not checked before)."""
    index = EventIndex.concat([events for _, events in pieces])
    sizes = index.event_size.astype(np.int64)
    starts = np.zeros(len(index), np.int64)
    if len(sizes) > 1:
        np.cumsum(sizes[:-1], out=starts[1:])
    buf = np.empty(int(sizes.sum()), np.uint8)
    file_of = np.empty(len(index), np.int32)
    k = 0
    for (src, events), number in zip(pieces, file_numbers):
        n = len(events)
        size = events.event_size.astype(np.int64)
        check_spans(len(src.buf), events.offset, events.offset + size, "events gathered", src.path)
        _copy_events(src.buf, events.offset, size, buf, starts[k:k + n])
        file_of[k:k + n] = number
        k += n
    index.body_end = starts + (index.body_end - index.offset)
    index.offset = starts
    index.fmt = np.zeros(len(index), np.int32)
    source = Gathered(buf, starts, index.pos, file_of, paths, names, pieces[0][0].formats, verify_checksums)
    return source, index
