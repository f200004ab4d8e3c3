"""Text in every kind of character set, written by MariaDB, decoded to what SELECT returns."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.decode.decoders import ColumnData, DecodeOptions, decode_column
from vecbinlog.errors import MalformedEventError
from vecbinlog.tables.table_map import ColumnSpec

# charset -> text the charset can hold (the server converts it from utf8mb4 on INSERT)
SAMPLES = {
    "utf8mb4": "naïve 😀 ünïcödé",
    "utf8mb3": "naïve ünïcödé ☃",
    "ascii": "plain ascii ~",
    "latin1": "café € ‰ ÿ",
    "latin2": "Zażółć gęślą jaźń",
    "cp1250": "Příliš žluťoučký kůň",
    "cp1251": "Съешь же ещё этих булок",
    "koi8r": "Съешь же ещё",
    "greek": "Ξεσκεπάζω",
    "hebrew": "עברית",
    "cp866": "Привет",
    "gbk": "中文字符",
    "big5": "中文字",
    "sjis": "日本語テキスト",
    "ujis": "日本語",
    "euckr": "한국어",
    "ucs2": "ucs2 ünï",
    "utf16": "utf16 😀",
    "utf16le": "utf16le 😀",
    "utf32": "utf32 😀",
}


@pytest.mark.mariadb
def test_every_charset_equals_select(mariadb_server):
    s = mariadb_server
    cols = ", ".join(f"c_{cs} VARCHAR(40) CHARACTER SET {cs}" for cs in SAMPLES)
    texts = ", ".join("'" + t + "'" for t in SAMPLES.values())
    path = s.capture_binlog("DROP DATABASE IF EXISTS cs", "CREATE DATABASE cs", "USE cs",
                            f"CREATE TABLE t (id INT PRIMARY KEY, {cols}, tx TEXT CHARACTER SET gbk)",
                            f"INSERT INTO t VALUES (1, {texts}, '长文本')",
                            "INSERT INTO t (id) VALUES (2)")
    t = vecbinlog.read_table(path, "cs.t")
    (first, second) = s.query("SELECT * FROM cs.t ORDER BY id")
    rows = t.to_pylist()
    for k, cs in enumerate(SAMPLES):
        name = f"c_{cs}"
        assert t.schema.field(name).type == pa.string(), cs
        assert t.schema.field(name).metadata[b"mysql_charset"] == cs.encode()
        assert rows[0][name] == first[k + 1] == SAMPLES[cs], cs
        assert rows[1][name] is None
    assert rows[0]["tx"] == "长文本"


def _column(raw: list[bytes | None], charset: str) -> ColumnData:
    buf = np.frombuffer(b"".join(v or b"" for v in raw) + b"\0", np.uint8)
    lengths = np.array([len(v or b"") for v in raw], np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    spec = ColumnSpec(index=0, type=15, meta=100, nullable=True)
    return ColumnData(spec=spec, name="c", buf=buf, offsets=offsets, lengths=lengths, width=0,
                      valid=np.array([v is not None for v in raw]), options=DecodeOptions(charsets={"c": charset}))


@pytest.mark.parametrize("charset,raw", [
    ("utf8mb4", [b"ok", b"\xff\xfe bad", None]),
    ("ascii", [b"ok", b"caf\xe9", None]),
    ("gbk", [b"ok", b"\x81", None]),  # a lone lead byte
])
def test_invalid_bytes_fall_back_to_binary_unchanged(charset, raw):
    col = _column(raw, charset)
    arr = decode_column(col)
    assert arr.type == pa.binary() and arr.to_pylist() == raw
    assert len(col.warnings) == 1 and "returned as binary" in col.warnings[0]


def test_value_outside_the_file_is_a_located_error():
    """The value copy checks each value against the file again (the row walk has done so
    already): one running past the end is a MalformedEventError at its offset, not a read."""
    col = _column([b"ok", b"abc", None], "utf8mb4")
    col.path = "some.bin"
    col.lengths[1] = len(col.buf)  # 2 + len(buf) > len(buf)
    with pytest.raises(MalformedEventError) as err:
        decode_column(col)
    assert err.value.path == "some.bin" and err.value.offset == 2
    assert "column 'c'" in str(err.value) and "not inside" in str(err.value)


def test_values_copied_into_arrows_pool(monkeypatch):
    """Large value copies go to Arrow's memory pool (:func:`vecbinlog.arrowbuild.pooled`): the
    same values, whichever allocator holds them."""
    from vecbinlog import arrowbuild
    raw = [b"ok", None, "é".encode() * 3000, b"", b"x" * 5]
    monkeypatch.setattr(arrowbuild, "POOLED_BYTES", 1)
    used = arrowbuild.pa.total_allocated_bytes()
    arr = decode_column(_column(raw, "utf8mb4"))
    assert arrowbuild.pa.total_allocated_bytes() >= used + 6005  # the values' bytes, in the pool
    assert arr.type == pa.string() and arr.to_pylist() == [v if v is None else v.decode() for v in raw]


def test_single_byte_transcoding_matches_python_codecs():
    every = bytes(range(0x20, 0x7F)) + bytes(range(0xA0, 0x100))
    for charset, codec in (("latin2", "iso8859_2"), ("cp1251", "cp1251"), ("koi8r", "koi8_r")):
        arr = decode_column(_column([every, b"", None], charset))
        assert arr.to_pylist() == [every.decode(codec), "", None], charset


@pytest.mark.mariadb
@pytest.mark.parametrize("threshold", [100, 1])  # 1: every value compressed; 100: short ones stored plain
def test_mariadb_compressed_columns(mariadb_server, mariadb_globals, threshold):
    s = mariadb_server
    mariadb_globals(column_compression_threshold=str(threshold))
    long_text = "Съешь же ещё этих мягких французских булок " * 20
    path = s.capture_binlog(
        "DROP DATABASE IF EXISTS cmp", "CREATE DATABASE cmp", "USE cmp",
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(500) CHARACTER SET utf8mb4 COMPRESSED,"
        " l VARCHAR(20) CHARACTER SET latin1, t TEXT CHARACTER SET cp1251 COMPRESSED, b BLOB COMPRESSED, y YEAR)",
        f"INSERT INTO t VALUES (1, '{'😀 abc ' * 40}', 'café', '{long_text}', REPEAT('xy', 300), 2024),"
        " (2, 'x', '', '', '', 0), (3, NULL, NULL, NULL, NULL, NULL), (4, '', 'é', 'Б', X'00ff', 1901)",
        "UPDATE t SET v = 'changed' WHERE id = 1",
    )
    t = vecbinlog.read_table(path, "cmp.t")
    assert t.schema.field("v").metadata[b"mysql_type"] == b"VARCHAR_COMPRESSED"
    assert [t.schema.field(c).type for c in ("v", "l", "t", "b", "y")] == [
        pa.string(), pa.string(), pa.string(), pa.binary(), pa.uint16()]
    state = {}
    for r in t.to_pylist():
        if r["_change_type"] in ("insert", "update_postimage"):
            state[r["id"]] = tuple(r[c] for c in ("id", "v", "l", "t", "b", "y"))
    assert [state[k] for k in sorted(state)] == [tuple(r) for r in s.query("SELECT * FROM cmp.t ORDER BY id")]


@pytest.mark.parametrize("codec", sorted(__import__("vecbinlog.decode.decoders.strings", fromlist=["x"]).NUL_SEPARABLE_CODECS))
def test_multi_byte_values_decoded_at_once_equal_each_decoded(codec):
    """Values of an ASCII-compatible multi-byte charset decoded in one call (each followed by a
    NUL) give what Python's codec gives each value alone, empty and null values included; one
    value cut inside a character makes the column not valid (None), as value by value."""
    from vecbinlog.decode.decoders.strings import _decode_joined, _decode_with_codec

    rng = np.random.default_rng(7)
    alphabet = {"shift_jis": "あいう漢字ｱｲ", "cp932": "あいう漢字①", "euc_jp": "日本語テスト", "gbk": "中文字符",
                "gb2312": "中文字", "gb18030": "中文€😀", "big5": "繁體中文", "cp949": "한국어"}[codec] + "ab c"
    values = ["".join(rng.choice(list(alphabet), int(rng.integers(0, 9)))) if rng.random() > 0.1 else None
              for _ in range(500)]
    parts = [(v or "").encode(codec) for v in values]
    offsets = np.zeros(len(parts) + 1, np.int64)
    offsets[1:] = np.cumsum([len(p) for p in parts])
    data = np.frombuffer(b"".join(parts), np.uint8)
    valid = np.array([v is not None for v in values])
    got = _decode_joined(len(values), offsets, data, valid, codec)
    assert got is not None and got.to_pylist() == [p.decode(codec) if v is not None else None
                                                   for p, v in zip(parts, values)]
    def cut_inside(p: bytes) -> bool:
        try:
            p[:-1].decode(codec)
        except UnicodeDecodeError:
            return True
        return False

    cut = next(k for k, p in enumerate(parts) if p and cut_inside(p))
    parts[cut] = parts[cut][:-1]  # the last character's last byte gone
    offsets[1:] = np.cumsum([len(p) for p in parts])
    data = np.frombuffer(b"".join(parts), np.uint8)
    assert _decode_with_codec(len(values), offsets, data, valid, codec) is None


@pytest.mark.parametrize("codec", sorted(__import__("vecbinlog.decode.decoders.strings", fromlist=["x"]).DBCS_CODECS))
def test_double_byte_text_by_table_is_the_codecs(codec):
    """The compiled transcoding of a double-byte charset (tables read off Python's codec) gives
    what the codec gives each value, on text of every character the codec has and on random
    bytes: equal where the codec decodes every value, else None (the codec then says which)."""
    from vecbinlog.decode.decoders.strings import _dbcs_tables, _decode_by_table

    single, single_len, pair, pair_len = _dbcs_tables(codec)
    chars = [int(single[b]).to_bytes(8, "little")[:n].decode() for b, n in enumerate(single_len.tolist()) if n] + \
        [int(pair[k]).to_bytes(8, "little")[:n].decode() for k, n in enumerate(pair_len.tolist()) if n]
    rng = np.random.default_rng(11)

    def check(parts: list[bytes]) -> bool:
        offsets = np.zeros(len(parts) + 1, np.int64)
        offsets[1:] = np.cumsum([len(p) for p in parts])
        data = np.frombuffer(b"".join(parts), np.uint8)
        got = _decode_by_table(len(parts), offsets, data, np.ones(len(parts), bool), codec)
        try:
            expected = [p.decode(codec) for p in parts]
        except UnicodeDecodeError:
            expected = None
        if expected is not None and not (codec == "euc_jp" and 0x8F in data):
            assert got is not None and got.to_pylist() == expected
        elif got is not None:
            assert got.to_pylist() == expected
        return got is not None

    every = "".join(chars)
    assert check([every[k:k + 97].encode(codec) for k in range(0, len(every), 97)])
    outcomes = [check([bytes(rng.integers(0, 256, int(rng.integers(0, 6)), dtype=np.uint8)) for _ in range(4)])
                for _ in range(300)]
    assert any(outcomes) and not all(outcomes)  # both kinds of random bytes were met


@pytest.mark.parametrize("charset,codec", [("ucs2", "utf-16-be"), ("utf16", "utf-16-be"), ("utf16le", "utf-16-le"),
                                           ("utf32", "utf-32-be")])
def test_utf16_and_utf32_text_in_one_pass_is_the_codecs(charset, codec):
    """The compiled UTF-16/UTF-32 transcoding gives what Python's codec gives each value: runs
    of ASCII (copied 4 characters a word) broken at every place, characters of 2, 3 and 4
    UTF-8 bytes, surrogate pairs, BOMs kept; a value cut inside a unit, a lone surrogate or a
    UTF-32 value past U+10FFFF makes the column binary, its bytes unchanged, as the codec
    refuses them."""
    from vecbinlog.decode.decoders.strings import _decode_wide

    rng = np.random.default_rng(5)
    alphabet = list("abcdefgh ") * 6 + ["\x7f", "\x80", "é", "\u07ff", "\u0800", "日", "\ufeff", "\uffff", "😀",
                                       "\U0010ffff"]
    values = ["".join(rng.choice(alphabet, int(rng.integers(0, 40)))) if rng.random() > 0.1 else None
              for _ in range(2000)]
    raw = [None if v is None else v.encode(codec) for v in values]
    arr = decode_column(_column(raw, charset))
    assert arr.type == pa.string() and arr.to_pylist() == values

    unit = 4 if "32" in codec else 2
    lone = ("\ud800".encode(codec, "surrogatepass") if unit == 2 else (0x110000).to_bytes(4, "big"))
    for bad in (b"ab"[: unit - 1] if unit == 4 else b"a", "abcd".encode(codec) + lone + "ef".encode(codec)):
        cut = raw[:10] + [bad]
        arr = decode_column(_column(cut, charset))
        assert arr.type == pa.binary() and arr.to_pylist() == cut
        with pytest.raises(UnicodeDecodeError):
            bad.decode(codec)
        parts = [p or b"" for p in cut]
        offsets = np.zeros(len(parts) + 1, np.int64)
        offsets[1:] = np.cumsum([len(p) for p in parts])
        assert _decode_wide(len(parts), offsets, np.frombuffer(b"".join(parts), np.uint8),
                            np.ones(len(parts), bool), codec) is None


@pytest.mark.parametrize("charset,codec", [("latin2", "iso8859_2"), ("cp1251", "cp1251"), ("koi8r", "koi8_r")])
def test_single_byte_runs_of_ascii_are_the_codecs(charset, codec):
    """Single-byte text copies runs of ASCII a word at a time: one non-ASCII character at each
    place of a word, values of every length around 8 and 16, and an unmapped byte inside a run,
    against Python's codec."""
    mapped = [b for b in range(0x80, 0x100) if not _unmapped(bytes([b]), codec)]
    raw: list[bytes | None] = []
    for n in range(0, 25):
        for at in range(n):
            v = bytearray(b"abcdefghijklmnopqrstuvwxyz"[:n])
            v[at] = mapped[(n * 7 + at) % len(mapped)]
            raw.append(bytes(v))
        raw.append(b"x" * n)
    raw.append(None)
    arr = decode_column(_column(raw, charset))
    assert arr.to_pylist() == [None if v is None else v.decode(codec) for v in raw]
    unmapped = [b for b in range(0x80, 0x100) if _unmapped(bytes([b]), codec)]
    if unmapped:
        bad = raw[:5] + [b"abcdefghij" + bytes([unmapped[0]]) + b"klmnopqrstu"]
        arr = decode_column(_column(bad, charset))
        assert arr.type == pa.binary() and arr.to_pylist() == bad


def _unmapped(b: bytes, codec: str) -> bool:
    try:
        b.decode(codec)
    except UnicodeDecodeError:
        return True
    return False


@pytest.mark.parametrize("codec", ["utf-16-be", "utf-32-be"])
def test_wide_text_spans_outside_the_data_are_refused(codec):
    """The UTF-16/32 pass checks every value's span against the bytes before its loop: a span
    past their end is a MalformedEventError, not a read (the kernel reads unchecked after)."""
    from vecbinlog.decode.decoders.strings import _decode_wide

    data = np.frombuffer("ab".encode(codec), np.uint8)
    offsets = np.array([0, len(data), len(data) + 8], np.int64)
    with pytest.raises(MalformedEventError, match="not all inside"):
        _decode_wide(2, offsets, data, np.ones(2, bool), codec)


@pytest.mark.parametrize("width", [4, 16])
def test_binary_char_values_padded_back(width):
    """BINARY(n) values the binlog stored without their trailing 0x00 bytes (Field_string::pack)
    come back n bytes long, as SELECT returns them: stripped ones padded, whole ones as they
    are, empty ones all zeros, nulls null; a column of whole values only is returned as read."""
    rng = np.random.default_rng(3)
    full = [bytes(rng.integers(1, 256, width, dtype=np.uint8)) for _ in range(40)]
    stripped = [v[: int(rng.integers(0, width))] for v in full[:20]]
    raw: list[bytes | None] = [v for pair in zip(full[20:], stripped) for v in pair] + [None, b"", None]
    spec = ColumnSpec(index=0, type=254, meta=(0xFE << 8) | width, nullable=True, collation=63)

    def column(values: list[bytes | None]) -> ColumnData:
        col = _column(values, "binary")
        col.spec = spec
        return col

    arr = decode_column(column(raw))
    assert arr.type == pa.binary()
    assert arr.to_pylist() == [None if v is None else v + bytes(width - len(v)) for v in raw]
    whole: list[bytes | None] = full[:5] + [None] + full[5:10]
    assert decode_column(column(whole)).to_pylist() == whole
    with pytest.raises(MalformedEventError, match=f"BINARY\\({width}\\) value of {width + 1} bytes"):
        decode_column(column([b"x" * (width + 1)]))
