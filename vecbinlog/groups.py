"""Values grouped by equality, in order of first appearance: one compiled pass with a hash table.

Decoding groups things all the time: TABLE_MAPs by their bytes (:func:`group_ranges`), rows
events by table or by effective layout, a batch's GTIDs. ``np.unique`` sorts (and NumPy 2.x's hash path for
integers measured 20-60 ms for 100 000 values with few distinct ones: bench/TUNING.md); the
groups here are found in one pass, and numbered in the order their first value appears,
which is the order callers want (layouts in log order, tables in order of first rows event).
"""

from __future__ import annotations

import numpy as np

from .jit import check_spans, kernel, load_word, prefetch, read_only

__all__ = ["group", "group_order", "group_ranges", "ranks"]


def group(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of a 1-d array of integers (any width, read as 64-bit): group ``g``
    is the ``g``-th distinct value to appear, ``first[g]`` where it first appears (int64),
    ``inverse[i]`` the group of ``values[i]`` (int64). ``values[first]`` are the distinct
    values, in order of appearance."""
    words = np.ascontiguousarray(values).astype(np.uint64, copy=False)
    if len(words) and (words == words[0]).all():  # one group (one server's GTIDs, one table): no hashing
        return np.zeros(1, np.int64), np.zeros(len(words), np.int64)
    start = np.arange(len(words), dtype=np.int64) * 8
    return group_ranges(words.view(np.uint8), start, start + 8)  # each value as its 8 bytes


def ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, rank)`` of small non-negative integers (file numbers, codes): the distinct
    values in ascending order (int64) and each value's place among them (int64), as
    ``np.unique(values, return_inverse=True)`` gives them, by counting instead of sorting."""
    values = np.asarray(values)
    if not len(values):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    present = np.bincount(values) > 0
    return np.flatnonzero(present), (np.cumsum(present) - 1)[values]


def group_order(inverse: np.ndarray, n_groups: int) -> np.ndarray:
    """Positions that put ``inverse``'s values grouped, groups in order 0, 1, ..., each keeping
    the order of its positions (a stable counting sort, by NumPy: few groups fit a narrow
    integer type, which NumPy sorts by radix)."""
    narrow = np.uint8 if n_groups <= 1 << 8 else np.uint16 if n_groups <= 1 << 16 else np.int64
    return np.argsort(inverse.astype(narrow, copy=False), kind="stable")


def group_ranges(buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` as :func:`group`, of the byte strings ``buf[start[i]:end[i]]``
    (int64 arrays, checked to be inside ``buf``): equal bytes, one group. A hash
    finds the candidates, the bytes decide (no collision can merge two strings)."""
    check_spans(len(buf), start, end, "byte strings grouped")
    n = len(start)
    size = 16
    while size < 2 * n + 2:
        size *= 2
    first = np.empty(n, np.int64)
    inverse = np.empty(n, np.int64)
    groups = _group_ranges(read_only(buf), np.ascontiguousarray(start, np.int64), np.ascontiguousarray(end, np.int64),
                           np.full(size, -1, np.int64), np.empty(size, np.uint64), first, inverse)
    return first[:groups].copy(), inverse


@kernel(inline="always")
def _hash_range(buf, p, e):  # pragma: no cover - compiled
    """A 64-bit hash of ``buf[p:e]``: four FNV-1a lanes over 32-byte steps (independent
    multiplications, so that they overlap), then the rest by words and bytes, and the length."""
    prime = np.uint64(0x100000001B3)
    a = np.uint64(0xCBF29CE484222325)
    b, c, d = a ^ np.uint64(1), a ^ np.uint64(2), a ^ np.uint64(3)
    n = e - p
    while p + 32 <= e:
        a = (a ^ load_word(buf, p)) * prime
        b = (b ^ load_word(buf, p + 8)) * prime
        c = (c ^ load_word(buf, p + 16)) * prime
        d = (d ^ load_word(buf, p + 24)) * prime
        p += 32
    h = (((a * prime) ^ b) * prime ^ c) * prime ^ d
    while p + 8 <= e:
        h = (h ^ load_word(buf, p)) * prime
        p += 8
    tail = np.uint64(0)
    for j in range(e - p):
        tail |= np.uint64(buf[p + j]) << np.uint64(8 * j)
    return ((h ^ tail) * prime ^ np.uint64(n)) * prime


@kernel(inline="always")
def _same_range(buf, p, e, q, f):  # pragma: no cover - compiled
    """Whether ``buf[p:e]`` equals ``buf[q:f]``."""
    n = e - p
    if n != f - q:
        return False
    j = 0
    while j + 8 <= n:
        if load_word(buf, p + j) != load_word(buf, q + j):
            return False
        j += 8
    while j < n:
        if buf[p + j] != buf[q + j]:
            return False
        j += 1
    return True


_AHEAD, _AHEAD_BYTES = 8, 512


@kernel
def _group_ranges(buf, start, end, table, hashes, first, inverse):  # pragma: no cover - compiled
    """Fill ``inverse`` (group of each range) and ``first`` (position of each group's first
    range); ``table`` (-1: free; a power-of-two size over twice the ranges) holds group numbers
    and ``hashes`` their hashes, slot by slot. Returns the number of groups."""
    mask = np.uint64(len(table) - 1)
    n = 0
    for i in range(len(start)):
        s, e = start[i], end[i]
        if i + _AHEAD < len(start):  # ranges far apart (events): their cache misses asked for early, to overlap
            for line in range(start[i + _AHEAD], min(end[i + _AHEAD], start[i + _AHEAD] + _AHEAD_BYTES), 64):
                prefetch(buf, line)
        h = _hash_range(buf, s, e)
        slot = ((h * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(29)) & mask
        while True:
            g = table[slot]
            if g == -1:
                table[slot] = n
                hashes[slot] = h
                first[n] = i
                inverse[i] = n
                n += 1
                break
            if hashes[slot] == h and _same_range(buf, s, e, start[first[g]], end[first[g]]):
                inverse[i] = g
                break
            slot = (slot + np.uint64(1)) & mask
    return n
