"""The proleptic Gregorian calendar (years 0-9999, as Arrow's date32 and timestamp hold them):
days since 1970-01-01 of a date and back, and which dates Arrow cannot hold, column at once or
one value at a time inside a compiled pass (:mod:`.temporal`).
"""

from __future__ import annotations

import numpy as np

from ...jit import kernel

__all__ = ["LEAP", "YEAR_START", "DAYS_IN_MONTH", "MONTH_START", "civil_days", "bad_date", "days_from_civil",
           "civil_from_days", "bad_calendar_date"]

_YEARS = np.arange(10000, dtype=np.int64)
#: whether each year is a leap year
LEAP = (_YEARS % 4 == 0) & ((_YEARS % 100 != 0) | (_YEARS % 400 == 0))
#: days from 1970-01-01 to January 1st of each year
YEAR_START = np.concatenate([[0], np.cumsum(365 + LEAP[:-1])]) - (1970 * 365 + 1970 // 4 - 1970 // 100 + 1970 // 400 + 1)
_MDAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 0, 0, 0]  # [month], 0 for months 0 and 13-15
#: [leap, month]: days in the month, and days of the year before it
DAYS_IN_MONTH = np.array([_MDAYS, [d + (m == 2) for m, d in enumerate(_MDAYS)]], np.int64)
MONTH_START = np.array([np.concatenate([[0, 0], np.cumsum(row[1:-1])]) for row in DAYS_IN_MONTH], np.int64)


def days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of dates with year 0-9999 and month 1-12 (table look-ups)."""
    days = np.empty(len(year), np.int64)
    _days_from_civil_into(year, month, day, YEAR_START, MONTH_START, LEAP.view(np.uint8), days)
    return days


@kernel(inline="always")
def civil_days(y, m, d, year_start, month_start, leap):  # pragma: no cover - compiled
    """Days since 1970-01-01 of year ``y``, month ``m``, day ``d`` (month 0 reads the table's
    0 column: garbage the caller masks)."""
    y = min(max(y, 0), 9999)
    return year_start[y] + month_start[leap[y], min(max(m, 0), 12)] + d - 1


@kernel(inline="always")
def bad_date(y, m, d, days_in_month, leap):  # pragma: no cover - compiled
    """Whether a date is one Arrow cannot hold (see :func:`bad_calendar_date`)."""
    m = min(max(m, 0), 12)  # no short-circuit "or": that made the loop 6x slower
    return (m == 0) | (d == 0) | (d > days_in_month[leap[min(max(y, 0), 9999)], m])


@kernel
def _days_from_civil_into(year, month, day, year_start, month_start, leap, days):  # pragma: no cover
    """:func:`days_from_civil` in one pass."""
    for i in range(len(year)):
        days[i] = civil_days(year[i], month[i], day[i], year_start, month_start, leap)


def civil_from_days(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(year, month, day) of days since 1970-01-01 (H. Hinnant's civil_from_days), column at once."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month, day


def bad_calendar_date(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Dates MySQL can store but Arrow cannot hold: a zero month or day, or a day past the
    month's end (ALLOW_INVALID_DATES). Expects year 0-9999 and month 0-12."""
    bad = np.empty(len(year), bool)
    _bad_calendar_date_into(year, month, day, DAYS_IN_MONTH, LEAP.view(np.uint8), bad)
    return bad


@kernel
def _bad_calendar_date_into(year, month, day, days_in_month, leap, bad):  # pragma: no cover
    for i in range(len(year)):
        bad[i] = bad_date(year[i], month[i], day[i], days_in_month, leap)
