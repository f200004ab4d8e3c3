"""Whether text columns are well-formed UTF-8: a compiled check of a whole column at once.

Arrow's own check (``Array.validate(full=True)``) goes value by value at 0.6-1.3 GB/s on the
bench files' text (one byte in six not ASCII); this one checks the column's concatenated bytes
as one stream, :data:`LANES` bytes per step: 17x as fast with the table lookups below, 7.4x
with the comparisons (``bench/test_bench_kernels.py``).

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

On x86-64 CPUs with AVX2 the rules are checked the way that paper does: three 16-entry tables
(looked up by ``p1``'s high and low nibbles and ``c``'s high nibble, PSHUFB) whose AND flags
every rule of a byte and the byte before it, and the continuations ``p2``/``p3`` require by
a saturating subtraction: 2.9x the comparisons above on the text bench file's values (4.2
against 12 ms for 93 MB), as fast as NumPy's ``max`` of the same bytes, so ASCII columns are
not looked at first. Other CPUs (and ``NUMBA_CPU_NAME``, which compiles for another CPU) use
the comparisons; both are tested against Python's codec.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir as llvm_ir
from numba import types

from ...jit import host_x86_has, intrinsic, kernel

__all__ = ["LANES", "valid_values"]

#: bytes checked in one step of the compiled check (an LLVM vector: SIMD where the CPU has it)
LANES = 32


_I8 = llvm_ir.IntType(8)
_VECTOR = llvm_ir.VectorType(_I8, LANES)


def _loads(context: Any, builder: Any, sig: Any, args: Any) -> tuple[Any, ...]:
    """Code that loads ``c, p1, p2, p3``: the LANES bytes from ``idx``, ``idx - 1``, ``- 2``, ``- 3``."""
    data = context.make_array(sig.args[0])(context, builder, args[0]).data

    def load(back: int) -> Any:
        at = builder.gep(data, [builder.sub(args[1], llvm_ir.Constant(args[1].type, back))])
        return builder.load(builder.bitcast(at, _VECTOR.as_pointer()), align=1)

    return load(0), load(1), load(2), load(3)


def _each(v: int | list[int]) -> llvm_ir.Constant:
    """A vector constant: ``v`` in every lane, or the 16 values of ``v`` in every 16 lanes."""
    values = v * (LANES // 16) if isinstance(v, list) else [v] * LANES
    return llvm_ir.Constant(_VECTOR, [llvm_ir.Constant(_I8, x) for x in values])


@intrinsic
def _rules_errors(typingctx, arr, idx):  # pragma: no cover - compiled
    """Nonzero when a rule above is broken at one of ``arr[idx:idx + LANES]``, given the three
    bytes before ``idx``: it reads ``arr[idx - 3:idx + LANES]``, unchecked. The rules as
    comparisons (any CPU)."""
    sig = types.uint32(arr, idx)

    def codegen(context, builder, sig, args):
        def ge(a, v):
            return builder.icmp_unsigned(">=", a, _each(v))

        def lt(a, v):
            return builder.icmp_unsigned("<", a, _each(v))

        def eq(a, v):
            return builder.icmp_unsigned("==", a, _each(v))

        both, either = builder.and_, builder.or_
        c, p1, p2, p3 = _loads(context, builder, sig, args)
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


# Keiser and Lemire's tables: a bit per kind of error, set in the entries of each nibble that
# can make it; a byte pair has that error when all three of its lookups have the bit.
_TOO_SHORT, _TOO_LONG, _OVERLONG_3, _TOO_LARGE, _SURROGATE, _OVERLONG_2, _TOO_LARGE_1000, _TWO_CONTS = (
    1 << bit for bit in range(8))
_OVERLONG_4 = _TOO_LARGE_1000  # F0 80-8F: the same bit, told apart by p1's low nibble
_CARRY = _TOO_SHORT | _TOO_LONG | _TWO_CONTS  # errors that do not depend on p1's low nibble
#: by p1's high nibble: ASCII, continuation, lead of 2 (C_, D_), 3 (E_) and 4 bytes (F_)
_P1_HIGH = [_TOO_LONG] * 8 + [_TWO_CONTS] * 4 + [
    _TOO_SHORT | _OVERLONG_2, _TOO_SHORT, _TOO_SHORT | _OVERLONG_3 | _SURROGATE,
    _TOO_SHORT | _TOO_LARGE | _TOO_LARGE_1000 | _OVERLONG_4]
_ABOVE_F4 = _CARRY | _TOO_LARGE | _TOO_LARGE_1000
#: by p1's low nibble: _0 (C0, E0, F0), _1 (C1), _4 (F4), _5 and above (F5-FF), _D (ED)
_P1_LOW = [_CARRY | _OVERLONG_3 | _OVERLONG_2 | _OVERLONG_4, _CARRY | _OVERLONG_2, _CARRY, _CARRY,
           _CARRY | _TOO_LARGE] + [_ABOVE_F4] * 8 + [_ABOVE_F4 | _SURROGATE, _ABOVE_F4, _ABOVE_F4]
_CONT = _TOO_LONG | _OVERLONG_2 | _TWO_CONTS
#: by c's high nibble: ASCII, 80-8F, 90-9F, A0-BF, a lead
_C_HIGH = [_TOO_SHORT] * 8 + [_CONT | _OVERLONG_3 | _TOO_LARGE_1000 | _OVERLONG_4, _CONT | _OVERLONG_3 | _TOO_LARGE,
                             _CONT | _SURROGATE | _TOO_LARGE, _CONT | _SURROGATE | _TOO_LARGE] + [_TOO_SHORT] * 4


@intrinsic
def _lookup_errors(typingctx, arr, idx):  # pragma: no cover - compiled
    """:func:`_rules_errors` by table lookups (x86-64 with AVX2: PSHUFB)."""
    sig = types.uint32(arr, idx)

    def codegen(context, builder, sig, args):
        module = builder.module
        pair = llvm_ir.FunctionType(_VECTOR, [_VECTOR, _VECTOR])
        lookup = module.declare_intrinsic("llvm.x86.avx2.pshuf.b", fnty=pair)
        minus = module.declare_intrinsic(f"llvm.usub.sat.v{LANES}i8", fnty=pair)
        c, p1, p2, p3 = _loads(context, builder, sig, args)
        high = [builder.lshr(v, _each(4)) for v in (p1, c)]
        pairs = builder.and_(
            builder.and_(builder.call(lookup, [_each(_P1_HIGH), high[0]]),
                         builder.call(lookup, [_each(_P1_LOW), builder.and_(p1, _each(0x0F))])),
            builder.call(lookup, [_each(_C_HIGH), high[1]]))
        # bit 7 where p2 >= 0xE0 or p3 >= 0xF0: c must continue a 3- or 4-byte character
        needed = builder.or_(builder.call(minus, [p2, _each(0xE0 - 0x80)]), builder.call(minus, [p3, _each(0xF0 - 0x80)]))
        # a continuation after a continuation is an error unless needed (the tables flag it as _TWO_CONTS)
        bad = builder.xor(builder.and_(needed, _each(0x80)), pairs)
        return builder.bitcast(builder.icmp_unsigned("!=", bad, _each(0)), llvm_ir.IntType(LANES))

    return sig, codegen


@kernel(inline="always")
def _bad_at(s, n, i):  # pragma: no cover - compiled
    """Whether a rule above is broken at position ``i`` (0 <= i < n + 3) of ``s[:n]``: the
    same rules as :func:`_rules_errors`, one byte, for the first and the last positions."""
    c = s[i] if i < n else 0
    p1 = s[i - 1] if 1 <= i <= n else 0
    p2 = s[i - 2] if 2 <= i <= n + 1 else 0
    p3 = s[i - 3] if 3 <= i <= n + 2 else 0
    continuation = 0x80 <= c < 0xC0
    needed = p1 >= 0xC0 or p2 >= 0xE0 or p3 >= 0xF0
    return (continuation != needed or 0xC0 <= c < 0xC2 or c >= 0xF5 or (p1 == 0xE0 and c < 0xA0)
            or (p1 == 0xED and c >= 0xA0) or (p1 == 0xF0 and c < 0x90) or (p1 == 0xF4 and c >= 0x90))


@kernel(inline="always")
def _rules_step(data, a):  # pragma: no cover - compiled
    return _rules_errors(data, a)


@kernel(inline="always")
def _lookup_step(data, a):  # pragma: no cover - compiled
    return _lookup_errors(data, a)


@kernel(inline="always")
def _valid(offsets, data, n, step):  # pragma: no cover - compiled
    """Whether each ``data[offsets[i]:offsets[i + 1]]`` is well-formed UTF-8; ``data`` has at
    least ``n = offsets[-1]`` bytes. ``step``: :func:`_rules_step` or :func:`_lookup_step`."""
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
            errors |= step(data, a)
            a += LANES
        if a < n:  # the last bytes, in a step that overlaps the one before
            errors |= step(data, n - LANES)
        if errors:
            return False
        for i in range(n, n + 3):
            if _bad_at(data, n, i):
                return False
    for k in range(len(offsets) - 1):
        if offsets[k + 1] > offsets[k] and (data[offsets[k]] & 0xC0) == 0x80:
            return False
    return True


@kernel
def _valid_by_rules(offsets, data, n):  # pragma: no cover - compiled
    return _valid(offsets, data, n, _rules_step)


@kernel
def _valid_by_lookup(offsets, data, n):  # pragma: no cover - compiled
    return _valid(offsets, data, n, _lookup_step)


#: whether the table lookups are used (decided on first use)
_LOOKUP: bool | None = None


def valid_values(offsets: np.ndarray, data: np.ndarray) -> bool:
    """Whether every value ``data[offsets[i]:offsets[i + 1]]`` is well-formed UTF-8.
    ``offsets``: increasing, from 0 (int64, Arrow's); ``data``: their bytes (uint8)."""
    global _LOOKUP
    offsets = np.ascontiguousarray(offsets, np.int64)
    data = np.ascontiguousarray(data, np.uint8)
    n = int(offsets[-1]) if len(offsets) else 0
    if n > len(data) or (len(offsets) and int(offsets[0]) != 0):
        raise ValueError(f"offsets from {int(offsets[0])} to {n} do not fit {len(data)} bytes of data")
    if _LOOKUP is None:
        _LOOKUP = host_x86_has("avx2")
    if _LOOKUP:
        return bool(_valid_by_lookup(offsets, data, n))
    # ASCII is valid UTF-8: the comparisons are 3x slower than NumPy's max, so only other bytes are checked
    return n == 0 or int(data[:n].max()) <= 0x7F or bool(_valid_by_rules(offsets, data, n))
