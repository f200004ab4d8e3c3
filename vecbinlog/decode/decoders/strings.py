"""Character and byte-string columns: CHAR, VARCHAR, VAR_STRING, TEXT/BLOB.

The column's collation (DEFAULT_CHARSET / COLUMN_CHARSET metadata, or the user's
``charsets=`` option) decides the Arrow type:

* utf8mb3 / utf8mb4 / ascii: ``string``, the stored bytes as they are, after validation;
* single-byte charsets (latin1, which MySQL means as Windows-1252 plus 5 C1 controls, and
  latin2, cp1250, koi8r...): ``string``, transcoded with the server's own 256-entry table,
  vectorised;
* double-byte charsets (sjis, gbk, big5...), ucs2/utf16/utf16le/utf32: ``string``, in one
  compiled pass each (tables read off Python's codec; UTF-16/32 as its strict codec reads them);
* other character sets: ``string``, through Python's codec for the charset (all values in one
  call where the charset allows, else value by value);
* the binary collation (63), or no known charset (MINIMAL/NO_LOG binlogs without a
  ``charsets=`` override): ``binary``.

Bytes that are invalid in the declared charset never raise and never lose data: the batch's
column comes back as ``binary`` (its bytes) and the read's one warning counts such values. A
read of whole tables (``read_table``) decodes text of transcoded charsets as bytes instead
(``DecodeOptions.deferred_text``), and :meth:`vecbinlog.decode.tableplan.TablePlan.settle_text`
transcodes the column in every batch, or in none. CHAR values are as the binlog stores
them: MySQL strips the trailing spaces of CHAR columns (Field_string::pack), so ``'ab  '``
in a CHAR(4) comes back as ``'ab'``, exactly as ``SELECT`` shows it in the default sql_mode.
BINARY(n) columns (CHAR with the binary collation) lose their trailing 0x00 bytes the same
way; they are padded back to n bytes, as ``SELECT`` returns them. (Without charset metadata
a BINARY(n) cannot be told from a CHAR(n) and is returned as logged.) MariaDB's INET6, INET4
and UUID columns are logged as BINARY(16)/BINARY(4): they come back as those bytes (UUID in
MariaDB's storage order).
"""

from __future__ import annotations

import codecs
import itertools
from functools import lru_cache

import numpy as np
import pyarrow as pa

from ...arrowbuild import strings
from ...collations import UNMAPPED, charset_for, codec_for, decode_table_for
from ...constants import BINARY_COLLATION
from ...constants import ColumnType as T
from ...jit import check_spans, kernel, load_word, store_word, trailing_zeros
from ...tables.table_map import ColumnSpec
from . import utf8
from .common import ColumnData, CountedNote, DecodeOptions, binary_like, gather_var

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


#: MySQL's single-byte character sets: decoded with a 256-entry table, whole column at once.
SINGLE_BYTE_CHARSETS = frozenset({
    "latin1", "latin2", "latin5", "latin7", "cp1250", "cp1251", "cp1256", "cp1257", "cp850", "cp852",
    "cp866", "koi8r", "koi8u", "greek", "hebrew", "macce", "macroman", "armscii8", "geostd8", "keybcs2",
    "swe7", "dec8", "hp8", "tis620",
})


@lru_cache(maxsize=None)
def single_byte_chars(charset: str) -> str | None:
    """The 256 characters of a single-byte charset (UNMAPPED where it has none), else None (kept:
    each text column asks, and a codec's 256 decodes took ~0.3 ms)."""
    if charset not in SINGLE_BYTE_CHARSETS:
        return None
    table = decode_table_for(charset)
    if table is not None:
        return table
    codec = codec_for(charset)
    if codec is None:
        return None
    return "".join(bytes([b]).decode(codec, "replace").replace("\ufffd", UNMAPPED) for b in range(256))


@lru_cache(maxsize=None)
def _byte_table(charset: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a single-byte charset: UTF-8 length (256,), UTF-8 bytes (256, 3), unmapped mask (256,)."""
    chars = single_byte_chars(charset)
    assert chars is not None  # asked for single-byte charsets only
    enc = [ch.encode("utf-8") for ch in chars]
    lens = np.array([len(e) for e in enc], np.int64)
    table = np.zeros((256, 3), np.uint8)
    for i, e in enumerate(enc):
        table[i, : len(e)] = np.frombuffer(e, np.uint8)
    return lens, table, np.array([ch == UNMAPPED for ch in chars], bool)


def transcode_single_byte(offsets: np.ndarray, data: np.ndarray, charset: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A single-byte charset -> UTF-8 with a 256-entry table, whole column at once.

    Returns None when a byte has no character in the charset. Bytes below 0x80 that map to
    themselves (ASCII-compatible charsets) need no change, which is the common case. Else one
    compiled pass over the bytes, each one's UTF-8 written as one word: the NumPy form (bytes
    inserted after each non-ASCII one, then written) took 2-14x as long on text of
    latin1/cp1251/greek columns (bench/random_shapes.py cases).
    """
    lens, table, _ = _byte_table(charset)
    identity_ascii = bool((lens[:128] == 1).all() and (table[:128, 0] == np.arange(128)).all())
    if identity_ascii and (not len(data) or int(data.max()) < 0x80):
        return offsets, data
    offsets = np.ascontiguousarray(offsets, np.int64)
    check_spans(len(data), offsets[:-1], offsets[1:], "text transcoded")
    out = np.empty(3 * len(data) + 8, np.uint8)  # (pages not written cost no memory)
    new_offsets = np.empty(len(offsets), np.int64)
    total = _single_byte_utf8(data, offsets, _byte_words(charset), identity_ascii, new_offsets, out)
    if total < 0:
        return None
    return new_offsets, out[:total]


#: a table word's top byte: how many UTF-8 bytes its low bytes hold (0: no character)
_LEN_SHIFT = np.uint64(56)


@lru_cache(maxsize=None)
def _byte_words(charset: str) -> np.ndarray:
    """The UTF-8 bytes of each byte of a single-byte charset, little-endian in a uint64, their
    count in its top byte (0: the byte has no character)."""
    lens, table, unmapped = _byte_table(charset)
    words = (table[:, 0].astype(np.uint64) | (table[:, 1].astype(np.uint64) << np.uint64(8))
             | (table[:, 2].astype(np.uint64) << np.uint64(16)))
    return words | (np.where(unmapped, 0, lens).astype(np.uint64) << _LEN_SHIFT)


#: the top bit of each byte of a word: a word of 8 ASCII bytes has none of them set
_HIGH_BITS = np.uint64(0x8080808080808080)


@kernel(inline="always")
def _ascii_run(data, i, out, q):  # pragma: no cover - compiled
    """How many of the 8 bytes from ``data[i]`` (the caller checked them inside its value) are
    ASCII before the first that is not, written to ``out`` at ``q`` (one word; what follows
    them is written over next)."""
    w = load_word(data, i)
    store_word(out, q, w)
    high = w & _HIGH_BITS
    return 8 if high == 0 else np.int64(trailing_zeros(high) >> 3)


@kernel
def _single_byte_utf8(data, offsets, words, ascii_same, out_offsets, out):  # pragma: no cover - compiled
    """Write the UTF-8 form of ``data`` (bytes of a single-byte charset) into ``out`` (room for
    3 bytes a byte, and 8 more: each byte's form is written as one 8-byte word, the next over
    what it did not use) and each value's new offsets (``offsets``, checked inside ``data``,
    from 0); returns the bytes written, or -1 when a byte has no character (``words``:
    :func:`_byte_words`). ``ascii_same``: bytes below 0x80 are themselves, so a run of them is
    copied 8 bytes a word (mostly ASCII text took a third of the time); after a byte that is
    not ASCII, the next 8 bytes go one by one (text with none: 3% slower, not 30%)."""
    q = np.int64(0)
    out_offsets[0] = 0
    for v in range(len(offsets) - 1):
        i, end = offsets[v], offsets[v + 1]
        ascii_at = i if ascii_same else end  # where a run of ASCII is looked for next
        while i < end:
            if i >= ascii_at and i + 8 <= end:
                k = _ascii_run(data, i, out, q)
                i += k
                q += k
                if k == 8:
                    continue
                ascii_at = i + 8
            w = words[data[i]]
            n = np.int64(w >> _LEN_SHIFT)
            if n == 0:
                return -1
            store_word(out, q, w)
            q += n
            i += 1
        out_offsets[v + 1] = q
    return q


def pad_binary_char(col: ColumnData) -> tuple[np.ndarray, np.ndarray]:
    """BINARY(n) values with the trailing 0x00 bytes the binlog dropped put back.

    Field_string::pack strips trailing pad characters, and the binary charset pads with
    0x00, so ``BINARY(4)`` 'ab\0\0' is logged as 'ab'; SELECT returns all 4 bytes.
    """
    n = len(col)
    width = col.spec.max_length
    assert col.lengths is not None  # a length-prefixed column's
    lens = np.where(col.valid, col.lengths, 0)
    if (lens > width).any():
        i = int(np.flatnonzero(lens > width)[0])
        raise col.error(f"BINARY({width}) value of {int(lens[i])} bytes", i)
    src_offsets, src = gather_var(col)
    present = lens[col.valid]
    if bool((present == width).all()):  # (no value lost a 0x00: they are as they are)
        return src_offsets, src
    out_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.where(col.valid, width, 0), out=out_offsets[1:])
    # a row of ``width`` bytes per value, its first bytes the value's: the values, one after
    # the other, fill the rows' leading bytes in row-major order (3x the per-byte index form)
    rows = np.zeros((len(present), width), np.uint8)
    rows[np.arange(width) < present[:, None]] = src
    return out_offsets, rows.reshape(-1)


def transcoded(charset: str | None) -> bool:
    """Whether text of ``charset`` is transcoded to UTF-8 (its Arrow string no longer holds the
    column's own bytes): every charset but the UTF-8 ones, ascii and binary (None: unknown)."""
    return charset is not None and charset not in UTF8_CHARSETS and charset not in ("ascii", "binary")


def decode(col: ColumnData) -> pa.Array:
    n = len(col)
    cs = column_charset(col.spec, col.name, col.options)
    if cs == "binary" and col.spec.real_type == T.MYSQL_TYPE_STRING:
        offsets, data = pad_binary_char(col)
        return binary_like(pa.binary(), n, offsets, data, col.valid)
    offsets, data = gather_var(col)
    if cs is None or cs == "binary" or (col.options.deferred_text and transcoded(cs)):
        return binary_like(pa.binary(), n, offsets, data, col.valid)  # deferred: TablePlan transcodes
    text = text_array(n, offsets, data, col.valid, cs)
    if text is None:
        bad = invalid_values(offsets, data, col.valid, cs)
        col.warnings.append(CountedNote(f"column {{name!r}} ({cs}) holds {{n}} value(s) {_why_invalid(cs)}: "
                                        "it is returned as binary, bytes unchanged (by read_table in every row, by iter_batches in the "
                                        "batches that hold them)", col.name, bad))
        return binary_like(pa.binary(), n, offsets, data, col.valid)
    return text


def text_array(n: int, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray, cs: str) -> pa.Array | None:
    """The ``n`` values (``offsets`` from 0 into ``data``, null where not ``valid``) of charset
    ``cs`` as a string array, or None when a value's bytes are not valid in ``cs`` (or Python
    has no codec for it): then only their bytes hold them."""
    if single_byte_chars(cs) is not None:
        out = transcode_single_byte(offsets, data, cs)
        if out is None:
            return None
        offsets, data = out
    elif cs == "ascii":
        if data.size and int(data.max()) > 0x7F:
            return None
    elif cs not in UTF8_CHARSETS:
        codec = codec_for(cs)
        return None if codec is None else _decode_with_codec(n, offsets, data, valid, codec)
    if not utf8.valid_values(offsets, data):
        return None
    return binary_like(pa.string(), n, offsets, data, valid)


def invalid_values(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray, cs: str) -> int:
    """How many values (not null) hold bytes that are not valid in charset ``cs`` (every one
    when Python has no codec for it). Value by value: for a column that :func:`text_array`
    refused, to say how much of it."""
    if single_byte_chars(cs) is not None or cs == "ascii":
        bad = _byte_table(cs)[2][data] if cs != "ascii" else data > 0x7F
        before = np.zeros(len(bad) + 1, np.int64)
        np.cumsum(bad, out=before[1:])
        return int(np.count_nonzero(valid & (before[offsets[1:]] > before[offsets[:-1]])))
    codec = "utf-8" if cs in UTF8_CHARSETS else codec_for(cs)
    if codec is None:
        return int(np.count_nonzero(valid))
    decoder, raw, bounds = codecs.getdecoder(codec), data.tobytes(), offsets.tolist()
    count = 0
    for i in np.flatnonzero(valid).tolist():
        try:
            decoder(raw[bounds[i] : bounds[i + 1]])
        except UnicodeDecodeError:
            count += 1
    return count


def _why_invalid(cs: str) -> str:
    """What is wrong with a value of charset ``cs`` that :func:`text_array` refused."""
    if single_byte_chars(cs) is not None:
        return f"with bytes that have no character in {cs}"
    if cs not in UTF8_CHARSETS and cs != "ascii" and codec_for(cs) is None:
        return f"of charset {cs}, which Python has no codec for"
    return f"whose bytes are not valid {cs}"


#: codecs of ASCII-compatible multi-byte charsets in which a 0x00 byte is always the character
#: NUL, never a byte of a multi-byte character (their trail bytes are 0x30 and above), and that
#: keep no state from one character to the next: values joined with a NUL after each decode
#: to the values' texts joined with a NUL, and fail to decode exactly when a value does
NUL_SEPARABLE_CODECS = frozenset({"big5", "gb2312", "gbk", "gb18030", "cp949", "cp932", "shift_jis", "euc_jp"})


def _decode_joined(n: int, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray, codec: str) -> pa.Array | None:
    """:func:`_decode_with_codec` in one call of the codec over all the values (of a codec of
    :data:`NUL_SEPARABLE_CODECS`, whose data hold no 0x00): each value followed by a NUL,
    decoded at once, encoded as UTF-8, and cut again at the NULs (the only ones there are).
    None when a value is not valid (or anything is not as it must be: the caller goes value by
    value then)."""
    joined = np.insert(data, offsets[1:], 0)  # each value, then a NUL
    try:
        text = joined.tobytes().decode(codec)
    except UnicodeDecodeError:
        return None
    out = np.frombuffer(text.encode("utf-8"), np.uint8)
    nul = np.flatnonzero(out == 0)
    if len(nul) != n:  # (a codec that made a NUL of something else: not one of these)
        return None
    utf8_offsets = np.zeros(n + 1, np.int64)
    utf8_offsets[1:] = nul - np.arange(n)  # each value's end, less the NULs before it
    return binary_like(pa.string(), n, utf8_offsets, out[out != 0], valid)


#: the double-byte codecs transcoded by table (:func:`_dbcs_tables`): a byte is a character, or
#: the lead byte of a pair, whatever comes before it
DBCS_CODECS = frozenset({"shift_jis", "cp932", "gbk", "gb2312", "big5", "cp949", "euc_jp"})


@lru_cache(maxsize=None)
def _dbcs_tables(codec: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A double-byte codec as tables read off Python's codec itself (so that the compiled
    transcoding is the codec's, character for character): for each byte that is a character
    alone, and for each pair ``lead << 8 | trail`` that is one, its UTF-8 bytes (little-endian
    in a uint64) and their count (0: not a character; a byte: a lead byte, or none). Once per
    codec in a process: 4-14 ms, most of it the codec's import and decode (every pair in one
    call, their UTF-8 made column at once; a pair at a time in Python: 7-15 ms)."""
    single, single_len = np.zeros(256, np.uint64), np.zeros(256, np.uint8)
    pair, pair_len = np.zeros(1 << 16, np.uint64), np.zeros(1 << 16, np.uint8)
    leads = []
    for b in range(256):
        try:
            text = bytes([b]).decode(codec)
        except UnicodeDecodeError:
            leads.append(b)
            continue
        utf8 = text.encode("utf-8")
        single[b], single_len[b] = int.from_bytes(utf8, "little"), len(utf8)
    if not leads:
        return single, single_len, pair, pair_len
    # every pair of a lead byte in one decode, each followed by a newline (never a trail byte of
    # these charsets): a pair the codec refuses becomes surrogates; the pairs of a newline alone
    trails = np.array([t for t in range(256) if t != 0x0A], np.int64)
    lead = np.repeat(np.array(leads, np.int64), len(trails))
    trail = np.tile(trails, len(leads))
    seq = np.stack([lead, trail, np.full(len(lead), 0x0A)], axis=1).astype(np.uint8)
    parts = seq.tobytes().decode(codec, "surrogateescape").split("\n")[:-1]
    codes = (lead << 8 | trail).tolist()
    for b in leads:
        try:
            parts.append(bytes([b, 0x0A]).decode(codec))
            codes.append(b << 8 | 0x0A)
        except UnicodeDecodeError:
            continue
    ones = np.fromiter(map(len, parts), np.int64, len(parts)) == 1
    chars = list(itertools.compress(parts, ones))
    at = np.asarray(codes, np.int64)[ones]
    words, lens = _utf8_words(chars)
    keep = lens > 0  # (a surrogate the codec made of a byte it refused: not a character)
    pair[at[keep]], pair_len[at[keep]] = words[keep], lens[keep]
    return single, single_len, pair, pair_len


def _utf8_words(chars: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each one-character text's UTF-8 bytes as a little-endian uint64, and their count (0 for
    a surrogate, which is no character)."""
    cp = np.frombuffer("".join(chars).encode("utf-32-le", "surrogatepass"), np.uint32).astype(np.uint64)
    n = np.where(cp < 0x80, 1, np.where(cp < 0x800, 2, np.where(cp < 0x10000, 3, 4))).astype(np.uint8)
    n[(cp >= 0xD800) & (cp <= 0xDFFF)] = 0
    cont = lambda shift: np.uint64(0x80) | ((cp >> np.uint64(shift)) & np.uint64(0x3F))  # noqa: E731
    b0 = np.select([n == 1, n == 2, n == 3], [cp, np.uint64(0xC0) | (cp >> np.uint64(6)),
                                             np.uint64(0xE0) | (cp >> np.uint64(12))],
                   np.uint64(0xF0) | (cp >> np.uint64(18)))
    rest = np.select([n == 2, n == 3], [cont(0), cont(6) | cont(0) << np.uint64(8)],
                     cont(12) | cont(6) << np.uint64(8) | cont(0) << np.uint64(16))
    words = np.where(n == 1, cp, b0 | rest << np.uint64(8))
    words[n == 0] = 0
    return words, n


@kernel
def _dbcs_utf8(offsets, data, single, single_len, pair, pair_len, out_offsets, out):  # pragma: no cover - compiled
    """Write the UTF-8 form of the values ``data[offsets[v]:offsets[v + 1]]`` of a double-byte
    charset (:func:`_dbcs_tables`) into ``out`` (room for 3 bytes a byte, and 8 more: each
    character's bytes are written as one 8-byte word, the next over what it did not use) and
    their new offsets into ``out_offsets``; returns the bytes written, or -1 when a byte is
    neither a character nor a lead byte with its pair: the caller's codec then says whether the
    value is valid (a lead byte of a longer sequence: EUC-JP's 0x8F), and what it holds."""
    q = 0
    out_offsets[0] = 0
    for v in range(len(offsets) - 1):
        i, end = offsets[v], offsets[v + 1]
        while i < end:
            b = data[i]
            n = single_len[b]
            if n:
                store_word(out, q, single[b])
                i += 1
            else:
                if i + 1 >= end:
                    return -1
                k = (np.int64(b) << 8) | data[i + 1]
                n = pair_len[k]
                if n == 0:
                    return -1
                store_word(out, q, pair[k])
                i += 2
            q += n
        out_offsets[v + 1] = q
    return q


def _decode_by_table(n: int, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray, codec: str) -> pa.Array | None:
    """Values of a double-byte codec (:data:`DBCS_CODECS`) as UTF-8 text in one compiled pass
    over the bytes (Python's codec decoded 30-50 MB/s of such text: bench/random_shapes.py case
    5, a sjis VARCHAR(2000); the codec over all values at once, 40-150 MB/s; this, 300+ MB/s
    on text that mixes one- and two-byte characters at random); None when a value holds
    something the tables do not (the caller decodes by the codec then)."""
    tables = _dbcs_tables(codec)
    offsets = np.ascontiguousarray(offsets, np.int64)
    check_spans(len(data), offsets[:-1], offsets[1:], "text transcoded")
    out = np.empty(3 * len(data) + 8, np.uint8)  # (pages not written cost no memory)
    out_offsets = np.empty(n + 1, np.int64)
    total = _dbcs_utf8(offsets, data, *tables, out_offsets, out)
    if total < 0:
        return None
    return binary_like(pa.string(), n, out_offsets, out[:total], valid)


#: the codecs of MySQL's ucs2, utf16, utf16le and utf32: (bytes a code unit, big-endian)
WIDE_CODECS = {"utf-16-be": (2, True), "utf-16-le": (2, False), "utf-32-be": (4, True)}


#: the bits of 4 UTF-16 code units (a word read little-endian) that are 0 when all 4 are ASCII
_ASCII_UTF16BE, _ASCII_UTF16LE = np.uint64(0x80FF80FF80FF80FF), np.uint64(0xFF80FF80FF80FF80)


@kernel
def _wide_utf8(offsets, data, unit, big_endian, out_offsets, out):  # pragma: no cover - compiled
    """Write the UTF-8 form of the values ``data[offsets[v]:offsets[v + 1]]`` of UTF-16
    (``unit`` 2) or UTF-32 (4) into ``out`` (room for 2 bytes a byte) and their new offsets
    into ``out_offsets``; returns the bytes written, or -1 where Python's strict codec refuses
    (a value cut inside a code unit, a surrogate not in a pair, a UTF-32 code point that is a
    surrogate or above 0x10FFFF). UTF-16 text copies 4 ASCII characters at a time (a word),
    and after a character that is not, goes a unit at a time for the next 4."""
    q = 0
    out_offsets[0] = 0
    ascii_mask = _ASCII_UTF16BE if big_endian else _ASCII_UTF16LE
    for v in range(len(offsets) - 1):
        i, end = offsets[v], offsets[v + 1]
        if (end - i) % unit:
            return -1
        ascii_at = i if unit == 2 else end  # where 4 ASCII characters are looked for next
        while i < end:
            if i >= ascii_at and i + 8 <= end:
                w = load_word(data, i)
                if w & ascii_mask:
                    ascii_at = i + 8
                else:
                    if not big_endian:
                        w <<= np.uint64(8)
                    store_word(out, q, ((w >> np.uint64(8)) & np.uint64(0xFF)) | ((w >> np.uint64(16)) & np.uint64(0xFF00))
                               | ((w >> np.uint64(24)) & np.uint64(0xFF0000)) | ((w >> np.uint64(32)) & np.uint64(0xFF000000)))
                    i += 8
                    q += 4
                    continue
            if unit == 2:
                if big_endian:
                    cp = (np.int64(data[i]) << 8) | data[i + 1]
                else:
                    cp = (np.int64(data[i + 1]) << 8) | data[i]
                i += 2
                if 0xD800 <= cp <= 0xDFFF:
                    if cp >= 0xDC00 or i + 2 > end:
                        return -1
                    if big_endian:
                        low = (np.int64(data[i]) << 8) | data[i + 1]
                    else:
                        low = (np.int64(data[i + 1]) << 8) | data[i]
                    if not 0xDC00 <= low <= 0xDFFF:
                        return -1
                    i += 2
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
            else:
                cp = (np.int64(data[i]) << 24) | (np.int64(data[i + 1]) << 16) | (np.int64(data[i + 2]) << 8) | data[i + 3]
                i += 4
                if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                    return -1
            if cp < 0x80:
                out[q] = cp
                q += 1
            elif cp < 0x800:
                out[q] = 0xC0 | (cp >> 6)
                out[q + 1] = 0x80 | (cp & 0x3F)
                q += 2
            elif cp < 0x10000:
                out[q] = 0xE0 | (cp >> 12)
                out[q + 1] = 0x80 | ((cp >> 6) & 0x3F)
                out[q + 2] = 0x80 | (cp & 0x3F)
                q += 3
            else:
                out[q] = 0xF0 | (cp >> 18)
                out[q + 1] = 0x80 | ((cp >> 12) & 0x3F)
                out[q + 2] = 0x80 | ((cp >> 6) & 0x3F)
                out[q + 3] = 0x80 | (cp & 0x3F)
                q += 4
        out_offsets[v + 1] = q
    return q


def _decode_wide(n: int, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray, codec: str) -> pa.Array | None:
    """Values of a UTF-16/UTF-32 codec (:data:`WIDE_CODECS`) as UTF-8 text in one compiled pass
    (Python's codec value by value: 1.3-1.6 us a value, 24 ms of a 160 ms read of
    bench/random_shapes.py seed 20261129 case 11); None when the codec would refuse a value."""
    unit, big_endian = WIDE_CODECS[codec]
    offsets = np.ascontiguousarray(offsets, np.int64)
    check_spans(len(data), offsets[:-1], offsets[1:], "text transcoded")
    out = np.empty(2 * len(data) + 8, np.uint8)  # (pages not written cost no memory)
    out_offsets = np.empty(n + 1, np.int64)
    total = _wide_utf8(offsets, data, unit, big_endian, out_offsets, out)
    if total < 0:
        return None
    return binary_like(pa.string(), n, out_offsets, out[:total], valid)


def _decode_with_codec(n: int, offsets: np.ndarray, data: np.ndarray, valid: np.ndarray, codec: str) -> pa.Array | None:
    if codec in WIDE_CODECS and n:
        text = _decode_wide(n, offsets, data, valid, codec)
        if text is not None:
            return text
    if codec in DBCS_CODECS and n:
        text = _decode_by_table(n, offsets, data, valid, codec)
        if text is not None:
            return text
    if codec in NUL_SEPARABLE_CODECS and n and not np.any(data == 0):
        text = _decode_joined(n, offsets, data, valid, codec)
        if text is not None:
            return text
    # Per-value work: Python's codecs have no vectorised entry point for these charsets (and a
    # value not valid in one is told here, whatever the joined decode found).
    decoder = codecs.getdecoder(codec)
    raw = data.tobytes()
    bounds = offsets.tolist()
    ok = valid.tolist()
    out: list[str | None] = []
    try:
        for i in range(n):
            out.append(decoder(raw[bounds[i] : bounds[i + 1]])[0] if ok[i] else None)
    except UnicodeDecodeError:
        return None
    return strings(out)
