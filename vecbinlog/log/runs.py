"""Runs: consecutive rows events of one table, layout, schema version and incarnation.

A step's rows events kept by the filters are cut into runs (:func:`cut_runs`, one stable sort
per segment). In a memory-mapped or in-memory file a table's run with little in its segment is
carried into the next ones (:class:`CarriedRun`: only its events and their transactions are
kept, not the bytes): a log of many tables written in turn makes fewer, larger batches.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..binlog.file import BinlogFile
from ..binlog.headers import EventIndex
from ..binlog.transactions import TxnContext
from ..groups import group, group_order
from ..tables.table_map import TableMap
from .logwalk import Step
from .versions import Versioned

__all__ = ["Run", "CarriedRun", "cut_runs", "matched", "SPAN_SHARE", "SPAN_EVENTS", "SPAN_HELD_SEGMENTS"]

#: a table's run is carried into the next segment (of a memory-mapped or in-memory file) while
#: its rows events are under ``segment_bytes // SPAN_SHARE``: fewer, larger batches for tables
#: with little in each segment; a batch still holds about ``segment_bytes`` of rows at most
SPAN_SHARE = 4
#: the rows events that runs carried into the next segment hold at most (their index entries
#: and transactions are kept): beyond, every run is decoded
SPAN_EVENTS = 1 << 17
#: a memory-mapped file's segments that carried runs will read again stay mapped until those
#: runs are decoded (instead of being let go of by the walk and faulted back in by the runs:
#: bench/TUNING.md), while they span at most this many ``segment_bytes``; beyond, the walk
#: lets them go as it moves on (memory stays bounded)
SPAN_HELD_SEGMENTS = 8

@dataclass
class Run:
    """Consecutive rows events of one table, effective layout, version and incarnation."""

    table: str
    rows_pos: np.ndarray  #: positions in the step's index
    layout: TableMap
    version: int
    incarnation: int


def cut_runs(found: Versioned, rows_pos: np.ndarray, keep: np.ndarray) -> list[Run]:
    """The runs of the rows events ``rows_pos`` (those of ``found`` that ``keep`` keeps), per
    table (the tables in the order of their first rows event), each table's in log order."""
    code, version, incarnation, table = found.code[keep], found.version[keep], found.incarnation[keep], found.table[keep]
    if not len(table):
        return []
    # the events grouped by table (tables in order of their first event), each table's in log order
    first_at, inverse = group(table)
    order = group_order(inverse, len(first_at))
    pos, code, version, incarnation, table = rows_pos[order], code[order], version[order], incarnation[order], table[order]
    cut = (np.diff(table) != 0) | (np.diff(code) != 0) | (np.diff(version) != 0) | (np.diff(incarnation) != 0)
    starts = np.concatenate(([0], np.flatnonzero(cut) + 1)).tolist()
    ends = starts[1:] + [len(pos)]
    return [Run(found.tables[int(table[a])], pos[a:b], found.resolved[int(code[a])], int(version[a]), int(incarnation[a]))
            for a, b in zip(starts, ends)]


@dataclass
class CarriedRun:
    """The runs of one table, layout, version and incarnation in consecutive segments of one
    event source (a memory-mapped or in-memory file), decoded as one run: a table with little
    in each segment (many tables written in turn) makes fewer, larger batches. Only the events
    and their transactions are kept until then, not the bytes."""

    table: str
    layout: TableMap
    version: int
    incarnation: int
    file: BinlogFile
    src: Any  #: the events' bytes (the file, or a window or unpacked buffer of one segment)
    start: int  #: file offset where the first piece's segment starts
    end: int  #: and where the last piece's ends
    events: list[EventIndex]
    txns: list[TxnContext] | None  #: None: no transactions followed
    nbytes: int = 0
    nevents: int = 0
    #: whether the CRC32s of ``events[:len(checked)]`` match, checked on a batch thread while
    #: the walk went on (:meth:`BatchReader._check_carried`)
    checked: list[Future] = field(default_factory=list)

    @classmethod
    def of(cls, step: Step, run: Run) -> CarriedRun:
        return cls(run.table, run.layout, run.version, run.incarnation, step.file, step.src, step.segment.start,
                   step.segment.end, [], [] if step.txn is not None else None)

    def continues(self, step: Step, run: Run) -> bool:
        """Whether ``run`` (of ``step``) may join: same source, layout, version and incarnation."""
        return (step.src is self.src and run.version == self.version and run.incarnation == self.incarnation
                and (run.layout is self.layout or run.layout == self.layout))

    def add(self, step: Step, run: Run) -> None:
        events = step.index.take(run.rows_pos)
        self.events.append(events)
        if self.txns is not None:
            self.txns.append(step.txn.of_events(run.rows_pos))
        self.end = step.segment.end
        self.nbytes += int(events.event_size.sum())
        self.nevents += len(events)


def matched(checked: Future) -> bool:
    """What a check of :meth:`BatchReader._check_carried` found (False when it failed: the
    run's own check then tells why)."""
    try:
        return bool(checked.result())
    except Exception:
        return False
