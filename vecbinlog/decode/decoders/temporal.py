"""Temporal columns: DATE, TIME, DATETIME, TIMESTAMP, old and new (5.6.4+) formats, exactly.

====================  ===========================================  ============================
type (code)           row-image bytes                              Arrow type
====================  ===========================================  ============================
DATE (10), NEWDATE    3, little-endian: day 5 bits, month 4, year  ``date32``
DATETIME2 (18)        5 big-endian + (fsp+1)//2 fraction bytes     ``timestamp[us]`` (wall clock)
DATETIME (12)         8, little-endian integer YYYYMMDDhhmmss      ``timestamp[us]`` (wall clock)
TIMESTAMP2 (17)       4 big-endian seconds + fraction bytes        ``timestamp[us, tz=UTC]``
TIMESTAMP (7)         4, little-endian seconds                     ``timestamp[us, tz=UTC]``
TIME2 (19)            3 big-endian, offset 0x800000, + fraction    ``duration[us]``
TIME (11)             3, little-endian signed integer hhmmss       ``duration[us]``
====================  ===========================================  ============================

fsp (the fractional-second precision, 0-6) is the field metadata of the ``2`` types; the old
formats have none. The packed formats follow mysys/my_time.cc (MySQL) and sql/compat56.cc
(MariaDB)::

    DATETIME2  intpart = uint40_be - 0x8000000000
               ymd = intpart >> 17 (ym = ymd >> 5: year = ym // 13, month = ym % 13; day = ymd & 31)
               hms = intpart & 0x1ffff (hour = hms >> 12, minute = hms >> 6 & 63, second = hms & 63)
               fraction: fsp 1-2 int8 * 10000, 3-4 int16_be * 100, 5-6 int24_be   (never negative)
    TIME2      fsp 0:   packed = (uint24_be - 0x800000) << 24
               fsp 1-2: intpart = uint24_be - 0x800000, frac = uint8;     fsp 3-4: frac = uint16_be
                        a negative value stores its fraction "reversed": when intpart < 0 and
                        frac != 0, intpart += 1 and frac -= 0x100 (0x10000), so -00:00:00.01 is
                        7fffff.ff; then packed = (intpart << 24) + frac * 10000 (* 100)
               fsp 5-6: packed = uint48_be - 0x800000000000
               value = sign(packed) * (hms(|packed| >> 24) + (|packed| & 0xffffff) us)
    TIMESTAMP2 seconds = uint32_be; fraction unsigned: fsp 1-2 * 10000, 3-4 * 100, 5-6 as is

Zero and partly-zero dates ('0000-00-00', '2020-00-15', a TIMESTAMP of 0, which MySQL shows
as '0000-00-00 00:00:00', and with ALLOW_INVALID_DATES '2021-02-30') are legal in MySQL but
not in Arrow. With ``DecodeOptions.invalid_dates == "null"`` (default) they are null in the
typed column and one warning per column says how many there were; with ``"string"`` every
temporal column is ``string``, MySQL's own text of each value ('2020-00-15',
'0000-00-00 00:00:00.000', '-838:59:59'; TIMESTAMP in UTC), so nothing is lost.

A value that no MySQL or MariaDB server can write (month 13, minute 61, a DATETIME2 with its
sign bit clear...) raises ``MalformedEventError``: it means the row images are not what the
TABLE_MAP says. The known cause is MariaDB's pre-10.1 ("mariadb-5.3") TIME(n), DATETIME(n)
and TIMESTAMP(n) with n > 0, written by MariaDB 5.3-10.0 and by later versions for tables
created with ``mysql56_temporal_format=OFF``: the TABLE_MAP gives them the old type codes
(TIME 11, DATETIME 12, TIMESTAMP 7) and no metadata, but their values are 3+ceil(n/2),
5-8 and 4+ceil(n/2) bytes, so their size is not in the binlog (mariadb-binlog cannot print
them either). Mostly the rows event then does not add up (``MalformedEventError`` from the
row placement); when it happens to, a DATETIME(n) or TIME(n) is caught here by its values,
but a TIMESTAMP(n) cannot be: any 4 bytes are a valid old TIMESTAMP. E.g. a table holding
only a ``TIMESTAMP(2) NOT NULL`` column, 5 rows in one event (5 x 6 bytes read as 6 x 5),
decodes without an error into wrong values. Nothing in the binlog tells these columns from
TIMESTAMP(0) ones.

Everything is array arithmetic over whole columns; text is built by writing digits into a
2-D byte array, one column of characters at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ...constants import ColumnType as T
from ...errors import MalformedEventError
from ...jit import check_spans, kernel
from ...tables.table_map import ColumnSpec
from .calendar import (DAYS_IN_MONTH, LEAP, MONTH_START, YEAR_START, bad_calendar_date, bad_date, civil_days,
                       civil_from_days, days_from_civil)
from .common import ColumnData, CountedNote, DecodeOptions, binary_like, validity

__all__ = ["arrow_type", "decode"]

_DATE_TYPES = (T.MYSQL_TYPE_DATE, T.MYSQL_TYPE_NEWDATE)
_DATETIME_TYPES = (T.MYSQL_TYPE_DATETIME, T.MYSQL_TYPE_DATETIME2)
_TIMESTAMP_TYPES = (T.MYSQL_TYPE_TIMESTAMP, T.MYSQL_TYPE_TIMESTAMP2)
_TIME_TYPES = (T.MYSQL_TYPE_TIME, T.MYSQL_TYPE_TIME2)
_OLD_HIRES_HINT = (
    "; if a MariaDB server wrote this binlog, the column may be a TIME(n)/DATETIME(n)/TIMESTAMP(n) "
    "with fractional seconds in MariaDB's pre-10.1 format (MariaDB 5.3-10.0, or a table created with "
    "mysql56_temporal_format=OFF): the binlog gives such a column the old type code without its size, "
    "so its row images cannot be decoded (mariadb-binlog cannot print them either)"
)

_FRAC_SCALE = {0: 0, 1: 10_000, 2: 100, 3: 1}  # fraction bytes -> microseconds per unit
#: "00".."99" as little-endian uint16 (the two ASCII digits, tens first)
_PAIRS16 = np.array([(48 + k // 10) | (48 + k % 10) << 8 for k in range(100)], "<u2")


# -- options and types ---------------------------------------------------------------------------


def _mode(options: DecodeOptions) -> str:
    mode = options.invalid_dates
    if mode not in ("null", "string"):
        raise ValueError(f'invalid_dates must be "null" or "string", not {mode!r}')
    return mode


def fsp(spec: ColumnSpec) -> int:
    """Fractional-second digits of the column: the field metadata of TIME2/DATETIME2/TIMESTAMP2."""
    if spec.type in (T.MYSQL_TYPE_TIME2, T.MYSQL_TYPE_DATETIME2, T.MYSQL_TYPE_TIMESTAMP2):
        return spec.meta
    return 0


def arrow_type(spec: ColumnSpec, name: str, options: DecodeOptions) -> pa.DataType:
    if _mode(options) == "string":
        return pa.string()
    t = spec.type
    if t in _DATE_TYPES:
        return pa.date32()
    if t in _DATETIME_TYPES:
        return pa.timestamp("us")
    if t in _TIMESTAMP_TYPES:
        return pa.timestamp("us", tz="UTC")
    if t in _TIME_TYPES:
        return pa.duration("us")
    raise AssertionError(f"not a temporal type: {t}")


# -- byte helpers --------------------------------------------------------------------------------


def _be(raw: np.ndarray, start: int, nbytes: int) -> np.ndarray:
    """Unsigned big-endian integer of bytes ``start:start+nbytes`` of each row, as int64."""
    out = np.zeros(len(raw), np.int64)
    for k in range(start, start + nbytes):
        out <<= 8
        out |= raw[:, k]
    return out


def _le(raw: np.ndarray, nbytes: int) -> np.ndarray:
    """Unsigned little-endian integer of the first ``nbytes`` bytes of each row, as int64 (nbytes < 8)
    or uint64 (nbytes == 8)."""
    if nbytes == 8:
        return np.ascontiguousarray(raw[:, :8]).view("<u8").reshape(len(raw))
    if nbytes == 4:
        return np.ascontiguousarray(raw[:, :4]).view("<u4").reshape(len(raw)).astype(np.int64)
    out = np.zeros(len(raw), np.int64)
    for k in range(nbytes - 1, -1, -1):
        out <<= 8
        out |= raw[:, k]
    return out


# -- parsing each format into fields ---------------------------------------------------------------


class _Fields:
    """Decoded parts of a column. ``impossible``: values no server writes; ``invalid``: legal in
    MySQL, not in Arrow (zero dates)."""

    def __init__(self, n: int):
        z = np.zeros(n, np.int64)
        self.year = self.month = self.day = self.hour = self.minute = self.second = self.usec = z
        self.seconds = z  # TIMESTAMP: seconds since the epoch
        self.negative = np.zeros(n, bool)
        self.impossible = np.zeros(n, bool)
        self.invalid = np.zeros(n, bool)
        self.why = ""


def _fraction(raw: np.ndarray, start: int, digits: int, signed: bool) -> np.ndarray:
    nbytes = (digits + 1) // 2
    if nbytes == 0:
        return np.zeros(len(raw), np.int64)
    v = _be(raw, start, nbytes)
    if signed:
        half = 1 << (8 * nbytes - 1)
        v = (v ^ half) - half
    return v * _FRAC_SCALE[nbytes]


def _parse_date(raw: np.ndarray) -> _Fields:
    f = _Fields(len(raw))
    v = _le(raw, 3)
    f.day, f.month, f.year = v & 31, (v >> 5) & 15, v >> 9
    f.impossible = (f.month > 12) | (f.year > 9999)
    f.why = "month over 12 or year over 9999"
    return f


def _parse_datetime_old(raw: np.ndarray) -> _Fields:
    f = _Fields(len(raw))
    v = _le(raw, 8).view(np.int64)  # values over 2**63 are negative: impossible too
    too_big = (v < 0) | (v > 99991231235959)
    v = np.where(too_big, 0, v)
    d = v // 1_000_000
    t = (v - d * 1_000_000).astype(np.int32)
    d = d.astype(np.int32)
    # int32 to divide fast, int64 for the arithmetic that follows
    f.year, f.month, f.day = ((x).astype(np.int64) for x in (d // 10000, d // 100 % 100, d % 100))
    f.hour, f.minute, f.second = ((x).astype(np.int64) for x in (t // 10000, t // 100 % 100, t % 100))
    f.impossible = too_big | (f.month > 12) | (f.day > 31) | (f.hour > 23) | (f.minute > 59) | (f.second > 59)
    f.why = "not a YYYYMMDDhhmmss number"
    return f


def _parse_datetime2(raw: np.ndarray, digits: int) -> _Fields:
    f = _Fields(len(raw))
    f.year, f.month, f.day, f.hour, f.minute, f.second, f.usec = (np.empty(len(raw), np.int64) for _ in range(7))
    f.impossible = np.empty(len(raw), bool)
    check_spans(raw.shape[1], 0, 5 + (digits + 1) // 2, "DATETIME2 values' bytes")
    _datetime2_fields(raw, (digits + 1) // 2, f.year, f.month, f.day, f.hour, f.minute, f.second, f.usec,
                      f.impossible)
    f.why = "negative, or a field out of range"
    return f


@kernel(inline="always")
def _datetime2_at(raw, i, nfrac):  # pragma: no cover - compiled
    """DATETIME2 value ``i`` (my_datetime_packed_from_binary): 5 bytes big-endian, less
    0x8000000000, then ``nfrac`` bytes of signed fraction. Returns (year, month, day, hour,
    minute, second, microseconds, impossible)."""
    packed = np.int64(0)
    for k in range(5):
        packed = (packed << 8) | raw[i, k]
    packed -= 0x8000000000
    frac = np.int64(0)
    for k in range(nfrac):
        frac = (frac << 8) | raw[i, 5 + k]
    if nfrac:
        half = np.int64(1) << (8 * nfrac - 1)
        frac = ((frac ^ half) - half) * (10_000 if nfrac == 1 else (100 if nfrac == 2 else 1))
    ymd, hms = packed >> 17, packed & 0x1FFFF
    ym = ymd >> 5
    y, mo, d = ym // 13, ym % 13, ymd & 31
    h, mi, sec = hms >> 12, (hms >> 6) & 63, hms & 63
    impossible = packed < 0 or y > 9999 or h > 23 or mi > 59 or sec > 59 or frac < 0 or frac > 999_999
    return y, mo, d, h, mi, sec, frac, impossible


@kernel
def _datetime2_fields(raw, nfrac, year, month, day, hour, minute, second, usec, impossible):  # pragma: no cover
    """DATETIME2 fields of every value, one pass (7 fields and a check per value in NumPy were 20 passes)."""
    for i in range(raw.shape[0]):
        (year[i], month[i], day[i], hour[i], minute[i], second[i], usec[i],
         impossible[i]) = _datetime2_at(raw, i, nfrac)


@kernel
def _datetime2_micros(raw, nfrac, valid, year_start, month_start, days_in_month, leap, out):  # pragma: no cover
    """Microseconds since the epoch of every DATETIME2 value with ``valid`` (0 where not), in
    one pass, without the fields in between; returns how many are impossible or invalid dates
    (the caller then takes the general way, which says which and why)."""
    bad = 0
    for i in range(raw.shape[0]):
        if not valid[i]:
            out[i] = 0
            continue
        y, mo, d, h, mi, sec, frac, impossible = _datetime2_at(raw, i, nfrac)
        bad += impossible or bad_date(y, mo, d, days_in_month, leap)
        out[i] = (civil_days(y, mo, d, year_start, month_start, leap) * 86_400_000_000
                  + ((h * 60 + mi) * 60 + sec) * 1_000_000 + frac)
    return bad


@kernel
def _date_days(raw, nfrac, valid, year_start, month_start, days_in_month, leap, out):  # pragma: no cover - compiled
    """Days since the epoch of every DATE value with ``valid`` (0 where not), in one pass: 3
    bytes little-endian, the day in bits 0-4, the month in 5-8, the year above; returns how many
    are impossible or invalid dates, as :func:`_datetime2_micros` (``nfrac``: unused, 0)."""
    bad = 0
    for i in range(raw.shape[0]):
        if not valid[i]:
            out[i] = 0
            continue
        v = np.int64(raw[i, 0]) | (np.int64(raw[i, 1]) << 8) | (np.int64(raw[i, 2]) << 16)
        y, mo, d = v >> 9, (v >> 5) & 15, v & 31
        bad += (mo > 12) | (y > 9999) | bad_date(y, mo, d, days_in_month, leap)
        out[i] = civil_days(y, mo, d, year_start, month_start, leap)
    return bad


@kernel(inline="always")
def _be_at(raw, i, start, nbytes):  # pragma: no cover - compiled
    """Unsigned big-endian integer of bytes ``start:start + nbytes`` of value ``i``."""
    v = np.int64(0)
    for k in range(start, start + nbytes):
        v = (v << 8) | raw[i, k]
    return v


@kernel
def _timestamp2_micros(raw, nfrac, valid, year_start, month_start, days_in_month, leap, out):  # pragma: no cover
    """Microseconds since the epoch of every TIMESTAMP2 value with ``valid`` (0 where not), in
    one pass: 4 bytes big-endian of seconds, ``nfrac`` of unsigned fraction; returns how many
    are impossible (a fraction over 999999 us) or MySQL's zero TIMESTAMP, as
    :func:`_datetime2_micros` (the calendar tables: unused)."""
    bad = 0
    scale = 10_000 if nfrac == 1 else (100 if nfrac == 2 else 1)
    for i in range(raw.shape[0]):
        if not valid[i]:
            out[i] = 0
            continue
        seconds = _be_at(raw, i, 0, 4)
        usec = _be_at(raw, i, 4, nfrac) * scale
        bad += (usec > 999_999) | ((seconds == 0) & (usec == 0))
        out[i] = seconds * 1_000_000 + usec
    return bad


@kernel
def _time2_micros(raw, nfrac, valid, year_start, month_start, days_in_month, leap, out):  # pragma: no cover
    """Signed microseconds of every TIME2 value with ``valid`` (0 where not), in one pass
    (:func:`_parse_time2`'s packed value, then its fields); returns how many have a field out
    of range, as :func:`_datetime2_micros` (the calendar tables: unused)."""
    bad = 0
    for i in range(raw.shape[0]):
        if not valid[i]:
            out[i] = 0
            continue
        if nfrac == 3:
            packed = _be_at(raw, i, 0, 6) - 0x800000000000
        else:
            intpart = _be_at(raw, i, 0, 3) - 0x800000
            if nfrac == 0:
                packed = intpart << 24
            else:
                frac = _be_at(raw, i, 3, nfrac)  # unsigned here (my_time_packed_from_binary)
                if intpart < 0 and frac != 0:  # a negative value's fraction is stored "reversed"
                    intpart += 1
                    frac -= np.int64(1) << (8 * nfrac)
                packed = (intpart << 24) + frac * (10_000 if nfrac == 1 else 100)
        a = -packed if packed < 0 else packed
        hms, usec = a >> 24, a & 0xFFFFFF
        h, mi, sec = (hms >> 12) & 1023, (hms >> 6) & 63, hms & 63
        bad += (h > 838) | (mi > 59) | (sec > 59) | (usec > 999_999)
        us = ((h * 60 + mi) * 60 + sec) * 1_000_000 + usec
        out[i] = -us if packed < 0 else us
    return bad


def _parse_timestamp(raw: np.ndarray, t: int, digits: int) -> _Fields:
    f = _Fields(len(raw))
    if t == T.MYSQL_TYPE_TIMESTAMP:
        f.seconds = _le(raw, 4)
    else:
        f.seconds = _be(raw, 0, 4)
        f.usec = _fraction(raw, 4, digits, signed=False)
        f.impossible = f.usec > 999_999
        f.why = "fraction over 999999 microseconds"
    # MySQL's zero TIMESTAMP, shown as '0000-00-00 00:00:00', is 0 seconds *and* 0 microseconds
    # (my_timestamp_from_binary, Field_timestampf); MariaDB stores '1970-01-01 00:00:00.000001' UTC
    # (and values below the range) as 0 seconds and a fraction, which is no zero value
    f.invalid = (f.seconds == 0) & (f.usec == 0)
    return f


def _parse_time_old(raw: np.ndarray) -> _Fields:
    f = _Fields(len(raw))
    v = _le(raw, 3)
    v = (v ^ 0x800000) - 0x800000  # sint3korr
    f.negative = v < 0
    a = np.abs(v)
    f.hour, f.minute, f.second = a // 10000, a // 100 % 100, a % 100
    f.impossible = (f.hour > 838) | (f.minute > 59) | (f.second > 59)
    f.why = "not a [-]hhmmss number within 838:59:59"
    return f


def _parse_time2(raw: np.ndarray, digits: int) -> _Fields:
    f = _Fields(len(raw))
    nfrac = (digits + 1) // 2
    if nfrac == 3:
        packed = _be(raw, 0, 6) - 0x800000000000
    else:
        intpart = _be(raw, 0, 3) - 0x800000
        if nfrac == 0:
            packed = intpart << 24
        else:
            frac = _be(raw, 3, nfrac)  # unsigned here (my_time_packed_from_binary)
            flip = (intpart < 0) & (frac != 0)
            intpart = intpart + flip
            frac = frac - flip * (1 << (8 * nfrac))
            packed = (intpart << 24) + frac * _FRAC_SCALE[nfrac]
    f.negative = packed < 0
    a = np.abs(packed)
    hms = a >> 24
    f.usec = a & 0xFFFFFF
    f.hour, f.minute, f.second = (hms >> 12) & 1023, (hms >> 6) & 63, hms & 63
    f.impossible = (f.hour > 838) | (f.minute > 59) | (f.second > 59) | (f.usec > 999_999)
    f.why = "a field out of range"
    return f


def _safe_value(t: int, width: int) -> bytes:
    """A harmless value of the type (2000-01-01, 00:00:00, 1 s), put where a row has no value."""
    if t in _DATE_TYPES:
        head = (2000 * 512 + 32 + 1).to_bytes(3, "little")
    elif t == T.MYSQL_TYPE_DATETIME:
        head = (20000101000000).to_bytes(8, "little")
    elif t == T.MYSQL_TYPE_DATETIME2:
        head = ((((2000 * 13 + 1) << 5 | 1) << 17) + 0x8000000000).to_bytes(5, "big")
    elif t == T.MYSQL_TYPE_TIMESTAMP:
        head = (1).to_bytes(4, "little")
    elif t == T.MYSQL_TYPE_TIMESTAMP2:
        head = (1).to_bytes(4, "big")
    elif t == T.MYSQL_TYPE_TIME2:
        head = b"\x80"
    else:
        head = b""
    return head + bytes(width - len(head))


def _gather(col: ColumnData) -> np.ndarray:
    """The ``width`` bytes of each value, (n, width) uint8; rows without a value hold a harmless one."""
    n, width = len(col), col.width
    if n == 0:
        return np.zeros((0, width), np.uint8)
    raw = col.fixed_bytes()
    if not col.valid.all():
        raw[~col.valid] = np.frombuffer(_safe_value(col.spec.type, width), np.uint8)
    return raw


def _check(col: ColumnData) -> None:
    """The column's precision and width are what its type allows."""
    spec = col.spec
    t, digits = spec.type, fsp(spec)
    if t in (T.MYSQL_TYPE_TIME2, T.MYSQL_TYPE_DATETIME2, T.MYSQL_TYPE_TIMESTAMP2) and not 0 <= digits <= 6:
        raise MalformedEventError(
            f"column {col.name!r}: {spec.type_name} with fractional-second precision {digits} (0-6 allowed)",
            path=col.path, offset=None, event_type="TABLE_MAP_EVENT",
        )
    expected = spec.storage()[1]
    if col.width != expected:
        raise MalformedEventError(
            f"column {col.name!r}: {spec.type_name} values are {expected} bytes, got {col.width}",
            path=col.path, offset=col.offset_of(0) if len(col) else None, event_type="rows event",
        )


def _parse(col: ColumnData) -> _Fields:
    _check(col)
    t, digits = col.spec.type, fsp(col.spec)
    raw = _gather(col)
    if t in _DATE_TYPES:
        f = _parse_date(raw)
    elif t == T.MYSQL_TYPE_DATETIME:
        f = _parse_datetime_old(raw)
    elif t == T.MYSQL_TYPE_DATETIME2:
        f = _parse_datetime2(raw, digits)
    elif t in _TIMESTAMP_TYPES:
        f = _parse_timestamp(raw, t, digits)
    elif t == T.MYSQL_TYPE_TIME:
        f = _parse_time_old(raw)
    else:
        f = _parse_time2(raw, digits)
    f.impossible &= col.valid
    if f.impossible.any():
        row = int(np.argmax(f.impossible))
        hint = _OLD_HIRES_HINT if t in (T.MYSQL_TYPE_TIME, T.MYSQL_TYPE_DATETIME, T.MYSQL_TYPE_TIMESTAMP) else ""
        raise col.error(
            f"{int(f.impossible.sum())} value(s) are not a valid {col.spec.type_name} ({f.why}), "
            f"the first is {bytes(raw[row]).hex()}{hint}",
            row,
        )
    if t in _DATE_TYPES or t in _DATETIME_TYPES:
        f.invalid = bad_calendar_date(f.year, f.month, f.day)
    f.invalid &= col.valid
    return f


# -- text (MySQL's own form) ---------------------------------------------------------------------


def _put(out: np.ndarray, col: int, value: np.ndarray, width: int) -> None:
    """Write ``value`` zero-padded to ``width`` digits at character column ``col`` (value < 10**width)."""
    if width % 2:
        out[:, col] = 48 + value // 10 ** (width - 1)
        value = value % 10 ** (width - 1)
        col += 1
        width -= 1
    for k in range(0, width, 2):
        pair = value // 10 ** (width - k - 2) % 100 if width - k > 2 else value % 100
        out[:, col + k:col + k + 2].view("<u2")[:, 0] = _PAIRS16[pair]


def _text_array(col: ColumnData, f: _Fields) -> pa.Array:
    """MySQL's text of every value (rows without a value hold a harmless one, then dropped)."""
    t = col.spec.type
    digits = fsp(col.spec)
    valid = col.valid
    m = len(valid)
    frac_width = digits + 1 if digits else 0
    start = None
    if t in _TIME_TYPES:
        # right-aligned "-hhh:mm:ss.ffffff"; the text starts at its sign or its hours
        width = 4 + 6 + frac_width
        out = np.empty((m, width), np.uint8)
        out[:, 0] = 45  # '-'
        _put(out, 1, f.hour, 3)
        out[:, 4] = out[:, 7] = 58  # ':'
        _put(out, 5, f.minute, 2)
        _put(out, 8, f.second, 2)
        start = np.where(f.hour < 100, 2, 1) - f.negative
        neg = np.flatnonzero(f.negative)
        out[neg, start[neg]] = 45
    else:
        year, month, day, hour, minute, second, usec = f.year, f.month, f.day, f.hour, f.minute, f.second, f.usec
        if t in _TIMESTAMP_TYPES:
            zero = f.invalid  # MySQL's zero TIMESTAMP: '0000-00-00 00:00:00'
            days, secs = np.divmod(f.seconds, 86400)
            year, month, day = (np.where(zero, 0, x) for x in civil_from_days(days))
            hour, minute, second = secs // 3600, secs // 60 % 60, secs % 60
            usec = np.where(zero, 0, usec)
        date_only = t in _DATE_TYPES
        width = 10 if date_only else 19 + frac_width
        out = np.empty((m, width), np.uint8)
        _put(out, 0, year, 4)
        out[:, 4] = out[:, 7] = 45  # '-'
        _put(out, 5, month, 2)
        _put(out, 8, day, 2)
        if not date_only:
            out[:, 10] = 32  # ' '
            _put(out, 11, hour, 2)
            out[:, 13] = out[:, 16] = 58
            _put(out, 14, minute, 2)
            _put(out, 17, second, 2)
    if frac_width:
        out[:, width - frac_width] = 46  # '.'
        _put(out, width - digits, f.usec // 10 ** (6 - digits), digits)

    all_valid = bool(valid.all())
    if start is None:
        lens = np.where(valid, width, 0) if not all_valid else np.full(m, width, np.int64)
        data = (out if all_valid else out[valid]).reshape(-1)
    else:
        # the characters from ``start`` to the end of each row that has a value
        lens = np.where(valid, width - start, 0)
        total = int(lens.sum())
        row_off = np.zeros(m + 1, np.int64)
        np.cumsum(lens, out=row_off[1:])
        shift = np.repeat(np.arange(m, dtype=np.int64) * width + start - row_off[:-1], lens)
        data = np.take(out.reshape(-1), shift + np.arange(total, dtype=np.int64))
    offsets = np.zeros(m + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    return binary_like(pa.string(), m, offsets, data, valid)


def _subset(f: _Fields, keep: np.ndarray) -> _Fields:
    g = _Fields(len(keep))
    for a in ("year", "month", "day", "hour", "minute", "second", "usec", "seconds", "negative", "invalid"):
        setattr(g, a, getattr(f, a)[keep])
    return g


def _one_text(col: ColumnData, f: _Fields, row: int) -> str:
    """MySQL's text of one value (for messages)."""
    sub = ColumnData(
        spec=col.spec, name=col.name, buf=col.buf, offsets=None, lengths=None, width=col.width,
        valid=np.ones(1, bool), options=col.options, raw=col.raw[row:row + 1] if col.raw is not None else None,
    )
    return _text_array(sub, _subset(f, np.array([row]))).to_pylist()[0]


# -- decode ------------------------------------------------------------------------------------------


@kernel
def _micros(hour, minute, second, usec, whole, kind, negative, ok, out):  # pragma: no cover - compiled
    """Microseconds of each value, 0 where not ``ok``: kind -1 a TIME (signed h:m:s.us), 0 a
    TIMESTAMP (``whole`` = seconds since the epoch), 1 a DATETIME (``whole`` = days since the
    epoch, then h:m:s.us)."""
    for i in range(len(out)):
        if not ok[i]:
            out[i] = 0
        elif kind == 0:
            out[i] = whole[i] * 1_000_000 + usec[i]
        else:
            us = ((hour[i] * 60 + minute[i]) * 60 + second[i]) * 1_000_000 + usec[i]
            if kind < 0:
                out[i] = -us if negative[i] else us
            else:
                out[i] = whole[i] * 86_400_000_000 + us


#: the temporal types decoded in one compiled pass: type -> (kernel, dtype of its values, the
#: bytes of a value it reads before the fraction's)
_ONE_PASS: dict[int, tuple[Any, type[np.integer], int]] = {
    T.MYSQL_TYPE_DATETIME2: (_datetime2_micros, np.int64, 5),
    T.MYSQL_TYPE_DATE: (_date_days, np.int32, 3),
    T.MYSQL_TYPE_NEWDATE: (_date_days, np.int32, 3),
    T.MYSQL_TYPE_TIMESTAMP2: (_timestamp2_micros, np.int64, 4),
    T.MYSQL_TYPE_TIME2: (_time2_micros, np.int64, 3),
}


def _one_pass(col: ColumnData) -> pa.Array | None:
    """A DATETIME2, DATE, TIMESTAMP2 or TIME2 column in one compiled pass (DATETIME2 4-5x, DATE
    3-4x, TIMESTAMP2 and TIME2 2.3-6x the general way, which makes each field a column first), or
    None when a value is impossible or an invalid date: then the general way decodes it, with
    its warning or error."""
    _check(col)
    n = len(col)
    convert, dtype, head = _ONE_PASS[col.spec.type]
    values = np.empty(n, dtype)
    raw = col.fixed_bytes()
    nfrac = (fsp(col.spec) + 1) // 2
    check_spans(raw.shape[1], 0, head + nfrac, "temporal values' bytes", col.path)
    if n and convert(raw, nfrac, col.valid, YEAR_START, MONTH_START,
                     DAYS_IN_MONTH, LEAP.view(np.uint8), values):
        return None
    vbuf, nulls = validity(col.valid)
    return pa.Array.from_buffers(arrow_type(col.spec, col.name, col.options), n, [vbuf, pa.py_buffer(values)],
                                 null_count=nulls)


def decode(col: ColumnData) -> pa.Array:
    t = col.spec.type
    if t in _ONE_PASS and _mode(col.options) != "string":
        fast = _one_pass(col)
        if fast is not None:
            return fast
    f = _parse(col)
    if _mode(col.options) == "string":
        return _text_array(col, f)
    n = len(col)
    ok = col.valid & ~f.invalid
    values = np.empty(n, np.int64)
    if t in _TIME_TYPES:
        _micros(f.hour, f.minute, f.second, f.usec, f.hour, -1, f.negative, ok, values)
    elif t in _TIMESTAMP_TYPES:
        _micros(f.seconds, f.seconds, f.seconds, f.usec, f.seconds, 0, f.negative, ok, values)
    else:
        days = days_from_civil(f.year, f.month, f.day)  # garbage where invalid: masked below
        if t in _DATE_TYPES:
            values = np.where(ok, days, 0).astype(np.int32)
        else:
            _micros(f.hour, f.minute, f.second, f.usec, days, 1, f.negative, ok, values)
    n_invalid = int(np.count_nonzero(f.invalid))
    if n_invalid:
        first = int(np.argmax(f.invalid))
        col.warnings.append(CountedNote(
            f"column {{name!r}}: {{n}} of {{of}} {col.spec.type_name} value(s) are zero or invalid dates "
            "that Arrow cannot hold (the first is '{first}'); they are null here, "
            'and invalid_dates="string" returns every value as MySQL\'s text', col.name, n_invalid, n, _one_text(col, f, first)))
    atype = arrow_type(col.spec, col.name, col.options)
    vbuf, nulls = validity(ok)
    return pa.Array.from_buffers(atype, n, [vbuf, pa.py_buffer(np.ascontiguousarray(values))], null_count=nulls)
