"""What every column decoder receives, and the vectorised gathers they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pyarrow as pa

from ..errors import MalformedEventError
from ..table_map import ColumnSpec

__all__ = ["ColumnData", "gather_fixed", "gather_var", "validity", "DecodeOptions"]


@dataclass(frozen=True)
class DecodeOptions:
    """User choices that change how values are typed (see :func:`vecbinlog.open`)."""

    #: per column name or ``@N``: "signed"/"unsigned" or an Arrow integer type name
    signedness: dict[str, bool] = field(default_factory=dict)
    #: per column name or ``@N``: a MySQL character set name ("utf8mb4", "latin1", "binary"...)
    charsets: dict[str, str] = field(default_factory=dict)
    #: the table's column names, in order, when the user gives them
    names: tuple[str, ...] | None = None
    #: MySQL flavour of the file ("mysql" or "mariadb"), for collation ids that differ
    flavor: str = "mysql"
    #: zero, partly-zero and impossible dates ('0000-00-00', '2020-00-15', '2001-02-29' under
    #: ALLOW_INVALID_DATES), legal in MySQL but not in Arrow:
    #: "null" (default: null in the typed column, with a DecodeWarning that counts them) or
    #: "string" (every temporal column comes back as MySQL's own text, so nothing is lost)
    invalid_dates: str = "null"


@dataclass
class ColumnData:
    """One column of a group of row images, located but not yet decoded.

    A fixed-width column comes with its values' bytes (``raw``, as the walk writes them; or
    ``offsets`` to gather them from), a length-prefixed one with ``offsets``/``lengths``,
    absolute positions in ``buf``; where ``valid`` is False (NULL, or absent from the image)
    they are zeros and must not be read.
    """

    spec: ColumnSpec
    name: str
    buf: np.ndarray  #: uint8, the whole file
    offsets: np.ndarray | None  #: int64, shape (n,): where each value starts
    lengths: np.ndarray | None  #: int64, shape (n,): value length (length-prefixed types)
    width: int  #: value length for fixed-width types (0 for length-prefixed ones)
    valid: np.ndarray  #: bool, shape (n,)
    options: DecodeOptions
    warnings: list[str] = field(default_factory=list)
    path: str | None = None  #: the binlog file, for errors
    #: uint8 (n, width), C-contiguous: the values' bytes (fixed-width types)
    raw: np.ndarray | None = None
    #: where the value of a row is in ``buf`` (for errors), when ``offsets`` does not say
    locate: Callable[[int], int | None] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.valid)

    def fixed_bytes(self) -> np.ndarray:
        """The ``width`` bytes of each value (fixed-width types): uint8 (n, width), C-contiguous."""
        if self.raw is None:  # a column given by positions (tests, a value unpacked elsewhere)
            self.raw = gather_fixed(self.buf, self.offsets, self.width)
        return self.raw

    def offset_of(self, row: int) -> int | None:
        """The absolute offset of the value of ``row``."""
        if self.offsets is not None:
            return int(self.offsets[row])
        return self.locate(row) if self.locate is not None else None

    def error(self, message: str, row: int) -> MalformedEventError:
        """An error about the value of ``row``, located at its absolute file offset."""
        return MalformedEventError(
            f"column {self.name!r}: {message}", path=self.path, offset=self.offset_of(row), event_type="rows event"
        )


def validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    """Arrow validity bitmap (LSB first) and null count; no buffer when nothing is null."""
    null_count = int(len(valid) - np.count_nonzero(valid))
    if null_count == 0:
        return None, 0
    return pa.py_buffer(np.packbits(valid, bitorder="little")), null_count


def gather_fixed(buf: np.ndarray, offsets: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` bytes at each offset: uint8 array of shape (n, width), C-contiguous.

    The file is viewed as overlapping ``width``-byte records, one starting at every byte
    (``void`` items with a stride of 1, no copy), and the records at ``offsets`` are taken:
    a copy of ``width`` bytes per value with an index of one int64 per value, instead of
    one per byte (2-3x faster for the usual widths)."""
    if width == 0:
        return np.zeros((len(offsets), 0), np.uint8)
    if len(buf) < width:
        return np.take(buf, offsets[:, None] + np.arange(width, dtype=np.int64))
    records = np.ndarray(shape=(len(buf) - width + 1,), dtype=np.dtype((np.void, width)), buffer=buf, strides=(1,))
    return records[offsets].view(np.uint8).reshape(len(offsets), width)  # (np.take would copy records)


def gather_var(
    buf: np.ndarray, offsets: np.ndarray, lengths: np.ndarray, valid: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate variable-length values: Arrow-style offsets (int64, n+1) and the data bytes.

    The values are described to Arrow as a ``binary_view`` array pointing into the file
    (16 bytes per value: length, and either the value itself when it has at most 12 bytes or
    its first 4 bytes and its offset), and Arrow's cast to ``binary`` does the copy in C++.
    That avoids index arrays as long as the data, which cost more than the copy itself.
    """
    n = len(offsets)
    lens = np.where(valid, lengths, 0).astype(np.int64)
    if n == 0 or not lens.any():
        return np.zeros(n + 1, np.int64), np.zeros(0, np.uint8)
    base = int(offsets[valid & (lens > 0)].min())
    span = int((offsets + lens)[valid].max()) - base
    if span >= 2**31 or int(lens.sum()) >= 2**31:
        return _gather_var_indexed(buf, offsets, lens)
    window = buf[base : base + span]
    rel = np.where(lens > 0, offsets - base, 0)
    out = _gather_in_order(window, rel, lens)
    if out is not None:
        return out
    views = np.empty((n, 4), np.int32)  # length, then 12 inline bytes or prefix/buffer/offset
    views[:, 0] = lens
    vbytes = views.view(np.uint8).reshape(n, 16)
    # the 12 bytes from each value's start (12-byte records of the file; clipped at its end)
    near_end = offsets + 12 > len(buf)
    vbytes[:, 4:16] = gather_fixed(buf, np.where(near_end | (lens == 0), 0, offsets), 12) if len(buf) >= 12 else 0
    if near_end.any():
        k = np.arange(12, dtype=np.int64)
        vbytes[near_end, 4:16] = np.take(buf, offsets[near_end, None] + k, mode="clip")
    vbytes[:, 4:16] *= np.arange(12) < lens[:, None]  # inline values end with zeros
    long_ = lens > 12
    views[long_, 2] = 0  # buffer index; the first 4 bytes stay as the prefix
    views[long_, 3] = rel[long_]
    arr = pa.Array.from_buffers(pa.binary_view(), n, [None, pa.py_buffer(views), pa.py_buffer(window)])
    out = arr.cast(pa.binary())
    _, off_buf, data_buf = out.buffers()
    out_offsets = np.frombuffer(off_buf, np.int32, count=n + 1).astype(np.int64)
    data = np.frombuffer(data_buf, np.uint8, count=int(out_offsets[-1])) if data_buf is not None else np.zeros(0, np.uint8)
    return out_offsets, data


def _gather_in_order(window: np.ndarray, rel: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """gather_var when the values lie in row order without overlapping (a column of row images
    in log order): the window is described as a binary array of 2n items, value then gap, and
    Arrow's take of every other item copies the values (about 4x faster than the view cast).
    None when the values are not in that order."""
    n = len(rel)
    has = lens > 0
    start = rel
    end = rel + lens
    reached = np.maximum.accumulate(np.where(has, end, 0))  # the end of the values so far
    start = np.where(has, start, reached)
    end = np.where(has, end, reached)
    if n > 1 and not (start[1:] >= end[:-1]).all():
        return None
    bounds = np.empty(2 * n + 1, np.int32)
    bounds[0 : 2 * n : 2] = start
    bounds[1 : 2 * n : 2] = end
    bounds[2 * n] = end[-1]
    items = pa.Array.from_buffers(pa.binary(), 2 * n, [None, pa.py_buffer(bounds), pa.py_buffer(window)])
    out = items.take(pa.array(np.arange(0, 2 * n, 2, dtype=np.int32)))
    _, off_buf, data_buf = out.buffers()
    out_offsets = np.frombuffer(off_buf, np.int32, count=n + 1).astype(np.int64)
    data = np.frombuffer(data_buf, np.uint8, count=int(out_offsets[-1])) if data_buf is not None else np.zeros(0, np.uint8)
    return out_offsets, data


def _gather_var_indexed(buf: np.ndarray, offsets: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gather_var for spans Arrow's 32-bit views cannot address: explicit index arrays."""
    out_offsets = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=out_offsets[1:])
    total = int(out_offsets[-1])
    # data[j] = buf[start_of_value(j) + (j - out_offsets[value(j)])]
    shift = np.repeat(offsets - out_offsets[:-1], lens)
    shift += np.arange(total, dtype=np.int64)
    return out_offsets, np.take(buf, shift)


def binary_like(
    arrow_type: pa.DataType, n: int, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray
) -> pa.Array:
    """A (large_)string or (large_)binary array from offsets and data, nulls where not valid."""
    large = int(offsets[-1]) > np.iinfo(np.int32).max
    if large:
        arrow_type = pa.large_string() if pa.types.is_string(arrow_type) else pa.large_binary()
        off_buf = pa.py_buffer(offsets)
    else:
        off_buf = pa.py_buffer(offsets.astype(np.int32))
    vbuf, null_count = validity(valid)
    return pa.Array.from_buffers(arrow_type, n, [vbuf, off_buf, pa.py_buffer(data)], null_count=null_count)

