"""Rows events: from a run of rows events of one table layout to its row images, column by column.

Where each row image starts is a chain inside each event, walked by the compiled loop of
:mod:`vecbinlog.decode.rowwalk` (the byte layout is written there). The walk writes what the column
decoders need directly: each fixed-width column's bytes (rows x width), each length-prefixed
column's value positions and lengths in the file, which values are there (validity), which
columns an image leaves out (``_absent``, MINIMAL/NOBLOB images) and which JSON values are
diffs (PARTIAL_UPDATE_ROWS_EVENT). It stops after a batch of images (``batch_rows``, and a
bound on rows x columns) and goes on from there, so a batch's memory does not depend on how
many images the events hold. The values are then converted by ``decoders/``, one column at a
time.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from ..binlog.gathered import Gathered
from ..binlog.headers import ROWS_KIND, EventIndex
from ..binlog.eventsource import EventSource
from ..constants import ColumnType, EventType, RowsKind, event_type_name
from ..errors import MalformedEventError, UnsupportedError
from ..jit import check_spans, sparse_empty
from ..tables.table_map import TableMap
from ..tables.types import MARIADB_OLD_TEMPORAL
from . import rowwalk

__all__ = ["RowImages", "ColumnPlan", "PlacedRun", "place_images", "explained", "CHANGE_TYPES"]

#: ``_change_type`` values, in the order of their codes.
CHANGE_TYPES = ("insert", "update_preimage", "update_postimage", "delete")
INSERT, UPDATE_PRE, UPDATE_POST, DELETE = range(4)
#: change code of image ``2 * kind + (image number & 1)`` (an UPDATE's images alternate before/after)
_CHANGE_OF = np.zeros(6, np.int8)
_CHANGE_OF[[2 * RowsKind.WRITE, 2 * RowsKind.WRITE + 1]] = INSERT
_CHANGE_OF[[2 * RowsKind.UPDATE, 2 * RowsKind.UPDATE + 1]] = UPDATE_PRE, UPDATE_POST
_CHANGE_OF[[2 * RowsKind.DELETE, 2 * RowsKind.DELETE + 1]] = DELETE


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


#: column plans :meth:`ColumnPlan.of` keeps (then it starts over: bounded memory)
PLANS_KEPT = 1024
_PLANS: dict[int, tuple[TableMap, ColumnPlan]] = {}


@dataclass(frozen=True)
class ColumnPlan:
    """How the walk stores each column of a layout (per column ``c``, as :mod:`vecbinlog.decode.rowwalk`
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

    @functools.cached_property
    def columns(self) -> list[tuple[int, bool, int, int]]:
        """Per column (as Python values, for the loops of every batch): (column, fixed-width,
        width, JSON slot)."""
        return list(zip(range(len(self.how)), (self.how == rowwalk.FIXED).tolist(), self.width.tolist(),
                        self.json_slot.tolist()))

    @classmethod
    def of(cls, table_map: TableMap, where: tuple[str, int, str]) -> ColumnPlan:
        """The plan of ``table_map``; ``where`` = (path, offset, event type) for errors. Made
        once per layout object in the process, then kept (a run of 28 columns: ~14 us)."""
        kept = _PLANS.get(id(table_map))
        if kept is not None and kept[0] is table_map:  # the layout is held, so its id is its own
            return kept[1]
        plan = cls._of(table_map, where)
        if len(_PLANS) >= PLANS_KEPT:
            _PLANS.clear()  # (atomic: safe with reads on other threads)
        _PLANS[id(table_map)] = (table_map, plan)
        return plan

    @classmethod
    def _of(cls, table_map: TableMap, where: tuple[str, int, str]) -> ColumnPlan:
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
                how[c], slot[c], var = rowwalk.PREFIXED, var, var + 1
            if spec.type == ColumnType.MYSQL_TYPE_JSON:
                json_slot[c], n_json = n_json, n_json + 1
        return cls(how, width, slot, json_slot, fixed, n_fixed, var, n_json)

    def places(self, cap: int) -> tuple[np.ndarray, int]:
        """For a walk of at most ``cap`` images: where each column goes (``at`` of
        :func:`vecbinlog.decode.rowwalk.walk_row_images`: a fixed-width column's first byte in the fixed
        output, a prefixed column's row in the position arrays), and the fixed output's size."""
        fixed = self.how == rowwalk.FIXED
        ordinal = np.cumsum(fixed) - fixed  # fixed-width columns before each
        at = np.where(fixed, cap * self.slot + rowwalk.PADDING * ordinal, self.slot)
        return at, cap * self.fixed_bytes + rowwalk.PADDING * self.n_fixed


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
        """One call of :func:`vecbinlog.decode.rowwalk.walk_row_images` from image ``k`` of event ``e``
        at ``p``, with its output arrays for at most ``cap`` images: returns (its result,
        outputs)."""
        plan, ncols = self.plan, self.ncols
        at, fixed_size = plan.places(cap)
        empty = sparse_empty  # (room for ``cap`` images, of which a call may write few)
        out = _Walked(
            event=empty(cap, np.int64), number=empty(cap, np.int64), start=empty(cap, np.int64),
            valid=empty((ncols, cap), bool), absent=empty((ncols if absent else 0, cap), bool),
            fixed=empty(fixed_size, np.uint8), var_start=empty((plan.n_var, cap), np.int64),
            var_len=empty((plan.n_var, cap), np.int64),
            partial=empty((plan.n_json if self.partial.any() else 0, cap), bool),
            value_at=empty((ncols if value_at else 0, cap), np.int64), at=at,
        )
        result = rowwalk.walk_row_images(
            self.file.buf, self.bitmaps, self.rows.body_end, self.is_update, self.partial, self.present, ncols,
            plan.how, plan.width, at, plan.json_slot, e, p, k, cap,
            out.event, out.number, out.start, out.valid, out.absent, out.fixed, out.var_start, out.var_len,
            out.partial, out.value_at)
        return result, out

    def fail(self, e: int, message: str) -> MalformedEventError:
        src = self.file  # (events of several files gathered: the event's own file)
        path = src.path_at(int(self.rows.offset[e])) if isinstance(src, Gathered) else src.path
        return MalformedEventError(message, path=path, offset=int(self.rows.pos[e]),
                                   event_type=event_type_name(int(self.rows.type_code[e])))

    def value_offset(self, e: int, k: int, start: int, c: int) -> int | None:
        """Where the value of column ``c`` of image ``k`` of event ``e`` (at ``start``) is: the
        image walked again, for an error message."""
        (n, *_), out = self.walk(e, start, k, 2, absent=False, value_at=True)
        return int(out.value_at[c, 0]) if n else None


@dataclass
class _Walked:
    """The output arrays of one walk call (see :func:`vecbinlog.decode.rowwalk.walk_row_images`)."""

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
    made. ``tables``: what messages call the table (default the layout's name). Errors name
    the cause when it is a MariaDB pre-10.1 temporal column (:func:`explained`)."""

    def __init__(self, file: EventSource, rows: EventIndex, table_map: TableMap, tables: str | None = None,
                 max_images: int = MAX_BATCH_IMAGES, max_cells: int = MAX_BATCH_CELLS) -> None:
        if len(rows) == 0:
            raise ValueError("a run of no rows events")
        self.flavor = file.formats[0].flavor
        with explained(table_map, self.flavor):
            self._walk_headers(file, rows, table_map, tables, max_images, max_cells)

    def _walk_headers(self, file: EventSource, rows: EventIndex, table_map: TableMap, tables: str | None,
                      max_images: int, max_cells: int) -> None:
        ncols = len(table_map.columns)
        self.rows, self.table_map, self.tables = rows, table_map, tables
        self.kind = ROWS_KIND[rows.type_code]
        path = file.path_at(int(rows.offset[0])) if isinstance(file, Gathered) else file.path
        first_event = (path, int(rows.pos[0]), event_type_name(int(rows.type_code[0])))
        self.events = events = _Events(
            file=file, rows=rows, table_map=table_map, plan=ColumnPlan.of(table_map, first_event), ncols=ncols,
            bitmaps=np.zeros(len(rows), np.int64), first=np.zeros(len(rows), np.int64),
            present=np.zeros((len(rows), 2), np.int64), is_update=self.kind == RowsKind.UPDATE,
            partial=rows.type_code == EventType.PARTIAL_UPDATE_ROWS_EVENT,
        )
        # every read of the rows walks is inside the events' bodies (each checked in the walks): those inside buf
        check_spans(len(file.buf), rows.offset, rows.body_end, "rows events", path)
        code, e, width = rowwalk.walk_rows_headers(file.buf, rows.offset, rows.post_header_len, rows.body_end,
                                                events.is_update, ncols, events.first, events.bitmaps, events.present)
        if code:
            raise events.fail(e, rowwalk.ROWS_ERRORS[code].format(width=width, ncols=ncols))
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
        with explained(self.table_map, self.flavor):
            yield from self._batches()

    def _batches(self) -> Iterator[RowImages]:
        rows, events, ncols = self.rows, self.events, len(self.table_map.columns)
        budget = MAX_CELLS_PER_BYTE * int(rows.event_size.sum()) + MIN_CELLS_BUDGET
        cells = 0
        # the image bytes of events e.. (from their first image on): what a call sizes its arrays by
        image_bytes = rows.body_end - events.first
        after = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(image_bytes[::-1], out=after[-2::-1])
        e, p, k = 0, int(events.first[0]), 0
        while e < len(rows):
            left = int(after[e]) + int(events.first[e]) - p
            (n, e, p, k, code, image, column), out = events.walk(
                e, p, k, max(min(self.cap, left // self.min_image + 2), 2), absent=self.absent)
            if code:
                raise events.fail(e, rowwalk.IMAGE_ERRORS[code].format(image=image, column=column + 1))
            cells += n * ncols
            if cells > budget:
                raise events.fail(
                    e if e < len(rows) else len(rows) - 1,
                    f"the row images of {self.tables or self.table_map.name} would decode to more than {budget} "
                    f"cells from {int(rows.event_size.sum())} bytes of rows events (over {MAX_CELLS_PER_BYTE} per byte)")
            if n:
                yield _batch(events, out, n, self.kind)
            del out


def place_images(file: EventSource, rows: EventIndex, table_map: TableMap,
                 tables: str | None = None, max_images: int = MAX_BATCH_IMAGES,
                 max_cells: int = MAX_BATCH_CELLS) -> Iterator[RowImages]:
    """The row images of ``rows`` (rows events of layout ``table_map``, in log order) in
    batches (see :class:`PlacedRun`); nothing, of no events."""
    if len(rows):
        yield from PlacedRun(file, rows, table_map, tables, max_images, max_cells).batches()


@contextlib.contextmanager
def explained(tm: TableMap, flavor: str) -> Iterator[None]:
    """Name the cause when MariaDB's pre-10.1 temporal columns make the row images not add up:
    such a column of the TABLE_MAP (TIME 11, DATETIME 12, TIMESTAMP 7, no metadata) is larger
    than its type code says when it has fractional seconds."""
    try:
        yield
    except MalformedEventError as exc:
        old = [c for c in tm.columns if c.type in MARIADB_OLD_TEMPORAL]
        if flavor != "mariadb" or not old:
            raise
        names = ", ".join(f"{n} ({c.type_name})" for c, n in zip(old, (tm.column_names[c.index] for c in old)))
        raise MalformedEventError(
            f"{exc.message}: {tm.name} has {names} in MariaDB's pre-10.1 temporal format "
            "(mysql56_temporal_format=OFF, or a table made by MariaDB 5.3-10.0), whose size the binlog "
            "does not give: with fractional seconds (TIME(n), DATETIME(n), TIMESTAMP(n), n > 0) the values "
            "are larger than the type says, so the row images cannot be read (mariadb-binlog cannot print "
            "them either); ALTER TABLE ... FORCE with mysql56_temporal_format=ON converts the table",
            path=exc.path, offset=exc.offset, event_type=exc.event_type,
        ) from exc


#: a walk's room for fixed-width values of this many bytes or more, more than twice what its
#: images used, has them moved into an array of their size: decoded columns that keep their
#: bytes as they are (integers, floats...) hold the array they are in, and a read's result
#: held every walk's room (a 390 MB archive: 199 MB of rooms, 624 of them, for a result of 173 MB)
COMPACT_ROOM_BYTES = 64 << 10


def _batch(events: _Events, out: _Walked, n: int, kind: np.ndarray) -> RowImages:
    """RowImages of the first ``n`` images a walk call wrote (their fixed-width values moved
    out of a room mostly empty: :data:`COMPACT_ROOM_BYTES`)."""
    rows, plan = events.rows, events.plan
    ev, number = out.event[:n], out.number[:n]
    k_ev = kind[ev]
    fixed, var, partial = {}, {}, {}
    room, at = out.fixed, out.at
    at_n, size_n = plan.places(n)
    columns = plan.columns
    if room.nbytes >= COMPACT_ROOM_BYTES and room.nbytes > 2 * size_n:
        room = np.empty(size_n, np.uint8)  # the values moved out of a room mostly empty
        for (c, is_fixed, w, _), a, b in zip(columns, out.at.tolist(), at_n.tolist()):
            if is_fixed:
                room[b: b + n * w] = out.fixed[a: a + n * w]
        at = at_n
    with_partial = len(out.partial) > 0
    for (c, is_fixed, w, json_slot), a in zip(columns, at.tolist()):
        if is_fixed:
            fixed[c] = room[a: a + n * w].reshape(n, w)
        else:
            var[c] = (out.var_start[a, :n], out.var_len[a, :n])
        if with_partial and json_slot >= 0:
            bits = out.partial[json_slot, :n]
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
