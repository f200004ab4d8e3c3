"""Column types whose server tests are in the slow tier (tests/decode/test_types_misc.py,
test_charsets.py), on rows events built from their documented layouts (tests/support/builder.py),
without a server: GEOMETRY (an SRID, then OGC well-known binary), MariaDB's COMPRESSED columns
(sql/field.cc's header byte, then a zlib or raw deflate stream) and a column of a type no
decoder knows (its bytes, marked undecoded)."""

from __future__ import annotations

import random
import struct
import tracemalloc
import zlib

import pyarrow as pa
import pytest

import vecbinlog

from ..support import builder as b

GEOMETRY, NULL_TYPE, LONG = 255, 6, 3
BLOB_COMPRESSED, VARCHAR_COMPRESSED = 140, 141  # MariaDB's enum_field_types
UTF8MB4 = [(2, b.packed(255))]  # DEFAULT_CHARSET optional metadata: utf8mb4_0900_ai_ci


def _read(types: list[int], meta: list[bytes], rows: list[list[bytes | None]], optional=()) -> pa.Table:
    """The table ``d.t`` of a file of one transaction: a TABLE_MAP of ``types`` (an INT id
    first), one WRITE_ROWS v2 of ``rows``; its data columns."""
    w = b.BinlogWriter()
    w.add(2, b.query_body("BEGIN", "d"))
    w.add(19, b.table_map_body(7, "d", "t", [LONG, *types], [b"", *meta], optional=optional))
    images = b"".join(b.row_image([k.to_bytes(4, "little"), *row]) for k, row in enumerate(rows))
    w.add(30, b.rows_body(7, 1 + len(types), images, extra=b""))
    w.add(16, b.xid_body(1))
    t = vecbinlog.read_table(w.bytes(), "d.t")
    return t.select([f"@{i + 2}" for i in range(len(types))])


def test_geometry_is_its_srid_and_wkb():
    """A GEOMETRY value is 4 bytes of SRID (little-endian), then the WKB (OGC Simple Features
    8.2: byte order, type, coordinates): the SRID apart, the WKB as it is."""
    point = struct.pack("<BIdd", 1, 1, 1.5, -2.0)  # POINT(1.5 -2)
    line = struct.pack("<BII4d", 1, 2, 2, 0.0, 0.0, 1.0, 1.0)  # LINESTRING(0 0, 1 1)
    rows = [[b.prefixed((4326).to_bytes(4, "little") + point, 4)], [None], [b.prefixed(bytes(4) + line, 4)]]
    t = _read([GEOMETRY], [b"\x04"], rows)
    assert t.column(0).to_pylist() == [{"srid": 4326, "wkb": point}, None, {"srid": 0, "wkb": line}]


def test_geometry_without_room_for_its_srid_is_located():
    with pytest.raises(vecbinlog.MalformedEventError, match="no room for its SRID") as err:
        _read([GEOMETRY], [b"\x04"], [[b.prefixed(b"\x01\x02", 4)]])
    assert err.value.offset is not None and err.value.event_type == "rows event"


def _zlib(text: bytes) -> bytes:
    """MariaDB's compressed value: 0x80 | n, the length in n bytes (big-endian), a zlib stream."""
    return bytes([0x81]) + len(text).to_bytes(1, "big") + zlib.compress(text)


def _raw_deflate(text: bytes) -> bytes:
    """... with bit 0x08 set: a raw deflate stream (no zlib wrapper)."""
    c = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return bytes([0x89]) + len(text).to_bytes(1, "big") + c.compress(text) + c.flush()


def test_compressed_columns_are_their_text():
    """VARCHAR COMPRESSED and TEXT COMPRESSED: a value stored as it is (header 0x00), zlib and
    raw deflate streams, an empty value: the text they hold."""
    long = "ünïcode ".encode() * 20
    rows = [[b.prefixed(b"\x00short", 2), b.prefixed(_zlib(long), 2)],
            [b.prefixed(_raw_deflate(b"raw deflate"), 2), b.prefixed(b"", 2)],
            [None, None]]
    t = _read([VARCHAR_COMPRESSED, BLOB_COMPRESSED], [(500).to_bytes(2, "little"), b"\x02"], rows, UTF8MB4)
    assert t.to_pylist() == [{"@2": "short", "@3": long.decode()}, {"@2": "raw deflate", "@3": ""},
                             {"@2": None, "@3": None}]
    assert t.schema.field("@2").metadata[b"mysql_type"] == b"VARCHAR_COMPRESSED"


@pytest.mark.parametrize("value, why", [
    (b"\x40abc", "header byte 0x40"),  # neither stored nor compressed
    (bytes([0x81, 200]) + zlib.compress(b"x" * 200), "over the column's 100"),  # longer than VARCHAR(100)
    (bytes([0x81, 5]) + zlib.compress(b"four"), "gives 4 bytes, the header says 5"),
], ids=["header", "too-long", "short-stream"])
def test_a_compressed_value_that_is_not_one_is_located(value, why):
    with pytest.raises(vecbinlog.MalformedEventError, match=why) as err:
        _read([VARCHAR_COMPRESSED], [(100).to_bytes(2, "little")], [[b.prefixed(value, 1)]], UTF8MB4)
    assert err.value.offset is not None


def test_a_type_no_decoder_knows_is_its_bytes():
    """MYSQL_TYPE_NULL (stored in 0 bytes): binary values, the field marked undecoded."""
    t = _read([NULL_TYPE], [b""], [[b""], [None]])
    assert t.column(0).to_pylist() == [b"", None]
    assert t.schema.field("@2").metadata[b"vecbinlog.undecoded"] == b"NULL"


def _random_compressed(rng: random.Random, n: int) -> tuple[list[bytes | None], list[str | None]]:
    """Values of every kind MariaDB stores (plain, zlib, raw deflate, 1-4 length bytes, empty,
    NULL), of random text; and the texts they were made of (Python's zlib compressed them)."""
    out: list[bytes | None] = []
    texts: list[str | None] = []
    for _ in range(n):
        text = "".join(rng.choice("abcdefgh é😀") for _ in range(rng.choice([0, 1, 5, 90, 400])))
        plain = text.encode()
        kind = rng.randrange(5)
        texts.append(None if kind == 0 else text)
        if kind == 0:
            out.append(None)
        elif kind == 1:
            out.append(b"\x00" + plain)
        else:
            raw = kind == 2
            c = zlib.compressobj(wbits=-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
            width = rng.randint(2, 4)
            out.append(bytes([0x80 | (0x08 if raw else 0) | width]) + len(plain).to_bytes(width, "big")
                       + c.compress(plain) + c.flush())
    return out, texts


@pytest.mark.parametrize("damage", [None, "header", "stream", "length"])
def test_compressed_values_inflated_compiled_as_by_pythons_zlib(monkeypatch, damage):
    """The compiled loop over zlib's inflate (where it can be used: here) gives each value, or
    the error of the first that is not one, as Python's zlib value by value does."""
    from vecbinlog.decode.decoders import compressed_columns

    rng = random.Random(11)
    values, texts = _random_compressed(rng, 300)
    if damage is not None:  # one value in the middle made not a valid one
        k = next(i for i in range(150, 300) if values[i] and values[i][0] & 0x80 and len(values[i]) > 8)
        v = bytearray(values[k])
        if damage == "header":
            v[0] = 0x40
        elif damage == "stream":
            v[-2] ^= 0xFF
        else:
            v[1 + (v[0] & 7) - 1] += 1  # the original length one more
        values[k] = bytes(v)
    rows = [[b.prefixed(v, 2) if v is not None else None] for v in values]

    def read() -> object:
        try:
            return _read([VARCHAR_COMPRESSED], [(2000).to_bytes(2, "little")], rows, UTF8MB4).column(0).to_pylist()
        except vecbinlog.MalformedEventError as exc:
            return (type(exc), str(exc), exc.offset)

    assert compressed_columns._compiled()
    compiled = read()
    monkeypatch.setattr(compressed_columns, "_COMPILED", False)
    assert compiled == read()
    if damage is None:
        assert compiled == texts
    else:
        assert isinstance(compiled, tuple) and "compressed value" in compiled[1]


def test_a_compressed_value_claiming_more_than_deflate_can_hold_takes_no_room_for_it():
    """A LONGBLOB COMPRESSED value whose header says 2 GiB, over a stream of a few bytes: no
    room is taken for what the header says (deflate makes at most 1032 bytes of one); the
    error is Python's zlib's, at that value. Columns of NULL and empty values only decode."""
    big = bytes([0x84]) + (1 << 31).to_bytes(4, "big") + zlib.compress(b"tiny")
    tracemalloc.start()  # (numpy's allocations are traced)
    try:
        with pytest.raises(vecbinlog.MalformedEventError, match="gives 4 bytes, the header says 2147483648"):
            _read([BLOB_COMPRESSED], [b"\x04"], [[b.prefixed(_zlib(b"ok"), 4)], [b.prefixed(big, 4)]], UTF8MB4)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak
    t = _read([BLOB_COMPRESSED, VARCHAR_COMPRESSED], [b"\x04", (50).to_bytes(2, "little")],
              [[None, b.prefixed(b"", 1)], [b.prefixed(b"", 4), None]], UTF8MB4)
    assert t.to_pylist() == [{"@2": None, "@3": ""}, {"@2": "", "@3": None}]  # (a charset: TEXT COMPRESSED)
