"""Batches: the rows events a read keeps, placed in runs of one layout and decoded in log order.

For each step of the walk (:mod:`vecbinlog.log.logwalk`) a read

1. refuses rows events it cannot decode (of the tables it reads): :class:`~vecbinlog.UnsupportedError`;
2. finds the effective layout, ``_schema_version`` and ``_incarnation`` of every rows event of
   the tables it reads (:mod:`vecbinlog.log.versions`), before any filter;
3. applies the per-event filters (:class:`RowsFilter`: offsets, times, change types) and
   checks the CRC32 of the TABLE_MAPs;
4. cuts the rows events kept into runs of one table, layout, version and incarnation (a small
   run of a memory-mapped or in-memory file is carried into the next segments: :class:`_Span`),
   checks their CRC32, locates their row images (:class:`~vecbinlog.decode.rows.PlacedRun`, at most
   ``batch_rows`` per batch), and leaves out the rows of changes that did not take effect
   (``rolled_back``) or of transactions outside ``gtids``;
5. decodes each batch (:func:`~vecbinlog.decode.batch.build_batch`); steps 4 (but the cutting) and 5
   of a run run here, or, with ``threads`` > 1, on the ``batch`` threads (:mod:`vecbinlog.pools`)
   while the walk goes on (:func:`decode_in_order`); batches and errors come in the same order
   whatever ``threads`` is, each table's in log order (a run carried across segments comes
   when it ends: a read that fails may stop before rows of another table that came earlier).
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import itertools
import warnings
from collections import Counter, deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

from ..binlog.file import BinlogFile, checksums_match
from ..binlog.gtid import GtidSet
from ..binlog.headers import EventIndex, code_table
from ..binlog.sources import MappedSource
from ..binlog.transactions import INCOMPLETE, ROLLBACK, TxnContext
from ..constants import ROWS_EVENTS, UNDECODED_ROWS_EVENTS, EventType, event_type_name
from ..decode.batch import RowTransactions, build_batch, table_schema
from ..decode.decoders import DecodeOptions
from ..decode.rows import PlacedRun, RowImages, place_images
from ..decode.tableplan import TablePlan
from ..errors import DecodeWarning, MalformedEventError, UnsupportedError
from ..options import WhenLike, byte_offset, change_kinds, epoch
from ..pools import in_pool, pool
from ..tables.table_ids import TableMaps
from ..tables.table_map import TableMap
from ..tables.types import MARIADB_OLD_TEMPORAL
from .logwalk import LogWalk, Step
from .progress import ProgressBar
from .versions import SchemaVersions, TableLayouts, Versioned, versioned

__all__ = ["RowsFilter", "TableOptions", "BatchReader", "PendingRun", "decode_in_order", "placed"]

#: a batch decoded: (table, record batch)
Batch = tuple[str, pa.RecordBatch]

_UNDECODED_ROWS = code_table(sorted(UNDECODED_ROWS_EVENTS))
_NOT_TAKEN_EFFECT = code_table([ROLLBACK, INCOMPLETE])  # by outcome

#: event type code -> RowsKind, -1 for events that are not (decoded) rows events
_KIND_OF_CODE = np.full(256, -1, np.int64)
for _code, (_kind, _) in ROWS_EVENTS.items():
    _KIND_OF_CODE[_code] = _kind


@dataclass(frozen=True)
class RowsFilter:
    """Which rows events to decode; everything else is walked over, never decoded.

    * ``tables``: ``db.table`` glob patterns (``"shop.*"``); a table matching any is kept.
    * ``start``/``stop``: byte offsets, as ``mysqlbinlog --start-position/--stop-position``:
      ``start`` applies to the first file, ``stop`` to the last; a rows event is kept when it
      starts at or after ``start`` and before ``stop``.
    * ``since``/``until``: datetimes (naive ones are UTC): rows events whose header timestamp
      is at or after ``since`` and before ``until``, as ``--start-datetime/--stop-datetime``.
    * ``change_types``: some of ``"insert"``, ``"update"``, ``"delete"``.
    """

    tables: tuple[str, ...] | None = None
    start: int | None = None
    stop: int | None = None
    since: int | None = None  #: seconds since the epoch
    until: int | None = None
    kinds: frozenset[int] | None = None

    @classmethod
    def make(cls, tables: str | Iterable[str] | None = None, start: int | None = None, stop: int | None = None,
             since: WhenLike | None = None, until: WhenLike | None = None,
             change_types: str | Iterable[str] | None = None) -> RowsFilter:
        """The filter of the options of :class:`~vecbinlog.Binlog`, checked and normalised."""
        if isinstance(tables, str):
            tables = (tables,)
        if tables is not None and not all(isinstance(t, str) for t in tables):
            raise TypeError(f"tables: db.table glob patterns (str), not {tables!r}")
        return cls(
            tables=None if tables is None else tuple(tables), start=byte_offset(start, "start"), stop=byte_offset(stop, "stop"),
            since=epoch(since, "since"), until=epoch(until, "until"), kinds=change_kinds(change_types),
        )

    def table(self, name: str) -> bool:
        """Whether the ``tables`` patterns keep table ``name``."""
        return self.tables is None or any(fnmatch.fnmatchcase(name, pat) for pat in self.tables)

    def events(self, index: EventIndex, *, first: bool, last: bool, at: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of the events (rows events, in practice) the filter keeps: of every
        event of ``index``, or of those at positions ``at``."""
        def col(name: str) -> np.ndarray:
            values = getattr(index, name)
            return values if at is None else values[at]

        keep = np.ones(len(index) if at is None else len(at), bool)
        if first and self.start is not None:
            keep &= col("pos") >= self.start  # file offsets (of the compressed event, for unpacked ones)
        if last and self.stop is not None:
            keep &= col("pos") < self.stop
        if self.since is not None:
            keep &= col("timestamp").astype(np.int64) >= self.since
        if self.until is not None:
            keep &= col("timestamp").astype(np.int64) < self.until
        if self.kinds is not None:
            kind = _KIND_OF_CODE[col("type_code")]
            keep &= np.isin(kind, list(self.kinds)) | (kind < 0)
        return keep


def _unsigned_flag(column: str, value: bool | str) -> bool:
    """``signedness=`` values: True/"unsigned" or False/"signed"; anything else is a mistake."""
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("unsigned", "signed"):
        return str(value).lower() == "unsigned"
    raise ValueError(f"signedness for {column!r} must be 'unsigned', 'signed', True or False, not {value!r}")


class TableOptions:
    """The decoding options of each table: ``signedness``, ``charsets`` and ``names`` by
    ``db.table`` (``"*"``: every table), and ``invalid_dates``."""

    def __init__(self, signedness: Mapping[str, Mapping[str, Any]] | None = None,
                 charsets: Mapping[str, Mapping[str, str]] | None = None,
                 names: Mapping[str, Sequence[str]] | None = None, invalid_dates: str = "null",
                 queries: bool = False) -> None:
        if invalid_dates not in ("null", "string"):
            raise ValueError(f"invalid_dates must be 'null' or 'string', not {invalid_dates!r}")
        self.signedness = signedness or {}
        self.charsets = charsets or {}
        self.names = {k: tuple(v) for k, v in (names or {}).items()}
        self.invalid_dates = invalid_dates
        self.queries = queries
        #: (id of a layout, flavor) -> (the layout, its declared schema): made once for the
        #: batches of a layout, not per batch; at most SCHEMAS_KEPT layouts
        self._schemas: dict[tuple[int, str], tuple[TableMap, pa.Schema]] = {}

    def of(self, table: str, flavor: str) -> DecodeOptions:
        """The DecodeOptions of ``table`` in a file of server ``flavor``."""
        def pick(d: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
            return {**d.get("*", {}), **d.get(table, {})}

        sign = {k: _unsigned_flag(k, v) for k, v in pick(self.signedness).items()}
        return DecodeOptions(
            signedness=sign, charsets=pick(self.charsets), names=self.names.get(table), flavor=flavor,
            invalid_dates=self.invalid_dates,
        )

    def schema(self, table_map: TableMap, flavor: str) -> pa.Schema:
        """The declared Arrow schema of a layout (before any text falls back to binary)."""
        key = (id(table_map), flavor)
        kept = self._schemas.get(key)
        if kept is not None and kept[0] is table_map:  # the layout held, so its id is its own
            return kept[1]
        schema = table_schema(table_map, self.of(table_map.name, flavor), self.queries)
        if len(self._schemas) >= SCHEMAS_KEPT:
            self._schemas.clear()  # bounded (one call is atomic, with runs on other threads)
        self._schemas[key] = (table_map, schema)
        return schema


#: layouts whose declared schema TableOptions keeps (a schema is made from every column's options)
SCHEMAS_KEPT = 512


#: the bytes of rows events under which a run is placed and decoded here, not in the
#: background (a thread's hand-off and its turns at the GIL cost more than they give)
BACKGROUND_BYTES = 1 << 20
#: nor when its rows events are smaller than this on average: a log of many small transactions
#: keeps the reading thread busy with Python (transactions, GTIDs), which a run in the
#: background would take turns with at the GIL (measured: the OLTP-shaped bench file, 5-8% slower)
BACKGROUND_EVENT_BYTES = 1024
#: a table's run is carried into the next segment (of a memory-mapped or in-memory file) while
#: its rows events are under ``segment_bytes // SPAN_SHARE``: fewer, larger batches for tables
#: with little in each segment; a batch still holds about ``segment_bytes`` of rows at most
SPAN_SHARE = 4
#: the rows events that runs carried into the next segment hold at most (their index entries
#: and transactions are kept): beyond, every run is decoded
SPAN_EVENTS = 1 << 17
#: a memory-mapped file's segments that carried runs will read again stay mapped until those
#: runs are decoded (instead of being let go of by the walk and faulted back in by the runs:
#: the mixed bench file's read without either measured 314 against 341 ms CPU best in one
#: sitting, within this VM's noise in others), while they span at most this many
#: ``segment_bytes``; beyond, the walk lets them go as it moves on (memory stays bounded)
SPAN_HELD_SEGMENTS = 8
#: runs under way in the background: ``threads`` of any size, and up to RUNS_AHEAD x ``threads``
#: while each holds under ``segment_bytes // SPAN_SHARE`` of rows events and all of them under
#: ``segment_bytes``, so that a thread done with a small run takes the next at once, not when
#: the reading thread has taken the oldest one's batch (mixed bench file, 24 runs of 1.4-8.4
#: MB: median 251 against 283 ms). Larger runs are not: more of them under way measured 60 MB
#: more peak memory (iter_batches of 1.9 GB of narrow rows, runs of 10 MB)
RUNS_AHEAD = 3
#: the batches a run decodes in the background at most (they are held until read); the rest
#: of a longer run is decoded here as it is read, so that memory stays bounded
BACKGROUND_BATCHES = 1

#: what decoding a run gives: per batch (batch, decoding notes, rows left out by the filters)
Made = tuple[pa.RecordBatch, list[str], int]


class PendingRun:
    """The batches of one run of ``table``, placed and decoded: here, as they are read
    (:meth:`results`), or the first :data:`BACKGROUND_BATCHES` of them in the background
    (:meth:`start`) and the rest as they are read; ``make`` yields them.
    Rows left out by the filters are counted in ``dropped`` (on the reading thread)."""

    def __init__(self, path: str, table: str, background: bool, make: Callable[[], Iterator[Made]],
                 dropped: Counter[str], release: Callable[[], None] | None = None, nbytes: int = 0) -> None:
        self.path, self.table, self.background, self.dropped = path, table, background, dropped
        self.nbytes = nbytes  #: of its rows events
        self.make: Callable[[], Iterator[Made]] | None = make
        self.future: Future | None = None
        #: after the run is decoded: let its segments' pages go again (the walk let them go when
        #: it moved on, and the run's reads brought them back); None: the walk lets them go
        self.release = release

    def start(self, workers: int) -> None:
        """Place and decode the run's first batches on one of ``workers`` ``batch`` threads."""
        self.future = pool("batch", workers).submit(_made_until_error, self.make, BACKGROUND_BATCHES)

    def cancel(self) -> None:
        """Not wanted any more: not started, or let go of once done."""
        if self.future is not None:
            self.future.cancel()
        self.make = self.future = None

    def results(self) -> Iterator[Batch]:
        """(table, batch) of each batch, its decoding warnings issued; the batches before an
        error come first, then the error."""
        if self.future is None:
            made, error = self.make(), None
        else:
            done, error, rest = self.future.result()
            made = itertools.chain(_handed_over(done), rest)
        self.make = self.future = None
        for batch, notes, left_out in made:
            if left_out:
                self.dropped[self.table] += left_out
            for note in notes:
                warnings.warn(f"{self.path}: {self.table}: {note}", DecodeWarning, stacklevel=5)
            yield self.table, batch
            del batch
        if self.release is not None:
            self.release()
        if error is not None:
            raise error


class _Pinned:
    """An event source with its bytes held: a run decoded in the background reads them even
    when the reader is closed meanwhile (a memory map then goes once the run lets go of it)."""

    def __init__(self, src: Any) -> None:
        self._src, self.buf = src, src.buf

    def __getattr__(self, name: str) -> Any:
        return getattr(self._src, name)


def _handed_over(made: list[Made]) -> Iterator[Made]:
    """The items of ``made``, each let go of by the list as it is handed over."""
    made.reverse()
    while made:
        yield made.pop()


def _made_until_error(make: Callable[[], Iterator[Made]], limit: int
                      ) -> tuple[list[Made], Exception | None, Iterator[Made]]:
    """The first ``limit`` batches ``make`` yields, the error that stopped it (None: none),
    and the rest of them, to be made on the thread that reads them."""
    made: list[Made] = []
    batches = make()
    try:
        for m in batches:
            made.append(m)
            if len(made) == limit:
                break
    except Exception as exc:
        return made, exc, iter(())
    return made, None, batches


def decode_in_order(jobs: Iterable[PendingRun], threads: int, ahead_bytes: int = 0) -> Iterator[Batch]:
    """The batches of ``jobs``, in their order.

    With ``threads`` > 1 the runs marked ``background`` are placed and decoded (their first
    :data:`BACKGROUND_BATCHES` batches) on ``threads`` threads (the compiled walk, NumPy and
    Arrow release the GIL), ``threads`` runs under way at a time, more while they are small and
    hold under ``ahead_bytes`` of rows events (:data:`RUNS_AHEAD`), while this thread walks on through the log, and
    takes the batches in turn; batches still come, and fail, in order: when the walk fails,
    the batches of the runs before come first."""
    pending: deque[PendingRun] = deque()  # started, in log order
    it = iter(jobs)
    try:
        while True:
            try:
                job = next(it)
            except StopIteration:
                break
            except BaseException:
                while pending:
                    yield from pending.popleft().results()
                raise
            if threads > 1 and job.background:
                job.start(threads)
                pending.append(job)
                while len(pending) >= threads and (
                        len(pending) >= RUNS_AHEAD * threads or sum(p.nbytes for p in pending) >= ahead_bytes
                        or any(p.nbytes >= ahead_bytes // SPAN_SHARE for p in pending)):
                    yield from pending.popleft().results()
            else:
                while pending:
                    yield from pending.popleft().results()
                yield from job.results()
            del job
        while pending:
            yield from pending.popleft().results()
    finally:  # the caller stopped reading, or a run failed: the runs under way are not wanted
        for job in pending:
            job.cancel()


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


def placed(src: Any, maps: TableMaps, events: EventIndex, tm: TableMap, flavor: str,
           max_images: int) -> Iterator[RowImages]:
    """``place_images``, errors :func:`explained`."""
    with explained(tm, flavor):
        yield from place_images(src, maps, events, tm, max_images=max_images)


def _explained_batches(placement: PlacedRun, tm: TableMap, flavor: str) -> Iterator[RowImages]:
    with explained(tm, flavor):
        yield from placement.batches()


class _Pages:
    """Lets go of the pages of memory-mapped files that decoded runs read (the walk let go of
    those of the segments it left, or kept them for the runs: :meth:`BatchReader._hold_for_spans`),
    but not of those that runs not decoded yet (carried, or handed out) will read, while these
    span at most ``held`` bytes: those wait until no such run needs them. (A run decoded before
    the others that began with the file took from under them the pages they read again: the
    mixed bench file, 3 000 page faults a read.) Used on the reading thread only, where
    ``spans`` (the carried runs, by table) change and runs are handed out and read."""

    def __init__(self, spans: dict[str, _Span], held: int) -> None:
        self.spans, self.held = spans, held
        self.groups: dict[int, dict[Any, tuple[int, int]]] = {}  # handed out, not decoded yet: source -> range
        self.waiting: dict[Any, tuple[int, int]] = {}  # source -> the range not let go of yet
        self._keys = itertools.count()

    def handed(self, read: dict[Any, tuple[int, int]]) -> int:
        """A group of runs handed out, that read ``read`` (source -> file range); its key."""
        key = next(self._keys)
        self.groups[key] = read
        return key

    def release(self, key: int) -> None:
        """The group of runs ``key`` is decoded: let go of what it read and nothing else needs."""
        for source, (lo, hi) in self.groups.pop(key).items():
            w = self.waiting.get(source)
            self.waiting[source] = (lo, hi) if w is None else (min(lo, w[0]), max(hi, w[1]))
        for source in list(self.waiting):
            lo, hi = self.waiting.pop(source)
            needed = [(sp.start, sp.end) for sp in self.spans.values() if sp.file.source is source]
            needed += [read[source] for read in self.groups.values() if source in read]
            keep_lo = min((a for a, _ in needed), default=0)
            keep_hi = max((b for _, b in needed), default=0)
            if keep_hi - keep_lo > self.held:  # too much to keep: let go (the runs read it in again)
                keep_lo = keep_hi = 0
            if lo < keep_lo:
                source.release(lo, min(hi, keep_lo))
            if hi > keep_hi:
                source.release(max(lo, keep_hi), hi)
            if lo < keep_hi and hi > keep_lo:
                self.waiting[source] = (max(lo, keep_lo), min(hi, keep_hi))


@dataclass
class _Run:
    """Consecutive rows events of one table, effective layout, version and incarnation."""

    table: str
    rows_pos: np.ndarray  #: positions in the step's index
    layout: TableMap
    version: int
    incarnation: int


def _runs(found: Versioned, rows_pos: np.ndarray, keep: np.ndarray) -> list[_Run]:
    """The runs of the rows events ``rows_pos`` (those of ``found`` that ``keep`` keeps), per
    table (the tables in the order of their first rows event), each table's in log order."""
    code, version, incarnation, table = found.code[keep], found.version[keep], found.incarnation[keep], found.table[keep]
    if not len(table):
        return []
    # one stable sort by where each event's table first comes: the events grouped by table, in log order
    _, first_at, inverse = np.unique(table, return_index=True, return_inverse=True)
    order = np.argsort(first_at[inverse.ravel()], kind="stable")
    pos, code, version, incarnation, table = rows_pos[order], code[order], version[order], incarnation[order], table[order]
    cut = (np.diff(table) != 0) | (np.diff(code) != 0) | (np.diff(version) != 0) | (np.diff(incarnation) != 0)
    starts = np.concatenate(([0], np.flatnonzero(cut) + 1)).tolist()
    ends = starts[1:] + [len(pos)]
    return [_Run(found.tables[int(table[a])], pos[a:b], found.resolved[int(code[a])], int(version[a]), int(incarnation[a]))
            for a, b in zip(starts, ends)]


@dataclass
class _Span:
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
    def of(cls, step: Step, run: _Run) -> _Span:
        return cls(run.table, run.layout, run.version, run.incarnation, step.file, step.src, step.segment.start,
                   step.segment.end, [], [] if step.txn is not None else None)

    def continues(self, step: Step, run: _Run) -> bool:
        """Whether ``run`` (of ``step``) may join: same source, layout, version and incarnation."""
        return (step.src is self.src and run.version == self.version and run.incarnation == self.incarnation
                and (run.layout is self.layout or run.layout == self.layout))

    def add(self, step: Step, run: _Run) -> None:
        events = step.index.take(run.rows_pos)
        self.events.append(events)
        if self.txns is not None:
            self.txns.append(step.txn.of_events(run.rows_pos))
        self.end = step.segment.end
        self.nbytes += int(events.event_size.sum())
        self.nevents += len(events)


def _matched(checked: Future) -> bool:
    """What a check of :meth:`BatchReader._check_carried` found (False when it failed: the
    run's own check then tells why)."""
    try:
        return bool(checked.result())
    except Exception:
        return False


def _row_transactions(ctx: TxnContext | None, event: np.ndarray) -> RowTransactions | None:
    if ctx is None:
        return None
    return RowTransactions(ctx, ctx.txn[event], ctx.undone[event], ctx.query[event])


class BatchReader:
    """The batches of a walk: of the tables a read asks for, filtered, placed and decoded.

    ``rolled_back``, ``non_transactional``, ``gtids``, ``threads``, ``batch_rows``,
    ``layout_state`` and ``progress`` are the options of :class:`~vecbinlog.Binlog`.
    """

    def __init__(self, walk: LogWalk, filter: RowsFilter, options: TableOptions, *, rolled_back: str = "exclude",
                 non_transactional: Sequence[str] = (), gtids: GtidSet | None = None, threads: int = 1,
                 batch_rows: int, layout_state: Mapping[str, Any] | None = None,
                 progress: bool | Mapping[str, Any] = False) -> None:
        self.walk, self.filter, self.options = walk, filter, options
        self.rolled_back, self.non_transactional, self.gtids = rolled_back, tuple(non_transactional), gtids
        self.threads, self.batch_rows = threads, batch_rows
        self.layout_state = dict(layout_state) if layout_state is not None else None
        self.progress = progress

    def versions(self, history: bool = False) -> SchemaVersions:
        """An empty count of versions, from the layout states where the walk starts."""
        return SchemaVersions(self.layout_state, history=history)

    def batches(self, wanted: Callable[[str], bool], versions: SchemaVersions | None = None, *, desc: str = ""
                ) -> Iterator[Batch]:
        """Decoded batches of the tables ``wanted(name)`` accepts (and the ``tables`` filter), in
        log order per table. ``versions`` (filled on the way) has each table's layouts afterwards."""
        bar = ProgressBar(self.walk.files, desc, self.progress) if self.progress is not False else None
        dropped: Counter[str] = Counter()
        try:
            yield from decode_in_order(self._jobs(wanted, versions, bar, dropped), self.threads, self.walk.segment_bytes)
            self._warn_dropped(dropped)
            if bar is not None:
                bar.done()
        finally:
            if bar is not None:
                bar.close()

    def layouts(self, history: bool = False, ddl: list | None = None) -> SchemaVersions:
        """Every table's layouts (the ``tables`` filter applies), versions and incarnations, from
        a walk of the headers, TABLE_MAPs and DDL; no row is decoded."""
        versions = self.versions(history)
        for step in self.walk.steps(ddl_states=ddl):
            versioned(step, self.filter.table, versions, self.walk.files.index(step.file))
        return versions

    def plans(self) -> dict[str, TablePlan]:
        """Each table's TablePlan, from a walk of the layouts (no row decoded)."""
        versions = self.layouts()
        return {name: self.plan(name, versions) for name in versions.layouts}

    def table_layouts(self) -> TableLayouts:
        """Each table's TablePlan, and where each table's layouts and the DDL stand at any
        offset (see :meth:`vecbinlog.Binlog.layouts`)."""
        ddl: list[tuple[tuple[str, int], Any]] = []
        versions = self.layouts(history=True, ddl=ddl)
        files = self.walk.files
        number = {f.path: k for k, f in enumerate(files)}
        plans = {name: self.plan(name, versions) for name in versions.layouts}
        return TableLayouts([f.path for f in files], plans, versions.history or {},
                            [((number[path], pos), state) for (path, pos), state in ddl])

    def _jobs(self, wanted: Callable[[str], bool], versions: SchemaVersions | None, bar: ProgressBar | None,
              dropped: Counter[str]) -> Iterator[PendingRun]:
        """The runs of :meth:`batches`, each with what places and decodes its batches."""
        versions = versions if versions is not None else self.versions()
        spans: dict[str, _Span] = {}  # by table: its runs not decoded yet
        pages = _Pages(spans, SPAN_HELD_SEGMENTS * self.walk.segment_bytes)
        try:
            yield from self._steps_jobs(wanted, versions, bar, dropped, spans, pages)
        except Exception:  # the runs before the failure first: their batches come before the error
            yield from self._run_jobs(spans, list(spans), None, dropped, pages)
            raise
        yield from self._run_jobs(spans, list(spans), None, dropped, pages)

    def _steps_jobs(self, wanted: Callable[[str], bool], versions: SchemaVersions, bar: ProgressBar | None,
                    dropped: Counter[str], spans: dict[str, _Span], pages: _Pages) -> Iterator[PendingRun]:
        walk = self.walk
        for step in walk.steps(transactions=True, progress=bar):
            # the runs of another file, or of another segment's buffer
            yield from self._run_jobs(spans, [n for n, sp in spans.items() if sp.src is not step.src], step, dropped, pages)
            f, index = step.file, step.index
            self._check_undecoded(step, wanted)
            found = versioned(step, lambda n: wanted(n) and self.filter.table(n), versions, walk.files.index(f))
            if found is None:
                continue
            keep = self.filter.events(index, first=walk.first(f), last=walk.last(f), at=step.rows_pos[found.sel])
            if not keep.any():
                continue
            rows_pos = step.rows_pos[found.sel[keep]]
            # the TABLE_MAPs' CRC32 here; each run's rows events' where it is decoded (_decoded)
            step.src.verify_checksums_of(index, index.type_code == EventType.TABLE_MAP_EVENT)
            for run in _runs(found, rows_pos, keep):
                span = spans.get(run.table)
                if span is not None and not span.continues(step, run):
                    yield from self._run_jobs(spans, [run.table], step, dropped, pages)
                    span = None
                if span is None:
                    spans[run.table] = span = _Span.of(step, run)
                span.add(step, run)
            # decoded now: the runs that are large enough, those whose source the next segment
            # will not have, and every one when too many events wait
            carry = step.src is step.file and sum(sp.nevents for sp in spans.values()) <= SPAN_EVENTS
            large = self.walk.segment_bytes // SPAN_SHARE
            yield from self._run_jobs(spans, [n for n, sp in spans.items() if not carry or sp.nbytes >= large], step, dropped, pages)
            self._hold_for_spans(spans, step)
            self._check_carried(spans, step)

    def _check_carried(self, spans: dict[str, _Span], step: Step) -> None:
        """Check the CRC32s of the rows events that carried runs took from ``step``'s segment
        on a batch thread now, while the walk goes on, rather than when the runs are decoded:
        until runs end the other core has little to do (the mixed bench file: 24 tables whose
        runs all end with the file). A mismatch is told when the run is decoded, as before."""
        if self.threads < 2 or not step.src.verify_checksums:
            return
        here = [sp for sp in spans.values() if sp.end == step.segment.end and len(sp.checked) < len(sp.events)]
        if not here:
            return
        events = EventIndex.concat([piece for sp in here for piece in sp.events[len(sp.checked):]])
        checked = pool("batch", self.threads).submit(checksums_match, step.src, events)
        for sp in here:
            sp.checked.extend([checked] * (len(sp.events) - len(sp.checked)))

    def _hold_for_spans(self, spans: dict[str, _Span], step: Step) -> None:
        """Keep the pages of ``step``'s segment of a memory-mapped file mapped when a carried run
        has events in it (the last run of its group lets go of them once decoded), as long as
        the carried runs span at most :data:`SPAN_HELD_SEGMENTS` segments."""
        if not isinstance(step.file.source, MappedSource) or step.src is not step.file:
            return
        ending = [sp for sp in spans.values() if sp.end == step.segment.end and sp.src is step.src]
        if ending and step.segment.end - min(sp.start for sp in spans.values()) <= (
                SPAN_HELD_SEGMENTS * self.walk.segment_bytes):
            step.segment.held = True

    def _run_jobs(self, spans: dict[str, _Span], names: list[str], step: Step | None, dropped: Counter[str],
                  pages: _Pages) -> Iterator[PendingRun]:
        """The runs of tables ``names`` (taken out of ``spans``), one after the other (``step``:
        the segment the walk is at, None after the last), each with what checks its rows events'
        CRC32, walks their rows headers, places their row images, takes out the rows that the
        outcome and GTID filters leave out (counted in ``dropped``) and decodes the rest, batch
        by batch. The last one, once done, lets go of the pages of a memory-mapped file that
        they read and no carried run will (:class:`_Pages`)."""
        jobs: list[PendingRun] = []
        read: dict[Any, tuple[int, int]] = {}  # mapped source -> the file range the runs read
        for name in names:
            span = spans.pop(name)
            background = (self.threads > 1 and span.nbytes >= BACKGROUND_BYTES
                          and span.nbytes >= span.nevents * BACKGROUND_EVENT_BYTES)
            source = span.file.source
            if isinstance(source, MappedSource):  # the one source whose release is not a no-op once walked past
                lo, hi = read.get(source, (span.start, span.end))
                read[source] = (min(lo, span.start), max(hi, span.end))
                if background and step is not None and step.src is span.src and step.segment.end == span.end:
                    step.segment.held = True  # let go of by the runs when done, not by the walk before they read it
            jobs.append(PendingRun(span.file.path, span.table, background,
                                   functools.partial(self._decoded, span, _Pinned(span.src)), dropped,
                                   nbytes=span.nbytes))
        if jobs and read:
            jobs[-1].release = functools.partial(pages.release, pages.handed(read))
        yield from jobs

    def _decoded(self, span: _Span, src: _Pinned) -> Iterator[Made]:
        """The batches of one run (its rows events in ``src``), checked, placed, filtered and
        decoded (on any thread: a run in the background takes its CRC32s and rows headers off
        the reading thread)."""
        f, name, tm = span.file, span.table, span.layout
        effective = self.rolled_back == "keep" or any(fnmatch.fnmatchcase(name, p) for p in self.non_transactional)
        flavor = f.formats[0].flavor
        events = EventIndex.concat(span.events)
        ctx = TxnContext.concat(span.txns) if span.txns is not None else None
        gtid_ok = self.gtids.contains(ctx.gtid) if self.gtids is not None and ctx is not None else None  # per transaction
        unchecked = [piece for k, piece in enumerate(span.events) if k >= len(span.checked) or not _matched(span.checked[k])]
        src.verify_checksums_of(EventIndex.concat(unchecked) if len(unchecked) < len(span.events) else events)
        with explained(tm, flavor):
            placement = PlacedRun(src, events, tm, max_images=self.batch_rows)
        options, declared = self.options.of(name, flavor), self.options.schema(tm, flavor)
        for images in _explained_batches(placement, tm, flavor):
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
            # once (column threads as well measured 7-17% slower on the mixed and wide bench files)
            columns = 1 if in_pool("batch") else self.threads
            batch, notes = build_batch(images, options, f.name, txn, self.options.queries, schema_version=span.version,
                                       incarnation=span.incarnation, threads=columns, declared=declared)
            del images, txn
            yield batch, notes, left_out
            del batch

    def _check_undecoded(self, step: Step, wanted: Callable[[str], bool]) -> None:
        """Refuse the rows events this version cannot decode, of the tables read (or of no
        known table): their rows would be missing."""
        f, index = step.file, step.index
        bad = _UNDECODED_ROWS[index.type_code]
        bad &= self.filter.events(index, first=self.walk.first(f), last=self.walk.last(f))
        for i in np.flatnonzero(bad).tolist():
            code = int(index.type_code[i])
            tid = int(step.maps.table_ids(index.take(np.array([i])))[0])
            lid = step.maps.current.get(tid)
            table = step.maps.layouts[lid].name if lid is not None else None
            if table is None or (wanted(table) and self.filter.table(table)):
                raise UnsupportedError(
                    f"{event_type_name(code)} is not decoded by this version of vecbinlog; "
                    "its rows would be missing, so reading stops here",
                    path=f.path, offset=int(index.pos[i]), event_type=event_type_name(code),
                )

    @staticmethod
    def _warn_dropped(dropped: Counter[str]) -> None:
        for name, n in dropped.items():
            if not n:
                continue
            warnings.warn(
                f"{name}: {n} row images left out: their transaction rolled back (or was undone by ROLLBACK TO "
                "SAVEPOINT, or has no end in the files), so they did not take effect; rolled_back='keep' keeps "
                "them, marked by _outcome",
                DecodeWarning, stacklevel=4,
            )

    def plan(self, table: str, versions: SchemaVersions) -> TablePlan:
        """The TablePlan of ``table`` from the layouts a walk met (their declared schemas)."""
        return versions.plan(table, self.options.schema)
