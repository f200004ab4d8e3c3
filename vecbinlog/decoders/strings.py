"""Character and byte-string columns: CHAR, VARCHAR, VAR_STRING, TEXT/BLOB.

The column's collation (DEFAULT_CHARSET / COLUMN_CHARSET metadata, or the user's
``charsets=`` option) decides the Arrow type:

* utf8mb3 / utf8mb4 / ascii: ``string``, the stored bytes as they are, after validation;
* latin1 (which MySQL means as Windows-1252): ``string``, transcoded with a vectorised
  256-entry lookup table;
* other character sets: ``string``, through Python's codec for the charset, value by value;
* the binary collation (63), or no known charset (MINIMAL/NO_LOG binlogs without a
  ``charsets=`` override): ``binary``.

Bytes that are invalid in the declared charset never raise and never lose data: the whole
column comes back as ``binary`` and a warning names it. CHAR values are as the binlog stores
them: MySQL strips the trailing spaces of CHAR columns (Field_string::pack), so ``'ab  '``
in a CHAR(4) comes back as ``'ab'``, exactly as ``SELECT`` shows it in the default sql_mode.
"""

from __future__ import annotations

import codecs

import numpy as np
import pyarrow as pa

from ..collations import MYSQL_LATIN1_DECODE_TABLE, charset_for, codec_for
from ..constants import BINARY_COLLATION
from ..table_map import ColumnSpec
from .common import ColumnData, DecodeOptions, binary_like, gather_var

UTF8_CHARSETS = frozenset({"utf8mb4", "utf8mb3", "utf8"})


def column_charset(spec: ColumnSpec, name: str, options: DecodeOptions) -> str | None:
    """The MySQL charset name of a column, or None when nothing says it."""
    for key in (name, f"@{spec.index + 1}"):
        if key in options.charsets:
            return options.charsets[key]
    if spec.collation is None:
        return None
    if spec.collation == BINARY_COLLATION:
        return "binary"
    return charset_for(spec.collation, options.flavor)


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    cs = column_charset(spec, name, options)
    if cs is None or cs == "binary":
        return pa.binary()
    return pa.string()


def _latin1_tables() -> tuple[np.ndarray, np.ndarray]:
    enc = [ch.encode("utf-8") for ch in MYSQL_LATIN1_DECODE_TABLE]
    lens = np.array([len(e) for e in enc], np.int64)
    table = np.zeros((256, 3), np.uint8)
    for i, e in enumerate(enc):
        table[i, : len(e)] = np.frombuffer(e, np.uint8)
    return lens, table


_LATIN1_LEN, _LATIN1_UTF8 = _latin1_tables()


def transcode_latin1(offsets: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MySQL latin1 bytes -> UTF-8, whole column at once."""
    per_byte = _LATIN1_LEN[data]
    cum = np.zeros(len(data) + 1, np.int64)
    np.cumsum(per_byte, out=cum[1:])
    new_offsets = cum[offsets]
    wide = _LATIN1_UTF8[data]  # (n, 3)
    keep = np.arange(3) < per_byte[:, None]
    return new_offsets, wide[keep]


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    offsets, data = gather_var(col.buf, col.offsets, col.lengths, col.valid)
    cs = column_charset(col.spec, col.name, col.options)
    if cs is None or cs == "binary":
        return binary_like(pa.binary(), n, offsets, data, col.valid)
    if cs == "latin1":
        offsets, data = transcode_latin1(offsets, data)
    elif cs == "ascii":
        if data.size and int(data.max()) > 0x7F:
            return _fallback(col, offsets, data, "bytes above 0x7f in an ascii column")
    elif cs not in UTF8_CHARSETS:
        codec = codec_for(cs)
        if codec is None:
            return _fallback(col, offsets, data, f"no Python codec for charset {cs}")
        return _decode_with_codec(col, offsets, data, codec, cs)
    arr = binary_like(pa.string(), n, offsets, data, col.valid)
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        return _fallback(col, offsets, data, f"bytes that are not valid {cs}")
    return arr


def _decode_with_codec(col: ColumnData, offsets: np.ndarray, data: np.ndarray, codec: str, cs: str) -> pa.Array:
    # Per-value work: Python's codecs have no vectorised entry point for these charsets.
    decoder = codecs.getdecoder(codec)
    raw = data.tobytes()
    bounds = offsets.tolist()
    valid = col.valid.tolist()
    out: list[str | None] = []
    try:
        for i in range(len(col)):
            out.append(decoder(raw[bounds[i] : bounds[i + 1]])[0] if valid[i] else None)
    except UnicodeDecodeError:
        return _fallback(col, offsets, data, f"bytes that are not valid {cs}")
    return pa.array(out, pa.string())


def _fallback(col: ColumnData, offsets: np.ndarray, data: np.ndarray, why: str) -> pa.Array:
    col.warnings.append(f"column {col.name!r} holds {why}; it is returned as binary, bytes unchanged")
    return binary_like(pa.binary(), len(col), offsets, data, col.valid)
