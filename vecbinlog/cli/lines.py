"""The lines of ``cat`` (an aligned table, CSV, JSON lines), written by one compiled loop.

Every column of a batch is first made cells (:class:`_Cells`): integers to print, or texts
(:mod:`vecbinlog.cli.text`, a whole column at a time) chosen per row by a code. Then one
compiled loop (numba, cached like walk.py's kernels, without the GIL) writes, per row and per
column, the separator, the cell's bytes (or an integer's digits, printed there) and the
table's padding. numba does not check bounds: the output is sized from the cells' byte counts
before the loop, and every buffer it copies from or to has ``_SLACK`` bytes more than it uses
(copies move 8 bytes at a time).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrowbuild import numbers, strings, to_numpy, valid_mask
from ..digits import DIGIT_PAIRS, int_width, put_int
from ..jit import kernel, load_word, store_word
from ..pools import TaskGroup
from .buffers import string_parts
from .text import (
    NULL_TEXT,
    RUN_SHARE,
    column_text,
    csv_escape,
    csv_quote,
    fill_nulls,
    hex_text,
    json_escape,
    run_friendly,
    values_text,
    widest_text,
)
from .widths import fit_cells

__all__ = ["CsvText", "JsonLinesText", "TableText"]

#: the kinds of cells: integers printed by the loop (signed, unsigned), or texts
_INT, _UINT, _TEXT = 0, 1, 2


class _Cells:
    """One column of a batch, ready for :func:`_write_lines`: integers to print (``ints``,
    any integer dtype, ``valid``), or texts ``entries`` (a string array) chosen per row by
    ``codes`` (int64; -1 for NULL; None: row i is entry i), in double quotes when ``quote``."""

    def __init__(self, kind: int, ints: np.ndarray | None = None, valid: np.ndarray | None = None,
                 entries: pa.Array | None = None, codes: np.ndarray | None = None, quote: bool = False) -> None:
        self.kind, self.valid, self.codes = kind, valid, codes
        #: the one of the two a kind has (Any: ``kind`` says which is there, not None)
        self.ints: Any = ints
        self.entries: Any = entries
        self.quote = quote


def _cells(col: pa.Array, style: str) -> _Cells:
    n = len(col)
    t = col.type
    null = NULL_TEXT[style]
    if pa.types.is_integer(t) and col.null_count < n:
        valid = None if col.null_count == 0 else valid_mask(col)
        values = to_numpy(fill_nulls(col, 0))
        return _Cells(_UINT if pa.types.is_uint64(t) else _INT, values, valid)
    if pa.types.is_dictionary(t) and len(col.dictionary) and col.null_count < n:
        entries = fill_nulls(values_text(col.dictionary, style), null)
        codes: np.ndarray | None = to_numpy(fill_nulls(col.indices.cast(pa.int64()), -1))  # a null in the dictionary: its text
        return _Cells(_TEXT, entries=entries, codes=codes)
    if run_friendly(t) and n >= 2 * RUN_SHARE and col.null_count < n:
        ree = pc.run_end_encode(col)
        if len(ree.values) * RUN_SHARE <= n:
            ends = to_numpy(ree.run_ends).astype(np.int64)
            entries = fill_nulls(values_text(ree.values, style), null)
            return _Cells(_TEXT, entries=entries, codes=np.repeat(np.arange(len(ends)), np.diff(ends, prepend=0)))
    if style != "table" and col.null_count < n and (_is_text(t) or _is_binary(t)):  # quoted by the line writer
        entries = hex_text(col) if _is_binary(t) else col.cast(pa.large_string()) if pa.types.is_string_view(t) else col
        entries = json_escape(entries) if style == "json" else csv_escape(entries)
        codes = None if col.null_count == 0 else np.where(valid_mask(col), np.arange(n), -1)
        return _Cells(_TEXT, entries=entries, codes=codes, quote=True)
    text = column_text(col, style)
    if isinstance(text, pa.Scalar):
        return _Cells(_TEXT, entries=strings([text.as_py()]), codes=np.zeros(n, np.int64))
    return _Cells(_TEXT, entries=text)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _is_binary(t: pa.DataType) -> bool:
    return (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or pa.types.is_binary_view(t))


#: bytes past the end of every buffer :func:`_copy` reads or writes (it moves 8 at a time)
_SLACK = 8


@kernel(inline="always")
def _copy(dst, d, src, s, n):  # pragma: no cover - compiled
    """Copy ``n`` bytes of ``src`` at ``s`` to ``dst`` at ``d``, 8 at a time: up to 7 bytes
    past ``s + n`` are read and past ``d + n`` written (both buffers have ``_SLACK`` bytes
    more than they use). Returns ``d + n``."""
    for k in range(0, n, 8):
        store_word(dst, d + k, load_word(src, s + k))
    return d + n


_BLANKS = np.full(64 + _SLACK, 32, np.uint8)


@kernel(inline="always")
def _spaces(out, p, n):  # pragma: no cover - compiled
    """``n`` spaces at ``out[p:]``; returns where they end."""
    while n > 0:
        k = min(n, 64)
        p = _copy(out, p, _BLANKS, 0, k)
        n -= k
    return p


@kernel
def _write_lines(n, kinds, index, widths, right, quote, seps, consts, ints, unsigned, has_valid, valid,
                 codes, identity, ebase, eoff, ewidth, pool, null_text, null_width, strip, out):  # pragma: no cover
    """Write ``n`` rows into ``out``; returns how many bytes were written.

    Before column j come the bytes ``consts[seps[j]:seps[j + 1]]``, after the last column
    ``consts[seps[m]:seps[m + 1]]`` (the line end). Column j is ``ints[:, index[j]]`` (kind 0:
    int64, 1: uint64, ``valid[:, index[j]]`` when ``has_valid``) or texts (kind 2): entry
    ``codes[r, index[j]]`` (or r when ``identity``; -1: NULL) of that column, whose bytes are
    ``pool[eoff[e]:eoff[e + 1]]`` with ``e = ebase[index[j]] + code`` and whose terminal width
    is ``ewidth[e]``, between double quotes when ``quote[j]``. Cells are padded with spaces to
    ``widths[j]`` (before them when ``right[j]``); with ``strip`` a line loses its trailing
    whitespace before the line end.
    ``out`` must hold every line (the caller counts the bytes); ``consts``, ``pool``,
    ``null_text`` and ``out`` have ``_SLACK`` bytes more than they use (see :func:`_copy`)."""
    m = len(kinds)
    pairs = DIGIT_PAIRS
    p = 0
    for r in range(n):
        start = p
        for j in range(m):
            p = _copy(out, p, consts, seps[j], seps[j + 1] - seps[j])
            k = index[j]
            kind = kinds[j]
            is_null = False
            a = 0
            b = 0
            if kind == 2:
                c = r if identity[k] else codes[r, k]
                if c < 0:
                    is_null = True
                else:
                    e = ebase[k] + c
                    a = eoff[e]
                    b = eoff[e + 1]
                    w = ewidth[e]
            elif has_valid[k] and not valid[r, k]:
                is_null = True
            if is_null:
                w = null_width
            elif kind != 2:
                v = ints[r, k]
                if widths[j] == 0:  # no padding: the digits straight away
                    p = put_int(out, p, v, kind == 1, pairs)
                    continue
                w = int_width(v, kind == 1)
            pad = widths[j] - w
            if pad > 0 and right[j]:
                p = _spaces(out, p, pad)
            if is_null:
                p = _copy(out, p, null_text, 0, len(null_text) - _SLACK)
            elif kind == 2:
                if quote[j]:
                    out[p] = 34
                    p += 1
                p = _copy(out, p, pool, a, b - a)
                if quote[j]:
                    out[p] = 34
                    p += 1
            else:
                p = put_int(out, p, ints[r, k], kind == 1, pairs)
            if pad > 0 and not right[j]:
                p = _spaces(out, p, pad)
        if strip:
            while p > start and (out[p - 1] == 32 or 9 <= out[p - 1] <= 13 or 28 <= out[p - 1] <= 31):
                p -= 1
        p = _copy(out, p, consts, seps[m], seps[m + 1] - seps[m])
    return p


def _lines(cells: list[_Cells], before: Sequence[str], end: str, n: int, style: str,
           widths: Sequence[int] | None = None, right: Sequence[bool] | None = None,
           fitted: Sequence[tuple[pa.Array, np.ndarray] | None] | None = None) -> memoryview:
    """The ``n`` lines of ``cells`` (``before[j]`` ahead of column j, ``end`` after the last),
    written by :func:`_write_lines`: the bytes of every line, back to back."""
    m = len(cells)
    null = NULL_TEXT[style].encode()
    widths_arr = np.asarray(widths if widths is not None else np.zeros(m), np.int64)
    right_arr = np.asarray(right if right is not None else np.zeros(m), np.bool_)
    quote = np.array([c.quote for c in cells], np.bool_)
    pieces = [s.encode() for s in before] + [end.encode()]
    seps = np.zeros(m + 2, np.int64)
    np.cumsum([len(x) for x in pieces], out=seps[1:])
    consts = np.frombuffer(b"".join(pieces) + bytes(_SLACK), np.uint8)
    kinds = np.array([c.kind for c in cells], np.int64)
    index = np.zeros(m, np.int64)
    int_cols = [c for c in cells if c.kind != _TEXT]
    text_cols = [c for c in cells if c.kind == _TEXT]
    # a row's numbers (and codes) side by side: the loop reads each row's from one place (bench/TUNING.md)
    ints = np.empty((n, max(len(int_cols), 1)), np.int64)
    unsigned = np.zeros(max(len(int_cols), 1), np.bool_)
    has_valid = np.zeros(max(len(int_cols), 1), np.bool_)
    # rows of valid/codes are read only where has_valid/not identity: those are all written
    valid = np.empty((n if any(c.valid is not None for c in int_cols) else 1, max(len(int_cols), 1)), np.bool_)
    codes = np.empty((n if any(c.codes is not None for c in text_cols) else 1, max(len(text_cols), 1)), np.int64)
    identity = np.zeros(max(len(text_cols), 1), np.bool_)
    ebase = np.zeros(max(len(text_cols), 1), np.int64)
    eoffs, ewidths, datas = [], [], []
    size = n * (seps[-1] + int(widths_arr.sum()) + 2 * int(quote.sum()))
    entry_count, pool_size = 0, 0
    ki = kt = 0
    for j, c in enumerate(cells):
        if c.kind != _TEXT:
            index[j] = ki
            ints[:, ki] = c.ints.view(np.int64) if c.kind == _UINT else c.ints  # widened as copied
            unsigned[ki] = c.kind == _UINT
            if c.valid is not None:
                has_valid[ki] = True
                valid[:, ki] = c.valid
            size += 21 * n
            ki += 1
            continue
        index[j] = kt
        fit = fitted[j] if fitted is not None else None  # (a text column's is there)
        entries, ew = fit if fit is not None else (c.entries, np.zeros(len(c.entries), np.int64))
        off, data = string_parts(entries)
        lengths = np.diff(off)
        if c.codes is None:
            identity[kt] = True
            size += int(lengths.sum())
        else:
            codes[:, kt] = c.codes
            size += int(np.where(c.codes >= 0, lengths[np.maximum(c.codes, 0)], len(null)).sum())
        ebase[kt] = entry_count
        eoffs.append(off[:-1] + pool_size)
        ewidths.append(np.asarray(ew, np.int64))
        datas.append(data)
        entry_count += len(off) - 1
        pool_size += len(data)
        kt += 1
    eoffs.append(np.array([pool_size], np.int64))
    eoff = np.concatenate(eoffs)
    ewidth = np.concatenate(ewidths) if ewidths else np.zeros(1, np.int64)
    pool = np.concatenate([*datas, np.zeros(_SLACK, np.uint8)])
    out = np.empty(int(size) + _SLACK, np.uint8)
    null_text = np.frombuffer(null + bytes(_SLACK), np.uint8)
    written = _write_lines(n, kinds, index, widths_arr, right_arr, quote, seps, consts, ints, unsigned, has_valid, valid,
                           codes, identity, ebase, eoff, ewidth, pool, null_text, len(NULL_TEXT[style]),
                           style == "table", out)
    return out[:written].data


class _Lines:
    """A text format of rows. :meth:`write_all` writes batch after batch to a binary file:
    each batch is cut into chunks of at most ``CHUNK`` rows (what formatting allocates is
    bounded by the chunk, not the batch), formatted ``THREADS`` at a time on the ``lines``
    threads (the line writer releases the GIL), up to ``AHEAD`` chunks ahead of what is written
    -- of the batches read so far, so the threads do not wait for each batch's last chunk while
    the next batch is read -- and written in order."""

    CHUNK = 65536
    THREADS = 2
    #: chunks being formatted or waiting to be written, at most
    AHEAD = 4
    #: no chunk of fewer rows is made to have one for each thread (a thread's hand-off costs more)
    MIN_CHUNK = 8192

    def write(self, batch: pa.RecordBatch, out: Any) -> None:
        """Write one batch's lines (and what :meth:`begin` puts before them)."""
        self.write_all([batch], out)

    def write_all(self, items: Iterable[pa.RecordBatch | bytes], out: Any) -> None:
        """Write the lines of each batch of ``items`` (bytes in it are written as they are,
        in their place), formatting ahead on the ``lines`` threads."""
        workers = TaskGroup("the lines being written")  # every chunk done or cancelled before this returns
        ahead: deque = deque()  # futures of lines, or bytes, in output order
        try:
            for item in items:
                if isinstance(item, pa.RecordBatch):
                    if self.new_layout(item):  # begin() changes what lines() reads: not under way
                        self._drain(ahead, out, 0)
                    head = self.begin(item)
                    if head:
                        ahead.append(head)
                    n = item.num_rows
                    size = min(self.CHUNK, max(self.MIN_CHUNK, -(-n // self.THREADS)))
                    for start in range(0, n, size):
                        ahead.append(workers.submit("lines", self.THREADS, self.lines, item.slice(start, size)))
                        self._drain(ahead, out, self.AHEAD)
                    del item
                else:
                    ahead.append(item)
            self._drain(ahead, out, 0)
        finally:
            workers.close()

    @staticmethod
    def _drain(ahead: deque, out: Any, keep: int) -> None:
        """Write the oldest of ``ahead`` until at most ``keep`` chunks are left in it (and
        flush them: a reader of a pipe sees each chunk's lines as soon as they are written)."""
        wrote = False
        while ahead and (len(ahead) > keep or isinstance(ahead[0], bytes)):
            first = ahead.popleft()
            out.write(first if isinstance(first, bytes) else first.result())
            wrote = True
        if wrote and hasattr(out, "flush"):
            out.flush()

    def new_layout(self, batch: pa.RecordBatch) -> bool:
        """Whether :meth:`begin` changes the state :meth:`lines` reads, for ``batch``."""
        return False

    def begin(self, batch: pa.RecordBatch) -> bytes:
        """What comes before a batch's lines (a table's header when its layout changes)."""
        return b""

    def lines(self, batch: pa.RecordBatch) -> memoryview:
        """The lines of a (non-empty) chunk of rows."""
        raise NotImplementedError


class JsonLinesText(_Lines):
    """One JSON object per row: ``{"id": 1, "name": "Ada", ...}`` (``json.dumps``'s separators)."""

    def lines(self, batch: pa.RecordBatch) -> memoryview:
        if batch.num_rows == 0:
            return memoryview(b"")
        before = [("{" if k == 0 else ", ") + json.dumps(name, ensure_ascii=False) + ": "
                  for k, name in enumerate(batch.schema.names)]
        return _lines([_cells(c, "json") for c in batch.columns], before, "}\n", batch.num_rows, "json")


class CsvText(_Lines):
    """CSV as Arrow's CSV writer writes it (strings quoted, a header of quoted names), with
    binary as hex, TIME as text, lists and structs as JSON, DECIMAL in full."""

    def header(self, names: Sequence[str]) -> bytes:
        return (",".join(csv_quote(n) for n in names) + "\n").encode()

    def lines(self, batch: pa.RecordBatch) -> memoryview:
        if batch.num_rows == 0:
            return memoryview(b"")
        before = [""] + [","] * (batch.num_columns - 1)
        return _lines([_cells(c, "csv") for c in batch.columns], before, "\n", batch.num_rows, "csv")


def _is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


class TableText(_Lines):
    """Aligned columns: a header, a rule, then one line per row; each column as wide as its
    widest cell among the first batch's first ``SAMPLE`` rows (a dictionary column, unless
    ``cut`` is False: its widest entry, used or not, as ``update_postimage`` of
    ``_change_type``; a column of :attr:`unsampled`: at least its type's widest value), at
    most ``max_width`` terminal columns unless it holds numbers; text wider than its column
    cut with an ellipsis (``max_width`` 0 or None: never, a wider cell pushes the rest of its
    line), numbers never cut and right-aligned; two spaces between columns, no trailing
    spaces. A batch of other column names starts a new header."""

    SAMPLE = 1000

    def __init__(self, max_width: int | None = 40, cut: bool = True) -> None:
        self.max_width = max_width or None
        self.cut = cut  #: False: cells wider than their column are not cut (they push the next ones)
        self.names: list[str] | None = None
        self.widths: list[int] = []
        self.right: list[bool] = []
        #: columns of which the sample tells nothing (a later layout adds or widens them), by name
        self.unsampled: frozenset[str] = frozenset()

    def new_layout(self, batch: pa.RecordBatch) -> bool:
        return batch.schema.names != self.names

    def begin(self, batch: pa.RecordBatch) -> bytes:
        if not self.new_layout(batch):
            return b""
        sample = batch.slice(0, self.SAMPLE)
        return self._header(sample, [_cells(c, "table") for c in sample.columns])

    def lines(self, batch: pa.RecordBatch) -> memoryview:
        cells = [_cells(c, "table") for c in batch.columns]
        cut = self.cut and self.max_width is not None
        fitted = [None if c.kind != _TEXT else fit_cells(c.entries, wd if cut and not r else None)
                  for c, wd, r in zip(cells, self.widths, self.right)]
        return _lines(cells, [""] + ["  "] * (len(cells) - 1), "\n", batch.num_rows, "table",
                      self.widths, self.right, fitted)

    def _header(self, batch: pa.RecordBatch, cells: list[_Cells]) -> bytes:
        blank = b"\n" if self.names is not None else b""
        self.names = batch.schema.names
        self.right = [_is_numeric(t) for t in batch.schema.types]
        self.widths = []
        k = min(batch.num_rows, self.SAMPLE)
        for name, c, right, t in zip(self.names, cells, self.right, batch.schema.types):
            _, w = fit_cells(strings([name]), None)
            if c.kind != _TEXT:
                sample = pc.cast(numbers(c.ints[:k]), pa.string())
                _, ws = fit_cells(sample, None)
                if c.valid is not None:
                    ws = np.where(c.valid[:k], ws, len(NULL_TEXT["table"]))
            else:
                _, ew = fit_cells(c.entries, None)
                codes = np.arange(k) if c.codes is None else c.codes[:k]
                ws = np.where(codes >= 0, ew[np.maximum(codes, 0)] if len(ew) else 0, len(NULL_TEXT["table"]))
                if c.codes is None and c.entries.null_count:
                    ws = np.where(valid_mask(c.entries.slice(0, k)), ws, 4)
                if self.cut and pa.types.is_dictionary(t) and len(ew):  # any entry may come later (ENUM...)
                    ws = np.append(ws, ew.max())
            wd = int(max(w.max(), ws.max() if len(ws) else 0))
            if name in self.unsampled:
                wd = max(wd, widest_text(t) or self.max_width or 0)
            self.widths.append(min(wd, self.max_width) if self.max_width and not right else wd)
        if not self.cut and not self.right[-1]:  # nothing follows the last column: no wider than its name
            self.widths[-1] = int(fit_cells(strings([self.names[-1]]), None)[1][0])
        heads = []
        for name, wd in zip(self.names, self.widths):
            h, hw = fit_cells(strings([name]), wd)
            heads.append(h[0].as_py() + " " * (wd - int(hw[0])))
        line = "  ".join(heads).rstrip()
        rule = "  ".join("-" * wd for wd in self.widths)
        return blank + (line + "\n" + rule + "\n").encode()
