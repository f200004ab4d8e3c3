"""What the files hold, without decoding a row: ``info()``, ``events()``, ``verify()``, and the
position of a GTID.

Every event is accounted for: :func:`file_info` counts them all by type (and the events inside
compressed payloads, unpacked as the walk unpacks them, :func:`vecbinlog.log.logwalk.unpacked`), and
names those whose content this version does not use.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrowbuild import numbers, scalar, strings
from ..binlog.compression import COMPRESSED_EVENTS
from ..binlog.events import describe_events
from ..binlog.file import BinlogFile, Segment
from ..binlog.gtid import GTID_EVENTS, Gtids, GtidSummary, gtid_texts, previous_gtids, read_gtids
from ..binlog.headers import EventIndex
from ..binlog.spec import MAGIC_LEN
from ..constants import ROWS_EVENTS, UNDECODED_ROWS_EVENTS, EventType, event_type_name
from ..decode.rows import CHANGE_TYPES, place_images
from ..errors import MalformedEventError, UnsupportedError
from ..tables.table_ids import TableMaps
from .logwalk import unpacked

__all__ = ["file_info", "events_table", "verify_files", "gtid_offset", "gtid_position", "FileSummary"]

#: Events whose content this version reads: the rest are walked over and counted.
_DECODED_EVENTS = frozenset(
    event_type_name(c) for c in (
        EventType.FORMAT_DESCRIPTION_EVENT, EventType.TABLE_MAP_EVENT, EventType.QUERY_EVENT,
        EventType.XID_EVENT, EventType.ROTATE_EVENT, EventType.XA_PREPARE_LOG_EVENT,
        EventType.PREVIOUS_GTIDS_LOG_EVENT, EventType.GTID_LIST_EVENT, EventType.ROWS_QUERY_LOG_EVENT,
        EventType.ANNOTATE_ROWS_EVENT, *ROWS_EVENTS, *GTID_EVENTS, *COMPRESSED_EVENTS,
    )
)
_UNSUPPORTED_EVENTS = frozenset(event_type_name(c) for c in UNDECODED_ROWS_EVENTS)
_GTID_CODES = np.array(sorted(GTID_EVENTS), np.uint8)
_PREVIOUS_GTID_CODES = np.array([EventType.PREVIOUS_GTIDS_LOG_EVENT, EventType.GTID_LIST_EVENT], np.uint8)


def _not_decoded(counts: Counter[str]) -> dict[str, dict[str, int]]:
    return {
        "skipped": {k: v for k, v in sorted(counts.items()) if k not in _DECODED_EVENTS | _UNSUPPORTED_EVENTS},
        "unsupported": {k: v for k, v in sorted(counts.items()) if k in _UNSUPPORTED_EVENTS},
    }


def _count_types(counts: Counter[str], codes: np.ndarray) -> None:
    values, n = np.unique(codes, return_counts=True)
    for c, k in zip(values.tolist(), n.tolist()):
        counts[event_type_name(c)] += k


class FileSummary:
    """The counts of one file, added to segment by segment (:meth:`add`; or, from a walk that
    unpacked the segment and resolved its table ids already, :meth:`add_unpacked`: the archive
    index's, :mod:`vecbinlog.log.summary`).

    ``rows``: count the row images of every table too. Their walk raises what a read of the
    table would (``MalformedEventError``, ``UnsupportedError``), unless ``keep_going``: then the
    table's images are not counted, and it is named in ``row_images_not_counted`` (the index
    keeps that, and ``info(rows=True)`` walks such a file again, to raise as without an index).
    """

    def __init__(self, f: BinlogFile, rows: bool, batch_rows: int, keep_going: bool = False) -> None:
        self.file, self.rows, self.batch_rows, self.keep_going = f, rows, batch_rows, keep_going
        self.counts: Counter[str] = Counter()
        self.inner: Counter[str] = Counter()
        self.tables: Counter[str] = Counter()
        self.images: dict[str, Counter[str]] = {}
        self.not_counted: set[str] = set()
        self.last_gtids: tuple[np.ndarray, Gtids] | None = None  #: of the last segment added: GTID events' positions, GTIDs
        self.gtids = GtidSummary()
        self.previous: str | None = None
        self.first: int | None = None
        self.last: int | None = None
        self.maps = TableMaps()

    def add(self, seg: Segment) -> None:
        src, index = unpacked(seg)
        rows_pos, layout = self.maps.resolve(index, src)
        self.add_unpacked(seg, src, index, rows_pos, layout, self.maps)

    def add_unpacked(self, seg: Segment, src: Any, index: EventIndex, rows_pos: np.ndarray, layout: np.ndarray,
                     maps: TableMaps) -> None:
        """A segment, its events unpacked (``src``, ``index``), its rows events' positions and
        layout ids in ``maps``."""
        _count_types(self.counts, seg.index.type_code)
        ts = seg.index.timestamp[seg.index.timestamp > 0]
        if len(ts):
            self.first = int(ts.min()) if self.first is None else min(self.first, int(ts.min()))
            self.last = int(ts.max()) if self.last is None else max(self.last, int(ts.max()))
        if index is not seg.index:
            _count_types(self.inner, index.type_code[index.inner >= 0])
        sel = np.flatnonzero(np.isin(index.type_code, _GTID_CODES))
        gtids = read_gtids(src, index, sel)
        self.gtids.add(gtids.texts)
        self.last_gtids = (index.pos[sel].astype(np.int64), gtids)  # (for the archive index's GTID blocks)
        if self.previous is None:
            prev = np.flatnonzero(np.isin(index.type_code, _PREVIOUS_GTID_CODES))
            if len(prev):
                i = int(prev[0])
                self.previous = previous_gtids(src, int(index.offset[i]), int(index.body_end[i]), int(index.type_code[i]))
        for lid in layout.tolist():
            self.tables[maps.layouts[lid].name] += 1
        if self.rows:
            self._count_images(src, index, rows_pos, layout, maps)

    def _count_images(self, src: Any, index: EventIndex, rows_pos: np.ndarray, layout: np.ndarray,
                      maps: TableMaps) -> None:
        """The row images of every table, located (not decoded), by change type."""
        for lid in dict.fromkeys(layout.tolist()):
            tm = maps.layouts[lid]
            if tm.name in self.not_counted:
                continue
            counts = np.zeros(len(CHANGE_TYPES), np.int64)
            try:
                for located in place_images(src, index.take(rows_pos[layout == lid]), tm, max_images=self.batch_rows):
                    counts += np.bincount(located.change, minlength=len(CHANGE_TYPES))
            except (MalformedEventError, UnsupportedError):
                if not self.keep_going:
                    raise
                self.not_counted.add(tm.name)
                self.images.pop(tm.name, None)
                continue
            mine = self.images.setdefault(tm.name, Counter())
            for k in np.flatnonzero(counts).tolist():
                mine[CHANGE_TYPES[k]] += int(counts[k])

    def as_dict(self) -> dict[str, Any]:
        f = self.file
        fde = f.formats[0]
        stop = f.walk_stop
        out: dict[str, Any] = {
            "path": f.path,
            "size": f.size,
            "compression": f.source.compression,
            # a compressed file is read from its start only: one Spark split
            "splittable": f.source.seekable,
            "server_version": fde.server_version,
            "binlog_version": fde.binlog_version,
            "checksum": fde.checksum_name,
            "format_descriptions": len(f.formats),
            "first_timestamp": self.first,
            "last_timestamp": self.last,
            "events": dict(sorted(self.counts.items())),
            "events_in_payloads": dict(sorted(self.inner.items())),
            "rows_events_by_table": dict(self.tables),
            "events_not_decoded": _not_decoded(self.counts),
            "stopped_at": None if stop is None else {"offset": stop.offset, "reason": stop.reason},
            "gtids": {
                "previous": self.previous,
                "first": self.gtids.first,
                "last": self.gtids.last,
                "count": self.gtids.count,
                "set": self.gtids.gtid_set(),
            },
        }
        if self.rows:
            out["row_images_by_table"] = {t: {k: c[k] for k in CHANGE_TYPES if k in c} for t, c in self.images.items()}
            if self.not_counted:
                out["row_images_not_counted"] = sorted(self.not_counted)
        return out


def file_info(f: BinlogFile, segment_bytes: int, rows: bool = False, batch_rows: int = 1 << 18) -> dict[str, Any]:
    """What ``f`` holds (one entry of :meth:`vecbinlog.Binlog.info`'s ``files``)."""
    summary = FileSummary(f, rows, batch_rows)
    for seg in f.segments(segment_bytes):
        summary.add(seg)
    return summary.as_dict()


def events_table(f: BinlogFile, segment_bytes: int) -> pa.Table:
    """One row per event of ``f`` (see :meth:`vecbinlog.Binlog.events`)."""
    infos: list[list[str | None]] = []
    parts_of_file = []
    for seg in f.segments(segment_bytes):  # each segment described while its bytes are there
        infos.append(describe_events(seg.src, seg.index))
        parts_of_file.append(seg.index)
    idx = EventIndex.concat(parts_of_file)
    n = len(idx)
    codes = np.unique(idx.type_code)
    names = [event_type_name(int(c)) for c in codes]
    return pa.table(
        {
            "file": pa.DictionaryArray.from_arrays(numbers(np.zeros(n, np.int32)), strings([f.name])),
            "pos": numbers(idx.pos, pa.int64()),
            "type_code": numbers(idx.type_code, pa.uint8()),
            "type": pa.DictionaryArray.from_arrays(
                numbers(np.searchsorted(codes, idx.type_code).astype(np.int32)), strings(names)
            ),
            "size": numbers(idx.event_size, pa.uint32()),
            "timestamp": numbers(idx.timestamp.astype(np.int64), pa.timestamp("s", tz="UTC")),
            "server_id": numbers(idx.server_id, pa.uint32()),
            "end_log_pos": numbers(idx.log_pos, pa.uint32()),
            "flags": numbers(idx.flags, pa.uint16()),
            # a chunk a segment: the texts of a whole file may outgrow a string array's 2 GB
            "info": pa.chunked_array([strings(part) for part in infos], pa.string()),
        }
    )


def verify_files(files: list[BinlogFile], segment_bytes: int) -> int:
    """Check the CRC32 of every event of ``files``; returns how many were checked."""
    checked = 0
    for f in files:
        if not f.verify_checksums:
            continue
        for seg in f.segments(segment_bytes):
            seg.src.verify_checksums_of(seg.index)
            has_crc = np.array([fmt.has_checksum for fmt in f.formats], bool)[seg.index.fmt]
            checked += int(has_crc.sum())
    return checked


def gtid_offset(f: BinlogFile, segment_bytes: int, gtid: str, start: int | None = None,
                stop: int | None = None) -> int | None:
    """The offset in ``f`` of the GTID event of ``gtid`` (its text, as :func:`gtid_texts`
    gives it); None when ``f`` does not have it (between ``start``, an event's offset, and
    ``stop``, when given)."""
    for seg in f.segments(segment_bytes, start=MAGIC_LEN if start is None else start, stop=stop):
        sel = np.flatnonzero(np.isin(seg.index.type_code, _GTID_CODES))
        if len(sel):
            hit = pc.index(gtid_texts(seg.src, seg.index, sel), scalar(gtid, pa.string())).as_py()
            if hit >= 0:
                return int(seg.index.pos[sel[hit]])
    return None


def gtid_position(files: list[BinlogFile], segment_bytes: int, gtid: str) -> tuple[int, int] | None:
    """(file number, offset) of the GTID event of ``gtid``; None when no file has it."""
    for k, f in enumerate(files):
        at = gtid_offset(f, segment_bytes, gtid)
        if at is not None:
            return k, at
    return None
