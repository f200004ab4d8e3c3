"""JSON columns (type 245): MySQL's binary JSON -> ``string``, the text ``SELECT`` prints.

A JSON value in a row image is a blob (``spec.meta`` bytes of length, then the document in
MySQL's binary format). Each document is rendered to exactly the text MySQL 8 gives for
``SELECT json_col`` (``Json_wrapper::to_string``): ``{"a": 1, "b": [1, 2]}``.

Binary format (``sql-common/json_binary.h``; all integers little-endian)::

    doc        type:uint8 value
    type       0x00 small object  0x01 large object  0x02 small array  0x03 large array
               0x04 literal (0x00 null, 0x01 true, 0x02 false)
               0x05 int16  0x06 uint16  0x07 int32  0x08 uint32  0x09 int64  0x0a uint64
               0x0b double  0x0c utf8mb4 string  0x0f opaque (any other MySQL type)
    object     count size key-entry[count] value-entry[count] keys... values...
    array      count size value-entry[count] values...
               count, size: uint16 (small) / uint32 (large); size covers the whole container
    key-entry  offset (uint16/uint32) length (uint16)      offsets are from the container start
    value-entry  type:uint8 offset-or-inline (uint16/uint32)
               literals and [u]int16 are inlined; [u]int32 too in the large format
    string     varlen bytes                  varlen: 7 bits per byte, low first, 0x80 = more
    opaque     field_type:uint8 varlen bytes

Values are reached only through offsets (MySQL 8's in-place partial updates leave gaps and
move values), with the bounds checks of ``json_binary::Value::element``/``key``/
``parse_scalar``/``parse_array_or_object``. Keys are printed in stored order (MySQL sorts them
by length, then bytes, when it serializes).

Printing (``sql-common/json_dom.cc``, ``wrapper_to_string``):

* containers: ``[a, b]`` / ``{"k": v}`` with ``", "`` and ``": "``; nesting deeper than
  ``JSON_DOCUMENT_MAX_DEPTH`` (100) is an error;
* strings and keys: ``double_quote``: ``"`` and ``\\`` backslash-escaped, ``\\b \\t \\n \\f
  \\r``, other bytes <= 0x1f as ``\\u00xx`` (lower-case hex); everything else (UTF-8) as is;
* integers as decimal; doubles with ``my_gcvt(d, MY_GCVT_ARG_DOUBLE, 34)``: the shortest
  digits that read back to the same double (dtoa mode 4 with 34 digits), in fixed notation
  for 1e-15 <= |d| < 1e15 (and for 17-digit values below 1e16), otherwise ``e`` notation
  without ``+`` or zero padding (``1e15``, ``1.5e-20``, ``1.2345678901234568e17``); then
  ``.0`` is appended when the text has neither ``.`` nor ``e`` (``1.0``, ``-0.0``);
  NaN and infinities, which dtoa refuses, print as ``0.0``;
* opaque values: DECIMAL (246: precision, scale, packed decimal) as a bare number with all
  its scale digits (``9.00``); DATE (10) as ``"YYYY-MM-DD"``; TIME (11) as
  ``"[-]HH:MM:SS.ffffff"``; DATETIME (12) and TIMESTAMP (7) as
  ``"YYYY-MM-DD HH:MM:SS.ffffff"`` -- always six fractional digits (``my_TIME_to_str(t, 6)``),
  from MySQL's packed 8-byte longlong; VAR_STRING (253) as a JSON string (MySQL 8); any other
  type as ``"base64:typeNN:<base64>"`` with MySQL's base64 (a line break every 76
  characters, printed escaped as ``\\n``).

An empty (0-byte) value is the JSON ``null`` literal: ``json_binary::parse_binary`` and
``Field_json::val_json`` read it so (Bug#21437989: ``INSERT IGNORE``/non-strict mode stores
an empty value when NULL or DEFAULT is forced into a NOT NULL JSON column). It gives the text
``null``, not an Arrow null; an SQL NULL is an Arrow null.

Malformed documents raise :class:`~vecbinlog.errors.MalformedEventError`: an offset, size or
length past its container, an unknown type or literal byte, more than 100 nested containers,
a DECIMAL/temporal opaque value of the wrong size or out of range, strings that are not
UTF-8, and documents whose offsets make bytes count more than once (an aliasing loop would
otherwise print exponentially much text; MySQL's own serializer never shares bytes).
"""

from __future__ import annotations

import base64 as _base64
import math as _math
import re as _re
import struct as _struct
from itertools import accumulate as _accumulate

import numpy as np
import pyarrow as pa

from ...errors import MalformedEventError
from ...tables.table_map import ColumnSpec
from . import utf8
from .common import ColumnData, DecodeOptions, binary_like, gather_var

__all__ = ["arrow_type", "decode", "to_text", "render", "quote", "format_double", "MAX_DEPTH"]

#: JSON_DOCUMENT_MAX_DEPTH (sql-common/json_syntax_check.cc)
MAX_DEPTH = 100

_HH = _struct.Struct("<HH")
_II = _struct.Struct("<II")
_i = _struct.Struct("<i")
_I = _struct.Struct("<I")
_q = _struct.Struct("<q")
_Q = _struct.Struct("<Q")
_d = _struct.Struct("<d")

# MySQL field types with their own printing (enum_field_types)
_T_TIMESTAMP, _T_DATE, _T_TIME, _T_DATETIME = 7, 10, 11, 12
_T_NEWDECIMAL, _T_VAR_STRING = 246, 253

_LITERALS = (b"null", b"true", b"false")
_SPECIAL = _re.compile(rb'[\x00-\x1f"\\]')
_ESCAPES = {bytes([c]): b"\\u00%02x" % c for c in range(0x20)}
_ESCAPES.update({b"\b": b"\\b", b"\t": b"\\t", b"\n": b"\\n", b"\f": b"\\f", b"\r": b"\\r",
                 b'"': b'\\"', b"\\": b"\\\\"})
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


class _Bad(Exception):
    """Internal: the document is malformed (turned into MalformedEventError by the caller)."""


# -- caches --------------------------------------------------------------------------------

_ENTRY_STRUCTS: dict[tuple[int, int], _struct.Struct] = {}


def _entries(kind: int, count: int) -> _struct.Struct:
    """kind: 0 small keys (HH), 1 large keys (IH), 2 small values (BH), 3 large values (BI)."""
    s = _ENTRY_STRUCTS.get((kind, count))
    if s is None:
        s = _struct.Struct("<" + ("HH", "IH", "BH", "BI")[kind] * count)
        if count <= 1024:
            _ENTRY_STRUCTS[(kind, count)] = s
    return s


#: the entry structs of containers of fewer than 256 entries, by [large][count] (built on
#: first use, with the integer texts: not on every ``import vecbinlog``)
_KSTRUCTS: list[list[_struct.Struct]] = []
_VSTRUCTS: list[list[_struct.Struct]] = []

#: what comes before each element of an array of n elements: (b"[", b", ", b", ", ...)
_SEPS = [(b"[",) + (b", ",) * (n - 1) if n else () for n in range(256)]

# Printed keys of objects, by the raw bytes of their keys: the documents of one column repeat
# them. Bounded: cleared when full.
_CACHE_MAX = 1 << 16
#: contiguous keys of an object -> (key entries, header, printed keys with what precedes them)
_KEY_CACHE: dict[bytes, tuple] = {}


#: texts of the 16-bit integers by their stored bits (built on first use: empty until then)
_I16: list[bytes] = []
_U16: list[bytes] = []


def _build_tables() -> None:
    """The texts of the 16-bit integers, and the entry structs (:data:`_KSTRUCTS`)."""
    global _I16, _U16
    _KSTRUCTS[:] = [[_entries(k, n) for n in range(256)] for k in (0, 1)]
    _VSTRUCTS[:] = [[_entries(k, n) for n in range(256)] for k in (2, 3)]
    _U16 = [b"%d" % v for v in range(0x10000)]
    _I16 = _U16[:0x8000] + [b"%d" % (v - 0x10000) for v in range(0x8000, 0x10000)]


# -- scalars -------------------------------------------------------------------------------


def _quote(raw: bytes) -> bytes:
    """double_quote(): the string between quotes, with MySQL's escapes."""
    if _SPECIAL.search(raw) is None:
        return b'"' + raw + b'"'
    return b'"' + _SPECIAL.sub(lambda m: _ESCAPES[m.group()], raw) + b'"'


def quote(text: str) -> str:
    """A JSON string or key as MySQL prints it (double_quote())."""
    return _quote(text.encode("utf-8")).decode("utf-8")


def format_double(x: float) -> bytes:
    """``my_gcvt(x, MY_GCVT_ARG_DOUBLE, MY_GCVT_MAX_FIELD_WIDTH)`` plus ``.0`` as MySQL prints
    a JSON double (strings/dtoa.cc, sql-common/json_dom.cc)."""
    if x != x or x in (_math.inf, -_math.inf):
        return b"0.0"  # dtoa: DTOA_OVERFLOW -> "0", then ".0" appended
    ax = abs(x)
    if x == 0.0 or 1e-4 <= ax < 1e15:
        # decimal exponent in [-3, 15]: Python's repr uses the same shortest digits, fixed
        # notation, and the same ".0" for integral values
        return repr(x).encode()
    # general case: shortest round-trip digits (dtoa mode 4 with 34 digits), MySQL's layout
    r = repr(ax)
    if "e" in r:
        mant, exp = r.split("e")
        digits = mant.replace(".", "")
        decpt = int(exp) + 1
    else:
        ipart, fpart = r.split(".")
        digits = ipart + fpart
        decpt = len(ipart)
    digits = digits.rstrip("0") or "0"
    neg = x < 0
    width = 34 - 1 if neg else 34  # MY_GCVT_MAX_FIELD_WIDTH; the sign is taken out first
    n = len(digits)
    exp_len = 1 + (decpt >= 101 or decpt <= -99) + (decpt >= 11 or decpt <= -9)
    if decpt <= 0:
        need = n - decpt + 2
    elif decpt < n:
        need = n + 1
    else:
        need = decpt
    have_space = need <= width
    force_e = decpt <= 0 and width <= 2 - decpt and width >= 3 + exp_len
    use_f = (
        have_space
        or (decpt <= width and (decpt >= -1 or (decpt == -2 and (n > 1 or not force_e))) and not force_e)
    ) and (not have_space or (decpt >= -15 + 1 and (decpt <= 15 or n > decpt)))
    sign = "-" if neg else ""
    if use_f:  # never needs truncation: at most 17 digits in a 33-34 character field
        if decpt <= 0:
            text = sign + "0." + "0" * -decpt + digits
        elif decpt < n:
            text = sign + digits[:decpt] + "." + digits[decpt:]
        else:
            text = sign + digits + "0" * (decpt - n)
        if "." not in text:
            text += ".0"
    else:
        e = decpt - 1
        text = sign + digits[0] + ("." + digits[1:] if n > 1 else "") + "e" + str(e)
    return text.encode()


def _decimal(data: bytes) -> bytes:
    """A DECIMAL opaque value: precision, scale, decimal2bin() bytes -> decimal2string()."""
    if len(data) < 2:
        raise _Bad("DECIMAL value shorter than its precision and scale bytes")
    precision, scale = data[0], data[1]
    if not (scale <= precision <= 65 and scale <= 30):
        raise _Bad(f"DECIMAL({precision},{scale}) is not a valid precision and scale")
    intg, frac = precision - scale, scale
    groups = []
    if intg % 9:
        groups.append((_DIG2BYTES[intg % 9], intg % 9, True))
    groups += [(4, 9, True)] * (intg // 9)
    groups += [(4, 9, False)] * (frac // 9)
    if frac % 9:
        groups.append((_DIG2BYTES[frac % 9], frac % 9, False))
    size = sum(g[0] for g in groups)
    if len(data) - 2 != size:
        raise _Bad(f"DECIMAL({precision},{scale}) value of {len(data) - 2} bytes, not {size}")
    if size == 0:
        return b"0"
    raw = bytearray(data[2:])
    negative = not raw[0] & 0x80  # stored sign bit: 1 = positive (bin2decimal)
    raw[0] ^= 0x80
    if negative:
        raw = bytearray(b ^ 0xFF for b in raw)
    pos = 0
    int_value = 0
    frac_text = []
    for nbytes, ndigits, is_int in groups:
        g = int.from_bytes(raw[pos : pos + nbytes], "big")
        pos += nbytes
        if g >= 10**ndigits:
            raise _Bad(f"DECIMAL({precision},{scale}) value has a digit group out of range")
        if is_int:
            int_value = int_value * 10**ndigits + g
        else:
            frac_text.append(str(g).zfill(ndigits))
    text = ("-" if negative else "") + str(int_value)
    if frac:
        text += "." + "".join(frac_text)
    return text.encode()


def _temporal(field_type: int, data: bytes) -> bytes:
    """DATE/TIME/DATETIME/TIMESTAMP opaque value: MySQL's packed longlong -> quoted text."""
    if len(data) != 8:
        raise _Bad(f"temporal opaque value (type {field_type}) of {len(data)} bytes, not 8")
    packed = _q.unpack(data)[0]
    neg = packed < 0
    packed = -packed if neg else packed
    frac = packed & 0xFFFFFF
    ipart = packed >> 24
    if frac > 999999:
        raise _Bad(f"temporal opaque value (type {field_type}) with {frac} microseconds")
    if field_type == _T_TIME:  # TIME_from_longlong_time_packed
        hour, minute, second = (ipart >> 12) % 1024, (ipart >> 6) % 64, ipart % 64
        return b'"%s%02d:%02d:%02d.%06d"' % (b"-" if neg else b"", hour, minute, second, frac)
    # TIME_from_longlong_datetime_packed (the sign is not printed for dates)
    ymd, hms = ipart >> 17, ipart % (1 << 17)
    ym = ymd >> 5
    year, month, day = ym // 13, ym % 13, ymd % 32
    if year > 9999:
        raise _Bad(f"temporal opaque value (type {field_type}) with year {year}")
    if field_type == _T_DATE:
        return b'"%04d-%02d-%02d"' % (year, month, day)
    hour, minute, second = hms >> 12, (hms >> 6) % 64, hms % 64
    return b'"%04d-%02d-%02d %02d:%02d:%02d.%06d"' % (year, month, day, hour, minute, second, frac)


def _opaque(field_type: int, data: bytes) -> bytes:
    if field_type == _T_NEWDECIMAL:
        return _decimal(data)
    if field_type in (_T_DATE, _T_TIME, _T_DATETIME, _T_TIMESTAMP):
        return _temporal(field_type, data)
    if field_type == _T_VAR_STRING:  # "strings saved in opaque": printed as JSON strings
        return _quote(data)
    b64 = _base64.b64encode(data)
    if len(b64) > 76:  # base64_encode(): a line break every 76 characters
        b64 = b"\\n".join([b64[i : i + 76] for i in range(0, len(b64), 76)])
    return b'"base64:type%d:%s"' % (field_type, b64)


def _varlen(buf: bytes, p: int, avail: int) -> tuple[int, int]:
    """read_variable_length(): (length, bytes used) of the length at p, at most avail bytes."""
    length = 0
    for i in range(min(avail, 5)):
        b = buf[p + i]
        length |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            if length > 0xFFFFFFFF:
                break
            return length, i + 1
    raise _Bad("string or opaque length is cut or longer than 5 bytes")


def _scalar(t: int, buf: bytes, p: int, avail: int, out: list) -> int:
    """parse_scalar() + printing of a non-inlined scalar at p; returns the bytes it uses."""
    if t == 0x0C:
        if avail < 1:
            raise _Bad("string value past the end of its container")
        n = buf[p]
        if n < 0x80:
            h = 1
        else:
            n, h = _varlen(buf, p, avail)
        if avail < h + n:
            raise _Bad("string value past the end of its container")
        out.append(_quote(buf[p + h : p + h + n]))
        return h + n
    if t == 0x0F:
        if avail < 1:
            raise _Bad("opaque value past the end of its container")
        n, h = _varlen(buf, p + 1, avail - 1)
        if avail < 1 + h + n:
            raise _Bad("opaque value past the end of its container")
        out.append(_opaque(buf[p], buf[p + 1 + h : p + 1 + h + n]))
        return 1 + h + n
    if t == 0x0B:
        if avail < 8:
            raise _Bad("double value past the end of its container")
        out.append(format_double(_d.unpack_from(buf, p)[0]))
        return 8
    if t in (0x09, 0x0A):
        if avail < 8:
            raise _Bad("64-bit integer past the end of its container")
        out.append(b"%d" % (_q if t == 0x09 else _Q).unpack_from(buf, p)[0])
        return 8
    if t in (0x07, 0x08):
        if avail < 4:
            raise _Bad("32-bit integer past the end of its container")
        out.append(b"%d" % (_i if t == 0x07 else _I).unpack_from(buf, p)[0])
        return 4
    if t in (0x05, 0x06):
        if avail < 2:
            raise _Bad("16-bit integer past the end of its container")
        v = buf[p] | buf[p + 1] << 8
        out.append(b"%d" % (v - 0x10000 if t == 0x05 and v >= 0x8000 else v))
        return 2
    if t == 0x04:
        if avail < 1:
            raise _Bad("literal past the end of its container")
        if buf[p] > 2:
            raise _Bad(f"literal byte 0x{buf[p]:02x}")
        out.append(_LITERALS[buf[p]])
        return 1
    raise _Bad(f"unknown value type 0x{t:02x}")


# -- containers ----------------------------------------------------------------------------


def _key_texts(buf: bytes, pos: int, keys: tuple, header: int, size: int) -> tuple[bytes, ...]:
    """The printed keys of an object, each with what comes before it: '{"a": ', ', "b": ', ..."""
    texts = []
    for i in range(0, len(keys), 2):
        ko, kl = keys[i], keys[i + 1]
        if ko < header or ko + kl > size:
            raise _Bad("object key past the end of its object")
        texts.append((b", " if i else b"{") + _quote(buf[pos + ko : pos + ko + kl]) + b": ")
    return tuple(texts)


def _container(buf: bytes, pos: int, avail: int, t: int, depth: int, out: list, limit: int) -> int:
    """parse_array_or_object() + printing; t is the type byte (0-3). Returns the bytes used
    (header, keys and values: a document whose offsets make that exceed its length reuses
    bytes, which MySQL never writes, and is refused before it prints exponentially)."""
    if depth > MAX_DEPTH:
        raise _Bad(f"JSON document nested deeper than {MAX_DEPTH} levels")
    large = t & 1
    if large:
        if avail < 8:
            raise _Bad("container header past the end of the value")
        count, size = _II.unpack_from(buf, pos)
        hdr, kes, ves = 8, 6, 5
    else:
        if avail < 4:
            raise _Bad("container header past the end of the value")
        count, size = _HH.unpack_from(buf, pos)
        hdr, kes, ves = 4, 4, 3
    if size > avail:
        raise _Bad(f"container of {size} bytes where {avail} remain")
    if t < 2:  # object
        ventry0 = hdr + count * kes
        header = ventry0 + count * ves
        if header > size:
            raise _Bad(f"container of {count} elements does not fit in its {size} bytes")
        if count == 0:
            out.append(b"{}")
            return header
        keys = (_KSTRUCTS[large][count] if count < 256 else _entries(large, count)).unpack_from(buf, pos + hdr)
        # MySQL stores the keys contiguously, and a column's documents repeat them: the
        # printed keys are cached by the bytes of that run (with the entries that cut it)
        kstart, kend = keys[0], keys[-2] + keys[-1]
        region = buf[pos + kstart : pos + kend] if header <= kstart <= kend <= size else None
        hit = _KEY_CACHE.get(region) if region is not None else None
        if hit is not None and hit[0] == keys and hit[1] == header:
            texts = hit[2]
            used = header + kend - kstart
        else:
            texts = _key_texts(buf, pos, keys, header, size)
            klen = sum(keys[1::2])
            used = header + klen
            if region is not None and kend - kstart == klen and all(
                keys[i + 2] == keys[i] + keys[i + 1] for i in range(0, 2 * count - 2, 2)
            ):
                if len(_KEY_CACHE) >= _CACHE_MAX:
                    _KEY_CACHE.clear()
                _KEY_CACHE[region] = (keys, header, texts)
        close = b"}"
    else:
        ventry0 = hdr
        header = hdr + count * ves
        if header > size:
            raise _Bad(f"container of {count} elements does not fit in its {size} bytes")
        if count == 0:
            out.append(b"[]")
            return header
        texts = _SEPS[count] if count < 256 else (b"[",) + (b", ",) * (count - 1)
        used = header
        close = b"]"
    vs = _VSTRUCTS[large][count] if count < 256 else _entries(2 + large, count)
    it = iter(vs.unpack_from(buf, pos + ventry0))
    append = out.append
    i16 = _I16
    special = _SPECIAL.search
    entry_end = ventry0  # end of the current value entry, container-relative
    for kt, vt, v in zip(texts, it, it):
        append(kt)
        entry_end += ves
        if vt == 0x0C:  # strings, the common case, inline
            if v > size or v < entry_end:
                raise _Bad("value offset outside its container")
            a = pos + v
            left = size - v
            if left < 1:
                raise _Bad("string value past the end of its container")
            n = buf[a]
            if n < 0x80:
                h = 1
            else:
                n, h = _varlen(buf, a, left)
            if h + n > left:
                raise _Bad("string value past the end of its container")
            a += h
            if special(buf, a, a + n) is None:
                append(b'"' + buf[a : a + n] + b'"')
            else:
                append(_quote(buf[a : a + n]))
            used += h + n
        elif vt == 0x05:
            append(i16[v & 0xFFFF])
            continue
        elif vt == 0x04:  # literals are always inlined (only the first byte counts)
            v &= 0xFF
            if v > 2:
                raise _Bad(f"literal byte 0x{v:02x}")
            append(_LITERALS[v])
            continue
        elif vt <= 0x03:
            if v > size or v < entry_end:
                raise _Bad("value offset outside its container")
            used += _container(buf, pos + v, size - v, vt, depth + 1, out, limit)
        elif vt == 0x06:
            append(_U16[v & 0xFFFF])
            continue
        elif large and (vt == 0x07 or vt == 0x08):
            append(b"%d" % (v - 0x100000000 if vt == 0x07 and v >= 0x80000000 else v))
            continue
        else:
            if v > size or v < entry_end:
                raise _Bad("value offset outside its container")
            used += _scalar(vt, buf, pos + v, size - v, out)
        if used > limit:
            raise _Bad("JSON value offsets make bytes count more than once")
    append(close)
    return used


def _render_into(buf: bytes, start: int, end: int, out: list) -> None:
    """Append the MySQL text of the document buf[start:end] to out."""
    if not _I16:
        _build_tables()
    n = end - start
    if n == 0:
        out.append(b"null")  # parse_binary(): an empty document is the JSON null literal
        return
    t = buf[start]
    if t <= 0x03:
        _container(buf, start + 1, n - 1, t, 1, out, n)
    else:
        _scalar(t, buf, start + 1, n - 1, out)


def render(doc: bytes) -> bytes:
    """The UTF-8 bytes of the text MySQL prints for one binary JSON document.

    Raises MalformedEventError (without a location) when the document is malformed.
    """
    out: list[bytes] = []
    try:
        _render_into(doc, 0, len(doc), out)
    except _Bad as e:
        raise MalformedEventError(f"malformed JSON value: {e}") from None
    return b"".join(out)


def to_text(doc: bytes) -> str:
    """The text MySQL prints for one binary JSON document (``SELECT json_col``)."""
    try:
        return render(doc).decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedEventError("malformed JSON value: a string or key is not valid utf8mb4") from None


# -- column decoder ------------------------------------------------------------------------


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    return pa.string()


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    offsets, data = gather_var(col)
    raw = data.tobytes()
    bounds = offsets.tolist()
    valid = col.valid.tolist()
    if not _I16:
        _build_tables()
    docs: list[bytes] = []
    append = docs.append
    join = b"".join
    row = 0
    try:
        for row in range(n):
            start, end = bounds[row], bounds[row + 1]
            if start == end:
                # NULL (or absent) rows gather no bytes; a stored empty value means null
                append(b"null" if valid[row] else b"")
                continue
            out: list[bytes] = []
            t = raw[start]
            if t <= 0x03:
                _container(raw, start + 1, end - start - 1, t, 1, out, end - start)
            else:
                _scalar(t, raw, start + 1, end - start - 1, out)
            append(join(out))
    except _Bad as e:
        raise col.error(f"malformed JSON value: {e}", row) from None
    out_offsets = np.fromiter(_accumulate(map(len, docs), initial=0), np.int64, n + 1)
    data = np.frombuffer(join(docs), np.uint8)
    if not utf8.valid_values(out_offsets, data):
        for i, d in enumerate(docs):
            try:
                d.decode("utf-8")
            except UnicodeDecodeError:
                raise col.error("malformed JSON value: a string or key is not valid utf8mb4", i) from None
        # not reached: the check and Python's codec agree (tests/decode/test_utf8.py)
    return binary_like(pa.string(), n, out_offsets, data, col.valid)
