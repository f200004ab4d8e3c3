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
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import pyarrow as pa

from ..binlog.file import Segment, checksums_match
from ..binlog.gathered import Gathered, gather
from ..binlog.headers import EventIndex, code_table
from ..binlog.sources import MappedSource, event_path
from ..binlog.transactions import INCOMPLETE, ROLLBACK, StartScan, TxnContext
from ..constants import UNDECODED_ROWS_EVENTS, EventType, event_type_name
from ..decode.batch import RowTransactions, build_batch, table_schema
from ..decode.rows import PlacedRun
from ..decode.tableplan import TablePlan
from ..errors import BinlogError, UnsupportedError
from ..groups import ranks
from ..pools import in_pool, pool
from ..tables.table_ids import FILE_SHIFT
from ..tables.table_map import TableMap
from .config import ReadConfig
from .logwalk import LogWalk, Step
from .pages import PageRelease
from .progress import ProgressBar
from .runs import (
    PLAN_ON_TABLES_BYTES,
    PLANNED_EVENTS,
    PLANNED_WINDOW_BYTES,
    SPAN_EVENTS,
    SPAN_HELD_SEGMENTS,
    SPAN_SHARE,
    CarriedRun,
    PlannedRuns,
    cut_runs,
    matched,
)
from .scheduler import (
    BACKGROUND_BYTES,
    BACKGROUND_EVENT_BYTES,
    Batch,
    Made,
    PendingRun,
    Pinned,
    ReadTally,
    decode_in_order,
)
from .versions import SchemaHistory, SchemaVersions, VersionState, WalkedFile, versioned

__all__ = ["BatchReader", "Read"]

_UNDECODED_ROWS = code_table(sorted(UNDECODED_ROWS_EVENTS))
_NOT_TAKEN_EFFECT = code_table([ROLLBACK, INCOMPLETE])  # by outcome


class _TooManyEvents(Exception):
    """More rows events than an open log keeps planned."""


def _release(ranges: list[tuple[Any, tuple[int, int]]]) -> None:
    """Let go of the pages of these memory-mapped file ranges."""
    for source, (lo, hi) in ranges:
        source.release(lo, hi)


def _unchecked(span: CarriedRun, srcs: list[Pinned]) -> Iterator[tuple[Pinned, EventIndex]]:
    """The pieces of ``span`` whose CRC32s were not found to match on a batch thread already,
    by source (each source's pieces in one check)."""
    by_source: dict[int, tuple[Pinned, list[EventIndex]]] = {}
    for k, (src, events) in enumerate(zip(srcs, span.events)):
        if k >= len(span.checked) or not matched(span.checked[k]):
            by_source.setdefault(id(src), (src, []))[1].append(events)
    for src, pieces in by_source.values():
        yield src, EventIndex.concat(pieces) if len(pieces) > 1 else pieces[0]


def _row_transactions(ctx: TxnContext | None, event: np.ndarray) -> RowTransactions | None:
    if ctx is None:
        return None
    return RowTransactions(ctx, ctx.txn[event], ctx.undone[event], ctx.query[event])


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
    the read's :class:`~.config.ReadConfig` says. ``start_versions``: where each table's
    versions stand where the walk starts (a range read alone: ``Split.versions``)."""

    def __init__(self, walk: LogWalk, config: ReadConfig,
                 start_versions: Mapping[str, VersionState] | None = None) -> None:
        self.walk, self.config = walk, config
        self.start_versions = dict(start_versions) if start_versions is not None else None
        self._reads = 0  #: reads of rows so far
        #: every run of the files, once a second read wanted them (None: not yet, or not kept)
        self._planned: PlannedRuns | None = None
        #: the files can be read again without walking them: memory-mapped or in memory, or read
        #: in windows that planned runs may hold (a folder's newest file, read with pread)
        windowed = [f.size for f in walk.files if f.buf is None]
        self._plannable = not walk.seek and None not in windowed and sum(windowed) <= PLANNED_WINDOW_BYTES
        #: planned runs may hold the copies of small files joined into one step (as they hold
        #: windows) when all the files hold at most PLANNED_WINDOW_BYTES together
        sizes = [f.size for f in walk.files]
        self._join_planned = None not in sizes and sum(sizes) <= PLANNED_WINDOW_BYTES
        #: the pages of memory-mapped files stay mapped between reads of planned runs when the
        #: files hold at most PLAN_ON_TABLES_BYTES: every table's rows events are spread over
        #: the whole file, so pages let go of after one table's read were faulted back in by the
        #: next (the OLTP bench file, 16 tables read in turn: their CRC32 checks 146 -> 28 ms)
        self._keep_planned_pages = None not in sizes and sum(sizes) <= PLAN_ON_TABLES_BYTES

    # -- rows ------------------------------------------------------------------------------
    def batches(self, wanted: Callable[[str], bool], *, desc: str = "") -> Iterator[Batch]:
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
                 planned: PlannedRuns | None, deferred_text: bool = False) -> Iterator[Batch]:
        progress = self.config.progress
        bar = ProgressBar(self.walk.files, desc, progress) if progress is not False else None
        tally = ReadTally(deferred_text=deferred_text)
        try:
            if planned is not None:  # the runs of an earlier walk: no walk
                jobs = self._planned_jobs(planned, wanted, tally)
            else:
                jobs = self._jobs(wanted, versions, bar, tally)
            for item in decode_in_order(jobs, self.config.threads, self.config.segment_bytes):
                if bar is not None:
                    bar.batch(item[1])
                yield item
                del item  # not held while the next batch is made
            if bar is not None:
                bar.done()
        finally:
            if bar is not None:
                bar.close()
            tally.warn()  # once per read: at its end, or where its reader stopped (an error, a break)

    def _planned_runs(self) -> PlannedRuns | None:
        """Every run of the files, walked once when a second read of rows comes (a log read
        table after table), and kept while the files can be read again and the runs hold at
        most :data:`~.runs.PLANNED_EVENTS` rows events; None otherwise."""
        self._reads += 1
        if self._planned is None and self._plannable and self._reads >= 2:
            versions = SchemaVersions(self.start_versions)
            runs: list[CarriedRun] = []
            try:
                for _ in self._jobs(lambda name: True, versions, None, ReadTally(), collect=runs):
                    pass
            except (BinlogError, _TooManyEvents):  # a read of the wanted tables alone says what it must
                self._plannable = False
                return None
            self._planned = PlannedRuns(runs, versions, sum(r.nevents for r in runs))
        return self._planned

    def _planned_jobs(self, planned: PlannedRuns, wanted: Callable[[str], bool],
                      tally: ReadTally) -> Iterator[PendingRun]:
        """The planned runs of the tables ``wanted`` accepts, in the order a walk hands them out;
        each lets go of the pages it read once decoded."""
        for span in planned.runs:
            if not wanted(span.table):
                continue
            job = self._pending(span, tally)
            mapped = [(s, r) for s, r in span.ranges.items() if isinstance(s, MappedSource)]
            if mapped and not self._keep_planned_pages:
                job.release = functools.partial(_release, mapped)
            yield job

    def _pending(self, span: CarriedRun, tally: ReadTally) -> PendingRun:
        """The job that places and decodes a run (in the background when it is large)."""
        threads = self.config.threads
        background = (threads > 1 and span.nbytes >= BACKGROUND_BYTES
                      and span.nbytes >= span.nevents * BACKGROUND_EVENT_BYTES)
        pinned = {id(s): Pinned(s) for s in span.srcs}  # the bytes held while the run waits
        return PendingRun(span.file.path, span.table, background,
                          functools.partial(self._decoded, span, [pinned[id(s)] for s in span.srcs], tally.deferred_text),
                          tally,
                          nbytes=span.nbytes)

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
        when the runs are planned already (no walk); else None."""
        return list(self._planned.versions.layouts) if self._planned is not None else None

    def plans(self) -> dict[str, TablePlan]:
        """Each table's TablePlan, from a walk of the layouts (no row decoded; none when the
        runs are planned already)."""
        versions = self._planned.versions if self._planned is not None else self.schema_versions()[0]
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
        """The declared Arrow schema of a layout (before any text falls back to binary): made
        once per layout and options in the process (:func:`~vecbinlog.decode.batch.table_schema`)."""
        return table_schema(table_map, self.config.decoding.of(table_map.name, flavor), self.config.queries)

    # -- runs -------------------------------------------------------------------------------------
    def _jobs(self, wanted: Callable[[str], bool], versions: SchemaVersions, bar: ProgressBar | None,
              tally: ReadTally, collect: list[CarriedRun] | None = None) -> Iterator[PendingRun]:
        """The runs of :meth:`batches`, each with what places and decodes its batches (or,
        with ``collect``, the runs put in it, none decoded)."""
        spans: dict[str, CarriedRun] = {}  # by table: its runs not decoded yet
        pages = PageRelease(spans, SPAN_HELD_SEGMENTS * self.config.segment_bytes)
        held: set[int] = set()  # the segments (by id) whose pages carried or background runs will read
        try:
            yield from self._steps_jobs(wanted, versions, bar, tally, spans, pages, held, collect)
        except Exception:  # the runs before the failure first: their batches come before the error
            yield from self._run_jobs(spans, list(spans), None, tally, pages, held, collect)
            raise
        yield from self._run_jobs(spans, list(spans), None, tally, pages, held, collect)

    def _steps_jobs(self, wanted: Callable[[str], bool], versions: SchemaVersions, bar: ProgressBar | None,
                    tally: ReadTally, spans: dict[str, CarriedRun], pages: PageRelease,
                    held: set[int], collect: list[CarriedRun] | None) -> Iterator[PendingRun]:
        walk, rows_filter = self.walk, self.config.filter

        def keep_pages(segment: Segment) -> bool:  # asked by the walk as it leaves a segment
            return id(segment) in held and (held.discard(id(segment)) is None)

        # small files joined into one step (for planned runs, which keep the copies, when they are few)
        join = collect is None or self._join_planned
        for step in walk.steps(transactions=True, progress=bar, keep_pages=keep_pages, join=join):
            # the runs that cannot go on into this segment (another segment's buffer; another file
            # unless every piece comes from a memory-mapped or in-memory file)
            yield from self._run_jobs(spans, [n for n, sp in spans.items() if not sp.follows(step)], step, tally,
                                      pages, held, collect)
            f, index = step.file, step.index
            self._check_undecoded(step, wanted)
            found = versioned(step, lambda n: wanted(n) and rows_filter.table(n), versions, walk.files.index(f))
            if found is None:
                continue
            keep = rows_filter.events(index, first=walk.first(f), last=walk.last(f), at=step.rows_pos[found.sel])
            if not keep.any():
                continue
            rows_pos = step.rows_pos[found.sel[keep]]
            # the TABLE_MAPs' CRC32 here; each run's rows events' where it is decoded (_decoded)
            step.src.verify_checksums_of(index, index.type_code == EventType.TABLE_MAP_EVENT)
            rows, runs = cut_runs(found, step, rows_pos, keep)
            for run in runs:
                span = spans.get(run.table)
                if span is not None and not span.continues(step, run):
                    yield from self._run_jobs(spans, [run.table], step, tally, pages, held, collect)
                    span = None
                if span is None:
                    spans[run.table] = span = CarriedRun.of(step, run)
                span.add(step, rows, run)
            # decoded now: the runs that are large enough, those whose source the next segment
            # will not have, and every one when too many events wait
            carry = step.src is step.file and sum(sp.nevents for sp in spans.values()) <= SPAN_EVENTS
            large = self.config.segment_bytes // SPAN_SHARE
            yield from self._run_jobs(spans, [n for n, sp in spans.items() if not carry or sp.nbytes >= large], step,
                                      tally, pages, held, collect)
            if collect is None:  # (planned runs are decoded later, each letting go of what it read)
                self._hold_for_spans(spans, step, held)
            self._check_carried(spans, step)

    def _check_carried(self, spans: dict[str, CarriedRun], step: Step) -> None:
        """Check the CRC32s of the rows events that carried runs took from ``step``'s segment
        on a batch thread now, while the walk goes on, rather than when the runs are decoded:
        until runs end the other core has little to do (many tables whose runs all end with
        the file). A mismatch is told when the run is decoded, as before."""
        if self.config.threads < 2 or not step.src.verify_checksums:
            return
        pieces = [(sp, k) for sp in spans.values() for k in range(len(sp.checked), len(sp.events))]
        mine = [(sp, k) for sp, k in pieces if sp.srcs[k] is step.src]
        if not mine:
            return
        events = EventIndex.concat([sp.events[k] for sp, k in mine])
        checked = pool("batch", self.config.threads).submit(checksums_match, step.src, events)
        for sp, k in pieces:  # a piece of another source is checked when its run is decoded
            sp.checked.append(checked if sp.srcs[k] is step.src else None)

    def _hold_for_spans(self, spans: dict[str, CarriedRun], step: Step, held: set[int]) -> None:
        """Keep the pages of ``step``'s segment of a memory-mapped file mapped when a carried run
        has events in it (the last run of its group lets go of them once decoded), as long as
        the carried runs span at most :data:`~.runs.SPAN_HELD_SEGMENTS` segments."""
        source = step.file.source
        if not isinstance(source, MappedSource) or step.src is not step.file:
            return
        here = [sp.ranges[source] for sp in spans.values() if source in sp.ranges]
        ending = any(hi == step.segment.end for _, hi in here)
        if ending and step.segment.end - min(lo for lo, _ in here) <= SPAN_HELD_SEGMENTS * self.config.segment_bytes:
            held.add(id(step.segment))

    def _run_jobs(self, spans: dict[str, CarriedRun], names: list[str], step: Step | None, tally: ReadTally,
                  pages: PageRelease, held: set[int], collect: list[CarriedRun] | None = None) -> Iterator[PendingRun]:
        """The runs of tables ``names`` (taken out of ``spans``), one after the other (``step``:
        the segment the walk is at, None after the last), each with what checks its rows events'
        CRC32, walks their rows headers, places their row images, takes out the rows that the
        outcome and GTID filters leave out (counted in ``dropped``) and decodes the rest, batch
        by batch. The last one, once done, lets go of the pages of a memory-mapped file that
        they read and no carried run will (:class:`~.pages.PageRelease`). With ``collect``,
        the runs are put in it instead (planned, none decoded)."""
        if collect is not None:
            collect.extend(spans.pop(name) for name in names)
            if sum(r.nevents for r in collect) > PLANNED_EVENTS:
                raise _TooManyEvents
            return
        jobs: list[PendingRun] = []
        read: dict[Any, tuple[int, int]] = {}  # mapped source -> the file range the runs read
        for name in names:
            span = spans.pop(name)
            job = self._pending(span, tally)
            for source, (start, end) in span.ranges.items():
                if not isinstance(source, MappedSource):  # the one source whose release is not a no-op
                    continue
                lo, hi = read.get(source, (start, end))
                read[source] = (min(lo, start), max(hi, end))
                if job.background and step is not None and step.src is span.src and step.segment.end == end:
                    held.add(id(step.segment))  # let go of by the runs when done, not by the walk before they read it
            jobs.append(job)
        if jobs and read:
            jobs[-1].release = functools.partial(pages.release, pages.handed(read))
        yield from jobs

    def _decoded(self, span: CarriedRun, srcs: list[Pinned], deferred_text: bool = False) -> Iterator[Made]:
        """The batches of one run (its pieces' rows events in ``srcs``), checked, placed,
        filtered and decoded (on any thread: a run in the background takes its CRC32s and
        rows headers off the reading thread); ``deferred_text``: see :class:`~.scheduler.ReadTally`."""
        config = self.config
        name, tm, flavor = span.table, span.layout, span.flavor
        effective = config.effective(name)
        for src, events in _unchecked(span, srcs):
            src.verify_checksums_of(events)
        names = list(dict.fromkeys(f.name for f in span.files))
        file_no = [names.index(f.name) for f in span.files]  # per piece
        if span.gathered:  # pieces of several files: their events copied into one buffer
            src, events = gather(list(zip(srcs, span.events)), file_no, [f.path for f in dict.fromkeys(span.files)],
                                 names)
            file_of_event = src.file_of
        else:
            events = span.events[0] if len(span.events) == 1 else EventIndex.concat(span.events)  # (read, not changed)
            src, file_of_event = srcs[0], None
            joined = span.srcs[0]
            if isinstance(joined, Gathered):  # a step of small files joined: its events' own files (those used)
                used, file_of_event = ranks(np.concatenate(span.file_of))
                names = [joined.names[k] for k in used.tolist()]
        ctx = TxnContext.concat(span.txns, file_no) if span.txns is not None else None
        gtids = config.gtids
        gtid_ok = gtids.contains(ctx.gtid) if gtids is not None and ctx is not None else None  # per transaction
        placement = PlacedRun(src, events, tm, max_images=config.batch_rows)
        wanted = None if config.columns is None and config.metadata else config.wants
        options, declared = config.decoding.of(name, flavor, deferred_text), self.declared(tm, flavor)
        for images in placement.batches():
            txn = _row_transactions(ctx, images.event)
            keep_rows = np.ones(len(images), bool)
            left_out = 0
            if not effective:
                took_effect = ~_NOT_TAKEN_EFFECT[txn.outcome()]
                left_out = int((~took_effect).sum())
                keep_rows &= took_effect
            if gtid_ok is not None:
                keep_rows &= (txn.txn >= 0) & gtid_ok[np.maximum(txn.txn, 0)] if len(gtid_ok) else False
            if not keep_rows.all():
                images = images.take(keep_rows)
                txn = RowTransactions(txn.context, txn.txn[keep_rows], txn.undone[keep_rows], txn.query[keep_rows],
                                      txn.outcome()[keep_rows])
            # columns at once only on the reading thread: on a batch thread, runs are what goes on at
            # once (column threads as well measured slower: bench/RESULTS.md)
            columns = 1 if in_pool("batch") else config.threads
            batch, notes = build_batch(images, options, names, txn, config.queries, schema_version=span.version,
                                       incarnation=span.incarnation, threads=columns, declared=declared,
                                       file_of_event=file_of_event, wanted=wanted)
            del images, txn
            yield batch, notes, left_out
            del batch

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
