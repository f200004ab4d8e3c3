"""JSON columns: MySQL's binary JSON rendered as the text ``SELECT json_col`` prints.

Expected texts come from outside vecbinlog:

* MySQL's own tests: ``unittest/gunit/json_dom-t.cc`` (BasicTest: escapes, integers,
  doubles, literals, decimals, datetimes, opaque values, the sample documents) and
  ``mysql-test/suite/json/r/json_conversions.result`` (``select c, json_type(j), j from t``:
  one value of every opaque type);
* the byte-exact partial-update examples in the comments of ``sql-common/json_binary.cc``
  (``Value::update_in_shadow`` and ``Value::remove_in_shadow``): documents with gaps and
  moved values;
* the corpus files' own SQL: rusuly/MySqlCdc ``Scripts.sql`` inserts
  ``'{"id": 1, "name": "John"}'``; json.binlog.000001's table has generated columns
  ``name = json_col->>'$.name'`` and ``age = json_col->'$.age'`` that the server computed
  from each document, in the same row image;
* json-opaque.binlog (MySQL 9.0.1): its values follow MySQL's documented printing of opaque
  values (the json_conversions.result lines above: DATE without fraction, TIME/DATETIME
  with six digits, DECIMAL as a bare number, other types as ``base64:typeNN:``; TiDB's
  documentation of MySQL compatibility quotes ``JSON_OBJECT('a', b'01010101')`` giving
  ``"base64:type15:VQ=="``). rust_mysql_common's own test of this file is not in the
  stored index, so the expected texts are written from those rules.

Binary documents are built by ``encode`` (tests/support/builder.py), written from the format
in ``sql-common/json_binary.h`` and the serializer in ``json_binary.cc`` (key order, inlining,
small/large formats), not from vecbinlog.
"""

from __future__ import annotations

import base64
import json
import random
import struct

import numpy as np
import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.decode.decoders import DECODERS, mysqljson
from vecbinlog.decode.decoders.common import ColumnData, DecodeOptions
from vecbinlog.tables.table_map import ColumnSpec

from ..support import reference as ref
from ..support.builder import (  # binary JSON, from json_binary.h / json_binary.cc
    Large, Opaque, Pairs, UInt, datetime_packed, decimal_opaque, encode, temporal_opaque, time_packed,
)
from ..support.jsontext import JsonText

OPAQUE_FILE = "blackbeam__rust_mysql_common/json-opaque.binlog"
PARTIAL_FILE = "blackbeam__rust_mysql_common/json.binlog.000001"
CDC_FILE = "rusuly__MySqlCdc/mysql-bin.000001"


def text(value) -> str:
    return mysqljson.to_text(encode(value))


# -- MySQL's own unit test: unittest/gunit/json_dom-t.cc, BasicTest ------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        ("abc", '"abc"'),
        (["a\"b\\c"], '["a\\"b\\\\c"]'),
        (["a\b\f\n\r\tb"], '["a\\b\\f\\n\\r\\tb"]'),
        (["丳\x13丽\x03"], '["丳\\u0013丽\\u0003"]'),
        (True, "true"),
        (-123, "-123"),
        (2147483647, "2147483647"),
        (9223372036854775807, "9223372036854775807"),
        (UInt(18446744073709551615), "18446744073709551615"),
        (-123.45, "-123.45"),
        (["val1", "val2"], '["val1", "val2"]'),
        ({"key1": "js6", "key2": ["val1", "val2"]}, '{"key1": "js6", "key2": ["val1", "val2"]}'),
        ({"key1": None, "key2": ["val1", "val2"]}, '{"key1": null, "key2": ["val1", "val2"]}'),
        ([123, {"key1": None, "key2": ["val1", "val2"]}], '[123, {"key1": null, "key2": ["val1", "val2"]}]'),
        ([123], "[123]"),
        (["val1", "val2", decimal_opaque("3.14", 3, 2)], '["val1", "val2", 3.14]'),
        ([0, 2], "[0, 2]"),
        ([None, False, True], "[null, false, true]"),
        (temporal_opaque(12, datetime_packed(2014, 11, 15, 12, 4, 55, 123456)), '"2014-11-15 12:04:55.123456"'),
        (Opaque(249, (0xCAFEBABE).to_bytes(4, "little")), '"base64:type249:vrr+yg=="'),
        ({"abc": 3, "foo": [1, 2, {"foo": 3.24}, None]}, '{"abc": 3, "foo": [1, 2, {"foo": 3.24}, null]}'),
        ([3, {"abc": "\x00inTheText"}], '[3, {"abc": "\\u0000inTheText"}]'),
        (2, "2"),
        (UInt(18446744073709551615), "18446744073709551615"),
    ],
)
def test_mysql_unit_test_values(value, expected):
    assert text(value) == expected


def test_escape_special_chars_round_trip():
    """json_dom-t.cc EscapeSpecialChars: every character 0..127 survives text and back."""
    s = "".join(map(chr, range(128)))
    out = text(s)
    assert json.loads(out) == s
    assert out == json.dumps(s, ensure_ascii=False).replace("\\u007f", "\x7f")


def test_keys_print_in_stored_order():
    """json_dom-t.cc: keys sorted on length, then contents ("", "a", "b", "ab", "key1", ...);
    the binary keeps that order and SELECT prints it."""
    doc = {"key1": 3, "key2": 2, "key1\x00x": 4, "key1\x00y": 5, "a": 6, "ab": 7, "b": 8, "": 10}
    assert text(doc) == '{"": 10, "a": 6, "b": 8, "ab": 7, "key1": 3, "key2": 2, "key1\\u0000x": 4, "key1\\u0000y": 5}'
    # a document stored in another order (not one MySQL writes) still prints as stored
    assert text(Pairs((("b", 1), ("a", 2)))) == '{"b": 1, "a": 2}'


# -- mysql-test/suite/json/r/json_conversions.result: select c, json_type(j), j from t -----


CAFEBABE = bytes.fromhex("cafebabe")


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, "null"),
        (True, "true"),
        (UInt(12), "12"),
        (12, "12"),
        (3.14, "3.14"),
        ("a", '"a"'),
        ("1", '"1"'),
        ("3.14", '"3.14"'),
        ({"a": 3}, '{"a": 3}'),
        ([1, 2], "[1, 2]"),
        (decimal_opaque("3.14", 3, 2), "3.14"),
        ("b,c", '"b,c"'),  # SET and ENUM are cast to JSON strings
        (temporal_opaque(10, datetime_packed(2015, 1, 15)), '"2015-01-15"'),
        (temporal_opaque(11, time_packed(23, 24, 25)), '"23:24:25.000000"'),
        (temporal_opaque(12, datetime_packed(2015, 1, 15, 23, 24, 25)), '"2015-01-15 23:24:25.000000"'),
        ({"type": "Point", "coordinates": [1.0, 1.0]}, '{"type": "Point", "coordinates": [1.0, 1.0]}'),
        (Opaque(15, bytes.fromhex("cafe")), '"base64:type15:yv4="'),
        (Opaque(13, b"1992"), '"base64:type13:MTk5Mg=="'),
        (Opaque(252, CAFEBABE), '"base64:type252:yv66vg=="'),
        (Opaque(251, CAFEBABE), '"base64:type251:yv66vg=="'),
        (Opaque(250, CAFEBABE), '"base64:type250:yv66vg=="'),
        (Opaque(249, CAFEBABE), '"base64:type249:yv66vg=="'),
        (Opaque(15, b"foo"), '"base64:type15:Zm9v"'),
    ],
)
def test_json_conversions_result(value, expected):
    assert text(value) == expected


# -- every node type, small and large, from the format spec --------------------------------


def test_every_scalar_type_at_top_level():
    assert mysqljson.to_text(b"\x04\x00") == "null"
    assert mysqljson.to_text(b"\x04\x01") == "true"
    assert mysqljson.to_text(b"\x04\x02") == "false"
    numbers = [-32768, UInt(65535), -2**31, UInt(2**32 - 1), -2**63, UInt(2**64 - 1), 0.5]
    assert [encode(v)[0] for v in numbers] == [0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B]  # every number type
    assert [mysqljson.to_text(encode(v)) for v in numbers] == [
        "-32768", "65535", "-2147483648", "4294967295", "-9223372036854775808", "18446744073709551615", "0.5"]
    assert mysqljson.to_text(b"\x0c\x03abc") == '"abc"'
    assert mysqljson.to_text(b"\x0f\xfc\x02\xca\xfe") == '"base64:type252:yv4="'
    assert mysqljson.to_text(b"\x00\x00\x00\x04\x00") == "{}"
    assert mysqljson.to_text(b"\x02\x00\x00\x04\x00") == "[]"
    assert encode(Large({}))[0] == 0x01 and mysqljson.to_text(encode(Large({}))) == "{}"
    assert encode(Large([]))[0] == 0x03 and mysqljson.to_text(encode(Large([]))) == "[]"


def test_empty_value_is_the_null_literal():
    """json_binary::parse_binary / Field_json::val_json (Bug#21437989): 0 bytes = null."""
    assert mysqljson.to_text(b"") == "null"


MIXED = {
    "i16": -5,
    "u16": UInt(65535),
    "i32": -70000,
    "u32": UInt(4000000000),
    "i64": -(2**40),
    "u64": UInt(2**63 + 5),
    "dbl": 2.5,
    "str": "héllo \u2603 \U0001F600",
    "t": True,
    "f": False,
    "n": None,
    "arr": [1, [2, [3, {}]], []],
    "obj": {"x": {"y": "z"}},
    "dec": decimal_opaque("-12.3400", 10, 4),
    "date": temporal_opaque(10, datetime_packed(1999, 4, 12)),
    "time": temporal_opaque(11, time_packed(838, 59, 59, 0, neg=True)),
    "dt": temporal_opaque(12, datetime_packed(2020, 2, 29, 23, 59, 59, 999999)),
    "ts": temporal_opaque(7, datetime_packed(1970, 1, 1, 0, 0, 1, 5)),
    "bit": Opaque(16, b"\x05"),
    "vs": Opaque(253, b"plain \"text\""),
}
MIXED_TEXT = (
    '{"f": false, "n": null, "t": true, "dt": "2020-02-29 23:59:59.999999", '
    '"ts": "1970-01-01 00:00:01.000005", "vs": "plain \\"text\\"", '
    '"arr": [1, [2, [3, {}]], []], "bit": "base64:type16:BQ==", "dbl": 2.5, "dec": -12.3400, '
    '"i16": -5, "i32": -70000, "i64": -1099511627776, "obj": {"x": {"y": "z"}}, '
    '"str": "héllo \u2603 \U0001F600", "u16": 65535, "u32": 4000000000, '
    '"u64": 9223372036854775813, "date": "1999-04-12", "time": "-838:59:59.000000"}'
)


def test_every_node_type_small_format():
    doc = encode(MIXED)
    assert doc[0] == 0x00
    assert mysqljson.to_text(doc) == MIXED_TEXT


def test_every_node_type_large_format():
    """The large format: 4-byte counts/offsets, [u]int32 inlined in the value entries."""
    value = Large({**MIXED, "arr": Large([1, Large([2, [3, {}]]), []])})
    doc = encode(value)
    assert doc[0] == 0x01
    assert mysqljson.to_text(doc) == MIXED_TEXT
    assert mysqljson.to_text(encode(Large([Large({"a": -70000}), UInt(70000)]))) == '[{"a": -70000}, 70000]'


def test_big_document_switches_to_large_format():
    value = {"k%05d" % i: "v" * 20 for i in range(3000)}
    doc = encode(value)
    assert doc[0] == 0x01 and len(doc) > 0xFFFF
    assert json.loads(mysqljson.to_text(doc)) == value


def test_long_string_variable_length():
    for n in (127, 128, 16383, 16384, 70000):
        s = "x" * n
        doc = encode([s])
        assert mysqljson.to_text(doc) == '["' + s + '"]'


@pytest.mark.parametrize(
    "x, expected",
    [
        # my_gcvt(MY_GCVT_ARG_DOUBLE, 34): shortest digits; 'f' format for decimal exponents
        # -14..15 ("make cases like 1e200 or 0.00001 look nicer", strings/dtoa.cc), then
        # ".0" when there is neither '.' nor 'e' (json_dom.cc)
        (1.0, "1.0"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (100.0, "100.0"),
        (0.1, "0.1"),
        (1e-5, "0.00001"),
        (1e-15, "0.000000000000001"),
        (1e-16, "1e-16"),
        (1.5e-20, "1.5e-20"),
        (1e14, "100000000000000.0"),
        (1e15, "1e15"),
        (1e20, "1e20"),
        (1234567890123456.8, "1234567890123456.8"),
        (1.2345678901234568e17, "1.2345678901234568e17"),
        (-2.5e-300, "-2.5e-300"),
        (1.7976931348623157e308, "1.7976931348623157e308"),
        (5e-324, "5e-324"),
        (float("inf"), "0.0"),
        (float("nan"), "0.0"),
    ],
)
def test_double_formatting(x, expected):
    assert text([x]) == "[" + expected + "]"
    assert mysqljson.format_double(x) == expected.encode()


def test_doubles_parse_back():
    rng = random.Random(7)
    for _ in range(3000):
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if x != x or x in (float("inf"), float("-inf")):
            continue
        assert float(mysqljson.format_double(x)) == x


def test_decimals():
    assert text(decimal_opaque("9.00", 11, 2)) == "9.00"
    assert text(decimal_opaque("0.50", 3, 2)) == "0.50"
    assert text(decimal_opaque("-0.5", 2, 1)) == "-0.5"
    assert text(decimal_opaque("0", 1, 0)) == "0"
    assert text(decimal_opaque("123456789012345678901234567890.123456789", 65, 30)) == (
        "123456789012345678901234567890.123456789000000000000000000000"
    )
    assert text(decimal_opaque("-99999999999999999999999999999999999.999999999999999999999999999999", 65, 30)) == (
        "-99999999999999999999999999999999999.999999999999999999999999999999"
    )


def test_base64_line_breaks():
    """base64_encode() (mysys/base64.cc) breaks the line every 76 characters; the newline is
    escaped by double_quote()."""
    data = bytes(range(100))
    b64 = base64.b64encode(data).decode()
    assert text(Opaque(252, data)) == '"base64:type252:' + b64[:76] + "\\n" + b64[76:] + '"'
    assert text(Opaque(252, b"")) == '"base64:type252:"'
    assert text(Opaque(252, bytes(57))) == '"base64:type252:' + "A" * 76 + '"'  # exactly 76: no break


# -- documents with gaps: json_binary.cc's partial-update examples ------------------------


def test_update_in_shadow_examples():
    original = bytes.fromhex("02" "0200" "1200" "0c0a00" "0c0e00") + b"\x03abc\x03def"
    assert mysqljson.to_text(original) == '["abc", "def"]'
    # JSON_SET(j, '$[0]', 'XY'): shorter string in place, one free byte left ('c')
    step1 = bytes.fromhex("02" "0200" "1200" "0c0a00" "0c0e00") + b"\x02XYc\x03def"
    assert mysqljson.to_text(step1) == '["XY", "def"]'
    # JSON_SET(j, '$[1]', 'XYZW'): element 1 moved one byte back, into the free byte
    step2 = bytes.fromhex("02" "0200" "1200" "0c0a00" "0c0d00") + b"\x02XY\x04XYZW"
    assert mysqljson.to_text(step2) == '["XY", "XYZW"]'
    # JSON_SET(j, '$[1]', 456): inlined int16, the old string is now free space
    step3 = bytes.fromhex("02" "0200" "1200" "0c0a00" "05c801") + b"\x02XY\x04XYZW"
    assert mysqljson.to_text(step3) == '["XY", 456]'


def test_remove_in_shadow_example():
    original = bytes.fromhex(
        "00" "0300" "2200" "19000100" "1a000100" "1b000100" "0c1c00" "0c1e00" "0c2000" "616263" "0178" "0179" "017a"
    )
    assert mysqljson.to_text(original) == '{"a": "x", "b": "y", "c": "z"}'
    # JSON_REMOVE(j, '$.b'): entries shifted, the count decremented, free bytes left behind
    removed = bytes.fromhex(
        "00" "0200" "2200" "19000100" "1b000100" "0c1c00" "0c2000" "000c1e000c2000" "616263" "0178" "0179" "017a"
    )
    assert mysqljson.to_text(removed) == '{"a": "x", "c": "z"}'


# -- malformed documents -------------------------------------------------------------------


def nested(depth: int) -> bytes:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return encode(value)


@pytest.mark.parametrize(
    "doc",
    [
        b"\x0d",  # unknown type
        b"\x10\x00",
        b"\x04\x03",  # literal byte 3
        b"\x02\x01\x00\x07\x00\x04\x03\x00",  # inlined literal 3
        b"\x02\x01\x00\x07\x00\x0d\x07\x00",  # unknown element type
        b"\x05\x01",  # int16 cut
        b"\x09" + bytes(7),
        b"\x0b" + bytes(7),
        b"\x0c\x05abc",  # string past the end
        b"\x0c\x80",  # variable length cut
        b"\x0c\xff\xff\xff\xff\xff\x01",  # variable length of 6 bytes
        b"\x0c\xff\xff\xff\xff\x7f",  # length over 2**32 - 1
        b"\x0f",  # opaque without type
        b"\x0f\xfc\x05ab",
        b"\x02\x01\x00",  # header cut
        b"\x02\x01\x00\x09\x00\x0c\x07\x00\x01",  # size past the end
        b"\x02\x02\x00\x07\x00\x0c\x07\x00",  # entries do not fit in the size
        b"\x02\x01\x00\x07\x00\x0c\x09\x00",  # offset past the size
        b"\x02\x01\x00\x08\x00\x0c\x05\x00\x00",  # offset inside the value entries
        b"\x02\x01\x00\x08\x00\x0c\x07\x00\x05",  # string past the container
        b"\x00\x01\x00\x0b\x00\x02\x00\x01\x00\x04\x00\x00a",  # key offset inside the header
        b"\x00\x01\x00\x0b\x00\x0a\x00\x02\x00\x04\x00\x00a",  # key past the object
        b"\x03" + (0xFFFFFFFF).to_bytes(4, "little") + (8).to_bytes(4, "little"),  # large count
        b"\x0f\x0a\x04" + bytes(4),  # DATE of 4 bytes
        b"\x0f\x0c\x08" + ((1 << 24) - 1).to_bytes(8, "little"),  # 16777215 microseconds
        b"\x0f\xf6\x03\x02\x01\x80",  # DECIMAL(2,1) of 1 byte (2 needed)
        b"\x0f\xf6\x04\x02\x01\x8f\xff",  # DECIMAL digit group out of range
        b"\x0f\xf6\x02\x50\x10",  # DECIMAL(80,16)
        b"\x0c\x02\xc3\x28",  # not UTF-8
        b"\x00\x01\x00\x0b\x00\x0a\x00\x01\x00\x04\x00\x00\xff",  # key not UTF-8
        nested(101),
    ],
)
def test_malformed_raises(doc):
    with pytest.raises(vecbinlog.MalformedEventError, match="malformed JSON value"):
        mysqljson.to_text(doc)


def test_depth_limit_is_mysqls():
    assert mysqljson.to_text(nested(100)) == "[" * 99 + "[]" + "]" * 99
    with pytest.raises(vecbinlog.MalformedEventError, match="deeper than 100"):
        mysqljson.to_text(nested(101))


def test_aliasing_does_not_explode():
    """Entries that all point at the same child, 60 levels deep: 2**60 elements if printed.
    MySQL never writes shared bytes; the decoder refuses them instead of hanging."""
    # level k: array of two entries, both pointing at level k+1 stored right after them
    inner = b"\x02\x00\x00\x04\x00"[1:]  # empty small array body (count 0, size 4)
    body = inner
    for _ in range(60):
        size = 4 + 2 * 3 + len(body)
        body = struct.pack("<HH", 2, size) + bytes([2]) + struct.pack("<H", 10) + bytes([2]) + struct.pack("<H", 10) + body
    with pytest.raises(vecbinlog.MalformedEventError, match="more than once"):
        mysqljson.to_text(b"\x02" + body)


def test_random_corruption_only_raises_malformed():
    rng = random.Random(2024)
    docs = [encode(MIXED), encode(Large(MIXED)), encode([1, "two", [3.0, {"four": None}]])]
    for _ in range(4000):
        doc = bytearray(rng.choice(docs))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(doc))
            doc[i] = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))
        if rng.random() < 0.3:
            doc = doc[: rng.randrange(len(doc) + 1)]
        try:
            out = mysqljson.to_text(bytes(doc))
        except vecbinlog.MalformedEventError:
            continue
        assert isinstance(out, str)


def test_independent_reading_agrees_on_mixed_documents():
    for value in (MIXED, Large(MIXED), [1, "two", [3.0, {"four": None}]], {"a": [1e15, 1e-16, -0.0, 2.5]}):
        doc = encode(value)
        assert JsonText(doc) == mysqljson.to_text(doc)


# -- the corpus ----------------------------------------------------------------------------


OPAQUE_EXPECTED = [
    '{"a": "base64:type15:VQ=="}',  # JSON_OBJECT('a', b'01010101'): a binary string
    '{"b": "2012-03-18"}',  # DATE
    '{"c": "2012-03-18 11:30:45.000000"}',  # DATETIME
    '{"c": "87:31:46.654321"}',  # TIME over 24 hours, with microseconds
    '{"d": 123.456}',  # DECIMAL(6,3)
    '{"e": 9.00}',  # DECIMAL(11,2)
    '{"e": [0, 1, true, false]}',
    '{"e": null}',
]


def test_json_opaque_binlog(corpus):
    path = corpus(OPAQUE_FILE)
    r = ref.decode_file(path)
    raws = [image[0] for ev in r.rows_events for image in ev.images]
    assert [mysqljson.to_text(raw) for raw in raws] == OPAQUE_EXPECTED
    assert [JsonText(raw) for raw in raws] == OPAQUE_EXPECTED
    t = vecbinlog.read_table(path, "foo.test")
    assert t.schema.field("a").type == pa.string()
    assert t.schema.field("a").metadata[b"mysql_type"] == b"JSON"
    assert t.column("a").to_pylist() == OPAQUE_EXPECTED


def test_mysqlcdc_binlog(corpus):
    """Scripts.sql of rusuly/MySqlCdc inserts '{"id": 1, "name": "John"}' (three rows) into its
    JsonColumn (named by the file's CREATE TABLE MySqlCdc; the server logs the rows as mysqlcdc)."""
    t = vecbinlog.read_table(corpus(CDC_FILE), "test.mysqlcdc")
    assert t.column("JsonColumn").to_pylist() == ['{"id": 1, "name": "John"}'] * 3


def test_partial_update_binlog_images(corpus):
    """json.binlog.000001 (MySQL 8.0.22): its full row images, taken from the reference
    decoder (the PARTIAL_UPDATE_ROWS_EVENT's are in test_partial_json.py). The table's
    generated columns name = json_col->>'$.name' and age = json_col->'$.age' were computed
    by the server from the same document."""
    r = ref.decode_file(corpus(PARTIAL_FILE), strict=False)
    seen = 0
    for ev in r.rows_events:
        if ev.type == ref.PARTIAL_UPDATE_ROWS_EVENT:
            continue
        for _id, doc, name, age in ev.images:
            got = mysqljson.to_text(doc)
            value = json.loads(got)
            assert value["name"] == name.decode()
            assert value["age"] == int.from_bytes(age, "little", signed=True)
            assert got == '{"age": %d, "data": "%s", "name": "%s"}' % (value["age"], value["data"], name.decode())
            assert JsonText(doc) == got
            seen += 1
    assert seen == 18


# -- the column decoder --------------------------------------------------------------------


def column(docs: list[bytes | None]) -> ColumnData:
    """A JSON column over a buffer holding the documents with junk between them."""
    buf = bytearray(b"\xee" * 3)
    offsets, lengths, valid = [], [], []
    for d in docs:
        if d is None:
            offsets.append(0)
            lengths.append(0)
            valid.append(False)
            continue
        offsets.append(len(buf))
        lengths.append(len(d))
        valid.append(True)
        buf += d + b"\xee\x01"
    spec = ColumnSpec(index=0, type=245, meta=4, nullable=True, name="j")
    return ColumnData(
        spec=spec, name="j", buf=np.frombuffer(bytes(buf), np.uint8), offsets=np.array(offsets, np.int64),
        lengths=np.array(lengths, np.int64), width=0, valid=np.array(valid, bool), options=DecodeOptions(),
        path="x.bin",
    )


def test_column_decoder_with_nulls_and_empty_values():
    assert DECODERS[245] is mysqljson
    docs = [encode({"a": 1}), None, b"", encode("é"), None, encode([1.5])]
    arr = mysqljson.decode(column(docs))
    assert arr.type == pa.string()
    assert arr.to_pylist() == ['{"a": 1}', None, "null", '"é"', None, "[1.5]"]
    assert arr.null_count == 2
    assert mysqljson.decode(column([])).to_pylist() == []
    assert mysqljson.decode(column([None, None])).to_pylist() == [None, None]


def test_column_decoder_error_has_the_location():
    col = column([encode([1]), b"\x02\x01\x00\x07\x00\x0c\x09\x00"])
    with pytest.raises(vecbinlog.MalformedEventError) as err:
        mysqljson.decode(col)
    assert err.value.path == "x.bin"
    assert err.value.offset == int(col.offsets[1])
    assert "column 'j'" in str(err.value)
    bad_utf8 = column([encode("ok"), b"\x0c\x02\xc3\x28"])
    with pytest.raises(vecbinlog.MalformedEventError, match="utf8mb4") as err:
        mysqljson.decode(bad_utf8)
    assert err.value.offset == int(bad_utf8.offsets[1])


def _typical(rng: random.Random, i: int) -> dict:
    return {
        "id": i,
        "user": "user%d" % rng.randrange(10000),
        "email": "u%d@example.com" % i,
        "active": rng.random() < 0.5,
        "score": rng.randrange(-100000, 100000),
        "tags": ["t%d" % rng.randrange(50) for _ in range(rng.randrange(4))],
        "geo": {"lat": rng.uniform(-90, 90), "lon": rng.uniform(-180, 180)},
        "note": None if rng.random() < 0.5 else "line\nbreak \"quoted\"",
    }


def test_many_typical_documents_round_trip():
    rng = random.Random(1)
    values = [_typical(rng, i) for i in range(2000)]
    arr = mysqljson.decode(column([encode(v) for v in values]))
    for v, got in zip(values, arr.to_pylist()):
        assert json.loads(got) == v


def test_key_cache_never_mixes_documents():
    """Printed keys are cached by the bytes of the keys; documents that differ only in their
    keys, or whose keys are not contiguous (a removed member leaves a gap), stay apart."""
    docs = [encode({"ab": 1, "cd": 2}), encode({"ab": 1, "ce": 2}), encode({"xy": 1, "cd": 2})]
    # {"a": 1, "c": 2} with a free byte between the keys (as JSON_REMOVE leaves), twice with
    # different second keys
    def gapped(second: bytes) -> bytes:
        header = 4 + 2 * 4 + 2 * 3
        return (
            b"\x00" + struct.pack("<HH", 2, header + 3)
            + struct.pack("<HH", header, 1) + struct.pack("<HH", header + 2, 1)
            + b"\x05\x01\x00" + b"\x05\x02\x00" + b"a" + b"\xee" + second
        )
    docs += [gapped(b"c"), gapped(b"d"), gapped(b"c")]
    arr = mysqljson.decode(column(docs * 2))
    assert arr.to_pylist() == [
        '{"ab": 1, "cd": 2}', '{"ab": 1, "ce": 2}', '{"cd": 2, "xy": 1}',
        '{"a": 1, "c": 2}', '{"a": 1, "d": 2}', '{"a": 1, "c": 2}',
    ] * 2
