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
entry. The lines are then written by one compiled loop (numba, cached like walk.py's kernels,
without the GIL): per row, per column, the separator, the cell's bytes (or an integer's digits,
printed there) and the table's padding. numba does not check bounds: the output is sized from
the cells' byte counts before the loop, and every buffer it copies from or to has ``_SLACK``
bytes more than it uses (copies move 8 bytes at a time).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import math
import unicodedata
from typing import Any, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from .decoders.temporal import civil_from_days  # days -> (year, month, day)
from .walk import load_word, store_word

__all__ = ["STYLES", "column_text", "json_value", "time_text", "CsvText", "JsonLinesText", "TableText"]

STYLES = ("json", "table", "csv")
_NULL = {"json": "null", "table": "NULL", "csv": ""}
#: a column whose values change fewer than once every RUN_SHARE rows is formatted once per run
RUN_SHARE = 4


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
            out.append(_NULL[style])
        else:
            text = json.dumps(j, ensure_ascii=False) if isinstance(j, (list, dict)) else str(j)
            out.append(_csv_quote_py(text) if style == "csv" else text)
    return pa.array(out, pa.string())


def _csv_quote_py(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


# ---------------------------------------------------------------------------------------
# string arrays as NumPy buffers
# ---------------------------------------------------------------------------------------
def _parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64 of n + 1, data uint8) of a string/binary array, offsets from 0."""
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type):
        odt = np.int64
    else:
        odt = np.int32
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], odt, count=len(arr) + 1, offset=arr.offset * np.dtype(odt).itemsize)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    start, end = int(offsets[0]), int(offsets[-1])
    return offsets.astype(np.int64) - start, data[start:end]


def _from_parts(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A string array of ``offsets`` (n + 1, from 0) into ``data``."""
    n = len(offsets) - 1
    large = len(data) > np.iinfo(np.int32).max
    typ = pa.large_string() if large else pa.string()
    off = offsets.astype(np.int64 if large else np.int32, copy=False)
    return pa.Array.from_buffers(typ, n, [None, pa.py_buffer(off), pa.py_buffer(np.ascontiguousarray(data))])


def _gather_ranges(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bytes ``data[starts[i] : starts[i] + lengths[i]]`` back to back: (offsets, data)."""
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    idx = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1] - starts, lengths)
    return offsets, data[idx]


def _contains_any(arr: pa.Array, table: np.ndarray) -> bool:
    """Whether any byte of the string array's values is marked in ``table`` (256 bools)."""
    _, data = _parts(arr)
    return bool(len(data)) and _any_marked(data, table)


@njit(nogil=True, cache=True)
def _any_marked(data, table):  # pragma: no cover - compiled
    for b in data:
        if table[b]:
            return True
    return False


def _byte_table(chars: Iterable[int]) -> np.ndarray:
    t = np.zeros(256, bool)
    t[list(chars)] = True
    return t


_JSON_SPECIAL = _byte_table([*range(0x20), ord('"'), ord("\\")])
_QUOTE = _byte_table([ord('"')])
_CONTROL = _byte_table(range(0x20))
_CELL_ESCAPES = (("\r", "\\r"), ("\n", "\\n"), ("\t", "\\t"))
_CELL_SPECIAL = _byte_table([0x0D, 0x0A, 0x09])
_NON_ASCII = _byte_table(range(0x80, 0x100))
#: json.dumps's escapes of the control characters
_JSON_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


def json_escape(arr: pa.Array) -> pa.Array:
    """Each string escaped as in a JSON string literal (``json.dumps(s, ensure_ascii=False)``
    without the quotes); nulls stay null."""
    if _contains_any(arr, _JSON_SPECIAL):
        arr = pc.replace_substring(arr, "\\", "\\\\")
        arr = pc.replace_substring(arr, '"', '\\"')
        _, data = _parts(arr)
        for c in np.flatnonzero(np.bincount(data[_CONTROL[data]], minlength=32)).tolist():
            arr = pc.replace_substring(arr, chr(c), _JSON_ESCAPES.get(c, f"\\u{c:04x}"))
    return arr


def csv_escape(arr: pa.Array) -> pa.Array:
    """Each string with its quotes doubled, as Arrow's CSV writer writes it inside quotes."""
    return pc.replace_substring(arr, '"', '""') if _contains_any(arr, _QUOTE) else arr


def _quoted(arr: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise('"', arr, '"', "")


# ---------------------------------------------------------------------------------------
# type families
# ---------------------------------------------------------------------------------------
_HEX = np.frombuffer(b"".join(f"{i:02x}".encode() for i in range(256)), np.uint16)


def _hex(arr: pa.Array, prefix: bytes = b"") -> pa.Array:
    """Binary values as lowercase hex text (``bytes.fromhex`` reverses it), after ``prefix``."""
    if pa.types.is_fixed_size_binary(arr.type):
        w = arr.type.byte_width
        data = np.frombuffer(arr.buffers()[1], np.uint8)[arr.offset * w : (arr.offset + len(arr)) * w]
        offsets = np.arange(len(arr) + 1, dtype=np.int64) * w
    else:
        if not (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
            arr = arr.cast(pa.large_binary())
        offsets, data = _parts(arr)
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
        text = _from_parts(out_off, out)
    else:
        text = _from_parts(offsets * 2, hexed)
    return _with_nulls(text, arr)


def _with_nulls(text: pa.Array, like: pa.Array) -> pa.Array:
    """``text`` null where ``like`` is."""
    if like.null_count == 0:
        return text
    return pc.if_else(pc.is_valid(like), text, pa.scalar(None, text.type))


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
    raw = arr.cast(pa.int32() if is_date else pa.int64()).fill_null(0).to_numpy().astype(np.int64)
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
            return _with_nulls(_from_parts(offsets, out[keep]), arr)
    return _with_nulls(_from_parts(np.arange(len(raw) + 1, dtype=np.int64) * row, out.ravel()), arr)


def _duration_text(arr: pa.Array) -> pa.Array:
    """TIME (a duration) as ``[-]HH:MM:SS[.ffffff]``, microseconds shown when not zero."""
    per_s = _UNIT_PER_SECOND[arr.type.unit]
    raw = arr.cast(pa.int64()).fill_null(0).to_numpy()
    us = raw * (1_000_000 // per_s) if per_s <= 1_000_000 else raw // (per_s // 1_000_000)
    mag = np.abs(us)
    secs, frac = np.divmod(mag, 1_000_000)

    def two(v: np.ndarray) -> pa.Array:
        return pc.utf8_lpad(pc.cast(pa.array(v), pa.string()), 2, "0")

    sign = pc.if_else(pa.array(us < 0), "-", "")
    parts = [sign, two(secs // 3600), ":", two(secs // 60 % 60), ":", two(secs % 60)]
    text = pc.binary_join_element_wise(*parts, "")
    if frac.any():
        tail = pc.binary_join_element_wise(".", pc.utf8_lpad(pc.cast(pa.array(frac), pa.string()), 6, "0"), "")
        text = pc.binary_join_element_wise(text, pc.if_else(pa.array(frac != 0), tail, ""), "")
    return _with_nulls(text, arr)


def _decimal_text(arr: pa.Array) -> pa.Array:
    """DECIMAL as its exact text with all its scale's digits (Arrow writes values under
    1e-6 in scientific notation, ``1E-8``: those are written out)."""
    text = pc.cast(arr, pa.string())
    sci = pc.match_substring(text, "E")
    if pc.any(sci).as_py():
        where = np.flatnonzero(sci.fill_null(False).to_numpy(zero_copy_only=False))
        fixed = [format(decimal.Decimal(s), "f") for s in text.take(pa.array(where)).to_pylist()]
        text = pc.replace_with_mask(text, sci.fill_null(False), pa.array(fixed, pa.string()))
    return text


def _float_text(arr: pa.Array, style: str) -> pa.Array:
    """Arrow's text of a float (the shortest that reads back, ``1e+15``, ``nan``); in JSON,
    NaN and infinities are strings."""
    text = pc.cast(arr, pa.string())
    if style == "json" and arr.null_count < len(arr):
        finite = pc.is_finite(arr)
        if not pc.all(finite.fill_null(True)).as_py():
            text = pc.if_else(finite, text, pc.binary_join_element_wise('"', text, '"', ""))
    return text


def _list_text(arr: pa.Array) -> pa.Array:
    """Lists as JSON arrays (``[1, 2]``, ``json.dumps``'s separators)."""
    if pa.types.is_fixed_size_list(arr.type):
        size = arr.type.list_size
        values = arr.values.slice(arr.offset * size, len(arr) * size)
        offsets = np.arange(len(arr) + 1, dtype=np.int64) * size
    else:
        values = arr.values
        offsets = np.asarray(arr.offsets).astype(np.int64)
    if len(arr) == 0 or offsets[-1] == offsets[0]:  # every list empty: "[]" (nulls: null)
        return _with_nulls(pa.array(np.full(len(arr), "[]", object), pa.string()), arr)
    items = column_text(values.slice(int(offsets[0]), int(offsets[-1] - offsets[0])), "json")
    items = _expand(items, int(offsets[-1] - offsets[0]))
    lists = pa.LargeListArray.from_arrays(pa.array(offsets - offsets[0]), items)
    return _with_nulls(pc.binary_join_element_wise("[", pc.binary_join(lists, ", "), "]", ""), arr)


def _struct_text(arr: pa.Array) -> pa.Array:
    """Structs as JSON objects (``{"srid": 0, "wkb": "0101..."}``)."""
    pieces: list[Any] = []
    for k, (field, child) in enumerate(zip(arr.type, arr.flatten())):
        pieces += [("{" if k == 0 else ", ") + json.dumps(field.name, ensure_ascii=False) + ": ",
                   column_text(child, "json")]
    if not pieces:
        return _with_nulls(pa.array(np.full(len(arr), "{}", object), pa.string()), arr)
    return _with_nulls(pc.binary_join_element_wise(*pieces, "}", ""), arr)


def _expand(text: pa.Array | pa.Scalar, n: int) -> pa.Array:
    """A column's text as an array of ``n`` (a constant column's scalar repeated)."""
    if isinstance(text, pa.Scalar):
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int8)), pa.array([text.as_py()], pa.string())).cast(pa.string())
    return text


def _values_text(col: pa.Array, style: str) -> pa.Array:
    """The text of every value of ``col`` (nulls stay null), by type family."""
    t = col.type
    if pa.types.is_dictionary(t):
        return pc.take(_values_text(col.dictionary, style), col.indices)
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
        return pc.binary_join_element_wise('"', text, '"', "") if style == "json" else text
    if pa.types.is_boolean(t):
        true, false = ("True", "False") if style == "table" else ("true", "false")
        return pc.if_else(col, true, false)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_binary_view(t):
        text = _hex(col, b"0x" if style == "table" else b"")
        return text if style == "table" else pc.binary_join_element_wise('"', text, '"', "")
    if pa.types.is_date32(t) or (pa.types.is_timestamp(t) and t.tz in (None, "UTC", "+00:00")):
        if style == "csv":
            text = _datetime_text(col, sep=b" ", fraction="unit", suffix=b"Z" if getattr(t, "tz", None) else b"")
        else:
            text = _datetime_text(col, sep=b"T", fraction="auto", suffix=b"+00:00" if getattr(t, "tz", None) else b"")
        if text is None:
            return _python_text(col, style)
        return pc.binary_join_element_wise('"', text, '"', "") if style == "json" else text
    if pa.types.is_duration(t):
        text = _duration_text(col)
        return text if style == "table" else pc.binary_join_element_wise('"', text, '"', "")
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _quoted_json(_list_text(col), style)
    if pa.types.is_struct(t):
        return _quoted_json(_struct_text(col), style)
    if pa.types.is_null(t):
        return pa.nulls(len(col), pa.string())
    return _python_text(col, style)


def _quoted_json(text: pa.Array, style: str) -> pa.Array:
    return _quoted(csv_escape(text)) if style == "csv" else text


#: types formatted once per run of equal values when the values repeat (columns such as
#: _commit_timestamp hold one value per rows event)
def _run_friendly(t: pa.DataType) -> bool:
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
    null = _NULL[style]
    if n == 0:
        return pa.array([], pa.string())
    if col.null_count == n:
        return pa.scalar(null, pa.string())
    t = col.type
    if _run_friendly(t) and n >= 2 * RUN_SHARE:
        ree = pc.run_end_encode(col)
        if len(ree.values) == 1:
            return pa.scalar(pc.fill_null(_values_text(ree.values, style), null)[0].as_py(), pa.string())
        if len(ree.values) * RUN_SHARE <= n and not pa.types.is_integer(t):
            ends = np.asarray(ree.run_ends)
            runs = pc.fill_null(_values_text(ree.values, style), null)
            return pc.take(runs, pa.array(np.repeat(np.arange(len(ends)), np.diff(ends, prepend=0))))
    if pa.types.is_dictionary(t) and len(col.dictionary) == 1 and col.null_count == 0:
        return pa.scalar(pc.fill_null(_values_text(col.dictionary, style), null)[0].as_py(), pa.string())
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and col.null_count == 0 and len(col.values) == 0:
        return pa.scalar('"[]"' if style == "csv" else "[]", pa.string())
    text = _values_text(col, style)
    return pc.fill_null(text, null) if text.null_count else text


# ---------------------------------------------------------------------------------------
# lines: every column's cells, then one compiled loop that writes the rows
# ---------------------------------------------------------------------------------------
_INT, _UINT, _TEXT = 0, 1, 2


class _Cells:
    """One column of a batch, ready for :func:`_write_lines`: integers to print (``ints``,
    int64 or uint64, ``valid``), or texts ``entries`` (a string array) chosen per row by
    ``codes`` (int64; -1 for NULL; None: row i is entry i), in double quotes when ``quote``."""

    def __init__(self, kind: int, ints: np.ndarray | None = None, valid: np.ndarray | None = None,
                 entries: pa.Array | None = None, codes: np.ndarray | None = None, quote: bool = False) -> None:
        self.kind, self.ints, self.valid, self.entries, self.codes = kind, ints, valid, entries, codes
        self.quote = quote


def _cells(col: pa.Array, style: str) -> _Cells:
    n = len(col)
    t = col.type
    null = _NULL[style]
    if pa.types.is_integer(t) and col.null_count < n:
        valid = None if col.null_count == 0 else col.is_valid().to_numpy(zero_copy_only=False)
        if pa.types.is_uint64(t):
            return _Cells(_UINT, col.fill_null(0).to_numpy().astype(np.uint64, copy=False), valid)
        return _Cells(_INT, col.fill_null(0).to_numpy().astype(np.int64), valid)
    if pa.types.is_dictionary(t) and len(col.dictionary) and col.null_count < n:
        entries = pc.fill_null(_values_text(col.dictionary, style), null)
        codes = col.indices.cast(pa.int64()).fill_null(-1).to_numpy()  # a null in the dictionary: its null text
        return _Cells(_TEXT, entries=entries, codes=codes)
    if _run_friendly(t) and n >= 2 * RUN_SHARE and col.null_count < n:
        ree = pc.run_end_encode(col)
        if len(ree.values) * RUN_SHARE <= n:
            ends = np.asarray(ree.run_ends).astype(np.int64)
            entries = pc.fill_null(_values_text(ree.values, style), null)
            return _Cells(_TEXT, entries=entries, codes=np.repeat(np.arange(len(ends)), np.diff(ends, prepend=0)))
    if style != "table" and col.null_count < n and (_is_text(t) or _is_binary(t)):  # quoted by the line writer
        entries = _hex(col) if _is_binary(t) else col.cast(pa.large_string()) if pa.types.is_string_view(t) else col
        entries = json_escape(entries) if style == "json" else csv_escape(entries)
        codes = None if col.null_count == 0 else np.where(col.is_valid().to_numpy(zero_copy_only=False), np.arange(n), -1)
        return _Cells(_TEXT, entries=entries, codes=codes, quote=True)
    text = column_text(col, style)
    if isinstance(text, pa.Scalar):
        return _Cells(_TEXT, entries=pa.array([text.as_py()], pa.string()), codes=np.zeros(n, np.int64))
    return _Cells(_TEXT, entries=text)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _is_binary(t: pa.DataType) -> bool:
    return (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or pa.types.is_binary_view(t))


#: bytes past the end of every buffer :func:`_copy` reads or writes (it moves 8 at a time)
_SLACK = 8


@njit(nogil=True, cache=True, inline="always")
def _copy(dst, d, src, s, n):  # pragma: no cover - compiled
    """Copy ``n`` bytes of ``src`` at ``s`` to ``dst`` at ``d``, 8 at a time: up to 7 bytes
    past ``s + n`` are read and past ``d + n`` written (both buffers have ``_SLACK`` bytes
    more than they use). Returns ``d + n``."""
    for k in range(0, n, 8):
        store_word(dst, d + k, load_word(src, s + k))
    return d + n


_BLANKS = np.full(64 + _SLACK, 32, np.uint8)


@njit(nogil=True, cache=True, inline="always")
def _spaces(out, p, n):  # pragma: no cover - compiled
    """``n`` spaces at ``out[p:]``; returns where they end."""
    while n > 0:
        k = min(n, 64)
        p = _copy(out, p, _BLANKS, 0, k)
        n -= k
    return p


#: "00" to "99": the digits of an integer are written two at a time
_DIGIT_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), np.uint8)
_TEN = np.uint64(10)
_HUNDRED = np.uint64(100)
#: 10 ** k, k = 0..19: a number's digits are counted by comparisons, not divisions
_POWERS_OF_TEN = np.array([10**k for k in range(20)], np.uint64)


@njit(nogil=True, cache=True, inline="always")
def _count_digits(u, powers):  # pragma: no cover - compiled
    n = 1
    while n < 20 and u >= powers[n]:
        n += 1
    return n


@njit(nogil=True, cache=True, inline="always")
def _put_digits(out, p, u, pairs):  # pragma: no cover - compiled
    """The decimal digits of ``u`` (uint64) at ``out[p:]``; returns where they end."""
    n = _count_digits(u, _POWERS_OF_TEN)
    q = p + n
    while u >= _HUNDRED:
        d = np.int64(u % _HUNDRED) * 2
        u //= _HUNDRED
        q -= 2
        out[q] = pairs[d]
        out[q + 1] = pairs[d + 1]
    if u >= _TEN:
        d = np.int64(u) * 2
        out[q - 2] = pairs[d]
        out[q - 1] = pairs[d + 1]
    else:
        out[q - 1] = 48 + np.uint8(u)
    return p + n


@njit(nogil=True, cache=True, inline="always")
def _int_width(v, unsigned):  # pragma: no cover - compiled
    """Characters of the decimal text of ``v`` (int64, or the bits of a uint64)."""
    if unsigned or v >= 0:
        return _count_digits(np.uint64(v), _POWERS_OF_TEN)
    return 1 + _count_digits(np.uint64(-(v + 1)) + np.uint64(1), _POWERS_OF_TEN)


@njit(nogil=True, cache=True, inline="always")
def _put_int(out, p, v, unsigned, pairs):  # pragma: no cover - compiled
    if unsigned or v >= 0:
        return _put_digits(out, p, np.uint64(v), pairs)
    out[p] = 45
    return _put_digits(out, p + 1, np.uint64(-(v + 1)) + np.uint64(1), pairs)


@njit(nogil=True, cache=True)
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
    pairs = _DIGIT_PAIRS
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
                    p = _put_int(out, p, v, kind == 1, pairs)
                    continue
                w = _int_width(v, kind == 1)
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
                p = _put_int(out, p, ints[r, k], kind == 1, pairs)
            if pad > 0 and not right[j]:
                p = _spaces(out, p, pad)
        if strip:
            while p > start and (out[p - 1] == 32 or 9 <= out[p - 1] <= 13 or 28 <= out[p - 1] <= 31):
                p -= 1
        p = _copy(out, p, consts, seps[m], seps[m + 1] - seps[m])
    return p


def _lines(cells: list[_Cells], before: Sequence[str], end: str, n: int, style: str,
           widths: Sequence[int] | None = None, right: Sequence[bool] | None = None,
           fitted: Sequence[tuple[pa.Array, np.ndarray]] | None = None) -> memoryview:
    """The ``n`` lines of ``cells`` (``before[j]`` ahead of column j, ``end`` after the last),
    written by :func:`_write_lines`: the bytes of every line, back to back."""
    m = len(cells)
    null = _NULL[style].encode()
    widths = np.asarray(widths if widths is not None else np.zeros(m), np.int64)
    right = np.asarray(right if right is not None else np.zeros(m), np.bool_)
    quote = np.array([c.quote for c in cells], np.bool_)
    pieces = [s.encode() for s in before] + [end.encode()]
    seps = np.zeros(m + 2, np.int64)
    np.cumsum([len(x) for x in pieces], out=seps[1:])
    consts = np.frombuffer(b"".join(pieces) + bytes(_SLACK), np.uint8)
    kinds = np.array([c.kind for c in cells], np.int64)
    index = np.zeros(m, np.int64)
    int_cols = [c for c in cells if c.kind != _TEXT]
    text_cols = [c for c in cells if c.kind == _TEXT]
    ints = np.zeros((n, max(len(int_cols), 1)), np.int64)
    unsigned = np.zeros(max(len(int_cols), 1), np.bool_)
    has_valid = np.zeros(max(len(int_cols), 1), np.bool_)
    valid = np.ones((n if any(c.valid is not None for c in int_cols) else 1, max(len(int_cols), 1)), np.bool_)
    codes = np.zeros((n if any(c.codes is not None for c in text_cols) else 1, max(len(text_cols), 1)), np.int64)
    identity = np.zeros(max(len(text_cols), 1), np.bool_)
    ebase = np.zeros(max(len(text_cols), 1), np.int64)
    eoffs, ewidths, datas = [], [], []
    size = n * (seps[-1] + int(widths.sum()) + 2 * int(quote.sum()))
    entry_count, pool_size = 0, 0
    ki = kt = 0
    for j, c in enumerate(cells):
        if c.kind != _TEXT:
            index[j] = ki
            ints[:, ki] = c.ints.view(np.int64)
            unsigned[ki] = c.kind == _UINT
            if c.valid is not None:
                has_valid[ki] = True
                valid[:, ki] = c.valid
            size += 21 * n
            ki += 1
            continue
        index[j] = kt
        entries, ew = fitted[j] if fitted is not None else (c.entries, np.zeros(len(c.entries), np.int64))
        off, data = _parts(entries)
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
    written = _write_lines(n, kinds, index, widths, right, quote, seps, consts, ints, unsigned, has_valid, valid,
                           codes, identity, ebase, eoff, ewidth, pool, null_text, len(_NULL[style]),
                           style == "table", out)
    return memoryview(out[:written])


class _Lines:
    """A text format of rows: :meth:`write` a batch to a binary file, ``CHUNK`` rows at a time
    (what formatting allocates is bounded by the chunk, not the batch)."""

    CHUNK = 65536

    def write(self, batch: pa.RecordBatch, out: Any) -> None:
        for start in range(0, max(batch.num_rows, 1), self.CHUNK):
            out.write(self.lines(batch.slice(start, self.CHUNK)))

    def lines(self, batch: pa.RecordBatch) -> memoryview:
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
        return (",".join(_csv_quote_py(n) for n in names) + "\n").encode()

    def lines(self, batch: pa.RecordBatch) -> memoryview:
        if batch.num_rows == 0:
            return memoryview(b"")
        before = [""] + [","] * (batch.num_columns - 1)
        return _lines([_cells(c, "csv") for c in batch.columns], before, "\n", batch.num_rows, "csv")


# -- the aligned table ---------------------------------------------------------------------
#: terminal columns of each code point (-1: not looked up yet), filled as characters are met
_CHAR_WIDTHS = np.full(0x110000, -1, np.int8)
_CHAR_WIDTHS[:0x80] = 1


def _char_width(cp: int) -> int:
    """2 for East Asian wide and fullwidth characters, 0 for combining ones, else 1."""
    ch = chr(cp)
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1


@njit(nogil=True, cache=True, inline="always")
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


@njit(nogil=True, cache=True)
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


@njit(nogil=True, cache=True)
def _measure_cells(offsets, data, table, limit, widths, ends, cut_widths):  # pragma: no cover - compiled
    """Terminal width of each cell; where a cell wider than ``limit`` (>= 1; 0: no limit) is
    cut: ``ends`` (the byte after its longest prefix of at most ``limit - 1`` columns, -1 when
    it is not cut) and the width of that prefix plus the ellipsis (``cut_widths``)."""
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


def fit_cells(text: pa.Array, width: int | None) -> tuple[pa.Array, np.ndarray]:
    """Table cells: ``\\r``, ``\\n``, ``\\t`` escaped, cut to ``width`` terminal columns with an
    ellipsis when wider (``None``: never cut); returns them and their widths (East Asian wide
    characters take two columns, combining ones none)."""
    if _contains_any(text, _CELL_SPECIAL):
        for raw, escaped in _CELL_ESCAPES:
            text = pc.replace_substring(text, raw, escaped)
    offsets, data = _parts(text)
    n = len(text)
    if not (len(data) and _any_marked(data, _NON_ASCII)):  # one column per byte
        widths = np.diff(offsets)
        if width is None or not (widths > width).any():
            return text, widths
        cut = widths > width
        ends = np.where(cut, offsets[:-1] + width - 1, -1)
        cut_widths = np.full(n, width, np.int64)
    else:
        unknown = np.empty(len(data), np.int64)
        for cp in unknown[: _unknown_chars(data, _CHAR_WIDTHS, unknown)].tolist():
            _CHAR_WIDTHS[cp] = _char_width(cp)
        widths = np.empty(n, np.int64)
        ends = np.empty(n, np.int64)
        cut_widths = np.empty(n, np.int64)
        _measure_cells(offsets, data, _CHAR_WIDTHS, width or 0, widths, ends, cut_widths)
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
    body_off, body = _gather_ranges(data, starts, lengths)
    idx = np.arange(body_off[-1], dtype=np.int64) + np.repeat(out_off[:-1] - body_off[:-1], lengths)
    out[idx] = body
    tail = (out_off[1:][cut, None] - len(ell) + np.arange(len(ell))).ravel()
    out[tail] = np.tile(ell, int(cut.sum()))
    return _from_parts(out_off, out), np.where(cut, cut_widths, widths)


def _is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


class TableText(_Lines):
    """Aligned columns: a header, a rule, then one line per row; each column as wide as its
    widest cell among the first batch's first ``SAMPLE`` rows (text cut at ``max_width``
    terminal columns with an ellipsis, numbers never), numbers right-aligned, two spaces
    between columns, no trailing spaces. A batch of another layout starts a new header."""

    SAMPLE = 1000

    def __init__(self, max_width: int = 40, cut: bool = True) -> None:
        self.max_width = max_width or None
        self.cut = cut  #: False: cells wider than their column are not cut (they push the next ones)
        self.names: list[str] | None = None
        self.widths: list[int] = []
        self.right: list[bool] = []

    def lines(self, batch: pa.RecordBatch) -> memoryview:
        cells = [_cells(c, "table") for c in batch.columns]
        head = b""
        if batch.schema.names != self.names:
            head = self._header(batch, cells)
        if batch.num_rows == 0:
            return memoryview(head)
        fitted = [None if c.kind != _TEXT else fit_cells(c.entries, None if r or not self.cut else wd)
                  for c, wd, r in zip(cells, self.widths, self.right)]
        body = _lines(cells, [""] + ["  "] * (len(cells) - 1), "\n", batch.num_rows, "table",
                      self.widths, self.right, fitted)
        return memoryview(head + bytes(body)) if head else body

    def _header(self, batch: pa.RecordBatch, cells: list[_Cells]) -> bytes:
        blank = b"\n" if self.names is not None else b""
        self.names = batch.schema.names
        self.right = [_is_numeric(t) for t in batch.schema.types]
        self.widths = []
        k = min(batch.num_rows, self.SAMPLE)
        for name, c, right in zip(self.names, cells, self.right):
            _, w = fit_cells(pa.array([name], pa.string()), None)
            if c.kind != _TEXT:
                sample = pc.cast(pa.array(c.ints[:k]), pa.string())
                _, ws = fit_cells(sample, None)
                if c.valid is not None:
                    ws = np.where(c.valid[:k], ws, len(_NULL["table"]))
            else:
                _, ew = fit_cells(c.entries, None)
                codes = np.arange(k) if c.codes is None else c.codes[:k]
                ws = np.where(codes >= 0, ew[np.maximum(codes, 0)] if len(ew) else 0, len(_NULL["table"]))
                if c.codes is None and c.entries.null_count:
                    ws = np.where(pc.is_valid(c.entries.slice(0, k)).to_numpy(zero_copy_only=False), ws, 4)
            wd = int(max(w.max(), ws.max() if len(ws) else 0))
            self.widths.append(min(wd, self.max_width) if self.max_width and not right else wd)
        if not self.cut and not self.right[-1]:  # nothing follows the last column: no wider than its name
            self.widths[-1] = int(fit_cells(pa.array([self.names[-1]], pa.string()), None)[1][0])
        heads = []
        for name, wd in zip(self.names, self.widths):
            h, hw = fit_cells(pa.array([name], pa.string()), wd)
            heads.append(h[0].as_py() + " " * (wd - int(hw[0])))
        line = "  ".join(heads).rstrip()
        rule = "  ".join("-" * wd for wd in self.widths)
        return blank + (line + "\n" + rule + "\n").encode()
