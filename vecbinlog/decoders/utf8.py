"""Whether text columns are well-formed UTF-8: a compiled check of a whole column at once.

Arrow's own check (``Array.validate(full=True)``) goes value by value at 0.6-1.3 GB/s on the
bench files' text (one byte in six not ASCII); this one checks the column's concatenated bytes
as one stream, :data:`LANES` bytes per step: 7.4x as fast (``bench/test_bench_kernels.py``).

Well-formed (RFC 3629, what Arrow, Python's ``utf-8`` codec and MySQL's utf8mb4 accept) means,
at each byte ``c`` with the three bytes before it ``p1 p2 p3`` (0 before the start):

=============================================  ==============================================
rule                                           broken when
=============================================  ==============================================
continuation bytes exactly where a lead needs  ``c`` is 0x80-0xBF  !=  ``p1`` >= 0xC0 or
them                                           ``p2`` >= 0xE0 or ``p3`` >= 0xF0
bytes that are never in UTF-8                  ``c`` is 0xC0, 0xC1 (overlong 2-byte) or >= 0xF5
no overlong 3-byte form                        ``p1`` == 0xE0 and ``c`` < 0xA0
no surrogate (U+D800-DFFF)                     ``p1`` == 0xED and ``c`` >= 0xA0
no overlong 4-byte form                        ``p1`` == 0xF0 and ``c`` < 0x90
nothing above U+10FFFF                         ``p1`` == 0xF4 and ``c`` >= 0x90
=============================================  ==============================================

(the rules of Keiser and Lemire, "Validating UTF-8 in less than one instruction per byte",
2021). The stream ends complete when the rules hold at three more positions of 0 bytes; each
value on its own is well-formed when, in addition, no value starts with a continuation byte
(one would continue the previous value's last character).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir as llvm_ir
from numba import types
from numba.extending import intrinsic

from ..jit import kernel

__all__ = ["LANES", "valid_values"]

#: bytes checked in one step of the compiled check (an LLVM vector: SIMD where the CPU has it)
LANES = 32


@intrinsic
def _block_errors(typingctx, arr, idx):  # pragma: no cover - compiled
    """Nonzero when a rule above is broken at one of ``arr[idx:idx + LANES]``, given the three
    bytes before ``idx``: it reads ``arr[idx - 3:idx + LANES]``, unchecked."""
    sig = types.uint32(arr, idx)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        i8 = llvm_ir.IntType(8)
        vector = llvm_ir.VectorType(i8, LANES)

        def load(back):  # the LANES bytes from idx - back
            at = builder.gep(data, [builder.sub(args[1], llvm_ir.Constant(args[1].type, back))])
            return builder.load(builder.bitcast(at, vector.as_pointer()), align=1)

        def each(v):
            return llvm_ir.Constant(vector, [llvm_ir.Constant(i8, v)] * LANES)

        def ge(a, v):
            return builder.icmp_unsigned(">=", a, each(v))

        def lt(a, v):
            return builder.icmp_unsigned("<", a, each(v))

        def eq(a, v):
            return builder.icmp_unsigned("==", a, each(v))

        both, either = builder.and_, builder.or_
        c, p1, p2, p3 = load(0), load(1), load(2), load(3)
        continuation = both(ge(c, 0x80), lt(c, 0xC0))
        needed = either(either(ge(p1, 0xC0), ge(p2, 0xE0)), ge(p3, 0xF0))
        bad = builder.xor(continuation, needed)
        bad = either(bad, both(ge(c, 0xC0), lt(c, 0xC2)))
        bad = either(bad, ge(c, 0xF5))
        bad = either(bad, both(eq(p1, 0xE0), lt(c, 0xA0)))
        bad = either(bad, both(eq(p1, 0xED), ge(c, 0xA0)))
        bad = either(bad, both(eq(p1, 0xF0), lt(c, 0x90)))
        bad = either(bad, both(eq(p1, 0xF4), ge(c, 0x90)))
        return builder.bitcast(bad, llvm_ir.IntType(LANES))

    return sig, codegen


@kernel(inline="always")
def _bad_at(s, n, i):  # pragma: no cover - compiled
    """Whether a rule above is broken at position ``i`` (0 <= i < n + 3) of ``s[:n]``: the
    same rules as :func:`_block_errors`, one byte, for the first and the last positions."""
    c = s[i] if i < n else 0
    p1 = s[i - 1] if 1 <= i <= n else 0
    p2 = s[i - 2] if 2 <= i <= n + 1 else 0
    p3 = s[i - 3] if 3 <= i <= n + 2 else 0
    continuation = 0x80 <= c < 0xC0
    needed = p1 >= 0xC0 or p2 >= 0xE0 or p3 >= 0xF0
    return (continuation != needed or 0xC0 <= c < 0xC2 or c >= 0xF5 or (p1 == 0xE0 and c < 0xA0)
            or (p1 == 0xED and c >= 0xA0) or (p1 == 0xF0 and c < 0x90) or (p1 == 0xF4 and c >= 0x90))


@kernel
def _valid_values(offsets, data, n):  # pragma: no cover - compiled
    """Whether each ``data[offsets[i]:offsets[i + 1]]`` is well-formed UTF-8; ``data`` has at
    least ``n = offsets[-1]`` bytes."""
    if n < LANES + 3:  # too short for a step: byte by byte
        for i in range(n + 3):
            if _bad_at(data, n, i):
                return False
    else:
        for i in range(3):
            if _bad_at(data, n, i):
                return False
        errors = np.uint32(0)
        a = 3
        while a + LANES <= n:
            errors |= _block_errors(data, a)
            a += LANES
        if a < n:  # the last bytes, in a step that overlaps the one before
            errors |= _block_errors(data, n - LANES)
        if errors:
            return False
        for i in range(n, n + 3):
            if _bad_at(data, n, i):
                return False
    for k in range(len(offsets) - 1):
        if offsets[k + 1] > offsets[k] and (data[offsets[k]] & 0xC0) == 0x80:
            return False
    return True


def valid_values(offsets: np.ndarray, data: np.ndarray) -> bool:
    """Whether every value ``data[offsets[i]:offsets[i + 1]]`` is well-formed UTF-8.
    ``offsets``: increasing, from 0 (int64, Arrow's); ``data``: their bytes (uint8)."""
    offsets = np.ascontiguousarray(offsets, np.int64)
    data = np.ascontiguousarray(data, np.uint8)
    n = int(offsets[-1]) if len(offsets) else 0
    if n > len(data) or (len(offsets) and int(offsets[0]) != 0):
        raise ValueError(f"offsets from {int(offsets[0])} to {n} do not fit {len(data)} bytes of data")
    return bool(_valid_values(offsets, data, n))
