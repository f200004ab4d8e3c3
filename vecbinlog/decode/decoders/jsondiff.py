"""Partial JSON updates: the diffs of PARTIAL_UPDATE_ROWS_EVENT, decoded and applied.

With ``binlog_row_value_options=PARTIAL_JSON`` MySQL 8 logs ``UPDATE t SET j =
JSON_SET(j, ...)`` (or ``JSON_REPLACE``/``JSON_REMOVE`` of the same column) as a
PARTIAL_UPDATE_ROWS_EVENT (type 39): laid out as UPDATE_ROWS v2, except that each *after*
image starts with ``value_options`` and, for JSON columns whose partial bit is set, holds a
diff vector instead of the document (``sql/log_event.cc``,
``Rows_log_event::print_verbose_one_row``; ``sql/json_diff.cc``)::

    after image   value_options  packed integer; bit 0x1 = PARTIAL_JSON_UPDATES
                  partial bits   only with PARTIAL_JSON_UPDATES: (JSON columns + 7) / 8 bytes,
                                 LSB first, one bit per JSON column *of the table* (in column
                                 order, whether or not the column is in the after image)
                  null bitmap and values as in any row image
    diff vector   length         the JSON column's length prefix (4 bytes: uint4korr in
                                 Json_diff_vector::read_binary); the diffs fill it exactly
                  diff*          operation  uint8: 0 REPLACE, 1 INSERT, 2 REMOVE
                                 path       packed-integer length, then the path text
                                            (``Json_path::to_string``: ``$.a``, ``$[2]``,
                                            ``$."k e y"``, ``$[last-1]``)
                                 value      packed-integer length, then a binary JSON
                                            document; absent for REMOVE

Applying follows ``apply_json_diffs`` (``sql/json_diff.cc``) on the DOM of the before value:
REPLACE needs the path to exist; INSERT needs the parent to exist and, in an object, the
member not to exist, and in an array inserts at the index (appends past the end); REMOVE
needs the member or the in-bounds cell. The root path is never a diff. A diff that does not
apply is an inconsistent event (MySQL's replica stops with ER_COULD_NOT_APPLY_JSON_DIFF)
and raises :class:`~vecbinlog.errors.MalformedEventError`.

The documents are handled as MySQL's text (:func:`mysqljson.to_text`), parsed with
every number kept as its text (so DECIMAL ``9.00`` and doubles print as before), and printed
back with MySQL's layout: ``", "``/``": "`` separators, MySQL's string escapes, and object
keys ordered as ``Json_object`` orders them (by length, then bytes), which is the stored
order of every document MySQL writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...arrowbuild import numbers, strings
from ...errors import MalformedEventError
from ..rows import UPDATE_POST, UPDATE_PRE
from . import mysqljson
from .common import ColumnData

__all__ = ["JsonDiff", "DiffRejected", "OPERATIONS", "read_diffs", "parse_path", "apply_diffs", "apply_partial"]

#: enum_json_diff_operation (sql/json_diff.h), by its stored byte
OPERATIONS = ("REPLACE", "INSERT", "REMOVE")
REPLACE, INSERT, REMOVE = range(3)


@dataclass(frozen=True)
class JsonDiff:
    """One logged change: operation name, path text, and the new value as MySQL's JSON text
    (None for REMOVE)."""

    operation: str
    path: str
    value: str | None


class DiffRejected(Exception):
    """A diff that does not apply to the document (apply_json_diffs returns REJECTED)."""


def _packed(data: bytes, p: int, what: str) -> tuple[int, int]:
    """net_field_length_checked(): (value, next position)."""
    if p >= len(data):
        raise MalformedEventError(f"malformed JSON diff: {what} length past the end of the diff vector")
    first = data[p]
    if first < 251:
        return first, p + 1
    size = {252: 2, 253: 3, 254: 8}.get(first)
    if size is None:
        raise MalformedEventError(f"malformed JSON diff: {what} length starts with byte 0x{first:02x}")
    if p + 1 + size > len(data):
        raise MalformedEventError(f"malformed JSON diff: {what} length past the end of the diff vector")
    return int.from_bytes(data[p + 1 : p + 1 + size], "little"), p + 1 + size


def read_diffs(data: bytes) -> list[JsonDiff]:
    """The diffs of one diff vector (the bytes after the column's length prefix).

    Raises MalformedEventError (without a location) on bytes that are not a diff vector.
    """
    diffs: list[JsonDiff] = []
    p = 0
    while p < len(data):
        op = data[p]
        if op >= len(OPERATIONS):
            raise MalformedEventError(f"malformed JSON diff: operation {op} (0 REPLACE, 1 INSERT, 2 REMOVE)")
        n, p = _packed(data, p + 1, "path")
        if p + n > len(data):
            raise MalformedEventError(f"malformed JSON diff: path of {n} bytes past the end of the diff vector")
        try:
            path = data[p : p + n].decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedEventError("malformed JSON diff: the path is not utf8mb4") from None
        parse_path(path)  # Json_diff_vector::read_binary refuses paths it cannot parse
        p += n
        value = None
        if op != REMOVE:
            n, p = _packed(data, p, "value")
            if p + n > len(data):
                raise MalformedEventError(f"malformed JSON diff: value of {n} bytes past the end of the diff vector")
            value = mysqljson.to_text(data[p : p + n])
            p += n
        diffs.append(JsonDiff(OPERATIONS[op], path, value))
    return diffs


# -- paths -------------------------------------------------------------------------------

#: a path leg: a member name, or an array cell (index, counted from the end?)
Leg = Union[str, tuple[int, bool]]


def _bad_path(path: str, why: str) -> MalformedEventError:
    return MalformedEventError(f"malformed JSON diff: path {path!r}: {why}")


def parse_path(path: str) -> list[Leg]:
    """The legs of a diff's path: member names and array cells (``[N]``, ``[last]``,
    ``[last-N]``). Wildcards, ``**`` and ranges never appear in diffs and are refused."""
    s = path.strip()
    if not s.startswith("$"):
        raise _bad_path(path, "does not start with '$'")
    legs: list[Leg] = []
    i, n = 1, len(s)
    while i < n:
        c = s[i]
        if c.isspace():
            i += 1
        elif c == ".":
            i += 1
            while i < n and s[i].isspace():
                i += 1
            if i < n and s[i] == '"':
                try:
                    name, end = json.JSONDecoder().raw_decode(s, i)
                except ValueError:
                    raise _bad_path(path, "bad quoted member name") from None
                legs.append(name)
                i = end
            else:
                j = i
                while j < n and s[j] not in ".[" and not s[j].isspace():
                    j += 1
                name = s[i:j]
                if not name or name == "*":
                    raise _bad_path(path, "member wildcard or empty member name")
                legs.append(name)
                i = j
        elif c == "[":
            j = s.find("]", i)
            if j < 0:
                raise _bad_path(path, "unclosed '['")
            inner = "".join(s[i + 1 : j].split())
            if inner.isdigit():
                legs.append((int(inner), False))
            elif inner == "last":
                legs.append((0, True))
            elif inner.startswith("last-") and inner[5:].isdigit():
                legs.append((int(inner[5:]), True))
            else:
                raise _bad_path(path, f"array leg [{s[i + 1 : j]}] is not a cell")
            i = j + 1
        else:
            raise _bad_path(path, f"unexpected {c!r}")
    return legs


def _array_index(leg: tuple[int, bool], size: int) -> tuple[int, bool]:
    """Json_array_index: (position, within bounds) of a cell leg in an array of ``size``."""
    index, from_end = leg
    if from_end:
        return (size - index - 1 if index < size else 0), index < size
    return min(index, size), index < size


# -- documents ---------------------------------------------------------------------------


class _Number(str):
    """A number kept as MySQL printed it."""


def _load(text: str) -> Any:  # a document: None, bool, _Number, str, list, dict
    return json.loads(text, parse_int=_Number, parse_float=_Number)


def _key_order(key: str) -> tuple[int, bytes]:
    b = key.encode("utf-8")
    return len(b), b


def _dump(node: Any, out: list[str]) -> None:
    if node is None:
        out.append("null")
    elif node is True:
        out.append("true")
    elif node is False:
        out.append("false")
    elif isinstance(node, _Number):
        out.append(node)
    elif isinstance(node, str):
        out.append(mysqljson.quote(node))
    elif isinstance(node, list):
        out.append("[")
        for k, v in enumerate(node):
            if k:
                out.append(", ")
            _dump(v, out)
        out.append("]")
    else:
        out.append("{")
        for k, key in enumerate(sorted(node, key=_key_order)):
            out.append(", " if k else "")
            out.append(mysqljson.quote(key))
            out.append(": ")
            _dump(node[key], out)
        out.append("}")


def _seek(doc: Any, legs: list[Leg]) -> Any:
    """seek_exact_path(): the value at ``legs``, or None (no auto-wrapping)."""
    for leg in legs:
        if isinstance(doc, list) and isinstance(leg, tuple):
            pos, inside = _array_index(leg, len(doc))
            if not inside:
                return None
            doc = doc[pos]
        elif isinstance(doc, dict) and isinstance(leg, str):
            if leg not in doc:
                return None
            doc = doc[leg]
        else:
            return None
    return doc


def _apply(doc: Any, diff: JsonDiff) -> Any:
    legs = parse_path(diff.path)
    if not legs:
        raise DiffRejected("a diff of the whole document")
    parent = _seek(doc, legs[:-1])
    last = legs[-1]
    value = None if diff.value is None else _load(diff.value)
    if isinstance(parent, dict) and isinstance(last, str):
        exists = last in parent
        if diff.operation == "INSERT" and exists:
            raise DiffRejected("INSERT of a member that exists")
        if diff.operation != "INSERT" and not exists:
            raise DiffRejected(f"{diff.operation} of a member that does not exist")
        if diff.operation == "REMOVE":
            del parent[last]
        else:
            parent[last] = value
    elif isinstance(parent, list) and isinstance(last, tuple):
        pos, inside = _array_index(last, len(parent))
        if diff.operation == "INSERT":
            parent.insert(pos, value)
        elif not inside:
            raise DiffRejected(f"{diff.operation} of a cell past the end of the array")
        elif diff.operation == "REMOVE":
            del parent[pos]
        else:
            parent[pos] = value
    else:
        raise DiffRejected("the path's parent does not exist or is not a container of that kind")


def apply_diffs(before: str, diffs: list[JsonDiff]) -> str:
    """The JSON text MySQL gives for ``before`` (a JSON text as MySQL prints it) once
    ``diffs`` are applied in order. Raises DiffRejected when one does not apply."""
    doc = _load(before)
    for k, diff in enumerate(diffs):
        try:
            _apply(doc, diff)
        except DiffRejected as exc:
            raise DiffRejected(f"diff {k + 1} ({diff.operation} {diff.path}): {exc}") from None
    out: list[str] = []
    _dump(doc, out)
    return "".join(out)


# -- columns -----------------------------------------------------------------------------


def apply_partial(
    arr: pa.Array, col: ColumnData, partial: np.ndarray, change: np.ndarray
) -> tuple[pa.Array, np.ndarray, dict[int, list[JsonDiff]]]:
    """Resolve the diff vectors of one JSON column (``partial``: bool (n,)).

    ``arr`` is the column decoded with those values null; the pre-image of an after image is
    the row just before it (the walk keeps each UPDATE's two images together, in order). Returns the column
    with every applicable diff applied, the rows whose diffs could not be (no before value),
    and the diffs of every partial row. One Python step per partial value.
    """
    unapplied = np.zeros(len(partial), bool)
    diffs: dict[int, list[JsonDiff]] = {}
    applied: list[int] = []
    texts: list[str] = []
    assert col.offsets is not None and col.lengths is not None  # a JSON column's: length-prefixed
    for r in np.flatnonzero(partial).tolist():
        if r == 0 or change[r] != UPDATE_POST or change[r - 1] != UPDATE_PRE:
            raise col.error("a JSON diff outside the after image of an UPDATE", r)
        start = int(col.offsets[r])
        try:
            ds = read_diffs(col.buf[start : start + int(col.lengths[r])].tobytes())
        except MalformedEventError as exc:
            raise col.error(exc.message, r) from None
        diffs[r] = ds
        before = arr[r - 1].as_py()
        if before is None:
            unapplied[r] = True
            continue
        try:
            texts.append(apply_diffs(before, ds))
        except DiffRejected as exc:
            raise col.error(
                f"partial JSON update does not apply to the before image's value: {exc} "
                "(a MySQL replica stops with ER_COULD_NOT_APPLY_JSON_DIFF)", r
            ) from None
        applied.append(r)
    if applied:
        mask = np.zeros(len(partial), bool)
        mask[applied] = True
        arr = pc.replace_with_mask(arr, numbers(mask), strings(texts, arr.type))
    return arr, unapplied, diffs
