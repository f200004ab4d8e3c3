"""CRC32 of events (``binlog_checksum=CRC32``): every event of a run checked in one compiled loop.

The last 4 bytes of an event are the CRC32 (zlib's, little-endian) of everything before them
(binlog_event.h, BINLOG_CHECKSUM_LEN). A busy server writes millions of small events, so one
Python call per event would cost more than the CRC itself: the loop over events is compiled
(numba) and calls zlib's own ``crc32`` (the library Python's ``zlib`` module uses, found with
ctypes and registered with LLVM under a name of ours) for each event's bytes. Where no zlib
library can be loaded (or it disagrees with ``zlib.crc32`` on a test vector), the events are
checked by ``zlib.crc32`` one Python call at a time: the same answer, slower.

The FORMAT_DESCRIPTION_EVENT's CRC is computed with LOG_EVENT_BINLOG_IN_USE_F cleared, since
the server sets and clears that flag in place while the file is open (binlog.cc,
MYSQL_BIN_LOG::open): an event whose plain CRC does not match is checked again by that rule
before it is reported.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import zlib
from typing import Callable

import numpy as np
from numba import types

from .jit import kernel
from .layout import CHECKSUM_LEN

__all__ = ["first_mismatch"]

#: the name zlib's crc32 is registered under for compiled code (see module docstring)
_SYMBOL = "vecbinlog_zlib_crc32"
_zlib_crc32 = types.ExternalFunction(_SYMBOL, types.uint64(types.uint64, types.uintp, types.uint32))
_LIBRARIES = ("libz.so.1", "libz.so", "libz.1.dylib", "libz.dylib", "zlib1.dll", "zlib.dll")


@kernel
def _mismatch(buf, start, end, first):  # pragma: no cover - compiled
    """The first event ``i >= first`` (bytes ``[start[i], end[i])``, its CRC32 in the 4 bytes
    at ``end[i]``) whose CRC32 does not match, or -1."""
    base = buf.ctypes.data
    for i in range(first, len(start)):
        e = end[i]
        stored = (np.uint64(buf[e]) | (np.uint64(buf[e + 1]) << 8) | (np.uint64(buf[e + 2]) << 16)
                  | (np.uint64(buf[e + 3]) << 24))
        computed = _zlib_crc32(0, base + np.uint64(start[i]), np.uint32(e - start[i])) & np.uint64(0xFFFFFFFF)
        if computed != stored:
            return i
    return -1


def _python_mismatch(buf: np.ndarray, start: np.ndarray, end: np.ndarray, first: int) -> int:
    """:func:`_mismatch` without a zlib library for compiled code: one ``zlib.crc32`` call per event."""
    mem = memoryview(buf)
    for i, (s, e) in enumerate(zip(start[first:].tolist(), end[first:].tolist()), first):
        if zlib.crc32(mem[s:e]) != int.from_bytes(mem[e : e + CHECKSUM_LEN], "little"):
            return i
    return -1


_KERNEL: Callable[[np.ndarray, np.ndarray, np.ndarray, int], int] | None = None


def _kernel() -> Callable[[np.ndarray, np.ndarray, np.ndarray, int], int]:
    """The compiled check when zlib's crc32 can be registered for it, else the Python one."""
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = _python_mismatch
        address = _crc32_address()
        if address is not None:
            import llvmlite.binding as llvm

            llvm.add_symbol(_SYMBOL, address)
            probe = np.frombuffer(b"vecbinlog checksum probe" + zlib.crc32(b"vecbinlog checksum probe")
                                  .to_bytes(4, "little"), np.uint8)
            if _mismatch(probe, np.zeros(1, np.int64), np.array([len(probe) - 4], np.int64), 0) == -1:
                _KERNEL = _mismatch
    return _KERNEL


def _crc32_address() -> int | None:
    """The address of zlib's ``crc32`` in this process, or None."""
    names = list(_LIBRARIES)
    found = ctypes.util.find_library("z")
    if found:
        names.append(found)
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            return ctypes.cast(lib.crc32, ctypes.c_void_p).value
        except (OSError, AttributeError):
            continue
    return None


def first_mismatch(buf: np.ndarray, start: np.ndarray, end: np.ndarray, first: int = 0) -> int:
    """The first event ``i >= first`` whose stored CRC32 (the 4 bytes at ``end[i]``) is not
    the CRC32 of ``buf[start[i]:end[i]]``, or -1. The caller guarantees ``end[i] + 4`` is
    inside ``buf`` (the header walk does)."""
    if len(start) <= first:
        return -1
    return int(_kernel()(buf, start, end, first))
