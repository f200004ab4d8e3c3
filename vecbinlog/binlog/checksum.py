"""CRC32 of events (``binlog_checksum=CRC32``): every event of a run checked in one compiled loop.

The last 4 bytes of an event are the CRC32 (zlib's, little-endian) of everything before them
(binlog_event.h, BINLOG_CHECKSUM_LEN). A busy server writes millions of small events, so one
Python call per event would cost more than the CRC itself: the loop over events is compiled
(numba) and calls zlib's own ``crc32`` (the library Python's ``zlib`` module uses, found with
ctypes and registered with LLVM under a name of ours: :mod:`vecbinlog.zlibcalls`) for each
event's bytes. Where no zlib library can be loaded (or it disagrees with ``zlib.crc32`` on a
test vector), the events are checked by ``zlib.crc32`` one Python call at a time: the same
answer, slower.

zlib 1.2 computes a CRC32 at ~4 GB/s, which made it a sixth of ``read_all``'s time on files of
large events. On x86-64 CPUs with PCLMULQDQ (every one since 2010) events of
:data:`FOLD_MIN` bytes or more are folded instead, 64 bytes a step, by carry-less
multiplication (Gopal et al., "Fast CRC computation for generic polynomials using PCLMULQDQ",
Intel, 2009; the constants below are theirs for zlib's reflected polynomial, as in Linux's
``crc32-pclmul_asm.S``): ~10 GB/s (``bench/test_bench_kernels.py``). Their last bytes (fewer
than 16), and shorter events, go through a byte table in the same loop; the kernel is checked
against ``zlib.crc32`` before it is used. Other CPUs use zlib throughout.

The FORMAT_DESCRIPTION_EVENT's CRC is computed with LOG_EVENT_BINLOG_IN_USE_F cleared, since
the server sets and clears that flag in place while the file is open (binlog.cc,
MYSQL_BIN_LOG::open): an event whose plain CRC does not match is checked again by that rule
before it is reported.
"""

from __future__ import annotations

import zlib
from typing import Any, Callable

import numpy as np
from llvmlite import ir as llvm_ir
from numba import types
from numba.core import cgutils

from ..jit import check_spans, host_x86_has, intrinsic, kernel, load_word, prefetch, read_only
from ..zlibcalls import register, symbol
from .spec import CHECKSUM_LEN

__all__ = ["first_mismatch"]

#: zlib's crc32 as kernels call it (Any: numba, not Python, types that call)
_zlib_crc32: Any = types.ExternalFunction(symbol("crc32"), types.uint64(types.uint64, types.uintp, types.uint32))


@kernel(inline="always")
def _stored(buf, e):  # pragma: no cover - compiled
    """The CRC32 stored in the 4 bytes at ``e`` (little-endian)."""
    return (np.uint64(buf[e]) | (np.uint64(buf[e + 1]) << 8) | (np.uint64(buf[e + 2]) << 16)
            | (np.uint64(buf[e + 3]) << 24))


@kernel
def _mismatch(buf, start, end, first):  # pragma: no cover - compiled
    """The first event ``i >= first`` (bytes ``[start[i], end[i])``, its CRC32 in the 4 bytes
    at ``end[i]``) whose CRC32 does not match, or -1."""
    base = buf.ctypes.data
    for i in range(first, len(start)):
        e = end[i]
        computed = _zlib_crc32(0, base + np.uint64(start[i]), np.uint32(e - start[i])) & _LOW32
        if computed != _stored(buf, e):
            return i
    return -1


# -- folding by carry-less multiplication (x86-64 PCLMULQDQ) ------------------------------------

#: zlib's CRC32 polynomial, x^32 + x^26 + ... + 1
_POLY = 0x104C11DB7


def _reflected_power(k: int) -> np.uint64:
    """x^k mod _POLY, bit-reflected (33 bits, as the reflected algorithm wants it)."""
    r = 1
    for _ in range(k):
        r <<= 1
        if r >> 32:
            r ^= _POLY
    return np.uint64(int(f"{r:032b}"[::-1], 2) << 1)


def _reflected_quotient() -> np.uint64:
    """floor(x^64 / _POLY), bit-reflected (33 bits): Barrett's mu."""
    num, q = 1 << 64, 0
    while num.bit_length() >= 33:
        shift = num.bit_length() - 33
        q |= 1 << shift
        num ^= _POLY << shift
    return np.uint64(int(f"{q:033b}"[::-1], 2))


#: the constants of the folds: (name, value, what it does)
#: K1, K2  x^544, x^480 mod P   fold each of 4 lanes of 16 bytes over the next 64 bytes
#: K3, K4  x^160, x^96 mod P    fold 16 bytes over the next 16 (and the lanes into one)
#: K5      x^64 mod P           fold 64 bits to 32
#: MU, P'  x^64 / P, P          Barrett's reduction of the last 64 bits to the CRC
_K1, _K2, _K3, _K4, _K5 = (_reflected_power(k) for k in (544, 480, 160, 96, 64))
_MU, _P = _reflected_quotient(), np.uint64(int(f"{_POLY:033b}"[::-1], 2))
_LOW32 = np.uint64(0xFFFFFFFF)
#: events of at least this many bytes are folded (shorter ones, and the last bytes of the
#: others, go through the table below: one call of zlib costs ~100 ns, more than 60 bytes do)
FOLD_MIN = 64


def _byte_tables() -> np.ndarray:
    """The tables of slicing-by-8 (uint64, 8 x 256): row 0 is the CRC32 of each byte value
    (the reflected polynomial's table), row k that of the byte followed by k zero bytes."""
    crc = np.arange(256, dtype=np.uint64)
    for _ in range(8):
        crc = np.where(crc & 1, (crc >> np.uint64(1)) ^ np.uint64(0xEDB88320), crc >> np.uint64(1))
    tables = np.empty((8, 256), np.uint64)
    tables[0] = crc
    for k in range(1, 8):
        prev = tables[k - 1]
        tables[k] = (prev >> np.uint64(8)) ^ crc[(prev & np.uint64(0xFF)).astype(np.int64)]
    return tables


_TABLES = _byte_tables()
_TABLE = _TABLES[0]


@kernel(inline="always")
def _crc_of_bytes(buf, p, q, crc):  # pragma: no cover - compiled
    """zlib's ``crc32(crc, buf[p:q])``: 8 bytes a step by slicing-by-8 (Intel's, as in zlib's
    and Linux's table CRCs), the last few a byte at a time."""
    c = crc ^ _LOW32
    t = _TABLES
    ff = np.uint64(0xFF)
    while p + 8 <= q:
        w = load_word(buf, p) ^ c
        c = (t[7, w & ff] ^ t[6, (w >> np.uint64(8)) & ff] ^ t[5, (w >> np.uint64(16)) & ff]
             ^ t[4, (w >> np.uint64(24)) & ff] ^ t[3, (w >> np.uint64(32)) & ff] ^ t[2, (w >> np.uint64(40)) & ff]
             ^ t[1, (w >> np.uint64(48)) & ff] ^ t[0, w >> np.uint64(56)])
        p += 8
    for i in range(p, q):
        c = _TABLE[(c ^ np.uint64(buf[i])) & ff] ^ (c >> np.uint64(8))
    return c ^ _LOW32


@intrinsic
def _clmul(typingctx, a, b):  # pragma: no cover - compiled
    """The carry-less product of two uint64 (PCLMULQDQ): its (low, high) 64 bits."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, sig, args):
        i32, i64 = llvm_ir.IntType(32), llvm_ir.IntType(64)
        pair = llvm_ir.VectorType(i64, 2)
        lane = [llvm_ir.Constant(i32, 0), llvm_ir.Constant(i32, 1)]
        va = builder.insert_element(llvm_ir.Constant(pair, None), args[0], lane[0])
        vb = builder.insert_element(llvm_ir.Constant(pair, None), args[1], lane[0])
        fn = cgutils.get_or_insert_function(
            builder.module, llvm_ir.FunctionType(pair, [pair, pair, llvm_ir.IntType(8)]), "llvm.x86.pclmulqdq")
        product = builder.call(fn, [va, vb, llvm_ir.Constant(llvm_ir.IntType(8), 0)])
        return context.make_tuple(builder, sig.return_type,
                                  [builder.extract_element(product, lane[0]), builder.extract_element(product, lane[1])])

    return sig, codegen


@kernel(inline="always")
def _fold(lo, hi, k_lo, k_hi):  # pragma: no cover - compiled
    """The 128 bits (lo, hi) folded forward by the constants (k_lo, k_hi)."""
    a, b = _clmul(lo, k_lo)
    c, d = _clmul(hi, k_hi)
    return a ^ c, b ^ d


@kernel(inline="always")
def _folded_crc(buf, p, n):  # pragma: no cover - compiled
    """zlib's CRC32 of ``buf[p:p + m]`` and ``m``: the bytes folded, n rounded down to 16
    (``n`` >= 64; reads nothing past ``p + m``)."""
    e = p + (n & ~15)
    x0l = load_word(buf, p) ^ _LOW32  # zlib's initial ~0
    x0h = load_word(buf, p + 8)
    x1l, x1h = load_word(buf, p + 16), load_word(buf, p + 24)
    x2l, x2h = load_word(buf, p + 32), load_word(buf, p + 40)
    x3l, x3h = load_word(buf, p + 48), load_word(buf, p + 56)
    q = p + 64
    while q + 64 <= e:  # four lanes, each 16 bytes folded over the 16 bytes 64 further on
        a, b = _fold(x0l, x0h, _K1, _K2)
        x0l, x0h = a ^ load_word(buf, q), b ^ load_word(buf, q + 8)
        a, b = _fold(x1l, x1h, _K1, _K2)
        x1l, x1h = a ^ load_word(buf, q + 16), b ^ load_word(buf, q + 24)
        a, b = _fold(x2l, x2h, _K1, _K2)
        x2l, x2h = a ^ load_word(buf, q + 32), b ^ load_word(buf, q + 40)
        a, b = _fold(x3l, x3h, _K1, _K2)
        x3l, x3h = a ^ load_word(buf, q + 48), b ^ load_word(buf, q + 56)
        q += 64
    a, b = _fold(x0l, x0h, _K3, _K4)  # the lanes into one
    a, b = _fold(a ^ x1l, b ^ x1h, _K3, _K4)
    a, b = _fold(a ^ x2l, b ^ x2h, _K3, _K4)
    xl, xh = a ^ x3l, b ^ x3h
    while q + 16 <= e:
        a, b = _fold(xl, xh, _K3, _K4)
        xl, xh = a ^ load_word(buf, q), b ^ load_word(buf, q + 8)
        q += 16
    tl, th = _clmul(_K4, xl)  # 128 bits -> 64 (with the 32 zero bits a CRC appends)
    yl, yh = xh ^ tl, th
    zl, _ = _clmul(yl & _LOW32, _K5)  # 64 -> 32 + 32
    w = ((yh << np.uint64(32)) | (yl >> np.uint64(32))) ^ zl
    v, _ = _clmul(w & _LOW32, _MU)  # Barrett: w mod P
    r, _ = _clmul(v & _LOW32, _P)
    return (((w ^ r) >> np.uint64(32)) ^ _LOW32) & _LOW32, q - p


#: events ahead whose first bytes are asked for (a run's events are scattered over its segment:
#: the CPU does not guess where the next one is; asked early, their cache misses overlap)
_AHEAD, _AHEAD_BYTES = 8, 1024


@kernel
def _mismatch_folded(buf, start, end, first):  # pragma: no cover - compiled
    """:func:`_mismatch`, events of FOLD_MIN bytes or more folded (x86-64 with PCLMULQDQ only)."""
    for i in range(first, len(start)):
        s, e = start[i], end[i]
        if i + _AHEAD < len(start):  # the events of a run are scattered: ask for the next ones early
            for line in range(start[i + _AHEAD], min(end[i + _AHEAD], start[i + _AHEAD] + _AHEAD_BYTES), 64):
                prefetch(buf, line)
        crc, done = np.uint64(0), 0
        if e - s >= FOLD_MIN:
            crc, done = _folded_crc(buf, s, e - s)
        if _crc_of_bytes(buf, s + done, e, crc) != _stored(buf, e):
            return i
    return -1


def _python_mismatch(buf: np.ndarray, start: np.ndarray, end: np.ndarray, first: int) -> int:
    """:func:`_mismatch` without a zlib library for compiled code: one ``zlib.crc32`` call per event."""
    mem = buf.data
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
        if register("crc32"):
            if host_x86_has("pclmul") and _agrees_with_zlib(_mismatch_folded):
                _KERNEL = _mismatch_folded
            elif _agrees_with_zlib(_mismatch):
                _KERNEL = _mismatch
    return _KERNEL


def _agrees_with_zlib(check: Callable[[np.ndarray, np.ndarray, np.ndarray, int], int]) -> bool:
    """Whether ``check`` finds the CRC32 that ``zlib.crc32`` gives right, on events of every
    length from 0 to 2 * FOLD_MIN, and wrong where one byte is changed."""
    body = ((np.arange(4 * FOLD_MIN) * 167 + 13) % 251).astype(np.uint8).tobytes()
    parts, start, end, at = [], [], [], 0
    for n in range(2 * FOLD_MIN + 1):
        parts += [body[n : 2 * n], zlib.crc32(body[n : 2 * n]).to_bytes(4, "little")]
        start.append(at)
        end.append(at + n)
        at += n + 4
    data = np.frombuffer(b"".join(parts), np.uint8).copy()
    events = read_only(data)  # (the kind of array reads give it; a view of data, changed below)
    starts, ends = np.array(start, np.int64), np.array(end, np.int64)
    try:
        if check(events, starts, ends, 0) != -1:
            return False
        data[ends[-1] - 17] ^= 1
        return check(events, starts, ends, 0) == len(starts) - 1
    except Exception:  # noqa: BLE001 - a kernel this LLVM cannot build: zlib alone
        return False


def first_mismatch(buf: np.ndarray, start: np.ndarray, end: np.ndarray, first: int = 0) -> int:
    """The first event ``i >= first`` whose stored CRC32 (the 4 bytes at ``end[i]``) is not
    the CRC32 of ``buf[start[i]:end[i]]``, or -1. Every ``[start[i], end[i] + 4)`` is checked
    to be inside ``buf`` first (:func:`~vecbinlog.jit.check_spans`)."""
    if len(start) <= first:
        return -1
    check_spans(len(buf), start[first:], end[first:] + CHECKSUM_LEN, "CRC32 check")
    return int(_kernel()(read_only(buf), start, end, first))
