"""The options of :func:`vecbinlog.open` that people pass in many forms, checked and
normalised (with errors that say what is accepted), and the progress bar it draws."""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any, Iterable

import numpy as np

from .constants import RowsKind

__all__ = ["WhenLike", "epoch", "change_kinds", "byte_offset", "CHANGE_KINDS"]

#: change_types names -> the kind of rows event
CHANGE_KINDS = {"insert": RowsKind.WRITE, "update": RowsKind.UPDATE, "delete": RowsKind.DELETE}

#: what since=/until= accept (pandas Timestamps are datetimes)
WhenLike = datetime | date | str | np.datetime64


def epoch(when: WhenLike | None, what: str) -> int | None:
    """``since``/``until`` in seconds since the epoch: a datetime (naive = UTC), a date (its
    midnight, UTC), a numpy datetime64 (UTC), or an ISO 8601 string ("2026-11-21",
    "2026-11-21T20:00:21Z", "2026-11-21 20:00:21+02:00")."""
    if when is None:
        return None
    if isinstance(when, str):
        try:
            when = datetime.fromisoformat(when.strip())
        except ValueError:
            raise ValueError(f"{what}: not an ISO 8601 date or date-time: {when!r} "
                             "(e.g. '2026-11-21', '2026-11-21T20:00:21', '2026-11-21 20:00:21+02:00')") from None
    elif isinstance(when, np.datetime64):
        if np.isnat(when):
            raise ValueError(f"{what}: NaT is not a point in time")
        when = when.astype("datetime64[us]").astype(datetime)
    elif isinstance(when, date) and not isinstance(when, datetime):
        when = datetime(when.year, when.month, when.day)
    if not isinstance(when, datetime):
        raise TypeError(f"{what}: a datetime, a date, a numpy datetime64 or an ISO 8601 string, "
                        f"not {type(when).__name__} {when!r}")
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    try:
        return int(when.timestamp())
    except (ValueError, OverflowError) as exc:  # pandas NaT is a datetime
        raise ValueError(f"{what}: {when!r} is not a point in time ({exc})") from None


def change_kinds(change_types: str | Iterable[str] | None) -> frozenset[int] | None:
    """``change_types``: one of "insert", "update", "delete", a comma-separated list of them, or
    an iterable of them (any case)."""
    if change_types is None:
        return None
    items = change_types.split(",") if isinstance(change_types, str) else change_types
    try:
        names = [c.strip().lower() for c in items]
    except (AttributeError, TypeError):
        raise TypeError(f"change_types: 'insert', 'update', 'delete', a comma-separated list or a list of them; "
                        f"not {change_types!r}") from None
    names = [c for c in names if c]
    unknown = [c for c in names if c not in CHANGE_KINDS]
    if unknown or not names:
        raise ValueError(f"change_types: {', '.join(map(repr, unknown)) if unknown else 'none given'}; "
                         "each is one of 'insert', 'update', 'delete'")
    return frozenset(int(CHANGE_KINDS[c]) for c in names)


def byte_offset(value: Any, what: str) -> int | None:
    """``start``/``stop``: a byte offset (an int, NumPy's too) of 0 or more."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what}: a byte offset (int), not {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{what}: a byte offset cannot be negative: {value}")
    return int(value)
