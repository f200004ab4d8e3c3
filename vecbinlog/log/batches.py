"""Batches: the rows events a read keeps, placed in runs of one layout and decoded in log order.

For each step of the walk (:mod:`vecbinlog.log.logwalk`) a read

1. refuses rows events it cannot decode (of the tables it reads): :class:`~vecbinlog.UnsupportedError`;
2. finds the effective layout, ``_schema_version`` and ``_incarnation`` of every rows event of
   the tables it reads (:mod:`vecbinlog.log.versions`), before any filter;
3. applies the per-event filters (:class:`~.config.RowsFilter`: offsets, times, change types) and
   checks the CRC32 of the TABLE_MAPs;
4. cuts the rows events kept into runs of one table, layout, version and incarnation (a small
   run of a memory-mapped or in-memory file is carried into the next segments: :mod:`.runs`),
   checks their CRC32, locates their row images (:class:`~vecbinlog.decode.rows.PlacedRun`, at most
   ``batch_rows`` per batch), and leaves out the rows of changes that did not take effect
   (``rolled_back``) or of transactions outside ``gtids``;
5. decodes each batch (:func:`~vecbinlog.decode.batch.build_batch`); steps 4 (but the cutting) and 5
   of a run run here, or, with ``threads`` > 1, on the ``batch`` threads (:mod:`vecbinlog.pools`)
   while the walk goes on (:mod:`.scheduler`); batches and errors come in the same order
   whatever ``threads`` is, each table's in log order (a run carried across segments comes
   when it ends: a read that fails may stop before rows of another table that came earlier).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Generator, Iterator, Mapping

import numpy as np
import pyarrow as pa

from ..binlog.headers import code_table
from ..binlog.sources import MappedSource
from ..binlog.eventsource import event_path
from ..binlog.transactions import StartScan
from ..constants import UNDECODED_ROWS_EVENTS, EventType, event_type_name
from ..decode.tableplan import TablePlan
from ..errors import BinlogError, ClosedError, UnsupportedError
from ..pools import TaskGroup
from ..tables.table_ids import FILE_SHIFT
from ..tables.table_map import TableMap
from .config import ReadConfig
from .logwalk import LogWalk, Step
from .pages import PageRelease
from .progress import ProgressBar
from .rundecode import declared_schema, run_batches
from .runs import (
    PLAN_ON_TABLES_BYTES,
    PLANNED_EVENTS,
    PLANNED_JOIN_FILE_BYTES,
    PLANNED_WINDOW_BYTES,
    CARRY_HELD_SEGMENTS,
    CarriedRun,
    Carrier,
    PlannedRuns,
    cut_runs,
)
from .scheduler import (
    BACKGROUND_BYTES,
    BACKGROUND_COLUMN_BYTES,
    BACKGROUND_EVENT_BYTES,
    Batch,
    PendingRun,
    ReadTally,
    decode_in_order,
)
from .versions import SchemaHistory, SchemaVersions, VersionState, WalkedFile, versioned

__all__ = ["BatchReader", "Read"]

_UNDECODED_ROWS = code_table(sorted(UNDECODED_ROWS_EVENTS))


def _known_total(sizes: list[int | None]) -> float:
    """The bytes of files together: infinite when one's size is not known (a compressed stream)."""
    known = [s for s in sizes if s is not None]
    return sum(known) if len(known) == len(sizes) else math.inf


def _release(ranges: list[tuple[Any, tuple[int, int]]]) -> None:
    """Let go of the pages of these memory-mapped file ranges."""
    for source, (lo, hi) in ranges:
        source.release(lo, hi)


@dataclass(frozen=True)
class Read:
    """What :meth:`BatchReader.read` found: the batches, and what the walk learnt with them."""

    #: each table's batches, the tables in the order the log first has their rows
    batches: dict[str, list[pa.RecordBatch]]
    #: each table's plan over the layouts met (tables whose rows were all left out included)
    plans: dict[str, TablePlan]
    versions: SchemaVersions  #: each table's versions and their effective layouts


class BatchReader:
    """The batches of a walk: of the tables a read asks for, filtered, placed and decoded, as
    the read's :class:`~.config.ReadConfig` says. ``tasks``: the group of the open log, of
    which each read of rows makes its own (closed when the read ends, however it ends: its
    background work over before any buffer it reads can go); the runs planned for later reads
    are checked on it. ``start_versions``: where each table's versions stand where the walk
    starts (a range read alone: ``Split.versions``)."""

    def __init__(self, walk: LogWalk, config: ReadConfig, tasks: TaskGroup,
                 start_versions: Mapping[str, VersionState] | None = None) -> None:
        self.walk, self.config, self.tasks = walk, config, tasks
        self.start_versions = dict(start_versions) if start_versions is not None else None
        self._reads = 0  #: reads of rows so far
        #: every run of the files, once a second read wanted them (None: not yet, or not kept)
        self._planned: PlannedRuns | None = None
        #: the tables' versions a walk of the layouts found (:meth:`plans`), for :meth:`tables`
        self._layouts: SchemaVersions | None = None
        #: the files can be read again without walking them: memory-mapped or in memory, or read
        #: in windows that planned runs may hold (a folder's newest file, read with pread)
        windowed = [f.size for f in walk.files if f.whole is None]
        self._plannable = not walk.seek and _known_total(windowed) <= PLANNED_WINDOW_BYTES
        #: the walk that plans runs joins small files into one step, as a read does, when the
        #: files hold at most PLANNED_WINDOW_BYTES together (the planned runs keep the joined
        #: copies, as they hold windows); up to PLAN_ON_TABLES_BYTES, it joins the files of at
        #: most PLANNED_JOIN_FILE_BYTES, and the planned runs keep their events where they are in
        #: their files, gathered again when decoded (CarriedRun.in_own_files)
        total = _known_total([f.size for f in walk.files])
        self._keep_joined_copies = total <= PLANNED_WINDOW_BYTES
        self._join_planned = (walk.join_bytes if self._keep_joined_copies else
                              min(walk.join_bytes, PLANNED_JOIN_FILE_BYTES) if total <= PLAN_ON_TABLES_BYTES else 0)
        #: the pages of memory-mapped files stay mapped between reads of planned runs when the
        #: files hold at most PLAN_ON_TABLES_BYTES: every table's rows events are spread over
        #: the whole file, so pages let go of after one table's read were faulted back in by the
        #: next (the OLTP bench file, 16 tables read in turn: their CRC32 checks 146 -> 28 ms)
        self._keep_planned_pages = total <= PLAN_ON_TABLES_BYTES

    # -- rows ------------------------------------------------------------------------------
    def batches(self, wanted: Callable[[str], bool], *, desc: str = "") -> Generator[Batch, None, None]:
        """Decoded batches of the tables ``wanted(name)`` accepts (and the ``tables`` filter), in
        log order per table, in bounded memory."""
        planned = self._planned_runs()
        versions = planned.versions.only(wanted) if planned is not None else SchemaVersions(self.start_versions)
        return self._batches(wanted, versions, desc, planned)

    def read(self, wanted: Callable[[str], bool], *, desc: str = "") -> Read:
        """Every batch of the tables ``wanted(name)`` accepts, with each table's plan over the
        layouts met (a table whose rows the filters all left out too). Text of a transcoded
        charset comes as its bytes, for :func:`~vecbinlog.decode.tableplan.concat_batches` to
        transcode, or keep as bytes, column by column."""
        planned = self._planned_runs()
        versions = planned.versions.only(wanted) if planned is not None else SchemaVersions(self.start_versions)
        out: dict[str, list[pa.RecordBatch]] = {}
        for name, batch in self._batches(wanted, versions, desc, planned, deferred_text=True):
            out.setdefault(name, []).append(batch)
        order = [n for n in versions.layouts if n in out] + [n for n in out if n not in versions.layouts]
        return Read({n: out[n] for n in order}, {n: self.plan(n, versions) for n in versions.layouts}, versions)

    def _batches(self, wanted: Callable[[str], bool], versions: SchemaVersions, desc: str,
                 planned: PlannedRuns | None, deferred_text: bool = False) -> Generator[Batch, None, None]:
        """The batches of one read. The read owns what it starts in the background (its task
        group): when it ends (at its end, at an error, or when its consumer stops: the
        generator closed or dropped), its runs under way are cancelled or waited for."""
        if self.tasks.closed:
            raise ClosedError("the log is closed")
        tasks = self.tasks.child("the read")
        progress = self.config.progress
        bar = ProgressBar(self.walk.files, desc, progress) if progress is not False else None
        tally = ReadTally(deferred_text=deferred_text)
        if planned is not None:  # the runs of an earlier walk: no walk
            jobs = self._planned_jobs(planned, wanted, tally, tasks)
        else:
            jobs = self._jobs(wanted, versions, bar, tally, tasks)
        batches = decode_in_order(jobs, self.config.threads, self.config.segment_bytes)
        try:
            for table, path, batch, notes, left_out in batches:
                tally.take(table, path, notes, left_out)
                if bar is not None:
                    bar.batch(batch)
                yield table, batch
                del batch  # not held while the next batch is made
            if bar is not None:
                bar.done()
        finally:
            batches.close()  # the runs under way cancelled, the walk closed,
            jobs.close()
            tasks.close()  # and what still runs of them waited for
            if bar is not None:
                bar.close()
            tally.warn()  # once per read: at its end, or where its reader stopped (an error, a break)

    def _planned_runs(self) -> PlannedRuns | None:
        """Every run of the files, walked once when a second read of rows comes (a log read
        table after table), and kept while the files can be read again and the runs hold at
        most :data:`~.runs.PLANNED_EVENTS` rows events; None otherwise."""
        self._reads += 1
        if self._planned is None and self._plannable and self._reads >= 2:
            self._planned = self._plan()
            self._plannable = self._planned is not None
        return self._planned

    def _plan(self) -> PlannedRuns | None:
        """Every run of the files, none decoded (their CRC32s checked in the background on the
        log's tasks); None when they hold more than :data:`~.runs.PLANNED_EVENTS` rows events,
        or the walk fails (a read of the wanted tables alone says what it must)."""
        versions = SchemaVersions(self.start_versions)
        carrier = Carrier(self.config.segment_bytes, self.tasks, self.config.threads)
        runs: list[CarriedRun] = []
        nevents = 0
        steps = self._ended_runs(lambda name: True, versions, None, carrier, None, join=self._join_planned)
        try:
            for ended, _ in steps:
                runs.extend(ended if self._keep_joined_copies else [r.in_own_files() for r in ended])
                nevents += sum(r.nevents for r in ended)
                if nevents > PLANNED_EVENTS:
                    return None
        except BinlogError:
            return None
        finally:
            steps.close()
        return PlannedRuns(runs, versions, nevents)

    def _planned_jobs(self, planned: PlannedRuns, wanted: Callable[[str], bool], tally: ReadTally,
                      tasks: TaskGroup) -> Generator[PendingRun, None, None]:
        """The planned runs of the tables ``wanted`` accepts, in the order a walk hands them out;
        each lets go of the pages it read once decoded."""
        for run in planned.runs:
            if not wanted(run.table):
                continue
            mapped = [(s, r) for s, r in run.ranges.items() if isinstance(s, MappedSource)]
            release = functools.partial(_release, mapped) if mapped and not self._keep_planned_pages else None
            yield self._pending(run, tally, tasks, self._background(run), release)

    def _background(self, run: CarriedRun) -> bool:
        """Whether ``run`` is placed and decoded in the background (with ``threads`` > 1): large
        enough, of events large enough, with enough bytes per column (bench/TUNING.md)."""
        return (self.config.threads > 1 and run.nbytes >= BACKGROUND_BYTES
                and run.nbytes >= run.nevents * BACKGROUND_EVENT_BYTES
                and run.nbytes >= len(run.layout.columns) * BACKGROUND_COLUMN_BYTES)

    def _pending(self, run: CarriedRun, tally: ReadTally, tasks: TaskGroup, background: bool,
                 release: Callable[[], None] | None) -> PendingRun:
        """The job that places and decodes a run (in the background on ``tasks`` when it is large)."""
        return PendingRun(run.file.path, run.table, background,
                          functools.partial(run_batches, run, self.config, tally.deferred_text), tasks,
                          release=release, nbytes=run.nbytes)

    # -- layouts, without decoding a row --------------------------------------------------------
    def schema_versions(self, history: bool = False, scans: list[StartScan] | None = None,
                        ) -> tuple[SchemaVersions, list[tuple[tuple[str, int], Any]]]:
        """Every table's versions (the ``tables`` filter applies), from a walk of the headers,
        TABLE_MAPs and DDL, and the DDL states after each statement (with ``history``);
        ``scans``: a StartScan per file, fed the file's transaction starts on the way."""
        versions = SchemaVersions(self.start_versions, history=history)
        ddl: list[tuple[tuple[str, int], Any]] = []
        for step in self.walk.steps(ddl_states=history):
            k = self.walk.files.index(step.file)
            versioned(step, self.config.filter.table, versions, k)
            ddl.extend(step.ddl_states)
            if scans is not None:
                scans[k].feed(step.src, step.index, step.segment.end)
        return versions, ddl

    def plan_runs(self) -> None:
        """Plan the runs now, when the files allow it and hold at most :data:`~.runs.PLAN_ON_TABLES_BYTES`
        (the log's tables were asked for: reads of them usually follow), so that the walk that
        finds the tables is the only one."""
        small = sum(f.size or 0 for f in self.walk.files) <= PLAN_ON_TABLES_BYTES
        if self._planned is None and self._plannable and small:
            self._reads = max(self._reads, 1)
            self._planned_runs()

    def tables(self) -> list[str] | None:
        """The tables with rows events (the ``tables`` filter applies), in order of their first,
        when the runs are planned already or :meth:`plans` walked the layouts (no walk); else
        None."""
        versions = self._planned.versions if self._planned is not None else self._layouts
        return list(versions.layouts) if versions is not None else None

    def plans(self) -> dict[str, TablePlan]:
        """Each table's TablePlan, from a walk of the layouts (no row decoded; none when the
        runs are planned already, or an earlier call walked them)."""
        if self._planned is not None:
            versions = self._planned.versions
        else:
            if self._layouts is None:
                self._layouts = self.schema_versions()[0]
            versions = self._layouts
        return {name: self.plan(name, versions) for name in versions.layouts}

    def history(self) -> SchemaHistory:
        """Each table's TablePlan, and where each table's versions and the DDL stand at any
        offset (see :meth:`vecbinlog.Binlog.history`)."""
        files = self.walk.files
        whole = not self.walk.seek
        scans = [StartScan() for _ in files] if whole else None  # (the starts a plan of splits needs)
        versions, ddl = self.schema_versions(history=True, scans=scans)
        number = {f.path: k for k, f in enumerate(files)}
        plans = {name: self.plan(name, versions) for name in versions.layouts}
        walked = None if scans is None else [
            WalkedFile(f.size, f.source.seekable, f.formats[1].offset if len(f.formats) > 1 else None,
                       scan.result(f.size).starts) for f, scan in zip(files, scans)]
        return SchemaHistory([f.path for f in files], plans, versions.history or {},
                             [((number[path], pos), state) for (path, pos), state in ddl], walked)

    def plan(self, table: str, versions: SchemaVersions) -> TablePlan:
        """The TablePlan of ``table`` from the layouts a walk met (their declared schemas)."""
        return versions.plan(table, self.declared)

    def declared(self, table_map: TableMap, flavor: str) -> pa.Schema:
        """The declared Arrow schema of a layout (before any text falls back to binary)."""
        return declared_schema(self.config, table_map, flavor)

    # -- runs -------------------------------------------------------------------------------------
    def _jobs(self, wanted: Callable[[str], bool], versions: SchemaVersions, bar: ProgressBar | None,
              tally: ReadTally, tasks: TaskGroup) -> Generator[PendingRun, None, None]:
        """The runs of :meth:`batches` as they end, each with what places and decodes its
        batches: in the background on ``tasks`` when large; the last of each group of runs
        handed out together lets go of the pages of a memory-mapped file that they read and
        no run not decoded yet will (:class:`~.pages.PageRelease`)."""
        carrier = Carrier(self.config.segment_bytes, tasks, self.config.threads)
        pages = PageRelease(carrier, CARRY_HELD_SEGMENTS * self.config.segment_bytes)
        steps = self._ended_runs(wanted, versions, bar, carrier, pages, join=self.walk.join_bytes)
        try:
            for ended, step in steps:
                read: dict[Any, tuple[int, int]] = {}  # mapped source -> the file range the runs read
                background = [self._background(run) for run in ended]
                for run, bg in zip(ended, background):
                    for source, (start, end) in run.ranges.items():
                        if not isinstance(source, MappedSource):  # the one source whose release is not a no-op
                            continue
                        lo, hi = read.get(source, (start, end))
                        read[source] = (min(lo, start), max(hi, end))
                        if bg and step is not None and step.src is run.src and step.segment.end == end:
                            pages.hold(step.segment)  # let go of by the runs when done, not by the walk before they read it
                key = pages.handed(read) if read else None
                for k, (run, bg) in enumerate(zip(ended, background)):
                    last = k == len(ended) - 1
                    yield self._pending(run, tally, tasks, bg,
                                        functools.partial(pages.release, key) if last and key is not None else None)
        finally:
            steps.close()

    def _ended_runs(self, wanted: Callable[[str], bool], versions: SchemaVersions, bar: ProgressBar | None,
                    carrier: Carrier, pages: PageRelease | None, join: int,
                    ) -> Generator[tuple[list[CarriedRun], Step | None], None, None]:
        """The walk's runs of the tables ``wanted`` accepts, as they end: groups of runs, each
        with the step the walk is at (None after the last). When the walk fails, the runs
        before the failure first: their batches come before the error. ``pages``: the read's
        pages, which the walk asks whether to keep a segment mapped, and which keep those that
        carried runs will read (None: the walk lets each go as it leaves it)."""
        walk, rows_filter = self.walk, self.config.filter
        keep_pages = pages.keeps if pages is not None else None
        try:
            for step in walk.steps(transactions=True, progress=bar, keep_pages=keep_pages, join=join):
                ended = carrier.ended_before(step)
                if ended:
                    yield ended, step
                f, index = step.file, step.index
                self._check_undecoded(step, wanted)
                found = versioned(step, lambda n: wanted(n) and rows_filter.table(n), versions, walk.files.index(f))
                if found is None:
                    continue
                keep = rows_filter.events(index, first=walk.first(f), last=walk.last(f), at=step.rows_pos[found.sel])
                if not keep.any():
                    continue
                rows_pos = step.rows_pos[found.sel[keep]]
                # the TABLE_MAPs' CRC32 here; each run's rows events' where it is decoded (run_batches)
                step.src.verify_checksums_of(index, index.type_code == EventType.TABLE_MAP_EVENT)
                rows, runs = cut_runs(found, step, rows_pos, keep)
                for group in carrier.take(step, rows, runs) if rows is not None else []:
                    yield group, step
                if pages is not None:
                    pages.hold_for_carried(step, self.config.segment_bytes, CARRY_HELD_SEGMENTS)
        except Exception:  # the runs before the failure first: their batches come before the error
            rest = carrier.rest()
            if rest:
                yield rest, None
            raise
        rest = carrier.rest()
        if rest:
            yield rest, None

    def _check_undecoded(self, step: Step, wanted: Callable[[str], bool]) -> None:
        """Refuse the rows events this version cannot decode, of the tables read (or of no
        known table): their rows would be missing."""
        f, index, rows_filter = step.file, step.index, self.config.filter
        bad = _UNDECODED_ROWS[index.type_code]
        bad &= rows_filter.events(index, first=self.walk.first(f), last=self.walk.last(f))
        for i in np.flatnonzero(bad).tolist():
            code = int(index.type_code[i])
            tid = int(step.maps.table_ids(index, np.array([i]))[0])
            if step.file_of is not None:  # (table ids are per file: keyed with it, see TableMaps.resolve)
                tid |= int(step.file_of[i]) << FILE_SHIFT
            lid = step.maps.current.get(tid)
            table = step.maps.layouts[lid].name if lid is not None else None
            if table is None or (wanted(table) and rows_filter.table(table)):
                raise UnsupportedError(
                    f"{event_type_name(code)} is not decoded by this version of vecbinlog; "
                    "its rows would be missing, so reading stops here",
                    path=event_path(step.src, i), offset=int(index.pos[i]), event_type=event_type_name(code),
                )
