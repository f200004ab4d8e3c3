"""The public entry point: :func:`open` a binlog (or several, in order) and read tables from it."""

from __future__ import annotations

import fnmatch
import functools
import os
import warnings
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrow import (JSON_DIFFS_FIELD, METADATA_FIELDS, QUERY_FIELD, THREADED_CELLS, RowTransactions, build_batch,
                    table_schema)
from .compression import COMPRESSED_EVENTS, unpack_segment
from .constants import ROWS_EVENTS, UNDECODED_ROWS_EVENTS, EventType, event_type_name
from .decoders import DecodeOptions
from .decoders.strings import UTF8_CHARSETS
from .errors import BinlogError, BinlogSetWarning, TableNotFoundError, UnsupportedError
from .events import describe_events, parse_rotate
from .file import DEFAULT_SEGMENT_BYTES, BinlogFile
from .gtid import GTID_EVENTS, GtidSet, GtidSummary, gtid_texts, previous_gtids
from .index import EventIndex
from .layout import MAGIC_LEN
from .logset import binlog_files, binlog_sources, open_source, source_name
from .options import ProgressBar, WhenLike, byte_offset, change_kinds, epoch
from .rows import CHANGE_TYPES, MAX_BATCH_IMAGES, TableMaps, place_images
from .snapshot import replay
from .schema import SchemaSource, SchemaTracker, load_schema
from .table_map import TableMap
from .transactions import INCOMPLETE, ROLLBACK, TransactionTracker, TxnContext

__all__ = ["Binlog", "RowsFilter", "open", "read_table", "read_pandas", "DecodeWarning"]

PathLike = str | os.PathLike[str]
#: what open() reads: a path (or glob, or index file), or the binlog itself (bytes, a binary file object)
SourceLike = str | os.PathLike[str] | bytes | bytearray | memoryview | Any

_UNDECODED_ROWS = np.array(sorted(UNDECODED_ROWS_EVENTS), np.uint8)
_NOT_TAKEN_EFFECT = np.array([ROLLBACK, INCOMPLETE], np.int8)


@dataclass
class _Step:
    """One segment of one file, ready to decode: its events (unpacked when compressed) and
    their rows events' layouts, and the transactions they belong to."""

    file: BinlogFile
    src: Any  #: the file, or an Unpacked buffer standing for it (see compression.py)
    maps: TableMaps
    index: EventIndex
    rows_pos: np.ndarray
    layout: np.ndarray
    txn: TxnContext | None
    schema: SchemaTracker  #: the DDL replayed so far (shared by every step of a walk)
    generation: np.ndarray  #: int64 per rows event: the DDL generation it sees (see schema.py)

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
    def make(cls, tables=None, start=None, stop=None, since=None, until=None, change_types=None) -> RowsFilter:
        if isinstance(tables, str):
            tables = (tables,)
        if tables is not None and not all(isinstance(t, str) for t in tables):
            raise TypeError(f"tables: db.table glob patterns (str), not {tables!r}")
        return cls(
            tables=None if tables is None else tuple(tables), start=byte_offset(start, "start"), stop=byte_offset(stop, "stop"),
            since=epoch(since, "since"), until=epoch(until, "until"), kinds=change_kinds(change_types),
        )

    def table(self, name: str) -> bool:
        return self.tables is None or any(fnmatch.fnmatchcase(name, pat) for pat in self.tables)

    def events(self, index: EventIndex, *, first: bool, last: bool) -> np.ndarray:
        """Boolean mask of the events (rows events, in practice) the filter keeps."""
        keep = np.ones(len(index), bool)
        if first and self.start is not None:
            keep &= index.pos >= self.start  # file offsets (of the compressed event, for unpacked ones)
        if last and self.stop is not None:
            keep &= index.pos < self.stop
        if self.since is not None:
            keep &= index.timestamp.astype(np.int64) >= self.since
        if self.until is not None:
            keep &= index.timestamp.astype(np.int64) < self.until
        if self.kinds is not None:
            kind = _KIND_OF_CODE[index.type_code]
            keep &= np.isin(kind, list(self.kinds)) | (kind < 0)
        return keep


def _unsigned_flag(column: str, value: bool | str) -> bool:
    """``signedness=`` values: True/"unsigned" or False/"signed"; anything else is a mistake."""
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("unsigned", "signed"):
        return str(value).lower() == "unsigned"
    raise ValueError(f"signedness for {column!r} must be 'unsigned', 'signed', True or False, not {value!r}")


class DecodeWarning(UserWarning):
    """A value could not be typed as declared (e.g. text invalid in its charset) and was kept as bytes."""


def _as_paths(paths: PathLike | Iterable[PathLike]) -> list[str]:
    return binlog_files(paths)


class Binlog:
    """One binlog file or an ordered list of them, read as one change log.

    ``vecbinlog.open`` is this class. Files are memory-mapped; the object is a context
    manager that unmaps them.

    Parameters
    ----------
    paths : a binlog file (str or ``os.PathLike``), a list of them in log order, a glob
        (``"archive/mysql-bin.*"``, sorted by number) or the server's ``mysql-bin.index``; or
        the binlog itself: ``bytes``/``bytearray``/``memoryview``, or a binary file object
        (``open(..., "rb")``, ``io.BytesIO``, a remote file), read whole into memory (its
        ``_log_file`` is the file object's name, else ``<memory 1>``...). Table ids are per
        file; a file's last ROTATE_EVENT should name the next file (a warning says when not).
        Anything else is a ``TypeError`` that says what is accepted.
    strict : raise :class:`~vecbinlog.TruncatedError` at a truncated last event (a file
        still being written, or a partial copy) instead of warning and decoding every
        complete event before it.
    verify_checksums : check the CRC32 of every event that is decoded (when the file has
        checksums); a mismatch raises :class:`~vecbinlog.ChecksumError`.
    signedness : override what the binlog says (or does not say) about integer columns:
        ``{"db.table": {"column or @N": "unsigned" | "signed" | True | False}}``;
        ``"*"`` as table applies to every table.
    charsets : the MySQL character set of text columns when the binlog does not carry it
        (MySQL MINIMAL metadata before 8.0, MariaDB NO_LOG):
        ``{"db.table": {"column or @N": "utf8mb4"}}``; ``"*"`` applies to every table.
    names : column names for tables whose binlog has none (``binlog_row_metadata`` other than
        FULL): ``{"db.table": ["id", "customer", ...]}``, one name per column, in order.
    invalid_dates : zero or partly-zero dates ('0000-00-00', '2020-00-15'), which MySQL allows
        and Arrow cannot hold: ``"null"`` (null, with a DecodeWarning counting them) or
        ``"string"`` (temporal columns as MySQL's own text, nothing lost).
    tables, start, stop, since, until, change_types : filters applied before decoding, so
        that what they leave out is never decoded (see :class:`RowsFilter`). ``since`` and
        ``until`` are datetimes (naive = UTC; pandas Timestamps too), dates, numpy datetime64
        or ISO 8601 strings (``"2026-11-21"``, ``"2026-11-21T20:00:21Z"``); ``change_types``
        is ``"insert"``, ``"update"``, ``"delete"``, a comma-separated list or a list of them.
    segment_bytes : how much binlog is decoded at a time; bounds memory in ``iter_batches``.
    batch_rows : at most this many row images per batch (default 262 144; also at most
        4 194 304 cells, rows x columns held): a segment, or one rows event, that holds more
        is decoded in several batches, so that a batch's memory does not depend on how small
        the row images are (a 1-byte image decodes to ~70 bytes of Arrow).
    rolled_back : ``"exclude"`` (default) leaves out the changes that did not take effect:
        those of a transaction that ended in ROLLBACK, that were undone by ROLLBACK TO
        SAVEPOINT, or whose transaction has no end in the files (``_outcome`` rollback or
        incomplete); a DecodeWarning counts them. ``"keep"`` keeps them, marked by
        ``_outcome``. See "Transactions" in the README.
    non_transactional : ``db.table`` globs of tables on non-transactional engines (MyISAM,
        Aria, MEMORY): their changes always took effect, so ``rolled_back="exclude"`` keeps
        them whatever their transaction's outcome (only MySQL 5.1 and older wrote such rows
        inside a rolled-back transaction).
    gtids : keep only the changes of transactions in this GTID set: MySQL ``uuid:1-5:7``
        (comma-separated sets, tags as ``uuid:tag:1-3``) or MariaDB ``domain-server-seq``
        items, ``domain-server-first..last`` for a range; changes without a GTID are left out.
    queries : add the ``_query`` column: the SQL statement each change came from, when the
        server logged it (MySQL ``binlog_rows_query_log_events``, MariaDB
        ``binlog_annotate_row_events``).
    schema : names, signedness, charsets and ENUM/SET labels for binlogs without FULL
        metadata: a ``mysqldump --no-data`` file, a string of CREATE TABLE statements, or
        ``{"db.table": [{"name": ..., "type": ..., "unsigned": ..., "charset": ...,
        "enum": [...], "set": [...]}, ...]}`` (see :func:`vecbinlog.schema.load_schema`).
        Used for a TABLE_MAP whose column count and types it matches; the binlog's own
        metadata and the DDL in the log come first (README, "Names and types without FULL
        metadata").
    ddl : replay the CREATE/ALTER/RENAME/DROP statements of the log to name and type columns
        (default True).
    seek : walk only ``[start, stop)`` (``start`` in the first file, ``stop`` in the last)
        instead of whole files, so that a range of a large file costs only the range.
        ``start`` must then be where a transaction starts, as ``vecbinlog.splits.plan_splits``
        gives: the walk does not see the events before it (TABLE_MAPs included).
    ddl_state : the DDL state where the walk starts (``Split.ddl`` of
        :func:`vecbinlog.splits.plan_splits`), so that a range is named and typed as a read of
        the whole files is, though the DDL before it is not walked.
    threads : how many columns of a batch may be decoded at once (NumPy and Arrow release the
        GIL). Default: the CPUs this process may use, at most 4; 1 decodes in this thread only
        (the Spark data source uses 1: Spark runs a task per core).
    progress : ``True`` draws a progress bar of the binlog bytes done (``tqdm.auto``: a widget
        in notebooks, stderr elsewhere) while ``read_table``, ``read_all``, ``iter_batches``
        and ``iter_tables`` walk the files; a dict passes tqdm's own options (``{"file":
        sys.stdout, "desc": "orders"}``). Default ``False``: nothing is printed.

    Examples
    --------
    >>> import vecbinlog
    >>> with vecbinlog.open("data/sample/mariadb-bin.000001") as log:   # doctest: +SKIP
    ...     orders = log.read_table("shop.orders")
    >>> orders.num_rows   # doctest: +SKIP
    7
    """

    def __init__(
        self,
        paths: SourceLike | Iterable[SourceLike],
        *,
        strict: bool = False,
        verify_checksums: bool = True,
        signedness: dict[str, dict[str, bool]] | None = None,
        charsets: dict[str, dict[str, str]] | None = None,
        names: dict[str, Sequence[str]] | None = None,
        invalid_dates: str = "null",
        tables: str | Sequence[str] | None = None,
        start: int | None = None,
        stop: int | None = None,
        since: WhenLike | None = None,
        until: WhenLike | None = None,
        change_types: str | Iterable[str] | None = None,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        rolled_back: str = "exclude",
        non_transactional: str | Sequence[str] = (),
        queries: bool = False,
        gtids: str | None = None,
        seek: bool = False,
        schema: SchemaSource | None = None,
        ddl: bool = True,
        ddl_state: Any = None,
        threads: int | None = None,
        batch_rows: int = MAX_BATCH_IMAGES,
        progress: bool | Mapping[str, Any] = False,
    ) -> None:
        sources = binlog_sources(paths)
        self.paths = [source_name(src) for src in sources]
        if threads is None:
            threads = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 4)
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, not {threads!r}")
        self.threads = threads
        if not isinstance(batch_rows, int) or batch_rows < 2:
            raise ValueError(f"batch_rows must be an integer of at least 2, not {batch_rows!r}")
        self.batch_rows = batch_rows
        self.strict = strict
        self.segment_bytes = segment_bytes
        self._signedness = signedness or {}
        self._charsets = charsets or {}
        self._names = {k: tuple(v) for k, v in (names or {}).items()}
        if invalid_dates not in ("null", "string"):
            raise ValueError(f"invalid_dates must be 'null' or 'string', not {invalid_dates!r}")
        self._invalid_dates = invalid_dates
        self.filter = RowsFilter.make(tables, start, stop, since, until, change_types)
        if rolled_back not in ("exclude", "keep"):
            raise ValueError(f"rolled_back must be 'exclude' or 'keep', not {rolled_back!r}")
        self.rolled_back = rolled_back
        self.non_transactional = (non_transactional,) if isinstance(non_transactional, str) else tuple(non_transactional)
        self.queries = queries
        self._gtids = GtidSet(gtids) if gtids is not None else None
        self._seek = seek
        self._chain_warned: set[int] = set()
        self._user_schema = load_schema(schema)
        self._ddl = ddl
        self._ddl_state = ddl_state
        if not isinstance(progress, (bool, Mapping)):
            raise TypeError(f"progress: True, False or a dict of tqdm options, not {progress!r}")
        self.progress = progress
        self.files: list[BinlogFile] = []
        try:
            for src in sources:
                self.files.append(open_source(src, strict=strict, verify_checksums=verify_checksums))
        except BaseException:
            self.close()
            raise
        self._tables: dict[str, int] | None = None

    # -- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        for f in self.files:
            f.close()

    def __enter__(self) -> Binlog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<vecbinlog.Binlog {len(self.files)} file(s): {', '.join(f.name for f in self.files)}>"

    # -- options per table ---------------------------------------------------------------
    def _options(self, table: str, flavor: str) -> DecodeOptions:
        def pick(d: dict[str, dict[str, Any]]) -> dict[str, Any]:
            return {**d.get("*", {}), **d.get(table, {})}

        sign = {k: _unsigned_flag(k, v) for k, v in pick(self._signedness).items()}
        return DecodeOptions(
            signedness=sign, charsets=pick(self._charsets), names=self._names.get(table), flavor=flavor,
            invalid_dates=self._invalid_dates,
        )

    # -- walking ---------------------------------------------------------------------
    def _walk(self, transactions: bool = False, progress: ProgressBar | None = None) -> Iterator[_Step]:
        """Every segment of every file, unpacked, with its rows events and their layout ids.

        The DDL of the log is replayed on the way, so that each rows event knows the
        definition of its table as of that event, across segments and files.
        """
        schema = SchemaTracker(self._user_schema, track=self._ddl, catalog=self._ddl_state, wanted=self.filter.table)
        for f in self.files:
            maps = TableMaps(f)
            tracker = TransactionTracker(f, queries=self.queries) if transactions else None
            start, stop = MAGIC_LEN, None
            if self._seek:  # start/stop bound the walk itself, not only the rows events kept
                start = max(self.filter.start or 0, MAGIC_LEN) if f is self.files[0] else MAGIC_LEN
                stop = self.filter.stop if f is self.files[-1] else None
            rotate = None  # the last ROTATE_EVENT seen: (offset, body end)
            for seg in f.segments(self.segment_bytes, start, stop):
                unpacked = unpack_segment(f, seg.index)
                src, index = unpacked if unpacked is not None else (f, seg.index)
                txn = tracker.assign(src, index, seg.end) if tracker is not None else None
                rows_pos, layout = maps.resolve(index, src)
                generation = schema.scan(src, index)[rows_pos]
                rot = np.flatnonzero(seg.index.type_code == EventType.ROTATE_EVENT)
                if len(rot):
                    rotate = (int(seg.index.offset[rot[-1]]), int(seg.index.body_end[rot[-1]]))
                if progress is not None:
                    progress.at(f, seg.end)
                yield _Step(f, src, maps, index, rows_pos, layout, txn, schema, generation)
            self._check_chain(f, rotate)

    def _check_chain(self, f: BinlogFile, rotate: tuple[int, int] | None) -> None:
        """Warn when the file after ``f`` is not the one its last ROTATE_EVENT names."""
        k = self.files.index(f)
        if k + 1 >= len(self.files) or rotate is None or self._seek:
            return
        nxt = self.files[k + 1]
        try:
            name, _ = parse_rotate(f, rotate[0], rotate[1], f.formats[-1].post_header_len(EventType.ROTATE_EVENT))
        except BinlogError:
            return  # events() / info() show the event; the rows do not depend on it
        if name != nxt.name and k not in self._chain_warned and not nxt.name.startswith("<memory"):
            self._chain_warned.add(k)
            warnings.warn(
                f"{f.path} rotates to {name!r} but the next file given is {nxt.name!r}: files may be "
                "missing or out of order (transactions and table ids do not cross files, so each file "
                "still decodes alone)",
                BinlogSetWarning, stacklevel=4,
            )

    @property
    def tables(self) -> list[str]:
        """Every ``db.table`` that has rows events, in order of first appearance."""
        if self._tables is None:
            counts: dict[str, int] = {}
            for step in self._walk():
                for lid in step.layout.tolist():  # in log order: first rows event first
                    name = step.maps.layouts[lid].name
                    if self.filter.table(name):
                        counts[name] = counts.get(name, 0) + 1
            self._tables = counts
        return list(self._tables)

    def _check_undecoded(self, step: _Step, wanted) -> None:
        f, index = step.file, step.index
        bad = np.isin(index.type_code, _UNDECODED_ROWS)
        bad &= self.filter.events(index, first=f is self.files[0], last=f is self.files[-1])
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

    def _batches(self, wanted, desc: str = "") -> Iterator[tuple[str, pa.RecordBatch]]:
        """Decoded batches of the tables ``wanted(name)`` accepts, in log order per table.

        With ``threads`` > 1 each batch is decoded in the background while the next one is
        placed (placement is many small NumPy steps, decoding a few large ones: on two cores
        they overlap); batches still come, and fail, in log order."""
        pending: _Pending | None = None  # the batch being decoded in the background
        bar = ProgressBar(self.files, desc, self.progress) if self.progress is not False else None
        try:
            for job in self._batch_jobs(wanted, bar):
                background = self.threads > 1 and job.cells >= THREADED_CELLS
                if background:
                    job.start()
                if pending is not None:
                    done, pending = pending, None
                    yield done.result()
                    del done
                if background:
                    pending = job
                else:
                    yield job.result()
                job = None
            if pending is not None:
                done, pending = pending, None
                yield done.result()
            if bar is not None:
                bar.done()
        except GeneratorExit:  # the caller stopped reading: the batch in the background is not wanted
            if pending is not None and pending.future is not None:
                pending.future.cancel()
            raise
        except BaseException:
            if pending is not None:  # it comes first in the log: its error, or its batch, first
                done, pending = pending, None
                yield done.result()
            raise
        finally:
            if bar is not None:
                bar.close()

    def _batch_jobs(self, wanted, bar: ProgressBar | None = None) -> Iterator[_Pending]:
        """The batches of :meth:`_batches`, placed, each with what decodes it."""
        dropped: Counter[str] = Counter()
        versions = _SchemaVersions()
        for step in self._walk(transactions=True, progress=bar):
            f, src, maps, index = step.file, step.src, step.maps, step.index
            rows_pos, layout = step.rows_pos, step.layout
            self._check_undecoded(step, wanted)
            if len(rows_pos) == 0:
                continue
            # layout id -> table name, kept as Python strings (NumPy would drop trailing NULs)
            name_of = [tm.name for tm in maps.layouts]
            sel = np.flatnonzero(np.array([wanted(n) and self.filter.table(n) for n in name_of], bool)[layout])
            if not len(sel):
                continue
            # The effective layout of each rows event (its TABLE_MAP with what the DDL as of that
            # event, or schema=, says), and its _schema_version, are found before the row filters
            # so that the versions do not depend on them.
            code, resolved = self._effective(step, sel)
            # table of each rows event as an int (names compared as Python strings: NumPy would
            # drop a name's trailing NULs)
            tables = list(dict.fromkeys(name_of))
            table_of_layout = np.array([tables.index(n) for n in name_of], np.int64)
            version = versions.assign(tables, table_of_layout[layout[sel]], code, resolved)
            keep = self.filter.events(index.take(rows_pos[sel]), first=f is self.files[0], last=f is self.files[-1])
            if not keep.any():
                continue
            sel, code, version = sel[keep], code[keep], version[keep]
            rows_pos, layout = rows_pos[sel], layout[sel]
            src.verify_checksums_of(index.take(rows_pos))
            src.verify_checksums_of(index.take(index.type_code == EventType.TABLE_MAP_EVENT))
            gtid_ok = None
            # One batch per run of consecutive events of the same effective layout, per table, in log order.
            table = table_of_layout[layout]
            runs: list[tuple[str, np.ndarray, TableMap, int]] = []  # (table, rows events, layout, version)
            for t in dict.fromkeys(table.tolist()):
                mine = table == t
                pos, run_code, run_version = rows_pos[mine], code[mine], version[mine]
                cuts = np.flatnonzero((np.diff(run_code) != 0) | (np.diff(run_version) != 0)) + 1
                for run_pos, c, v in zip(np.split(pos, cuts), np.split(run_code, cuts), np.split(run_version, cuts)):
                    runs.append((tables[t], run_pos, resolved[int(c[0])], int(v[0])))
            for name, run_pos, tm, v in runs:
                effective = self.rolled_back == "keep" or self._non_transactional(name)
                for images in place_images(src, maps, index.take(run_pos), tm, max_images=self.batch_rows):
                    txn = self._row_transactions(step.txn, run_pos, images.event)
                    keep_rows = np.ones(len(images), bool)
                    if not effective:
                        took_effect = ~np.isin(txn.outcome(), _NOT_TAKEN_EFFECT)
                        dropped[name] += int((~took_effect).sum())
                        keep_rows &= took_effect
                    if self._gtids is not None:
                        if gtid_ok is None:  # per transaction of the segment, once
                            gtid_ok = self._gtids.contains(step.txn.gtid)
                        keep_rows &= (txn.txn >= 0) & gtid_ok[np.maximum(txn.txn, 0)] if len(gtid_ok) else False
                    if not keep_rows.all():
                        images = images.take(keep_rows)
                        txn = RowTransactions(txn.context, txn.txn[keep_rows], txn.undone[keep_rows], txn.query[keep_rows])
                    job = _Pending(f.path, name, len(images) * len(tm.columns), functools.partial(
                        build_batch, images, self._options(name, f.formats[0].flavor), f.name, txn, self.queries,
                        schema_version=v, threads=self.threads))
                    del images, txn  # held by the job only, which lets go of them once decoded
                    yield job
                    del job
        for name, n in dropped.items():
            if not n:
                continue
            warnings.warn(
                f"{name}: {n} row images left out: their transaction rolled back (or was undone by ROLLBACK TO "
                "SAVEPOINT, or has no end in the files), so they did not take effect; rolled_back='keep' keeps "
                "them, marked by _outcome",
                DecodeWarning, stacklevel=4,
            )

    def _effective(self, step: _Step, sel: np.ndarray) -> tuple[np.ndarray, list[TableMap]]:
        """The effective layout of rows events ``sel`` of a step: a code per event (int64) and
        the TABLE_MAP of each code, completed by the table's definition at that event."""
        lay, gen = step.layout[sel], step.generation[sel]
        pairs, first, inverse = np.unique(np.stack([lay, gen], axis=1), axis=0, return_index=True, return_inverse=True)
        flavor = step.file.formats[0].flavor
        codes: dict[tuple[int, int], int] = {}
        resolved: list[TableMap] = []
        of_pair = np.zeros(len(pairs), np.int64)
        for k, ((lid, g), i) in enumerate(zip(pairs.tolist(), first.tolist())):
            tm = step.maps.layouts[lid]
            ver, definition = step.schema.tracked(tm.name, g)
            if (lid, ver) not in codes:
                where = f"{step.file.path}: offset {int(step.index.pos[step.rows_pos[sel[i]]])}"
                codes[(lid, ver)] = len(resolved)
                resolved.append(step.schema.resolve(tm, definition, flavor, where))
            of_pair[k] = codes[(lid, ver)]
        return of_pair[inverse.ravel()], resolved

    def _non_transactional(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pat) for pat in self.non_transactional)

    @staticmethod
    def _row_transactions(ctx: TxnContext | None, run_pos: np.ndarray, event: np.ndarray) -> RowTransactions | None:
        if ctx is None:
            return None
        ev = run_pos[event]
        return RowTransactions(ctx, ctx.txn[ev], ctx.undone[ev], ctx.query[ev])

    def _paths_by_name(self) -> dict[str, str]:
        return {f.name: f.path for f in self.files}

    # -- public reads ----------------------------------------------------------------
    def iter_batches(self, table: str) -> Iterator[pa.RecordBatch]:
        """The change log of ``table`` as record batches, in log order, in bounded memory.

        Each batch holds the rows of about ``segment_bytes`` of binlog (32 MB by default), and
        at most ``batch_rows`` rows.
        """
        found = False
        for item in self._batches(lambda n: n == table, table):
            found = True
            yield item[1]
            del item  # not held while the next batch is made
        if not found and table not in self.tables:
            raise self._table_not_found(table)

    def iter_tables(self) -> Iterator[tuple[str, pa.RecordBatch]]:
        """Every table's change log in one pass: ``(db.table, record batch)`` in log order per
        table, one segment (``segment_bytes``) decoded at a time. Batches of different tables
        come interleaved; a table's batches come in its log order."""
        yield from self._batches(lambda n: True, "every table")

    def read_table(self, table: str) -> pa.Table:
        """The change log of ``table`` (``"db.table"``) as one Arrow table, in log order.

        Raises :class:`~vecbinlog.TableNotFoundError` (a ``KeyError``) when the files have no
        rows events of that table (or the ``tables=`` filter leaves it out).
        """
        batches = list(self.iter_batches(table))
        return _concat(batches, table, self._paths_by_name())

    def _table_not_found(self, table: str) -> TableNotFoundError:
        """The error for a table without rows events (that the filters keep)."""
        why = ""
        if self.filter.tables is not None and not self.filter.table(table):
            why = f" that tables={list(self.filter.tables)} keeps"
        return TableNotFoundError(
            f"{table!r} has no rows events in {', '.join(self.paths)}{why}; tables: {', '.join(self.tables) or 'none'}",
            table=table, tables=self.tables)

    def read_all(self) -> dict[str, pa.Table]:
        """Every table's change log: ``{"db.table": pyarrow.Table}``."""
        out: dict[str, list[pa.RecordBatch]] = {}
        for name, batch in self.iter_tables():
            out.setdefault(name, []).append(batch)
        return {name: _concat(b, name, self._paths_by_name()) for name, b in out.items()}

    def snapshot(
        self, table: str, until: int | tuple[str, int] | datetime | str | None = None,
        key: Sequence[str] | None = None,
    ) -> pa.Table:
        """The rows of ``table`` as of a point in the log, by replaying its change log by key.

        Parameters
        ----------
        until : where to stop (the changes before it count): None for the end of the files;
            a byte offset in the last file, or ``(file name, offset)``; a datetime (rows events
            before it); or a GTID text (``uuid:N``, ``uuid:tag:N``, ``d-s-n``): every
            transaction up to and including that one.
        key : the key columns; by default the primary key the binlog gives (TABLE_MAP
            SIMPLE_PRIMARY_KEY / PRIMARY_KEY_WITH_PREFIX, ``binlog_row_metadata=FULL``).

        Changes that did not take effect are not replayed (``rolled_back``); the table's own
        columns come back, one row per key, in the log order of each key's last change. Needs
        FULL row images. See :mod:`vecbinlog.snapshot`.
        """
        changes = self.read_table(table)
        if key is None:
            pk = self._primary_key(table)
            if not pk:
                raise ValueError(
                    f"{table}: neither the binlog (binlog_row_metadata=FULL), its DDL nor schema= give "
                    "a primary key; name the key columns: snapshot(table, key=[...])"
                )
            key = [changes.column_names[c] for c in pk]
        if until is not None and changes.num_rows:
            changes = changes.filter(self._before(changes, until))
        return replay(changes, list(key), table)

    def _primary_key(self, table: str) -> tuple[int, ...] | None:
        """The primary key (column indexes) of the table's last layout: from its TABLE_MAP, else
        from the DDL in the log or schema= (see _effective)."""
        pk = None
        for step in self._walk():
            mine = [k for k, lid in enumerate(step.layout.tolist()) if step.maps.layouts[lid].name == table]
            if mine:
                _, (tm,) = self._effective(step, np.array(mine[-1:]))
                pk = tm.primary_key
        return pk

    def _before(self, changes: pa.Table, until) -> pa.Array:
        """Mask of the changes before ``until`` (see snapshot())."""
        names = [f.name for f in self.files]
        file_no = pc.index_in(changes.column("_log_file").cast(pa.string()), value_set=pa.array(names))
        if isinstance(until, datetime):
            when = until if until.tzinfo else until.replace(tzinfo=timezone.utc)
            return pc.less(changes.column("_commit_timestamp"), pa.scalar(when, changes.schema.field("_commit_timestamp").type))
        if isinstance(until, (int, tuple)):
            name, pos = (names[-1], until) if isinstance(until, int) else until
            if name not in names:
                raise ValueError(f"until: {name!r} is not one of the files {names}")
            f = names.index(name)
            return pc.or_(pc.less(file_no, f), pc.and_(pc.equal(file_no, f), pc.less(changes.column("_log_pos"), pos)))
        if isinstance(until, str):
            f, pos = self._gtid_position(until)
            tpos = changes.column("_transaction_pos")
            return pc.or_(pc.less(file_no, f), pc.and_(pc.equal(file_no, f), pc.less_equal(tpos, pos)))
        raise TypeError(f"until: an offset, (file, offset), a datetime or a GTID, not {until!r}")

    def _gtid_position(self, gtid: str) -> tuple[int, int]:
        """(file number, offset) of the GTID event of ``gtid``."""
        for k, f in enumerate(self.files):
            for seg in f.segments(self.segment_bytes):
                sel = np.flatnonzero(np.isin(seg.index.type_code, _GTID_CODES))
                if len(sel):
                    hit = pc.index(gtid_texts(f, seg.index, sel), gtid).as_py()
                    if hit >= 0:
                        return k, int(seg.index.offset[sel[hit]])
        raise ValueError(f"until: GTID {gtid!r} is not in the files {[f.name for f in self.files]}")

    def table_maps(self, table: str) -> list[TableMap]:
        """Every distinct TABLE_MAP layout of ``table`` used by its rows events, in log order.

        A :class:`~vecbinlog.table_map.TableMap` has the columns' types, field metadata,
        nullability and whatever optional metadata the binlog carries (names, signedness,
        collations, ENUM/SET labels, primary key, geometry types, visibility, vector sizes).
        """
        out: list[TableMap] = []
        for step in self._walk():
            for lid in dict.fromkeys(step.layout.tolist()):
                tm = step.maps.layouts[lid]
                if tm.name == table and tm not in out:
                    out.append(tm)
        return out

    def schema(self, table: str) -> pa.Schema:
        """The Arrow schema of ``table`` as its first TABLE_MAP declares it (with the names and
        types the DDL in the log, or ``schema=``, gives it there)."""
        for step in self._walk():
            for k, lid in enumerate(step.layout.tolist()):
                if step.maps.layouts[lid].name == table:
                    _, (tm,) = self._effective(step, np.array([k]))
                    return table_schema(tm, self._options(table, step.file.formats[0].flavor), self.queries)
        raise self._table_not_found(table)

    def verify(self) -> int:
        """Check the CRC32 of every event of every file; returns how many were checked.

        Raises :class:`~vecbinlog.ChecksumError` at the first mismatch. Returns 0 when the
        files have no checksums or ``verify_checksums=False``.
        """
        checked = 0
        for f in self.files:
            if not f.verify_checksums:
                continue
            for seg in f.segments(self.segment_bytes):
                f.verify_checksums_of(seg.index)
                has_crc = np.array([fmt.has_checksum for fmt in f.formats], bool)[seg.index.fmt]
                checked += int(has_crc.sum())
        return checked

    def events(self) -> pa.Table:
        """One row per event, for every file: where it is, what it is.

        Columns: file, pos, type_code, type, size, timestamp, server_id, end_log_pos, flags,
        and info, the text ``SHOW BINLOG EVENTS`` gives (see :mod:`vecbinlog.events`; null for
        the types it does not describe: vendor types, LOAD DATA events, INCIDENT...).
        """
        parts = []
        for k, f in enumerate(self.files):
            idx = EventIndex.concat([s.index for s in f.segments(self.segment_bytes)])
            n = len(idx)
            codes = np.unique(idx.type_code)
            names = [event_type_name(int(c)) for c in codes]
            parts.append(
                pa.table(
                    {
                        "file": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([f.name])),
                        "pos": pa.array(idx.offset, pa.int64()),
                        "type_code": pa.array(idx.type_code, pa.uint8()),
                        "type": pa.DictionaryArray.from_arrays(
                            pa.array(np.searchsorted(codes, idx.type_code).astype(np.int32)), pa.array(names, pa.string())
                        ),
                        "size": pa.array(idx.event_size, pa.uint32()),
                        "timestamp": pa.array(idx.timestamp.astype(np.int64), pa.timestamp("s", tz="UTC")),
                        "server_id": pa.array(idx.server_id, pa.uint32()),
                        "end_log_pos": pa.array(idx.log_pos, pa.uint32()),
                        "flags": pa.array(idx.flags, pa.uint16()),
                        "info": pa.array(describe_events(f, idx), pa.string()),
                    }
                )
            )
        return pa.concat_tables(parts, promote_options="permissive").unify_dictionaries()

    def info(self, rows: bool = False) -> dict[str, Any]:
        """What the files hold: versions, checksum, time range, events by type, tables.

        Every event is accounted for: ``events`` counts them all by type, and
        ``events_not_decoded`` names those whose content this version does not use
        (``"skipped"``: GTIDs, statement-era events, vendor types...; ``"unsupported"``:
        rows this version cannot read and refuses to drop, see README). With ``rows=True``
        the row images of every table are located (not decoded) and counted by change type
        in ``row_images_by_table``.
        """
        files = []
        for f in self.files:
            counts: Counter[str] = Counter()
            inner: Counter[str] = Counter()
            tables: Counter[str] = Counter()
            images: dict[str, Counter[str]] = {}
            gtids = GtidSummary()
            previous: str | None = None
            first = last = None
            maps = TableMaps(f)
            for seg in f.segments(self.segment_bytes):
                codes, cnt = np.unique(seg.index.type_code, return_counts=True)
                for c, k in zip(codes.tolist(), cnt.tolist()):
                    counts[event_type_name(c)] += k
                ts = seg.index.timestamp[seg.index.timestamp > 0]
                if len(ts):
                    first = int(ts.min()) if first is None else min(first, int(ts.min()))
                    last = int(ts.max()) if last is None else max(last, int(ts.max()))
                unpacked = unpack_segment(f, seg.index)
                src, index = unpacked if unpacked is not None else (f, seg.index)
                if unpacked is not None:
                    codes, cnt = np.unique(index.type_code[index.inner >= 0], return_counts=True)
                    for c, k in zip(codes.tolist(), cnt.tolist()):
                        inner[event_type_name(c)] += k
                gtids.add(gtid_texts(src, index, np.flatnonzero(np.isin(index.type_code, _GTID_CODES))))
                if previous is None:
                    prev = np.flatnonzero(np.isin(index.type_code, _PREVIOUS_GTID_CODES))
                    if len(prev):
                        i = int(prev[0])
                        previous = previous_gtids(src, int(index.offset[i]), int(index.body_end[i]), int(index.type_code[i]))
                rows_pos, layout = maps.resolve(index, src)
                for lid in layout.tolist():
                    tables[maps.layouts[lid].name] += 1
                if rows:
                    for lid in dict.fromkeys(layout.tolist()):
                        tm = maps.layouts[lid]
                        for located in place_images(src, maps, index.take(rows_pos[layout == lid]), tm,
                                                    max_images=self.batch_rows):
                            kinds, n = np.unique(located.change, return_counts=True)
                            for k, c in zip(kinds.tolist(), n.tolist()):
                                images.setdefault(tm.name, Counter())[CHANGE_TYPES[k]] += c
            fde = f.formats[0]
            stop = f.walk_stop
            files.append(
                {
                    "path": f.path,
                    "size": f.size,
                    "server_version": fde.server_version,
                    "binlog_version": fde.binlog_version,
                    "checksum": fde.checksum_name,
                    "format_descriptions": len(f.formats),
                    "first_timestamp": first,
                    "last_timestamp": last,
                    "events": dict(sorted(counts.items())),
                    "events_in_payloads": dict(sorted(inner.items())),
                    "rows_events_by_table": dict(tables),
                    "events_not_decoded": _not_decoded(counts),
                    "stopped_at": None if stop is None else {"offset": stop.offset, "reason": stop.reason},
                    "gtids": {
                        "previous": previous,
                        "first": gtids.first,
                        "last": gtids.last,
                        "count": gtids.count,
                        "set": gtids.gtid_set(),
                    },
                }
            )
            if rows:
                files[-1]["row_images_by_table"] = {t: dict(c) for t, c in images.items()}
        return {"files": files}


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


_BUILDER: ThreadPoolExecutor | None = None
_BUILDER_PID = 0


def _builder() -> ThreadPoolExecutor:
    """The thread that decodes batches in the background (a forked child makes its own)."""
    global _BUILDER, _BUILDER_PID
    if _BUILDER is None or _BUILDER_PID != os.getpid():
        _BUILDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vecbinlog-batch")
        _BUILDER_PID = os.getpid()
    return _BUILDER


class _Pending:
    """A batch of ``table`` to decode: here (:meth:`result`), or in the background (:meth:`start`)."""

    def __init__(self, path: str, table: str, cells: int, make: Callable[[], tuple[pa.RecordBatch, list[str]]]):
        self.path, self.table, self.cells = path, table, cells
        self.make: Callable[[], tuple[pa.RecordBatch, list[str]]] | None = make
        self.future: Future | None = None

    def start(self) -> None:
        self.future = _builder().submit(self.make)

    def result(self) -> tuple[str, pa.RecordBatch]:
        """(table, batch), its decoding warnings issued; the row images are let go."""
        made = self.future.result() if self.future is not None else self.make()
        self.make = self.future = None
        batch, notes = made
        del made
        for note in notes:
            warnings.warn(f"{self.path}: {self.table}: {note}", DecodeWarning, stacklevel=4)
        return self.table, batch


def _concat(batches: list[pa.RecordBatch], table: str, paths: dict[str, str]) -> pa.Table:
    """One table of batches whose layouts may differ (an ALTER TABLE within the log).

    Columns are matched by name: those of the last layout first, in its order, then those
    only earlier layouts had (dropped, or renamed away), then the metadata columns. A row
    written before a column existed (or after it was dropped) has a null there. A column
    whose type changed is widened to a type that holds every value of both exactly
    (:func:`widen_type`, or binary for a text column some of whose batches fell back to
    binary: :func:`_own_bytes_type`); when there is none, ``UnsupportedError`` names the column.
    """
    if not batches:
        return pa.table({})
    schemas = {b.schema.remove_metadata() for b in batches}
    if len(schemas) == 1:
        return pa.Table.from_batches(batches)
    meta = [f.name for f in batches[-1].schema if f.name in _METADATA_NAMES]
    for b in batches:
        meta += [f.name for f in b.schema if f.name in _METADATA_NAMES and f.name not in meta]
    meta.sort(key=_METADATA_ORDER.index)
    data: list[str] = []
    for b in reversed(batches):
        data += [f.name for f in b.schema if f.name not in _METADATA_NAMES and f.name not in data]
    fields: dict[str, pa.Field] = {}
    for b in batches:
        for f in b.schema:
            prev = fields.get(f.name)
            if prev is None or prev.type == f.type:
                fields[f.name] = f if prev is None else prev.with_metadata(f.metadata)
                continue
            wide = widen_type(prev.type, f.type) or _own_bytes_type(prev, f)
            if wide is None:
                raise UnsupportedError(
                    f"{table}: column {f.name!r} changes type within the log, from {prev.type} to {f.type} "
                    f"(_schema_version {b.column('_schema_version')[0].as_py()}), and no Arrow type holds both "
                    "exactly; read it with iter_batches() (one layout per batch)",
                    path=paths.get(b.column("_log_file")[0].as_py()), offset=b.column("_log_pos")[0].as_py(),
                    event_type="TABLE_MAP_EVENT",
                )
            fields[f.name] = pa.field(f.name, wide, nullable=True, metadata=f.metadata)
    schema = pa.schema([fields[n] for n in data + meta], metadata=batches[-1].schema.metadata)
    out = []
    for b in batches:
        cols = []
        for field in schema:
            i = b.schema.get_field_index(field.name)
            if i < 0:
                cols.append(pa.nulls(b.num_rows, field.type))
            else:
                col = b.column(i)
                cols.append(col if col.type == field.type else col.cast(field.type, safe=True))
        out.append(pa.RecordBatch.from_arrays(cols, schema=schema))
    return pa.Table.from_batches(out, schema=schema)


#: Metadata columns, in their order (every other column is a column of the table).
_METADATA_ORDER = [f.name for f in METADATA_FIELDS] + [JSON_DIFFS_FIELD.name, QUERY_FIELD.name]
_METADATA_NAMES = frozenset(_METADATA_ORDER)
_INT_BITS = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64,
             pa.uint8(): 8, pa.uint16(): 16, pa.uint32(): 32, pa.uint64(): 64}
#: decimal digits an integer type needs
_INT_DIGITS = {8: 3, 16: 5, 32: 10, 64: 20}


def widen_type(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    """The narrowest Arrow type that holds every value of ``a`` and of ``b`` exactly, or None.

    Integers widen to a wider integer (signed when either is: int64 and uint64 have none);
    integers of up to 16 bits and float32 to float32, up to 32 bits and floats to float64;
    decimals (and integers with decimals) to a decimal with enough integer and fraction
    digits; string/binary to their large forms. Anything else (text and numbers, dates and
    timestamps, ENUM labels and their indexes...) has no exact common type.
    """
    if a == b:
        return a
    if pa.types.is_null(a) or pa.types.is_null(b):
        return b if pa.types.is_null(a) else a
    ints = pa.types.is_integer
    if ints(a) and ints(b):
        sa, sb = pa.types.is_signed_integer(a), pa.types.is_signed_integer(b)
        bits = max(_INT_BITS[a] + (sb and not sa), _INT_BITS[b] + (sa and not sb))
        if sa == sb:
            bits = max(_INT_BITS[a], _INT_BITS[b])
        for width in (8, 16, 32, 64):
            if width >= bits:
                return getattr(pa, f"{'int' if sa or sb else 'uint'}{width}")()
        return None
    if pa.types.is_floating(a) and pa.types.is_floating(b):
        return pa.float64() if pa.float64() in (a, b) else None
    for x, y in ((a, b), (b, a)):
        if ints(x) and pa.types.is_floating(y):
            if _INT_BITS[x] <= 16 and y == pa.float32():
                return pa.float32()
            return pa.float64() if _INT_BITS[x] <= 32 else None
        if ints(x) and pa.types.is_decimal(y):
            return _decimal(_INT_DIGITS[_INT_BITS[x]], 0, y.precision - y.scale, y.scale)
    if pa.types.is_decimal(a) and pa.types.is_decimal(b):
        return _decimal(a.precision - a.scale, a.scale, b.precision - b.scale, b.scale)
    for small, large in ((pa.string(), pa.large_string()), (pa.binary(), pa.large_binary())):
        if {a, b} == {small, large}:
            return large
    return None


#: charsets whose text is returned as the column's own bytes (checked, not transcoded)
_OWN_BYTES_CHARSETS = frozenset(cs.encode() for cs in UTF8_CHARSETS | {"ascii"})


def _own_bytes_type(a: pa.Field, b: pa.Field) -> pa.DataType | None:
    """binary (or large_binary) for string and binary batches of one UTF-8 or ascii column.

    A text batch holding bytes that are not valid in its charset comes back as binary, bytes
    unchanged (decoders/strings.py); the column's other batches are strings whose bytes are
    the column's own bytes too, so binary holds every value of both exactly, and the column
    reads the same whether its rows came in one batch or in several (``segment_bytes`` and
    ``batch_rows`` only bound memory). Text transcoded from another charset has lost its
    bytes: None there."""
    types = {a.type, b.type}
    if not types <= {pa.string(), pa.large_string(), pa.binary(), pa.large_binary()}:
        return None
    if not (types & {pa.string(), pa.large_string()} and types & {pa.binary(), pa.large_binary()}):
        return None
    if any((f.metadata or {}).get(b"mysql_charset") not in _OWN_BYTES_CHARSETS for f in (a, b)):
        return None
    return pa.large_binary() if types & {pa.large_string(), pa.large_binary()} else pa.binary()


def _decimal(int_a: int, scale_a: int, int_b: int, scale_b: int) -> pa.DataType | None:
    scale = max(scale_a, scale_b)
    precision = max(int_a, int_b) + scale
    if precision <= 38:
        return pa.decimal128(precision, scale)
    return pa.decimal256(precision, scale) if precision <= 76 else None


class _SchemaVersions:
    """``_schema_version`` of each table: 0 for the first effective layout met, +1 at every change."""

    def __init__(self) -> None:
        self.last: dict[str, tuple[TableMap, int]] = {}

    def assign(self, tables: list[str], table: np.ndarray, code: np.ndarray, resolved: list[TableMap]) -> np.ndarray:
        """The version (int32) of rows events in log order, of tables ``tables[table]`` and
        effective layouts ``code``."""
        out = np.zeros(len(code), np.int32)
        for t in dict.fromkeys(table.tolist()):
            name = tables[t]
            mine = np.flatnonzero(table == t)
            c = code[mine]
            starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])  # runs of one layout: few
            ordinals = []
            for s in starts.tolist():
                tm = resolved[int(c[s])]
                prev = self.last.get(name)
                ordinal = 0 if prev is None else prev[1] + (prev[0] != tm)
                self.last[name] = (tm, ordinal)
                ordinals.append(ordinal)
            out[mine] = np.repeat(np.array(ordinals, np.int32), np.diff(np.r_[starts, len(c)]))
        return out


#: ``vecbinlog.open(paths, **options)`` is the :class:`Binlog` constructor.
open = Binlog


def read_table(paths: PathLike | Sequence[PathLike], table: str, **options: Any) -> pa.Table:
    """``open(paths, **options).read_table(table)`` and close the files."""
    with open(paths, **options) as log:
        return log.read_table(table)


def read_pandas(paths: PathLike | Sequence[PathLike], table: str, **options: Any):
    """The change log of ``table`` as a pandas DataFrame with Arrow-backed columns.

    Columns use ``pandas.ArrowDtype`` so that nothing is lost on the way: unsigned and
    64-bit integers with NULLs stay exact integers, text stays text, timestamps keep UTC.
    """
    import pandas as pd

    return read_table(paths, table, **options).to_pandas(types_mapper=pd.ArrowDtype)
