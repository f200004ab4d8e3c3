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

A run of a joined step that an open log keeps for later reads (planned runs) need not keep the
copy of every file: :meth:`Gathered.in_files` gives its events where they are in their own
files (:class:`JoinedFiles`), and only they are gathered again when the run is decoded.
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

__all__ = ["Gathered", "JoinedFiles", "gather"]


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
                 verify_checksums: bool = False, origins: JoinedFiles | None = None,
                 origin_offset: np.ndarray | None = None) -> None:
        self.buf = read_only(buf)
        self.verify_checksums = verify_checksums
        self._starts, self._pos, self.file_of = starts, pos, file_of
        self.paths, self.names = list(paths), list(names)
        self.path = self.paths[0]
        self.name = self.names[0]
        self._formats = formats
        #: the sources the events were copied from, and each event's offset in its own (kept for
        #: :meth:`in_files`; None: not kept)
        self.origins, self._origin_offset = origins, origin_offset

    def in_files(self, events: EventIndex) -> tuple[JoinedFiles, EventIndex]:
        """``events`` (of this buffer) where they are in the sources they were copied from: their
        :class:`JoinedFiles`, and the index with ``offset``/``body_end`` in those sources."""
        if self.origins is None or self._origin_offset is None:
            raise ValueError("the sources of these events were not kept (gather(keep_origins=True))")
        k = np.searchsorted(self._starts, events.offset)
        out = events.take(slice(None))
        out.offset = self._origin_offset[k]
        out.body_end = out.offset + (events.body_end - events.offset)
        return self.origins, out

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
           paths: Sequence[str], names: Sequence[str], verify_checksums: bool = False,
           keep_origins: bool = False) -> tuple[Gathered, EventIndex]:
    """The events of ``pieces`` (``(source, events)``, in log order; piece ``k`` from file
    ``file_numbers[k]`` of ``paths``/``names``) copied into one buffer: its source, and the
    events' index in it (``offset`` and ``body_end`` moved, ``pos`` still file offsets).
    ``verify_checksums``: the copies' CRC32s are checked when asked (not checked before).
    ``keep_origins``: the source keeps the pieces' sources and where each event is in its own,
    for :meth:`Gathered.in_files` (each piece a file of its own: ``file_numbers`` its index)."""
    index = EventIndex.concat([events for _, events in pieces])
    origin_offset = index.offset if keep_origins else None  # (replaced below, not changed: no copy)
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
    origins = None
    if keep_origins:
        origins = JoinedFiles([src for src, _ in pieces], paths, names, verify_checksums)
    source = Gathered(buf, starts, index.pos, file_of, paths, names, pieces[0][0].formats, verify_checksums,
                      origins, origin_offset)
    return source, index


class JoinedFiles:
    """The files of a step of small files joined, without their joined copy: each file's own
    source (``sources[k]``: file ``k`` of ``paths``/``names``). A run's events there
    (:meth:`Gathered.in_files`) are copied into a buffer of their own when it is decoded
    (:meth:`gather`), their CRC32s checked on that copy when ``verify_checksums``, as on the
    joined one."""

    def __init__(self, sources: Sequence[EventSource], paths: Sequence[str], names: Sequence[str],
                 verify_checksums: bool) -> None:
        self.sources, self.paths, self.names = list(sources), list(paths), list(names)
        self.verify_checksums = verify_checksums

    def gather(self, events: EventIndex, file_of: np.ndarray) -> tuple[Gathered, EventIndex]:
        """The events (in log order; ``file_of[i]``: the file of event ``i``) copied into one
        buffer, as :func:`gather` does, with the numbers and names of all the files kept."""
        cuts = np.flatnonzero(file_of[1:] != file_of[:-1]) + 1
        bounds = [0, *cuts.tolist(), len(events)]
        numbers = [int(file_of[a]) for a in bounds[:-1]]
        pieces = [(self.sources[k], events.take(slice(a, b))) for k, a, b in zip(numbers, bounds, bounds[1:])]
        return gather(pieces, numbers, self.paths, self.names, verify_checksums=self.verify_checksums)
