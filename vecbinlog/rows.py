"""Rows events: from event headers to the position of every value, for many events at once.

Layout (rows_event.h, Rows_event; sql/log_event.cc, unpack_row)::

    post-header  table_id    uint48 (uint32 when the post-header length is 6)
                 flags       uint16
                 extra_len   uint16, v2 only (post-header length 10): extra data length + 2
                 extra data  extra_len - 2 bytes, v2 only
    body         width       packed int: number of columns (equal to the TABLE_MAP's)
                 cols        (width + 7) / 8 bytes: columns present in the (before) image
                 cols_ai     the same, for the after image, UPDATE events only
                 rows        row images back to back until the end of the body; an UPDATE
                             row is a before image followed by an after image

    row image    null bits   (present + 7) / 8 bytes, LSB first, one bit per *present* column
                 values      one per present, non-NULL column, in column order

PARTIAL_UPDATE_ROWS_EVENT (39) is UPDATE_ROWS v2 whose after images start with
``value_options`` and, with PARTIAL_JSON_UPDATES, one bit per JSON column of the table: the
JSON values whose bit is set are diff vectors, stored like a JSON value (see
``decoders/jsondiff.py``). They are placed as any value and marked in ``RowImages.partial``.

Rows inside one event are chained (each image's size depends on its null bits and its
lengths), but events are independent: the images are walked with one cursor per event, all
events advancing in lock-step, one image per step, and each step is a handful of NumPy
operations over all events that still have images. A run of fixed-width columns moves the
cursors by its width less that of its NULL columns (through per-byte tables of the null bitmap
for FULL images); each length-prefixed column costs a gather of its prefix. The steps only
find where each image starts; the images are then laid out (where each value is) in one pass
over all of them, a batch at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from .constants import ROWS_EVENTS, ColumnType, EventType, RowsKind, event_type_name
from .errors import MalformedEventError, UnsupportedError
from .file import BinlogFile
from .index import EventIndex
from .layout import COMMON_HEADER_LEN, ROWS_HEADER_LEN_V1, ROWS_HEADER_LEN_V2, version_tuple
from .table_map import TableMap, parse_table_map

__all__ = ["RowImages", "TableMaps", "locate_images", "place_images", "place_together", "CHANGE_TYPES"]

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
ROWS_TYPE_CODES = np.array(sorted(ROWS_EVENTS), np.uint8)

#: Decoded cells (rows x columns) allowed per byte of rows events. Every present column costs
#: at least one null bit, so full images give at most 8 cells per byte; a MINIMAL image of a
#: 4096-column table (MySQL's maximum) that holds just a 4-byte key gives about 800. Past
#: 1024 the row images can only be hostile: they would make the output (and the offsets
#: behind it) thousands of times larger than the file.
MAX_CELLS_PER_BYTE = 1024
#: ... plus this many cells whatever the size, so that small inputs are never refused.
MIN_CELLS_BUDGET = 1 << 24
#: Row images and placed cells (images x columns placed) of one placement, at most: a run of
#: events that holds more is placed in smaller groups of events, and a single event that holds
#: more in pieces (:func:`place_images`), so that a batch's working memory is bounded whatever
#: the events hold (a 1-byte row image comes back as ~70 bytes of Arrow).
MAX_BATCH_IMAGES = 1 << 18
MAX_BATCH_CELLS = 1 << 22
#: The walk of a group of several events keeps (event, image number, start) of at most this
#: many images (24 bytes each) before they are laid out a piece at a time; a group that holds
#: more is cut into smaller groups (each costs its own lock-step rounds, so this is larger
#: than a piece: 32 MB of 8-byte row images stay one group). A single event is walked a
#: piece at a time.
WALK_IMAGES = 1 << 22
#: TABLE_MAP bytes compared per np.unique round (bounds the temporary (maps, bytes) array).
_KEY_BYTES_PER_ROUND = 16 << 20


class _TooMany(Exception):
    """Internal: a group of events holds more images (or cells) than one placement may; the
    caller places it in smaller groups, sized by what was seen so far."""

    def __init__(self, bytes_per_image: float, bytes_per_cell: float) -> None:
        super().__init__("placement bound exceeded")
        self.bytes_per_image, self.bytes_per_cell = bytes_per_image, bytes_per_cell


def _raise_at(file: BinlogFile, index: EventIndex, bad: np.ndarray, message: str, cls=MalformedEventError):
    """Raise for the first event where ``bad`` is True."""
    i = int(np.flatnonzero(bad)[0])
    raise cls(
        message, path=file.path, offset=int(index.pos[i]), event_type=event_type_name(int(index.type_code[i]))
    )


def read_uint(buf: np.ndarray, pos: np.ndarray, nbytes: np.ndarray | int, clip: bool = False) -> np.ndarray:
    """Little-endian unsigned ints of ``nbytes`` (<= 8, per element or one for all) at ``pos``
    (with ``clip``, bytes past the buffer read as its last byte instead of raising)."""
    nb = np.broadcast_to(np.asarray(nbytes, np.int64), pos.shape)
    width = int(nb.max()) if nb.size else 0
    if width == 0:
        return np.zeros(pos.shape, np.uint64)
    k = np.arange(width, dtype=np.int64)
    inside = k < nb[:, None]
    raw = np.take(buf, np.where(inside, pos[:, None] + k, 0), mode="clip" if clip else "raise").astype(np.uint64)
    raw *= inside
    return (raw << (np.uint64(8) * k.astype(np.uint64))).sum(axis=1, dtype=np.uint64)


def _prefixes(buf: np.ndarray, pos: np.ndarray, where: np.ndarray, k: int) -> np.ndarray:
    """The ``k``-byte little-endian length prefixes at ``pos`` where ``where`` (0 elsewhere):
    ``read_uint`` for one width, with fewer NumPy calls (it runs once per round and column)."""
    p = pos * where
    out = np.take(buf, p).astype(np.int64)
    for i in range(1, k):
        out |= np.take(buf, p + i).astype(np.int64) << (8 * i)
    out *= where
    return out


class TableMaps:
    """The TABLE_MAP state of one file: which table layout each table id means, and when.

    Table maps are deduplicated by their bytes (a busy server writes the same map before
    every transaction), so each distinct layout is parsed once.
    """

    def __init__(self, file: BinlogFile):
        self.file = file
        self.layouts: list[TableMap] = []  #: layout id -> TableMap
        self._by_bytes: dict[bytes, int] = {}
        self.current: dict[int, int] = {}  #: table id -> layout id, as of the end of the last segment

    def _layout_ids(self, index: EventIndex, tm_pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Table id and layout id of the TABLE_MAP events ``index[tm_pos]``.

        Maps are grouped by their bytes with NumPy (same length, then np.unique over the raw
        bytes), so only distinct layouts reach Python: a busy server repeats the same few maps
        in every transaction.
        """
        n = len(tm_pos)
        ids = np.zeros(n, np.int64)
        lids = np.zeros(n, np.int64)
        if n == 0:
            return ids, lids
        ev = index.take(tm_pos)
        ph = np.array([f.post_header_len(EventType.TABLE_MAP_EVENT) for f in self.file.formats], np.int64)[ev.fmt]
        start = ev.offset + COMMON_HEADER_LEN
        short = start + ph > ev.body_end
        if short.any():
            k = int(np.flatnonzero(short)[0])
            raise MalformedEventError(
                f"event of {int(ev.event_size[k])} bytes is shorter than its {int(ph[k])}-byte post-header",
                path=self.file.path, offset=int(ev.pos[k]), event_type="TABLE_MAP_EVENT",
            )
        id_len = np.where(ph == 6, 4, 6)
        ids[:] = read_uint(self.file.buf, start, id_len).astype(np.int64)
        key_start = start + id_len
        key_len = ev.body_end - key_start
        for length in np.unique(key_len).tolist():
            group = np.flatnonzero(key_len == length)
            step = max(1, _KEY_BYTES_PER_ROUND // max(length, 1))
            for lo in range(0, len(group), step):
                sel = group[lo : lo + step]
                raw = np.take(self.file.buf, key_start[sel, None] + np.arange(length))
                keys = np.ascontiguousarray(raw).view(f"V{length}").ravel() if length else np.zeros(len(sel), "V1")
                _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
                uniq = np.zeros(len(first), np.int64)
                for u in np.argsort(first).tolist():  # new layouts in order of appearance
                    f = int(first[u])
                    uniq[u] = self._layout_for(ev, int(sel[f]), raw[f].tobytes(), int(ph[sel[f]]))
                lids[sel] = uniq[inverse.ravel()]
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
                server_major=major,
            )
        except UnsupportedError as exc:
            if exc.offset is None:
                exc = UnsupportedError(exc.message, path=self.file.path, offset=off, event_type="TABLE_MAP_EVENT")
            raise getattr(self.file, "relocate", lambda e: e)(exc) from exc
        except MalformedEventError as exc:
            raise getattr(self.file, "relocate", lambda e: e)(exc) from exc
        lid = len(self.layouts)
        self.layouts.append(tm)
        self._by_bytes[key] = lid
        return lid

    def resolve(self, index: EventIndex, src=None) -> tuple[np.ndarray, np.ndarray]:
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
        rows_pos = np.flatnonzero(np.isin(tc, ROWS_TYPE_CODES))
        tm_ids, tm_layout = self._layout_ids(index, tm_pos)
        if len(rows_pos) == 0:
            self._carry(tm_ids, tm_layout)
            return rows_pos, np.zeros(0, np.int64)
        rows_ids = self.table_ids(index.take(rows_pos))
        # Last TABLE_MAP (same id) before each rows event: search in (id, position) order.
        uniq, codes = np.unique(np.concatenate([tm_ids, rows_ids]), return_inverse=True)
        span = len(index) + 1
        tm_key = codes[: len(tm_ids)] * span + tm_pos
        rows_key = codes[len(tm_ids) :] * span + rows_pos
        order = np.argsort(tm_key, kind="stable")
        tm_key_sorted = tm_key[order]
        j = np.searchsorted(tm_key_sorted, rows_key, side="right") - 1
        jc = np.clip(j, 0, None)
        found = (j >= 0) & (len(tm_key_sorted) > 0)
        if len(tm_key_sorted):
            found &= tm_ids[order][jc] == rows_ids
        layout = np.where(found, tm_layout[order][jc] if len(tm_key_sorted) else 0, -1)
        if not found.all():
            for k in np.flatnonzero(~found).tolist():
                layout[k] = self.current.get(int(rows_ids[k]), -1)
            missing = layout < 0
            if missing.any():
                k = int(np.flatnonzero(missing)[0])
                i = int(rows_pos[k])
                raise MalformedEventError(
                    f"rows event for table id {int(rows_ids[k])}, which no TABLE_MAP_EVENT before it defines",
                    path=self.file.path, offset=int(index.pos[i]), event_type=event_type_name(int(tc[i])),
                )
        self._carry(tm_ids, tm_layout)
        return rows_pos, layout.astype(np.int64)

    def _carry(self, tm_ids: np.ndarray, tm_layout: np.ndarray) -> None:
        for tid, lid in zip(tm_ids.tolist(), tm_layout.tolist()):
            self.current[tid] = lid

    def table_ids(self, rows: EventIndex) -> np.ndarray:
        """The table id in the post-header of each rows event (4 or 6 bytes by format)."""
        ph = self.post_header_lengths(rows)
        if not np.isin(ph, (6, ROWS_HEADER_LEN_V1, ROWS_HEADER_LEN_V2)).all():
            bad = ~np.isin(ph, (6, ROWS_HEADER_LEN_V1, ROWS_HEADER_LEN_V2))
            _raise_at(self.file, rows, bad, f"the FORMAT_DESCRIPTION_EVENT gives this rows event a {int(ph[bad][0])}-byte "
                      "post-header; rows events have 6, 8 or 10")
        if (rows.offset + COMMON_HEADER_LEN + ph > rows.body_end).any():
            _raise_at(self.file, rows, rows.offset + COMMON_HEADER_LEN + ph > rows.body_end,
                      "event is shorter than its post-header")
        id_len = np.where(ph == 6, 4, 6)
        return read_uint(self.file.buf, rows.offset + COMMON_HEADER_LEN, id_len).astype(np.int64)

    def post_header_lengths(self, rows: EventIndex) -> np.ndarray:
        table = np.zeros((len(self.file.formats), 256), np.int64)
        for f, fde in enumerate(self.file.formats):
            lengths = np.frombuffer(fde.post_header_lengths, np.uint8)[:255]  # type codes are one byte
            table[f, 1 : 1 + len(lengths)] = lengths
        return table[rows.fmt, rows.type_code]


@dataclass(frozen=True)
class AffineOffsets:
    """The offsets of values that sit at the same place in every image (FULL images of a
    table of fixed-width columns, no NULL): ``offsets[r, j] == starts[r] + within[j]``,
    kept as the two vectors instead of an (n, L) array. The values of neighbouring columns
    are then neighbouring bytes of each image, which the decoders gather in one copy."""

    starts: np.ndarray  #: int64 (n,): where the first placed column's value starts
    within: np.ndarray  #: int64 (L,): where each placed column starts, relative to it

    def __len__(self) -> int:
        return len(self.starts)

    def array(self) -> np.ndarray:
        """The (n, L) offsets."""
        return self.starts[:, None] + self.within


@dataclass
class RowImages:
    """Every row image of a run of rows events of one table layout, located, in log order.

    Only the columns present in at least one image are placed (``columns``, in order): a
    MINIMAL image of a wide table costs its own columns, not the table's. For row ``r`` and
    placed column ``columns[j]``, the value is at ``offsets[r, j]`` (bytes in ``file.buf``),
    of ``lengths[c][r]`` bytes for length-prefixed columns; ``valid`` says a value is there,
    ``absent`` that the column is not in the image at all. A column not in ``columns`` is
    absent from every image (:meth:`column` gives any column).
    """

    table_map: TableMap
    file: BinlogFile
    event_pos: np.ndarray  #: int64 (n,) offset in the file of the rows event (or of its compressed event)
    event: np.ndarray  #: int64 (n,) which of the located rows events the row is in
    inner: np.ndarray  #: int64 (n,) offset of the rows event inside a transaction payload, or -1
    timestamp: np.ndarray  #: uint32 (n,) header timestamp of the rows event
    change: np.ndarray  #: int8 (n,) index into CHANGE_TYPES
    event_row: np.ndarray  #: int32 (n,) row number within its event
    columns: np.ndarray  #: int64 (L,) the placed columns, increasing
    offsets: np.ndarray | AffineOffsets  #: int64 (n, L), or starts and relative places
    valid: np.ndarray  #: bool (n, L)
    absent: np.ndarray  #: bool (n, L)
    lengths: dict[int, np.ndarray] = field(default_factory=dict)  #: column -> int64 (n,)
    storage: list[tuple[str, int]] = field(default_factory=list)
    #: bool (n, L): the value is a JSON diff vector (PARTIAL_UPDATE_ROWS_EVENT after
    #: images), not a document; None when the run has no PARTIAL_UPDATE_ROWS_EVENT
    partial: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.event_pos)

    def take(self, keep: np.ndarray) -> RowImages:
        """The rows where ``keep`` (a boolean mask or positions) selects."""
        per_row = ("event_pos", "event", "inner", "timestamp", "change", "event_row", "valid", "absent")
        offsets = self.offsets
        offsets = (AffineOffsets(offsets.starts[keep], offsets.within) if isinstance(offsets, AffineOffsets)
                   else offsets[keep])
        out = RowImages(table_map=self.table_map, file=self.file, storage=self.storage, columns=self.columns,
                        offsets=offsets, **{name: getattr(self, name)[keep] for name in per_row})
        out.lengths = {c: v[keep] for c, v in self.lengths.items()}
        out.partial = None if self.partial is None else self.partial[keep]
        return out

    def split(self, sizes: list[int], table_maps: list[TableMap]) -> list[RowImages]:
        """These images, placed for events given run after run (``sizes[k]`` events of run
        ``k``, each run in log order), cut into each run's rows, each with ``event``
        renumbered against its run and its own layout ``table_maps[k]`` (stored alike). The
        images are in the order of their events, so each run's rows are a slice: no copy."""
        first = np.zeros(len(sizes) + 1, np.int64)
        np.cumsum(sizes, out=first[1:])
        cut = np.searchsorted(self.event, first)  # ``event`` is non-decreasing
        parts = []
        for k, table_map in enumerate(table_maps):
            part = self.take(slice(int(cut[k]), int(cut[k + 1])))
            part.event = part.event - first[k]
            part.table_map = table_map
            parts.append(part)
        return parts

    def slot(self, c: int) -> int:
        """Where column ``c`` is in the (n, L) arrays, or -1 when no image holds it."""
        j = int(np.searchsorted(self.columns, c))
        return j if j < len(self.columns) and self.columns[j] == c else -1

    def column(self, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Column ``c`` of every row: offsets (int64), valid (bool), partial (bool or None)."""
        j = self.slot(c)
        n = len(self)
        if j < 0:
            return np.zeros(n, np.int64), np.zeros(n, bool), None
        offsets = self.offsets
        at = (offsets.starts + offsets.within[j] if isinstance(offsets, AffineOffsets)
              else np.ascontiguousarray(offsets[:, j]))
        return at, np.ascontiguousarray(self.valid[:, j]), self.partial_of(c)

    def partial_of(self, c: int) -> np.ndarray | None:
        """bool (n,): the value of column ``c`` is a JSON diff vector; None when none is."""
        j = self.slot(c)
        if j < 0 or self.partial is None or not self.partial[:, j].any():
            return None
        return np.ascontiguousarray(self.partial[:, j])

    def any_absent(self) -> bool:
        """Whether some column is missing from some image (MINIMAL/NOBLOB images)."""
        return len(self.columns) < len(self.table_map.columns) or bool(self.absent.any())

    def absent_mask(self) -> np.ndarray:
        """bool (n, ncols): the column is not in the row image."""
        out = np.ones((len(self), len(self.table_map.columns)), bool)
        out[:, self.columns] = self.absent
        return out


def _rows_bodies(file: BinlogFile, maps: TableMaps, rows: EventIndex, ncols: int):
    """Parse the rows-event headers: kind, present bitmaps (n, 2, ncols), first row offset."""
    buf = file.buf
    ph = maps.post_header_lengths(rows)
    kind = _KIND_OF_TYPE[rows.type_code]
    start = rows.offset + COMMON_HEADER_LEN + ph
    v2 = ph == ROWS_HEADER_LEN_V2
    if v2.any():
        extra = read_uint(buf, rows.offset + COMMON_HEADER_LEN + 8, 2).astype(np.int64)
        bad = v2 & (extra < 2)
        if bad.any():
            _raise_at(file, rows, bad, "v2 extra-data length is below 2 (it counts its own 2 bytes)")
        start = start + np.where(v2, extra - 2, 0)
    end = rows.body_end
    if (start + 1 > end).any():
        _raise_at(file, rows, start + 1 > end, "rows event ends before its column count")
    first = np.take(buf, start).astype(np.int64)
    lenlen = np.select([first < 251, first == 252, first == 253, first == 254], [0, 2, 3, 8], -1)
    if (lenlen < 0).any():
        _raise_at(file, rows, lenlen < 0, "column count is not a valid packed integer")
    if (start + 1 + lenlen > end).any():
        _raise_at(file, rows, start + 1 + lenlen > end, "column count runs past the end of the event")
    width = np.where(lenlen == 0, first, read_uint(buf, start + 1, lenlen).astype(np.int64))
    start = start + 1 + lenlen
    if (width != ncols).any():
        bad = width != ncols
        i = int(np.flatnonzero(bad)[0])
        _raise_at(file, rows, bad, f"rows event has {int(width[i])} columns, its TABLE_MAP has {ncols}")
    nbytes = (ncols + 7) // 8
    is_update = kind == RowsKind.UPDATE
    need = start + nbytes * (1 + is_update)
    if (need > end).any():
        _raise_at(file, rows, need > end, "rows event ends inside its column bitmaps")
    k = np.arange(nbytes, dtype=np.int64)
    before = np.take(buf, start[:, None] + k)
    after = np.where(is_update[:, None], np.take(buf, np.where(is_update, start + nbytes, start)[:, None] + k), before)
    present = np.stack(
        [np.unpackbits(before, axis=1, bitorder="little")[:, :ncols],
         np.unpackbits(after, axis=1, bitorder="little")[:, :ncols]],
        axis=1,
    ).astype(bool)
    return kind, present, need


def _value_options(file: BinlogFile, rows: EventIndex, p: np.ndarray, end: np.ndarray, mask: np.ndarray,
                   json_cols: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    """The prefix of PARTIAL_UPDATE_ROWS_EVENT after images (where ``mask``): value_options,
    a packed integer, then with PARTIAL_JSON_UPDATES (bit 0x1) one bit per JSON column of the
    table, LSB first (log_event.cc, print_verbose_one_row). Returns the positions after the
    prefix and the (A, ncols) partial bits."""
    buf = file.buf
    partial = np.zeros((len(p), len(json_cols)), bool)
    if (mask & (p + 1 > end)).any():
        _raise_at(file, rows, mask & (p + 1 > end), f"row image {step} ends before its value_options")
    first = np.where(mask, np.take(buf, np.where(mask, p, 0)), 0).astype(np.int64)
    lenlen = np.select([first < 251, first == 252, first == 253, first == 254], [0, 2, 3, 8], -1)
    if (mask & (lenlen < 0)).any():
        _raise_at(file, rows, mask & (lenlen < 0), f"row image {step}: value_options is not a packed integer")
    lenlen = np.where(mask, lenlen, 0)
    if (mask & (p + 1 + lenlen > end)).any():
        _raise_at(file, rows, mask & (p + 1 + lenlen > end), f"row image {step}: value_options runs past the event")
    options = np.where(lenlen == 0, first, read_uint(buf, np.where(mask, p + 1, 0), lenlen).astype(np.int64))
    p = p + mask * (1 + lenlen)
    has_bits = mask & (options & 1 == 1)  # PARTIAL_JSON_UPDATES
    nbytes = (int(json_cols.sum()) + 7) // 8
    if has_bits.any() and nbytes:
        if (has_bits & (p + nbytes > end)).any():
            _raise_at(file, rows, has_bits & (p + nbytes > end), f"row image {step}: partial-JSON bits run past the event")
        raw = np.take(buf, np.where(has_bits[:, None], p[:, None] + np.arange(nbytes), 0))
        bits = np.unpackbits(raw, axis=1, bitorder="little")[:, : int(json_cols.sum())].astype(bool)
        partial[:, json_cols] = bits & has_bits[:, None]
        p = p + has_bits * nbytes
    return p, partial


def _fixed_image_counts(cur, end, present, nullbytes, is_update, widths) -> np.ndarray:
    """Images of each event if none of its values is NULL: its span over the size of an image
    (a before/after pair for UPDATE) when that divides it, else 0 (it holds NULLs)."""
    size = nullbytes + (present * widths).sum(axis=2)  # (E, 2) image size without NULLs
    unit = np.where(is_update == 1, size[:, 0] + size[:, 1], size[:, 0])
    span = end - cur
    ok = (span > 0) & (unit > 0) & (span % np.maximum(unit, 1) == 0)
    return np.where(ok, span // np.maximum(unit, 1) * (1 + is_update), 0)


def _place_fixed_images(buf, cur, end, present, nullbytes, is_update, widths, lay_out: bool = True):
    """Fast path for tables whose columns are all fixed-width: place every image at once.

    If no value of an event is NULL, all its images have the same size (a before/after pair
    for UPDATE), so they sit at ``cur + k * size``. That guess is checked, not assumed: the
    event's span must be a whole number of images and every image's null bits must be
    zero. Events that fail (they hold NULLs) are left to the lock-step walk.

    Returns (event, image number, placed columns (L,), offsets (n, L; AffineOffsets for FULL
    images), valid (n, L), events placed, image starts) or None; the placed columns are those
    present in some image of the events placed. ``lay_out=False``: the placed columns, offsets
    and valid are None (only which events are fast and where their images start).
    """
    size = nullbytes + (present * widths).sum(axis=2)  # (E, 2) image size without NULLs
    unit = np.where(is_update == 1, size[:, 0] + size[:, 1], size[:, 0])
    span = end - cur
    n_img = _fixed_image_counts(cur, end, present, nullbytes, is_update, widths)
    ok = n_img > 0
    if not ok.any():
        return None
    if int(n_img.sum()) * present.shape[2] > MAX_CELLS_PER_BYTE * int(span.sum()) + MIN_CELLS_BUDGET:
        return None  # the lock-step walk reports it
    ev = np.repeat(np.arange(len(cur)), n_img)
    first = np.zeros(len(cur), np.int64)
    first[1:] = np.cumsum(n_img)[:-1]
    img = np.arange(len(ev), dtype=np.int64) - first[ev]
    upd = is_update[ev]
    par = (img & 1) * upd
    start = cur[ev] + (img >> upd) * unit[ev] + par * size[ev, 0]
    full = bool(present.all())  # FULL images: one pattern for every image
    nb = nullbytes[ev, par]
    maxnb = int(nb.max())
    if maxnb:
        # the null bits in use (one per present column) of each (event, parity), as byte masks
        npres = present.sum(axis=2)  # (E, 2)
        k = np.arange(maxnb, dtype=np.int64)
        bits_in_byte = np.clip(npres[:, :, None] - 8 * k, 0, 8)  # (E, 2, maxnb)
        masks = ((1 << bits_in_byte) - 1).astype(np.uint8)
        if full:
            raw = np.take(buf, start[:, None] + k)  # every image has maxnb null bytes
            has_null = (raw & masks[0, 0]).any(axis=1)
        else:
            raw = np.take(buf, np.where(k < nb[:, None], start[:, None] + k, 0))
            has_null = (raw & masks[ev, par]).any(axis=1)
        if has_null.any():
            ok[np.unique(ev[has_null])] = False
            keep = ok[ev]
            ev, img, par, start, nb = ev[keep], img[keep], par[keep], start[keep], nb[keep]
    if not lay_out:  # which events are fast, and where their images start, only
        return ev, img, None, None, None, ok, start
    live = np.flatnonzero(present[ok].any(axis=(0, 1)))
    # where each column starts within an image of each (event, parity): a cumulative sum per
    # pattern, not per image
    contrib = present[:, :, live] * widths[live]  # (E, 2, L)
    within = np.cumsum(contrib, axis=2) - contrib
    if full:
        valid = np.ones((len(ev), live.size), bool)
        return ev, img, live, AffineOffsets(start + nb, within[0, 0]), valid, ok, start
    valid = present[:, :, live][ev, par]
    offs = (start + nb)[:, None] + within[ev, par]
    return ev, img, live, np.where(valid, offs, 0), valid, ok, start


#: Switch from the lock-step walk to the speculative chain (below) for the events still
#: active when ``columns x mean image bytes x active events`` is under this: the lock-step
#: walk costs ~60 us of NumPy overhead per step whatever the number of events in it, the
#: chain ~10 ns per byte and column of the events' remaining bytes.
SPECULATIVE_COST_RATIO = 6000
#: Candidate positions examined per round of the chain (bounds its temporary arrays).
CHAIN_WINDOW_CELLS = 1 << 19


def _image_sizes(buf, pos, ev, par, present, nullbytes, ordinal, runs, live):
    """Where an image would end if one started at each ``pos`` (image of event ``ev``, before
    (0) or after (1) image ``par``): the lock-step's arithmetic, one column at a time (no
    (positions x columns) array), reads clipped to the buffer and nothing checked: most
    positions are not image starts, and the chain keeps only those that are."""
    end = pos + nullbytes[ev, par]
    for run in runs:
        cols = range(run[1], run[2]) if run[0] == "fixed" else (run[1],)
        for j, c in enumerate(cols):
            if not live[c]:  # in no image of these events
                continue
            o = ordinal[ev, par, c]
            isnull = (np.take(buf, pos + (o >> 3), mode="clip") >> (o & 7)) & 1
            hv = present[ev, par, c] & (isnull == 0)
            if run[0] == "fixed":
                end = end + hv * run[3][j]
            else:
                k = run[2]
                length = read_uint(buf, np.where(hv, end, 0), np.where(hv, k, 0), clip=True)
                end = end + hv * (k + length.astype(np.int64))
    return end


def _chain_images(buf, events, start, par0, end, is_update, present, nullbytes, runs, ncols, limit, window):
    """The image starts of ``events`` from ``start`` (an image of parity ``par0``) to ``end``.

    Speculative placement: the size an image would have is computed for every byte position
    of a window of each event at once, each position then points at the next image start, and
    the chain from ``start`` is found by pointer doubling (log2(window) rounds over the window)
    instead of one NumPy round per image. Returns (event, position, parity, rank in the chain)
    of every image, in no particular order; the caller lays them out with the checks of the
    lock-step walk, which also reports images that run past their event. Stops after the
    window in which ``limit`` images are reached; then the fifth item, where each event's
    next image starts (its end when done), says where to go on. ``window``: at most this many
    positions of an event per round (what ``limit`` images are expected to span).
    """
    ordinal = np.clip(np.cumsum(present, axis=2) - 1, 0, None)  # (E, 2, C): bit of each column
    live = present[events].any(axis=(0, 1))  # the columns some image of these events holds
    out_ev, out_pos, out_par, out_rank = [], [], [], []
    cur, par, rank = start.copy(), par0.copy(), np.zeros(len(events), np.int64)
    act = np.flatnonzero(cur < end[events])
    found = 0
    while act.size and found < limit:
        e = events[act]
        per = max(min(CHAIN_WINDOW_CELLS // (max(ncols, 1) * act.size), window), 64)
        w = np.minimum(end[e] - cur[act], per)
        base = np.zeros(act.size + 1, np.int64)
        np.cumsum(w, out=base[1:])
        n = int(base[-1])
        owner = np.repeat(np.arange(act.size), w)  # window position -> index in act
        pos = cur[act][owner] + np.arange(n) - base[:-1][owner]
        upd = is_update[e][owner]
        nodes_next = np.empty(2 * n, np.int64)
        target = np.empty(2 * n, np.int64)
        for q in (0, 1):
            nxt = _image_sizes(buf, pos, e[owner], np.full(n, q) * upd, present, nullbytes, ordinal, runs, live)
            tq = np.where(upd == 1, q ^ 1, 0)  # the parity of the image after it
            rel = nxt - cur[act][owner]
            inside = (nxt > pos) & (rel < w[owner])
            node = 2 * np.arange(n) + q
            target[node] = nxt
            nodes_next[node] = np.where(inside, 2 * (base[:-1][owner] + rel) + tq, node)  # exit: stays
        first = 2 * base[:-1] + np.where(is_update[e] == 1, par[act], 0)
        mark = np.zeros(2 * n, bool)
        mark[first] = True
        jump = nodes_next
        for _ in range(int(np.ceil(np.log2(max(n, 2)))) + 1):
            mark[jump[mark]] = True
            jump = jump[jump]
        chain = np.flatnonzero(mark)  # increasing: windows in order, positions in order
        c_owner = owner[chain >> 1]
        c_rank = np.arange(chain.size) - np.searchsorted(c_owner, c_owner)  # rank within its window
        out_ev.append(act[c_owner])
        out_pos.append(pos[chain >> 1])
        out_par.append(chain & 1)
        out_rank.append(rank[act][c_owner] + c_rank)
        found += chain.size
        # each window's last image says where the next window starts
        last = np.flatnonzero(np.append(c_owner[1:] != c_owner[:-1], True))
        lo = c_owner[last]
        nxt_pos = target[chain[last]]
        stuck = nxt_pos <= pos[chain[last] >> 1]  # an empty image: the checks report it
        rank[act[lo]] += c_rank[last] + 1
        cur[act[lo]] = np.where(stuck, end[e[lo]], nxt_pos)
        par[act[lo]] = np.where(is_update[e[lo]] == 1, (chain[last] & 1) ^ 1, 0)
        act = act[cur[act] < end[e]]
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64)  # noqa: E731
    return cat(out_ev), cat(out_pos), cat(out_par), cat(out_rank), np.minimum(cur, end[events])


def placement_key(table_map: TableMap) -> tuple | None:
    """What placing row images depends on: how each column is stored, and which columns are
    JSON (PARTIAL_UPDATE_ROWS_EVENT marks them). Layouts with equal keys can share one
    walk; None when a column's storage is not supported (its error is raised when placed)."""
    try:
        return (tuple(spec.storage() for spec in table_map.columns),
                tuple(spec.type == ColumnType.MYSQL_TYPE_JSON for spec in table_map.columns))
    except UnsupportedError:
        return None


def locate_images(file: BinlogFile, maps: TableMaps, rows: EventIndex, table_map: TableMap,
                  tables: str | None = None) -> RowImages:
    """Walk every row image of ``rows`` (all of layout ``table_map``) in lock-step, however
    many they are (:func:`place_images` bounds them). ``tables``: what messages call them
    (default the layout's table; several tables share a walk when their columns are stored
    alike)."""
    return next(_locate(file, maps, rows, table_map, tables, None, None)[0])


def place_images(file: BinlogFile, maps: TableMaps, rows: EventIndex, table_map: TableMap,
                 tables: str | None = None, max_images: int = MAX_BATCH_IMAGES,
                 max_cells: int = MAX_BATCH_CELLS) -> Iterator[RowImages]:
    """The row images of ``rows`` in log order, in pieces of at most about ``max_images``
    images and ``max_cells`` placed cells, so that the memory of a piece (and of the batch
    made of it) does not depend on how many images the events hold.

    Events are placed in groups: a group found to hold more (the walk stops at the bound) is
    cut by bytes into groups expected to hold half the bound each, from the bytes per image
    seen so far; a single event that holds more is placed a piece at a time, each starting
    where the last ended (pieces of an UPDATE event hold whole before/after pairs). Each
    piece's ``event`` indexes ``rows``.
    """
    limit = (max(max_images, 2), max(max_cells, 2))
    groups = [np.arange(len(rows))]  # still to place; the last is next
    while groups:
        group = groups.pop()
        sub = rows if len(group) == len(rows) else rows.take(group)
        if len(group) == 1:
            more: tuple[int, int] | None = None
            while True:
                pieces, more, _ = _locate(file, maps, sub, table_map, tables, limit, more, group)
                yield from pieces
                if more is None:
                    break
            continue
        try:
            pieces, _, _ = _locate(file, maps, sub, table_map, tables, limit, None, group)
        except _TooMany as over:
            per_group = max(min(limit[0] * over.bytes_per_image, limit[1] * over.bytes_per_cell) / 2, 1.0)
            bucket = (np.cumsum(sub.event_size) - 1) // per_group  # which group each event's end falls in
            cuts = np.flatnonzero(np.diff(bucket)) + 1
            if not len(cuts):
                cuts = np.array([len(group) // 2])
            groups.extend(reversed(np.split(group, cuts)))
            continue
        yield from pieces


def place_together(file: BinlogFile, maps: TableMaps, rows: EventIndex, table_map: TableMap, tables: str | None,
                   max_images: int = MAX_BATCH_IMAGES, max_cells: int = MAX_BATCH_CELLS) -> RowImages | None:
    """Every row image of ``rows`` in one piece, or None when they hold more than the bound
    of :func:`place_images` (the walk stops there)."""
    limit = (max(max_images, 2), max(max_cells, 2))
    try:
        pieces, more, n = _locate(file, maps, rows, table_map, tables, limit, None)
    except _TooMany:
        return None
    if more is not None or n > max(min(limit[0], limit[1] // max(len(table_map.columns), 1)), 2):
        return None
    return next(pieces)


def _locate(file: BinlogFile, maps: TableMaps, rows: EventIndex, table_map: TableMap, tables: str | None,
            limit: tuple[int, int] | None, resume: tuple[int, int] | None, numbers: np.ndarray | None = None
            ) -> tuple[Iterator[RowImages], tuple[int, int] | None, int]:
    """The walk of :func:`locate_images`: finds where every image starts (in lock-step, or by
    the speculative chain), then returns (pieces, more, number of images): the pieces lay the
    images out in log order, ``limit`` = (images, placed cells) at a time (one piece without
    it). The walk keeps at most WALK_IMAGES images: several events that hold more raise
    _TooMany; a single event is walked a piece at a time, and ``more`` is where its next
    image starts and that image's number (None once done). ``resume`` (single event): start
    there instead of at the first image. ``numbers``: what the pieces' ``event`` calls each
    event of ``rows`` (default its index)."""
    buf = file.buf
    ncols = len(table_map.columns)
    storage = []
    for spec in table_map.columns:
        try:
            storage.append(spec.storage())
        except UnsupportedError as exc:
            raise UnsupportedError(
                f"{table_map.name}: {exc.message}", path=file.path, offset=int(rows.pos[0]),
                event_type=event_type_name(int(rows.type_code[0])),
            ) from exc
    kind, present, cur = _rows_bodies(file, maps, rows, ncols)
    step0 = 0
    if resume is not None:
        cur, step0 = np.array([resume[0]], np.int64), resume[1]
    end = rows.body_end
    partial_ev = rows.type_code == EventType.PARTIAL_UPDATE_ROWS_EVENT  # (E,)
    json_cols = np.array([spec.type == ColumnType.MYSQL_TYPE_JSON for spec in table_map.columns], bool)
    is_update = (kind == RowsKind.UPDATE).astype(np.int64)
    nullbytes = (present.sum(axis=2) + 7) // 8  # (E, 2)

    # Column runs: ("fixed", first, last+1, widths) or ("prefixed", column, prefix bytes)
    runs: list[tuple] = []
    for c, (how, w) in enumerate(storage):
        if how == "fixed":
            if runs and runs[-1][0] == "fixed":
                _, a, _, ws = runs[-1]
                runs[-1] = ("fixed", a, c + 1, ws + [w])
            else:
                runs.append(("fixed", c, c + 1, [w]))
        else:
            runs.append(("prefixed", c, w))
    runs = [(r[0], r[1], r[2], np.array(r[3], np.int64)) if r[0] == "fixed" else r for r in runs]
    all_columns = np.arange(ncols, dtype=np.int64)
    full_images = bool(present.all())
    # FULL images, only where each image ends: column c's null bit is bit c of the bitmap, so a
    # run of fixed-width columns takes its width less, per bitmap byte, a table look-up of the
    # widths of its columns that byte says are NULL
    null_widths: list[tuple] = []
    if full_images:
        byte_values = np.arange(256, dtype=np.int64)
        for run in runs:
            if run[0] == "fixed":
                _, a, b, ws = run
                tables = {}
                for c in range(a, b):
                    lut = tables.setdefault(c >> 3, np.zeros(256, np.int64))
                    lut += ((byte_values >> (c & 7)) & 1) * int(ws[c - a])
                null_widths.append(("fixed", int(ws.sum()), list(tables.items())))
            else:
                null_widths.append(("prefixed", run[1] >> 3, 1 << (run[1] & 7), run[2], run[1]))
    placed_runs: dict[bytes, list[tuple]] = {}

    def runs_over(live: np.ndarray) -> list[tuple]:
        """The runs restricted to the placed columns ``live`` (increasing), with slots (positions
        in ``live``) instead of columns: ("fixed", j0, j1, widths) or ("prefixed", j, k, column)."""
        key = live.tobytes()
        if key not in placed_runs:
            out = []
            for run in runs:
                if run[0] == "fixed":
                    _, a, b, ws = run
                    j0, j1 = (int(x) for x in np.searchsorted(live, [a, b]))
                    if j1 > j0:
                        out.append(("fixed", j0, j1, ws[live[j0:j1] - a]))
                else:
                    j = int(np.searchsorted(live, run[1]))
                    if j < len(live) and live[j] == run[1]:
                        out.append(("prefixed", j, run[2], run[1]))
            placed_runs[key] = out
        return placed_runs[key]

    if (cur > end).any():
        _raise_at(file, rows, cur > end, "rows event ends inside its header")
    max_images, max_cells = limit if limit is not None else (1 << 62, 1 << 62)
    per_piece = max(min(max_images, max_cells // max(ncols, 1)), 2)
    walk_limit = (max(WALK_IMAGES, per_piece) if len(rows) > 1 else per_piece) if limit is not None else 1 << 62
    slow = cur < end
    start0 = cur.copy()
    # the images found by the walk: (event, image number, start), one entry per round. They
    # are laid out afterwards, a piece at a time, in log order (pieces() below): one pass over
    # all the images costs less than keeping each round's layout and putting those in order.
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    n_found = 0

    def too_many() -> _TooMany:
        done = float((cur - start0).sum())
        return _TooMany(done / max(n_found, 1), done / max(n_found * ncols, 1))

    if resume is None and all(how == "fixed" for how, _ in storage):
        widths = np.array([w for _, w in storage], np.int64)
        fixed_end = np.where(partial_ev, cur, end)  # (after images of PARTIAL_UPDATE_ROWS_EVENT have a prefix)

        def fast_on(ev_of: np.ndarray, lay_out: bool = True):
            """The fast path over events ``ev_of``, its events renumbered as in ``rows``."""
            got = _place_fixed_images(buf, cur[ev_of], fixed_end[ev_of], present[ev_of], nullbytes[ev_of],
                                      is_update[ev_of], widths, lay_out)
            if got is None:
                return None
            f_ev, f_img, f_live, f_off, f_valid, f_ok, f_start = got
            return ev_of[f_ev], f_img, f_live, f_off, f_valid, ev_of[f_ok], f_start

        # At most a piece of images at once: events in chunks of at most per_piece images
        # (an event of more is left to the walk, which places it a piece at a time).
        counts = _fixed_image_counts(cur, fixed_end, present, nullbytes, is_update, widths)
        counts[counts > per_piece] = 0
        candidates = np.flatnonzero(counts)
        total = np.cumsum(counts[candidates])
        bounds = [0]
        while bounds[-1] < len(candidates):  # one search per chunk
            before = int(total[bounds[-1] - 1]) if bounds[-1] else 0
            bounds.append(int(np.searchsorted(total, before + per_piece, side="right")))
        chunks = [candidates[a:b] for a, b in zip(bounds, bounds[1:])] or [candidates]
        if len(chunks) == 1:
            fast = fast_on(candidates) if len(candidates) else None
            if fast is not None:
                f_ev, f_img, f_live, f_off, f_valid, fast_events, f_start = fast
                if len(fast_events) == len(rows):  # every image placed at once, in log order
                    record = (f_ev, f_img, f_live, f_off, f_valid, f_valid, None, {})
                    return iter([_images(file, rows, table_map, storage, kind, record, numbers)]), None, len(f_ev)
                n_found = len(f_ev)
                found.append((f_ev, f_img, f_start))
                del fast, f_off, f_valid
                slow[fast_events] = False
                cur[fast_events] = end[fast_events]
        else:  # several chunks: which events take the fast path, keeping their image starts
            fast_parts, kept = [], []
            for ch in chunks:
                f = fast_on(ch, lay_out=False)  # laid out below only if every event is fast
                if f is not None:
                    fast_parts.append(f[5])
                    n_found += len(f[0])
                    if n_found <= walk_limit:
                        kept.append((f[0], f[1], f[6]))
            fast_events = np.concatenate(fast_parts) if fast_parts else np.zeros(0, np.int64)
            if len(fast_events) == len(rows):  # all fast: laid out again a chunk (a piece) at a time
                return _fixed_chunks(file, rows, table_map, storage, kind, map(fast_on, chunks), numbers), None, n_found
            slow[fast_events] = False
            cur[fast_events] = end[fast_events]
            if n_found > walk_limit:  # several events (several chunks)
                raise too_many()
            found.extend(kept)
            del kept
    act = np.flatnonzero(slow)
    first = cur.copy()  # where each event's images start
    stop = end.copy()  # where the images this call places end (a single event's piece: before its end)
    step = step0
    more: tuple[int, int] | None = None
    budget = MAX_CELLS_PER_BYTE * int(rows.event_size.sum()) + MIN_CELLS_BUDGET

    def check_budget(cells: int) -> None:
        if cells > budget:
            raise MalformedEventError(
                f"the row images of {tables or table_map.name} would decode to more than {budget} cells from "
                f"{int(rows.event_size.sum())} bytes of rows events (over {MAX_CELLS_PER_BYTE} per byte)",
                path=file.path, offset=int(rows.pos[0]), event_type=event_type_name(int(rows.type_code[0])),
            )

    cells = n_found * ncols
    check_budget(cells)

    def lay_out(evs: np.ndarray, start: np.ndarray, p: np.ndarray, par: np.ndarray, img_no: np.ndarray,
                part: np.ndarray | None, keep: bool) -> tuple[np.ndarray, tuple | None]:
        """Lay out one image of each event ``evs``: it starts at ``start``, its null bitmap at
        ``p`` (after a PARTIAL_UPDATE prefix), parity ``par``, numbered ``img_no``; check it
        against its event's end; return where it ends and, when ``keep``, the record of where
        its values are: (event, image number, placed columns, offsets, valid, present,
        partial, {column: length}). Only the columns present in some of these images are
        placed."""
        A = evs.size
        e_end = end[evs]
        nb = nullbytes[evs, par]

        def fail(mask: np.ndarray, what: str) -> None:
            _raise_at(file, rows.take(evs), mask, f"row image {int(img_no[np.flatnonzero(mask)[0]])}{what}")

        if (p + nb > e_end).any():
            fail(p + nb > e_end, " ends inside its null bitmap")
        if full_images and not keep:
            return _ends_of_full_images(p, nb, e_end, start, fail), None
        if full_images:  # every column in every image: nothing to select
            live_mask = None
            pres = np.ones((A, ncols), bool)
        else:
            pres = present[evs, par]  # (A, C)
            live_mask = pres.any(axis=0)
        if live_mask is None or live_mask.all():
            live = all_columns
        else:
            live = np.flatnonzero(live_mask)
            pres = pres[:, live]
            part = None if part is None else part[:, live]
        maxnb = int(nb.max()) if A else 0
        if maxnb and live.size:
            k = np.arange(maxnb, dtype=np.int64)
            nbits = np.take(buf, np.where(k < nb[:, None], p[:, None] + k, 0))
            bits = np.unpackbits(nbits, axis=1, bitorder="little").astype(bool)
            if full_images:  # the null bit of column c is bit c
                isnull = bits[:, :ncols]
            else:
                ordinal = np.cumsum(pres, axis=1, dtype=np.int32) - 1
                np.maximum(ordinal, 0, out=ordinal)
                isnull = pres & np.take_along_axis(bits, ordinal, axis=1)
        else:
            isnull = np.zeros_like(pres)
        hasval = pres & ~isnull
        pos = p + nb
        # The record is made column by column: (L, A) arrays, handed on transposed (their
        # columns contiguous, as the decoders read them).
        has_t = np.ascontiguousarray(hasval.T) if keep else None
        offs_t = np.zeros((live.size, A), np.int64) if keep else None
        lens: dict[int, np.ndarray] = {}
        for run in runs_over(live):
            if run[0] == "fixed":
                _, a, b, ws = run
                if keep:
                    for j in range(a, b):
                        np.multiply(pos, has_t[j], out=offs_t[j])  # 0 where there is no value
                        pos = pos + has_t[j] * int(ws[j - a])
                else:
                    pos = pos + hasval[:, a:b] @ ws  # (a cumsum along rows costs 2-6x more)
            else:
                _, j, k, c = run
                hv = has_t[j] if keep else hasval[:, j]
                length = prefix_lengths(pos, hv, k, c, e_end, fail)
                if keep:
                    np.multiply(pos + k, hv, out=offs_t[j])
                    lens[c] = length
                pos = pos + hv * (k + length)
            # checked once per run: no value may end past its event
        check_ends(pos, start, e_end, fail)
        if not keep:
            return pos, None
        hasval = has_t.T
        return pos, (evs, img_no, live, offs_t.T, hasval, pres, None if part is None else part & hasval, lens)

    def _ends_of_full_images(p, nb, e_end, start, fail) -> np.ndarray:
        """lay_out of FULL images, where they end only (see ``null_widths``)."""
        nbits = np.take(buf, p[:, None] + np.arange(int(nb[0]), dtype=np.int64)) if len(p) else None
        pos = p + nb
        for run in null_widths:
            if run[0] == "fixed":
                _, total, tables = run
                for byte, lut in tables:
                    total = total - lut[nbits[:, byte]]
                pos = pos + total
            else:
                _, byte, bit, k, c = run
                hv = (nbits[:, byte] & bit) == 0
                pos = pos + hv * (k + prefix_lengths(pos, hv, k, c, e_end, fail))
        check_ends(pos, start, e_end, fail)
        return pos

    def prefix_lengths(pos, hv, k, c, e_end, fail) -> np.ndarray:
        """The ``k``-byte length prefixes of column ``c`` at ``pos`` where ``hv``, which must
        lie inside their events."""
        over = hv & (pos + k > e_end)
        if over.any():
            fail(over, f": length of column {c + 1} runs past the end of the event")
        return _prefixes(buf, pos, hv, k)

    def check_ends(pos, start, e_end, fail) -> None:
        """Images ending at ``pos`` must end inside their events and not be empty."""
        over = pos > e_end
        if over.any():
            fail(over, " runs past the end of the event")
        stuck = pos == start
        if stuck.any():
            fail(stuck, " is empty: no column is present")

    while act.size:
        A = act.size
        cells += A * ncols
        check_budget(cells)
        p = cur[act]
        par = (step & 1) * is_update[act]
        prefixed = partial_ev[act] & (par == 1)
        part = None
        if prefixed.any():
            p, part = _value_options(file, rows.take(act), p, end[act], prefixed, json_cols, step)
        img_no = np.full(A, step, np.int64)
        pos, _ = lay_out(act, cur[act], p, par, img_no, part, keep=False)
        found.append((act, img_no, cur[act]))
        n_found += A
        cur[act] = pos
        step += 1
        act = act[pos < end[act]]
        if act.size and n_found >= walk_limit:
            if len(rows) > 1:
                raise too_many()
            if not is_update[0] or step % 2 == 0:  # an UPDATE's pieces hold whole pairs
                more = (int(cur[0]), step)
                stop[0] = cur[0]
                break
        # Few long events left (many small images each): find the rest of their images by
        # speculative placement instead of one NumPy round per image.
        if act.size and not partial_ev[act].any():
            mean = float((cur[act] - first[act]).sum()) / ((step - step0) * act.size)
            if ncols * mean * act.size < SPECULATIVE_COST_RATIO:
                room = max(min(walk_limit - n_found, per_piece), 2)  # its outputs are 32 bytes an image
                window = int(room * mean * 1.25 / act.size) + 64
                c_ev, c_pos, c_par, c_rank, c_cur = _chain_images(
                    buf, act, cur[act], (step & 1) * is_update[act], end, is_update, present, nullbytes, runs, ncols,
                    room, window)
                if (c_cur < end[act]).any():  # stopped at the bound
                    if len(rows) > 1:
                        cur[act] = c_cur
                        n_found += c_ev.size
                        raise too_many()
                    keep_n = min(room, c_ev.size)
                    if is_update[0] and (step + keep_n) % 2:
                        keep_n -= 1
                    if keep_n < c_ev.size:
                        stop[act] = c_pos[c_rank == keep_n]
                        keep = c_rank < keep_n
                        c_ev, c_pos, c_par, c_rank = c_ev[keep], c_pos[keep], c_par[keep], c_rank[keep]
                    else:
                        stop[act] = c_cur
                    more = (int(stop[0]), step + keep_n)
                cells += c_ev.size * ncols
                check_budget(cells)
                found.append((act[c_ev], step + c_rank, c_pos))
                n_found += c_ev.size
                del c_ev, c_pos, c_par, c_rank, c_cur
                act = act[:0]

    def pieces() -> Iterator[RowImages]:
        """The images found, in log order (event, then image), laid out ``per_piece`` at a time;
        each must end where the next image of its event starts (or where this call stops):
        the speculative chain's images are checked so."""
        n_images = np.zeros(len(rows), np.int64)
        for f in found:
            n_images += np.bincount(f[0], minlength=len(rows))
        odd = (is_update == 1) & (n_images % 2 == 1)
        if odd.any():
            _raise_at(file, rows, odd, "UPDATE rows event has a before image without an after image")
        base = np.zeros(len(rows), np.int64)
        np.cumsum(n_images[:-1], out=base[1:])
        n = n_found
        ev, img, start = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
        found.reverse()
        while found:  # each round's arrays scattered into log order, then freed
            f_ev, f_img, f_start = found.pop()
            at = base[f_ev] + f_img - step0
            ev[at], img[at], start[at] = f_ev, f_img, f_start
            del f_ev, f_img, f_start, at
        bounds = [0]
        while bounds[-1] < n:
            hi = min(bounds[-1] + per_piece, n)
            if hi < n and is_update[ev[hi]] and img[hi] % 2:  # an UPDATE's two images stay together
                hi -= 1
            bounds.append(hi)
        for lo, hi in list(zip(bounds, bounds[1:])) or [(0, 0)]:  # (no image: one empty piece)
            e, i, s = ev[lo:hi], img[lo:hi], start[lo:hi]
            par = (i & 1) * is_update[e]
            p, part = s, None
            prefixed = partial_ev[e] & (par == 1)
            if prefixed.any():
                p, part = _value_options(file, rows.take(e), s, end[e], prefixed, json_cols, int(i[0]))
            ends, record = lay_out(e, s, p, par, i, part, keep=True)
            _check_tiling(file, rows, ev[lo : hi + 1], start[lo : hi + 1], ends, stop)
            del e, i, s, par, p, part, ends  # not held while the piece is used
            yield _images(file, rows, table_map, storage, kind, record, numbers)
            del record

    return pieces(), more, n_found


def _check_tiling(file: BinlogFile, rows: EventIndex, ev: np.ndarray, start: np.ndarray, ends: np.ndarray,
                  stop: np.ndarray) -> None:
    """Images in log order (``ev``, ``start``; one more than ``ends`` may be given: the next
    image) must each end where the next image of its event starts, the last at ``stop``."""
    n = len(ends)
    nxt_ev = np.append(ev[1 : n + 1], -1)[:n]
    nxt_start = np.append(start[1 : n + 1], -1)[:n]
    bad_img = ends != np.where(nxt_ev == ev[:n], nxt_start, stop[ev[:n]])
    if bad_img.any():
        bad = np.zeros(len(rows), bool)
        bad[ev[:n][bad_img]] = True
        _raise_at(file, rows, bad, "row images do not tile the event (internal check)")


def _fixed_chunks(file: BinlogFile, rows: EventIndex, table_map: TableMap, storage: list, kind: np.ndarray,
                  chunks: Iterator, numbers: np.ndarray | None) -> Iterator[RowImages]:
    """The fixed-width fast path's results, one chunk of events (a piece) at a time."""
    for f_ev, f_img, f_live, f_off, f_valid, _, _ in chunks:
        yield _images(file, rows, table_map, storage, kind, (f_ev, f_img, f_live, f_off, f_valid, f_valid, None, {}),
                      numbers)


def _images(file: BinlogFile, rows: EventIndex, table_map: TableMap, storage: list, kind: np.ndarray,
            record: tuple, numbers: np.ndarray | None = None, absent: np.ndarray | None = None) -> RowImages:
    """RowImages of a layout record of images in log order (see ``lay_out`` in :func:`_locate`);
    ``numbers`` renumbers the events; ``absent`` instead of the record's ``present``."""
    ev, img, live, offsets, valid, pres, partial, lengths = record
    k_ev = kind[ev]
    change = _CHANGE_OF[k_ev * 2 + (img & 1)]
    event_row = (img >> (k_ev == RowsKind.UPDATE)).astype(np.int32)  # an UPDATE's pair is one row
    return RowImages(
        table_map=table_map,
        file=file,
        event_pos=rows.pos[ev],
        event=ev if numbers is None else numbers[ev],
        inner=rows.inner[ev],
        timestamp=rows.timestamp[ev],
        change=change,
        event_row=event_row,
        columns=live,
        offsets=offsets,
        valid=valid,
        absent=~pres if absent is None else absent,
        lengths=lengths,
        storage=storage,
        partial=partial,
    )

