"""vecbinlog.cli.text and cli.lines (what ``cat`` and the CSV exports print) against a
value-at-a-time reference written from the documented rules (tests/support/clitext.py), on
every type family, awkward values, the sample and corpus files; CSV also read back by Arrow's
own CSV reader."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import vecbinlog
from vecbinlog.cli.buffers import byte_table, marked
from vecbinlog.cli.lines import CsvText, TableText
from vecbinlog.cli.text import widest_text

from ..conftest import DATA, corpus_path
from ..support.clitext import check_all_styles, ours, ref_table, ref_text, ref_width

SAMPLE = DATA / "sample" / "mariadb-bin.000001"
UTC = dt.timezone.utc


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
    assert widest_text(typ) == max(ref_width(ref_text(v, typ, "table")) for v in values)
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
