"""Rows events: from a run of rows events of one table layout to its row images, column by column.

Where each row image starts is a chain inside each event, walked by the compiled loop of
:mod:`vecbinlog.walk` (the byte layout is written there). The walk writes what the column
decoders need directly: each fixed-width column's bytes (rows x width), each length-prefixed
column's value positions and lengths in the file, which values are there (validity), which
columns an image leaves out (``_absent``, MINIMAL/NOBLOB images) and which JSON values are
diffs (PARTIAL_UPDATE_ROWS_EVENT). It stops after a batch of images (``batch_rows``, and a
bound on rows x columns) and goes on from there, so a batch's memory does not depend on how
many images the events hold. The values are then converted by ``decoders/``, one column at a
time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from .constants import ROWS_EVENTS, ColumnType, EventType, RowsKind, event_type_name
from .errors import MalformedEventError, UnsupportedError
from .file import EventSource
from .index import EventIndex, code_table
from .layout import (
    COMMON_HEADER_LEN, OLD_TABLE_ID_POST_HEADER_LEN, ROWS_HEADER_LEN_V1, ROWS_HEADER_LEN_V2, version_tuple,
)
from .table_map import TableMap, parse_table_map
from . import walk

__all__ = ["RowImages", "TableMaps", "ColumnPlan", "PlacedRun", "place_images", "CHANGE_TYPES"]

#: ``_change_type`` values, in the order of their codes.
CHANGE_TYPES = ("insert", "update_preimage", "update_postimage", "delete")
INSERT, UPDATE_PRE, UPDATE_POST, DELETE = range(4)
#: change code of image ``2 * kind + (image number & 1)`` (an UPDATE's images alternate before/after)
_CHANGE_OF = np.zeros(6, np.int8)
_CHANGE_OF[[2 * RowsKind.WRITE, 2 * RowsKind.WRITE + 1]] = INSERT
_CHANGE_OF[[2 * RowsKind.UPDATE, 2 * RowsKind.UPDATE + 1]] = UPDATE_PRE, UPDATE_POST
_CHANGE_OF[[2 * RowsKind.DELETE, 2 * RowsKind.DELETE + 1]] = DELETE

_KIND_OF_TYPE = np.zeros(256, np.int8) - 1
for _code, (_kind, _version) in ROWS_EVENTS.items():
    _KIND_OF_TYPE[_code] = _kind
_ROWS_CODES = code_table(sorted(ROWS_EVENTS))

#: Decoded cells (rows x columns) allowed per byte of rows events. Every present column costs
#: at least one null bit, so full images give at most 8 cells per byte; a MINIMAL image of a
#: 4096-column table (MySQL's maximum) that holds just a 4-byte key gives about 800. Past
#: 1024 the row images can only be hostile: they would make the output (and the offsets
#: behind it) thousands of times larger than the file.
MAX_CELLS_PER_BYTE = 1024
#: ... plus this many cells whatever the size, so that small inputs are never refused.
MIN_CELLS_BUDGET = 1 << 24
#: Row images of one batch, and cells (images x columns) of one batch, at most: a run of events
#: that holds more comes in several batches (an UPDATE's two images always in the same one), so
#: that a batch's working memory is bounded whatever the events hold (a 1-byte row image comes
#: back as ~70 bytes of Arrow).
MAX_BATCH_IMAGES = 1 << 18
MAX_BATCH_CELLS = 1 << 22


def _raise_at(file: EventSource, index: EventIndex, bad: np.ndarray, message: str, cls=MalformedEventError):
    """Raise for the first event where ``bad`` is True."""
    i = int(np.flatnonzero(bad)[0])
    raise cls(
        message, path=file.path, offset=int(index.pos[i]), event_type=event_type_name(int(index.type_code[i]))
    )


def read_uint(buf: np.ndarray, pos: np.ndarray, nbytes: np.ndarray | int) -> np.ndarray:
    """Little-endian unsigned ints of ``nbytes`` (<= 8, per element or one for all) at ``pos``."""
    nb = np.broadcast_to(np.asarray(nbytes, np.int64), pos.shape)
    width = int(nb.max()) if nb.size else 0
    if width == 0:
        return np.zeros(pos.shape, np.uint64)
    k = np.arange(width, dtype=np.int64)
    inside = k < nb[:, None]
    raw = np.take(buf, np.where(inside, pos[:, None] + k, 0)).astype(np.uint64)
    raw *= inside
    return (raw << (np.uint64(8) * k.astype(np.uint64))).sum(axis=1, dtype=np.uint64)


class TableMaps:
    """The TABLE_MAP state of one file: which table layout each table id means, and when.

    Table maps are deduplicated by their bytes (a busy server writes the same map before
    every transaction), so each distinct layout is parsed once.
    """

    def __init__(self, file: EventSource):
        self.file = file  #: what the events are read from (the last segment's source: :meth:`resolve`)
        self.layouts: list[TableMap] = []  #: layout id -> TableMap
        self._by_bytes: dict[bytes, int] = {}
        self.current: dict[int, int] = {}  #: table id -> layout id, as of the end of the last segment

    def _layout_ids(self, index: EventIndex, tm_pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Table id and layout id of the TABLE_MAP events ``index[tm_pos]``.

        Maps are grouped by their bytes (a compiled hash of each, then np.unique, each map then
        checked byte for byte against its group's first), so only distinct layouts reach
        Python: a busy server repeats the same few maps in every transaction.
        """
        n = len(tm_pos)
        ids = np.zeros(n, np.int64)
        lids = np.zeros(n, np.int64)
        if n == 0:
            return ids, lids
        ev = index.take(tm_pos)
        ph = ev.post_header_len
        start = ev.offset + COMMON_HEADER_LEN
        short = start + ph > ev.body_end
        if short.any():
            k = int(np.flatnonzero(short)[0])
            raise MalformedEventError(
                f"event of {int(ev.event_size[k])} bytes is shorter than its {int(ph[k])}-byte post-header",
                path=self.file.path, offset=int(ev.pos[k]), event_type="TABLE_MAP_EVENT",
            )
        id_len = ev.table_id_width
        ids[:] = read_uint(self.file.buf, start, id_len).astype(np.int64)
        key_start = start + id_len
        key_end = ev.body_end
        # grouped by a hash of their bytes, checked byte for byte against each group's first
        hashes = np.empty(len(key_start), np.uint64)
        walk.hash_ranges(self.file.buf, key_start, key_end, hashes)
        _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        rep = first[inverse]
        same = np.empty(len(key_start), np.bool_)
        walk.same_ranges(self.file.buf, key_start, key_end, key_start[rep], key_end[rep], same)
        mem = memoryview(self.file.buf)
        uniq = np.zeros(len(first), np.int64)
        for u in np.argsort(first).tolist():  # new layouts in order of appearance
            f = int(first[u])
            uniq[u] = self._layout_for(ev, f, bytes(mem[int(key_start[f]):int(key_end[f])]), int(ph[f]))
        lids[:] = uniq[inverse]
        for k in np.flatnonzero(~same).tolist():  # a hash collision (hostile bytes): by its own bytes
            lids[k] = self._layout_for(ev, k, bytes(mem[int(key_start[k]):int(key_end[k])]), int(ph[k]))
        return ids, lids

    def _layout_for(self, ev: EventIndex, k: int, key: bytes, ph: int) -> int:
        """The layout id of a TABLE_MAP's bytes, parsing it the first time they are seen."""
        lid = self._by_bytes.get(key)
        if lid is not None:
            return lid
        off, body_end = int(ev.offset[k]), int(ev.body_end[k])
        fde = self.file.formats[int(ev.fmt[k])]
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
        lid = len(self.layouts)
        self.layouts.append(tm)
        self._by_bytes[key] = lid
        return lid

    def resolve(self, index: EventIndex, src: EventSource | None = None) -> tuple[np.ndarray, np.ndarray]:
        """For the rows events of a segment: their positions in ``index`` and their layout ids.

        Each rows event uses the last TABLE_MAP with its table id before it (in this segment,
        or carried over from earlier ones). A table id no TABLE_MAP defined is an error.
        ``src`` is what the segment's events are read from when it is not the file itself
        (a segment whose compressed events were unpacked, see compression.py).
        """
        if src is not None:
            self.file = src
        tc = index.type_code
        tm_pos = np.flatnonzero(tc == EventType.TABLE_MAP_EVENT)
        rows_pos = np.flatnonzero(_ROWS_CODES[tc])
        tm_ids, tm_layout = self._layout_ids(index, tm_pos)
        if len(rows_pos) == 0:
            self.current.update(zip(tm_ids.tolist(), tm_layout.tolist()))
            return rows_pos, np.zeros(0, np.int64)
        rows_ids = self.table_ids(index.take(rows_pos))
        known = np.array(list(self.current.items()), np.int64).reshape(-1, 2)
        slots = walk.table_slots(len(known) + len(tm_ids))
        keys, vals = np.full(slots, -1, np.int64), np.empty(slots, np.int64)
        layout = np.empty(len(rows_pos), np.int64)
        walk.follow_table_maps(tm_pos.astype(np.int64), tm_ids, tm_layout, rows_pos.astype(np.int64), rows_ids,
                               known[:, 0], known[:, 1], keys, vals, layout)
        used = keys != -1
        self.current = dict(zip(keys[used].tolist(), vals[used].tolist()))
        missing = layout < 0
        if missing.any():
            k = int(np.flatnonzero(missing)[0])
            i = int(rows_pos[k])
            raise MalformedEventError(
                f"rows event for table id {int(rows_ids[k])}, which no TABLE_MAP_EVENT before it defines",
                path=self.file.path, offset=int(index.pos[i]), event_type=event_type_name(int(tc[i])),
            )
        return rows_pos, layout

    def table_ids(self, rows: EventIndex) -> np.ndarray:
        """The table id in the post-header of each rows event (4 or 6 bytes by format)."""
        ph = rows.post_header_len
        bad = ~np.isin(ph, (OLD_TABLE_ID_POST_HEADER_LEN, ROWS_HEADER_LEN_V1, ROWS_HEADER_LEN_V2))
        if bad.any():
            _raise_at(self.file, rows, bad, f"the FORMAT_DESCRIPTION_EVENT gives this rows event a {int(ph[bad][0])}-byte "
                      "post-header; rows events have 6, 8 or 10")
        if (rows.offset + COMMON_HEADER_LEN + ph > rows.body_end).any():
            _raise_at(self.file, rows, rows.offset + COMMON_HEADER_LEN + ph > rows.body_end,
                      "event is shorter than its post-header")
        return read_uint(self.file.buf, rows.offset + COMMON_HEADER_LEN, rows.table_id_width).astype(np.int64)


@dataclass(frozen=True)
class ColumnPlan:
    """How the walk stores each column of a layout (per column ``c``, as :mod:`vecbinlog.walk`
    takes them): ``how[c]`` FIXED or PREFIXED, ``width[c]`` its bytes or its length prefix's;
    ``slot[c]``: for a fixed-width column, the bytes of the fixed-width columns before it, for
    a prefixed one its number among them; ``json_slot[c]``: its number among the JSON columns
    (-1: not JSON)."""

    how: np.ndarray  #: int8 (C,)
    width: np.ndarray  #: int64 (C,)
    slot: np.ndarray  #: int64 (C,)
    json_slot: np.ndarray  #: int64 (C,)
    fixed_bytes: int  #: bytes of one row's fixed-width values
    n_fixed: int  #: fixed-width columns
    n_var: int  #: prefixed columns
    n_json: int  #: JSON columns

    @classmethod
    def of(cls, table_map: TableMap, where: tuple[str, int, str]) -> ColumnPlan:
        """The plan of ``table_map``; ``where`` = (path, offset, event type) for errors."""
        n = len(table_map.columns)
        how, width = np.zeros(n, np.int8), np.zeros(n, np.int64)
        slot, json_slot = np.zeros(n, np.int64), np.full(n, -1, np.int64)
        fixed = n_fixed = var = n_json = 0
        for c, spec in enumerate(table_map.columns):
            try:
                kind, w = spec.storage()
            except UnsupportedError as exc:
                raise UnsupportedError(f"{table_map.name}: {exc.message}", path=where[0], offset=where[1],
                                       event_type=where[2]) from exc
            width[c] = w
            if kind == "fixed":
                slot[c], fixed, n_fixed = fixed, fixed + w, n_fixed + 1
            else:
                how[c], slot[c], var = walk.PREFIXED, var, var + 1
            if spec.type == ColumnType.MYSQL_TYPE_JSON:
                json_slot[c], n_json = n_json, n_json + 1
        return cls(how, width, slot, json_slot, fixed, n_fixed, var, n_json)

    def places(self, cap: int) -> tuple[np.ndarray, int]:
        """For a walk of at most ``cap`` images: where each column goes (``at`` of
        :func:`vecbinlog.walk.walk_row_images`: a fixed-width column's first byte in the fixed
        output, a prefixed column's row in the position arrays), and the fixed output's size."""
        fixed = self.how == walk.FIXED
        ordinal = np.cumsum(fixed) - fixed  # fixed-width columns before each
        at = np.where(fixed, cap * self.slot + walk.PADDING * ordinal, self.slot)
        return at, cap * self.fixed_bytes + walk.PADDING * self.n_fixed


@dataclass
class _Events:
    """A run of rows events of one layout, as the walk takes them (one entry per event)."""

    file: EventSource
    rows: EventIndex
    table_map: TableMap
    plan: ColumnPlan
    ncols: int
    bitmaps: np.ndarray  #: int64: where the column bitmaps are
    first: np.ndarray  #: int64: where the first row image is
    present: np.ndarray  #: int64 (E, 2): columns in the before / after images
    is_update: np.ndarray  #: bool
    partial: np.ndarray  #: bool: PARTIAL_UPDATE_ROWS_EVENT

    def walk(self, e: int, p: int, k: int, cap: int, *, absent: bool, value_at: bool = False) -> tuple:
        """One call of :func:`vecbinlog.walk.walk_row_images` from image ``k`` of event ``e``
        at ``p``, with its output arrays for at most ``cap`` images: returns (its result,
        outputs)."""
        plan, ncols = self.plan, self.ncols
        at, fixed_size = plan.places(cap)
        out = _Walked(
            event=np.empty(cap, np.int64), number=np.empty(cap, np.int64), start=np.empty(cap, np.int64),
            valid=np.empty((ncols, cap), bool), absent=np.empty((ncols if absent else 0, cap), bool),
            fixed=np.empty(fixed_size, np.uint8), var_start=np.empty((plan.n_var, cap), np.int64),
            var_len=np.empty((plan.n_var, cap), np.int64),
            partial=np.empty((plan.n_json if self.partial.any() else 0, cap), bool),
            value_at=np.empty((ncols if value_at else 0, cap), np.int64), at=at,
        )
        result = walk.walk_row_images(
            self.file.buf, self.bitmaps, self.rows.body_end, self.is_update, self.partial, self.present, ncols,
            plan.how, plan.width, at, plan.json_slot, e, p, k, cap,
            out.event, out.number, out.start, out.valid, out.absent, out.fixed, out.var_start, out.var_len,
            out.partial, out.value_at)
        return result, out

    def fail(self, e: int, message: str) -> MalformedEventError:
        return MalformedEventError(message, path=self.file.path, offset=int(self.rows.pos[e]),
                                   event_type=event_type_name(int(self.rows.type_code[e])))

    def value_offset(self, e: int, k: int, start: int, c: int) -> int | None:
        """Where the value of column ``c`` of image ``k`` of event ``e`` (at ``start``) is: the
        image walked again, for an error message."""
        (n, *_), out = self.walk(e, start, k, 2, absent=False, value_at=True)
        return int(out.value_at[c, 0]) if n else None


@dataclass
class _Walked:
    """The output arrays of one walk call (see :func:`vecbinlog.walk.walk_row_images`)."""

    event: np.ndarray
    number: np.ndarray
    start: np.ndarray
    valid: np.ndarray
    absent: np.ndarray
    fixed: np.ndarray
    var_start: np.ndarray
    var_len: np.ndarray
    partial: np.ndarray
    value_at: np.ndarray
    at: np.ndarray  #: where each column is in ``fixed`` or the position arrays


@dataclass
class RowImages:
    """A batch of row images of a run of rows events of one table layout, in log order, with
    every column's values located (not yet converted).

    Per column ``c``: ``valid[c]`` (bool, n) says a value is there; a fixed-width column's
    bytes are ``fixed[c]`` (uint8 (n, width), zeros where there is no value), a length-prefixed
    column's values are at ``var[c] = (positions, lengths)`` in ``file.buf``; ``absent[c]``
    (None: no column is left out of any image) says the column is not in the image at all;
    ``partial[c]`` (only JSON columns with diffs) says the value is a JSON diff vector.
    """

    table_map: TableMap
    file: EventSource
    event_pos: np.ndarray  #: int64 (n,) offset in the file of the rows event (or of its compressed event)
    event: np.ndarray  #: int64 (n,) which of the run's rows events the row is in
    image_number: np.ndarray  #: int64 (n,) the image's number within its event
    image_start: np.ndarray  #: int64 (n,) where the image starts in ``file.buf``
    inner: np.ndarray  #: int64 (n,) offset of the rows event inside a transaction payload, or -1
    timestamp: np.ndarray  #: uint32 (n,) header timestamp of the rows event
    change: np.ndarray  #: int8 (n,) index into CHANGE_TYPES
    event_row: np.ndarray  #: int32 (n,) row number within its event
    valid: np.ndarray  #: bool (C, n)
    absent: np.ndarray | None  #: bool (C, n), or None
    fixed: dict[int, np.ndarray] = field(default_factory=dict)  #: column -> uint8 (n, width)
    var: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  #: column -> int64 (n,) x 2
    partial: dict[int, np.ndarray] = field(default_factory=dict)  #: column -> bool (n,)
    events: _Events | None = field(default=None, repr=False)

    _PER_ROW = ("event_pos", "event", "image_number", "image_start", "inner", "timestamp", "change", "event_row")

    def __len__(self) -> int:
        return len(self.event_pos)

    def take(self, keep: np.ndarray) -> RowImages:
        """The rows where ``keep`` (a boolean mask or positions) selects."""
        return RowImages(
            table_map=self.table_map, file=self.file, events=self.events,
            **{name: getattr(self, name)[keep] for name in self._PER_ROW},
            valid=self.valid[:, keep], absent=None if self.absent is None else self.absent[:, keep],
            fixed={c: v[keep] for c, v in self.fixed.items()},
            var={c: (s[keep], n[keep]) for c, (s, n) in self.var.items()},
            partial={c: v[keep] for c, v in self.partial.items()},
        )

    def has_values(self, c: int) -> bool:
        """Whether some row has a value (or a JSON diff) in column ``c``."""
        return bool(self.valid[c].any()) or (c in self.partial and bool(self.partial[c].any()))

    def value_offset(self, row: int, c: int) -> int | None:
        """Where the value of column ``c`` in ``row`` is in ``file.buf`` (for messages)."""
        if c in self.var:
            return int(self.var[c][0][row])
        if self.events is None:
            return None
        return self.events.value_offset(int(self.event[row]), int(self.image_number[row]),
                                        int(self.image_start[row]), c)


class PlacedRun:
    """The row images of ``rows`` (rows events of layout ``table_map``, in log order), placed
    batch after batch by :meth:`batches`; the rows headers are walked (and checked) when it is
    made. ``tables``: what messages call the table (default the layout's name)."""

    def __init__(self, file: EventSource, rows: EventIndex, table_map: TableMap, tables: str | None = None,
                 max_images: int = MAX_BATCH_IMAGES, max_cells: int = MAX_BATCH_CELLS) -> None:
        if len(rows) == 0:
            raise ValueError("a run of no rows events")
        ncols = len(table_map.columns)
        self.rows, self.table_map, self.tables = rows, table_map, tables
        self.kind = _KIND_OF_TYPE[rows.type_code]
        first_event = (file.path, int(rows.pos[0]), event_type_name(int(rows.type_code[0])))
        self.events = events = _Events(
            file=file, rows=rows, table_map=table_map, plan=ColumnPlan.of(table_map, first_event), ncols=ncols,
            bitmaps=np.zeros(len(rows), np.int64), first=np.zeros(len(rows), np.int64),
            present=np.zeros((len(rows), 2), np.int64), is_update=self.kind == RowsKind.UPDATE,
            partial=rows.type_code == EventType.PARTIAL_UPDATE_ROWS_EVENT,
        )
        code, e, width = walk.walk_rows_headers(file.buf, rows.offset, rows.post_header_len, rows.body_end,
                                                events.is_update, ncols, events.first, events.bitmaps, events.present)
        if code:
            raise events.fail(e, walk.ROWS_ERRORS[code].format(width=width, ncols=ncols))
        # MINIMAL/NOBLOB images leave columns out: only then is _absent written
        self.absent = bool((events.present[:, 0] < ncols).any() or (events.present[events.is_update, 1] < ncols).any())
        #: images per batch at most
        self.cap = max(min(max_images, max_cells // max(ncols, 1)), 2)
        # the fewest bytes an image can take, to size a call's arrays by the bytes left (a guess
        # only: the walk stops at the arrays' end and goes on from there)
        self.min_image = 1
        if not self.absent:
            needed = np.array([not spec.nullable for spec in table_map.columns], bool)
            self.min_image = max((ncols + 7) // 8 + int(events.plan.width[needed].sum()), 1)

    def batches(self) -> Iterator[RowImages]:
        """The row images in batches of at most ``cap`` images (``max_images``, and
        ``max_cells`` cells); an UPDATE's two images are always in the same batch. Each
        batch's ``event`` indexes ``rows``."""
        rows, events, ncols = self.rows, self.events, len(self.table_map.columns)
        budget = MAX_CELLS_PER_BYTE * int(rows.event_size.sum()) + MIN_CELLS_BUDGET
        cells = 0
        e, p, k = 0, int(events.first[0]), 0
        while e < len(rows):
            left = int(rows.body_end[e:].sum() - events.first[e:].sum()) + int(events.first[e]) - p
            (n, e, p, k, code, image, column), out = events.walk(
                e, p, k, max(min(self.cap, left // self.min_image + 2), 2), absent=self.absent)
            if code:
                raise events.fail(e, walk.IMAGE_ERRORS[code].format(image=image, column=column + 1))
            cells += n * ncols
            if cells > budget:
                raise events.fail(
                    e if e < len(rows) else len(rows) - 1,
                    f"the row images of {self.tables or self.table_map.name} would decode to more than {budget} "
                    f"cells from {int(rows.event_size.sum())} bytes of rows events (over {MAX_CELLS_PER_BYTE} per byte)")
            if n:
                yield _batch(events, out, n, self.kind)
            del out


def place_images(file: EventSource, maps: TableMaps, rows: EventIndex, table_map: TableMap,
                 tables: str | None = None, max_images: int = MAX_BATCH_IMAGES,
                 max_cells: int = MAX_BATCH_CELLS) -> Iterator[RowImages]:
    """The row images of ``rows`` (rows events of layout ``table_map``, in log order) in
    batches (see :class:`PlacedRun`); nothing, of no events."""
    if len(rows):
        yield from PlacedRun(file, rows, table_map, tables, max_images, max_cells).batches()


def _batch(events: _Events, out: _Walked, n: int, kind: np.ndarray) -> RowImages:
    """RowImages of the first ``n`` images a walk call wrote."""
    rows, plan = events.rows, events.plan
    ev, number = out.event[:n], out.number[:n]
    k_ev = kind[ev]
    fixed, var, partial = {}, {}, {}
    for c in range(events.ncols):
        a, w = int(out.at[c]), int(plan.width[c])
        if plan.how[c] == walk.FIXED:
            fixed[c] = out.fixed[a: a + n * w].reshape(n, w)
        else:
            var[c] = (out.var_start[a, :n], out.var_len[a, :n])
        if len(out.partial) and plan.json_slot[c] >= 0:
            bits = out.partial[plan.json_slot[c], :n]
            if bits.any():
                partial[c] = bits
    return RowImages(
        table_map=events.table_map, file=events.file, events=events,
        event_pos=rows.pos[ev], event=ev, image_number=number, image_start=out.start[:n], inner=rows.inner[ev],
        timestamp=rows.timestamp[ev], change=_CHANGE_OF[k_ev * 2 + (number & 1)],
        event_row=(number >> (k_ev == RowsKind.UPDATE)).astype(np.int32),  # an UPDATE's pair is one row
        valid=out.valid[:, :n], absent=out.absent[:, :n] if len(out.absent) else None,
        fixed=fixed, var=var, partial=partial,
    )
