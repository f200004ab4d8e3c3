"""One binlog file: its bytes (a byte source), the magic, the FORMAT_DESCRIPTION_EVENTs, checksums.

A local file is mapped once and never copied; everything downstream works on views of it.
A file in object storage, or a compressed one, is read a window at a time
(:mod:`vecbinlog.binlog.sources`). Either way a file is read as a sequence of *segments* (runs of
whole events of about a given byte size) so that memory stays bounded on files of any size.

Every decoder reads a segment's events through one typed protocol, :class:`~vecbinlog.binlog.eventsource.EventSource`,
whose bytes never change once it is made (a reader on any thread holds what it reads, also
after the file is closed):

==========================  =====================================================  ============
event source                its ``buf``                                            offsets
==========================  =====================================================  ============
:class:`Window`             the whole file (memory-mapped, or given as bytes:      file - base
                            ``BinlogFile.whole``, base 0), or one window of a
                            file read in windows (object storage, a compressed
                            file: :mod:`vecbinlog.binlog.sources`)
``compression.Unpacked``    a segment whose compressed events were unpacked        mapped back
                                                                                   per event
``gathered.Gathered``       events of several files copied into one buffer         per event
==========================  =====================================================  ============
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import zlib
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..constants import EventType, LogEventFlag, event_type_name
from ..errors import (
    BinlogError,
    ChecksumError,
    ClosedError,
    CorruptArchiveError,
    EncryptedBinlogError,
    MalformedEventError,
    NotABinlogError,
    TruncatedError,
    TruncatedWarning,
    UnsupportedError,
    UnsupportedVersionError,
    warn,
)
from ..jit import read_only
from ..pools import TaskGroup
from .checksum import first_mismatch
from .eventsource import EventSource
from .format import FormatDescription, parse_format_description
from .headers import EventIndex, WalkStop, walk_headers
from .locations import is_remote
from .sources import (
    FILES_AHEAD,
    FIRST_WINDOW,
    ByteSource,
    MappedSource,
    MemorySource,
    open_source,
)
from .spec import CHECKSUM_LEN, COMMON_HEADER_LEN, MAGIC, MAGIC_LEN

__all__ = ["BinlogFile", "Segment", "Window", "relocated", "verify_events"]

#: Default ``max_event_bytes``: a server sends no packet over ``max_allowed_packet``, 1 GiB at
#: most (MySQL and MariaDB), nor writes a larger event; ``mysqlbinlog --max-allowed-packet``
#: refuses larger ones by the same default
DEFAULT_MAX_EVENT_BYTES = 1 << 30

#: Default segment size: large enough that NumPy calls are amortised over many events,
#: small enough that a segment's index and decoded columns stay well under the 512 MB budget.
DEFAULT_SEGMENT_BYTES = 32 * 1024 * 1024


def relocated(exc: BinlogError, path: str, offset: int, note: str = "") -> BinlogError:
    """``exc`` moved to ``offset`` of ``path`` (``note`` added to its message); errors that
    carry no offset in a buffer (checksum, truncation...) are returned as they are."""
    if exc.offset is None or type(exc) not in (MalformedEventError, UnsupportedError):
        return exc
    return type(exc)(exc.message + note, path=path, offset=offset, event_type=exc.event_type)


#: a file's first segment of at least SAMPLE_FROM_BYTES is walked once over its first
#: SAMPLE_BYTES, for the size of its events (see :meth:`BinlogFile._event_bytes_at`)
SAMPLE_FROM_BYTES = 4 << 20
SAMPLE_BYTES = 128 << 10


@dataclass
class Segment:
    """A run of whole events of one file, with their headers as columns.

    ``src`` holds the events' bytes: the file itself when it is memory-mapped (``index.offset``
    is then the file offset), else a :class:`Window` of the file (``index.offset`` is the
    position in ``src.buf``; ``index.pos`` is always the file offset).
    """

    file: BinlogFile
    src: EventSource
    index: EventIndex
    start: int  #: file offset of the first event
    end: int  #: file offset after the last event


class BinlogFile:
    """A binlog file: a local file (memory-mapped), an object in storage, or a compressed file
    (see :mod:`vecbinlog.binlog.sources`).

    Parameters
    ----------
    path : the file: a local path, or a URI (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``,
        ``file://``), or a path inside ``filesystem``.
    strict : raise :class:`TruncatedError` at a truncated last event instead of warning.
    verify_checksums : check the CRC32 of every event that is decoded.
    filesystem : a ``pyarrow.fs.FileSystem`` (or an fsspec filesystem) ``path`` is in.
    max_event_bytes : the largest event read (default 1 GiB, the largest packet a server
        sends: ``max_allowed_packet``, as ``mysqlbinlog --max-allowed-packet``); a larger
        ``event_size`` is a :class:`MalformedEventError` before any of it is read.
    truncated_warning : warn (once) when the file ends inside an event (False: the walk stops
        there without a word; an index of a file still being written goes to its last
        complete transaction).
    tasks : the task group of the file's owner (an open log): the source's background work
        (pages let go of, reads ahead) belongs to it too, and ends when either closes.
    """

    #: file offset of ``buf[0]``: a memory-mapped file's ``buf`` is the whole file
    base = 0

    def __init__(self, path: str | os.PathLike[str] | ByteSource, *, strict: bool = False,
                 verify_checksums: bool = True, filesystem: Any = None,
                 max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES, truncated_warning: bool = True,
                 tasks: TaskGroup | None = None):
        if not isinstance(max_event_bytes, int) or max_event_bytes < COMMON_HEADER_LEN:
            raise ValueError(f"max_event_bytes must be an integer of at least {COMMON_HEADER_LEN}, "
                             f"not {max_event_bytes!r}")
        self.source: ByteSource = (open_source(path, filesystem, tasks=tasks) if isinstance(path, (str, os.PathLike))
                                   else path)  # a source already open
        self.path = self.source.path
        self.name = self.source.name
        self.strict = strict
        self.verify_checksums = verify_checksums
        self.max_event_bytes = max_event_bytes
        #: the event source of the whole file, when its bytes are all there (memory-mapped, or
        #: given as bytes): every segment's; None when it is read in windows (a Window a segment)
        self.whole: Window | None = (Window(self, self.source.buf, 0)
                                     if isinstance(self.source, (MappedSource, MemorySource)) else None)
        self.closed = False
        self.walk_stop: WalkStop | None = None
        #: a quarter of the average size of the events of the last segment walked: the next walk's room
        self._event_bytes: int | None = None
        self._warned = not truncated_warning  # (said already: not said)
        try:
            head, _ = self.source.window(0, FIRST_WINDOW, FIRST_WINDOW)
            if len(head) < MAGIC_LEN:
                self._ended_early(0, fatal=True)
                raise NotABinlogError(
                    f"file has {len(head)} bytes; a binlog starts with the 4 magic bytes fe 62 69 6e",
                    path=self.path, offset=0,
                )
            magic = bytes(head[:MAGIC_LEN])
            if magic != MAGIC:
                raise NotABinlogError(
                    f"magic bytes are {magic.hex(' ')}, expected fe 62 69 6e", path=self.path, offset=0
                )
            self.formats: list[FormatDescription] = [self._first_format(head)]
        except BaseException:
            self.close()
            raise

    @property
    def size(self) -> int | None:
        """The file's bytes (decompressed bytes for a compressed file; None until it was read to its end)."""
        return self.source.size

    # -- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        """Release the file: its source closes (its background reads ended first). The event
        sources of its segments hold their own bytes: a memory map stays mapped until the last
        of them goes. A walk of a closed file raises :class:`~vecbinlog.errors.ClosedError`."""
        self.closed = True
        self.whole = None
        self.source.close()

    def __enter__(self) -> BinlogFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        fde = self.formats[0]
        size = "size unknown" if self.size is None else f"{self.size} bytes"
        return f"BinlogFile({self.path!r}, {size}, {fde.server_version}, checksum {fde.checksum_name})"

    # -- the FDE -----------------------------------------------------------------------
    def _first_format(self, head: np.ndarray) -> FormatDescription:
        first, _, stop = walk_headers(head, MAGIC_LEN, MAGIC_LEN + 1, len(head))
        if len(first) == 0 and stop is not None and stop.kind == "truncated" and not self.source.at_end(len(head)):
            need = _event_size_at(head, MAGIC_LEN)
            self._check_size(head, MAGIC_LEN, need, MAGIC_LEN)
            head, _ = self.source.window(0, MAGIC_LEN + max(need, COMMON_HEADER_LEN))  # a larger FDE than usual
            first, _, stop = walk_headers(head, MAGIC_LEN, MAGIC_LEN + 1, len(head))
        if len(first) == 0:
            assert stop is not None
            self._ended_early(stop.offset, fatal=True)
            if len(head) == MAGIC_LEN:
                raise TruncatedError(
                    "the file holds only the magic bytes, no FORMAT_DESCRIPTION_EVENT",
                    path=self.path, offset=MAGIC_LEN,
                )
            cls = TruncatedError if stop.kind == "truncated" else MalformedEventError
            raise cls(f"first event: {stop.reason}", path=self.path, offset=stop.offset)
        type_code = int(first.type_code[0])
        size = int(first.event_size[0])
        self._check_size(head, MAGIC_LEN, size, MAGIC_LEN)
        if type_code == EventType.START_EVENT_V3:
            raise UnsupportedVersionError(
                "the file starts with START_EVENT_V3: a binlog v1/v3 written by MySQL 4.x or older; "
                "only v4 (MySQL 5.0+, MariaDB) is supported",
                path=self.path, offset=MAGIC_LEN, event_type="START_EVENT_V3",
            )
        if type_code != EventType.FORMAT_DESCRIPTION_EVENT:
            raise NotABinlogError(
                f"the first event is {event_type_name(type_code)}, not a FORMAT_DESCRIPTION_EVENT; "
                "the file is not a complete binlog (or starts mid-stream)",
                path=self.path, offset=MAGIC_LEN, event_type=event_type_name(type_code),
            )
        fde = parse_format_description(head, MAGIC_LEN, size, self.path)
        if fde.has_checksum and self.verify_checksums:
            _verify_one(head, MAGIC_LEN, size, int(EventType.FORMAT_DESCRIPTION_EVENT), self.path, MAGIC_LEN)
        return fde

    # -- walking ---------------------------------------------------------------------
    def prefetch(self, segment_bytes: int = DEFAULT_SEGMENT_BYTES, start: int = MAGIC_LEN,
                 stop: int | None = None) -> None:
        """Start reading the first segment :meth:`segments` (same arguments) will walk, in the
        background: for a file in object storage, its round trip overlaps the walk of the file
        before it. Nothing for a memory-mapped, in-memory or compressed file."""
        seg_stop = start + max(segment_bytes, 1)
        self.source.prefetch(start, seg_stop if stop is None else min(stop, seg_stop))

    def segments(
        self, segment_bytes: int = DEFAULT_SEGMENT_BYTES, start: int = MAGIC_LEN, stop: int | None = None,
        *, release: bool = True, keep: Callable[[Segment], bool] | None = None,
    ) -> Iterator[Segment]:
        """Walk the file (or ``[start, stop)``) as segments of about ``segment_bytes``.

        ``start`` must be an event boundary; the last segment ends at the first boundary at
        or after ``stop``. FORMAT_DESCRIPTION_EVENTs met on the way govern the events after
        them (relay logs hold several). A file read in windows gets one window per segment,
        grown to hold the segment's last event (segments are the same as a mapped file's).
        ``release``: each segment's bytes are let go once
        the next one is asked for (False: a look ahead, after which the reading goes on from
        where it was), unless ``keep(segment)`` says a reader still reads them (on another
        thread, and lets them go itself: they would only be read in again).
        """
        pos = start
        fmt_id = self._format_id_at(start)
        step = max(segment_bytes, 1)
        whole = self.whole
        while stop is None or pos < stop:
            if self.closed:
                raise ClosedError(f"{self.path} was closed while it was walked (at offset {pos})")
            seg_stop = pos + step if stop is None else min(stop, pos + step)
            # a file whose bytes are all there is walked in its own (pinned) bytes, not its source's
            buf, base = (whole.buf, 0) if whole is not None else self.source.window(pos, seg_stop, stop)
            while True:
                limit = base + len(buf)  # the data this window holds ends here
                end = min(seg_stop, limit) - base
                index, nxt, walk_stop = walk_headers(buf, pos - base, end, len(buf), self.formats, fmt_id,
                                                     self._event_bytes_at(buf, pos - base, end))
                if len(index) and int(index.event_size.max()) > self.max_event_bytes:
                    i = int(np.argmax(index.event_size))
                    self._check_size(buf, int(index.offset[i]), int(index.event_size[i]), base + int(index.offset[i]))
                if walk_stop is None or walk_stop.kind != "truncated":
                    break
                at = walk_stop.offset
                claimed = _event_size_at(buf, at)
                self._check_size(buf, at, claimed, base + at)  # before a byte of it is read
                if whole is not None or self.source.at_end(limit):
                    break
                # an event that starts in the segment runs past the window, and the file holds it
                # whole: a window that holds it (segments end where they would in a mapped file)
                buf, base = self.source.window(pos, max(base + at + max(COMMON_HEADER_LEN, claimed), limit + 1), stop)
            nxt += base
            if len(index):  # room for events a quarter of this segment's average next (smaller ones fit too)
                self._event_bytes = max((nxt - pos) // (4 * len(index)), COMMON_HEADER_LEN)
            if walk_stop is not None:
                walk_stop = WalkStop(base + walk_stop.offset, walk_stop.reason, walk_stop.kind)
            src: EventSource = whole if whole is not None else Window(self, buf, base)
            if base:
                index.pos = index.offset + base
            fmt_id = self._assign_formats(src, index, fmt_id)
            if len(index):
                segment = Segment(self, src, index, pos, nxt)
                yield segment
                if release and not (keep is not None and keep(segment)):
                    self.source.release(pos, nxt)
            if walk_stop is not None:
                self._stopped(walk_stop)
                return
            if self.source.at_end(nxt):
                self._ended_early(nxt)
                return
            pos = nxt

    def _event_bytes_at(self, buf: np.ndarray, start: int, stop: int) -> int | None:
        """The header walk's guess of the bytes of an event of ``buf[start:stop]``: a quarter of
        the last segment's average, or of its first :data:`SAMPLE_BYTES` when none was walked
        and the range is large (room for 64-byte events where events are KBs took a block of 23
        MB for a few thousand events, which raised ``iter_batches``' peak memory by ~50 MB:
        bench/TUNING.md)."""
        if self._event_bytes is None and stop - start >= SAMPLE_FROM_BYTES:
            sample, end, _ = walk_headers(buf, start, start + SAMPLE_BYTES, len(buf), event_bytes=COMMON_HEADER_LEN)
            if len(sample):
                return max((end - start) // (4 * len(sample)), COMMON_HEADER_LEN)
        return self._event_bytes

    def _format_id_at(self, offset: int) -> int:
        """The format that governs an event at ``offset`` among those seen so far."""
        fid = 0
        for i, f in enumerate(self.formats):
            if f.offset < offset:
                fid = i
        return fid

    def _assign_formats(self, src: EventSource, index: EventIndex, fmt_id: int) -> int:
        """Parse the FDEs met in this run of events (walked with format ``fmt_id``, see
        :func:`~.headers.walk_headers`); when one brings another format, set the format of
        every event of ``index`` again (:meth:`EventIndex.apply_formats`)."""
        tc = index.type_code
        enc = np.flatnonzero(tc == EventType.START_ENCRYPTION_EVENT)
        if len(enc):
            raise EncryptedBinlogError(
                "encrypted binlog (MariaDB encrypt_binlog=ON): decrypt it with the server "
                "(mariadb-binlog --read-from-remote-server) before decoding",
                path=self.path, offset=int(index.pos[enc[0]]), event_type="START_ENCRYPTION_EVENT",
            )
        fmt = None
        for i in np.flatnonzero(tc == EventType.FORMAT_DESCRIPTION_EVENT).tolist():
            at = int(index.pos[i])
            known = [f.offset for f in self.formats]
            if at in known:
                fid = known.index(at)
            else:
                fde = parse_format_description(src.buf, int(index.offset[i]), int(index.event_size[i]), self.path)
                self.formats.append(dataclasses.replace(fde, offset=at))
                fid = len(self.formats) - 1
            if fid != fmt_id:
                if fmt is None:
                    fmt = index.fmt.copy()
                fmt[i:] = fid  # an FDE describes itself and what follows it
                fmt_id = fid
        if fmt is not None:
            index.apply_formats(self.formats, fmt)
        return fmt_id

    def _stopped(self, stop: WalkStop) -> None:
        """The walk could not go on at ``stop``: a malformed event raises; a cut one (the file
        ends inside it) raises with ``strict``, else warns once (every event before it was decoded)."""
        self.walk_stop = stop
        if self.source.failure is not None and not self.source.truncated:
            self._ended_early(stop.offset)  # a corrupt compressed stream: that, not the cut event, is the cause
        if stop.kind == "malformed":
            raise MalformedEventError(stop.reason, path=self.path, offset=stop.offset)
        self._truncated(stop.offset, stop.reason)

    def _truncated(self, offset: int, reason: str) -> None:
        if self.source.truncated:
            reason = f"{reason} ({self.source.failure})"
        if self.strict:
            raise TruncatedError(reason, path=self.path, offset=offset)
        if not self._warned:
            self._warned = True
            warn(
                f"{self.path}: reading stopped at offset {offset}: {reason}; "
                "every complete event before it was decoded (strict=True raises instead)",
                TruncatedWarning,
            )

    def _ended_early(self, offset: int, *, fatal: bool = False) -> None:
        """The data ended at ``offset``, where the last complete event ends: when a compressed
        stream ended there early, say so. A corrupt stream raises :class:`CorruptArchiveError`
        (the events before ``offset`` were decoded); a cut one is read as a cut plain file is
        (a :class:`TruncatedWarning`, or :class:`TruncatedError` with ``strict``), and raises
        :class:`TruncatedError` when ``fatal`` (nothing before ``offset`` can be decoded)."""
        failure = self.source.failure
        if failure is None:
            return
        if not self.source.truncated:
            raise CorruptArchiveError(
                f"{failure}; the last complete event ends at offset {offset}", path=self.path, offset=offset,
            )
        if fatal:
            raise TruncatedError(f"{failure}: it holds {self.source.size} bytes, not the binlog's first event",
                                 path=self.path, offset=offset)
        if self.walk_stop is None:
            self.walk_stop = WalkStop(offset, failure, "truncated")
            self._truncated(offset, "the last complete event ends here")

    def _check_size(self, buf: np.ndarray, at: int, size: int, offset: int) -> None:
        """Refuse an event of over ``max_event_bytes`` (header at ``buf[at]``, file ``offset``)."""
        if size > self.max_event_bytes:
            code = int(buf[at + 4]) if at + 4 < len(buf) else None
            raise MalformedEventError(
                f"event_size is {size} bytes, over max_event_bytes ({self.max_event_bytes}): no server writes "
                "an event larger than its max_allowed_packet (1 GiB at most); a corrupt header, or a hostile "
                "file (open(..., max_event_bytes=...) allows more)",
                path=self.path, offset=offset, event_type=None if code is None else event_type_name(code),
            )


def open_files(paths: Sequence[Any], open_file: Callable[[Any], BinlogFile], filesystem: Any = None, *,
               ahead: int = FILES_AHEAD, tasks: TaskGroup | None = None) -> Iterator[BinlogFile]:
    """``open_file(path)`` of each of ``paths``, in order. When they are in object storage (or
    ``filesystem``), the next ``ahead`` are opened meanwhile on a pool of threads: each open
    costs round trips (its size, its first 64 KiB), which so overlap each other and what the
    caller does with the files before (a local file opens faster than a thread takes it up).
    The caller closes the files it gets; those opened ahead of where it stops are closed here.
    An error opening a file is raised when its turn comes, after the files before it. The
    opens ahead belong to ``tasks`` (the owner's group) and to this call, which waits for them
    before it returns, however it ends."""
    if len(paths) <= 1 or ahead < 1 or not any(is_remote(p, filesystem) for p in paths):
        for path in paths:
            yield open_file(path)
        return
    with TaskGroup("the files' opening", tasks) as opening:
        rest = iter(paths)
        pending: deque[Future] = deque(opening.submit("open", ahead, open_file, p) for p in itertools.islice(rest, ahead))
        try:
            while pending:
                opened = pending.popleft().result()
                for p in itertools.islice(rest, 1):
                    pending.append(opening.submit("open", ahead, open_file, p))
                yield opened
        finally:
            for left in pending:
                if not left.cancel():
                    try:
                        left.result().close()
                    except Exception:  # noqa: BLE001, S110 - not opened: nothing to close (its error is not ours to raise)
                        pass


class Window:
    """The event source of a file's bytes ``[base, base + len(buf))``: the whole file at base 0
    when it is memory-mapped or in memory (one for every segment: :attr:`BinlogFile.whole`),
    else one segment's bytes (see :class:`Segment`). Offsets in ``buf`` are file offsets less
    ``base``. It holds its bytes: closing the file does not take them from under a reader."""

    def __init__(self, file: BinlogFile, buf: np.ndarray, base: int) -> None:
        self.file, self.buf, self.base = file, read_only(buf), base  # (read-only: see jit.read_only)
        self.path, self.name = file.path, file.name

    @property
    def formats(self) -> list[FormatDescription]:
        return self.file.formats

    @property
    def verify_checksums(self) -> bool:
        return self.file.verify_checksums

    def verify_checksums_of(self, index: EventIndex, which: np.ndarray | None = None) -> None:
        """Check the CRC32 of the events of ``index`` (or of those ``which``, a boolean mask,
        selects) whose format has checksums."""
        verify_events(self, index, which)

    def file_offset(self, offset: int) -> int:
        """The file offset of ``buf[offset]``."""
        return self.base + offset

    def relocate(self, exc: BinlogError) -> BinlogError:
        """The same error, at the file offset of what went wrong (not the window's)."""
        if not self.base:
            return exc
        return relocated(exc, self.path, self.base + exc.offset if exc.offset is not None else 0)


def _event_size_at(buf: np.ndarray, at: int) -> int:
    """The event_size field of the header at ``at`` (0 when the header is not all there)."""
    if at + COMMON_HEADER_LEN > len(buf):
        return 0
    return int(buf[at + 9 : at + 13].view("<u4")[0])


def checksums_match(src: EventSource, index: EventIndex) -> bool:
    """Whether the CRC32 of every event of ``index`` in ``src.buf`` is the one stored (True
    when ``src`` does not verify checksums); no error: a False is for
    :meth:`BinlogFile.verify_checksums_of` to tell (it runs without the GIL, on any thread)."""
    if not src.verify_checksums or len(index) == 0:
        return True
    start = index.offset[index.checksum]
    return first_mismatch(src.buf, start, start + index.event_size[index.checksum].astype(np.int64) - CHECKSUM_LEN) < 0


def verify_events(src: EventSource, index: EventIndex, which: np.ndarray | None,
                  path_at: Callable[[int], str] | None = None) -> None:
    """Check the CRC32 of the events of ``index`` in ``src.buf`` (those ``which`` selects);
    a mismatch names ``src.path``, or ``path_at(offset in buf)`` (events of several files)."""
    if not src.verify_checksums or len(index) == 0:
        return
    has_crc = index.checksum if which is None else index.checksum & which
    at = None if which is None and bool(has_crc.all()) else np.flatnonzero(has_crc)  # (None: every event)
    start = index.offset if at is None else index.offset[at]
    end = start + index.event_size.astype(np.int64) if at is None else start + index.event_size[at].astype(np.int64)
    end -= CHECKSUM_LEN
    i = first_mismatch(src.buf, start, end)
    while i >= 0:  # recheck with the FDE rule; raise with detail
        j = i if at is None else int(at[i])
        path = src.path if path_at is None else path_at(int(start[i]))
        _verify_one(src.buf, int(start[i]), int(index.event_size[j]), int(index.type_code[j]), path, int(index.pos[j]))
        i = first_mismatch(src.buf, start, end, i + 1)


def _verify_one(buf: np.ndarray, off: int, size: int, type_code: int, path: str, pos: int) -> None:
    """Check one event's CRC32 (at ``off`` in ``buf``, ``pos`` in the file), raising ChecksumError."""
    mem = buf.data
    end = off + size - CHECKSUM_LEN
    stored = int.from_bytes(mem[end : end + CHECKSUM_LEN], "little")
    if type_code == EventType.FORMAT_DESCRIPTION_EVENT:
        # The server computes the FDE checksum with LOG_EVENT_BINLOG_IN_USE_F cleared.
        head = bytearray(mem[off : off + COMMON_HEADER_LEN])
        head[17] &= ~int(LogEventFlag.LOG_EVENT_BINLOG_IN_USE_F) & 0xFF
        computed = zlib.crc32(mem[off + COMMON_HEADER_LEN : end], zlib.crc32(bytes(head)))
    else:
        computed = zlib.crc32(mem[off:end])
    if computed != stored:
        raise ChecksumError(
            f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x} "
            "(verify_checksums=False skips the check)",
            stored=stored, computed=computed, path=path, offset=pos,
            event_type=event_type_name(type_code),
        )
