"""ENUM and SET, which the binlog writes as type STRING with the real type in the metadata.

* ENUM: a 1- or 2-byte little-endian index. With the labels (ENUM_STR_VALUE, binlog_row_metadata
  =FULL): ``dictionary<uint16, string>`` whose entry 0 is ``''``, MySQL's value for an invalid
  ENUM (index 0), and entry i the i-th label. Without labels: the ``uint16`` index.
* SET: a 1- to 8-byte little-endian bit mask. With the labels (SET_STR_VALUE): ``list<string>``
  of the members, in declaration order. Without labels: the ``uint64`` mask.

Labels are decoded with the column's ENUM/SET charset (ENUM_AND_SET_*_CHARSET); bytes kept
as binary labels when it is unknown or they are invalid in it.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa

from ...arrowbuild import binary_like, binary_parts, numbers, strings
from ...collations import charset_for, decode_text
from ...constants import BINARY_COLLATION
from ...constants import ColumnType as T
from ...jit import kernel, load_word, store_word, trailing_zeros
from ...tables.table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, validity


def _labels(spec: ColumnSpec, values: tuple[bytes, ...], options: DecodeOptions) -> pa.Array:
    return _decoded_labels(values, spec.collation, options.flavor)


@functools.lru_cache(maxsize=1024)
def _decoded_labels(values: tuple[bytes, ...], collation: int | None, flavor: str) -> pa.Array:
    """The labels as text (as binary when their charset is unknown or they are invalid in it):
    made once per column layout in the process, not per batch (a Python loop per label)."""
    cs = None if collation in (None, BINARY_COLLATION) else charset_for(collation, flavor)
    try:
        return strings([decode_text(v, cs or "utf8mb4") for v in values])
    except (UnicodeDecodeError, LookupError):
        return strings(values, pa.binary())


@functools.lru_cache(maxsize=1024)
def _enum_dictionary(values: tuple[bytes, ...], collation: int | None, flavor: str) -> pa.Array:
    """An ENUM's dictionary: ``''`` (index 0, an invalid value), then its labels."""
    labels = _decoded_labels(values, collation, flavor)
    return pa.concat_arrays([strings([b""], labels.type), labels])


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    if spec.real_type == T.MYSQL_TYPE_ENUM:
        if spec.enum_values is None:
            return pa.uint16()
        return pa.dictionary(pa.uint16(), _labels(spec, spec.enum_values, options).type)
    if spec.set_values is None:
        return pa.uint64()
    return pa.list_(_labels(spec, spec.set_values, options).type)


def _unsigned(col: ColumnData) -> np.ndarray:
    raw = col.fixed_bytes()
    if col.width > 8:
        raise col.error(f"{col.spec.type_name} value of {col.width} bytes (at most 8)", 0)
    padded = np.zeros((len(col), 8), np.uint8)
    padded[:, : col.width] = raw
    return padded.view("<u8").reshape(len(col))


@kernel
def _member_labels(values, valid, label_start, label_len, label_data, offsets, out):  # pragma: no cover
    """The member labels of every row with ``valid``, row after row, each row's members in bit
    order (declaration order; bit ``b``: ``label_data[label_start[b]:][:label_len[b]]``). With
    ``out`` empty: their ``offsets`` (from 0); else their bytes at those offsets, 8 a step (the
    bytes past a label's end land where the next one goes, written after it: ``out`` and
    ``label_data`` have 8 bytes more than the labels'). Returns how many members there are
    (``len(offsets) - 1``: the caller counted them), or -1 at one more than that, or at a bit
    with no label (the caller checked neither happens)."""
    write = len(out) > 0
    j = 0
    offsets[0] = 0
    for i in range(len(values)):
        if not valid[i]:
            continue
        v = values[i]
        while v:
            b = trailing_zeros(v)
            v &= v - np.uint64(1)
            if j + 1 >= len(offsets) or b >= len(label_len):
                return -1
            if write:
                q, a = offsets[j], label_start[b]
                for k in range(0, label_len[b], 8):
                    store_word(out, q + k, load_word(label_data, a + k))
            else:
                offsets[j + 1] = offsets[j] + label_len[b]
            j += 1
    return j


def _members(values: np.ndarray, valid: np.ndarray, labels: pa.Array, count: int) -> pa.Array:
    """The labels of the members of every valid row's SET mask (``count`` of them), row after
    row, as one text (or binary) array: in two compiled passes over the masks (a boolean
    (row, member) matrix and Arrow's take were 5x as long)."""
    label_offsets, label_data, _ = binary_parts(labels)
    label_len = np.diff(label_offsets)
    padded = np.zeros(len(label_data) + 8, np.uint8)
    padded[:len(label_data)] = label_data
    offsets = np.empty(count + 1, np.int64)
    if _member_labels(values, valid, label_offsets, label_len, padded, offsets, np.zeros(0, np.uint8)) != count:
        raise AssertionError("SET members counted twice differ")  # (the same masks, counted by bitwise_count)
    data = np.frombuffer(pa.allocate_buffer(int(offsets[-1]) + 8), np.uint8)  # (Arrow's pool: no fresh pages)
    _member_labels(values, valid, label_offsets, label_len, padded, offsets, data)
    return binary_like(labels.type, count, offsets, data[:-8], np.ones(count, bool))


def decode(col: ColumnData) -> pa.Array:
    spec, n = col.spec, len(col)
    values = _unsigned(col)
    vbuf, nulls = validity(col.valid)
    if spec.real_type == T.MYSQL_TYPE_ENUM:
        index = values.astype(np.uint16)
        if spec.enum_values is None:
            return pa.Array.from_buffers(pa.uint16(), n, [vbuf, pa.py_buffer(index)], null_count=nulls)
        dictionary = _enum_dictionary(spec.enum_values, spec.collation, col.options.flavor)
        labels = len(dictionary) - 1
        over = col.valid & (values > labels)
        if over.any():
            i = int(np.flatnonzero(over)[0])
            raise col.error(f"ENUM index {int(values[i])} but the column has {labels} labels", i)
        indices = pa.Array.from_buffers(pa.uint16(), n, [vbuf, pa.py_buffer(np.where(col.valid, index, 0).astype(np.uint16))], null_count=nulls)
        return pa.DictionaryArray.from_arrays(indices, dictionary)
    if spec.set_values is None:
        return pa.Array.from_buffers(pa.uint64(), n, [vbuf, pa.py_buffer(values)], null_count=nulls)
    labels = _labels(spec, spec.set_values, col.options)
    k = len(labels)
    values = np.where(col.valid, values, np.uint64(0))
    if k < 64:
        extra = (values >> np.uint64(k)) != 0
        if extra.any():
            i = int(np.flatnonzero(extra)[0])
            raise col.error(f"SET mask 0x{int(values[i]):x} has members beyond the column's {k} labels", i)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(np.bitwise_count(values), dtype=np.int32, out=offsets[1:])  # members per row
    members = _members(values, col.valid, labels, int(offsets[-1]))
    return pa.ListArray.from_arrays(numbers(offsets), members, mask=numbers(~col.valid))
