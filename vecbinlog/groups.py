"""Values grouped by equality, in order of first appearance: one compiled pass with a hash table.

Decoding groups things all the time: TABLE_MAPs by their bytes' hash, rows events by table or
by effective layout, a batch's GTIDs. ``np.unique`` sorts (and NumPy 2.x's hash path for
integers measured 20-60 ms for 100 000 values with few distinct ones: bench/TUNING.md); the
groups here are found in one pass, and numbered in the order their first value appears,
which is the order callers want (layouts in log order, tables in order of first rows event).
"""

from __future__ import annotations

import numpy as np

from .jit import kernel

__all__ = ["group", "group_order"]


@kernel
def _group(values, table, first, inverse):  # pragma: no cover - compiled
    """Fill ``inverse`` (group of each value) and ``first`` (position of each group's first
    value); ``table`` (-1: free) has a power-of-two size over twice the values. Returns the
    number of groups."""
    mask = np.uint64(len(table) - 1)
    n = 0
    for i in range(len(values)):
        v = values[i]
        slot = ((v * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(29)) & mask
        while True:
            g = table[slot]
            if g == -1:
                table[slot] = n
                first[n] = i
                inverse[i] = n
                n += 1
                break
            if values[first[g]] == v:
                inverse[i] = g
                break
            slot = (slot + np.uint64(1)) & mask
    return n


def group(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of a 1-d array of integers (any width, read as 64-bit): group ``g``
    is the ``g``-th distinct value to appear, ``first[g]`` where it first appears (int64),
    ``inverse[i]`` the group of ``values[i]`` (int64). ``values[first]`` are the distinct
    values, in order of appearance."""
    words = np.ascontiguousarray(values).astype(np.uint64, copy=False)
    size = 16
    while size < 2 * len(words) + 2:
        size *= 2
    first = np.empty(len(words), np.int64)
    inverse = np.empty(len(words), np.int64)
    n = _group(words, np.full(size, -1, np.int64), first, inverse)
    return first[:n].copy(), inverse


def group_order(inverse: np.ndarray, n_groups: int) -> np.ndarray:
    """Positions that put ``inverse``'s values grouped, groups in order 0, 1, ..., each keeping
    the order of its positions (a stable counting sort, by NumPy: few groups fit a narrow
    integer type, which NumPy sorts by radix)."""
    narrow = np.uint8 if n_groups <= 1 << 8 else np.uint16 if n_groups <= 1 << 16 else np.int64
    return np.argsort(inverse.astype(narrow, copy=False), kind="stable")
