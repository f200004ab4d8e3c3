"""PARTIAL_UPDATE_ROWS_EVENT (binlog_row_value_options=PARTIAL_JSON): JSON diffs decoded,
applied when the before image holds the document, exposed when it does not.

Expected values come from outside vecbinlog:

* json.binlog.000001 (MySQL 8.0.22, binlog_row_image=MINIMAL): its one PARTIAL_UPDATE_ROWS
  event follows an UPDATE that set the ages to 25/33/41 and logs ``REPLACE $.age`` with
  26/34/42 (what ``mysqlbinlog -vv`` prints as ``@2=JSON_REPLACE(@2, '$.age', 26)``); the
  table's generated column ``age = json_col->'$.age'`` in the same after image was computed
  by the server from the new document and must equal the diff's value;
* the MySQL 8.0 Reference Manual, "Functions That Modify JSON": the examples of
  JSON_REPLACE, JSON_INSERT, JSON_SET, JSON_REMOVE and JSON_ARRAY_INSERT (the diff
  operations REPLACE, INSERT and REMOVE are what those functions log), and "Normalization":
  object keys are sorted (by length, then bytes, in ``json_binary.cc``);
* ``sql/json_diff.cc`` (``apply_json_diffs``) for what a diff may not do (rejections).

Events with full before images are built from the file's own bytes: the before images are
the after images of the file's UPDATE_ROWS event, the after images the PARTIAL_UPDATE_ROWS
event's own (value_options, partial bits, the diffs), laid out as ``log_event.cc``
(``print_verbose_one_row``) reads them.
"""

from __future__ import annotations

import json
import warnings

import pytest

import vecbinlog
from vecbinlog.decode.decoders import jsondiff

from ..support import builder
from ..support import reference as ref
from ..support.builder import encode, packed
from ..support.jsontext import apply_json_diffs, loads, same_json

PARTIAL_FILE = "blackbeam__rust_mysql_common/json.binlog.000001"
UPDATE_POS, PARTIAL_POS = 2612, 3750  # the UPDATE_ROWS and PARTIAL_UPDATE_ROWS events
OPS = {"REPLACE": 0, "INSERT": 1, "REMOVE": 2}


# -- builders --------------------------------------------------------------------------------


def diff_bytes(operation: str, path: str, value=None) -> bytes:
    """Json_diff::write_binary(): operation, path, and unless REMOVE the binary value."""
    out = bytes([OPS[operation]]) + packed(len(path.encode())) + path.encode()
    if operation != "REMOVE":
        doc = encode(value)
        out += packed(len(doc)) + doc
    return out


def file_bytes(corpus) -> bytes:
    return corpus(PARTIAL_FILE).read_bytes()


def before_images(data: bytes) -> list[list]:
    """The after images of the file's UPDATE_ROWS event: (id, doc, name, age) raw bytes."""
    r = ref.decode_bytes(data)
    ev = next(e for e in r.rows_events if e.pos == UPDATE_POS)
    return ev.images[1::2]


def after_images(data: bytes) -> list[list]:
    """The PARTIAL_UPDATE_ROWS event's after images (the JSON as ref.PartialJson)."""
    r = ref.decode_bytes(data)
    ev = next(e for e in r.rows_events if e.pos == PARTIAL_POS)
    return ev.images[1::2]


def row_image(values: list, prefix: bytes = b"") -> bytes:
    """One image of (id, json, name, age), all present: null bits, then the values
    (JSON: 4-byte length; VARCHAR(100) utf8mb4: 2-byte length); None is NULL."""
    length_bytes = (0, 4, 2, 0)
    return builder.row_image([v if v is None or not n else builder.prefixed(v, n) for v, n in zip(values, length_bytes)],
                             value_options=prefix)


def with_partial_event(data: bytes, rows: list[tuple[list, list]], after_present: int = 0x0F) -> bytes:
    """The file up to its PARTIAL_UPDATE_ROWS event, then that event rebuilt with full
    before images: ``rows`` = (before values, after values incl. the raw diff vector)."""
    e = next(e for e in ref.walk_events(data)[0] if e.offset == PARTIAL_POS)
    head = ref.read_rows_header(data, ref.format_of(data), e)
    images = b"".join(row_image(before) + row_image(after, prefix=b"\x01\x01")  # PARTIAL_JSON_UPDATES, @2's bit
                      for before, after in rows)
    body = builder.rows_body(head.table_id, 4, images, present=bytes([0x0F]), present_after=bytes([after_present]),
                             extra=head.extra_data, flags=head.flags)
    fields = builder.header_fields(data[PARTIAL_POS:])
    del fields["log_pos"]
    return data[:PARTIAL_POS] + builder.event(e.type, body, at=PARTIAL_POS, **fields)


def write(tmp_path, data: bytes):
    p = tmp_path / "partial.000001"
    p.write_bytes(data)
    return p


def post_images(path) -> list[dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = vecbinlog.read_table(path, "mysql.t", start=PARTIAL_POS, rolled_back="keep", ddl=False).to_pylist()  # cut after the event: no XID
    return rows[1::2]


# -- the corpus file -------------------------------------------------------------------------


def test_corpus_partial_update_minimal_image(corpus):
    """MINIMAL before images hold only the id: the diffs cannot be applied; the JSON column
    is null and absent, the diffs are exposed, a warning says how many."""
    with pytest.warns(vecbinlog.DecodeWarning, match=r"mysql\.t: 6 partial JSON update\(s\) of column '@2'"):
        t = vecbinlog.read_table(corpus(PARTIAL_FILE), "mysql.t", ddl=False)  # names as the binlog gives them
    rows = [r for r in t.to_pylist() if r["_log_pos"] == PARTIAL_POS]
    assert [r["_change_type"] for r in rows] == ["update_preimage", "update_postimage"] * 6
    before, after = rows[0::2], rows[1::2]
    assert [r["@1"] for r in before] == [1, 2, 3, 4, 5, 6]
    assert all(r["_absent"] == ["@2", "@3", "@4"] and r["_json_diffs"] == [] for r in before)
    # the UPDATE before it set the ages to 25, 33, 41; this one adds 1
    assert [r["@4"] for r in after] == [26, 34, 42, 26, 34, 42]
    assert [r["@3"] for r in after] == ["Joe", "Sue", "Pete"] * 2
    for r in after:
        assert r["@2"] is None and r["@1"] is None
        assert r["_absent"] == ["@1", "@2"]
        # JSON_REPLACE(@2, '$.age', <age>); the generated column age was computed from it
        assert r["_json_diffs"] == [{"column": "@2", "operation": "REPLACE", "path": "$.age", "value": str(r["@4"])}]
    # every other row of the file: no diffs
    assert all(r["_json_diffs"] == [] for r in t.to_pylist() if r["_log_pos"] != PARTIAL_POS)


def test_schema_has_json_diffs_only_with_json_columns(corpus):
    with vecbinlog.open(corpus(PARTIAL_FILE), ddl=False) as log:
        assert log.schema("mysql.t").names[-1] == "_json_diffs"
    with vecbinlog.open(corpus("blackbeam__rust_mysql_common/mysql_type_bit.000001")) as log:
        assert "_json_diffs" not in log.schema(log.tables[0]).names


def test_info_counts_partial_update_images(corpus):
    with vecbinlog.open(corpus(PARTIAL_FILE), ddl=False) as log:
        info = log.info(rows=True)["files"][0]
    assert info["row_images_by_table"]["mysql.t"] == {"insert": 6, "update_preimage": 12, "update_postimage": 12}
    assert "PARTIAL_UPDATE_ROWS_EVENT" not in info["events_not_decoded"]["unsupported"]


# -- full before images: applied -------------------------------------------------------------


def test_full_before_image_is_applied(corpus, tmp_path):
    """The same diffs over FULL before images (the documents the UPDATE before wrote)."""
    data = file_bytes(corpus)
    rows = [(b, [b[0], a[1].raw, a[2], a[3]]) for b, a in zip(before_images(data), after_images(data))]
    after = post_images(write(tmp_path, with_partial_event(data, rows)))
    assert [r["@2"] for r in after] == [
        '{"age": 26, "data": "xxxxxxxxxx", "name": "Joe"}',
        '{"age": 34, "data": "yyyyyyyyyy", "name": "Sue"}',
        '{"age": 42, "data": "zzzzzzzzzz", "name": "Pete"}',
    ] * 2
    assert [json.loads(r["@2"])["age"] for r in after] == [r["@4"] for r in after]
    assert all(r["_absent"] == [] for r in after)
    assert after[0]["_json_diffs"] == [{"column": "@2", "operation": "REPLACE", "path": "$.age", "value": "26"}]


# The MySQL manual's examples, as the diffs those statements log.
MANUAL = [
    pytest.param(  # JSON_REPLACE(@j, '$.a', 10, '$.c', '[true, false]'): $.c does not exist, no diff
        {"a": 1, "b": [2, 3]}, [("REPLACE", "$.a", 10)], '{"a": 10, "b": [2, 3]}', id="json_replace"),
    pytest.param(  # JSON_INSERT(@j, '$.a', 10, '$.c', '[true, false]'): $.a exists, no diff
        {"a": 1, "b": [2, 3]}, [("INSERT", "$.c", "[true, false]")], '{"a": 1, "b": [2, 3], "c": "[true, false]"}',
        id="json_insert"),
    pytest.param(  # JSON_SET(@j, '$.a', 10, '$.c', '[true, false]')
        {"a": 1, "b": [2, 3]}, [("REPLACE", "$.a", 10), ("INSERT", "$.c", "[true, false]")],
        '{"a": 10, "b": [2, 3], "c": "[true, false]"}', id="json_set"),
    pytest.param(  # JSON_REMOVE('["a", ["b", "c"], "d"]', '$[1]')
        ["a", ["b", "c"], "d"], [("REMOVE", "$[1]", None)], '["a", "d"]', id="json_remove"),
    pytest.param(  # JSON_ARRAY_INSERT(@j, '$[1]', 'x')
        ["a", {"b": [1, 2]}, [3, 4]], [("INSERT", "$[1]", "x")], '["a", "x", {"b": [1, 2]}, [3, 4]]',
        id="json_array_insert"),
    pytest.param(  # JSON_ARRAY_INSERT(@j, '$[100]', 'x'): past the end appends
        ["a", {"b": [1, 2]}, [3, 4]], [("INSERT", "$[100]", "x")], '["a", {"b": [1, 2]}, [3, 4], "x"]',
        id="json_array_insert_past_end"),
    pytest.param(  # JSON_ARRAY_INSERT(@j, '$[1].b[0]', 'x')
        ["a", {"b": [1, 2]}, [3, 4]], [("INSERT", "$[1].b[0]", "x")], '["a", {"b": ["x", 1, 2]}, [3, 4]]',
        id="json_array_insert_nested"),
    pytest.param(  # keys are kept sorted by length, then bytes: "aa" after "b"
        {"b": 1}, [("INSERT", "$.aa", 2), ("INSERT", "$.a", {"y": None, "x": [1.5, True]})],
        '{"a": {"x": [1.5, true], "y": null}, "b": 1, "aa": 2}', id="key_order"),
    pytest.param(  # a member name that needs quotes, and JSON_REMOVE of a member
        {"k e y": 1, "z": 2}, [("REPLACE", '$."k e y"', "v"), ("REMOVE", "$.z", None)], '{"k e y": "v"}',
        id="quoted_member"),
]


@pytest.mark.parametrize("before, diffs, expected", MANUAL)
def test_apply_manual_examples(before, diffs, expected):
    raw = b"".join(diff_bytes(*d) for d in diffs)
    got = jsondiff.apply_diffs(json.dumps(before), jsondiff.read_diffs(raw))
    assert got == expected
    # the independent applier agrees
    reference = apply_json_diffs(_pairs(before), ref.read_json_diffs(raw).diffs)
    assert same_json(reference, loads(got))


def _pairs(v):
    if isinstance(v, dict):
        return sorted(((k, _pairs(x)) for k, x in v.items()), key=lambda kv: (len(kv[0].encode()), kv[0].encode()))
    if isinstance(v, list):
        return [_pairs(x) for x in v]
    return v


@pytest.mark.parametrize("before, diffs, expected", MANUAL)
def test_manual_examples_through_a_binlog(corpus, tmp_path, before, diffs, expected):
    """The same examples as PARTIAL_UPDATE_ROWS after images over a full before image."""
    data = file_bytes(corpus)
    b = before_images(data)[0]
    raw = b"".join(diff_bytes(*d) for d in diffs)
    rows = [([b[0], encode(before), b[2], b[3]], [b[0], raw, b[2], b[3]])]
    (after,) = post_images(write(tmp_path, with_partial_event(data, rows)))
    assert after["@2"] == expected
    assert [(d["operation"], d["path"]) for d in after["_json_diffs"]] == [(op, p) for op, p, _ in diffs]


def test_null_before_value_is_not_applied(corpus, tmp_path):
    data = file_bytes(corpus)
    b, a = before_images(data)[0], after_images(data)[0]
    rows = [([b[0], None, b[2], b[3]], [b[0], a[1].raw, a[2], a[3]])]
    with pytest.warns(vecbinlog.DecodeWarning, match="1 partial JSON update"):
        t = vecbinlog.read_table(write(tmp_path, with_partial_event(data, rows)), "mysql.t", start=PARTIAL_POS, rolled_back="keep", ddl=False)
    after = t.to_pylist()[1]
    assert after["@2"] is None and after["_absent"] == ["@2"]
    assert after["_json_diffs"][0]["value"] == "26"


# -- what does not apply, and bad bytes ------------------------------------------------------

REJECTED = [
    pytest.param({"a": 1}, ("REPLACE", "$.b", 1), id="replace_missing_member"),
    pytest.param({"a": 1}, ("INSERT", "$.a", 1), id="insert_existing_member"),
    pytest.param({"a": 1}, ("REMOVE", "$.b", None), id="remove_missing_member"),
    pytest.param([1, 2], ("REPLACE", "$[2]", 1), id="replace_past_end"),
    pytest.param([1, 2], ("REMOVE", "$[5]", None), id="remove_past_end"),
    pytest.param({"a": 1}, ("REPLACE", "$[0]", 1), id="cell_of_an_object"),  # no auto-wrapping
    pytest.param({"a": 1}, ("INSERT", "$.x.y", 1), id="missing_parent"),
    pytest.param({"a": 1}, ("REPLACE", "$", 1), id="root"),
]


@pytest.mark.parametrize("before, diff", REJECTED)
def test_rejected_diffs(before, diff):
    with pytest.raises(jsondiff.DiffRejected):
        jsondiff.apply_diffs(json.dumps(before), jsondiff.read_diffs(diff_bytes(*diff)))


def test_rejected_diff_in_a_binlog_is_malformed(corpus, tmp_path):
    data = file_bytes(corpus)
    b = before_images(data)[0]
    rows = [([b[0], b[1], b[2], b[3]], [b[0], diff_bytes("REPLACE", "$.nope", 1), b[2], b[3]])]
    path = write(tmp_path, with_partial_event(data, rows))
    with pytest.raises(vecbinlog.MalformedEventError, match="does not apply") as err:
        vecbinlog.read_table(path, "mysql.t", rolled_back="keep", ddl=False)
    assert err.value.path == str(path) and PARTIAL_POS < err.value.offset < path.stat().st_size


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"\x03\x01$", id="unknown_operation"),
        pytest.param(b"\x00\x05$.a", id="path_cut"),
        pytest.param(b"\x00\x03$.a\x05\x05\x01", id="value_cut"),
        pytest.param(b"\x00\x03$.a", id="value_length_missing"),
        pytest.param(b"\x00\xfb$.a", id="path_length_null_marker"),
        pytest.param(b"\x02\x04$[*]", id="wildcard_path"),
        pytest.param(b"\x02\x03a.b", id="path_without_dollar"),
        pytest.param(b"\x00\x03$.a\x02\x04\x07", id="bad_literal_value"),
    ],
)
def test_malformed_diffs(raw):
    with pytest.raises(vecbinlog.MalformedEventError):
        jsondiff.read_diffs(raw)


def test_path_legs():
    assert jsondiff.parse_path('$.a[3]."k e y"[last][last-2]') == ["a", (3, False), "k e y", (0, True), (2, True)]
    assert jsondiff.parse_path("$") == []


@pytest.mark.parametrize("cut", [38, 39, 40], ids=["in_partial_bits", "in_null_bits", "in_json_length"])
def test_cut_after_image_prefix(corpus, tmp_path, cut):
    """The event cut inside its first after image (it starts 37 bytes into the event:
    29 of headers, 3 of width and bitmaps, 5 of before image): a MalformedEventError."""
    data = file_bytes(corpus)
    ev = bytearray(data[PARTIAL_POS : PARTIAL_POS + cut])
    assert ev[29:32] == b"\x04\x01\x0e" and ev[37:39] in (b"\x01", b"\x01\x01")
    bad = data[:PARTIAL_POS] + builder.event(ev[4], bytes(ev[19:]), **builder.header_fields(ev))
    with pytest.raises(vecbinlog.MalformedEventError):
        vecbinlog.read_table(write(tmp_path, bad), "mysql.t", rolled_back="keep", ddl=False)


def test_bad_value_options(corpus, tmp_path):
    data = bytearray(file_bytes(corpus))
    start = PARTIAL_POS + 37  # the first after image
    assert data[start : start + 2] == b"\x01\x01"
    data[start] = 0xFB  # not a packed integer
    data = builder.fix_crcs(data)
    with pytest.raises(vecbinlog.MalformedEventError, match="value_options"):
        vecbinlog.read_table(write(tmp_path, bytes(data)), "mysql.t", rolled_back="keep", ddl=False)
