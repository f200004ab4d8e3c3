"""Temporal columns: DATE, TIME, DATETIME, TIMESTAMP in the 5.6.4+ formats (TIME2, DATETIME2,
TIMESTAMP2) and the old ones, typed or as MySQL's text (``invalid_dates="string"``).

* Unit tests: values encoded row at a time by this file's own encoders (written from MySQL's
  my_time.cc ``*_to_binary`` functions and Field_*::store), decoded vectorised, for every fsp;
  the reversed-fraction negative TIME2 vectors from my_time_packed_from_binary's comment.
* A real MariaDB server: extreme values, NULLs, updates and deletes; zero and partly-zero dates
  under ``sql_mode=''``; the old formats (``mysql56_temporal_format=OFF``). Every row image must
  equal what ``mariadb-binlog -vv`` prints, the replayed change log what ``SELECT`` returns, and
  the text form what ``SELECT CAST(col AS CHAR)`` returns.
* The corpus: values that the peers' own tests document.
"""

from __future__ import annotations

import datetime as dt
import random
import re

import numpy as np
import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.constants import ColumnType as T
from vecbinlog.decode.decoders import DecodeOptions, arrow_field, decode_column
from vecbinlog.decode.decoders.common import ColumnData
from vecbinlog.tables.table_map import ColumnSpec

from ..support import reference as ref
from ..support.mariadb import parse_vv, run_mariadb_binlog_vv

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1)

# --------------------------------------------------------------------------------------------
# Independent encoders (one value at a time), from MySQL's my_time.cc / field.cc
# --------------------------------------------------------------------------------------------


def _frac_bytes(us: int, fsp: int, signed: bool = False) -> bytes:
    n = (fsp + 1) // 2
    if n == 0:
        return b""
    unit = {1: 10000, 2: 100, 3: 1}[n]
    return (us // unit).to_bytes(n, "big", signed=signed)


def enc_date(y: int, m: int, d: int) -> bytes:
    return (y * 512 + m * 32 + d).to_bytes(3, "little")  # Field_newdate::store_TIME


def enc_datetime2(y, mo, d, h, mi, s, us, fsp) -> bytes:
    # TIME_to_longlong_datetime_packed + my_datetime_packed_to_binary
    ymd = ((y * 13 + mo) << 5) | d
    hms = (h << 12) | (mi << 6) | s
    return ((ymd << 17 | hms) + 0x8000000000).to_bytes(5, "big") + _frac_bytes(us, fsp, signed=True)


def enc_timestamp2(sec: int, us: int, fsp: int) -> bytes:
    return sec.to_bytes(4, "big") + _frac_bytes(us, fsp)  # my_timestamp_to_binary


def enc_time2(neg: bool, h, mi, s, us, fsp) -> bytes:
    """TIME_to_longlong_time_packed + my_time_packed_to_binary, C integer semantics."""
    us = us // 10 ** (6 - fsp) * 10 ** (6 - fsp)
    nr = ((((h << 12) | (mi << 6) | s) << 24) + us) * (-1 if neg else 1)
    int_part = nr >> 24  # arithmetic shift (floor), as MY_PACKED_TIME_GET_INT_PART
    frac_part = -((-nr) % (1 << 24)) if nr < 0 else nr % (1 << 24)  # C's %: sign of the dividend
    if fsp == 0:
        return (int_part + 0x800000).to_bytes(3, "big")
    if fsp <= 2:
        return (int_part + 0x800000).to_bytes(3, "big") + (int(frac_part / 10000) & 0xFF).to_bytes(1, "big")
    if fsp <= 4:
        return (int_part + 0x800000).to_bytes(3, "big") + (int(frac_part / 100) & 0xFFFF).to_bytes(2, "big")
    return (nr + 0x800000000000).to_bytes(6, "big")


def enc_datetime_old(y, mo, d, h, mi, s) -> bytes:
    return (((y * 100 + mo) * 100 + d) * 1000000 + (h * 100 + mi) * 100 + s).to_bytes(8, "little")


def enc_time_old(neg: bool, h, mi, s) -> bytes:
    v = h * 10000 + mi * 100 + s
    return (-v if neg else v).to_bytes(3, "little", signed=True)


def enc_timestamp_old(sec: int) -> bytes:
    return sec.to_bytes(4, "little")


# --------------------------------------------------------------------------------------------
# Decoding hand-made columns
# --------------------------------------------------------------------------------------------


def decode_values(ctype: int, meta: int, values: list[bytes | None], invalid_dates: str = "null"):
    """Decode a column of raw values (None = NULL); returns (pyarrow.Array, warnings)."""
    spec = ColumnSpec(index=0, type=ctype, meta=meta, nullable=True)
    width = spec.storage()[1]
    blob = b"".join(v if v is not None else b"" for v in values)
    buf = np.frombuffer(b"\x00" * 8 + blob, np.uint8)  # offset 0 (where NULLs point) is not a value
    offsets, pos = [], 8
    for v in values:
        offsets.append(pos if v is not None else 0)
        if v is not None:
            assert len(v) == width, (v, width)
            pos += width
    col = ColumnData(
        spec=spec, name="c", buf=buf, offsets=np.array(offsets, np.int64), lengths=None, width=width,
        valid=np.array([v is not None for v in values]), options=DecodeOptions(invalid_dates=invalid_dates),
    )
    arr = decode_column(col)
    assert arr.type == arrow_field(spec, "c", col.options).type
    arr.validate(full=True)
    return arr, col.warnings


def _td(neg, h, mi, s, us=0) -> dt.timedelta:
    v = dt.timedelta(hours=h, minutes=mi, seconds=s, microseconds=us)
    return -v if neg else v


def _frac_text(us: int, fsp: int) -> str:
    return f".{us // 10 ** (6 - fsp):0{fsp}d}" if fsp else ""


def _time_text(neg, h, mi, s, us, fsp) -> str:
    return f"{'-' if neg else ''}{h:02d}:{mi:02d}:{s:02d}{_frac_text(us, fsp)}"


def _dt_text(y, mo, d, h, mi, s, us, fsp) -> str:
    return f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}{_frac_text(us, fsp)}"


@pytest.mark.parametrize("fsp", range(7))
def test_time2_roundtrip_every_fsp(fsp):
    rng = random.Random(fsp)
    unit = 10 ** (6 - fsp)
    small = unit % 1000000  # the smallest fraction the precision holds (0 for fsp 0)
    cases = [(False, 0, 0, 0, 0), (True, 838, 59, 59, 0), (False, 838, 59, 59, 0), (True, 0, 0, 0, small),
             (True, 0, 0, 0, 999999 // unit * unit), (True, 0, 0, 1, 0), (True, 0, 0, 1, small), (False, 0, 0, 0, small),
             (True, 99, 59, 59, 999999 // unit * unit), (False, 100, 0, 0, 0), (True, 100, 0, 0, small)]
    for _ in range(3000):
        cases.append((rng.random() < 0.5, rng.choice([rng.randrange(839), rng.randrange(3)]), rng.randrange(60),
                      rng.randrange(60), rng.randrange(1000000) // unit * unit))
    cases = [c for c in cases if c[1] < 838 or (c[2], c[3], c[4]) <= (59, 59, 0)]
    raws = [enc_time2(*c, fsp) for c in cases]
    arr, warnings = decode_values(T.MYSQL_TYPE_TIME2, fsp, raws + [None])
    assert arr.type == pa.duration("us") and not warnings
    assert arr.to_pylist() == [_td(*c) for c in cases] + [None]
    # The reference's decode_time2 agrees, except on negative values with a fraction at fsp 1-4:
    # it reads the fraction bytes as signed *and* subtracts 0x100/0x10000, so that 7fffff.ff
    # (-00:00:00.01) comes out as -00:00:00 and 2570000 us (tests/support/reference.py).
    for c, raw in zip(cases, raws):
        if not (c[0] and c[4] and fsp <= 4):
            assert ref.decode_time2(raw, fsp) == (c[0] and any(c[1:]), *c[1:])
    text, _ = decode_values(T.MYSQL_TYPE_TIME2, fsp, raws + [None], "string")
    assert text.to_pylist() == [_time_text(*c, fsp) if any(c[1:]) else _time_text(False, *c[1:], fsp) for c in cases] + [None]


def test_time2_negative_fractions_reversed():
    # The table in my_time_packed_from_binary's comment (fsp 1-2: one byte of hundredths).
    vectors = {"800000.00": "00:00:00.00", "7fffff.ff": "-00:00:00.01", "7fffff.9d": "-00:00:00.99",
               "7fffff.00": "-00:00:01.00", "7ffffe.ff": "-00:00:01.01", "7ffffe.f6": "-00:00:01.10"}
    raws = [bytes.fromhex(k.replace(".", "")) for k in vectors]
    text, _ = decode_values(T.MYSQL_TYPE_TIME2, 2, raws, "string")
    assert text.to_pylist() == list(vectors.values())
    typed, _ = decode_values(T.MYSQL_TYPE_TIME2, 2, raws)
    assert [v // dt.timedelta(microseconds=1) for v in typed.to_pylist()] == [0, -10000, -990000, -1000000, -1010000, -1100000]
    # fsp 3-4: two bytes, "0x10000 - frac"
    typed, _ = decode_values(T.MYSQL_TYPE_TIME2, 4, [bytes.fromhex("7fffffffff"), bytes.fromhex("7ffffed8f1")])
    assert [v // dt.timedelta(microseconds=1) for v in typed.to_pylist()] == [-100, -1999900]  # -00:00:01.9999


@pytest.mark.parametrize("fsp", range(7))
def test_datetime2_and_timestamp2_roundtrip_every_fsp(fsp):
    rng = random.Random(100 + fsp)
    unit = 10 ** (6 - fsp)
    top = 999999 // unit * unit
    small = unit % 1000000  # the smallest fraction the precision holds (0 for fsp 0)
    dts = [(1000, 1, 1, 0, 0, 0, 0), (9999, 12, 31, 23, 59, 59, top), (1, 1, 1, 0, 0, 0, 0),
           (2000, 2, 29, 12, 0, 0, small), (1970, 1, 1, 0, 0, 0, 0), (1969, 12, 31, 23, 59, 59, top)]
    for _ in range(3000):
        x = dt.datetime(1, 1, 1) + dt.timedelta(microseconds=rng.randrange(315537897600 * 10**6) // unit * unit)
        dts.append((x.year, x.month, x.day, x.hour, x.minute, x.second, x.microsecond))
    raws = [enc_datetime2(*v, fsp) for v in dts]
    arr, warnings = decode_values(T.MYSQL_TYPE_DATETIME2, fsp, [None] + raws)
    assert arr.type == pa.timestamp("us") and not warnings
    assert arr.to_pylist() == [None] + [dt.datetime(*v) for v in dts]
    assert [ref.decode_datetime2(r, fsp) for r in raws] == dts
    text, _ = decode_values(T.MYSQL_TYPE_DATETIME2, fsp, [None] + raws, "string")
    assert text.to_pylist() == [None] + [_dt_text(*v, fsp) for v in dts]

    secs = [1, 2**31 - 1, 2**32 - 1, 946684800] + [rng.randrange(1, 2**32) for _ in range(3000)]
    uss = [0, top, small, 0] + [rng.randrange(1000000) // unit * unit for _ in range(3000)]
    raws = [enc_timestamp2(s, u, fsp) for s, u in zip(secs, uss)]
    arr, warnings = decode_values(T.MYSQL_TYPE_TIMESTAMP2, fsp, raws + [None])
    assert arr.type == pa.timestamp("us", tz="UTC") and not warnings
    expected = [EPOCH + dt.timedelta(seconds=s, microseconds=u) for s, u in zip(secs, uss)]
    assert arr.to_pylist() == [e.replace(tzinfo=UTC) for e in expected] + [None]
    assert [ref.decode_timestamp2(r, fsp) for r in raws] == list(zip(secs, uss))
    text, _ = decode_values(T.MYSQL_TYPE_TIMESTAMP2, fsp, raws + [None], "string")
    assert text.to_pylist() == [_dt_text(*e.timetuple()[:6], e.microsecond, fsp) for e in expected] + [None]


def test_valid_columns_take_the_one_pass_way(monkeypatch):
    """DATETIME2, TIMESTAMP2 and TIME2 columns of valid values are decoded by one compiled pass,
    not field by field (the general way, taken for invalid dates and impossible values, is above)."""
    from vecbinlog.decode.decoders import temporal

    def general(col):
        raise AssertionError("the general way was taken")

    monkeypatch.setattr(temporal, "_parse", general)
    dts = [(2024, 2, 29, 23, 59, 59, 999999), (1970, 1, 1, 0, 0, 0, 0), (1, 1, 1, 0, 0, 0, 1), (9999, 12, 31, 0, 0, 0, 0)]
    arr, warnings = decode_values(T.MYSQL_TYPE_DATETIME2, 6, [enc_datetime2(*v, 6) for v in dts] + [None])
    assert arr.to_pylist() == [dt.datetime(*v) for v in dts] + [None] and not warnings
    # TIMESTAMP2 and TIME2 too, at every precision (the values: those the general way gives above)
    for fsp in range(7):
        unit = 10 ** (6 - fsp)
        top = 999999 // unit * unit
        stamps = [(1, 0), (2**32 - 1, top), (0, unit % 1000000 or 0) if fsp else (7, 0)]
        arr, warnings = decode_values(T.MYSQL_TYPE_TIMESTAMP2, fsp, [None] + [enc_timestamp2(s, u, fsp) for s, u in stamps])
        assert arr.to_pylist() == [None] + [(EPOCH + dt.timedelta(seconds=s, microseconds=u)).replace(tzinfo=UTC)
                                            for s, u in stamps] and not warnings
        times = [(True, 838, 59, 59, 0), (False, 838, 59, 59, 0), (True, 0, 0, 0, unit % 1000000), (True, 0, 0, 1, top),
                 (False, 12, 34, 56, top)]
        arr, warnings = decode_values(T.MYSQL_TYPE_TIME2, fsp, [enc_time2(*t, fsp) for t in times] + [None])
        assert arr.to_pylist() == [_td(*t) for t in times] + [None] and not warnings


def test_old_formats_roundtrip():
    rng = random.Random(7)
    dates = [(1000, 1, 1), (9999, 12, 31), (2000, 2, 29), (1, 1, 1)]
    dates += [(d.year, d.month, d.day) for d in (dt.date(1, 1, 1) + dt.timedelta(days=rng.randrange(3652059)) for _ in range(2000))]
    for ctype in (T.MYSQL_TYPE_DATE, T.MYSQL_TYPE_NEWDATE):
        arr, _ = decode_values(ctype, 0, [enc_date(*d) for d in dates])
        assert arr.type == pa.date32() and arr.to_pylist() == [dt.date(*d) for d in dates]
        text, _ = decode_values(ctype, 0, [enc_date(*d) for d in dates], "string")
        assert text.to_pylist() == [f"{y:04d}-{m:02d}-{d:02d}" for y, m, d in dates]

    dts = [(1000, 1, 1, 0, 0, 0), (9999, 12, 31, 23, 59, 59)]
    for _ in range(2000):
        x = dt.datetime(1, 1, 1) + dt.timedelta(seconds=rng.randrange(315537897600))
        dts.append(x.timetuple()[:6])
    arr, _ = decode_values(T.MYSQL_TYPE_DATETIME, 0, [enc_datetime_old(*v) for v in dts])
    assert arr.type == pa.timestamp("us") and arr.to_pylist() == [dt.datetime(*v) for v in dts]
    text, _ = decode_values(T.MYSQL_TYPE_DATETIME, 0, [enc_datetime_old(*v) for v in dts], "string")
    assert text.to_pylist() == [_dt_text(*v, 0, 0) for v in dts]

    times = [(True, 838, 59, 59), (False, 838, 59, 59), (False, 0, 0, 0), (True, 0, 0, 1), (True, 100, 0, 0)]
    times += [(rng.random() < 0.5, rng.randrange(839), rng.randrange(60), rng.randrange(60)) for _ in range(2000)]
    times = [t for t in times if any(t[1:]) or not t[0]]  # there is no -00:00:00 in the old format
    arr, _ = decode_values(T.MYSQL_TYPE_TIME, 0, [enc_time_old(*t) for t in times])
    assert arr.type == pa.duration("us") and arr.to_pylist() == [_td(*t) for t in times]
    text, _ = decode_values(T.MYSQL_TYPE_TIME, 0, [enc_time_old(*t) for t in times], "string")
    assert text.to_pylist() == [_time_text(*t, 0, 0) for t in times]

    secs = [1, 2**31 - 1, 2**32 - 1] + [rng.randrange(1, 2**32) for _ in range(2000)]
    arr, _ = decode_values(T.MYSQL_TYPE_TIMESTAMP, 0, [enc_timestamp_old(s) for s in secs])
    assert arr.type == pa.timestamp("us", tz="UTC")
    assert arr.to_pylist() == [dt.datetime.fromtimestamp(s, UTC) for s in secs]


def test_year_zero_is_a_date():
    """'0000-01-01' is a legal MySQL date and a legal Arrow date32 (proleptic Gregorian), even
    though Python's datetime.date cannot hold it."""
    arr, warnings = decode_values(T.MYSQL_TYPE_DATE, 0, [enc_date(0, 1, 1), enc_date(0, 12, 31)])
    assert not warnings and arr.null_count == 0
    assert arr.cast(pa.int32()).to_pylist() == [-719528, -719528 + 365]  # year 0 is a leap year
    assert arr.cast(pa.string()).to_pylist() == ["0000-01-01", "0000-12-31"]


# zero and partly-zero dates


ZERO_DATES = [  # (type, fsp, raw, MySQL's text)
    (T.MYSQL_TYPE_DATE, 0, enc_date(0, 0, 0), "0000-00-00"),
    (T.MYSQL_TYPE_DATE, 0, enc_date(2020, 0, 15), "2020-00-15"),
    (T.MYSQL_TYPE_DATE, 0, enc_date(2020, 1, 0), "2020-01-00"),
    (T.MYSQL_TYPE_DATE, 0, enc_date(2021, 2, 29), "2021-02-29"),  # ALLOW_INVALID_DATES
    (T.MYSQL_TYPE_DATE, 0, enc_date(2020, 4, 31), "2020-04-31"),
    (T.MYSQL_TYPE_DATETIME2, 3, enc_datetime2(0, 0, 0, 0, 0, 0, 0, 3), "0000-00-00 00:00:00.000"),
    (T.MYSQL_TYPE_DATETIME2, 0, enc_datetime2(2020, 0, 15, 1, 2, 3, 0, 0), "2020-00-15 01:02:03"),
    (T.MYSQL_TYPE_DATETIME2, 6, enc_datetime2(1900, 2, 29, 0, 0, 0, 5, 6), "1900-02-29 00:00:00.000005"),
    (T.MYSQL_TYPE_DATETIME, 0, enc_datetime_old(0, 0, 0, 0, 0, 0), "0000-00-00 00:00:00"),
    (T.MYSQL_TYPE_DATETIME, 0, enc_datetime_old(2020, 1, 0, 23, 59, 59), "2020-01-00 23:59:59"),
    (T.MYSQL_TYPE_TIMESTAMP2, 2, enc_timestamp2(0, 0, 2), "0000-00-00 00:00:00.00"),
    (T.MYSQL_TYPE_TIMESTAMP2, 0, enc_timestamp2(0, 0, 0), "0000-00-00 00:00:00"),
    (T.MYSQL_TYPE_TIMESTAMP, 0, enc_timestamp_old(0), "0000-00-00 00:00:00"),
]


@pytest.mark.parametrize("ctype, fsp, raw, text", ZERO_DATES, ids=[z[3] + f"-{z[0]}" for z in ZERO_DATES])
def test_zero_dates(ctype, fsp, raw, text):
    good = {T.MYSQL_TYPE_DATE: enc_date(2020, 1, 15), T.MYSQL_TYPE_DATETIME2: enc_datetime2(2020, 1, 15, 1, 2, 3, 0, fsp),
            T.MYSQL_TYPE_DATETIME: enc_datetime_old(2020, 1, 15, 1, 2, 3),
            T.MYSQL_TYPE_TIMESTAMP2: enc_timestamp2(1, 0, fsp), T.MYSQL_TYPE_TIMESTAMP: enc_timestamp_old(1)}[ctype]
    values = [raw, good, None, raw]
    arr, warnings = decode_values(ctype, fsp, values)
    assert arr.is_null().to_pylist() == [True, False, True, True]
    assert len(warnings) == 1
    assert "2 of 4" in warnings[0] and f"'{text}'" in warnings[0] and 'invalid_dates="string"' in warnings[0]
    strings, warnings = decode_values(ctype, fsp, values, "string")
    assert not warnings and strings.type == pa.string()
    assert strings.to_pylist()[0] == strings.to_pylist()[3] == text
    assert strings.to_pylist()[2] is None


@pytest.mark.parametrize("fsp", range(1, 7))
def test_timestamp_of_zero_seconds_and_a_fraction_is_no_zero_value(fsp):
    """my_timestamp_from_binary: only 0 seconds *and* 0 microseconds is the zero TIMESTAMP.
    MariaDB stores '1970-01-01 00:00:00.000001' UTC as 0 seconds and a fraction."""
    us = 10 ** (6 - fsp)  # the smallest fraction of that precision
    values = [enc_timestamp2(0, us, fsp), enc_timestamp2(0, 0, fsp), enc_timestamp2(0, 999999 // us * us, fsp)]
    arr, warnings = decode_values(T.MYSQL_TYPE_TIMESTAMP2, fsp, values)
    assert arr.to_pylist() == [dt.datetime(1970, 1, 1, 0, 0, 0, us, UTC), None,
                               dt.datetime(1970, 1, 1, 0, 0, 0, 999999 // us * us, UTC)]
    assert len(warnings) == 1 and "1 of 3" in warnings[0]
    text, _ = decode_values(T.MYSQL_TYPE_TIMESTAMP2, fsp, values, "string")
    zero = "0000-00-00 00:00:00." + "0" * fsp
    assert text.to_pylist() == ["1970-01-01 00:00:00." + _frac_text(us, fsp)[1:], zero,
                                "1970-01-01 00:00:00." + _frac_text(999999 // us * us, fsp)[1:]]


IMPOSSIBLE = [
    (T.MYSQL_TYPE_DATE, 0, enc_date(2020, 13, 1)),
    (T.MYSQL_TYPE_DATETIME, 0, enc_datetime_old(2020, 1, 1, 24, 0, 0)),
    (T.MYSQL_TYPE_DATETIME, 0, (2**64 - 1).to_bytes(8, "little")),
    (T.MYSQL_TYPE_DATETIME2, 0, b"\x00\x00\x00\x00\x01"),  # sign bit clear
    (T.MYSQL_TYPE_DATETIME2, 2, enc_datetime2(2020, 1, 1, 1, 60, 0, 0, 0) + b"\x00"),
    (T.MYSQL_TYPE_TIME, 0, enc_time_old(False, 12, 60, 0)),
    (T.MYSQL_TYPE_TIME, 0, enc_time_old(True, 838, 86, 7)),  # -8388607: the smallest 24-bit value
    (T.MYSQL_TYPE_TIME2, 0, enc_time2(False, 12, 0, 61, 0, 0)),
    (T.MYSQL_TYPE_TIME2, 6, (0x800000000000 + (1 << 24) - 1).to_bytes(6, "big")),  # 16.777215 s fraction
    (T.MYSQL_TYPE_TIMESTAMP2, 6, enc_timestamp2(5, 0, 0) + b"\xff\xff\xff"),
]


@pytest.mark.parametrize("ctype, fsp, raw", IMPOSSIBLE)
def test_impossible_values_raise(ctype, fsp, raw):
    for mode in ("null", "string"):
        with pytest.raises(vecbinlog.MalformedEventError) as err:
            decode_values(ctype, fsp, [None, raw], mode)
        assert err.value.offset == 8  # where the value is
        assert raw.hex() in str(err.value)
        old = ctype in (T.MYSQL_TYPE_TIME, T.MYSQL_TYPE_DATETIME, T.MYSQL_TYPE_TIMESTAMP)
        assert ("mysql56_temporal_format=OFF" in str(err.value)) == old


def test_garbage_behind_nulls_is_not_read():
    # NULLs point at offset 0, which holds anything: it must not count as invalid or impossible
    spec = ColumnSpec(index=0, type=T.MYSQL_TYPE_DATETIME, meta=0, nullable=True)
    col = ColumnData(spec=spec, name="c", buf=np.full(64, 0xFF, np.uint8), offsets=np.zeros(3, np.int64),
                     lengths=None, width=8, valid=np.zeros(3, bool), options=DecodeOptions())
    arr = decode_column(col)
    assert arr.to_pylist() == [None] * 3 and not col.warnings


def test_arrow_types_follow_the_option():
    expected = {T.MYSQL_TYPE_DATE: pa.date32(), T.MYSQL_TYPE_NEWDATE: pa.date32(),
                T.MYSQL_TYPE_DATETIME: pa.timestamp("us"), T.MYSQL_TYPE_DATETIME2: pa.timestamp("us"),
                T.MYSQL_TYPE_TIMESTAMP: pa.timestamp("us", "UTC"), T.MYSQL_TYPE_TIMESTAMP2: pa.timestamp("us", "UTC"),
                T.MYSQL_TYPE_TIME: pa.duration("us"), T.MYSQL_TYPE_TIME2: pa.duration("us")}
    for ctype, atype in expected.items():
        spec = ColumnSpec(index=0, type=ctype, meta=3 if ctype in (17, 18, 19) else 0, nullable=True)
        assert arrow_field(spec, "c", DecodeOptions()).type == atype
        assert arrow_field(spec, "c", DecodeOptions(invalid_dates="string")).type == pa.string()
        with pytest.raises(ValueError, match="invalid_dates"):
            arrow_field(spec, "c", DecodeOptions(invalid_dates="zero"))


# --------------------------------------------------------------------------------------------
# Reading files
# --------------------------------------------------------------------------------------------


def open_log(path, invalid_dates: str = "null"):
    return vecbinlog.open(path, invalid_dates=invalid_dates)


def read_table(path, table, invalid_dates: str = "null") -> pa.Table:
    with open_log(path, invalid_dates) as log:
        return log.read_table(table)


# --------------------------------------------------------------------------------------------
# The corpus: values the peers' tests document
# --------------------------------------------------------------------------------------------


def test_corpus_time_issue(corpus):
    # rust_mysql_common's TIME2 edge case (MySQL 8.0.40): a negative TIME(0) of more than 24 hours
    t = read_table(corpus("blackbeam__rust_mysql_common/time_issue.000001"), "noria.t")
    assert t.column("@1").to_pylist() == [-dt.timedelta(hours=507, minutes=48, seconds=27)]  # mariadb-binlog: '-507:48:27'
    s = read_table(corpus("blackbeam__rust_mysql_common/time_issue.000001"), "noria.t", "string")
    assert s.column("@1").to_pylist() == ["-507:48:27"]


def test_corpus_mysqlcdc_sample(corpus):
    # MySqlCdc's sample inserts '1985-10-23', '1988-11-27 14:12:13.345', '15:22:33.67' and
    # TIMESTAMP(3) '1985-10-13 13:22:23.567' in a +03:00 session (its ParseTimestamp2 test); the
    # columns are named by the file's CREATE TABLE MySqlCdc (the server logs the rows as mysqlcdc)
    t = read_table(corpus("rusuly__MySqlCdc/mysql-bin.000001"), "test.mysqlcdc")
    row = t.select(["DateColumn", "DateTimeColumn", "TimeColumn", "TimestampColumn"]).to_pylist()[0]
    assert row == {
        "DateColumn": dt.date(1985, 10, 23),
        "DateTimeColumn": dt.datetime(1988, 11, 27, 14, 12, 13, 345000),
        "TimeColumn": dt.timedelta(hours=15, minutes=22, seconds=33, microseconds=670000),
        "TimestampColumn": dt.datetime(1985, 10, 13, 13, 22, 23, 567000, tzinfo=dt.timezone(dt.timedelta(hours=3))),
    }
    s = read_table(corpus("rusuly__MySqlCdc/mysql-bin.000001"), "test.mysqlcdc", "string")
    assert s.select(["DateColumn", "DateTimeColumn", "TimeColumn", "TimestampColumn"]).to_pylist()[0] == {
        "DateColumn": "1985-10-23", "DateTimeColumn": "1988-11-27 14:12:13.345", "TimeColumn": "15:22:33.67", "TimestampColumn": "1985-10-13 10:22:23.567"}


def test_corpus_sakila_old_formats(corpus):
    # MySQL 5.5 sakila load: old DATETIME and TIMESTAMP (rental 1 and 2 of the sakila data set)
    t = read_table(corpus("osheroff__mysql-binlog-connector-java/mysql-bin.sakila"), "sakila.rental")
    # named by the CREATE TABLE in the file (the sakila schema: rental_id, rental_date, ..., return_date)
    rows = t.select(["rental_id", "rental_date", "return_date"]).to_pylist()[:2]
    assert rows == [
        {"rental_id": 1, "rental_date": dt.datetime(2005, 5, 24, 22, 53, 30), "return_date": dt.datetime(2005, 5, 26, 22, 4, 30)},
        {"rental_id": 2, "rental_date": dt.datetime(2005, 5, 24, 22, 54, 33), "return_date": dt.datetime(2005, 5, 28, 19, 40, 33)},
    ]
    assert t.schema.field("last_update").type == pa.timestamp("us", tz="UTC")
    assert t.column("return_date").null_count == 183  # rentals not returned: return_date IS NULL in sakila


def test_corpus_mariadb_10_0_timestamp_with_fractions(corpus):
    """MariaDB 10.0.17 (pingcap/tiflow's file): `create table t(id int primary key,d timestamp(3))`
    in the pre-10.1 format; its row images do not add up, and the error says why."""
    with vecbinlog.open(corpus("pingcap__tiflow/mysql-bin.000001")) as log, \
            pytest.raises(vecbinlog.MalformedEventError) as err:
        log.read_table("steven.t")
    assert err.value.offset == 1819 and err.value.event_type == "WRITE_ROWS_EVENT_V1"
    assert "steven.t has d (TIMESTAMP)" in str(err.value) and "mysql56_temporal_format=OFF" in str(err.value)


@pytest.mark.parametrize("name", [
    "blackbeam__rust_mysql_common/time_issue.000001",
    "osheroff__mysql-binlog-connector-java/mysql-bin.sakila",
    "osheroff__mysql-binlog-connector-java/mysql-bin.checksum-none",
    "osheroff__mysql-binlog-connector-java/mysql-bin.checksum-crc32",
    "alibaba__canal/parse/mysql-bin.000001",
    "alibaba__canal/parse/mysql-bin.000002",
    "alibaba__canal/tsdb/mysql-bin.000003",
    "rusuly__MySqlCdc/mysql-bin.000001",
    "zalora__binlog-parser/fixtures/mysql-bin.02",
    "PrivateRookie__boxercrab/bin_files/binlog.bin",
    "blackbeam__rust_mysql_common/mariadb-bin.000001",
])
def test_corpus_text_form_matches_typed(corpus, name):
    """invalid_dates="string" gives the text of exactly the typed values (no zero dates here)."""
    with open_log(corpus(name)) as log:
        typed = log.read_all()
    with open_log(corpus(name), "string") as log:
        text = log.read_all()
    n = 0
    for table, t in typed.items():
        for field in t.schema:
            kind = field.metadata.get(b"mysql_type") if field.metadata else None
            if kind not in (b"DATE", b"DATETIME", b"DATETIME2", b"TIMESTAMP", b"TIMESTAMP2", b"TIME", b"TIME2"):
                continue
            assert text[table].schema.field(field.name).type == pa.string()
            for a, b in zip(t.column(field.name).to_pylist(), text[table].column(field.name).to_pylist()):
                assert (a is None) == (b is None)
                if a is not None:
                    digits = len(b.partition(".")[2])  # the column's fsp
                    assert _py_text(a, digits) == b
                    n += 1
    assert n > 0


def _py_text(v, digits: int) -> str:
    """MySQL's text of a Python value, with ``digits`` fractional digits (TIMESTAMP in UTC)."""
    if isinstance(v, dt.datetime):
        s = v.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if v.tzinfo else v.strftime("%Y-%m-%d %H:%M:%S")
        return s + _frac_text(v.microsecond, digits)
    if isinstance(v, dt.date):
        return v.isoformat()
    us = v // dt.timedelta(microseconds=1)
    a = abs(us)
    return _time_text(us < 0, a // 3600_000000, a // 60_000000 % 60, a // 1_000000 % 60, a % 1000000, digits)


# --------------------------------------------------------------------------------------------
# A real MariaDB server
# --------------------------------------------------------------------------------------------

FSPS = range(7)
COLS = ["d DATE NULL"] + [f"t{k} TIME({k}) NULL" for k in FSPS] + [f"dt{k} DATETIME({k}) NULL" for k in FSPS] \
    + [f"ts{k} TIMESTAMP({k}) NULL DEFAULT NULL" for k in FSPS]
NAMES = ["id"] + [c.split()[0] for c in COLS]


def _row(id_, date, time, datetime_, ts) -> str:
    vals = [date] + [time] * 7 + [datetime_] * 7 + [ts] * 7
    return f"({id_}, " + ", ".join("NULL" if v is None else f"'{v}'" for v in vals) + ")"


WORKLOAD = [
    "SET SESSION time_zone = '+00:00'",
    "DROP DATABASE IF EXISTS tmp_db",
    "CREATE DATABASE tmp_db",
    f"CREATE TABLE tmp_db.t (id INT NOT NULL PRIMARY KEY, {', '.join(COLS)}) ENGINE=InnoDB",
    "INSERT INTO tmp_db.t VALUES "
    + _row(1, "1000-01-01", "-838:59:59", "1000-01-01 00:00:00", "1970-01-01 00:00:01") + ", "
    + _row(2, "9999-12-31", "838:59:59.000000", "9999-12-31 23:59:59.999999", "2038-01-19 03:14:07.999999") + ", "
    + _row(3, "2020-02-29", "-00:00:00.01", "2020-02-29 12:34:56.123456", "2000-02-29 12:34:56.654321") + ", "
    + _row(4, None, "00:00:00", None, None),
    "INSERT INTO tmp_db.t VALUES " + _row(5, "1970-01-01", "-12:34:56.789012", "1969-12-31 23:59:59.5", "1970-01-01 00:00:01.000001"),
    "INSERT INTO tmp_db.t VALUES " + _row(6, "2024-06-30", "-100:00:00.999999", "2024-06-30 00:00:00.000001", "2024-06-30 23:59:59.999999"),
    "INSERT INTO tmp_db.t VALUES " + _row(7, "1999-12-31", "123:45:06.5", "1999-12-31 23:59:59.9", "1999-12-31 23:59:59.9"),
    "INSERT INTO tmp_db.t VALUES " + _row(8, "2001-01-01", "-00:00:01", "2001-01-01 00:00:00", "2001-01-01 00:00:00"),
    "UPDATE tmp_db.t SET d = '2000-01-01', t3 = '-01:02:03.004', dt6 = NULL, ts2 = '2010-10-10 10:10:10.10' WHERE id = 4",
    "UPDATE tmp_db.t SET t0 = NULL, t6 = '-838:59:59.000000', dt0 = '1000-01-01 00:00:01' WHERE id IN (1, 2)",
    "UPDATE tmp_db.t SET ts6 = NULL WHERE id = 3",
    "DELETE FROM tmp_db.t WHERE id = 5",
]


@pytest.fixture(scope="module")
def server_utc(mariadb_server):
    """The session server with time_zone '+00:00', so that SELECT shows TIMESTAMPs in UTC."""
    old = mariadb_server.query("SELECT @@GLOBAL.time_zone")[0][0]
    mariadb_server.set_global("time_zone", "+00:00")
    try:
        yield mariadb_server
    finally:
        mariadb_server.set_global("time_zone", old)


@pytest.fixture(scope="module")
def workload(server_utc):
    path = server_utc.capture_binlog(*WORKLOAD)
    final = server_utc.query("SELECT * FROM tmp_db.t ORDER BY id")
    text = server_utc.query(f"SELECT id, {', '.join(f'CAST({n} AS CHAR)' for n in NAMES[1:])} FROM tmp_db.t ORDER BY id")
    vv = [img for img in parse_vv(run_mariadb_binlog_vv(path)) if img.table == "tmp_db.t"]
    return path, final, text, vv


def _replay(t: pa.Table) -> dict[int, list]:
    state: dict[int, list] = {}
    for row in t.to_pylist():
        vals = [row[n] for n in NAMES]
        if row["_change_type"] in ("insert", "update_postimage"):
            state[vals[0]] = vals
        elif row["_change_type"] == "delete":
            del state[vals[0]]
    return state


def _as_server(v):
    """pymysql gives naive datetimes (the session is in UTC)."""
    return v.replace(tzinfo=None) if isinstance(v, dt.datetime) else v


@pytest.mark.mariadb
def test_server_values_equal_select(workload):
    path, final, text, _ = workload
    t = read_table(path, "tmp_db.t")
    assert t.schema.names[: len(NAMES)] == NAMES
    for name in NAMES[1:]:
        field = t.schema.field(name)
        assert field.type == {"d": pa.date32(), "t": pa.duration("us"), "dt": pa.timestamp("us"),
                              "ts": pa.timestamp("us", tz="UTC")}[re.sub(r"\d", "", name)], name
    state = _replay(t)
    assert sorted(state) == [r[0] for r in final]
    for row in final:
        assert [_as_server(v) for v in state[row[0]]] == list(row), row[0]

    s = read_table(path, "tmp_db.t", "string")
    assert all(s.schema.field(n).type == pa.string() for n in NAMES[1:])
    state = _replay(s)
    for row in text:
        assert state[row[0]] == list(row), row[0]


def _vv_text(kind: str, fsp: int, v) -> str:
    """How mariadb-binlog -vv prints a value, from the decoded Python value."""
    if kind == "d":
        return f"'{v.year:04d}:{v.month:02d}:{v.day:02d}'"
    if kind == "ts":
        us = (v - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)
        return f"{us // 1000000}{_frac_text(us % 1000000, fsp)}"
    if kind == "dt":
        return f"'{_dt_text(*v.timetuple()[:6], v.microsecond, fsp)}'"
    us = v // dt.timedelta(microseconds=1)
    a = abs(us)
    return f"'{_time_text(us < 0, a // 3600_000000, a // 60_000000 % 60, a // 1000000 % 60, a % 1000000, fsp)}'"


_KINDS = {"insert": "insert", "update_preimage": "update_before", "update_postimage": "update_after", "delete": "delete"}


@pytest.mark.mariadb
def test_server_images_equal_mariadb_binlog(workload):
    path, _, _, vv = workload
    t = read_table(path, "tmp_db.t")
    s = read_table(path, "tmp_db.t", "string")
    rows, texts = t.to_pylist(), s.to_pylist()
    assert len(rows) == len(vv) == 8 + 1 * 2 + 2 * 2 + 1 * 2 + 1
    n = 0
    for row, text, image in zip(rows, texts, vv):
        assert _KINDS[row["_change_type"]] == image.kind
        assert row["_log_pos"] in image.event_positions
        printed = {v.index: v for v in image.values}
        for k, name in enumerate(NAMES[1:], start=2):
            kind, fsp = re.sub(r"\d", "", name), int(name[-1]) if name[-1].isdigit() else 0
            p = printed[k]
            assert p.meta == fsp
            if p.is_null:
                assert row[name] is None and text[name] is None
                continue
            assert _vv_text(kind, fsp, row[name]) == p.text, (row["id"], name)
            if kind == "d":
                assert f"'{text[name]}'" == p.text.replace(":", "-")
            elif kind != "ts":
                assert f"'{text[name]}'" == p.text
            n += 1
    assert n > 200


ZERO_WORKLOAD = [
    "SET SESSION sql_mode = ''",
    "SET SESSION time_zone = '+00:00'",
    "DROP DATABASE IF EXISTS tmp_zero",
    "CREATE DATABASE tmp_zero",
    "CREATE TABLE tmp_zero.z (id INT NOT NULL PRIMARY KEY, d DATE NULL, dt0 DATETIME NULL, dt3 DATETIME(3) NULL, "
    "ts0 TIMESTAMP NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL, t2 TIME(2) NULL)",
    "INSERT INTO tmp_zero.z VALUES (1, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', 0, 0, '-00:00:00.01')",
    "INSERT INTO tmp_zero.z VALUES (2, '2020-00-15', '2020-00-15 01:02:03', '2020-01-00 01:02:03.456', "
    "'2020-01-01 00:00:00', '2020-01-01 00:00:00.000001', '838:59:59')",
    "INSERT INTO tmp_zero.z VALUES (3, '2020-01-15', '0000-01-01 00:00:00', '2020-01-15 00:00:00', "
    "'1970-01-01 00:00:01', '2038-01-19 03:14:07.999999', NULL)",
    "UPDATE tmp_zero.z SET d = '0000-00-00', ts6 = 0 WHERE id = 3",
    "SET SESSION sql_mode = 'ALLOW_INVALID_DATES'",
    "INSERT INTO tmp_zero.z VALUES (4, '2021-02-30', '2021-04-31 12:00:00', '2021-02-29 12:00:00.5', NULL, NULL, NULL)",
]


@pytest.mark.mariadb
def test_server_zero_dates(server_utc):
    path = server_utc.capture_binlog(*ZERO_WORKLOAD)
    names = ["id", "d", "dt0", "dt3", "ts0", "ts6", "t2"]
    text = server_utc.query(f"SELECT id, {', '.join(f'CAST({n} AS CHAR)' for n in names[1:])} FROM tmp_zero.z ORDER BY id")
    assert text[0][1:6] == ("0000-00-00", "0000-00-00 00:00:00", "0000-00-00 00:00:00.000", "0000-00-00 00:00:00",
                            "0000-00-00 00:00:00.000000")
    assert text[3][1:3] == ("2021-02-30", "2021-04-31 12:00:00")

    with pytest.warns(vecbinlog.DecodeWarning) as record:
        t = read_table(path, "tmp_zero.z")
    counts: dict[str, int] = {}
    for w in record:
        m = re.search(r"column '(\w+)': (\d+) of \d+ \w+ value\(s\) are zero or invalid dates", str(w.message))
        assert m and 'invalid_dates="string"' in str(w.message), str(w.message)
        counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2))
    # images: 4 inserts + the update's 2 images; invalid values per column across all images
    assert counts == {"d": 4, "dt0": 3, "dt3": 3, "ts0": 1, "ts6": 2}
    # images: inserts 1, 2, 3, the update of 3 (before, after), insert 4
    assert [r["_change_type"] for r in t.select(["_change_type"]).to_pylist()] == \
        ["insert"] * 3 + ["update_preimage", "update_postimage", "insert"]
    rows = t.drop_columns(["dt0"]).to_pylist()  # '0000-01-01' is an Arrow timestamp, but not a Python datetime
    assert [r["d"] for r in rows] == [None, None, dt.date(2020, 1, 15), dt.date(2020, 1, 15), None, None]
    assert t.column("dt0").is_null().to_pylist() == [True, True, False, False, False, True]
    assert t.column("dt0").cast(pa.string()).to_pylist()[2:5] == ["0000-01-01 00:00:00.000000"] * 3
    assert [r["ts6"] for r in rows] == [None, dt.datetime(2020, 1, 1, 0, 0, 0, 1, UTC), dt.datetime(2038, 1, 19, 3, 14, 7, 999999, UTC),
                                        dt.datetime(2038, 1, 19, 3, 14, 7, 999999, UTC), None, None]
    assert [r["t2"] for r in rows] == [-dt.timedelta(microseconds=10000), dt.timedelta(hours=838, minutes=59, seconds=59)] + [None] * 4

    s = read_table(path, "tmp_zero.z", "string")
    final = {r[0]: list(r) for r in text}
    state: dict[int, list] = {}
    for row in s.to_pylist():
        if row["_change_type"] in ("insert", "update_postimage"):
            state[row["id"]] = [row[n] for n in names]
    assert state == final

    # and every image as mariadb-binlog prints it
    vv = [img for img in parse_vv(run_mariadb_binlog_vv(path)) if img.table == "tmp_zero.z"]
    assert len(vv) == len(s)
    for row, image in zip(s.to_pylist(), vv):
        for v in image.values[1:]:
            name = names[v.index - 1]
            ours = row[name]
            if v.is_null:
                assert ours is None
            elif name == "d":
                assert v.text == f"'{ours.replace('-', ':')}'"
            elif name.startswith("ts"):
                if ours.startswith("0000"):
                    assert re.fullmatch(r"0(\.0+)?", v.text)
                else:
                    x = dt.datetime.fromisoformat(ours).replace(tzinfo=UTC)
                    assert v.text == _vv_text("ts", int(name[-1]), x)
            else:
                assert v.text == f"'{ours}'"


@pytest.mark.mariadb
def test_server_timestamps_at_zero_seconds_and_impossible_dates(server_utc):
    """TIMESTAMP(n) values of 0 seconds and a fraction (MariaDB stores '1970-01-01 00:00:00.000001'
    UTC so) are values, as SELECT and mariadb-binlog -vv show them; dates that do not exist
    (ALLOW_INVALID_DATES: '2001-02-29 23:59:59.999999') are null and counted in the warning of
    zero dates, and invalid_dates="string" returns their text as CAST(... AS CHAR) does."""
    path = server_utc.capture_binlog(
        "SET SESSION time_zone = '+00:00'",
        "SET SESSION sql_mode = 'ALLOW_INVALID_DATES'",
        "DROP DATABASE IF EXISTS tmp_frac",
        "CREATE DATABASE tmp_frac",
        "CREATE TABLE tmp_frac.f (id INT PRIMARY KEY, ts6 TIMESTAMP(6) NULL DEFAULT NULL, "
        "ts3 TIMESTAMP(3) NULL DEFAULT NULL, ts1 TIMESTAMP(1) NULL DEFAULT NULL, dt6 DATETIME(6) NULL, d DATE NULL)",
        "INSERT INTO tmp_frac.f VALUES (1, '1970-01-01 00:00:00.000001', '1970-01-01 00:00:00.001', "
        "'1970-01-01 00:00:00.9', '2001-02-29 23:59:59.999999', '2001-02-29'),"
        " (2, '1970-01-01 00:00:00.999999', '1970-01-01 00:00:01.5', '2038-01-19 03:14:07.9', '2001-04-31 00:00:00', "
        "'2000-02-29')",
        "SET SESSION sql_mode = ''",
        "INSERT INTO tmp_frac.f VALUES (3, 0, 0, 0, '0000-00-00 00:00:00', '0000-00-00')",
    )
    names = ["ts6", "ts3", "ts1", "dt6", "d"]
    text = {r[0]: r[1:] for r in server_utc.query(
        f"SELECT id, {', '.join(f'CAST({n} AS CHAR)' for n in names)} FROM tmp_frac.f ORDER BY id")}
    select = {r[0]: r[1:] for r in server_utc.query("SELECT id, ts6, ts3, ts1, dt6, d FROM tmp_frac.f ORDER BY id")}
    assert text[1][:3] == ("1970-01-01 00:00:00.000001", "1970-01-01 00:00:00.001", "1970-01-01 00:00:00.9")
    assert text[1][3:] == ("2001-02-29 23:59:59.999999", "2001-02-29")

    with pytest.warns(vecbinlog.DecodeWarning) as record:
        t = read_table(path, "tmp_frac.f")
    counts = {}
    for w in record:
        m = re.search(r"column '(\w+)': (\d+) of \d+ \w+ value\(s\) are zero or invalid dates", str(w.message))
        assert m, str(w.message)
        counts[m.group(1)] = int(m.group(2))
    assert counts == {"ts6": 1, "ts3": 1, "ts1": 1, "dt6": 3, "d": 2}  # row 3's zeros; rows 1-2's impossible dates
    for row in t.to_pylist():
        want = select[row["id"]]
        for n, v in zip(names, want):
            if isinstance(v, str):  # a zero or no such date (pymysql leaves it as text): null, and counted
                v = None
            if n.startswith("ts") and v is not None:
                v = v.replace(tzinfo=UTC)
            assert row[n] == v, (row["id"], n)
    s = read_table(path, "tmp_frac.f", "string")
    assert {r["id"]: tuple(r[n] for n in names) for r in s.to_pylist()} == text
    vv = [img for img in parse_vv(run_mariadb_binlog_vv(path)) if img.table == "tmp_frac.f"]
    printed = {img.values[0].text: {v.index: v.text for v in img.values} for img in vv}
    assert [printed["1"][k] for k in (2, 3, 4)] == ["0.000001", "0.001", "0.9"]
    assert printed["1"][5] == "'2001-02-29 23:59:59.999999'"
    for row in t.to_pylist():
        for k, n in enumerate(names[:3], start=2):
            if row[n] is not None:
                assert _vv_text("ts", int(n[-1]), row[n]) == printed[str(row["id"])][k]


@pytest.mark.mariadb
def test_server_old_formats(server_utc, mariadb_globals):
    """MariaDB 10.11 with mysql56_temporal_format=OFF still creates its pre-10.1 ("mariadb-5.3")
    temporal columns: TIME 11, DATETIME 12, TIMESTAMP 7 in the TABLE_MAP, no metadata. Without
    fractional seconds they are MySQL's old formats, which decode; with them, the values are
    larger than the type code says and the binlog does not give their size."""
    mariadb_globals(mysql56_temporal_format="OFF")
    path = server_utc.capture_binlog(
        "SET SESSION sql_mode = ''",
        "SET SESSION time_zone = '+00:00'",
        "DROP DATABASE IF EXISTS tmp_old",
        "CREATE DATABASE tmp_old",
        "CREATE TABLE tmp_old.o (id INT NOT NULL PRIMARY KEY, d DATE NULL, t TIME NULL, dt DATETIME NULL, "
        "ts TIMESTAMP NULL DEFAULT NULL)",
        "INSERT INTO tmp_old.o VALUES (1, '1000-01-01', '-838:59:59', '1000-01-01 00:00:00', '1970-01-01 00:00:01'),"
        " (2, '9999-12-31', '838:59:59', '9999-12-31 23:59:59', '2038-01-19 03:14:07'),"
        " (3, '0000-00-00', '-00:00:01', '0000-00-00 00:00:00', 0), (4, NULL, '00:00:00', NULL, NULL),"
        " (5, '2020-02-29', '-12:34:56', '2020-00-29 12:34:56', '2020-02-29 12:34:56')",
        "UPDATE tmp_old.o SET t = '100:00:00', dt = '2001-02-03 04:05:06' WHERE id = 4",
        # fractional seconds in the pre-10.1 format
        "CREATE TABLE tmp_old.h6 (a DATETIME(6) NOT NULL)",  # 8 bytes, like DATETIME: aligned, but not YYYYMMDDhhmmss
        "INSERT INTO tmp_old.h6 VALUES ('2020-01-02 03:04:05.678901'), ('1999-12-31 23:59:59.999999')",
        "CREATE TABLE tmp_old.h3 (id INT NOT NULL, ts TIMESTAMP(3) NULL DEFAULT NULL, t TIME(3) NULL)",
        "INSERT INTO tmp_old.h3 VALUES (1, '2020-01-02 03:04:05.678', '-12:34:56.789')",
        "CREATE TABLE tmp_old.h4 (id INT NOT NULL, dt DATETIME(4) NULL, v VARCHAR(10))",
        "INSERT INTO tmp_old.h4 VALUES (1, '2020-01-02 03:04:05.6789', 'abc'), (2, NULL, 'x')",
    )
    create = server_utc.query("SHOW CREATE TABLE tmp_old.o")[0][1]
    assert "mariadb-5.3" in create
    with vecbinlog.open(path) as log:
        assert [c.type for c in log.table_maps("tmp_old.o")[-1].columns] == [3, 10, 11, 12, 7]
        assert [c.type for c in log.table_maps("tmp_old.h6")[-1].columns] == [12]
        assert [c.type for c in log.table_maps("tmp_old.h3")[-1].columns] == [3, 7, 11]
        assert {c.meta for c in log.table_maps("tmp_old.h3")[-1].columns} == {0}

    names = ["id", "d", "t", "dt", "ts"]
    text = server_utc.query(f"SELECT id, {', '.join(f'CAST({n} AS CHAR)' for n in names[1:])} FROM tmp_old.o ORDER BY id")
    with pytest.warns(vecbinlog.DecodeWarning, match="pre-10.1 format"):
        s = read_table(path, "tmp_old.o", "string")
    state = {}
    for row in s.to_pylist():
        if row["_change_type"] in ("insert", "update_postimage"):
            state[row["id"]] = tuple(row[n] for n in names)
    assert state == {r[0]: r for r in text}

    with pytest.warns(vecbinlog.DecodeWarning, match="pre-10.1 format"), \
            pytest.warns(vecbinlog.DecodeWarning, match="zero or invalid dates"):
        t = read_table(path, "tmp_old.o")
    assert t.schema.field("t").type == pa.duration("us") and t.schema.field("ts").type == pa.timestamp("us", "UTC")
    final = {r[0]: r for r in server_utc.query("SELECT * FROM tmp_old.o ORDER BY id")}
    got = {}
    for row in t.to_pylist():
        if row["_change_type"] in ("insert", "update_postimage"):
            got[row["id"]] = tuple(_as_server(row[n]) for n in names)
    for k in (1, 2, 4):
        assert got[k] == final[k]
    assert got[3] == (3, None, -dt.timedelta(seconds=1), None, None)

    # the hi-res tables: an error, never garbage (mariadb-binlog fails on them too)
    with vecbinlog.open(path) as log, pytest.raises(vecbinlog.MalformedEventError) as err:
        log.read_table("tmp_old.h6")
    assert "mysql56_temporal_format=OFF" in str(err.value) and "DATETIME" in str(err.value)
    # the row images do not add up: the error says why (it did not: "row image 1 runs past the end")
    for table, columns in (("tmp_old.h3", "ts (TIMESTAMP), t (TIME)"), ("tmp_old.h4", "dt (DATETIME)")):
        with vecbinlog.open(path) as log, pytest.raises(vecbinlog.MalformedEventError) as err:
            log.read_table(table)
        assert "runs past the end of the event" in str(err.value)
        assert "mysql56_temporal_format=OFF" in str(err.value) and columns in str(err.value), str(err.value)
        assert err.value.event_type == "WRITE_ROWS_EVENT_V1" and err.value.offset is not None


@pytest.mark.mariadb
def test_server_old_formats_print_like_mariadb_binlog(server_utc, mariadb_globals):
    mariadb_globals(mysql56_temporal_format="OFF")
    path = server_utc.capture_binlog(
        "SET SESSION sql_mode = ''",
        "SET SESSION time_zone = '+00:00'",
        "DROP DATABASE IF EXISTS tmp_old2",
        "CREATE DATABASE tmp_old2",
        "CREATE TABLE tmp_old2.o (id INT NOT NULL PRIMARY KEY, d DATE NULL, t TIME NULL, dt DATETIME NULL, "
        "ts TIMESTAMP NULL DEFAULT NULL)",
        "INSERT INTO tmp_old2.o VALUES (1, '1000-01-01', '-838:59:59', '1000-01-01 00:00:00', '1970-01-01 00:00:01'),"
        " (2, '9999-12-31', '838:59:59', '9999-12-31 23:59:59', '2038-01-19 03:14:07'),"
        " (3, '0000-00-00', '-00:00:01', '0000-00-00 00:00:00', 0), (4, NULL, '00:00:00', NULL, NULL)",
        "DELETE FROM tmp_old2.o WHERE id = 2",
    )
    vv = [img for img in parse_vv(run_mariadb_binlog_vv(path)) if img.table == "tmp_old2.o"]
    with pytest.warns(vecbinlog.DecodeWarning, match="pre-10.1 format"):
        s = read_table(path, "tmp_old2.o", "string").to_pylist()
    assert len(vv) == len(s) == 5
    for row, image in zip(s, vv):
        p = {v.index: v for v in image.values}
        assert [p[k].typestr for k in (2, 3, 4, 5)] == ["DATE", "TIME", "DATETIME", "TIMESTAMP"]
        for k, name in ((2, "d"), (3, "t"), (4, "dt")):
            if p[k].is_null:
                assert row[name] is None
            else:
                ours = row[name].replace("-", ":") if name == "d" else row[name]
                assert p[k].text == f"'{ours}'"
        if row["ts"] is None:
            assert p[5].is_null
        else:
            secs = 0 if row["ts"].startswith("0000") else int(dt.datetime.fromisoformat(row["ts"]).replace(tzinfo=UTC).timestamp())
            assert p[5].text == str(secs)
