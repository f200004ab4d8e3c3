"""Runs: consecutive rows events of one table, layout, schema version and incarnation.

A step's rows events kept by the filters are cut into runs (:func:`cut_runs`, one stable sort
per segment) and gathered once in that order (:class:`StepRows`): each run's are a slice. In a
memory-mapped or in-memory file a table's run with little in its segment is carried into the
next ones (:class:`CarriedRun`: only its events and their transactions are kept, and the
event sources that hold their bytes): a log of many tables written in turn makes fewer,
larger batches. A read's :class:`Carrier` owns the runs it carries, and the CRC32 checks of
what they took, until it hands each run out, ended.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..binlog.file import BinlogFile, checksums_match
from ..binlog.gathered import Gathered, JoinedFiles
from ..binlog.headers import EventIndex
from ..binlog.transactions import TxnContext
from ..groups import group, group_order
from ..pools import TaskGroup
from ..tables.table_map import TableMap
from .logwalk import Step
from .versions import SchemaVersions, Versioned

__all__ = ["Run", "StepRows", "CarriedRun", "Carrier", "PlannedRuns", "PLANNED_EVENTS", "PLANNED_WINDOW_BYTES",
           "PLANNED_JOIN_FILE_BYTES", "PLAN_ON_TABLES_BYTES", "cut_runs", "matched", "CARRY_SHARE", "CARRY_EVENTS",
           "CARRY_HELD_SEGMENTS"]

#: a table's run is carried into the next segment (of a memory-mapped or in-memory file) while
#: its rows events are under ``segment_bytes // CARRY_SHARE``: fewer, larger batches for tables
#: with little in each segment; a batch still holds about ``segment_bytes`` of rows at most
CARRY_SHARE = 4
#: the rows events that runs carried into the next segment hold at most (their index entries
#: and transactions are kept): beyond, every run is decoded
CARRY_EVENTS = 1 << 17
#: a memory-mapped file's segments that carried runs will read again stay mapped until those
#: runs are decoded (instead of being let go of by the walk and faulted back in by the runs:
#: bench/TUNING.md), while they span at most this many ``segment_bytes``; beyond, the walk
#: lets them go as it moves on (memory stays bounded)
CARRY_HELD_SEGMENTS = 8


@dataclass
class StepRows:
    """The rows events of a step that its runs take (index entries, transactions, files),
    gathered once, grouped by run (:func:`cut_runs`): each run's are then a slice of these
    (copied: a run carried on holds no other run's), not a gather of its own from the
    segment's index, where every value of every column was a cache miss (a log of 16 tables
    written in turn: 27 -> 9 ms a read)."""

    index: EventIndex
    txn: TxnContext | None
    file_of: np.ndarray | None  #: see :attr:`~.logwalk.Step.file_of`

    @classmethod
    def of(cls, step: Step, rows_pos: np.ndarray, order: np.ndarray) -> StepRows:
        """The events at positions ``rows_pos`` of ``step``'s index (in log order), in ``order``."""
        index = step.index.take(rows_pos).take(order)  # a streaming read of the segment's index, then of these few
        pos = rows_pos[order]
        return cls(index, None if step.txn is None else step.txn.of_events(pos),
                   None if step.file_of is None else step.file_of[pos])


@dataclass
class Run:
    """Consecutive rows events of one table, effective layout, version and incarnation."""

    table: str
    rows: slice  #: its events among the step's :class:`StepRows`
    layout: TableMap
    version: int
    incarnation: int


def cut_runs(found: Versioned, step: Step, rows_pos: np.ndarray, keep: np.ndarray) -> tuple[StepRows | None, list[Run]]:
    """The runs of the rows events ``rows_pos`` of ``step`` (those of ``found`` that ``keep``
    keeps), per table (the tables in the order of their first rows event), each table's in
    log order; and these events gathered in that order, each run's a slice of them."""
    code, version, incarnation, table = found.code[keep], found.version[keep], found.incarnation[keep], found.table[keep]
    if not len(table):
        return None, []
    # the events grouped by table (tables in order of their first event), each table's in log order
    first_at, inverse = group(table)
    order = group_order(inverse, len(first_at))
    code, version, incarnation, table = code[order], version[order], incarnation[order], table[order]
    cut = (np.diff(table) != 0) | (np.diff(code) != 0) | (np.diff(version) != 0) | (np.diff(incarnation) != 0)
    starts = np.concatenate(([0], np.flatnonzero(cut) + 1)).tolist()
    ends = starts[1:] + [len(order)]
    runs = [Run(found.tables[int(table[a])], slice(a, b), found.resolved[int(code[a])], int(version[a]),
                int(incarnation[a])) for a, b in zip(starts, ends)]
    return StepRows.of(step, rows_pos, order), runs


@dataclass
class CarriedRun:
    """The runs of one table, layout, version and incarnation in consecutive segments, decoded
    as one run: a table with little in each segment (many tables written in turn) makes fewer,
    larger batches. Only the events and their transactions are kept until then, not the bytes.

    The pieces come from one event source, or from several memory-mapped or in-memory files
    in log order (an archive of small files): their events are then gathered into one buffer
    when the run is decoded (:func:`vecbinlog.binlog.gathered.gather`)."""

    table: str
    layout: TableMap
    version: int
    incarnation: int
    flavor: str
    events: list[EventIndex] = field(default_factory=list)  #: per piece
    srcs: list[Any] = field(default_factory=list)  #: per piece: its events' bytes (a file, window or unpacked buffer)
    files: list[BinlogFile] = field(default_factory=list)  #: per piece
    txns: list[TxnContext] | None = None  #: per piece; None: no transactions followed
    #: file source -> (first offset, last offset) of the segments the pieces come from in it
    ranges: dict[Any, tuple[int, int]] = field(default_factory=dict)
    nbytes: int = 0
    nevents: int = 0
    #: whether the CRC32s of ``events[:len(checked)]`` match, checked on a batch thread while
    #: the walk went on (:meth:`Carrier.take`; None: not checked there)
    checked: list[Future | None] = field(default_factory=list)
    #: every piece so far is a whole memory-mapped or in-memory file (its source is the file)
    whole_files: bool = True
    #: per piece from a step of small files joined: the file of each event (Gathered.file_of)
    file_of: list[np.ndarray] = field(default_factory=list)

    @classmethod
    def of(cls, step: Step, run: Run) -> CarriedRun:
        return cls(run.table, run.layout, run.version, run.incarnation, step.file.formats[0].flavor,
                   txns=[] if step.txn is not None else None)

    @property
    def src(self) -> Any:
        """The source of the last piece (the one the next piece may share)."""
        return self.srcs[-1]

    @property
    def file(self) -> BinlogFile:
        """The file of the first piece."""
        return self.files[0]

    @property
    def gathered(self) -> bool:
        """The pieces come from more than one source (decoded from a gathered buffer)."""
        return any(s is not self.srcs[0] for s in self.srcs)

    def follows(self, step: Step) -> bool:
        """Whether a piece of ``step`` may join: from the same source, or, when every piece
        comes from a memory-mapped or in-memory file, from another such file of the same
        server family (in log order, so the run stays in log order)."""
        if step.src is self.src:
            return True
        return step.src is step.file.whole and self.whole_files and step.file.formats[0].flavor == self.flavor and (self.txns is None) == (step.txn is None)

    def continues(self, step: Step, run: Run) -> bool:
        """Whether ``run`` (of ``step``) may join: a source it follows, the same layout,
        version and incarnation."""
        return (self.follows(step) and run.version == self.version and run.incarnation == self.incarnation
                and (run.layout is self.layout or run.layout == self.layout))

    def in_own_files(self) -> CarriedRun:
        """The run with its events where they are in their own files, when it comes from a step
        of small files joined (else itself): a run kept for later reads then holds no copy of
        the step's files, and gathers its own events again when decoded (:meth:`regathered`)."""
        if not self.srcs or not all(isinstance(s, Gathered) and s.origins is not None and s is self.srcs[0]
                                    for s in self.srcs):
            return self
        joined: Gathered = self.srcs[0]
        moved = [joined.in_files(events) for events in self.events]
        return replace(self, srcs=[origins for origins, _ in moved], events=[events for _, events in moved],
                       checked=[])

    def regathered(self) -> CarriedRun:
        """A run of :meth:`in_own_files` with its events copied into one buffer (their CRC32s
        checked on it when decoded), as the joined step's copy held them; else itself."""
        if not self.srcs or not isinstance(self.srcs[0], JoinedFiles):
            return self
        events = self.events[0] if len(self.events) == 1 else EventIndex.concat(self.events)
        src, events = self.srcs[0].gather(events, np.concatenate(self.file_of))
        return replace(self, srcs=[src], events=[events], checked=[])  # (txns, files, file_of: per piece, as they were)

    def add(self, step: Step, rows: StepRows, run: Run) -> None:
        """Take in ``run`` of ``step`` (its events among ``rows``)."""
        events = rows.index.take(run.rows)
        self.events.append(events)
        self.srcs.append(step.src)
        self.files.append(step.file)
        self.whole_files = self.whole_files and step.src is step.file.whole  # kept, not recounted: follows() is asked per piece
        if rows.file_of is not None:
            self.file_of.append(rows.file_of[run.rows].copy())
        if self.txns is not None:
            assert rows.txn is not None  # (txns: the steps' transactions, followed)
            self.txns.append(rows.txn.of_events(run.rows))
        source = step.file.source
        lo, _ = self.ranges.get(source, (step.segment.start, step.segment.end))
        self.ranges[source] = (lo, step.segment.end)
        self.nbytes += int(events.event_size.sum())
        self.nevents += len(events)


class Carrier:
    """The runs one read carries from segment to segment (by table), until they end; and the
    CRC32 checks of the rows events they took, made on ``checks``' threads while the walk goes
    on (None: none made there; each run checks its own when it is decoded). Asked, step by
    step, for the runs that end (:meth:`ended_before`, :meth:`take`, :meth:`rest`): a run
    handed out is the caller's; the carrier holds it no more."""

    def __init__(self, segment_bytes: int, checks: TaskGroup | None = None, threads: int = 1) -> None:
        self._carried: dict[str, CarriedRun] = {}
        self._large = segment_bytes // CARRY_SHARE  #: a run this large is not carried on
        self._checks, self._threads = checks, threads

    def __bool__(self) -> bool:
        return bool(self._carried)

    def ranges(self, source: Any) -> list[tuple[int, int]]:
        """The file ranges of ``source`` (a file's byte source) the runs carried read."""
        return [c.ranges[source] for c in self._carried.values() if source in c.ranges]

    def ended_before(self, step: Step) -> list[CarriedRun]:
        """The runs that cannot go on into ``step`` (another segment's buffer; another file
        unless every piece comes from a memory-mapped or in-memory file), ended."""
        return self._end([n for n, c in self._carried.items() if not c.follows(step)])

    def take(self, step: Step, rows: StepRows, runs: list[Run]) -> list[list[CarriedRun]]:
        """Take in ``runs`` of ``step`` (their events among ``rows``); the runs that end, in the
        order they must be decoded, in groups: each run a new layout ends, on its own, then
        those that are large enough, those whose source the next segment will not have, and
        every one when too many events wait. The CRC32s of what the runs still carried took
        from ``step`` are checked in the background meanwhile."""
        groups: list[list[CarriedRun]] = []
        for run in runs:
            carried = self._carried.get(run.table)
            if carried is not None and not carried.continues(step, run):
                groups.append(self._end([run.table]))
                carried = None
            if carried is None:
                self._carried[run.table] = carried = CarriedRun.of(step, run)
            carried.add(step, rows, run)
        carry = step.src is step.file.whole and sum(c.nevents for c in self._carried.values()) <= CARRY_EVENTS
        groups.append(self._end([n for n, c in self._carried.items() if not carry or c.nbytes >= self._large]))
        self._check(step)
        return [g for g in groups if g]

    def rest(self) -> list[CarriedRun]:
        """Every run still carried, ended (the walk is over)."""
        return self._end(list(self._carried))

    def _end(self, names: list[str]) -> list[CarriedRun]:
        return [self._carried.pop(name) for name in names]

    def _check(self, step: Step) -> None:
        """Check the CRC32s of the rows events that carried runs took from ``step``'s segment
        on a batch thread now, while the walk goes on, rather than when the runs are decoded:
        until runs end the other core has little to do (many tables whose runs all end with
        the file). A mismatch is told when the run is decoded, as before. The check holds the
        segment's event source (its bytes), not the file."""
        if self._checks is None or self._threads < 2 or not step.src.verify_checksums:
            return
        pieces = [(c, k) for c in self._carried.values() for k in range(len(c.checked), len(c.events))]
        mine = [(c, k) for c, k in pieces if c.srcs[k] is step.src]
        if not mine:
            return
        events = EventIndex.concat([c.events[k] for c, k in mine])
        checked = self._checks.submit("batch", self._threads, checksums_match, step.src, events)
        for c, k in pieces:  # a piece of another source is checked when its run is decoded
            c.checked.append(checked if c.srcs[k] is step.src else None)


@dataclass
class PlannedRuns:
    """Every run of a walk of the files, in the order a read hands them out, and the versions
    the walk found: what an open log keeps, when its files can be read again (memory-mapped
    or in memory) and the runs are few enough (:data:`PLANNED_EVENTS`), so that reading its
    tables one after another walks the files once."""

    runs: list[CarriedRun]
    versions: SchemaVersions  #: of every table the ``tables`` filter keeps
    nevents: int = 0  #: the rows events the runs hold


#: bytes of files read in windows (not mapped) whose windows planned runs may hold at most
PLANNED_WINDOW_BYTES = 64 << 20
#: binlog bytes up to which asking an open log for its tables plans its runs at once (one walk
#: for the tables and the reads that follow: the OLTP bench file's tables then each table 1.17
#: -> 0.65 s, its tables alone 0.22 -> 0.33 s); a larger set may hold more rows events than are
#: kept planned, which a walk would find only at its end
PLAN_ON_TABLES_BYTES = 256 << 20
#: files of at most this many bytes are joined by the walk that plans the runs of files that
#: hold more than PLANNED_WINDOW_BYTES together (their events gathered again by each read:
#: files of 0.6-0.7 MB, 124 and 185 of them, tables read in turn 0.50 -> 0.30 s and 0.46 ->
#: 0.29 s; 48 files of 3.4 MB, joined, 0.34 -> 0.35-0.38 s: not joined)
PLANNED_JOIN_FILE_BYTES = 1 << 20
#: rows events an open log keeps planned at most (their index entries and transactions, about
#: 100 bytes each): a log with more is walked again for each read
PLANNED_EVENTS = 1 << 20


def matched(checked: Future | None) -> bool:
    """What a check of :meth:`BatchReader._check_carried` found (False when it failed, or was
    not made: the run's own check then tells why)."""
    if checked is None:
        return False
    try:
        return bool(checked.result())
    except Exception:
        return False
