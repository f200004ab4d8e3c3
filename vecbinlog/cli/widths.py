"""Terminal widths of table cells (``cat --format table``): East Asian wide characters take two
columns, combining ones none; cells are escaped (``\\r``, ``\\n``, ``\\t``) and cut to a width with
an ellipsis. A character's width is looked up once (``unicodedata``) and kept in a table that
the compiled loops read."""

from __future__ import annotations

import threading
import unicodedata

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..jit import kernel
from .buffers import byte_table, contains_any, gather_ranges, marked, string_array, string_parts

__all__ = ["fit_cells"]

_CELL_ESCAPES = (("\r", "\\r"), ("\n", "\\n"), ("\t", "\\t"))
_CELL_SPECIAL = byte_table([0x0D, 0x0A, 0x09])
_NON_ASCII = byte_table(range(0x80, 0x100))

#: terminal columns of each code point (-1: not looked up yet), filled as characters are met
_CHAR_WIDTHS = np.full(0x110000, -1, np.int8)
_CHAR_WIDTHS[:0x80] = 1
#: held while characters are looked up and their widths filled in
_LOOKUP = threading.Lock()


def _char_width(cp: int) -> int:
    """2 for East Asian wide and fullwidth characters, 0 for combining ones, else 1."""
    ch = chr(cp)
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1


@kernel(inline="always")
def _decode_utf8(data, i, n):  # pragma: no cover - compiled
    """(code point, bytes) of the UTF-8 character at ``data[i]`` (valid UTF-8, from Arrow)."""
    b0 = np.int64(data[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0 and i + 1 < n:
        return (b0 & 0x1F) << 6 | (np.int64(data[i + 1]) & 0x3F), 2
    if b0 < 0xF0 and i + 2 < n:
        return (b0 & 0x0F) << 12 | (np.int64(data[i + 1]) & 0x3F) << 6 | (np.int64(data[i + 2]) & 0x3F), 3
    if i + 3 < n:
        return ((b0 & 0x07) << 18 | (np.int64(data[i + 1]) & 0x3F) << 12 | (np.int64(data[i + 2]) & 0x3F) << 6
                | (np.int64(data[i + 3]) & 0x3F)), 4
    return 0xFFFD, 1


@kernel
def _unknown_chars(data, table, out):  # pragma: no cover - compiled
    """The code points of ``data`` whose width ``table`` does not know yet, each once (marked
    -2 in ``table``), into ``out``; returns how many."""
    k = 0
    i = 0
    n = len(data)
    while i < n:
        if data[i] < 0x80:
            i += 1
            continue
        cp, size = _decode_utf8(data, i, n)
        if table[cp] == -1:
            table[cp] = -2
            out[k] = cp
            k += 1
        i += size
    return k


@kernel
def _measure_cells(offsets, data, table, limit, widths, ends, cut_widths):  # pragma: no cover - compiled
    """Terminal width of each cell; where a cell wider than ``limit`` (>= 1; 0: no limit) is
    cut: ``ends`` (the byte after its longest prefix of at most ``limit - 1`` columns, -1 when
    it is not cut) and the width of that prefix plus the ellipsis (``cut_widths``). Returns
    False, at once, at a character whose width ``table`` does not know yet."""
    n = len(offsets) - 1
    size = len(data)
    for c in range(n):
        w = 0
        end = -1
        prefix = 0
        i = offsets[c]
        while i < offsets[c + 1]:
            if data[i] < 0x80:
                cw = 1
                step = 1
            else:
                cp, step = _decode_utf8(data, i, size)
                cw = table[cp]
                if cw < 0:
                    return False
            if limit > 0 and end < 0 and w + cw > limit - 1:
                end = i
                prefix = w
            w += cw
            i += step
        widths[c] = w
        if limit > 0 and w > limit:
            ends[c] = end
            cut_widths[c] = prefix + 1
        else:
            ends[c] = -1
    return True


def fit_cells(text: pa.Array, width: int | None) -> tuple[pa.Array, np.ndarray]:
    """Table cells: ``\\r``, ``\\n``, ``\\t`` escaped, cut to ``width`` terminal columns with an
    ellipsis when wider (``None``: never cut); returns them and their widths (East Asian wide
    characters take two columns, combining ones none)."""
    if contains_any(text, _CELL_SPECIAL):
        for raw, escaped in _CELL_ESCAPES:
            text = pc.replace_substring(text, raw, escaped)
    offsets, data = string_parts(text)
    n = len(text)
    if not marked(data, _NON_ASCII):  # one column per byte
        widths = np.diff(offsets)
        if width is None or not (widths > width).any():
            return text, widths
        cut = widths > width
        ends = np.where(cut, offsets[:-1] + width - 1, -1)
        cut_widths = np.full(n, width, np.int64)
    else:
        widths = np.empty(n, np.int64)
        ends = np.empty(n, np.int64)
        cut_widths = np.empty(n, np.int64)
        if not _measure_cells(offsets, data, _CHAR_WIDTHS, width or 0, widths, ends, cut_widths):
            with _LOOKUP:  # characters met for the first time: looked up (the lines threads share the table)
                unknown = np.empty(len(data), np.int64)
                for cp in unknown[: _unknown_chars(data, _CHAR_WIDTHS, unknown)].tolist():
                    _CHAR_WIDTHS[cp] = _char_width(cp)
            known = _measure_cells(offsets, data, _CHAR_WIDTHS, width or 0, widths, ends, cut_widths)
            assert known
        cut = ends >= 0
        if not cut.any():
            return text, widths
    starts = offsets[:-1]
    lengths = np.where(cut, ends - starts, offsets[1:] - starts)
    ell = np.frombuffer("…".encode(), np.uint8)
    out_len = lengths + cut * len(ell)
    out_off = np.zeros(n + 1, np.int64)
    np.cumsum(out_len, out=out_off[1:])
    out = np.empty(out_off[-1], np.uint8)
    body_off, body = gather_ranges(data, starts, lengths)
    idx = np.arange(body_off[-1], dtype=np.int64) + np.repeat(out_off[:-1] - body_off[:-1], lengths)
    out[idx] = body
    tail = (out_off[1:][cut, None] - len(ell) + np.arange(len(ell))).ravel()
    out[tail] = np.tile(ell, int(cut.sum()))
    return string_array(out_off, out), np.where(cut, cut_widths, widths)
