"""Values as text, whole columns at a time: what ``vecbinlog cat`` and the CSV exports print.

Three styles of one value, each built for a whole column with Arrow kernels and NumPy (a
Python step per value is left only for types vecbinlog never returns, and for the rare
DECIMAL Arrow prints in scientific notation):

=================  ====================  =======================  =========================
type               ``json`` (jsonl)      ``table``                ``csv``
=================  ====================  =======================  =========================
NULL               ``null``              ``NULL``                 empty field
integers, FLOAT,   Arrow's text: the     the same                 the same
DOUBLE             shortest that reads
                   back (``1e+15``);
                   NaN/inf as strings
DECIMAL            ``"19.99"`` (exact)   ``19.99``                ``19.99``
text               JSON string           as is                    ``"quoted"``, ``""`` doubled
binary             ``"hex"``             ``0xhex``                ``"hex"``
DATE               ``"2026-11-21"``      ``2026-11-21``           ``2026-11-21``
DATETIME           ``"...T20:00:21"``    ISO 8601, fraction only  Arrow's text,
TIMESTAMP          ``+00:00`` when UTC   when not zero            ``2026-11-21 20:00:21.000000Z``
TIME (duration)    ``"-838:59:59"``      ``[-]HH:MM:SS[.ffffff]`` ``"HH:MM:SS"``
lists, structs     JSON                  JSON                     ``"JSON"``
=================  ====================  =======================  =========================

JSON strings are escaped as ``json.dumps(..., ensure_ascii=False)`` does; CSV follows Arrow's
CSV writer (strings always quoted). Values that repeat in runs (the metadata columns: one
timestamp, position, GTID... per rows event) are formatted once per run, dictionaries once per
entry. The lines are then written by :mod:`vecbinlog.cli.lines`.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import functools
import json
import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrowbuild import numbers, scalar, strings, to_numpy
from ..decode.decoders.calendar import civil_from_days  # days -> (year, month, day)
from .buffers import byte_table, contains_any, string_array, string_parts

__all__ = ["STYLES", "NULL_TEXT", "column_text", "values_text", "json_value", "time_text", "json_escape",
           "csv_escape", "csv_quote", "hex_text", "run_friendly", "fill_nulls", "widest_text"]

STYLES = ("json", "table", "csv")
#: the text of NULL in each style
NULL_TEXT = {"json": "null", "table": "NULL", "csv": ""}
#: a column whose values change fewer than once every RUN_SHARE rows is formatted once per run
RUN_SHARE = 4


# Arrow values are made with vecbinlog.arrowbuild, never pa.array/pa.scalar/to_numpy or a Python
# value given to a compute function: those make pyarrow import pandas (0.3 s of every cat).
@functools.cache
def _lit(text: str) -> pa.Scalar:
    """``text`` as a string scalar, for the compute functions."""
    return scalar(text, pa.string())


def fill_nulls(arr: pa.Array, value: Any) -> pa.Array:
    """``arr`` with its nulls replaced by ``value`` (made a scalar of its type here)."""
    return pc.fill_null(arr, scalar(value, arr.type)) if arr.null_count else arr


# ---------------------------------------------------------------------------------------
# one value at a time: the reference, and the fallback for types vecbinlog never returns
# ---------------------------------------------------------------------------------------
def time_text(td: _dt.timedelta) -> str:
    """A TIME value as MySQL prints it: ``[-]HH:MM:SS[.ffffff]`` (hours may exceed 24)."""
    us = td // _dt.timedelta(microseconds=1)
    sign = "-" if us < 0 else ""
    us = abs(us)
    secs, frac = divmod(us, 1_000_000)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    return f"{sign}{h:02d}:{m:02d}:{s:02d}" + (f".{frac:06d}" if frac else "")


def json_value(v: Any) -> Any:
    """A ``to_pylist()`` value as JSON: bytes as hex, temporal values as ISO text, TIME as
    ``HH:MM:SS``, Decimal as its exact text, NaN/inf as strings; lists and dicts recursively."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, _dt.timedelta):
        return time_text(v)
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    return str(v)


def _python_text(col: pa.Array, style: str) -> pa.Array:
    """Value by value through ``to_pylist()`` (types with no column path: maps, times of day,
    time zones other than UTC...)."""
    try:
        values = col.to_pylist()
    except (ValueError, OverflowError):  # a value Python cannot hold (year 0)
        values = col.cast(pa.string()).to_pylist()
    out = []
    for v in values:
        j = json_value(v)
        if style == "json":
            out.append(json.dumps(j, ensure_ascii=False))
        elif v is None:
            out.append(NULL_TEXT[style])
        else:
            text = json.dumps(j, ensure_ascii=False) if isinstance(j, (list, dict)) else str(j)
            out.append(csv_quote(text) if style == "csv" else text)
    return strings(out)


def csv_quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


# ---------------------------------------------------------------------------------------
# escapes
# ---------------------------------------------------------------------------------------
_JSON_SPECIAL = byte_table([*range(0x20), ord('"'), ord("\\")])
_QUOTE = byte_table([ord('"')])
_CONTROL = byte_table(range(0x20))
#: json.dumps's escapes of the control characters
_JSON_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


def json_escape(arr: pa.Array) -> pa.Array:
    """Each string escaped as in a JSON string literal (``json.dumps(s, ensure_ascii=False)``
    without the quotes); nulls stay null."""
    if contains_any(arr, _JSON_SPECIAL):
        arr = pc.replace_substring(arr, "\\", "\\\\")
        arr = pc.replace_substring(arr, '"', '\\"')
        _, data = string_parts(arr)
        for c in np.flatnonzero(np.bincount(data[_CONTROL[data]], minlength=32)).tolist():
            arr = pc.replace_substring(arr, chr(c), _JSON_ESCAPES.get(c, f"\\u{c:04x}"))
    return arr


def csv_escape(arr: pa.Array) -> pa.Array:
    """Each string with its quotes doubled, as Arrow's CSV writer writes it inside quotes."""
    return pc.replace_substring(arr, '"', '""') if contains_any(arr, _QUOTE) else arr


def _quoted(arr: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(_lit('"'), arr, _lit('"'), _lit(""))


# ---------------------------------------------------------------------------------------
# type families
# ---------------------------------------------------------------------------------------
_HEX = np.frombuffer(b"".join(f"{i:02x}".encode() for i in range(256)), np.uint16)


def hex_text(arr: pa.Array, prefix: bytes = b"") -> pa.Array:
    """Binary values as lowercase hex text (``bytes.fromhex`` reverses it), after ``prefix``."""
    if pa.types.is_fixed_size_binary(arr.type):
        w = arr.type.byte_width
        data = np.frombuffer(arr.buffers()[1], np.uint8)[arr.offset * w : (arr.offset + len(arr)) * w]
        offsets = np.arange(len(arr) + 1, dtype=np.int64) * w
    else:
        if not (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
            arr = arr.cast(pa.large_binary())
        offsets, data = string_parts(arr)
    hexed = _HEX[data].view(np.uint8)
    p = len(prefix)
    if p:
        lengths = np.diff(offsets) * 2
        out_off = np.zeros(len(arr) + 1, np.int64)
        np.cumsum(lengths + p, out=out_off[1:])
        out = np.empty(out_off[-1], np.uint8)
        keep = np.ones(len(out), bool)
        pos = out_off[:-1, None] + np.arange(p)
        keep[pos.ravel()] = False
        out[pos.ravel()] = np.tile(np.frombuffer(prefix, np.uint8), len(arr))
        out[keep] = hexed
        text = string_array(out_off, out)
    else:
        text = string_array(offsets * 2, hexed)
    return _with_nulls(text, arr)


def _with_nulls(text: pa.Array, like: pa.Array) -> pa.Array:
    """``text`` null where ``like`` is."""
    if like.null_count == 0:
        return text
    return pc.if_else(pc.is_valid(like), text, pa.nulls(1, text.type)[0])


def _digits(out: np.ndarray, at: int, value: np.ndarray, width: int) -> None:
    """Write ``value`` as ``width`` zero-padded decimal digits into columns ``at``.. of ``out``."""
    v = value.copy()
    for k in range(width - 1, -1, -1):
        out[:, at + k] = v % 10 + 48
        v //= 10


_UNIT_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_FRACTION_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _datetime_text(arr: pa.Array, *, sep: bytes, fraction: str, suffix: bytes) -> pa.Array | None:
    """Timestamps (or dates, ``arr`` date32) as ``YYYY-MM-DD[<sep>HH:MM:SS[.fff]]<suffix>``;
    ``fraction`` "auto" writes the fraction only when it is not zero (``isoformat``), "unit"
    always, with the unit's digits (Arrow's CSV text). None for years outside 0..9999."""
    is_date = pa.types.is_date32(arr.type)
    unit = "s" if is_date else arr.type.unit
    per_s = _UNIT_PER_SECOND[unit]
    raw = to_numpy(fill_nulls(arr.cast(pa.int32() if is_date else pa.int64()), 0)).astype(np.int64)
    if is_date:
        days, secs, frac = raw, np.zeros_like(raw), np.zeros_like(raw)
    else:
        secs_all = np.floor_divide(raw, per_s)
        frac = raw - secs_all * per_s
        days = np.floor_divide(secs_all, 86400)
        secs = secs_all - days * 86400
    year, month, day = civil_from_days(days)
    if len(year) and (year.min() < 0 or year.max() > 9999):
        return None
    digits = _FRACTION_DIGITS[unit]
    width = 10 if is_date else 19 + (1 + digits if digits else 0)
    out = np.empty((len(raw), width + len(suffix)), np.uint8)
    _digits(out, 0, year, 4)
    out[:, 4] = out[:, 7] = ord("-")
    _digits(out, 5, month, 2)
    _digits(out, 8, day, 2)
    if not is_date:
        out[:, 10] = sep[0]
        _digits(out, 11, secs // 3600, 2)
        out[:, 13] = out[:, 16] = ord(":")
        _digits(out, 14, secs // 60 % 60, 2)
        _digits(out, 17, secs % 60, 2)
        if digits:
            out[:, 19] = ord(".")
            _digits(out, 20, frac, digits)
    if suffix:
        out[:, width:] = np.frombuffer(suffix, np.uint8)
    row = out.shape[1]
    lengths = np.full(len(raw), row, np.int64)
    if fraction == "auto" and digits:
        whole = frac == 0
        if whole.any():  # drop ".fff" where it is zero
            keep = np.ones(out.shape, bool)
            keep[np.ix_(whole, np.arange(19, 20 + digits))] = False
            lengths[whole] -= 1 + digits
            offsets = np.zeros(len(raw) + 1, np.int64)
            np.cumsum(lengths, out=offsets[1:])
            return _with_nulls(string_array(offsets, out[keep]), arr)
    return _with_nulls(string_array(np.arange(len(raw) + 1, dtype=np.int64) * row, out.ravel()), arr)


def _duration_text(arr: pa.Array) -> pa.Array:
    """TIME (a duration) as ``[-]HH:MM:SS[.ffffff]``, microseconds shown when not zero."""
    per_s = _UNIT_PER_SECOND[arr.type.unit]
    raw = to_numpy(fill_nulls(arr.cast(pa.int64()), 0))
    us = raw * (1_000_000 // per_s) if per_s <= 1_000_000 else raw // (per_s // 1_000_000)
    mag = np.abs(us)
    secs, frac = np.divmod(mag, 1_000_000)

    def two(v: np.ndarray) -> pa.Array:
        return pc.utf8_lpad(pc.cast(numbers(v), pa.string()), 2, "0")

    sign = pc.if_else(numbers(us < 0), _lit("-"), _lit(""))
    parts = [sign, two(secs // 3600), _lit(":"), two(secs // 60 % 60), _lit(":"), two(secs % 60)]
    text = pc.binary_join_element_wise(*parts, _lit(""))
    if frac.any():
        tail = pc.binary_join_element_wise(_lit("."), pc.utf8_lpad(pc.cast(numbers(frac), pa.string()), 6, "0"), _lit(""))
        text = pc.binary_join_element_wise(text, pc.if_else(numbers(frac != 0), tail, _lit("")), _lit(""))
    return _with_nulls(text, arr)


def _decimal_text(arr: pa.Array) -> pa.Array:
    """DECIMAL as its exact text with all its scale's digits (Arrow writes values under
    1e-6 in scientific notation, ``1E-8``: those are written out)."""
    text = pc.cast(arr, pa.string())
    sci = pc.match_substring(text, "E")
    if pc.any(sci).as_py():
        sci = fill_nulls(sci, False)
        where = np.flatnonzero(to_numpy(sci))
        fixed = [format(decimal.Decimal(s), "f") for s in text.take(numbers(where)).to_pylist()]
        text = pc.replace_with_mask(text, sci, strings(fixed))
    return text


def _float_text(arr: pa.Array, style: str) -> pa.Array:
    """Arrow's text of a float (the shortest that reads back, ``1e+15``, ``nan``); in JSON,
    NaN and infinities are strings."""
    text = pc.cast(arr, pa.string())
    if style == "json" and arr.null_count < len(arr):
        finite = pc.is_finite(arr)
        if not pc.all(fill_nulls(finite, True)).as_py():
            text = pc.if_else(finite, text, _quoted(text))
    return text


def _list_text(arr: pa.Array) -> pa.Array:
    """Lists as JSON arrays (``[1, 2]``, ``json.dumps``'s separators)."""
    if pa.types.is_fixed_size_list(arr.type):
        size = arr.type.list_size
        values = arr.values.slice(arr.offset * size, len(arr) * size)
        offsets = np.arange(len(arr) + 1, dtype=np.int64) * size
    else:
        values = arr.values
        offsets = to_numpy(arr.offsets).astype(np.int64)
    if len(arr) == 0 or offsets[-1] == offsets[0]:  # every list empty: "[]" (nulls: null)
        return _with_nulls(_expand(_lit("[]"), len(arr)), arr)
    items = column_text(values.slice(int(offsets[0]), int(offsets[-1] - offsets[0])), "json")
    items = _expand(items, int(offsets[-1] - offsets[0]))
    lists = pa.LargeListArray.from_arrays(numbers(offsets - offsets[0]), items)
    return _with_nulls(pc.binary_join_element_wise(_lit("["), pc.binary_join(lists, ", "), _lit("]"), _lit("")), arr)


def _struct_text(arr: pa.Array) -> pa.Array:
    """Structs as JSON objects (``{"srid": 0, "wkb": "0101..."}``)."""
    pieces: list[Any] = []
    for k, (field, child) in enumerate(zip(arr.type, arr.flatten())):
        pieces += [_lit(("{" if k == 0 else ", ") + json.dumps(field.name, ensure_ascii=False) + ": "),
                   column_text(child, "json")]
    if not pieces:
        return _with_nulls(_expand(_lit("{}"), len(arr)), arr)
    return _with_nulls(pc.binary_join_element_wise(*pieces, _lit("}"), _lit("")), arr)


def _expand(text: pa.Array | pa.Scalar, n: int) -> pa.Array:
    """A column's text as an array of ``n`` (a constant column's scalar repeated)."""
    if isinstance(text, pa.Scalar):
        return pa.DictionaryArray.from_arrays(numbers(np.zeros(n, np.int8)), strings([text.as_py()])).cast(pa.string())
    return text


def values_text(col: pa.Array, style: str) -> pa.Array:
    """The text of every value of ``col`` (nulls stay null), by type family."""
    t = col.type
    if pa.types.is_dictionary(t):
        return pc.take(values_text(col.dictionary, style), col.indices)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        if pa.types.is_string_view(t):
            col = col.cast(pa.large_string())
        return _quoted(json_escape(col)) if style == "json" else _quoted(csv_escape(col)) if style == "csv" else col
    if pa.types.is_integer(t):
        return pc.cast(col, pa.string())
    if pa.types.is_floating(t):
        return _float_text(col, style)
    if pa.types.is_decimal(t):
        text = _decimal_text(col)
        return _quoted(text) if style == "json" else text
    if pa.types.is_boolean(t):
        true, false = ("True", "False") if style == "table" else ("true", "false")
        return pc.if_else(col, _lit(true), _lit(false))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_binary_view(t):
        text = hex_text(col, b"0x" if style == "table" else b"")
        return text if style == "table" else _quoted(text)
    if pa.types.is_date32(t) or (pa.types.is_timestamp(t) and t.tz in (None, "UTC", "+00:00")):
        if style == "csv":
            text = _datetime_text(col, sep=b" ", fraction="unit", suffix=b"Z" if getattr(t, "tz", None) else b"")
        else:
            text = _datetime_text(col, sep=b"T", fraction="auto", suffix=b"+00:00" if getattr(t, "tz", None) else b"")
        if text is None:
            return _python_text(col, style)
        return _quoted(text) if style == "json" else text
    if pa.types.is_duration(t):
        text = _duration_text(col)
        return text if style == "table" else _quoted(text)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _quoted_json(_list_text(col), style)
    if pa.types.is_struct(t):
        return _quoted_json(_struct_text(col), style)
    if pa.types.is_null(t):
        return pa.nulls(len(col), pa.string())
    return _python_text(col, style)


def _quoted_json(text: pa.Array, style: str) -> pa.Array:
    return _quoted(csv_escape(text)) if style == "csv" else text


#: the widest ``table`` text of the types whose values are bounded: integers by their range
#: (``-9223372036854775808``), floats by Arrow's widest shortest text, a negative value with
#: every digit and five zeros before them (``-0.0000012345678901234567``; from 1e-6 down
#: Arrow writes an exponent), DATE ``9999-12-31``
_WIDEST = {
    **{t: max(len(str(np.iinfo(d).min)), len(str(np.iinfo(d).max))) for t, d in (
        (pa.int8(), np.int8), (pa.int16(), np.int16), (pa.int32(), np.int32), (pa.int64(), np.int64),
        (pa.uint8(), np.uint8), (pa.uint16(), np.uint16), (pa.uint32(), np.uint32), (pa.uint64(), np.uint64))},
    pa.float32(): 16, pa.float64(): 25, pa.bool_(): 5, pa.date32(): 10,
}


def widest_text(t: pa.DataType) -> int | None:
    """The most terminal columns a value of type ``t`` takes in the ``table`` style, or None
    when its type does not bound it (text, binary, lists, structs)."""
    if pa.types.is_dictionary(t):
        return widest_text(t.value_type)
    if t in _WIDEST:
        return _WIDEST[t]
    if pa.types.is_decimal(t):  # the digits and a sign, a point, a 0 before it when every digit is a fraction
        return t.precision + 1 + (t.scale > 0) + (t.scale >= t.precision)
    if pa.types.is_timestamp(t):  # 9999-12-31T23:59:59.999999, then +00:00 when it has a zone
        return 19 + (_FRACTION_DIGITS[t.unit] + 1 if t.unit != "s" else 0) + (6 if t.tz else 0)
    if pa.types.is_duration(t):
        return 10 + (_FRACTION_DIGITS[t.unit] + 1 if t.unit != "s" else 0)  # -838:59:59.999999
    return None


#: types formatted once per run of equal values when the values repeat (columns such as
#: _commit_timestamp hold one value per rows event)
def run_friendly(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_decimal(t) or pa.types.is_duration(t) \
        or pa.types.is_integer(t) or pa.types.is_floating(t)


def column_text(col: pa.Array | pa.ChunkedArray, style: str) -> pa.Array | pa.Scalar:
    """The text of every value of ``col`` in ``style`` (``"json"``, ``"table"`` or ``"csv"``),
    nulls included (``null``, ``NULL``, empty): a string array, or a string scalar when every
    value has the same text (a column of one value, or of nulls only)."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, not {style!r}")
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    n = len(col)
    null = NULL_TEXT[style]
    if n == 0:
        return strings([])
    if col.null_count == n:
        return _lit(null)
    t = col.type
    if run_friendly(t) and n >= 2 * RUN_SHARE:
        ree = pc.run_end_encode(col)
        if len(ree.values) == 1:
            return _lit(fill_nulls(values_text(ree.values, style), null)[0].as_py())
        if len(ree.values) * RUN_SHARE <= n and not pa.types.is_integer(t):
            ends = to_numpy(ree.run_ends)
            runs = fill_nulls(values_text(ree.values, style), null)
            return pc.take(runs, numbers(np.repeat(np.arange(len(ends)), np.diff(ends, prepend=0))))
    if pa.types.is_dictionary(t) and len(col.dictionary) == 1 and col.null_count == 0:
        return _lit(fill_nulls(values_text(col.dictionary, style), null)[0].as_py())
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and col.null_count == 0 and len(col.values) == 0:
        return _lit('"[]"' if style == "csv" else "[]")
    text = values_text(col, style)
    return fill_nulls(text, null)
