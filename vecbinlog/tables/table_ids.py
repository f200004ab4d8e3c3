"""Which table layout each table id means: the TABLE_MAP state of a file, per segment.

A rows event names its table by a table id, which the last TABLE_MAP_EVENT with that id before
it maps to a table layout (table ids are per file, and a server maps the same id again).
TABLE_MAPs are grouped by their bytes (a compiled hash, checked byte for byte), so each
distinct layout is parsed once; which layout each rows event uses is found by a compiled
running map of table ids (:func:`follow_table_maps`).
"""

from __future__ import annotations

import numpy as np

from ..binlog.headers import ROWS_CODES, EventIndex, read_uint
from ..binlog.eventsource import EventSource, event_path
from ..binlog.spec import (
    COMMON_HEADER_LEN,
    OLD_TABLE_ID_POST_HEADER_LEN,
    ROWS_HEADER_LEN_V1,
    ROWS_HEADER_LEN_V2,
    version_tuple,
)
from ..constants import EventType, event_type_name
from ..errors import MalformedEventError, UnsupportedError
from ..groups import group_ranges
from ..jit import kernel
from .table_map import TableMap, parse_table_map

__all__ = ["TableMaps", "ParsedMaps", "PARSED_MAPS", "FILE_SHIFT", "follow_table_maps", "table_slots"]

_INT64_MAX = np.iinfo(np.int64).max


#: TABLE_MAPs a :class:`ParsedMaps` keeps at most (then it starts over: bounded memory)
PARSED_MAPS_KEPT = 4096


class ParsedMaps:
    """TABLE_MAPs parsed, by their bytes and the format that governs them (the post-header
    length and the server version, which says the flavor). :data:`PARSED_MAPS` is shared by
    every walk of the process: an archive of many small files parses each layout once, not
    once per file, and so does a process that opens one log after another (a Spark worker
    reading split after split, a script reading files in turn: 16 layouts of 27 columns took
    10-15 ms to parse at each open of the OLTP bench file); the rows events of all of them
    share one :class:`TableMap` object per layout (frozen: nothing changes it). Safe from
    several threads (a dict's get and set are atomic)."""

    def __init__(self) -> None:
        self._maps: dict[tuple[bytes, int, str], TableMap] = {}

    def get(self, key: tuple[bytes, int, str]) -> TableMap | None:
        return self._maps.get(key)

    def put(self, key: tuple[bytes, int, str], table_map: TableMap) -> None:
        if len(self._maps) >= PARSED_MAPS_KEPT:
            self._maps.clear()
        self._maps[key] = table_map


#: the TABLE_MAPs parsed in this process (:class:`ParsedMaps`)
PARSED_MAPS = ParsedMaps()


#: in a step of joined files, a table id is keyed with its file above its 48 bits
FILE_SHIFT = 48
_TABLE_ID_MASK = (1 << FILE_SHIFT) - 1


class TableMaps:
    """The TABLE_MAP state of one file: which table layout each table id means, and when.

    Table maps are deduplicated by their bytes (a busy server writes the same map before
    every transaction), so each distinct layout is parsed once (once per walk, with the
    ``parsed`` maps the walk's files share).
    """

    def __init__(self, parsed: ParsedMaps | None = None) -> None:
        self.file: EventSource  #: what the events are read from: the last segment's source (:meth:`resolve`)
        self.layouts: list[TableMap] = []  #: layout id -> TableMap
        #: layout id -> the TABLE_MAP's bytes after its table id (post-header rest and body)
        self.keys: list[bytes] = []
        self._by_bytes: dict[bytes, int] = {}
        self._parsed = parsed if parsed is not None else PARSED_MAPS
        self.current: dict[int, int] = {}  #: table id -> layout id, as of the end of the last segment

    def _layout_ids(self, index: EventIndex, tm_pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Table id and layout id of the TABLE_MAP events ``index[tm_pos]``.

        Maps are grouped by their bytes (:func:`~vecbinlog.groups.group_ranges`, compiled), so
        only distinct layouts reach Python: a busy server repeats the same few maps in every
        transaction.
        """
        n = len(tm_pos)
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        ph = index.post_header_len[tm_pos]
        start = index.offset[tm_pos] + COMMON_HEADER_LEN
        key_end = index.body_end[tm_pos]
        short = start + ph > key_end
        if short.any():
            k = int(np.flatnonzero(short)[0])
            i = int(tm_pos[k])
            raise MalformedEventError(
                f"event of {int(index.event_size[i])} bytes is shorter than its {int(ph[k])}-byte post-header",
                path=event_path(self.file, i), offset=int(index.pos[i]), event_type="TABLE_MAP_EVENT",
            )
        id_len = index.table_id_width[tm_pos]
        ids = read_uint(self.file.buf, start, id_len).astype(np.int64)
        key_start = start + id_len
        first, inverse = group_ranges(self.file.buf, key_start, key_end)  # in order of appearance
        mem = self.file.buf.data
        uniq = np.zeros(len(first), np.int64)
        for u, f in enumerate(first.tolist()):
            uniq[u] = self._layout_for(index, int(tm_pos[f]), bytes(mem[int(key_start[f]):int(key_end[f])]), int(ph[f]))
        return ids, uniq[inverse]

    def _layout_for(self, ev: EventIndex, k: int, key: bytes, ph: int) -> int:
        """The layout id of a TABLE_MAP's bytes, parsing it the first time they are seen."""
        lid = self._by_bytes.get(key)
        if lid is not None:
            return lid
        off, body_end = int(ev.offset[k]), int(ev.body_end[k])
        fde = self.file.formats[int(ev.fmt[k])]
        parsed_key = (key, ph, fde.server_version)
        tm = self._parsed.get(parsed_key)
        if tm is not None:
            return self._new_layout(key, tm)
        major = version_tuple(fde.server_version)[0]
        try:
            _, tm = parse_table_map(
                self.file.buf, off, off + COMMON_HEADER_LEN, body_end, ph, path=self.file.path, flavor=fde.flavor,
                server_major=major, server_version=fde.server_version,
            )
        except UnsupportedError as exc:
            if exc.offset is None:
                exc = UnsupportedError(exc.message, path=self.file.path, offset=off, event_type="TABLE_MAP_EVENT")
            raise self.file.relocate(exc) from exc
        except MalformedEventError as exc:
            raise self.file.relocate(exc) from exc
        self._parsed.put(parsed_key, tm)
        return self._new_layout(key, tm)

    def _new_layout(self, key: bytes, tm: TableMap) -> int:
        lid = len(self.layouts)
        self.layouts.append(tm)
        self.keys.append(key)
        self._by_bytes[key] = lid
        return lid

    def resolve(self, index: EventIndex, src: EventSource,
                file_of: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """For the rows events of a segment: their positions in ``index`` and their layout ids.

        Each rows event uses the last TABLE_MAP with its table id before it (in this segment,
        or carried over from earlier ones). A table id no TABLE_MAP defined is an error.
        ``src`` is what the segment's events are read from: a window of the file, a segment
        whose compressed events were unpacked (see compression.py), small files joined (see
        gathered.py: ``file_of`` then gives each event's file, and table ids are per file, as
        in files read one by one).
        """
        self.file = src
        tc = index.type_code
        tm_pos = np.flatnonzero(tc == EventType.TABLE_MAP_EVENT)
        rows_pos = np.flatnonzero(ROWS_CODES[tc])
        tm_ids, tm_layout = self._layout_ids(index, tm_pos)
        if file_of is not None:  # (table ids take 48 bits at most: the file above them)
            tm_ids |= file_of[tm_pos].astype(np.int64) << FILE_SHIFT
        if len(rows_pos) == 0:
            self.current.update(zip(tm_ids.tolist(), tm_layout.tolist()))
            return rows_pos, np.zeros(0, np.int64)
        rows_ids = self.table_ids(index, rows_pos)
        if file_of is not None:
            rows_ids |= file_of[rows_pos].astype(np.int64) << FILE_SHIFT
        known = len(self.current)  # (each its own array: a column of a 2-D one is another kind for numba)
        known_ids = np.fromiter(self.current.keys(), np.int64, known)
        known_layouts = np.fromiter(self.current.values(), np.int64, known)
        slots = table_slots(known + len(tm_ids))
        keys, vals = np.full(slots, -1, np.int64), np.empty(slots, np.int64)
        layout = np.empty(len(rows_pos), np.int64)
        follow_table_maps(tm_pos.astype(np.int64), tm_ids, tm_layout, rows_pos.astype(np.int64), rows_ids,
                               known_ids, known_layouts, keys, vals, layout)
        used = keys != -1
        self.current = dict(zip(keys[used].tolist(), vals[used].tolist()))
        missing = layout < 0
        if missing.any():
            k = int(np.flatnonzero(missing)[0])
            i = int(rows_pos[k])
            raise MalformedEventError(
                f"rows event for table id {int(rows_ids[k]) & _TABLE_ID_MASK}, which no TABLE_MAP_EVENT before it "
                "defines", path=event_path(self.file, i), offset=int(index.pos[i]), event_type=event_type_name(int(tc[i])),
            )
        return rows_pos, layout

    def table_ids(self, index: EventIndex, at: np.ndarray) -> np.ndarray:
        """The table id in the post-header of each rows event ``index[at]`` (4 or 6 bytes by format)."""
        def fail(bad: np.ndarray, message: str) -> MalformedEventError:
            i = int(at[np.flatnonzero(bad)[0]])
            return MalformedEventError(message, path=event_path(self.file, i), offset=int(index.pos[i]),
                                       event_type=event_type_name(int(index.type_code[i])))

        ph = index.post_header_len[at]
        bad = (ph != OLD_TABLE_ID_POST_HEADER_LEN) & (ph != ROWS_HEADER_LEN_V1) & (ph != ROWS_HEADER_LEN_V2)
        if bad.any():
            raise fail(bad, f"the FORMAT_DESCRIPTION_EVENT gives this rows event a {int(ph[bad][0])}-byte "
                       "post-header; rows events have 6, 8 or 10")
        start = index.offset[at] + COMMON_HEADER_LEN
        short = start + ph > index.body_end[at]
        if short.any():
            raise fail(short, "event is shorter than its post-header")
        return read_uint(self.file.buf, start, index.table_id_width[at]).astype(np.int64)


# -- compiled ------------------------------------------------------------------------------------


@kernel(inline="always")
def _slot(keys, key):  # pragma: no cover - compiled
    """Where ``key`` (>= 0) is, or goes, in an open-addressing table (-1: free) of 2**k keys."""
    mask = len(keys) - 1
    slot = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & mask
    while keys[slot] != -1 and keys[slot] != key:
        slot = (slot + 1) & mask
    return slot


@kernel
def follow_table_maps(map_at, map_id, map_layout, rows_at, rows_id, known_id, known_layout, keys, vals,
                      out):  # pragma: no cover - compiled
    """Which table layout each rows event uses: the one of the last TABLE_MAP with its table
    id before it (table ids are per file; the same id can be mapped again).

    TABLE_MAPs at positions ``map_at`` (increasing) map ``map_id`` to ``map_layout``; rows
    events at ``rows_at`` (increasing) look ``rows_id`` up; ``known_*`` are the mappings
    carried from before. Writes the layout of each rows event into ``out`` (-1: no TABLE_MAP
    before it) and leaves the mappings in force at the end in ``keys``/``vals``: an
    open-addressing table (:func:`table_slots` slots, ``keys`` all -1 on entry) of ids and
    their layouts.
    """
    for i in range(len(known_id)):
        slot = _slot(keys, known_id[i])
        keys[slot] = known_id[i]
        vals[slot] = known_layout[i]
    m = 0
    for r in range(len(rows_at) + 1):
        until = rows_at[r] if r < len(rows_at) else _INT64_MAX
        while m < len(map_at) and map_at[m] < until:
            slot = _slot(keys, map_id[m])
            keys[slot] = map_id[m]
            vals[slot] = map_layout[m]
            m += 1
        if r < len(rows_at):
            slot = _slot(keys, rows_id[r])
            out[r] = vals[slot] if keys[slot] == rows_id[r] else -1


def table_slots(ids: int) -> int:
    """Slots of :func:`follow_table_maps`' table for up to ``ids`` ids: a power of two, more
    than twice as many (so that a probe ends soon at a free slot)."""
    size = 16
    while size < 2 * (ids + 1):
        size *= 2
    return size
