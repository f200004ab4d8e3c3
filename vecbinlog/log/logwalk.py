"""One walk of the binlog files: segments -> unpack -> table maps -> DDL -> transactions.

Everything that reads a set of files goes through here: the reads of rows (:mod:`vecbinlog.log.batches`),
``tables``, ``schema``, ``plans`` and ``layouts`` (split planning), ``snapshot``, and ``info``
(which needs the segments unpacked but neither DDL nor transactions: :func:`unpacked`).

A walk yields one :class:`Step` per segment of each file (``segment_bytes`` of binlog), in log
order::

    BinlogFile.segments()      whole events, their headers as columns (EventIndex)
      -> unpacked()            compressed events replaced by the events they hold
      -> TableMaps.resolve()   each rows event's TABLE_MAP (its layout id)
      -> SchemaTracker.scan()  the DDL replayed: the definition each rows event sees
      -> TransactionTracker    (when asked) each event's transaction, GTID and outcome

After a file's last segment the walk warns when the next file given is not the one its last
ROTATE_EVENT names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from ..binlog.compression import unpack_segment
from ..binlog.events import rotate_at
from ..binlog.file import BinlogFile, Segment
from ..binlog.headers import EventIndex
from ..binlog.spec import MAGIC_LEN
from ..binlog.transactions import TransactionTracker, TxnContext
from ..constants import EventType
from ..errors import BinlogError, BinlogSetWarning, warn
from ..tables.ddl import Catalog
from ..tables.table_ids import ParsedMaps, TableMaps
from ..tables.tracker import DdlState, SchemaTracker
from .config import ReadConfig
from .progress import ProgressBar

__all__ = ["LogWalk", "Step", "unpacked"]


def unpacked(seg: Segment) -> tuple[Any, EventIndex]:
    """(bytes, events) of a segment, its compressed events replaced by the events they hold
    (the segment itself when it has none: nothing is copied)."""
    found = unpack_segment(seg.src, seg.index)
    return found if found is not None else (seg.src, seg.index)


@dataclass
class Step:
    """One segment of one file, ready to decode: its events (unpacked when compressed) and
    their rows events' layouts, and the transactions they belong to."""

    file: BinlogFile
    segment: Segment  #: the segment as read (compressed events not unpacked)
    src: Any  #: the file, or an Unpacked buffer standing for it (see compression.py)
    maps: TableMaps
    index: EventIndex
    rows_pos: np.ndarray  #: int64: positions in ``index`` of the rows events
    layout: np.ndarray  #: int64 per rows event: its layout id in ``maps.layouts``
    txn: TxnContext | None
    schema: SchemaTracker  #: the DDL replayed so far (shared by every step of a walk)
    generation: np.ndarray  #: int64 per rows event: the DDL generation it sees (see tracker.py)
    #: the DDL state after each statement of the segment that changed one (when the walk was
    #: asked for them: ``steps(ddl_states=True)``)
    ddl_states: list[DdlState]


class LogWalk:
    """The walk of ``files`` in log order, as :class:`Step` s, as the read's ``config`` says
    (segment size, DDL replayed or not, ``schema=``, queries, the ``tables`` filter).

    The filter's ``start``/``stop`` bound the walk itself (``start`` in the first file,
    ``stop`` in the last) when ``seek`` is set: a range read alone (a split) starts where a
    transaction starts and sees nothing before it; ``ddl_state`` is then the DDL state where
    it starts (``Split.ddl``).
    """

    def __init__(self, files: list[BinlogFile], config: ReadConfig, *, seek: bool = False,
                 ddl_state: Catalog | None = None) -> None:
        self.files, self.config = files, config
        self.segment_bytes = config.segment_bytes
        self.start, self.stop, self.seek = config.filter.start, config.filter.stop, seek
        self.ddl_state = ddl_state
        self.parsed = ParsedMaps()  #: the TABLE_MAPs parsed, shared by the files and walks
        self._chain_warned: set[int] = set()

    def first(self, f: BinlogFile) -> bool:
        """``f`` is the first file (where ``start`` applies)."""
        return f is self.files[0]

    def last(self, f: BinlogFile) -> bool:
        """``f`` is the last file (where ``stop`` applies)."""
        return f is self.files[-1]

    def bounds(self, f: BinlogFile) -> tuple[int, int | None]:
        """The part of ``f`` walked: all of it, or with ``seek`` the range's part."""
        if not self.seek:
            return MAGIC_LEN, None
        start = max(self.start or 0, MAGIC_LEN) if self.first(f) else MAGIC_LEN
        return start, self.stop if self.last(f) else None

    def steps(self, transactions: bool = False, ddl_states: bool = False, progress: ProgressBar | None = None,
              keep_pages: Callable[[Segment], bool] | None = None) -> Iterator[Step]:
        """Every segment of every file, unpacked, with its rows events and their layout ids.

        The DDL of the log is replayed on the way, so that each rows event knows the
        definition of its table as of that event, across segments and files (with
        ``ddl_states``, each step has the DDL states after its statements). ``keep_pages``:
        asked as the walk leaves a segment of a memory-mapped file, whether its pages stay
        mapped (runs decoded later read them; they let go of them then).
        """
        config = self.config
        schema = SchemaTracker(config.schema, track=config.ddl, catalog=self.ddl_state, wanted=config.filter.table)
        for f in self.files:
            maps = TableMaps(f, self.parsed)
            tracker = TransactionTracker(f, queries=config.queries) if transactions else None
            rotate = None  # the file the last ROTATE_EVENT names
            for seg in f.segments(self.segment_bytes, *self.bounds(f), keep=keep_pages):
                src, index = unpacked(seg)
                txn = tracker.assign(src, index, seg.end) if tracker is not None else None
                rows_pos, layout = maps.resolve(index, src)
                generation, states = schema.scan(src, index, ddl_states)
                rot = np.flatnonzero(seg.index.type_code == EventType.ROTATE_EVENT)
                if len(rot):
                    rotate = rotates_to(seg, int(rot[-1]))
                if progress is not None:
                    progress.at(f, seg.end)
                yield Step(f, seg, src, maps, index, rows_pos, layout, txn, schema, generation[rows_pos], states)
            self._check_chain(f, rotate)

    def _check_chain(self, f: BinlogFile, name: str | None) -> None:
        """Warn when the file after ``f`` is not the one its last ROTATE_EVENT names."""
        k = self.files.index(f)
        if k + 1 >= len(self.files) or name is None or self.seek:
            return
        nxt = self.files[k + 1]
        if name != nxt.name and k not in self._chain_warned and not nxt.name.startswith("<memory"):
            self._chain_warned.add(k)
            warn(
                f"{f.path} rotates to {name!r} but the next file given is {nxt.name!r}: files may be "
                "missing or out of order (transactions and table ids do not cross files, so each file "
                "still decodes alone)",
                BinlogSetWarning,
            )


def rotates_to(seg: Segment, i: int) -> str | None:
    """The file the ROTATE_EVENT ``seg.index[i]`` names (None when it cannot be read)."""
    try:
        name, _ = rotate_at(seg.src, seg.index, i)
    except BinlogError:
        return None  # events() / info() show the event; the rows do not depend on it
    return name
