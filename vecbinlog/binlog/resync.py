"""Where a transaction starts near an offset in the middle of a binlog file, without walking
the events before it: what lets a huge file be indexed in ranges, each by a task of its own
(:func:`vecbinlog.index.index_job` with ``range_bytes``).

Events carry no sync marker, but a server's binlog names in each header where the event ends
(``log_pos``, the file offset after it, modulo 2**32). From the offset asked for, the first
offset where :data:`CHAIN_EVENTS` headers follow one another, each with a size in bounds, a
type code a server writes and the ``log_pos`` its place gives, is taken as an event boundary;
the headers are walked from there to the first transaction start after it (by the one rule of
:mod:`.transactions`). A false find is possible in hostile bytes (and in a relay log, whose
``log_pos`` are the source's), so what is found here is never trusted alone: the range before
it must be walked from its own start to end exactly there, with no transaction open
(:func:`vecbinlog.index._merge_ranges`), or the file is indexed whole.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import BinlogError, TruncatedWarning
from ..jit import kernel
from .compression import unpack_segment
from .file import BinlogFile
from .spec import COMMON_HEADER_LEN
from .transactions import StartScan

__all__ = ["CHAIN_EVENTS", "LOOK_BYTES", "transaction_start_after"]

#: consecutive headers that must agree for an offset to be taken as an event boundary
CHAIN_EVENTS = 4
#: bytes read from the offset asked for to find a boundary, then a transaction start
LOOK_BYTES = 8 << 20
#: the headers are walked from a boundary found in steps of this many bytes, to the first transaction start
_STEP_BYTES = 64 << 10
#: the largest type code a server writes (MariaDB's are 160-180)
_MAX_TYPE = 200

# the common header (binlog_event.h): a table of offsets
_SIZE_AT, _LOG_POS_AT, _TYPE_AT = 9, 13, 4


@kernel(inline="always")
def _u32(buf, p):  # pragma: no cover - compiled
    return (np.int64(buf[p]) | (np.int64(buf[p + 1]) << 8) | (np.int64(buf[p + 2]) << 16)
            | (np.int64(buf[p + 3]) << 24))


@kernel
def _chain_start(buf, lo, hi, base, need, max_size, n, at_end):  # pragma: no cover - compiled
    """The first ``p`` in ``[lo, hi)`` where ``need`` whole headers chain in ``buf[:n]`` (each
    event's size in [19, max_size], its type in 1.._MAX_TYPE, its log_pos the file offset
    ``base + p`` plus its size, modulo 2**32), or fewer that end exactly at ``n`` when that is
    the end of the file (``at_end``), or -1."""
    for p in range(lo, hi):
        q = p
        found = 0
        while found < need and q + COMMON_HEADER_LEN <= n:
            size = _u32(buf, q + _SIZE_AT)
            kind = buf[q + _TYPE_AT]
            if size < COMMON_HEADER_LEN or size > max_size or kind == 0 or kind > _MAX_TYPE:
                break
            if _u32(buf, q + _LOG_POS_AT) != (base + q + size) & 0xFFFFFFFF or q + size > n:
                break
            q += size
            found += 1
        if found == need or (found > 0 and q == n and at_end):
            return p
    return -1


def transaction_start_after(f: BinlogFile, at: int, look: int = LOOK_BYTES) -> int | None:
    """The first transaction start after an event boundary found at or after ``at`` (within
    ``look`` bytes of it), or None (none found: huge events, a relay log, hostile bytes)."""
    buf, base = f.source.window(at, at + look, at + look)
    lo = at - base
    hi = min(len(buf), lo + look) - COMMON_HEADER_LEN
    if hi <= lo:
        return None
    n = len(buf)
    p = int(_chain_start(buf, lo, hi, base, CHAIN_EVENTS, min(f.max_event_bytes, look), n, f.source.at_end(base + n)))
    if p < 0:
        return None
    found = base + p
    scan = StartScan(found)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncatedWarning)
            for seg in f.segments(_STEP_BYTES, start=found, stop=at + look):
                unpacked = unpack_segment(seg.src, seg.index)
                src, index = unpacked if unpacked is not None else (seg.src, seg.index)
                starts = index.pos[scan.feed(src, index, seg.end)]
                later = starts[starts > found]  # not the boundary itself: it may be the BEGIN after a GTID
                if len(later):
                    return int(later[0])
    except BinlogError:  # not a boundary after all
        return None
    return None
