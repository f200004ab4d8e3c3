"""One binlog file: the memory map, the magic, the FORMAT_DESCRIPTION_EVENTs and checksums.

The file is mapped once and never copied; everything downstream works on views of it.
A file is read as a sequence of *segments* (runs of whole events of about a given byte
size) so that memory stays bounded on files of any size.
"""

from __future__ import annotations

import mmap
import os
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from .constants import ChecksumAlg, EventType, LogEventFlag, event_type_name
from .errors import (
    ChecksumError,
    EncryptedBinlogError,
    MalformedEventError,
    NotABinlogError,
    TruncatedError,
    TruncatedWarning,
    UnsupportedVersionError,
)
from .checksum import first_mismatch
from .index import EventIndex, WalkStop, walk_headers
from .layout import (
    CHECKSUM_LEN,
    CHECKSUM_VERSION_SPLIT_MARIADB,
    CHECKSUM_VERSION_SPLIT_MYSQL,
    COMMON_HEADER_LEN,
    FDE_CHECKSUM_TRAILER_LEN,
    FDE_POST_HEADER_LENGTHS_OFFSET,
    FDE_SERVER_VERSION_LEN,
    MAGIC,
    MAGIC_LEN,
    Cursor,
    version_tuple,
)

__all__ = ["BinlogFile", "FormatDescription", "Segment"]

#: Default segment size: large enough that NumPy calls are amortised over many events,
#: small enough that a segment's index and decoded columns stay well under the 512 MB budget.
DEFAULT_SEGMENT_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class FormatDescription:
    """A decoded FORMAT_DESCRIPTION_EVENT: how the events after it are laid out."""

    offset: int
    binlog_version: int
    server_version: str
    create_timestamp: int
    header_length: int
    post_header_lengths: bytes  #: entry i is the post-header length of event type i + 1
    checksum_alg: ChecksumAlg  #: UNDEF for servers older than the checksum feature

    @property
    def flavor(self) -> str:
        """``"mariadb"`` or ``"mysql"`` (MySQL, Percona, AliSQL, Aurora...)."""
        return "mariadb" if "mariadb" in self.server_version.lower() else "mysql"

    @property
    def has_checksum(self) -> bool:
        return self.checksum_alg == ChecksumAlg.BINLOG_CHECKSUM_ALG_CRC32

    def post_header_len(self, type_code: int) -> int:
        """Post-header length for an event type (0 for types this FDE does not list)."""
        i = type_code - 1
        if 0 <= i < len(self.post_header_lengths):
            return self.post_header_lengths[i]
        return 0

    @property
    def checksum_name(self) -> str:
        return {
            ChecksumAlg.BINLOG_CHECKSUM_ALG_CRC32: "CRC32",
            ChecksumAlg.BINLOG_CHECKSUM_ALG_OFF: "NONE",
            ChecksumAlg.BINLOG_CHECKSUM_ALG_UNDEF: "NONE (server predates checksums)",
        }[self.checksum_alg]


def parse_format_description(buf: np.ndarray, offset: int, size: int, path: str) -> FormatDescription:
    """Decode the FDE at ``offset`` (layout in :mod:`vecbinlog.layout`)."""
    name = "FORMAT_DESCRIPTION_EVENT"
    body = offset + COMMON_HEADER_LEN
    cur = Cursor(buf, body, offset + size, base=0, path=path, event_type=name)
    binlog_version = cur.u16("binlog_version")
    if binlog_version != 4:
        raise UnsupportedVersionError(
            f"binlog format version {binlog_version}; only v4 (MySQL 5.0+, MariaDB) is supported",
            path=path, offset=offset, event_type=name,
        )
    raw_version = cur.take(FDE_SERVER_VERSION_LEN, "server_version")
    server_version = raw_version.split(b"\0", 1)[0].decode("ascii", "replace")
    create_timestamp = cur.u32("create_timestamp")
    header_length = cur.u8("header_length")
    if header_length != COMMON_HEADER_LEN:
        raise UnsupportedVersionError(
            f"common header length {header_length}, expected {COMMON_HEADER_LEN}",
            path=path, offset=offset, event_type=name,
        )
    if _is_pre_ga_tree(server_version):
        raise UnsupportedVersionError(
            f"server {server_version!r} is a pre-GA 5.1/5.2 development tree whose event type codes "
            "differ from every released server (control_events.cpp, Format_description_event)",
            path=path, offset=offset, event_type=name,
        )
    split = (
        CHECKSUM_VERSION_SPLIT_MARIADB if "mariadb" in server_version.lower()
        else CHECKSUM_VERSION_SPLIT_MYSQL
    )
    n_lengths = size - COMMON_HEADER_LEN - FDE_POST_HEADER_LENGTHS_OFFSET
    if version_tuple(server_version) >= split:
        # A checksum-aware server always writes the algorithm byte and 4 checksum bytes in
        # its FDE, whatever binlog_checksum is (log_event.cc, Format_description_log_event::write).
        n_lengths -= FDE_CHECKSUM_TRAILER_LEN
        alg_byte = int(buf[offset + size - FDE_CHECKSUM_TRAILER_LEN])
        if alg_byte not in (0, 1):
            raise MalformedEventError(
                f"checksum algorithm byte is {alg_byte}; expected 0 (off) or 1 (CRC32)",
                path=path, offset=offset + size - FDE_CHECKSUM_TRAILER_LEN, event_type=name,
            )
        checksum_alg = ChecksumAlg(alg_byte)
    else:
        checksum_alg = ChecksumAlg.BINLOG_CHECKSUM_ALG_UNDEF
    if n_lengths < 0:
        raise MalformedEventError(
            f"event of {size} bytes is too short for a format description", path=path,
            offset=offset, event_type=name,
        )
    post = cur.take(n_lengths, "post_header_lengths")
    return FormatDescription(
        offset=offset,
        binlog_version=binlog_version,
        server_version=server_version,
        create_timestamp=create_timestamp,
        header_length=header_length,
        post_header_lengths=post,
        checksum_alg=checksum_alg,
    )


def _is_pre_ga_tree(server_version: str) -> bool:
    """The 5.1.[1-5]-a_drop5*, 5.1.4-a_drop6* and 5.2.[0-2]-a_drop6* trees MySQL itself reads
    with a permutation of event types."""
    v = server_version
    if len(v) < 13 or not v.startswith("5.") or v[3] != "." or v[5:12] != "-a_drop":
        return False
    return (
        (v[2] == "1" and "1" <= v[4] <= "5" and v[12] == "5")
        or (v[2] == "1" and v[4] == "4" and v[12] == "6")
        or (v[2] == "2" and "0" <= v[4] <= "2" and v[12] == "6")
    )


@dataclass
class Segment:
    """A run of whole events of one file, with their headers as columns."""

    file: BinlogFile
    index: EventIndex
    start: int  #: offset of the first event
    end: int  #: offset after the last event


@dataclass
class _Scan:
    """What a full walk of the file learned (built lazily, once)."""

    formats: list[FormatDescription] = field(default_factory=list)
    stop: WalkStop | None = None
    end: int = 0


class BinlogFile:
    """A memory-mapped binlog file.

    Parameters
    ----------
    path : the file.
    strict : raise :class:`TruncatedError` at a truncated last event instead of warning.
    verify_checksums : check the CRC32 of every event that is decoded.
    """

    def __init__(self, path: str | os.PathLike[str], *, strict: bool = False, verify_checksums: bool = True):
        self.path = str(Path(path))
        self.name = Path(path).name
        self.strict = strict
        self.verify_checksums = verify_checksums
        self._mmap: mmap.mmap | None = None
        try:
            size = os.path.getsize(self.path)
        except OSError as exc:
            raise FileNotFoundError(f"{self.path}: {exc.strerror}") from exc
        self.size = size
        if size < MAGIC_LEN:
            raise NotABinlogError(
                f"file has {size} bytes; a binlog starts with the 4 magic bytes fe 62 69 6e",
                path=self.path, offset=0,
            )
        with open(self.path, "rb") as fh:
            self._mmap = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        self.buf = np.frombuffer(self._mmap, dtype=np.uint8)
        magic = bytes(self.buf[:MAGIC_LEN])
        if magic != MAGIC:
            self.close()
            raise NotABinlogError(
                f"magic bytes are {magic.hex(' ')}, expected fe 62 69 6e", path=self.path, offset=0
            )
        self.formats: list[FormatDescription] = [self._first_format()]
        self.walk_stop: WalkStop | None = None
        self._warned = False

    # -- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        """Release the memory map (arrays still viewing it must not be used afterwards)."""
        self.buf = np.zeros(0, np.uint8)
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                # Arrow/NumPy views of the map are still alive; the map is released
                # when they are garbage collected.
                pass
            self._mmap = None

    def __enter__(self) -> BinlogFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        fde = self.formats[0]
        return f"BinlogFile({self.path!r}, {self.size} bytes, {fde.server_version}, checksum {fde.checksum_name})"

    # -- the FDE -----------------------------------------------------------------------
    def _first_format(self) -> FormatDescription:
        first, _, stop = walk_headers(self.buf, MAGIC_LEN, MAGIC_LEN + 1, self.size)
        if len(first) == 0:
            assert stop is not None
            if self.size == MAGIC_LEN:
                raise TruncatedError(
                    "the file holds only the magic bytes, no FORMAT_DESCRIPTION_EVENT",
                    path=self.path, offset=MAGIC_LEN,
                )
            cls = TruncatedError if stop.kind == "truncated" else MalformedEventError
            raise cls(f"first event: {stop.reason}", path=self.path, offset=stop.offset)
        type_code = int(self.buf[MAGIC_LEN + 4])
        size = int(self.buf[MAGIC_LEN + 9 : MAGIC_LEN + 13].view("<u4")[0])
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
        fde = parse_format_description(self.buf, MAGIC_LEN, size, self.path)
        if fde.has_checksum and self.verify_checksums:
            self._verify_one(MAGIC_LEN, size, int(EventType.FORMAT_DESCRIPTION_EVENT))
        return fde

    # -- walking ---------------------------------------------------------------------
    def segments(
        self, segment_bytes: int = DEFAULT_SEGMENT_BYTES, start: int = MAGIC_LEN, stop: int | None = None
    ) -> Iterator[Segment]:
        """Walk the file (or ``[start, stop)``) as segments of about ``segment_bytes``.

        ``start`` must be an event boundary; the last segment ends at the first boundary at
        or after ``stop``. FORMAT_DESCRIPTION_EVENTs met on the way govern the events after
        them (relay logs hold several).
        """
        limit = self.size
        stop = limit if stop is None else min(stop, limit)
        pos = start
        fmt_id = self._format_id_at(start)
        while pos < stop:
            seg_stop = min(stop, pos + max(segment_bytes, 1))
            index, nxt, walk_stop = walk_headers(self.buf, pos, seg_stop, limit)
            fmt_id = self._assign_formats(index, fmt_id)
            if len(index):
                yield Segment(self, index, pos, nxt)
                self._release(pos, nxt)
            if walk_stop is not None:
                self._stopped(walk_stop)
                return
            pos = nxt

    def _release(self, start: int, end: int) -> None:
        """Let the OS drop the pages of a segment that has been decoded.

        Decoded values are copies, so nothing refers to these pages any more; without this,
        every page of a large file stays resident and RSS grows with the file. Reading the
        range again simply faults the pages back in from the page cache.
        """
        if self._mmap is None or not hasattr(mmap, "MADV_DONTNEED"):
            return
        page = mmap.PAGESIZE
        lo = -(-start // page) * page  # whole pages inside [start, end) only
        hi = (end // page) * page
        if hi - lo >= (1 << 20):
            try:
                self._mmap.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
            except (OSError, ValueError):  # not every platform/mapping allows it; only memory is at stake
                pass

    def _format_id_at(self, offset: int) -> int:
        """The format that governs an event at ``offset`` among those seen so far."""
        fid = 0
        for i, f in enumerate(self.formats):
            if f.offset < offset:
                fid = i
        return fid

    def _assign_formats(self, index: EventIndex, fmt_id: int) -> int:
        """Fill ``index.fmt`` and ``index.body_end``; parse FDEs met in this run of events."""
        fde_pos = np.flatnonzero(index.type_code == EventType.FORMAT_DESCRIPTION_EVENT)
        enc = np.flatnonzero(index.type_code == EventType.START_ENCRYPTION_EVENT)
        if len(enc):
            off = int(index.offset[enc[0]])
            raise EncryptedBinlogError(
                "encrypted binlog (MariaDB encrypt_binlog=ON): decrypt it with the server "
                "(mariadb-binlog --read-from-remote-server) before decoding",
                path=self.path, offset=off, event_type="START_ENCRYPTION_EVENT",
            )
        index.fmt[:] = fmt_id
        for i in fde_pos:
            off = int(index.offset[i])
            known = [f.offset for f in self.formats]
            if off in known:
                fid = known.index(off)
            else:
                fde = parse_format_description(self.buf, off, int(index.event_size[i]), self.path)
                self.formats.append(fde)
                fid = len(self.formats) - 1
            index.fmt[i:] = fid  # an FDE describes itself and what follows it
            fmt_id = fid
        has_crc = np.array([f.has_checksum for f in self.formats], dtype=bool)[index.fmt]
        index.body_end = index.offset + index.event_size.astype(np.int64) - CHECKSUM_LEN * has_crc
        return fmt_id

    def _stopped(self, stop: WalkStop) -> None:
        self.walk_stop = stop
        if stop.kind == "malformed":
            raise MalformedEventError(stop.reason, path=self.path, offset=stop.offset)
        if self.strict:
            raise TruncatedError(stop.reason, path=self.path, offset=stop.offset)
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"{self.path}: reading stopped at offset {stop.offset}: {stop.reason}; "
                "every complete event before it was decoded (strict=True raises instead)",
                TruncatedWarning,
                stacklevel=4,
            )

    def index(self) -> EventIndex:
        """The headers of every event in the file."""
        return EventIndex.concat([s.index for s in self.segments()])

    # -- checksums -------------------------------------------------------------------
    def verify_checksums_of(self, index: EventIndex, which: np.ndarray | None = None) -> None:
        """Check the CRC32 of the events of ``index`` (or of those ``which``, a boolean mask,
        selects) whose format has checksums."""
        if not self.verify_checksums or len(index) == 0:
            return
        has_crc = np.array([f.has_checksum for f in self.formats], dtype=bool)[index.fmt]
        if which is not None:
            has_crc &= which
        start = index.offset[has_crc]
        size = index.event_size[has_crc].astype(np.int64)
        types = index.type_code[has_crc]
        i = first_mismatch(self.buf, start, start + size - CHECKSUM_LEN)
        while i >= 0:  # recheck with the FDE rule; raise with detail
            self._verify_one(int(start[i]), int(size[i]), int(types[i]))
            i = first_mismatch(self.buf, start, start + size - CHECKSUM_LEN, i + 1)

    def _verify_one(self, off: int, size: int, type_code: int) -> None:
        mem = memoryview(self.buf)
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
                stored=stored, computed=computed, path=self.path, offset=off,
                event_type=event_type_name(type_code),
            )
