"""NEWDECIMAL(p, s) -> ``decimal128(p, s)`` (p <= 38) or ``decimal256(p, s)``, exactly.

Binary layout (strings/decimal.cc, decimal2bin)::

    [lead] [int words ...] [frac words ...] [trail]      all big-endian
    lead   (p - s) % 9 integer digits in dig2bytes[...] bytes
    words  9 digits each, in 4 bytes
    trail  s % 9 fraction digits in dig2bytes[...] bytes

The first bit is inverted (1 = positive); a negative value has every byte inverted too.

Decoding is one compiled pass over a column's values: the unscaled integer ``value * 10**s``
is built from the digit groups by Horner's rule (``acc = acc * 10**digits + group``), in an
int64 up to 18 digits, else in 32-bit limbs negated in two's complement where the value is
negative, and the limbs *are* the little-endian Arrow decimal buffer. No Python int per value.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...jit import check_spans, kernel
from ...tables.table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, validity

_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
_MASK32 = np.uint64(0xFFFFFFFF)


def precision_scale(spec: ColumnSpec) -> tuple[int, int]:
    return spec.meta >> 8, spec.meta & 0xFF


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    p, s = precision_scale(spec)
    p = max(p, 1)
    return pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)


def groups(precision: int, scale: int) -> list[tuple[int, int]]:
    """(bytes, digits) of each digit group, most significant first."""
    intg, frac = precision - scale, scale
    out = []
    if intg % 9:
        out.append((_DIG2BYTES[intg % 9], intg % 9))
    out += [(4, 9)] * (intg // 9)
    out += [(4, 9)] * (frac // 9)
    if frac % 9:
        out.append((_DIG2BYTES[frac % 9], frac % 9))
    return out


def decode(col: ColumnData) -> pa.Array:
    precision, scale = precision_scale(col.spec)
    atype = arrow_type(col.spec, col.name, col.options)
    raw = col.fixed_bytes()
    n = len(raw)
    sizes = groups(precision, scale)
    check_spans(raw.shape[1], 0, sum(b for b, _ in sizes), "DECIMAL values' bytes", col.path)
    nbytes, limit = np.array([b for b, _ in sizes], np.int64), np.array([10**d for _, d in sizes], np.int64)
    bad = np.empty(n, bool)
    if precision <= 18:  # the value fits an int64: decimal128's two 64-bit halves (the high one the sign)
        data = np.empty((n, 2), "<i8")
        _sum_groups(raw, nbytes, limit, data, bad)
    else:  # 32-bit limbs of the Arrow value
        data = np.empty((n, atype.byte_width // 4), "<u4")
        _sum_limbs(raw, nbytes, limit, data, bad)
    bad &= col.valid
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise col.error(f"DECIMAL({precision},{scale}) value has a digit group out of range", i)
    vbuf, nulls = validity(col.valid)
    return pa.Array.from_buffers(atype, n, [vbuf, pa.py_buffer(data)], null_count=nulls)


@kernel(inline="always")
def _digit_groups(raw, i, nbytes, limit, out):  # pragma: no cover - compiled
    """The digit groups of value ``i`` (decimal2bin's bytes) into ``out``, most significant
    first: the sign bit (1 = positive; a negative value has every byte inverted) cleared, then
    each group big-endian in ``nbytes[g]`` bytes. Returns (negative, a group at or over
    ``limit[g]``)."""
    negative = raw.shape[1] > 0 and (raw[i, 0] & 0x80) == 0
    flip = np.int64(0xFF) if negative else np.int64(0)
    out_of_range = False
    pos = 0
    for g in range(len(nbytes)):
        group = np.int64(0)
        for k in range(nbytes[g]):
            b = np.int64(raw[i, pos + k]) ^ flip
            if pos + k == 0:
                b ^= 0x80
            group = (group << 8) | b
        pos += nbytes[g]
        out_of_range |= group >= limit[g]
        out[g] = group
    return negative, out_of_range


@kernel
def _sum_groups(raw, nbytes, limit, data, bad):  # pragma: no cover - compiled
    """Per value: its digit groups (:func:`_digit_groups`, each below ``limit[g]``) summed by
    Horner's rule; ``data[i]`` = (value, sign word)."""
    groups = np.empty(len(nbytes), np.int64)
    for i in range(raw.shape[0]):
        negative, bad[i] = _digit_groups(raw, i, nbytes, limit, groups)
        value = np.int64(0)
        for g in range(len(nbytes)):
            value = value * limit[g] + groups[g]
        if negative:
            value = -value
        data[i, 0] = value
        data[i, 1] = value >> 63


@kernel
def _sum_limbs(raw, nbytes, limit, data, bad):  # pragma: no cover - compiled
    """:func:`_sum_groups` for values past an int64: the digit groups summed by Horner's rule
    in 32-bit limbs (``acc = acc * 10**digits + group``, each product under 2**62), negated in
    two's complement where the value is negative; ``data[i]``'s limbs, least significant first,
    are the Arrow decimal's little-endian bytes (the NumPy form, a pass over the column per
    group and limb: 2.5-12x as long, bench/TUNING.md)."""
    nlimbs = data.shape[1]
    acc = np.empty(nlimbs, np.uint64)
    groups = np.empty(len(nbytes), np.int64)
    for i in range(raw.shape[0]):
        negative, bad[i] = _digit_groups(raw, i, nbytes, limit, groups)
        acc[:] = 0
        for g in range(len(nbytes)):
            carry, mul = np.uint64(groups[g]), np.uint64(limit[g])
            for j in range(nlimbs):
                t = acc[j] * mul + carry
                acc[j] = t & _MASK32
                carry = t >> np.uint64(32)
        carry = np.uint64(1) if negative else np.uint64(0)
        for j in range(nlimbs):
            t = (acc[j] ^ _MASK32 if negative else acc[j]) + carry
            data[i, j] = np.uint32(t & _MASK32)
            carry = t >> np.uint64(32)
