"""Replaying a change log row at a time, the slow obvious way, to check against SELECT."""

from __future__ import annotations

from typing import Any, Hashable


def apply_change(state: dict, key: Hashable, kind: str, values: Any, before: Hashable) -> Hashable:
    """Apply one row of a change log (``_change_type`` ``kind``, primary key ``key``) to
    ``state`` (key -> values); returns the key an update's before image names, which its
    after image (the next row) replaces."""
    if kind == "insert":
        state[key] = values
    elif kind == "delete":
        del state[key]
    elif kind == "update_preimage":
        return key
    else:
        del state[before]
        state[key] = values
    return before
