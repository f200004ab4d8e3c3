"""Where a binlog's bytes come from: one small protocol, three implementations.

Everything that reads a binlog asks its source for *windows*: the bytes of ``[start, stop)``
as a uint8 array and the file offset of that array's first byte. A decoder works on one
window at a time (a segment of events), so a file of any size is read in bounded memory.

=================  ===========================================  =============================
source             what a window is                             used for
=================  ===========================================  =============================
``MappedSource``   the whole file's memory map (offset 0),      local files (and ``file://``)
                   whatever is asked: nothing is copied
``PreadSource``    the bytes of one ``os.preadv`` into the      local files that may shrink:
                   window's array                               the newest of a folder, glob
                                                                or index (:class:`NewestPath`),
                                                                one its server had not closed
``RangedSource``   the bytes of one ranged read (``read_at``),  ``s3://``, ``gs://``,
                   the next window's read started in the        ``abfs://``, ``hdfs://``...
                   background while this one is decoded         through ``pyarrow.fs``
``StreamSource``   the next bytes of a decompressing stream     ``.gz``, ``.zst``, ``.bz2``,
                   (forward only: a window may start where an   ``.lz4`` files, local or
                   earlier one did, never before)               remote
``MemorySource``   the whole buffer                             a binlog given as bytes or a
                                                                binary file object
=================  ===========================================  =============================

Paths: a local path, a ``file://`` URI, any URI ``pyarrow.fs.FileSystem.from_uri`` resolves
(``s3://bucket/key?endpoint_override=host:port&scheme=http&region=...``, ``gs://``,
``abfs://``, ``hdfs://``; ``s3a://`` and ``s3n://`` are read as ``s3://``), or a path inside
a ``filesystem=`` (a ``pyarrow.fs.FileSystem``, or an fsspec filesystem, wrapped as pyarrow
does). Credentials come the usual way for each filesystem (environment, instance profile,
config files) or from the URI's query; messages never show a URI's credentials.

Compression is told by the name (``.gz``, ``.zst``/``.zstd``, ``.bz2``, ``.lz4``), or else
by the first bytes (gzip ``1f 8b``, zstd ``28 b5 2f fd``, bzip2 ``BZh``, lz4 frame
``04 22 4d 18``), and decoded by pyarrow's compressed streams.

Above the bytes, every decoder reads a run of events through one protocol, :class:`~.eventsource.EventSource`
(a file, a window of it, or a segment whose compressed events were unpacked).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import threading
from concurrent.futures import Future
from typing import Any, BinaryIO, Callable, Protocol

import numpy as np
import pyarrow as pa

from ..constants import LogEventFlag
from ..errors import (
    ClosedError,
    CorruptArchiveError,
    FileChangedError,
    SourceError,
    SourceNotFoundError,
    SourcePermissionError,
    SourceUnreachableError,
)
from ..pools import TaskGroup
from .locations import (  # re-exported: where a binlog is, beside how its bytes are read
    COMPRESSION_MAGIC,
    COMPRESSION_SUFFIXES,
    codec_by_magic,
    codec_by_name,
    first_line,
    is_uri,
    name_of,
    redact,
    resolve,
    source_error,
    strip_compression,
)
from .spec import COMMON_HEADER_LEN, MAGIC, MAGIC_LEN

#: files opened, or read, ahead of the one being walked, on a pool of as many threads: a file in
#: object storage costs round trips (its size, its first bytes, the rest), which overlap so
FILES_AHEAD = 8

#: the bytes read first of a binlog, for its FORMAT_DESCRIPTION_EVENT (and, in object
#: storage, the magic bytes that say whether it is compressed: one request)
FIRST_WINDOW = 64 * 1024

__all__ = ["ByteSource", "MappedSource", "MemorySource", "NewestPath", "PreadSource", "RangedSource",
           "StreamSource", "open_source", "resolve", "is_uri", "name_of", "redact", "strip_compression",
           "COMPRESSION_MAGIC", "COMPRESSION_SUFFIXES"]


class ByteSource(Protocol):
    """What a :class:`~vecbinlog.binlog.file.BinlogFile` reads its bytes through."""

    # (read-only members: a source's own attributes may be narrower, ``size: int`` of a seekable one)
    @property
    def path(self) -> str:
        """The file as messages name it: a local path, or the URI without credentials."""
        ...

    @property
    def name(self) -> str:
        """The file's name (``_log_file``)."""
        ...

    @property
    def size(self) -> int | None:
        """Bytes; None for a compressed stream not yet read to its end."""
        ...

    @property
    def seekable(self) -> bool:
        """Windows anywhere (False: a compressed stream, read forward only)."""
        ...

    @property
    def compression(self) -> str | None:
        """The codec of a compressed file."""
        ...

    @property
    def failure(self) -> str | None:
        """Why the data ended early (a cut or corrupt compressed stream), else None."""
        ...

    @property
    def truncated(self) -> bool:
        """The data ended early because a compressed file is cut short (not corrupt)."""
        ...

    def window(self, start: int, stop: int, until: int | None = None) -> tuple[np.ndarray, int]:
        """The bytes ``[start, stop)`` (fewer at the end of the data) as uint8, and the file
        offset of the array's first byte (``start``, or 0 for a whole-file map). ``until``:
        the reader will not go past it (no read ahead beyond it; None: the end)."""
        ...

    def at_end(self, offset: int) -> bool:
        """Whether the data ends at ``offset`` (no byte there)."""
        ...

    def release(self, start: int, stop: int) -> None:
        """The bytes of ``[start, stop)`` were decoded: their memory may go."""
        ...

    def prefetch(self, start: int, stop: int) -> None:
        """The next :meth:`window` will be ``[start, stop)``: start reading it in the background
        (a file in object storage; nothing for the others)."""
        ...

    def close(self) -> None:
        ...


class NewestPath(str):
    """The path of the newest file of a folder, glob or index (:mod:`vecbinlog.log.logset`
    marks it): the file a server may still be writing, and the one it cuts back when it
    recovers from a crash. A local one is read with ``pread`` (:class:`PreadSource`), never
    memory-mapped: a mapped file that shrinks kills the process (SIGBUS) at the first page
    read past its new end; a read that finds it shorter is a :class:`FileChangedError`."""

    __slots__ = ()


#: the end of the first event's ``flags`` (magic, then the common header: spec.COMMON_HEADER)
_FLAGS_END = MAGIC_LEN + COMMON_HEADER_LEN


def _still_open(head: bytes) -> bool:
    """Whether a binlog's first event (its FORMAT_DESCRIPTION_EVENT) has
    LOG_EVENT_BINLOG_IN_USE_F: the server had not closed the file (it is writing it, or it
    crashed, and will cut it back to its last complete transaction when it recovers)."""
    if len(head) < _FLAGS_END or head[:MAGIC_LEN] != MAGIC:
        return False
    return bool(int.from_bytes(head[_FLAGS_END - 2: _FLAGS_END], "little") & LogEventFlag.LOG_EVENT_BINLOG_IN_USE_F)


def open_source(path: str | os.PathLike[str], filesystem: Any = None, *, read_ahead: bool = True,
                tasks: TaskGroup | None = None) -> ByteSource:
    """The source of one binlog file (see the module docstring): a local file is memory-mapped,
    unless it may change while it is read: the newest of its set (a :class:`NewestPath`), or a
    file whose server had not closed it (its FORMAT_DESCRIPTION_EVENT still has
    LOG_EVENT_BINLOG_IN_USE_F); those are read with ``pread`` (:class:`PreadSource`).
    ``tasks``: the group of the source's owner (an open log), whose closing ends the source's
    background work too (pages let go of, reads ahead)."""
    fs, inner, shown = resolve(path, filesystem)
    name = name_of(inner)
    raw_name = inner.rstrip("/").rsplit("/", 1)[-1]
    head: bytes | None
    if fs is None:
        try:
            fh = open(inner, "rb")
        except FileNotFoundError:
            raise SourceNotFoundError("No such file or directory", uri=shown) from None
        except PermissionError:
            raise SourcePermissionError("Permission denied", uri=shown) from None
        except IsADirectoryError:
            raise SourceNotFoundError("Is a directory, not a binlog file", uri=shown) from None
        with fh:
            head = fh.read(_FLAGS_END)
            codec = codec_by_name(raw_name) or codec_by_magic(head[:4])
            if codec is None and not (isinstance(path, NewestPath) or _still_open(head)):
                return MappedSource(inner, shown, name, fh, tasks=tasks)
        if codec is None:
            return PreadSource(inner, shown, name)
        return StreamSource(lambda: pa.OSFile(inner, "rb"), codec, shown, name, compressed_size=os.path.getsize(inner))
    codec = codec_by_name(raw_name)
    head = None
    try:  # (object storage: the open asks for the size, then the first window: two requests)
        handle = fs.open_input_file(inner)
    except OSError as exc:
        raise _not_opened(fs, inner, shown, exc) from None
    try:
        size = int(handle.size())
        if codec is None:  # the first window, read once: its magic says whether it is compressed
            head = bytes(handle.read_at(min(size, FIRST_WINDOW), 0)) if size else b""
            codec = codec_by_magic(head[:4])
    except OSError as exc:
        handle.close()
        raise source_error(exc, shown) from None
    if codec is None:
        return RangedSource(handle, shown, name, read_ahead=read_ahead, head=head, tasks=tasks)
    handle.close()
    return StreamSource(lambda: fs.open_input_file(inner), codec, shown, name, compressed_size=size)


def _not_opened(fs: Any, inner: str, shown: str, exc: OSError) -> SourceError:
    """Why ``inner`` could not be opened: not there, not a file, or the storage's error."""
    import pyarrow.fs as pafs

    try:
        kind = fs.get_file_info(inner).type
    except OSError:
        kind = None
    if kind == pafs.FileType.NotFound:
        return SourceNotFoundError("no such file or object", uri=shown)
    if kind is not None and kind != pafs.FileType.File:
        return SourceNotFoundError("not a file (a directory or prefix)", uri=shown)
    return source_error(exc, shown)


class MappedSource:
    """A local file, memory-mapped once; every window is the whole map (nothing copied)."""

    seekable = True
    compression = None
    failure = None
    truncated = False

    def __init__(self, path: str, shown: str, name: str, fh: BinaryIO | None = None, *,
                 tasks: TaskGroup | None = None) -> None:
        """``fh``: the file, already open (mapped here; closed by the caller). ``tasks``: the
        owner's group (the pages let go of in the background belong to it, and to this source)."""
        self.path, self.name = shown, name
        self._tasks = TaskGroup(f"the binlog {shown}", tasks)
        with contextlib.nullcontext(fh) if fh is not None else open(path, "rb") as f:
            self.size = os.fstat(f.fileno()).st_size
            self._mmap: mmap.mmap | None = None
            if self.size:
                self._mmap = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if self._mmap is not None:
            self.buf = np.frombuffer(self._mmap, dtype=np.uint8)
        else:
            self.buf = np.zeros(0, np.uint8)

    def window(self, start: int, stop: int, until: int | None = None) -> tuple[np.ndarray, int]:
        return self.buf, 0

    def at_end(self, offset: int) -> bool:
        return offset >= self.size

    def release(self, start: int, stop: int) -> None:
        """Let the OS drop the pages of a decoded segment (decoded values are copies; reading
        the range again faults the pages back in from the page cache): without it every page
        of a large file stays resident. Done on a thread of its own: taking down the page
        table entries of 210 MB costs 5-13 ms (more while other threads run), which the
        reading thread then need not wait for (the map stays while it is done)."""
        if self._mmap is None or not hasattr(mmap, "MADV_DONTNEED"):
            return
        page = mmap.PAGESIZE
        lo = -(-start // page) * page  # whole pages inside [start, stop) only
        hi = (stop // page) * page
        if hi - lo >= (1 << 20) and not self._tasks.closed:
            self._tasks.submit("release", 1, _drop_pages, self._mmap, self.buf, lo, hi)

    def prefetch(self, start: int, stop: int) -> None:
        """Nothing: the map's pages are read as they are touched."""

    def close(self) -> None:
        self._tasks.close()  # the pages being let go of first
        self.buf = np.zeros(0, np.uint8)
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                pass  # NumPy/Arrow views of the map are alive: it goes when they do
            self._mmap = None


def _drop_pages(mapped: mmap.mmap, view: np.ndarray, lo: int, hi: int) -> None:
    """MADV_DONTNEED on ``mapped[lo:hi]``; ``view`` (a NumPy view of the map) is held until
    done, so that the map is not closed, nor its address range reused, meanwhile."""
    try:
        mapped.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
    except (OSError, ValueError):  # not every platform/mapping allows it; only memory is at stake
        pass
    del view


class MemorySource:
    """A binlog given as its bytes (``open(b"...")``, a binary file object read whole): every
    window is the whole buffer, as for a memory-mapped file."""

    seekable = True
    compression = None
    failure = None
    truncated = False

    def __init__(self, data: bytes | bytearray | memoryview, name: str) -> None:
        self.path = self.name = name
        self.buf = np.frombuffer(data, np.uint8) if len(data) else np.zeros(0, np.uint8)
        self.size = len(self.buf)

    def window(self, start: int, stop: int, until: int | None = None) -> tuple[np.ndarray, int]:
        return self.buf, 0

    def at_end(self, offset: int) -> bool:
        return offset >= self.size

    def release(self, start: int, stop: int) -> None:
        """Nothing to do: the bytes are the caller's."""

    def prefetch(self, start: int, stop: int) -> None:
        """Nothing: the bytes are in memory."""

    def close(self) -> None:
        self.buf = np.zeros(0, np.uint8)


class _Windows:
    """What the ranged and the stream sources share: the last window is kept, so that the next
    one, which starts inside it (at the first event that did not fit), copies its tail
    instead of reading those bytes again."""

    path: str
    size: int

    def __init__(self) -> None:
        self._last = np.zeros(0, np.uint8)
        self._last_base = 0
        self.requests = 0  #: reads made (ranged reads, or stream reads)
        self.bytes_read = 0  #: bytes read from the storage (compressed bytes for a stream)

    def _from_last(self, start: int, stop: int) -> np.ndarray:
        lo, hi = start - self._last_base, min(stop, self._last_base + len(self._last)) - self._last_base
        return self._last[lo:hi] if 0 <= lo < hi else self._last[:0]

    def _keep(self, buf: np.ndarray, base: int) -> tuple[np.ndarray, int]:
        self._last, self._last_base = buf, base
        return buf, base

    def release(self, start: int, stop: int) -> None:
        """Nothing to do: a window's bytes go with the last array that uses them."""

    def prefetch(self, start: int, stop: int) -> None:
        """Nothing: a local file that may still grow is read when asked."""


class RangedSource(_Windows):
    """A file in object storage or HDFS (``pyarrow.fs``), read a window at a time with ranged
    reads; the next window (as large as this one, right after it) is read in the background
    while this one is decoded, so that the storage's latency overlaps the decoding."""

    seekable = True
    compression = None
    failure = None
    truncated = False

    def __init__(self, handle: Any, shown: str, name: str, *, read_ahead: bool = True, head: bytes | None = None,
                 tasks: TaskGroup | None = None) -> None:
        super().__init__()
        self.path, self.name = shown, name
        self._file = handle
        self._tasks = TaskGroup(f"the binlog {shown}", tasks)  #: its reads ahead
        try:
            self.size = int(handle.size())
        except OSError as exc:
            raise source_error(exc, shown) from None
        self._read_ahead = read_ahead
        self._ahead: tuple[int, int, Future] | None = None
        if head:  # the file's first bytes, read as it was opened: the first window
            self.requests, self.bytes_read = 1, len(head)
            self._keep(np.frombuffer(head, np.uint8), 0)

    def _read(self, start: int, stop: int) -> np.ndarray:
        if self._file.closed:
            raise ClosedError(f"{self.path} was closed while it was read")
        self.requests += 1
        self.bytes_read += stop - start
        try:
            data = self._file.read_at(stop - start, start)
        except OSError as exc:
            raise source_error(exc, self.path) from None
        if len(data) != stop - start:
            raise SourceUnreachableError(f"a read of {stop - start} bytes at {start} returned {len(data)}",
                                         uri=self.path)
        return np.frombuffer(data, np.uint8)

    def window(self, start: int, stop: int, until: int | None = None) -> tuple[np.ndarray, int]:
        stop = min(stop, self.size)
        if start >= stop:
            return self._keep(np.zeros(0, np.uint8), start)
        head = self._from_last(start, stop)
        fetch_from = start + len(head)
        fresh = np.zeros(0, np.uint8)
        if fetch_from < stop:
            ahead, self._ahead = self._ahead, None
            if ahead is not None and ahead[0] == fetch_from and ahead[1] >= stop:
                fresh = ahead[2].result()[: stop - fetch_from]
            else:
                if ahead is not None:
                    ahead[2].cancel()
                fresh = self._read(fetch_from, stop)
        buf = np.concatenate([head, fresh]) if len(head) and len(fresh) else (fresh if len(fresh) else head.copy())
        end = self.size if until is None else min(until, self.size)
        if self._read_ahead and stop < end and self._ahead is None:
            nxt = min(stop + (stop - start), end)
            self._ahead = (stop, nxt, self._tasks.submit("read", 2, self._read, stop, nxt))
        return self._keep(buf, start)

    def at_end(self, offset: int) -> bool:
        return offset >= self.size

    def prefetch(self, start: int, stop: int) -> None:
        """Read ``[start, stop)`` (what the last window does not hold of it) in the background,
        for the next :meth:`window`: the first segment of a file after the one being walked."""
        stop = min(stop, self.size)
        fetch_from = start + len(self._from_last(start, stop))
        if self._ahead is None and fetch_from < stop:
            self._ahead = (fetch_from, stop, self._tasks.submit("ahead", FILES_AHEAD, self._read, fetch_from, stop))

    def close(self) -> None:
        self._tasks.close()  # a read ahead ends before its handle closes
        self._ahead = None
        self._file.close()


class PreadSource(_Windows):
    """A local file that may change while it is read (the newest of a set: :class:`NewestPath`),
    read a window at a time with ``os.preadv`` into the window's own array (the next window,
    which starts inside this one, copies its tail). Not mapped, so that a file cut back while
    it is read is an error (:class:`FileChangedError`), not a SIGBUS. The size is the one the
    file had when opened: what a server appends later is read by the next open."""

    seekable = True
    compression = None
    failure = None
    truncated = False

    def __init__(self, path: str, shown: str, name: str) -> None:
        super().__init__()
        self.path, self.name = shown, name
        self._fd: int | None = os.open(path, os.O_RDONLY)
        self.size = os.fstat(self._fd).st_size
        #: held by a read and by close: a descriptor closed from another thread mid-read could be
        #: reused by the next file opened, and the read would go on in that file
        self._lock = threading.Lock()

    def _read_into(self, buf: np.ndarray, offset: int) -> int:
        """Fill ``buf`` from ``offset``; how many bytes there were (fewer: the file ends there)."""
        with self._lock:
            if self._fd is None:
                raise ClosedError(f"{self.path} was closed while it was read")
            return self._read_locked(buf, offset)

    def _read_locked(self, buf: np.ndarray, offset: int) -> int:
        assert self._fd is not None
        done = 0
        while done < len(buf):
            if hasattr(os, "preadv"):
                got = os.preadv(self._fd, [buf.data[done:]], offset + done)
            else:  # pragma: no cover - no preadv (macOS before 11): a copy more
                data = os.pread(self._fd, len(buf) - done, offset + done)
                got = len(data)
                buf[done: done + got] = np.frombuffer(data, np.uint8)
            if not got:
                break
            done += got
        self.requests += 1
        self.bytes_read += done
        return done

    def window(self, start: int, stop: int, until: int | None = None) -> tuple[np.ndarray, int]:
        stop = min(stop, self.size)
        if start >= stop:
            return self._keep(np.zeros(0, np.uint8), start)
        head = self._from_last(start, stop)
        buf = np.empty(stop - start, np.uint8)
        buf[: len(head)] = head
        fresh = start + len(head)
        got = self._read_into(buf[len(head):], fresh) if fresh < stop else 0
        if fresh + got < stop:
            now = os.fstat(self._fd).st_size if self._fd is not None else fresh + got
            raise FileChangedError(
                f"the file is {now} bytes now, {self.size} when it was opened: it was cut back while it was read "
                "(a server recovering from a crash, a rotation by copytruncate); the events before were read",
                path=self.path, offset=min(fresh + got, now))
        return self._keep(buf, start)

    def at_end(self, offset: int) -> bool:
        return offset >= self.size

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


class StreamSource:
    """A compressed binlog, decompressed as it is read (pyarrow's ``CompressedInputStream``):
    windows go forward (one may start inside the last one; one before it starts the
    decompression again from the file's start: a second walk of the file). It cannot be cut by
    byte ranges (a reader must start at its beginning), so a Spark split is one whole file. The decompressed bytes are kept from where the reader released them (the end of
    the last segment decoded) to the furthest point read (a look past a segment for how a
    transaction ends reads ahead, and the next segment then starts from what was kept).

    Memory: what is kept and what a window asks for are one array, filled in place (no list
    of pieces joined at the end, which took twice the memory); its pages are touched only as
    bytes come, so a window asked for an event that claims more than the file holds costs what
    the file holds. How large an event may be is the reader's to say
    (:class:`~vecbinlog.binlog.file.BinlogFile`'s ``max_event_bytes``).

    A stream that ends early (a cut file) or fails (corrupt data) ends the data where the
    codec stopped: every byte it gave is kept (``failure`` says why, ``truncated`` whether
    the compressed file is only cut short).
    """

    seekable = False
    #: decompressed bytes asked of the codec at a time
    CHUNK = 256 << 10

    def __init__(self, open_raw: Callable[[], Any], codec: str, shown: str, name: str, *,
                 compressed_size: int | None = None) -> None:
        self.path, self.name, self.compression = shown, name, codec
        self.compressed_size = compressed_size
        self.size: int | None = None  # known at the end of the stream
        self.requests = 0  #: reads of the stream
        #: why the stream ended early (a codec error), once it did: the data ends at ``size``
        self.failure: str | None = None
        #: the stream ended early because the compressed file is cut short (not corrupt)
        self.truncated = False
        self._open_raw = open_raw
        self._raw: Any = None  # pyarrow's input file, and its decompressing stream
        self._stream: Any = None
        #: held by a read and by close: the codec's stream is not closed under a read (another thread's close)
        self._lock = threading.RLock()
        self._closed = False
        self._restart()

    def _open(self) -> tuple[Any, Any]:
        """A new decompressing stream over the file: (raw file, stream)."""
        try:
            raw = self._open_raw()
        except OSError as exc:
            raise source_error(exc, self.path) from None
        try:
            return raw, pa.CompressedInputStream(raw, self.compression)
        except (OSError, pa.ArrowException) as exc:
            raw.close()
            raise CorruptArchiveError(f"{self.compression} stream cannot be opened: {first_line(exc)}",
                                      path=self.path, offset=0) from None

    def _restart(self) -> None:
        """Decompress from the file's start again (a second walk of the file: another read)."""
        self._close_handles()
        self._raw, self._stream = self._open()
        self._kept = np.zeros(0, np.uint8)  # decompressed bytes [_base, _base + len(_kept))
        self._base = 0
        self._ended = False

    @property
    def _pos(self) -> int:
        return self._base + len(self._kept)

    def _read_to(self, stop: int) -> None:
        """Decompress up to ``stop`` (or the end of the stream) into what is kept."""
        pos = self._pos
        if pos >= stop or self._ended:
            return
        held = len(self._kept)
        out = np.empty(held + max(stop - pos, self.CHUNK), np.uint8)  # untouched pages cost nothing
        out[:held] = self._kept
        filled = held
        while filled < len(out):
            view = out[filled: filled + min(len(out) - filled, self.CHUNK)]
            view[:] = 0  # what a read that meets a codec error wrote is told by a second pass (_recover)
            try:
                got = self._stream.readinto(view)
            except (OSError, pa.ArrowException) as exc:
                # the data ends here: the reader decodes what came before and reports this
                filled += self._recover(self._base + filled, view, exc)
                break
            self.requests += 1
            if not got:
                self.size, self._ended = self._base + filled, True
                break
            filled += got
        # a new array: windows handed out stay as they were; the room not filled (an event that
        # claims more than the file holds) was never touched: it costs address space, not memory
        self._kept = out[:filled]

    def _recover(self, at: int, view: np.ndarray, exc: BaseException) -> int:
        """The codec failed in a read of ``view`` (decompressed offset ``at``): how many bytes
        it wrote there first. pyarrow returns none of them, but writes them in place: a second
        stream, read to ``at`` again, reads the same bytes into an array filled with other
        bytes, and the first byte where the two differ is the first that was never written.
        Costs one more decompression of the file up to ``at``, once, when it fails."""
        text = first_line(exc)
        self.truncated = "truncated" in text.lower()
        self.failure = (f"the {self.compression} stream is truncated: the compressed file is cut short"
                        if self.truncated else f"the {self.compression} stream is corrupt ({text})")
        raw, stream = self._open()
        other = np.full(len(view), 0xFF, np.uint8)
        try:
            skip = np.empty(min(max(at, 1), 1 << 20), np.uint8)
            done = 0
            while done < at:
                got = stream.readinto(skip[: min(len(skip), at - done)])
                if not got:
                    break
                done += got
            if done == at:
                try:
                    stream.readinto(other)
                except (OSError, pa.ArrowException):
                    pass
        except (OSError, pa.ArrowException):
            done = -1  # it failed before where it did the first time: keep nothing of this read
        finally:
            for handle in (stream, raw):
                try:
                    handle.close()
                except (OSError, pa.ArrowException):
                    pass
        written = 0
        if done == at:
            differ = np.flatnonzero(view != other)
            written = int(differ[0]) if len(differ) else len(view)
        self.size, self._ended = at + written, True
        return written

    def window(self, start: int, stop: int, until: int | None = None) -> tuple[np.ndarray, int]:
        with self._lock:
            self._check_open()
            if start < self._base:  # a new walk of the file
                failure, truncated = self.failure, self.truncated
                self._restart()
                self.failure, self.truncated = failure, truncated
            self._read_to(stop)
            lo = start - self._base
            return self._kept[lo : max(stop - self._base, lo)], start

    def at_end(self, offset: int) -> bool:
        with self._lock:
            if offset >= self._pos:
                self._check_open()
                self._read_to(offset + 1)
            return self._ended and offset >= self._pos

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError(f"{self.path} was closed while it was read")

    def release(self, start: int, stop: int) -> None:
        """The bytes before ``stop`` are let go: no window will start before it."""
        if stop > self._base:
            cut = min(stop, self._pos)
            self._kept, self._base = self._kept[cut - self._base:], cut

    def prefetch(self, start: int, stop: int) -> None:
        """Nothing: a compressed stream is decompressed as it is read, in order."""

    def close(self) -> None:
        with self._lock:  # (a read under way on another thread ends first)
            self._closed = True
            self._close_handles()

    def _close_handles(self) -> None:
        for handle in (self._stream, self._raw):
            if handle is not None:
                try:
                    handle.close()
                except (OSError, pa.ArrowException):
                    pass
