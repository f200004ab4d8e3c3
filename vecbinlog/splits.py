"""Split planning: cut binlog files into byte ranges that start at transaction boundaries.

A *split* is ``[start, stop)`` of one file. Splits are planned from the event headers only
(the walk of :mod:`vecbinlog.binlog.headers`, one integer read per event) and each starts where a
transaction starts, so that it holds its own TABLE_MAP events and can be decoded alone:
the FORMAT_DESCRIPTION_EVENT at offset 4, which ``BinlogFile`` parses on open, is all a
split needs from the rest of its file.

Where a transaction starts (control_events.h; MariaDB sql/log_event.h)::

    GTID_LOG_EVENT (33), ANONYMOUS_GTID_LOG_EVENT (34), GTID_TAGGED_LOG_EVENT (42),
    MariaDB GTID_EVENT (162)          the first event of every transaction that has one
    QUERY_EVENT (2) "BEGIN"           the first event of a transaction on servers without
                                      GTID events (MySQL 5.0-5.5, GTIDs off before 5.7);
                                      after a GTID event it is *not* a boundary: a GTID
                                      event and what follows it are never cut apart

Nothing here imports pyspark: :mod:`vecbinlog.spark` builds on it, and so can any other
scheduler (Dask, Ray, a process pool).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generator, Iterable, Iterator

import numpy as np
import pyarrow as pa

from .binlog.file import DEFAULT_SEGMENT_BYTES, BinlogFile, open_files
from .binlog.gtid import GtidSet
from .binlog.sources import FILES_AHEAD, is_uri, redact
from .binlog.spec import MAGIC_LEN
from .binlog.transactions import StartScan, scan_transactions
from .errors import SchemaWarning, SourceNotFoundError, TruncatedWarning
from .index import IndexedFile, load_index, replay_index
from .log.config import ReadConfig
from .log.logset import binlog_files
from .log.logwalk import unpacked
from .log.summary import cut_target, start_spacing
from .log.versions import SchemaHistory, VersionState
from .reader import Binlog, PathLike
from .tables.tracker import SchemaTracker

if TYPE_CHECKING:  # the DDL modules: imported by the first statement that needs them
    from .tables.ddl import Catalog

__all__ = ["Split", "plan_splits", "read_split", "read_splits", "with_history", "DEFAULT_SPLIT_BYTES",
           "transaction_starts", "starts_near", "cut_bounds", "split_paths", "may_hold_gtids"]

#: Default split size: a Spark task decodes about this much binlog.
DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024

@dataclass(frozen=True)
class Split:
    """``[start, stop)`` of one binlog file: whole transactions, decodable alone.

    ``start`` is the offset of the split's first event; the split's last event is the one
    before ``stop`` (``stop`` is the next split's ``start``, or the end of the file).
    """

    path: str
    start: int
    #: the offset after the split; None: the end of the file (a compressed file is one split)
    stop: int | None
    #: the DDL state where the split starts (tables defined by the DDL before it, in this file
    #: and the earlier ones of the set), so that a split names and types columns as a read of
    #: the whole set does; None: no DDL before it
    ddl: Catalog | None = field(default=None, compare=False, repr=False)
    #: where each table's versions stand where the split starts (``{db.table: VersionState}``,
    #: from :meth:`vecbinlog.Binlog.history`), so that ``_schema_version`` and ``_incarnation``
    #: count as in a read of the whole files; None: they count from the split
    versions: dict[str, VersionState] | None = field(default=None, compare=False, repr=False)
    #: the split starts the file right after the one the split before it in its plan ends
    #: (which it read to its end): a task reads such splits in one walk (:func:`read_splits`),
    #: small files joined (vecbinlog/log/logwalk.py), rather than a walk each
    follows: bool = field(default=False, compare=False, repr=False)

    @property
    def size(self) -> int | None:
        """Bytes of the split (None: a whole compressed file, whose size is not known)."""
        return None if self.stop is None else self.stop - self.start


def transaction_starts(file: BinlogFile, start: int = MAGIC_LEN, stop: int | None = None,
                       segment_bytes: int = DEFAULT_SEGMENT_BYTES) -> np.ndarray:
    """Offsets of the events in ``[start, stop)`` of ``file`` that start a transaction
    (int64, in file order), from the headers (and compressed events unpacked):
    :func:`vecbinlog.binlog.transactions.scan_transactions`."""
    return scan_transactions(file, start, segment_bytes, stop).starts


def starts_near(path: str, pos: int, kept: np.ndarray, config: ReadConfig) -> np.ndarray:
    """The transaction starts of the binlog at ``path`` (opened as ``config`` says) from the one
    of ``kept`` at or before ``pos`` (the file's first event when none) to the first of them
    after it (to the end when none): an archive index of a file of many transactions keeps a
    start per block (:func:`~vecbinlog.log.summary.start_spacing`), those between are found by
    walking that part of the file."""
    k = int(np.searchsorted(kept, pos, side="right"))
    lo = int(kept[k - 1]) if k else MAGIC_LEN
    hi = int(kept[k]) + 1 if k < len(kept) else None
    with config.open_file(path) as f, warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncatedWarning)  # (a file cut short: what it holds is walked)
        return transaction_starts(f, lo, hi)


def plan_splits(
    paths: PathLike | Iterable[PathLike],
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    config: ReadConfig | None = None,
    *,
    index: Any = None,
    index_filesystem: Any = None,
    history: SchemaHistory | None = None,
    **options: Any,
) -> list[Split]:
    """Cut binlog files into splits of about ``split_bytes`` that start at transactions.

    Parameters
    ----------
    paths : a binlog file or a list of them, in log order.
    split_bytes : the size to aim at: a split ends at the first transaction start at or
        after ``split_bytes`` from its own start, so it is larger when a transaction is (in a
        file of more than 4096 transactions, at or after the first multiple of the blocks of
        which an archive index keeps the first start: :func:`~vecbinlog.log.summary.start_spacing`).
        A file smaller than that is one split.
    config : the read's :class:`~vecbinlog.log.config.ReadConfig` (every file is opened with it:
        its ``filesystem``, checksums and limits; its filter's ``start``, ``stop``, ``tables``,
        ``since``, ``until`` and its ``gtids`` are the ones below); or
    options : the options of :func:`vecbinlog.open` it is built from, of which these count:
    start, stop : byte offsets: ``start`` in the first file, where a transaction starts
        (ValueError otherwise), ``stop`` in the last (any offset: the rows events before it).
    verify_checksums : check the CRC32 of the FORMAT_DESCRIPTION_EVENT of each file.
    filesystem : the filesystem ``paths`` are in (see :class:`vecbinlog.Binlog`).
    tables : ``db.table`` glob patterns of the tables to be read: DDL about other tables that
        is not understood is passed over without a SchemaWarning. With ``index``, the plan
        holds only the ranges where these tables have rows events (files without any left out).
    index : an archive index location (:func:`vecbinlog.build_index`): the plan is made from
        it alone, no binlog byte read (only each file's size and time, to check the index is
        of it; and, for a ``start`` between two of the starts the index keeps, the part of
        the first file between them: :func:`starts_near`); each split also gets ``versions``, where its tables' ``_schema_version`` and
        ``_incarnation`` stand (as a read with the default options numbers them). A file that
        grew since it was indexed is planned to where it was indexed.
    index_filesystem : the filesystem ``index`` is a path in (default: from ``index``).
    since, until : the read's event-time bounds (as :func:`vecbinlog.open` takes them: rows events
        with a header timestamp at or after ``since`` and before ``until``). With ``index``, a
        file is left out when none of its rows events (of ``tables``, when given) can be in
        them: the greatest timestamp of those rows events is before ``since``, or the least is
        at or after ``until`` (least and greatest, not first and last: a transaction's events
        carry the time it began, so a file is not in time order). A file that may hold rows in
        the bounds is planned whole (the read filters its rows). Without ``index``, they change
        nothing (every file is walked anyway).
    gtids : the read's GTID set (as :func:`vecbinlog.open` takes it). With ``index``, a file is
        left out when it holds none of them, where the index can tell (:func:`may_hold_gtids`):
        a file without GTIDs, or without any of the set's sources (MySQL uuid[:tag], MariaDB
        domain-server); MySQL: no interval of its GTIDs meets the set's; MariaDB (the index
        keeps the greatest sequence number of each domain-server only): every wanted number
        of that source is after it.
    history : what :meth:`vecbinlog.Binlog.history` found walking these files whole: the plan
        is made from the transaction starts it kept, and each split gets its DDL and layout
        states (as :func:`with_history`); no file is walked again (the Spark source plans so,
        after the walk that gave the schema).

    Returns
    -------
    list of :class:`Split`, files in the given order, each file's splits in file order;
    together they cover ``[start, stop)`` of the first file, all of the middle ones and
    ``[4, stop)`` of the last, without overlap.

    A file with a second FORMAT_DESCRIPTION_EVENT (a relay log) is not cut after it: the
    events after it need it, and a split only has the file's first one. A compressed file
    cannot be read from an offset: it is one split (``stop`` None). The headers of every file
    are read on the driver (for a file in object storage, all its bytes, streamed), for the
    transaction starts and the DDL before each split.

    Examples
    --------
    >>> from vecbinlog.splits import plan_splits, read_split
    >>> splits = plan_splits(["mysql-bin.000001", "mysql-bin.000002"], 64 << 20)  # doctest: +SKIP
    >>> batches = [b for s in splits for _, b in read_split(s, "shop.orders")]      # doctest: +SKIP
    """
    if split_bytes < 1:
        raise ValueError(f"split_bytes must be at least 1, not {split_bytes}")
    if config is None:
        config = ReadConfig.build(**options)
    elif options:
        raise TypeError(f"plan_splits takes a config or options, not both: {sorted(options)}")
    start, stop = config.filter.start, config.filter.stop
    files = binlog_files(paths, config.filesystem)
    if index is None and history is not None and history.walked is not None:
        return _plan_from_history(files, split_bytes, start, stop, history)
    if index is not None:
        return _plan_from_index(files, split_bytes, config, index, index_filesystem)
    out: list[Split] = []
    tracker = SchemaTracker(wanted=config.filter.table)  # the DDL state along the files, for each split's start
    chain = _Chain()
    for k, (path, f) in enumerate(zip(files, _opened_ahead(files, config))):
        lo = start if k == 0 and start is not None else MAGIC_LEN
        with f:
            if not f.source.seekable or f.size is None:  # a compressed file: one split, from its start
                if k == 0 and start is not None and start > MAGIC_LEN:
                    raise ValueError(f"{f.path}: a compressed file cannot be read from start={start}")
                whole = stop is None or k < len(files) - 1
                out.extend(chain.file(k, [Split(path, MAGIC_LEN, None if whole else stop,
                                                _state_at(_ddl_states(f, tracker, MAGIC_LEN, None), MAGIC_LEN))], whole))
                continue
            hi = f.size if k < len(files) - 1 or stop is None else min(stop, f.size)
            scan = StartScan()  # the transaction starts, found by the same walk as the DDL
            ddl = _ddl_states(f, tracker, MAGIC_LEN, hi, scan)  # from the file's start: DDL before lo counts
            if lo >= hi:
                chain.file(k, [], False)
                continue
            every = scan.result(f.size).starts
            spacing = start_spacing(every)  # (an index of the file cuts at the same starts)
            cuts = every[(every >= lo) & (every < hi)]
            if k == 0 and start is not None and start > MAGIC_LEN and (len(cuts) == 0 or cuts[0] != start):
                raise ValueError(
                    f"{path}: start={start} is not where a transaction starts (a GTID event, or a BEGIN "
                    "query without one): a split must hold its transactions' TABLE_MAP events"
                )
            if len(f.formats) > 1:  # a relay log: no cut after its second FDE
                cuts = cuts[cuts < f.formats[1].offset]
            bounds = cut_bounds(cuts[(cuts > lo) & (cuts < hi)], lo, hi, split_bytes, spacing)
        out.extend(chain.file(k, [Split(path, int(a), int(b), _state_at(ddl, int(a))) for a, b in zip(bounds[:-1], bounds[1:])],
                              hi == f.size))
    return out


def _opened_ahead(files: list[str], config: ReadConfig) -> Iterator[BinlogFile]:
    """The files, opened in order (as ``config`` says); in object storage, the next ones opened
    meanwhile, and the small ones read (as much as one segment holds together: see
    :func:`~.binlog.file.open_files`)."""

    def open_file(path: str) -> BinlogFile:
        f = config.open_file(path)
        if f.size is not None and f.size <= DEFAULT_SEGMENT_BYTES // FILES_AHEAD:
            f.prefetch()
        return f

    return open_files(files, open_file, config.filesystem)


def _plan_from_history(files: list[str], split_bytes: int, start: int | None, stop: int | None,
                       history: SchemaHistory) -> list[Split]:
    """:func:`plan_splits` from what a walk of the whole files kept (``history.walked``), with
    the states where each split starts: the plan walking them gives, no byte read."""
    assert history.walked is not None
    out: list[Split] = []
    chain = _Chain()
    for k, path in enumerate(files):
        f = history.walked[history.file_number(path)]
        shown = redact(path) if is_uri(path) else path
        lo = start if k == 0 and start is not None else MAGIC_LEN
        last = k == len(files) - 1
        if not f.seekable:
            if k == 0 and start is not None and start > MAGIC_LEN:
                raise ValueError(f"{shown}: a compressed file cannot be read from start={start}")
            whole = stop is None or not last
            out.extend(chain.file(k, [Split(path, MAGIC_LEN, None if whole else stop)], whole))
            continue
        size = f.size if f.size is not None else 0
        hi = size if not last or stop is None else min(stop, size)
        if lo >= hi:
            chain.file(k, [], False)
            continue
        cuts = f.starts[(f.starts >= lo) & (f.starts < hi)]
        if k == 0 and start is not None and start > MAGIC_LEN and (len(cuts) == 0 or cuts[0] != start):
            raise ValueError(f"{shown}: start={start} is not where a transaction starts (a GTID event, or a BEGIN "
                             "query without one): a split must hold its transactions' TABLE_MAP events")
        if f.second_format is not None:  # a relay log: no cut after its second FDE
            cuts = cuts[cuts < f.second_format]
        bounds = cut_bounds(cuts[(cuts > lo) & (cuts < hi)], lo, hi, split_bytes, start_spacing(f.starts))
        out.extend(chain.file(k, [Split(path, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])], hi == size))
    return with_history(out, history)


class _Chain:
    """Marks the splits that :attr:`Split.follows`: a file's first split, from its start, when
    the plan read the file before it to its end."""

    def __init__(self) -> None:
        self._whole = -2  # the last file planned to its end

    def file(self, k: int, splits: list[Split], to_end: bool) -> list[Split]:
        """The splits of file ``k`` (in order; ``to_end``: they reach its end), marked."""
        if splits and splits[0].start == MAGIC_LEN and self._whole == k - 1:
            splits[0] = replace(splits[0], follows=True)
        self._whole = k if splits and to_end else -2
        return splits


def _plan_from_index(files: list[str], split_bytes: int, config: ReadConfig, location: Any,
                     index_filesystem: Any) -> list[Split]:
    """:func:`plan_splits` from an archive index: its transaction starts, its DDL replayed, its
    layouts numbered (:func:`vecbinlog.index.replay_index`); with the ``tables`` filter, only the
    ranges of their rows events; with ``since``/``until``, only the files whose rows events may
    be in them (:func:`_in_window`); with ``gtids``, only the files that may hold them."""
    f = config.filter
    start, stop, tables, window, gtids = f.start, f.stop, f.tables, (f.since, f.until), config.gtids
    indexed = load_index(files, location, filesystem=config.filesystem, index_filesystem=index_filesystem)
    wanted = f.table
    ddl, history = replay_index(indexed, wanted)
    changes = sorted((where, name, state) for name, found in history.history.items() for where, state in found)
    at, now = 0, {}  # the layout states in force, swept along the splits (they come in log order)
    out: list[Split] = []
    chain = _Chain()
    for k, (path, ix) in enumerate(zip(files, indexed)):
        last = k == len(files) - 1
        lo = start if k == 0 and start is not None else MAGIC_LEN
        if not ix.row["seekable"]:  # a compressed file: one split, from its start
            if k == 0 and start is not None and start > MAGIC_LEN:
                raise ValueError(f"{path}: a compressed file cannot be read from start={start}")
            pieces = [(MAGIC_LEN, stop if last else None)]
        else:
            hi = ix.end if not last or stop is None else min(stop, ix.end)
            cuts = ix.starts
            if k == 0 and start is not None and start > MAGIC_LEN and start not in set(cuts.tolist()) and start not in set(
                    starts_near(path, start, cuts, config).tolist()):
                raise ValueError(
                    f"{path}: start={start} is not where a transaction starts (a GTID event, or a BEGIN "
                    "query without one): a split must hold its transactions' TABLE_MAP events"
                )
            if ix.row["second_format"] is not None:  # a relay log: no cut after its second FDE
                cuts = cuts[cuts < ix.row["second_format"]]
            ranges = [(lo, hi)] if tables is None else _wanted_ranges(ix, wanted, lo, hi)
            pieces = []
            for r_lo, r_hi in ranges:
                bounds = cut_bounds(cuts[(cuts > r_lo) & (cuts < r_hi)], r_lo, r_hi, split_bytes,
                                    ix.row["start_spacing"])
                pieces += list(zip(bounds[:-1], bounds[1:]))
        if (tables is not None and not any(wanted(t["name"]) for t in ix.row["tables"])) \
                or not _in_window(ix, wanted, window) or (gtids is not None and not may_hold_gtids(ix, gtids)):
            chain.file(k, [], False)
            continue
        mine = []
        for a, b in pieces:
            if b is not None and a >= b:
                continue
            while at < len(changes) and changes[at][0] < (k, a):
                now[changes[at][1]] = changes[at][2]
                at += 1
            mine.append(Split(path, int(a), None if b is None else int(b), _state_at(ddl[k], int(a)), dict(now)))
        to_end = bool(mine) and (mine[-1].stop is None or (ix.end == ix.row["size"] and mine[-1].stop == ix.end))
        out.extend(chain.file(k, mine, to_end))
    return out


def _in_window(ix: IndexedFile, wanted: Any, window: tuple[int | None, int | None]) -> bool:
    """Whether a rows event of a table ``wanted`` accepts in ``ix`` may have a header timestamp
    in ``window`` (``[since, until)``, seconds; None: unbounded): its tables' least timestamp is
    before ``until`` and their greatest at or after ``since``. Exact for leaving a file out:
    the least and greatest are of every rows event of the file, whatever their order."""
    since, until = window
    if since is None and until is None:
        return True
    times = [(t["first_time"], t["last_time"]) for t in ix.row["tables"] if wanted(t["name"])]
    if not times:  # no rows event of those tables: nothing of the file is read
        return False
    least = min(int(a.timestamp()) for a, _ in times)
    greatest = max(int(b.timestamp()) for _, b in times)
    return (since is None or greatest >= since) and (until is None or least < until)


#: a MariaDB GTID's source (domain-server) as GtidSet keys it; MySQL's are uuid[:tag]
_MARIADB_SOURCE = re.compile(r"\d+-\d+")


def may_hold_gtids(ix: IndexedFile, wanted: GtidSet) -> bool:
    """Whether ``ix`` may hold a transaction of ``wanted``, from the GTIDs its index keeps (its
    ``info()`` entry's set): False only where that is sure. A read with ``gtids`` keeps no
    transaction without a GTID (:meth:`GtidSet.contains` of a null is False), so a file
    without GTIDs holds none. MySQL's set is every GTID of the file; MariaDB's, the greatest
    sequence number of each domain-server (``domain-server-seq``, no colon); and the ranges of
    numbers of each block of the file (``gtid_blocks``) hold every GTID it has, of either."""
    text = (json.loads(ix.row["info"]).get("gtids") or {}).get("set")
    if not text:
        return False
    if ix.gtids is not None and not len(ix.gtids.blocks_of(wanted)):
        return False
    held = GtidSet(text).intervals
    for key, ivs in wanted.intervals.items():
        mine = held.get(key)
        if mine is None:
            continue
        if _MARIADB_SOURCE.fullmatch(key):  # domain-server: mine is [(greatest, greatest)]
            if any(lo <= mine[0][1] for lo, _ in ivs):
                return True
        elif any(lo <= b and a <= hi for lo, hi in ivs for a, b in mine):
            return True
    return False


def _wanted_ranges(ix: IndexedFile, wanted: Any, lo: int, hi: int) -> list[tuple[int, int]]:
    """The ranges of ``[lo, hi)`` where tables ``wanted`` accepts have rows events, merged."""
    found = sorted((r["start"], r["stop"]) for t in ix.row["tables"] if wanted(t["name"]) for r in t["ranges"])
    out: list[tuple[int, int]] = []
    for a, b in found:
        a, b = max(a, lo), min(b, hi)
        if a >= b:
            continue
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def with_history(splits: Iterable[Split], history: SchemaHistory) -> list[Split]:
    """The splits with the DDL and layout states where each starts, from a walk of the whole
    files (:meth:`vecbinlog.Binlog.history`, with the read's own options): decoded alone,
    each numbers ``_schema_version``/``_incarnation`` and names its columns as that walk."""
    out = []
    for s in splits:
        ddl, states = history.start_state(s.path, s.start)
        out.append(replace(s, ddl=ddl, versions=states))
    return out


def _ddl_states(file: BinlogFile, tracker: SchemaTracker, start: int, stop: int | None,
                scan: StartScan | None = None) -> list[tuple[int, Catalog | None]]:
    """[(offset, DDL state)]: the state before ``start`` (offset -1), then after each DDL
    statement of ``[start, stop)`` of ``file`` (compressed events unpacked, as the readers of
    the splits see them). DDL statements are rare: one copy each. ``scan``: fed each segment,
    for the transaction starts (one walk: a plan read each file twice, and more)."""
    before = tracker.catalog.tables or tracker.catalog.lifetimes
    states: list[tuple[int, Catalog | None]] = [(-1, tracker.state() if before else None)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)  # the readers of the splits warn, once each
        for seg in file.segments(start=start, stop=stop):
            src, index = unpacked(seg)
            _, after = tracker.scan(src, index, states=True)
            states.extend((pos, state) for (_, pos), state in after)
            if scan is not None:
                scan.feed(src, index, seg.end)
    return states


def _state_at(states: list[tuple[int, Catalog | None]], offset: int) -> Catalog | None:
    """The DDL state in force at ``offset`` (after every DDL statement before it)."""
    k = max(j for j, (at, _) in enumerate(states) if at < offset)
    return states[k][1]


def cut_bounds(candidates: np.ndarray, lo: int, hi: int, split_bytes: int, spacing: int = 1) -> list[int]:
    """Split boundaries of ``[lo, hi)``: lo, then the first of ``candidates`` (sorted offsets
    where a transaction starts) at or after the first multiple of ``spacing`` (the file's
    :func:`~vecbinlog.log.summary.start_spacing`) at least ``split_bytes`` after the last one,
    ..., hi (so that the starts an archive index keeps cut as every start does)."""
    bounds = [lo]
    while True:
        i = int(np.searchsorted(candidates, cut_target(bounds[-1] + split_bytes, spacing), side="left"))
        if i >= len(candidates):
            break
        bounds.append(int(candidates[i]))
    bounds.append(hi)
    return bounds


def read_split(split: Split, tables: str | Iterable[str] | None = None, config: ReadConfig | None = None,
               project: bool = True, **options: Any) -> Iterator[tuple[str, pa.RecordBatch]]:
    """Decode exactly ``[split.start, split.stop)``: ``(db.table, record batch)`` in log order.

    Parameters
    ----------
    split : from :func:`plan_splits`.
    tables : ``db.table`` glob patterns (all tables when None).
    config : the read's :class:`~vecbinlog.log.config.ReadConfig` (a Spark task gets the
        driver's); or
    project : the batches with the columns ``columns=``/``metadata=`` ask for (False: every
        column of each batch's layout, those left out all null, for a plan to conform them);
    **options : the options of :class:`~vecbinlog.Binlog` (``signedness``, ``since``,
        ``change_types``...), except ``start``/``stop``, which the split gives.
    """
    for bad in _RANGE_OPTIONS:
        if bad in options:
            raise ValueError(f"read_split takes {bad!r} from the split and its own arguments, not as an option")
    if config is None:
        config = ReadConfig.build(**options)
    elif options:
        raise TypeError(f"read_split takes a config or options, not both: {sorted(options)}")
    with Binlog.over_range(split.path, split.start, split.stop, ddl=split.ddl, versions=split.versions,
                           config=config.over_range(split.start, split.stop, tables)) as log:
        yield from log.iter_tables(layout_columns=not project)


def read_splits(splits: Iterable[Split], tables: str | Iterable[str] | None = None, config: ReadConfig | None = None,
                project: bool = True) -> Generator[tuple[str, pa.RecordBatch], None, None]:
    """:func:`read_split` of each of ``splits`` (in plan order), those that follow the split
    before them (:attr:`Split.follows`: the next file, from its start, after a file read to
    its end) read in the same walk: a task's many small files cost what one file does (they
    are joined, vecbinlog/log/logwalk.py), the rows are those of each split read alone."""
    config = config if config is not None else ReadConfig.build()
    chains: list[list[Split]] = []
    for s in splits:
        if chains and s.follows and chains[-1][-1].path != s.path:
            chains[-1].append(s)
        else:
            chains.append([s])
    for chain in chains:
        if len(chain) == 1:
            yield from read_split(chain[0], tables, config, project)
            continue
        first, last = chain[0], chain[-1]
        with Binlog.over_range([s.path for s in chain], first.start, last.stop, ddl=first.ddl, versions=first.versions,
                               config=config.over_range(first.start, last.stop, tables)) as log:
            yield from log.iter_tables(layout_columns=not project)


#: the options of :class:`~vecbinlog.Binlog` that a range read sets itself
_RANGE_OPTIONS = ("start", "stop", "tables")


def split_paths(paths: str | Iterable[str], filesystem: Any = None) -> list[str]:
    """Binlog files from a path, a glob, a ``mysql-bin.index`` or a comma-separated list of
    them, each glob in log order (:func:`vecbinlog.log.logset.log_order_key`); local paths or
    URIs (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``, ``file://``).

    A pattern that matches nothing is an error. Local paths come back absolute, so that a
    process with another working directory (a Spark worker) finds them.
    """
    items = [paths] if isinstance(paths, str) else list(paths)
    out: list[str] = []
    for item in items:
        for part in str(item).split(","):
            part = part.strip()
            if not part:
                continue
            if filesystem is None and part.startswith("file:") and not part.startswith("file://"):
                part = part[len("file:"):]
            files = binlog_files(part, filesystem)  # a file, a glob (log order) or a mysql-bin.index
            if filesystem is None:
                local = [f for f in files if not is_uri(f)]
                missing = [f for f in local if not os.path.isfile(f)]
                if missing:
                    raise SourceNotFoundError("no such binlog file", uri=missing[0])
                files = [f if is_uri(f) else type(f)(os.path.abspath(f)) for f in files]  # a NewestPath stays one
            out.extend(files)
    if not out:
        raise ValueError("no binlog files given")
    return out
