"""vecbinlog.cli.text and cli.lines (what ``cat`` and the CSV exports print) against a value-at-a-time reference
written here from the documented rules, on every type family, awkward values, the sample and
corpus files; CSV also read back by Arrow's own CSV reader."""

from __future__ import annotations

import copy
import datetime as dt
import decimal
import io
import json
import unicodedata
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

import vecbinlog
from vecbinlog.cli.buffers import byte_table, marked
from vecbinlog.cli.lines import CsvText, JsonLinesText, TableText
from vecbinlog.cli.text import column_text, widest_text

from .conftest import DATA, corpus_path

SAMPLE = DATA / "sample" / "mariadb-bin.000001"
UTC = dt.timezone.utc


# -- the reference: one value at a time -------------------------------------------------------
def time_text(td: dt.timedelta) -> str:
    us = td // dt.timedelta(microseconds=1)
    sign, us = ("-" if us < 0 else ""), abs(us)
    s, frac = divmod(us, 10**6)
    return f"{sign}{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}" + (f".{frac:06d}" if frac else "")


def float_text(v: float, typ: pa.DataType) -> str:
    """Arrow's own text of a float (the one oracle taken from Arrow: the shortest digits)."""
    return pc.cast(pa.array([v], typ), pa.string())[0].as_py()


def ref(v, typ: pa.DataType, style: str) -> str:
    if pa.types.is_dictionary(typ):
        typ = typ.value_type
    if v is None:
        return {"json": "null", "table": "NULL", "csv": ""}[style]
    quote = (lambda s: '"' + s.replace('"', '""') + '"') if style == "csv" else (lambda s: s)
    if isinstance(v, bool):
        return ("True" if v else "False") if style == "table" else ("true" if v else "false")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        text = float_text(v, typ)
        return json.dumps(text) if style == "json" and not np.isfinite(v) else text
    if isinstance(v, decimal.Decimal):
        return json.dumps(format(v, "f")) if style == "json" else format(v, "f")
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False) if style == "json" else quote(v)
    if isinstance(v, bytes):
        return {"json": f'"{v.hex()}"', "table": "0x" + v.hex(), "csv": f'"{v.hex()}"'}[style]
    if isinstance(v, dt.datetime):
        if style == "csv":
            return f"{v.year:04d}-{v:%m-%d %H:%M:%S.%f}" + ("Z" if v.tzinfo else "")  # Arrow's text
        return json.dumps(v.isoformat()) if style == "json" else v.isoformat()
    if isinstance(v, dt.date):
        return json.dumps(v.isoformat()) if style == "json" else v.isoformat()
    if isinstance(v, dt.timedelta):
        return json.dumps(time_text(v)) if style == "json" else quote(time_text(v)) if style == "csv" else time_text(v)
    if isinstance(v, list):
        return quote("[" + ", ".join(ref(x, typ.value_type, "json") for x in v) + "]")
    if isinstance(v, dict):
        fields = {f.name: f.type for f in typ}
        return quote("{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {ref(x, fields[k], 'json')}"
                                     for k, x in v.items()) + "}")
    raise TypeError(type(v))


def ref_width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in s)


def ref_cut(s: str, wd: int) -> str:
    s = s.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    if wd is None or ref_width(s) <= wd:
        return s
    out, used = [], 0
    for ch in s:
        w = ref_width(ch)
        if used + w > wd - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def ref_table(batches: list[pa.RecordBatch], max_width: int) -> str:
    """The aligned table as documented: widths from the first batch's first 1000 rows (a
    dictionary column: its widest entry, used or not), at most max_width for text, text cut at
    its column's width (never with max_width 0: a wider cell pushes the rest of its line),
    numbers never cut and right-aligned, a new header for a new layout."""
    out, names, widths, right = [], None, [], []
    numeric = lambda t: pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)  # noqa: E731
    for b in batches:
        cells = [[ref(v, c.type, "table") for v in c.to_pylist()] for c in b.columns]
        if b.schema.names != names:
            if names is not None:
                out.append("")
            names = b.schema.names
            right = [numeric(t) for t in b.schema.types]
            widths = []
            for name, col, r, t in zip(names, cells, right, b.schema.types):
                wd = max([ref_width(name)] + [ref_width(ref_cut(s, None)) for s in col[:1000]])
                if pa.types.is_dictionary(t):  # every entry, used in the first rows or not
                    entries = b.column(name).dictionary.to_pylist()
                    wd = max([wd] + [ref_width(ref_cut(ref(v, t, "table"), None)) for v in entries])
                widths.append(min(wd, max_width) if max_width and not r else wd)
            out.append("  ".join(ref_cut(n, wd) + " " * (wd - ref_width(ref_cut(n, wd))) for n, wd in zip(names, widths)).rstrip())
            out.append("  ".join("-" * wd for wd in widths))
        for row in zip(*cells):
            parts = []
            for s, wd, r in zip(row, widths, right):
                s = ref_cut(s, None if r or not max_width else wd)  # 0: never cut
                pad = " " * max(wd - ref_width(s), 0)
                parts.append(pad + s if r else s + pad)
            out.append("  ".join(parts).rstrip())
    return "".join(line + "\n" for line in out)


def ours(writer, batches: list[pa.RecordBatch]) -> str:
    """What ``writer`` writes for ``batches``, a batch at a time (``write``, as ``events`` and
    the CSV files do); the same text must come out streamed (``write_all``, as ``cat`` does:
    chunks of later batches formatted while earlier ones are written, across layout changes)."""
    def with_headers(items):
        names = None
        for b in items:
            if isinstance(writer, CsvText) and b.schema.names != names:
                yield writer.header(b.schema.names)
                names = b.schema.names
            yield b

    fresh = copy.deepcopy(writer)  # as it is before the batches
    buf = io.BytesIO()
    for item in with_headers(batches):
        buf.write(item) if isinstance(item, bytes) else writer.write(item, buf)
    streamed = io.BytesIO()
    fresh.write_all(with_headers(batches), streamed)
    assert streamed.getvalue() == buf.getvalue()
    return buf.getvalue().decode()


def check_all_styles(batches: list[pa.RecordBatch], max_widths=(40, 7, 0)) -> None:
    for b in batches:
        for col in b.columns:
            for style in ("json", "table", "csv"):
                got = column_text(col, style)
                got = [got.as_py()] * len(col) if isinstance(got, pa.Scalar) else got.to_pylist()
                assert got == [ref(v, col.type, style) for v in col.to_pylist()], (col.type, style)
    expected_json = "".join(
        "{" + ", ".join(f"{json.dumps(n, ensure_ascii=False)}: {ref(v, t, 'json')}" for n, t, v in
                        zip(b.schema.names, b.schema.types, row.values())) + "}\n"
        for b in batches for row in b.to_pylist())
    assert ours(JsonLinesText(), batches) == expected_json
    for line in expected_json.splitlines():
        json.loads(line)
    csv_lines, names = [], None
    for b in batches:
        if b.schema.names != names:
            names = b.schema.names
            csv_lines.append(",".join('"' + n.replace('"', '""') + '"' for n in names))
        csv_lines += [",".join(ref(v, t, "csv") for t, v in zip(b.schema.types, row.values())) for row in b.to_pylist()]
    assert ours(CsvText(), batches) == "".join(line + "\n" for line in csv_lines)
    for mw in max_widths:
        assert ours(TableText(mw), batches) == ref_table(batches, mw), mw


# -- awkward values of every type family ------------------------------------------------------
def awkward_batch() -> pa.RecordBatch:
    texts = ['a"b', "", None, "x,y", "line\nbreak\tand\rret", "é", "\\back\\slash", "\x01\x1f\x7f", "日本語のテキスト",
             "e\u0301 combining", "🎁 gift wrap with a long tail of words", "x" * 50]
    n = len(texts)

    def cycle(values):
        return [values[i % len(values)] for i in range(n)]

    data = {
        "i8": pa.array(cycle([-128, 127, None, 0]), pa.int8()),
        "i64": pa.array(cycle([-(2**63), 2**63 - 1, None, 7]), pa.int64()),
        "u64": pa.array(cycle([2**64 - 1, 0, None, 10**19]), pa.uint64()),
        "u32": pa.array(cycle([4294967295, None, 1]), pa.uint32()),
        "f64": pa.array(cycle([1.5, float("nan"), float("inf"), -float("inf"), None, 1e15, -0.0, 0.1 + 0.2, 1e-7]), pa.float64()),
        "f32": pa.array(cycle([0.1, None, 3.0, 1e20, 12345.679]), pa.float32()),
        "dec": pa.array(cycle([decimal.Decimal("19.99"), decimal.Decimal("-0.01"), None, decimal.Decimal("0.00")]), pa.decimal128(10, 2)),
        "tiny_dec": pa.array(cycle([decimal.Decimal("0.00000001"), decimal.Decimal("-0.00000000"), decimal.Decimal("-0.00000123"), None]), pa.decimal128(10, 8)),
        "big_dec": pa.array(cycle([decimal.Decimal("-" + "9" * 35 + "." + "1" * 30), None, decimal.Decimal("0E-30")]), pa.decimal256(65, 30)),
        "text": pa.array(texts, pa.string()),
        "bin": pa.array(cycle([b"\x00\x01", b"", None, b'"', b"\xff" * 30]), pa.binary()),
        "fixed": pa.array(cycle([b"\x00" * 4, b"abcd", None]), pa.binary(4)),
        "date": pa.array(cycle([dt.date(2026, 11, 21), dt.date(1, 1, 1), None, dt.date(9999, 12, 31), dt.date(1969, 12, 31)]), pa.date32()),
        "ts": pa.array(cycle([dt.datetime(2026, 11, 21, 20, 0, 21, tzinfo=UTC), dt.datetime(2026, 11, 21, 20, 0, 21, 123456, tzinfo=UTC),
                              None, dt.datetime(1, 1, 1, tzinfo=UTC), dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)]),
                       pa.timestamp("us", "UTC")),
        "dt": pa.array(cycle([dt.datetime(2026, 11, 21, 20, 0, 21), None, dt.datetime(9999, 12, 31, 23, 59, 59, 1)]), pa.timestamp("us")),
        "time": pa.array(cycle([dt.timedelta(hours=838, minutes=59, seconds=59), -dt.timedelta(microseconds=10000), None,
                                dt.timedelta(0), -dt.timedelta(hours=838, minutes=59, seconds=59)]), pa.duration("us")),
        "set": pa.array(cycle([["a", "b"], [], None, ['q"uote']]), pa.list_(pa.string())),
        "vector": pa.array(cycle([[1.1, 2.2], None, [], [float("nan")]]), pa.list_(pa.float32())),
        "geometry": pa.array(cycle([{"srid": 4326, "wkb": b"\x01\x01"}, None, {"srid": 0, "wkb": b""}]),
                             pa.struct([("srid", pa.uint32()), ("wkb", pa.binary())])),
        "diffs": pa.array(cycle([[{"column": "doc", "operation": "REPLACE", "path": "$.a", "value": "26"}], [],
                                 [{"column": "doc", "operation": "REMOVE", "path": "$.b", "value": None}]]),
                          pa.list_(pa.struct([("column", pa.string()), ("operation", pa.string()), ("path", pa.string()), ("value", pa.string())]))),
        "enum": pa.DictionaryArray.from_arrays(pa.array(cycle([0, 1, None, 2]), pa.uint16()), pa.array(["", "red", "green"])),
        "flag": pa.array(cycle([True, False, None]), pa.bool_()),
        "nothing": pa.nulls(n, pa.int32()),
    }
    return pa.RecordBatch.from_pydict(data)


@pytest.mark.parametrize("marks", [[0x0D, 0x0A, 0x09], list(range(0x80, 0x100)), [ord('"')],
                                   [*range(0x20), ord('"'), ord("\\")], list(range(0x20)), [0x00], [0xFF], [],
                                   [*range(3), 0x7F, *range(0xF0, 0x100)], [0x41, 0x42, 0x43, 0x20], list(range(256))])
def test_marked_bytes_are_found(marks):
    """``marked`` (NumPy's min/max and comparisons first, else the compiled scan) says what
    looking every byte up in the table says, on texts with and without such bytes."""
    table = byte_table(marks)
    rng = np.random.default_rng(7)
    texts = [b"", b"plain ascii text", "ünïcode".encode(), b'say "hi"', b"tab\there", b"line\r\n", b"\x00", b"\xff",
             bytes(rng.integers(0x20, 0x7F, 5000, dtype=np.uint8)), bytes(rng.integers(0, 256, 5000, dtype=np.uint8))]
    for text in texts:
        data = np.frombuffer(text, np.uint8)
        assert marked(data, table) == bool(table[data].any()), (marks[:3], text[:20])


def test_awkward_values_in_every_style():
    b = awkward_batch()
    check_all_styles([b])
    check_all_styles([b.slice(3, 5), b.slice(8)])  # offsets inside the buffers; a second batch


def test_runs_and_constants_are_formatted_as_every_value():
    """Columns of repeated values (formatted once per run) and of one value (a constant)."""
    n = 1000
    ts = pa.array(np.repeat(np.array([1_700_000_000_000_000, 1_700_000_000_123_456, -1], "datetime64[us]"), [400, 500, 100]),
                  pa.timestamp("us", "UTC"))
    b = pa.RecordBatch.from_pydict({
        "ts": ts, "const": pa.array([5] * n, pa.int64()), "dec": pa.array([decimal.Decimal("1.50")] * 600 + [None] * 400, pa.decimal128(5, 2)),
        "absent": pa.array([[]] * n, pa.list_(pa.string())), "none": pa.nulls(n, pa.string()),
        "one": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int8)), pa.array(["insert"])),
    })
    check_all_styles([b])


# -- real change logs ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sample", "osheroff__mysql-binlog-connector-java/mysql-bin.checksum-crc32",
                                  "go-mysql-org__go-mysql/tcb-eval002c-bin.003320", "blackbeam__rust_mysql_common/vector.binlog",
                                  "rusuly__MySqlCdc/mysql-bin.000001", "blackbeam__rust_mysql_common/json.binlog.000001"])
def test_change_logs_in_every_style(name):
    path = SAMPLE if name == "sample" else corpus_path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with vecbinlog.open(path, batch_rows=4) as log:
            tables = {t: list(log.iter_batches(t)) for t in log.tables}
    for batches in tables.values():
        check_all_styles(batches, max_widths=(40, 5))


def test_csv_reads_back_with_arrow():
    """Arrow's CSV reader, given the column types, reads back the values written."""
    with vecbinlog.open(SAMPLE) as log:
        t = log.read_table("shop.orders")
    text = ours(CsvText(), t.to_batches())
    plain = [f for f in t.schema if not (pa.types.is_dictionary(f.type) or pa.types.is_nested(f.type))]
    back = pacsv.read_csv(io.BytesIO(text.encode()), convert_options=pacsv.ConvertOptions(
        column_types={f.name: f.type for f in plain}, strings_can_be_null=True, quoted_strings_can_be_null=False))
    for f in plain:
        assert back.column(f.name).to_pylist() == t.column(f.name).to_pylist(), f.name
    for name in ("_change_type", "_gtid", "_outcome"):
        assert back.column(name).to_pylist() == t.column(name).cast(pa.string()).to_pylist()


def test_wide_characters_and_cuts():
    """Cells are measured in terminal columns (wide characters 2, combining 0) and cut to
    width - 1 columns plus an ellipsis, as the reference cuts them, at every width."""
    texts = ["日本語のテキスト", "e\u0301e\u0301e\u0301e\u0301", "ab日c", "🎁🎁🎁", "a\tb\nc", "", "x" * 9, "é" * 9]
    b = pa.RecordBatch.from_pydict({"t": pa.array(texts), "n": pa.array(range(len(texts)))})
    for wd in range(0, 12):
        assert ours(TableText(wd), [b]) == ref_table([b], wd), wd


#: each type's values of the widest text, as the reference prints them
EXTREMES = [
    (pa.int8(), [-128, 127]), (pa.uint8(), [255]), (pa.int16(), [-32768]), (pa.uint16(), [65535]),
    (pa.int32(), [-2**31]), (pa.uint32(), [2**32 - 1]), (pa.int64(), [-2**63]), (pa.uint64(), [2**64 - 1]),
    # floats: Arrow's widest (found over every float32 from 1e-6 to 1e-5, and powers of ten)
    (pa.float64(), [-1.7976931348623157e308, -2.2250738585072014e-308, -5e-324, -1.2345678901234567e-06]),
    (pa.float32(), [-3.4028234663852886e38, -1.1754943508222875e-38, -1.0000001e-06]), (pa.bool_(), [False]),
    (pa.date32(), [dt.date(9999, 12, 31)]), (pa.decimal128(8, 2), [decimal.Decimal("-999999.99")]),
    (pa.decimal128(2, 2), [decimal.Decimal("-0.99")]), (pa.decimal128(10, 0), [decimal.Decimal("-9999999999")]),
    (pa.timestamp("us", UTC), [dt.datetime(9999, 12, 31, 23, 59, 59, 999999, UTC)]),
    (pa.timestamp("us"), [dt.datetime(9999, 12, 31, 23, 59, 59, 999999)]),
    (pa.duration("us"), [-dt.timedelta(hours=838, minutes=59, seconds=59, microseconds=999999)]),
]


@pytest.mark.parametrize("typ,values", EXTREMES, ids=[str(t) for t, _ in EXTREMES])
def test_widest_text_of_a_type(typ, values):
    """The width a column of that type is given when its first rows tell nothing of it (a later
    layout adds or widens it): its widest value's text, as the reference prints it."""
    assert widest_text(typ) == max(ref_width(ref(v, typ, "table")) for v in values)
    assert widest_text(pa.string()) is None and widest_text(pa.dictionary(pa.int8(), pa.int16())) == 6


def test_unsampled_columns_are_as_wide_as_their_type():
    """A column null in the first rows, which a later layout fills: as wide as its type's widest
    value (text: max_width), so the later rows stay aligned and uncut; other columns as sampled."""
    first = pa.RecordBatch.from_pydict({"id": pa.array([1], pa.int32()), "n": pa.array([None], pa.int64()),
                                        "t": pa.array([None], pa.string()), "u": pa.array([None], pa.string())})
    later = pa.RecordBatch.from_pydict({"id": pa.array([2], pa.int32()), "n": pa.array([-2**63], pa.int64()),
                                        "t": pa.array(["x" * 12], pa.string()), "u": pa.array(["y" * 12], pa.string())})
    writer = TableText(10)
    writer.unsampled = frozenset({"n", "t"})
    lines = ours(writer, [first, later]).splitlines()
    assert lines[1] == "  ".join(["--", "-" * 20, "-" * 10, "----"])  # u: as sampled (NULL)
    assert lines[3] == " 2  -9223372036854775808  xxxxxxxxx…  yyy…"
