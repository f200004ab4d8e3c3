"""zlib's own functions, called from compiled kernels.

numba calls a C function by a symbol LLVM knows: the zlib library Python's ``zlib`` module
uses is found with ctypes, and each function a kernel calls is registered with LLVM under a
name of ours (``vecbinlog_zlib_<name>``), once, before the first kernel that calls it is
loaded (a cached kernel whose symbol is not registered aborts the process). The callers keep
a Python path for where no zlib library can be loaded.

:func:`inflate_stream` gives what ``inflate`` needs besides: a ``z_stream`` as 8-byte words,
for the platforms whose layout of it is known (64-bit ``long``, little-endian), checked on a
test vector against Python's ``zlib`` before it is used (``compressed_columns``).
"""

from __future__ import annotations

import ctypes
import sys
import zlib

import numpy as np

__all__ = ["register", "symbol", "inflate_stream", "ZSTREAM_WORDS", "NEXT_IN", "AVAIL_IN", "NEXT_OUT",
           "AVAIL_OUT", "TOTAL_OUT"]

_LIBRARIES = ("libz.so.1", "libz.so", "libz.1.dylib", "libz.dylib", "zlib1.dll", "zlib.dll")

#: ``z_stream`` (zlib.h) where ``long`` and pointers are 8 bytes: 112 bytes, as 8-byte words;
#: the word of each field a kernel sets or reads (``avail_in``/``avail_out``, 4-byte ``uInt``,
#: the low half of theirs on a little-endian CPU)
ZSTREAM_WORDS = 14
NEXT_IN, AVAIL_IN, NEXT_OUT, AVAIL_OUT, TOTAL_OUT = 0, 1, 3, 4, 5

_registered: dict[str, bool] = {}
_library: ctypes.CDLL | None = None
_searched = False


def _zlib() -> ctypes.CDLL | None:
    """The zlib library of this process, or None."""
    global _library, _searched
    if not _searched:
        import ctypes.util  # (its import, ~1 ms, only when a kernel first calls zlib)

        _searched = True
        names = list(_LIBRARIES)
        found = ctypes.util.find_library("z")
        if found:
            names.append(found)
        for name in names:
            try:
                _library = ctypes.CDLL(name)
                break
            except OSError:
                continue
    return _library


def symbol(name: str) -> str:
    """The name zlib's ``name`` is registered under for compiled code."""
    return f"vecbinlog_zlib_{name}"


def register(*names: str) -> bool:
    """Register zlib's functions ``names`` for compiled code (see the module docstring); False
    when the library, or one of them, cannot be found."""
    missing = [n for n in names if n not in _registered]
    if missing:
        lib = _zlib()
        import llvmlite.binding as llvm

        for name in missing:
            try:
                address = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value if lib is not None else None
            except AttributeError:
                address = None
            if address is not None:
                llvm.add_symbol(symbol(name), address)
            _registered[name] = address is not None
    return all(_registered[n] for n in names)


def inflate_stream() -> tuple[np.ndarray, np.ndarray] | None:
    """A zeroed ``z_stream`` (:data:`ZSTREAM_WORDS` uint64 words) and the NUL-terminated version
    text ``inflateInit2_`` checks against its library's; None where the layout is not known."""
    if ctypes.sizeof(ctypes.c_ulong) != 8 or ctypes.sizeof(ctypes.c_void_p) != 8 or sys.byteorder != "little":
        return None
    version = np.frombuffer(zlib.ZLIB_RUNTIME_VERSION.encode() + b"\0", np.uint8).copy()
    return np.zeros(ZSTREAM_WORDS, np.uint64), version
