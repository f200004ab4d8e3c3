"""The summary of one binlog file that the archive index keeps (:mod:`vecbinlog.index`), from one
walk of its headers (:class:`~.logwalk.LogWalk`, the walk every reader takes; no row decoded).

A summary is one row of :data:`INDEX_SCHEMA`: what split planning and the schema of a read
need, so that a driver plans from the index alone. It holds facts of the file only (nothing
that depends on the files before it): the DDL statements are kept as text, to be replayed in
log order with those of the other files (:meth:`~vecbinlog.tables.tracker.SchemaTracker.replay_statement`),
and the TABLE_MAPs as their bytes. A file still being written is summarised up to its last
whole event (``indexed_to``), and says where its last complete transaction ends (``complete_to``).

When that file has grown, the summary is extended rather than made again (:func:`extend_summary`):
the part after ``complete_to`` is walked from there (a transaction starts there, with its own
TABLE_MAPs) and its facts added to those before it, which gives the summary a walk of the
whole file gives. ``head_hash`` (of the file's first bytes, its FORMAT_DESCRIPTION with the
time the file was created) tells the file that grew from another one written since under its name.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from ..binlog.events import query_at
from ..binlog.file import BinlogFile
from ..binlog.gtid import union_gtid_sets
from ..binlog.spec import COMMON_HEADER_LEN, MAGIC_LEN, table_id_width
from ..binlog.transactions import FileScan, StartScan
from ..constants import ROWS_EVENTS, EventType
from ..decode.rows import CHANGE_TYPES
from ..tables.tracker import ddl_candidates
from .config import ReadConfig
from .loginfo import FileSummary
from .logwalk import LogWalk, Step

__all__ = ["INDEX_FORMAT_VERSION", "INDEX_SCHEMA", "RANGE_GAP_BYTES", "HEAD_BYTES", "KEPT_STARTS", "summarize_file",
           "extend_summary", "spaced_starts", "block_times", "gtid_blocks", "start_spacing", "cut_target", "head_hash"]

#: the version of :data:`INDEX_SCHEMA`, in each index file's key-value metadata (``vecbinlog.index``):
#: a reader refuses a version it does not know
#: 2: each table's rows events' first_time and last_time; 3: head_hash; 4: transaction starts spaced;
#: 5: row images by table and change type (in ``info``), start_times, gtid_sources and gtid_blocks;
#: 6: a CRC32 checksum in every page (verified as it is read: an index of 5 or before has none)
INDEX_FORMAT_VERSION = 6

#: the first bytes of a file whose hash the index keeps (``head_hash``; fewer when the file
#: was complete to less): a file that grew is extended only when they are the same
HEAD_BYTES = 4096

#: a table's rows events in transactions less than this far apart are one range: a range per
#: transaction would make the index as large as the log's transaction count for a table
#: written every other transaction, for ranges a split reads anyway
RANGE_GAP_BYTES = 1 << 20

#: the transaction starts the index keeps of a file at most: all of them when the file has no
#: more; else the first of each block of ``start_spacing`` bytes, the least power of two that
#: keeps no more (:func:`start_spacing`). Splits are cut at the first start of a block, with or
#: without an index (:func:`cut_target`): the same splits either way. Where the exact starts
#: between two kept ones matter (a FILE:POS or GTID to start from, a micro-batch's end), that
#: part of the file is walked (:func:`vecbinlog.splits.starts_near`). Every start of the 64 MB
#: OLTP bench file (~100 000) made its index 128 KB, and its gathered copy as much (0.40% of the
#: file); 3 893 (a start per 16 KiB) 14 KB each (0.043%)
KEPT_STARTS = 4096

_RANGE = pa.struct([
    ("start", pa.int64()),  # where the first transaction of the range starts
    ("stop", pa.int64()),  # where the transaction after its last one starts (or indexed_to)
])

#: One row per binlog file. Offsets are absolute file offsets; for a compressed file
#: (``seekable`` false), offsets in its decompressed bytes.
INDEX_SCHEMA = pa.schema([
    # -- identity: a file indexed again only when these change (vecbinlog.index.build_index)
    ("name", pa.string()),  # the file's name (an archive's files have distinct names)
    ("path", pa.string()),  # where it was indexed from (a local path, or a URI without credentials)
    ("size", pa.int64()),  # its bytes then (a compressed file: its compressed bytes)
    ("mtime_ns", pa.int64()),  # its modification time then, ns since the epoch (null: not known)
    ("etag", pa.string()),  # its ETag, when the filesystem gives one (pyarrow's do not yet: null)
    # -- what was indexed
    ("indexed_to", pa.int64()),  # the end of the last whole event: what is summarised here
    ("complete_to", pa.int64()),  # the end of the last complete transaction (a file being written: where it
    #                               is planned to once it grew, the transaction after it may not be whole yet)
    # BLAKE2b (8 bytes) of its first min(HEAD_BYTES, complete_to) bytes (a grown file: the same). Not a
    # CRC32: the CRC32 of events that end with their own CRC32 is the same whatever they hold
    ("head_hash", pa.int64()),
    ("seekable", pa.bool_()),  # false: a compressed file, which is read from its start only (one split)
    ("second_format", pa.int64()),  # offset of a second FORMAT_DESCRIPTION_EVENT (a relay log: no cut after it)
    # -- FORMAT_DESCRIPTION_EVENT facts
    ("server_version", pa.string()),
    ("binlog_version", pa.int16()),
    ("checksum", pa.string()),  # "CRC32" or "NONE..."
    # -- time: the earliest and latest header timestamps (not 0) of the events indexed
    ("first_time", pa.timestamp("ms", tz="UTC")),  # (whole seconds: Parquet has no seconds unit)
    ("last_time", pa.timestamp("ms", tz="UTC")),
    # -- Binlog.info(rows=True)'s entry of the file, as JSON: events by type, GTIDs (the
    #    PREVIOUS_GTIDS / GTID_LIST set, the first, last, count and set of those it holds),
    #    rows events and row images by table, where the walk stopped... (vecbinlog.log.loginfo.FileSummary;
    #    the tables whose row images could not be walked in row_images_not_counted)
    ("info", pa.string()),
    # -- the transaction starts (binlog/transactions.py's rule), in file order: every one, or
    #    with more than KEPT_STARTS the first of each block of start_spacing bytes
    ("transaction_starts", pa.list_(pa.int64())),
    ("start_spacing", pa.int64()),  # a power of two: 1 when every start is kept
    # -- of each kept start, the greatest header timestamp (s) of the transaction starts in its
    #    block (from it to the next kept start): where a time to start from is (block_times)
    ("start_times", pa.list_(pa.int64())),
    # -- the sources of the GTIDs the file holds (MySQL uuid or uuid:tag, MariaDB domain-server), and of
    #    each block of the kept starts (as above) and source in it, its least and greatest number: where a
    #    GTID is (the blocks whose range holds it; with every start kept, exactly where)
    ("gtid_sources", pa.list_(pa.string())),
    ("gtid_blocks", pa.list_(pa.struct([
        ("block", pa.int32()),  # a position in transaction_starts
        ("source", pa.int32()),  # a position in gtid_sources
        ("first", pa.uint64()),
        ("last", pa.uint64()),
    ]))),
    # -- the distinct TABLE_MAPs that rows events use, each once, in order of first use
    ("layouts", pa.list_(pa.struct([
        ("table", pa.string()),  # db.table
        ("offset", pa.int64()),  # the TABLE_MAP_EVENT where it is first used (or its first rows event)
        ("post_header_len", pa.int16()),  # the TABLE_MAP post-header length (gives the table id's width)
        ("body", pa.binary()),  # the event's bytes after the table id, to its checksum: parse_table_map's input
    ]))),
    # -- each table with rows events, in order of first rows event
    ("tables", pa.list_(pa.struct([
        ("name", pa.string()),  # db.table
        ("rows_events", pa.int64()),
        ("write_events", pa.int64()),  # rows events by change type (WRITE/UPDATE/DELETE_ROWS)
        ("update_events", pa.int64()),
        ("delete_events", pa.int64()),
        ("ranges", pa.list_(_RANGE)),  # transaction-aligned ranges holding all its rows events
        # the earliest and latest header timestamps of its rows events, as the since/until filter
        # compares them (0 kept: 1970); min and max, not first and last: a transaction's events
        # carry the time it began, so a file's rows events are not in time order
        ("first_time", pa.timestamp("ms", tz="UTC")),
        ("last_time", pa.timestamp("ms", tz="UTC")),
    ]))),
    # -- rows events where a table's (TABLE_MAP, DDL statements before it) changes from its last
    #    rows event in the file (and each table's first): where a read's versions may change
    ("layout_changes", pa.list_(pa.struct([
        ("offset", pa.int64()),  # the rows event
        ("layout", pa.int32()),  # its TABLE_MAP: a position in layouts
        ("ddl_before", pa.int32()),  # how many entries of ddl come before it
    ]))),
    # -- the QUERY events that may be DDL (CREATE/ALTER/RENAME/DROP/TRUNCATE, tracker.py), in order
    ("ddl", pa.list_(pa.struct([
        ("offset", pa.int64()),
        ("database", pa.string()),  # the default database it ran in
        ("statement", pa.string()),  # its text (UTF-8, undecodable bytes replaced, as the tracker reads it)
        ("error_code", pa.int32()),  # non-zero: failed on the server, logged for what it did first
    ]))),
])

#: rows event type -> change type (0 write, 1 update, 2 delete; -1 not a rows event)
_KIND = np.full(256, -1, np.int8)
for _code, (_kind, _) in ROWS_EVENTS.items():
    _KIND[_code] = int(_kind)


@dataclass
class _Table:
    """What the walk found of one table so far."""

    counts: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int64))
    txns: list[np.ndarray] = field(default_factory=list)  #: starts of its transactions, per segment
    last_key: tuple[int, int] | None = None  #: (layout, ddl_before) of its last rows event
    first: int | None = None  #: the least header timestamp of its rows events (s)
    last: int | None = None  #: the greatest


class _Summary:
    """The facts of one file, gathered step by step of the walk."""

    def __init__(self, f: BinlogFile, start: int = MAGIC_LEN, batch_rows: int = 1 << 18) -> None:
        self.f = f
        self.tables: dict[str, _Table] = {}
        self.layouts: dict[int, int] = {}  #: layout id of the walk -> position in self.layout_rows
        self.layout_rows: list[dict[str, Any]] = []
        self.changes: list[tuple[int, int, int]] = []  #: (offset, layout, ddl_before)
        self.ddl: list[dict[str, Any]] = []
        self.info = FileSummary(f, True, batch_rows, keep_going=True)  # row images counted too
        self.last_start = start  #: the last transaction start before the current step
        self.head = head_bytes(f)  #: the file's first HEAD_BYTES (read with its FORMAT_DESCRIPTION)
        self.gtid_sources: dict[str, int] = {}  #: GTID source -> its position in gtid_sources
        self.gtids: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  #: (event position, source, number) per step

    def add(self, step: Step, starts: np.ndarray) -> None:
        """One step of the walk; ``starts``: positions in its index of the transaction starts."""
        src, index = step.src, step.index
        self.info.add_unpacked(step.segment, src, index, step.rows_pos, step.layout, step.maps)
        assert self.info.last_gtids is not None
        pos, gtids = self.info.last_gtids
        if len(pos):
            mine = np.array([self.gtid_sources.setdefault(x, len(self.gtid_sources)) for x in gtids.sources] + [-1],
                            np.int32)  # (-1: an anonymous GTID's)
            known = gtids.source >= 0
            self.gtids.append((pos[known], mine[gtids.source[known]], gtids.number[known]))
        cand = ddl_candidates(src, index)
        for i in cand.tolist():
            q = query_at(src, index, i)
            self.ddl.append({"offset": int(index.pos[i]), "database": q.database or None,
                             "statement": q.query.decode("utf-8", "replace"), "error_code": int(q.error_code)})
        start_pos = index.pos[starts].astype(np.int64)
        if len(step.rows_pos):
            self._rows(step, cand, start_pos)
        if len(start_pos):
            self.last_start = int(start_pos[-1])

    def _rows(self, step: Step, cand: np.ndarray, start_pos: np.ndarray) -> None:
        index, rows_pos, layout = step.index, step.rows_pos, step.layout
        pos = index.pos[rows_pos].astype(np.int64)
        kind = _KIND[index.type_code[rows_pos]]
        ddl_before = (len(self.ddl) - len(cand)) + np.searchsorted(cand, rows_pos, side="left")
        k = np.searchsorted(start_pos, pos, side="right") - 1
        txn = start_pos[np.maximum(k, 0)] if len(start_pos) else np.zeros(len(pos), np.int64)
        txn = np.where(k >= 0, txn, self.last_start)
        order = list(dict.fromkeys(tm.name for tm in step.maps.layouts))  # the file's tables, numbered
        number = {name: k for k, name in enumerate(order)}
        for lid in dict.fromkeys(layout.tolist()):
            self._layout(step, lid)
        table_of = np.array([number[tm.name] for tm in step.maps.layouts], np.int64)[layout]
        # the walk's layout id -> its position in layout_rows (a few layouts: one array, no loop per event)
        kept = np.array([self.layouts.get(lid, -1) for lid in range(len(step.maps.layouts))], np.int64)
        for code in dict.fromkeys(table_of.tolist()):
            name = order[code]
            mine = np.flatnonzero(table_of == code)
            t = self.tables.setdefault(name, _Table())
            t.counts += np.bincount(kind[mine][kind[mine] >= 0], minlength=3)[:3]
            times = index.timestamp[rows_pos[mine]].astype(np.int64)  # as RowsFilter.events compares them
            lo, hi = int(times.min()), int(times.max())
            t.first = lo if t.first is None else min(t.first, lo)
            t.last = hi if t.last is None else max(t.last, hi)
            t.txns.append(np.unique(txn[mine]))
            keys = np.stack([kept[layout[mine]], ddl_before[mine]], axis=1)
            prev = np.array([t.last_key if t.last_key is not None else (-1, -1)], np.int64)
            changed = np.flatnonzero((np.concatenate([prev, keys[:-1]]) != keys).any(axis=1))
            self.changes += [(int(pos[mine[c]]), int(keys[c, 0]), int(keys[c, 1])) for c in changed.tolist()]
            t.last_key = (int(keys[-1, 0]), int(keys[-1, 1]))

    def _layout(self, step: Step, lid: int) -> None:
        """Keep the TABLE_MAP of layout ``lid`` (the walk's id in this file), the first time."""
        if lid in self.layouts:
            return
        index, maps = step.index, step.maps
        key = maps.keys[lid]
        first_rows = int(step.rows_pos[np.flatnonzero(step.layout == lid)[0]])
        tms = np.flatnonzero(index.type_code[:first_rows] == EventType.TABLE_MAP_EVENT)
        offset, ph = int(index.pos[first_rows]), None
        buf = step.src.buf
        for j in tms[::-1].tolist():  # the TABLE_MAP it follows is just before it, in its transaction
            p = int(index.post_header_len[j])
            at = int(index.offset[j]) + COMMON_HEADER_LEN + int(table_id_width(p))
            if bytes(buf[at:int(index.body_end[j])]) == key:
                offset, ph = int(index.pos[j]), p
                break
        if ph is None:  # in an earlier segment: the format says the post-header's length
            fmt = step.file.formats[0]
            ph = fmt.post_header_lengths[EventType.TABLE_MAP_EVENT - 1]
        self.layouts[lid] = len(self.layout_rows)
        self.layout_rows.append({"table": maps.layouts[lid].name, "offset": offset, "post_header_len": ph, "body": key})

    def row(self, scan: FileScan, identity: dict[str, Any]) -> dict[str, Any]:
        """The summary as a row of :data:`INDEX_SCHEMA`."""
        f, end, starts = self.f, scan.walked, scan.starts
        tables = []
        for name, t in self.tables.items():
            assert t.first is not None and t.last is not None  # set with the table's first rows events
            counts = t.counts
            txns = np.unique(np.concatenate(t.txns))
            tables.append({"name": name, "rows_events": int(counts.sum()), "write_events": int(counts[0]),
                           "update_events": int(counts[1]), "delete_events": int(counts[2]),
                           "ranges": _ranges(txns, starts, end),
                           "first_time": t.first * 1000, "last_time": t.last * 1000})  # ms
        info = self.info.as_dict()
        assert scan.stamps is not None  # a walk's (not an index's)
        fmt = f.formats[0]
        kept = spaced_starts(starts, spacing := start_spacing(starts))
        at, source, seq = (np.concatenate(parts) for parts in zip(*self.gtids)) if self.gtids else \
            (np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.uint64))
        return {
            **identity,
            "indexed_to": int(end),
            "complete_to": int(scan.complete),
            "head_hash": _hash(self.head[:min(HEAD_BYTES, int(scan.complete))]),
            "seekable": bool(f.source.seekable),
            "second_format": f.formats[1].offset if len(f.formats) > 1 else None,
            "server_version": fmt.server_version,
            "binlog_version": fmt.binlog_version,
            "checksum": fmt.checksum_name,
            "first_time": None if info["first_timestamp"] is None else info["first_timestamp"] * 1000,  # ms
            "last_time": None if info["last_timestamp"] is None else info["last_timestamp"] * 1000,
            "info": json.dumps(info),
            "transaction_starts": kept.tolist(),
            "start_spacing": spacing,
            "start_times": block_times(starts, scan.stamps, spacing).tolist(),
            "gtid_sources": list(self.gtid_sources),
            "gtid_blocks": gtid_blocks(kept, at, source, seq, seq),
            "layouts": self.layout_rows,
            "tables": tables,
            "layout_changes": [{"offset": o, "layout": lay, "ddl_before": d} for o, lay, d in sorted(self.changes)],
            "ddl": self.ddl,
        }


def spaced_starts(starts: np.ndarray, spacing: int) -> np.ndarray:
    """The first of ``starts`` (sorted file offsets) in each block of ``spacing`` bytes of the
    file (all of them with ``spacing`` 1). Of starts kept so at a spacing that divides this
    one, the same are kept: a grown file's, or a file's indexed in ranges, are those of one walk."""
    starts = np.asarray(starts, np.int64)
    bucket = starts // spacing
    return starts[np.r_[True, bucket[1:] != bucket[:-1]]] if len(starts) else starts


def block_times(starts: np.ndarray, times: np.ndarray, spacing: int) -> np.ndarray:
    """The greatest of ``times`` (one per start of ``starts``, sorted file offsets) in each block
    of ``spacing`` bytes that has a start: one per start :func:`spaced_starts` keeps. Of starts
    kept at a spacing that divides this one, with their blocks' greatest times, the same."""
    starts, times = np.asarray(starts, np.int64), np.asarray(times, np.int64)
    if not len(starts):
        return times[:0]
    bucket = starts // spacing
    return np.maximum.reduceat(times, np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]]))


def gtid_blocks(kept: np.ndarray, at: np.ndarray, source: np.ndarray, first: np.ndarray,
                last: np.ndarray) -> list[dict[str, int]]:
    """The ``gtid_blocks`` of a file whose kept starts are ``kept``, from GTIDs (or ranges of
    them) at offsets ``at``: each ``first..last`` of ``source`` goes to the block of the kept start
    at or before ``at``, and each block's ranges of a source are joined (their least and greatest)."""
    if not len(at):
        return []
    block = np.maximum(np.searchsorted(kept, at, side="right") - 1, 0)
    width = int(source.max()) + 1
    key = block.astype(np.int64) * width + source
    order = np.argsort(key, kind="stable")
    key = key[order]
    edges = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    lo = np.minimum.reduceat(np.asarray(first, np.uint64)[order], edges)
    hi = np.maximum.reduceat(np.asarray(last, np.uint64)[order], edges)
    return [{"block": b, "source": c, "first": a, "last": z} for b, c, a, z in
            zip((key[edges] // width).tolist(), (key[edges] % width).tolist(), lo.tolist(), hi.tolist())]


def start_spacing(starts: np.ndarray, least: int = 1) -> int:
    """The blocks, in bytes, of which the index keeps the first of ``starts``: the least power
    of two (at least ``least``) that keeps at most :data:`KEPT_STARTS` (1 for a file of no more)."""
    spacing = least
    while len(spaced_starts(starts, spacing)) > KEPT_STARTS:
        spacing *= 2
    return spacing


def cut_target(offset: int, spacing: int) -> int:
    """The first multiple of ``spacing`` at or after ``offset``: a plan that would cut at
    ``offset`` cuts at the first transaction start there or after it, which is the first of its
    block: one the index keeps (``spacing``: the file's :func:`start_spacing`)."""
    return -(-offset // spacing) * spacing


def _ranges(txns: np.ndarray, starts: np.ndarray, end: int) -> list[dict[str, int]]:
    """The byte ranges of the transactions starting at ``txns`` (sorted, among ``starts``), each
    to the next transaction start (or ``end``), those less than :data:`RANGE_GAP_BYTES` apart
    merged."""
    if not len(txns):
        return []
    k = np.searchsorted(starts, txns, side="right")
    stops = np.where(k < len(starts), starts[np.minimum(k, len(starts) - 1)] if len(starts) else end, end)
    reach = np.maximum.accumulate(stops)  # where the ranges so far end
    first = np.flatnonzero(np.r_[True, txns[1:] - reach[:-1] >= RANGE_GAP_BYTES])  # each merged range's first
    last = np.r_[first[1:] - 1, len(txns) - 1]
    return [{"start": a, "stop": b} for a, b in zip(txns[first].tolist(), reach[last].tolist())]


def head_bytes(f: BinlogFile) -> bytes:
    """The first :data:`HEAD_BYTES` of ``f`` (fewer in a shorter file)."""
    buf, _ = f.source.window(0, HEAD_BYTES, HEAD_BYTES)  # (a window from 0 starts at 0)
    return bytes(buf[:HEAD_BYTES])


def head_hash(f: BinlogFile, complete_to: int) -> int:
    """The ``head_hash`` of ``f`` complete to ``complete_to`` (see :data:`INDEX_SCHEMA`)."""
    return _hash(head_bytes(f)[:min(HEAD_BYTES, complete_to)])


def _hash(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little", signed=True)


def summarize_file(path: str, identity: dict[str, Any], config: ReadConfig | None = None, *,
                   start: int | None = None, stop: int | None = None, **options: Any) -> pa.Table:
    """The one-row :data:`INDEX_SCHEMA` table of the binlog file at ``path``, from one walk of
    its headers; ``identity``: its name, path, size, mtime_ns and etag (taken before the walk).
    ``config`` (or the ``options`` of :func:`vecbinlog.open` it is built from: ``filesystem``,
    ``verify_checksums``, ``segment_bytes``...): how the file is opened and walked.
    ``start``: walk from this offset only (where a transaction starts, with no transaction open
    before it), ``stop``: to the first event boundary at or after it: the summary of that part,
    for :func:`extend_summary`."""
    if config is None:
        config = ReadConfig.build(**options)
    elif options:
        raise TypeError(f"summarize_file takes a config or options, not both: {sorted(options)}")
    walk = config.over_range(start, stop).replace(ddl=False)  # ddl=False: the statements are kept, replayed when planning
    begin = MAGIC_LEN if start is None else start
    # a file being written: indexed to its last transaction, without a TruncatedWarning (not
    # warnings.catch_warnings, which is not for threads: files in object storage are indexed by several)
    with config.open_file(path, truncated_warning=False) as f:
        summary, scan = _Summary(f, begin, walk.batch_rows), StartScan(begin)
        for step in LogWalk([f], walk, seek=start is not None or stop is not None).steps():
            summary.add(step, scan.feed(step.src, step.index, step.segment.end))
        row = summary.row(scan.result(f.size), identity)
    return pa.Table.from_pylist([row], schema=INDEX_SCHEMA)


# -- a grown file ----------------------------------------------------------------------------
def extend_summary(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The summary of a grown file, from ``old``, its summary when it was complete to its end
    (``complete_to == indexed_to``), and ``new``, the summary of its part from there
    (:func:`summarize_file` with ``start=old["complete_to"]``): what a walk of the whole file
    gives (rows of :data:`INDEX_SCHEMA` as Python values)."""
    cut = old["indexed_to"]
    starts = new["transaction_starts"]
    after = starts[0] if starts else new["indexed_to"]  # where a range cut at the old end now stops
    # layouts: the new part's that the old one has are the same layout (the same bytes)
    layouts = list(old["layouts"])
    at = {lay["body"]: k for k, lay in enumerate(layouts)}
    moved = []
    for lay in new["layouts"]:
        if lay["body"] not in at:
            at[lay["body"]] = len(layouts)
            layouts.append(lay)
        moved.append(at[lay["body"]])
    # tables: counts added, times widened, ranges joined across the old end
    tables = {t["name"]: {**t, "ranges": [{"start": r["start"], "stop": after if r["stop"] == cut else r["stop"]}
                                          for r in t["ranges"]]} for t in old["tables"]}
    for t in new["tables"]:
        was = tables.get(t["name"])
        if was is None:
            tables[t["name"]] = t
            continue
        ranges = was["ranges"] + t["ranges"]
        if len(was["ranges"]) and t["ranges"] and t["ranges"][0]["start"] - was["ranges"][-1]["stop"] < RANGE_GAP_BYTES:
            joined = {"start": was["ranges"][-1]["start"], "stop": max(was["ranges"][-1]["stop"], t["ranges"][0]["stop"])}
            ranges = was["ranges"][:-1] + [joined] + t["ranges"][1:]
        tables[t["name"]] = {
            "name": t["name"], "ranges": ranges,
            **{k: was[k] + t[k] for k in ("rows_events", "write_events", "update_events", "delete_events")},
            "first_time": _least(was["first_time"], t["first_time"]), "last_time": _most(was["last_time"], t["last_time"])}
    # layout changes: the new part's, unless its first of a table is where the old part left it
    ddl = len(old["ddl"])
    last: dict[str, tuple[int, int]] = {}
    for c in old["layout_changes"]:
        last[old["layouts"][c["layout"]]["table"]] = (c["layout"], c["ddl_before"])
    changes = list(old["layout_changes"])
    for c in new["layout_changes"]:
        key = (moved[c["layout"]], c["ddl_before"] + ddl)
        table = layouts[key[0]]["table"]
        if last.get(table) != key:
            changes.append({"offset": c["offset"], "layout": key[0], "ddl_before": key[1]})
        last[table] = key
    identity = ("name", "path", "size", "mtime_ns", "etag", "indexed_to", "complete_to", "head_hash")
    # the starts kept of both parts: at the least spacing at least theirs (kept so far) that keeps few enough
    both = np.array(old["transaction_starts"] + starts, np.int64)
    times = np.array(old["start_times"] + new["start_times"], np.int64)
    spacing = start_spacing(both, max(old["start_spacing"], new["start_spacing"]))
    kept = spaced_starts(both, spacing)
    # GTID blocks: each part's, from the offset of its block's start, in the joined sources
    sources = list(old["gtid_sources"])
    at_source = {x: k for k, x in enumerate(sources)}
    renumbered = [at_source.setdefault(x, len(at_source)) for x in new["gtid_sources"]]
    sources = list(at_source)
    blocks = [(old["transaction_starts"][b["block"]], b["source"], b["first"], b["last"]) for b in old["gtid_blocks"]]
    blocks += [(starts[b["block"]], renumbered[b["source"]], b["first"], b["last"]) for b in new["gtid_blocks"]]
    cols: list[Sequence[Any]] = list(zip(*blocks)) if blocks else [[], [], [], []]
    joined_blocks = gtid_blocks(kept, np.array(cols[0], np.int64), np.array(cols[1], np.int32),
                         np.array(cols[2], np.uint64), np.array(cols[3], np.uint64))
    return {
        **old,
        **{k: new[k] for k in identity},
        "first_time": _least(old["first_time"], new["first_time"]),
        "last_time": _most(old["last_time"], new["last_time"]),
        "info": json.dumps(_extend_info(json.loads(old["info"]), json.loads(new["info"]))),
        "transaction_starts": kept.tolist(),
        "start_spacing": spacing,
        "start_times": block_times(both, times, spacing).tolist(),
        "gtid_sources": sources,
        "gtid_blocks": joined_blocks,
        "layouts": layouts,
        "tables": list(tables.values()),
        "layout_changes": changes,
        "ddl": old["ddl"] + new["ddl"],
    }


def _extend_info(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """:func:`extend_summary` of the ``info`` entries (``Binlog.info()``'s, as JSON)."""
    def added(a: dict[str, int], b: dict[str, int], order: bool = True) -> dict[str, int]:
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, 0) + v
        return dict(sorted(out.items())) if order else out

    og, ng = old["gtids"], new["gtids"]
    return {
        **old,
        "path": new["path"], "size": new["size"], "stopped_at": new["stopped_at"],
        "format_descriptions": old["format_descriptions"] + new["format_descriptions"] - 1,  # (the first: in both)
        "first_timestamp": _least(old["first_timestamp"], new["first_timestamp"]),
        "last_timestamp": _most(old["last_timestamp"], new["last_timestamp"]),
        "events": added(old["events"], new["events"]),
        "events_in_payloads": added(old["events_in_payloads"], new["events_in_payloads"]),
        "rows_events_by_table": added(old["rows_events_by_table"], new["rows_events_by_table"], order=False),
        "events_not_decoded": {k: added(old["events_not_decoded"][k], new["events_not_decoded"][k])
                               for k in old["events_not_decoded"]},
        **_extend_images(old, new),
        "gtids": {"previous": og["previous"] if og["previous"] is not None else ng["previous"],
                  "first": og["first"] or ng["first"], "last": ng["last"] or og["last"],
                  "count": og["count"] + ng["count"], "set": union_gtid_sets(og["set"], ng["set"])},
    }


def _extend_images(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The ``row_images_by_table`` (and ``row_images_not_counted``) of two ``info`` entries joined."""
    lost = sorted(set(old.get("row_images_not_counted", [])) | set(new.get("row_images_not_counted", [])))
    images = {t: dict(c) for t, c in old["row_images_by_table"].items()}
    for t, counts in new["row_images_by_table"].items():
        mine = images.setdefault(t, {})
        for k, n in counts.items():
            mine[k] = mine.get(k, 0) + n
    out: dict[str, Any] = {"row_images_by_table": {t: {k: c[k] for k in CHANGE_TYPES if k in c}
                                                   for t, c in images.items() if t not in lost}}
    if lost:
        out["row_images_not_counted"] = lost
    return out


def _least(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else min(a, b)


def _most(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else max(a, b)
