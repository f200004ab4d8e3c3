"""String and binary Arrow arrays as NumPy buffers (offsets from 0, data bytes) and back, and
byte tables: what the text formatting of :mod:`vecbinlog.cli.text`, :mod:`~vecbinlog.cli.widths`
and :mod:`~vecbinlog.cli.lines` works on, a whole column at a time."""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pyarrow as pa

from ..arrowbuild import binary_like
from ..jit import kernel

__all__ = ["string_parts", "string_array", "gather_ranges", "contains_any", "marked", "any_marked", "byte_table"]


def string_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64 of n + 1, data uint8) of a string/binary array, offsets from 0."""
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type):
        odt: type[np.integer] = np.int64
    else:
        odt = np.int32
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], odt, count=len(arr) + 1, offset=arr.offset * np.dtype(odt).itemsize)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    start, end = int(offsets[0]), int(offsets[-1])
    return offsets.astype(np.int64) - start, data[start:end]


def string_array(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A string array of ``offsets`` (n + 1, from 0) into ``data`` (large when it must be)."""
    n = len(offsets) - 1
    return binary_like(pa.string(), n, offsets, np.ascontiguousarray(data), np.ones(n, bool))


def gather_ranges(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bytes ``data[starts[i] : starts[i] + lengths[i]]`` back to back: (offsets, data)."""
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    idx = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1] - starts, lengths)
    return offsets, data[idx]


def contains_any(arr: pa.Array, table: np.ndarray) -> bool:
    """Whether any byte of the string array's values is marked in ``table`` (256 bools)."""
    return marked(string_parts(arr)[1], table)


def marked(data: np.ndarray, table: np.ndarray) -> bool:
    """Whether any byte of ``data`` is marked in ``table`` (256 bools). Told by NumPy where it
    can (min, max and comparisons run at 10-30 GB/s, the compiled scan at ~2): the marked bytes
    are a run from 0 (control characters), a run up to 255 (non-ASCII) and up to three others
    (a quote, a backslash); no byte of ``data`` in the marked ones' span settles it at once."""
    if len(data) == 0:
        return False
    values = np.flatnonzero(table)
    if len(values) == 0:
        return False
    low, high = int(data.min()), int(data.max())
    if high < values[0] or low > values[-1]:
        return False
    from_zero = _run(values, 0, 1)  # 0, 1, 2... marked
    to_top = _run(values[::-1], 255, -1)  # 255, 254... marked
    if (from_zero and low < from_zero) or (to_top and high > 255 - to_top):
        return True
    others = values[from_zero: len(values) - to_top]
    if len(others) > 3:
        return any_marked(data, table)
    return any(bool((data == v).any()) for v in others.tolist())


def _run(values: np.ndarray, first: int, step: int) -> int:
    """How many of ``values``, from the first, are ``first``, ``first + step``, ..."""
    same = values == first + step * np.arange(len(values))
    return len(values) if same.all() else int(np.argmin(same))


@kernel
def any_marked(data, table):  # pragma: no cover - compiled
    for b in data:
        if table[b]:
            return True
    return False


def byte_table(chars: Iterable[int]) -> np.ndarray:
    t = np.zeros(256, bool)
    t[list(chars)] = True
    return t
