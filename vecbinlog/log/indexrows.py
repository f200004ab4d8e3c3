"""The rows of an archive index read back (:mod:`vecbinlog.index`), each checked against what
it promises before a plan, ``info()``, ``tables`` or a schema uses it, its long lists taken
out as arrays.

An index file is input, as a binlog is: it lives in object storage for months and is copied.
Its pages carry CRC32 checksums, verified as they are read (:mod:`.indexfiles`); what they do
not cover (the Parquet footer and page headers: a type, a field's name, a count of values),
and any index written by something else, is checked here, field by field: offsets inside
what was indexed, transaction starts ascending, a time per start, GTID blocks and layout
changes pointing at entries that exist, DDL counts where the DDL offsets say, counts that
add up, the ``info`` JSON of the shape ``Binlog.info()`` gives and agreeing with the row.
A row that does not hold together is named with what is wrong (expected vs got) by
:func:`take_rows`; the caller raises (a read) or indexes the binlog again (a build).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from ..binlog.gtid import GtidSet
from ..binlog.spec import MAGIC_LEN

__all__ = ["GtidBlocks", "TakenRow", "take_rows", "LISTS"]

#: the long lists of a row, taken out as arrays, not Python values
LISTS = ("transaction_starts", "start_times", "gtid_blocks")

#: the fields of INDEX_SCHEMA (dotted: inside a list of structs) that may be null; no other may
_MAY_BE_NULL = frozenset({"mtime_ns", "etag", "second_format", "first_time", "last_time", "ddl.database"})

#: the shape of the ``info`` JSON: ``Binlog.info()``'s entry of the file
#: (:meth:`vecbinlog.log.loginfo.FileSummary.as_dict` with row images). A type; a tuple: any of
#: them (None: null); ``{str: shape}``: an object of any keys; another dict: an object of
#: exactly those keys (but those of :data:`_INFO_OPTIONAL`); ``[shape]``: a list
_COUNTS = {str: int}
_INFO_SHAPE: dict[Any, Any] = {
    "path": str, "size": (int, None), "compression": (str, None), "splittable": bool,
    "server_version": str, "binlog_version": int, "checksum": str, "format_descriptions": int,
    "first_timestamp": (int, None), "last_timestamp": (int, None),
    "events": _COUNTS, "events_in_payloads": _COUNTS, "rows_events_by_table": _COUNTS,
    "events_not_decoded": {"skipped": _COUNTS, "unsupported": _COUNTS},
    "stopped_at": (None, {"offset": int, "reason": str}),
    "gtids": {"previous": (str, None), "first": (str, None), "last": (str, None), "count": int, "set": (str, None)},
    "row_images_by_table": {str: _COUNTS},
    "row_images_not_counted": [str],
}
_INFO_OPTIONAL = frozenset({"row_images_not_counted"})


@dataclass(frozen=True)
class GtidBlocks:
    """The ``gtid_blocks`` of an indexed file: of each block of its kept starts (from one to the
    next) and GTID source in it, the least and greatest number of that source's GTIDs there."""

    sources: list[str]  #: MySQL uuid (or uuid:tag), MariaDB domain-server
    block: np.ndarray  #: int64: a position in the file's kept starts
    source: np.ndarray  #: int32: a position in ``sources``
    first: np.ndarray  #: uint64
    last: np.ndarray  #: uint64

    def blocks_of(self, wanted: GtidSet) -> np.ndarray:
        """The blocks (sorted, distinct) whose ranges hold a number of ``wanted``: those that may hold
        one of its GTIDs (every one that does)."""
        return np.unique(self.block[wanted.holds(self.sources, self.source, self.first, self.last)])


@dataclass(frozen=True)
class TakenRow:
    """An index row that holds together."""

    row: dict[str, Any]  #: INDEX_SCHEMA's fields as Python values, but :data:`LISTS`
    starts: np.ndarray  #: int64: ``transaction_starts``
    times: np.ndarray  #: int64: ``start_times``
    gtids: GtidBlocks  #: ``gtid_sources`` and ``gtid_blocks``


def take_rows(table: pa.Table, ks: list[int], sizes: Sequence[int | None] | None = None) -> list[TakenRow | str]:
    """Rows ``ks`` of ``table`` (of INDEX_SCHEMA's columns and types), each a :class:`TakenRow`,
    or what is wrong with it (a sentence: which field, expected vs got). ``sizes``: of each,
    its binlog's size now (None: not known): a file read at offsets that is not smaller than
    it was indexed at (then it changed: it is not this row's file) was indexed no further than
    that. The rows are taken at once: their long lists as slices of one array each."""
    sub = table.take(ks)
    nulls = _null_fields(sub)
    starts, times, blocks = (sub.column(name).combine_chunks() for name in LISTS)
    so, sv = starts.offsets.to_numpy(), _numbers(starts.values).astype(np.int64)
    to, tv = times.offsets.to_numpy(), _numbers(times.values).astype(np.int64)
    bo = blocks.offsets.to_numpy()
    b_block, b_source, b_first, b_last = (_numbers(a) for a in blocks.values.flatten())
    suspects = _list_suspects(sub, so, sv, to, tv, bo, (b_block, b_source, b_first, b_last))
    out: list[TakenRow | str] = []
    for j, row in enumerate(sub.drop_columns(list(LISTS)).to_pylist()):
        if j in nulls:
            out.append(f"{nulls[j]} is null")
            continue
        lo, hi = bo[j], bo[j + 1]
        gtids = GtidBlocks(row["gtid_sources"], b_block[lo:hi].astype(np.int64), b_source[lo:hi].astype(np.int32),
                           b_first[lo:hi].astype(np.uint64), b_last[lo:hi].astype(np.uint64))
        taken = TakenRow(row, sv[so[j]:so[j + 1]], tv[to[j]:to[j + 1]], gtids)
        now = None if sizes is None else sizes[j]
        if now is not None and row["seekable"] and row["size"] <= now < row["indexed_to"]:
            out.append(f"indexed_to {row['indexed_to']}: expected at most the binlog's size ({now:,} bytes)")
            continue
        out.append(_problem(taken, bool(suspects[j])) or taken)
    return out


def _list_suspects(sub: pa.Table, so: np.ndarray, sv: np.ndarray, to: np.ndarray, tv: np.ndarray, bo: np.ndarray,
                   blocks: tuple[np.ndarray, ...]) -> np.ndarray:
    """bool per row of ``sub``: its transaction starts, their times or its GTID blocks may not
    hold together (:func:`_lists_problem` says what), from one pass over all the rows' lists
    (the offsets and values :func:`take_rows` took); False: they do."""
    n = sub.num_rows
    end, spacing = (_numbers(sub.column(c).combine_chunks()).astype(np.int64) for c in ("indexed_to", "start_spacing"))
    spacing = np.maximum(spacing, 1)  # (a spacing that is not a power of two is named before the lists)
    sources = np.diff(sub.column("gtid_sources").combine_chunks().offsets.to_numpy())
    bad = np.zeros(n, bool)
    counts = np.diff(so)
    row = np.repeat(np.arange(n), counts)
    starts = sv[so[0]:so[-1]]
    bad[row[(starts < MAGIC_LEN) | (starts >= end[row])]] = True
    block = starts // spacing[row]
    bad[row[1:][(row[1:] == row[:-1]) & (np.diff(block) <= 0)]] = True  # not one per block, ascending
    bad |= np.diff(to) != counts
    bad[np.repeat(np.arange(n), np.diff(to))[tv[to[0]:to[-1]] < 0]] = True
    block, source, first, last = (a[bo[0]:bo[-1]] for a in blocks)
    row = np.repeat(np.arange(n), np.diff(bo))
    bad[row[(block < 0) | (block >= counts[row]) | (source < 0) | (source >= sources[row]) | (first > last)]] = True
    return bad


def _numbers(values: pa.Array) -> np.ndarray:
    """The numbers of ``values``, a null as 0 (its row is named by :func:`_null_fields`)."""
    return (values.fill_null(0) if values.null_count else values).to_numpy(zero_copy_only=False)


def _null_fields(table: pa.Table) -> dict[int, str]:
    """Row -> the first field of it that is null where INDEX_SCHEMA's rows have a value."""
    out: dict[int, str] = {}

    def visit(arr: pa.Array, name: str, rows: np.ndarray) -> None:
        if arr.null_count and name not in _MAY_BE_NULL:
            for r in rows[np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))].tolist():
                out.setdefault(r, name)
        if pa.types.is_list(arr.type):  # (its values, those of null lists too: a row of one is named already)
            off = arr.offsets.to_numpy()
            visit(arr.values.slice(off[0], off[-1] - off[0]), name, rows[np.repeat(np.arange(len(arr)), np.diff(off))])
        elif pa.types.is_struct(arr.type):
            for f, child in zip(arr.type, arr.flatten()):
                visit(child, f"{name}.{f.name}", rows)

    for name in table.column_names:
        visit(table.column(name).combine_chunks(), name, np.arange(table.num_rows))
    return out


def _problem(t: TakenRow, suspect: bool = True) -> str | None:
    """What is wrong with an index row whose fields are not null where they must not be, or None
    (``suspect``: its long lists may not hold together: :func:`_list_suspects`)."""
    row, end = t.row, t.row["indexed_to"]
    inside = f"from {MAGIC_LEN} to indexed_to ({end})"
    if row["size"] < 0:
        return f"size {row['size']}: expected 0 or more"
    if end < MAGIC_LEN:
        return f"indexed_to {end}: expected {MAGIC_LEN} or more"
    if not MAGIC_LEN <= row["complete_to"] <= end:
        return f"complete_to {row['complete_to']}: expected {inside}"
    if row["second_format"] is not None and not MAGIC_LEN < row["second_format"] < end:
        return f"second_format {row['second_format']}: expected null or {inside}"
    if not _power_of_two(row["start_spacing"]):
        return f"start_spacing {row['start_spacing']}: expected a power of two"
    if (row["first_time"] is None) != (row["last_time"] is None) or not _ordered(row["first_time"], row["last_time"]):
        return f"first_time {row['first_time']}, last_time {row['last_time']}: expected both null or first <= last"
    if len(set(row["gtid_sources"])) != len(row["gtid_sources"]):
        return f"gtid_sources {row['gtid_sources']}: expected distinct sources"
    return (_lists_problem(t) if suspect else None) or _layouts_problem(row) or _info_problem(row)


def _lists_problem(t: TakenRow) -> str | None:
    """Transaction starts, their times and the GTID blocks."""
    row, starts, end = t.row, t.starts, t.row["indexed_to"]
    spacing = row["start_spacing"]
    if len(starts) and (int(starts[0]) < MAGIC_LEN or int(starts[-1]) >= end):
        return (f"transaction_starts from {int(starts[0])} to {int(starts[-1])}: expected from {MAGIC_LEN} to "
                f"before indexed_to ({end})")
    down = np.flatnonzero(np.diff(starts // spacing) <= 0)
    if len(down):
        k = int(down[0])
        return (f"transaction_starts[{k + 1}] {int(starts[k + 1])} after {int(starts[k])}: expected ascending, "
                f"one per block of start_spacing ({spacing}) bytes")
    if len(t.times) != len(starts) or (len(t.times) and int(t.times.min()) < 0):
        return f"start_times: expected {len(starts)} times of 0 or more (one per transaction start), got {len(t.times)}"
    g = t.gtids
    for name, a, n in (("block", g.block, len(starts)), ("source", g.source, len(g.sources))):
        if len(a) and (int(a.min()) < 0 or int(a.max()) >= n):
            return f"gtid_blocks.{name} from {int(a.min())} to {int(a.max())}: expected positions in 0..{n - 1}"
    if np.any(g.first > g.last):
        return "gtid_blocks: a block's first GTID number after its last"
    return None


def _layouts_problem(row: dict[str, Any]) -> str | None:
    """TABLE_MAPs, tables, layout changes and DDL: where they are and what they point at."""
    end = row["indexed_to"]
    inside = f"from {MAGIC_LEN} to before indexed_to ({end})"
    layouts, tables, changes, ddl = row["layouts"], row["tables"], row["layout_changes"], row["ddl"]
    for name, offsets in (("layouts", [x["offset"] for x in layouts]), ("layout_changes", [x["offset"] for x in changes]),
                          ("ddl", [x["offset"] for x in ddl])):
        bad = [o for o in offsets if not MAGIC_LEN <= o < end]
        if bad:
            return f"{name}.offset {bad[0]}: expected {inside}"
        if name != "layouts" and any(b < a for a, b in zip(offsets, offsets[1:])):
            return f"{name}.offset {offsets}: expected ascending"
    for x in layouts:
        if not 0 < x["post_header_len"] <= 255 or not x["body"]:
            return f"layouts of {x['table']}: post_header_len {x['post_header_len']} (expected 1..255), " \
                   f"{len(x['body'])} bytes of TABLE_MAP (expected some)"
    names = [x["name"] for x in tables]
    if len(set(names)) != len(names) or set(names) != {x["table"] for x in layouts}:
        return (f"tables {names}: expected each once, those of the layouts "
                f"({sorted({x['table'] for x in layouts})})")
    for x in tables:
        counts = [x[k] for k in ("write_events", "update_events", "delete_events")]
        if min(counts) < 0 or sum(counts) != x["rows_events"]:
            return f"tables {x['name']}: rows_events {x['rows_events']}: expected the sum of {counts}"
        bad = [r for r in x["ranges"] if not MAGIC_LEN <= r["start"] < r["stop"] <= end]
        if bad:
            return f"tables {x['name']}: range {bad[0]}: expected start < stop, {MAGIC_LEN} to indexed_to ({end})"
        if not _ordered(x["first_time"], x["last_time"]):
            return f"tables {x['name']}: first_time {x['first_time']} after last_time {x['last_time']}"
    before = np.searchsorted(np.array([d["offset"] for d in ddl], np.int64),
                             np.array([c["offset"] for c in changes], np.int64))
    for c, n in zip(changes, before.tolist()):
        if not 0 <= c["layout"] < len(layouts) or c["ddl_before"] != n:
            return (f"layout_changes at {c['offset']}: layout {c['layout']}, ddl_before {c['ddl_before']}: expected a "
                    f"position in the {len(layouts)} layouts, and {n} (the DDL offsets before it)")
    return None


def _info_problem(row: dict[str, Any]) -> str | None:
    """The ``info`` JSON: its shape, and the facts the row has too."""
    try:
        info = json.loads(row["info"])
    except (ValueError, RecursionError) as exc:  # (RecursionError: arrays in arrays, thousands deep)
        return f"info: expected JSON, got {row['info'][:40]!r}... ({exc})"
    problem = _shape_problem(info, _INFO_SHAPE, "info")
    if problem:
        return problem
    rows_events = {t["name"]: t["rows_events"] for t in row["tables"]}
    same = [
        ("server_version", info["server_version"], row["server_version"]),
        ("binlog_version", info["binlog_version"], row["binlog_version"]),
        ("checksum", info["checksum"], row["checksum"]),
        ("splittable", info["splittable"], row["seekable"]),
        ("first_timestamp", info["first_timestamp"], _seconds(row["first_time"])),
        ("last_timestamp", info["last_timestamp"], _seconds(row["last_time"])),
        ("rows_events_by_table", info["rows_events_by_table"], rows_events),
    ]
    for key, got, expected in same:
        if got != expected:
            return f"info.{key} {got!r}: expected {expected!r}, as the row says"
    if not set(info["row_images_by_table"]) <= set(rows_events):
        return f"info.row_images_by_table of {sorted(info['row_images_by_table'])}: expected tables of {sorted(rows_events)}"
    text = info["gtids"]["set"]
    try:
        if text:
            GtidSet(text)
    except ValueError as exc:
        return f"info.gtids.set {text!r}: expected a GTID set ({exc})"
    return None


def _shape_problem(value: Any, shape: Any, where: str) -> str | None:
    """Whether ``value`` (parsed JSON) has ``shape`` (see :data:`_INFO_SHAPE`): None, or what differs."""
    if isinstance(shape, tuple):
        if any(_shape_problem(value, s, where) is None for s in shape):
            return None
        return f"{where}: expected one of {[_shown(s) for s in shape]}, got {type(value).__name__}"
    if shape is None or isinstance(shape, type):
        fits = value is None if shape is None else isinstance(value, shape) and not (
            shape is int and isinstance(value, bool))
        return None if fits else f"{where}: expected {_shown(shape)}, got {type(value).__name__} {value!r:.40}"
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where}: expected a list, got {type(value).__name__}"
        return next((p for k, v in enumerate(value) if (p := _shape_problem(v, shape[0], f"{where}[{k}]"))), None)
    if not isinstance(value, dict):
        return f"{where}: expected an object, got {type(value).__name__}"
    if str in shape:
        if shape[str] is int and all(type(v) is int for v in value.values()):  # (counts: most of it, at once)
            return None
        return next((p for k, v in value.items() if (p := _shape_problem(v, shape[str], f"{where}.{k}"))), None)
    keys, wanted = set(value), set(shape)
    if not wanted - _INFO_OPTIONAL <= keys <= wanted:
        return f"{where}: expected the keys {sorted(wanted)}, got {sorted(keys)}"
    return next((p for k, v in value.items() if (p := _shape_problem(v, shape[k], f"{where}.{k}"))), None)


def _shown(shape: Any) -> str:
    return "null" if shape is None else shape.__name__ if isinstance(shape, type) else type(shape).__name__


def _power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def _ordered(a: datetime | None, b: datetime | None) -> bool:
    return a is None or b is None or a <= b


def _seconds(t: datetime | None) -> int | None:
    return None if t is None else int(t.timestamp())
