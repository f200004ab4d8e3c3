"""The public entry point: :func:`open` a binlog (or several, in order) and read tables from it."""

from __future__ import annotations

import fnmatch
import functools
import os
import warnings
from collections import Counter
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrow import MARIADB_OLD_TEMPORAL, THREADED_CELLS, RowTransactions, build_batch, table_schema
from .compression import COMPRESSED_EVENTS, unpack_segment
from .constants import ROWS_EVENTS, UNDECODED_ROWS_EVENTS, EventType, event_type_name
from .decoders import DecodeOptions
from .errors import BinlogError, BinlogSetWarning, MalformedEventError, TableNotFoundError, UnsupportedError
from .events import describe_events, parse_rotate
from .file import DEFAULT_SEGMENT_BYTES, BinlogFile
from .gtid import GTID_EVENTS, GtidSet, GtidSummary, gtid_texts, previous_gtids
from .index import EventIndex
from .layout import MAGIC_LEN
from .logset import InMemory, binlog_sources, source_name
from .options import ProgressBar, WhenLike, byte_offset, change_kinds, epoch
from .pools import pool
from .sources import MemorySource, is_uri, redact
from .rows import CHANGE_TYPES, MAX_BATCH_IMAGES, TableMaps, place_images
from .snapshot import replay
from .schema import SchemaSource, SchemaTracker, load_schema
from .table_map import TableMap
from .tableplan import TablePlan, widen_type
from .transactions import INCOMPLETE, ROLLBACK, TransactionTracker, TxnContext

__all__ = ["Binlog", "RowsFilter", "open", "read_table", "read_pandas", "DecodeWarning", "LayoutState",
           "TableLayouts", "widen_type"]

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


class DecodeWarning(UserWarning):
    """A value could not be typed as declared (e.g. text invalid in its charset) and was kept as bytes."""


class Binlog:
    """One binlog file or an ordered list of them, read as one change log.

    ``vecbinlog.open`` is this class. Files are memory-mapped; the object is a context
    manager that unmaps them.

    Parameters
    ----------
    paths : a binlog file (str or ``os.PathLike``), a list of them in log order, a glob
        (``"archive/mysql-bin.*"``, sorted by number) or the server's ``mysql-bin.index``; local
        paths or URIs (``s3://bucket/binlogs/mysql-bin.*?region=...``, ``gs://``, ``abfs://``,
        ``hdfs://``, ``file://``: see :mod:`vecbinlog.sources`); compressed files (``.gz``,
        ``.zst``, ``.bz2``, ``.lz4``) are decompressed as they are read. Or the binlog itself:
        ``bytes``/``bytearray``/``memoryview``, or a binary file object (``open(..., "rb")``,
        ``io.BytesIO``), read whole into memory (its ``_log_file`` is the file object's name,
        else ``<memory 1>``...). Table ids are per file; a file's last ROTATE_EVENT should name
        the next file (a warning says when not). Anything else is a ``TypeError`` that says
        what is accepted.
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
    invalid_dates : zero, partly-zero and impossible dates ('0000-00-00', '2020-00-15', and
        '2001-02-29' under ALLOW_INVALID_DATES), which MySQL allows and Arrow cannot hold:
        ``"null"`` (null, with a DecodeWarning counting them) or
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
    ddl : replay the CREATE/ALTER/RENAME/DROP/TRUNCATE statements of the log to name and type
        columns and count ``_incarnation`` (default True).
    seek : walk only ``[start, stop)`` (``start`` in the first file, ``stop`` in the last)
        instead of whole files, so that a range of a large file costs only the range.
        ``start`` must then be where a transaction starts, as ``vecbinlog.splits.plan_splits``
        gives: the walk does not see the events before it (TABLE_MAPs included).
    ddl_state : the DDL state where the walk starts (``Split.ddl`` of
        :func:`vecbinlog.splits.plan_splits`), so that a range is named and typed as a read of
        the whole files is, though the DDL before it is not walked.
    layout_state : where each table's layouts stand where the walk starts (``Split.layouts``,
        from :meth:`layouts`), so that a range numbers ``_schema_version`` and
        ``_incarnation`` as a read of the whole files does.
    filesystem : a ``pyarrow.fs.FileSystem`` (or an fsspec filesystem) that ``paths`` are
        paths in (``"bucket/binlogs/mysql-bin.000042"``), as ``pyarrow.dataset`` takes it.
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
        layout_state: dict[str, LayoutState] | None = None,
        threads: int | None = None,
        batch_rows: int = MAX_BATCH_IMAGES,
        filesystem: Any = None,
        progress: bool | Mapping[str, Any] = False,
    ) -> None:
        self.filesystem = filesystem
        sources = binlog_sources(paths, filesystem)
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
        self._layout_state = layout_state
        if not isinstance(progress, (bool, Mapping)):
            raise TypeError(f"progress: True, False or a dict of tqdm options, not {progress!r}")
        self.progress = progress
        self.files: list[BinlogFile] = []
        try:
            for src in sources:
                self.files.append(BinlogFile(
                    MemorySource(src.data, src.name) if isinstance(src, InMemory) else src,
                    strict=strict, verify_checksums=verify_checksums, filesystem=filesystem))
        except BaseException:
            self.close()
            raise
        self._tables: dict[str, int] | None = None
        self._schemas: dict[str, pa.Schema] | None = None

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
    def _walk(self, transactions: bool = False, ddl_states: list | None = None,
              progress: ProgressBar | None = None) -> Iterator[_Step]:
        """Every segment of every file, unpacked, with its rows events and their layout ids.

        The DDL of the log is replayed on the way, so that each rows event knows the
        definition of its table as of that event, across segments and files (and, given a
        list ``ddl_states``, the DDL state after each statement is appended to it).
        """
        schema = SchemaTracker(self._user_schema, track=self._ddl, catalog=self._ddl_state, wanted=self.filter.table)
        schema.states = ddl_states
        for f in self.files:
            maps = TableMaps(f)
            tracker = TransactionTracker(f, queries=self.queries) if transactions else None
            start, stop = MAGIC_LEN, None
            if self._seek:  # start/stop bound the walk itself, not only the rows events kept
                start = max(self.filter.start or 0, MAGIC_LEN) if f is self.files[0] else MAGIC_LEN
                stop = self.filter.stop if f is self.files[-1] else None
            rotate = None  # the file the last ROTATE_EVENT names
            for seg in f.segments(self.segment_bytes, start, stop):
                unpacked = unpack_segment(seg.src, seg.index)
                src, index = unpacked if unpacked is not None else (seg.src, seg.index)
                txn = tracker.assign(src, index, seg.end) if tracker is not None else None
                rows_pos, layout = maps.resolve(index, src)
                generation = schema.scan(src, index)[rows_pos]
                rot = np.flatnonzero(seg.index.type_code == EventType.ROTATE_EVENT)
                if len(rot):
                    rotate = self._rotates_to(seg, int(rot[-1]))
                if progress is not None:
                    progress.at(f, seg.end)
                yield _Step(f, src, maps, index, rows_pos, layout, txn, schema, generation)
            self._check_chain(f, rotate)

    @staticmethod
    def _rotates_to(seg: Any, i: int) -> str | None:
        """The file the ROTATE_EVENT ``seg.index[i]`` names (None when it cannot be read)."""
        ph = seg.file.formats[int(seg.index.fmt[i])].post_header_len(EventType.ROTATE_EVENT)
        try:
            name, _ = parse_rotate(seg.src, int(seg.index.offset[i]), int(seg.index.body_end[i]), ph)
        except BinlogError:
            return None  # events() / info() show the event; the rows do not depend on it
        return name

    def _check_chain(self, f: BinlogFile, name: str | None) -> None:
        """Warn when the file after ``f`` is not the one its last ROTATE_EVENT names."""
        k = self.files.index(f)
        if k + 1 >= len(self.files) or name is None or self._seek:
            return
        nxt = self.files[k + 1]
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

    def _batches(self, wanted, versions: _SchemaVersions | None = None, *, desc: str = ""
                 ) -> Iterator[tuple[str, pa.RecordBatch]]:
        """Decoded batches of the tables ``wanted(name)`` accepts, in log order per table.

        With ``threads`` > 1 each batch is decoded in the background while the next one is
        walked (the compiled walk releases the GIL: on two cores they overlap); batches still
        come, and fail, in log order."""
        pending: _Pending | None = None  # the batch being decoded in the background
        bar = ProgressBar(self.files, desc, self.progress) if self.progress is not False else None
        try:
            for job in self._batch_jobs(wanted, versions, bar):
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

    def _versioned(self, step: _Step, wanted, versions: _SchemaVersions, file_no: int
                   ) -> tuple[np.ndarray, np.ndarray, list[TableMap], np.ndarray, np.ndarray, np.ndarray, list[str]] | None:
        """The rows events of a step of the tables ``wanted`` accepts (and the ``tables``
        filter), with their effective layouts, versions and incarnations, before any row
        filter (so that neither depends on the filters): (events, code, layouts, version,
        incarnation, table number, table names); None when there are none."""
        rows_pos, layout = step.rows_pos, step.layout
        if len(rows_pos) == 0:
            return None
        # layout id -> table name, kept as Python strings (NumPy would drop trailing NULs)
        name_of = [tm.name for tm in step.maps.layouts]
        sel = np.flatnonzero(np.array([wanted(n) and self.filter.table(n) for n in name_of], bool)[layout])
        if not len(sel):
            return None
        # the effective layout of each rows event: its TABLE_MAP with what the DDL as of that
        # event, or schema=, says
        code, resolved, lifetime = self._effective(step, sel)
        tables = list(dict.fromkeys(name_of))
        table_of_layout = np.array([tables.index(n) for n in name_of], np.int64)
        table = table_of_layout[layout[sel]]
        where = (file_no, step.index.pos[rows_pos[sel]]) if versions.history is not None else None
        version, incarnation = versions.assign(tables, table, code, resolved, lifetime, step.file.formats[0].flavor,
                                               where)
        return sel, code, resolved, version, incarnation, table, tables

    def _batch_jobs(self, wanted, versions: _SchemaVersions | None = None, bar: ProgressBar | None = None
                    ) -> Iterator[_Pending]:
        """The batches of :meth:`_batches`, placed, each with what decodes it. ``versions``
        (filled on the way) has each table's layouts afterwards."""
        dropped: Counter[str] = Counter()
        versions = versions if versions is not None else _SchemaVersions(self._layout_state)
        for step in self._walk(transactions=True, progress=bar):
            f, src, maps, index = step.file, step.src, step.maps, step.index
            self._check_undecoded(step, wanted)
            found = self._versioned(step, wanted, versions, self.files.index(f))
            if found is None:
                continue
            sel, code, resolved, version, incarnation, table, tables = found
            keep = self.filter.events(index, first=f is self.files[0], last=f is self.files[-1], at=step.rows_pos[sel])
            if not keep.any():
                continue
            sel, code, version, incarnation, table = sel[keep], code[keep], version[keep], incarnation[keep], table[keep]
            rows_pos = step.rows_pos[sel]
            checked = index.type_code == EventType.TABLE_MAP_EVENT
            checked[rows_pos] = True
            src.verify_checksums_of(index, checked)
            gtid_ok = None
            # One batch per run of consecutive events of the same effective layout, version and
            # incarnation, per table, in log order.
            runs: list[tuple[str, np.ndarray, TableMap, int, int]] = []  # (table, rows events, layout, version, incarnation)
            for t in dict.fromkeys(table.tolist()):
                mine = table == t
                pos, run_code, run_version, run_inc = rows_pos[mine], code[mine], version[mine], incarnation[mine]
                cuts = np.flatnonzero((np.diff(run_code) != 0) | (np.diff(run_version) != 0)
                                      | (np.diff(run_inc) != 0)) + 1
                for run_pos, c, v, i in zip(np.split(pos, cuts), np.split(run_code, cuts), np.split(run_version, cuts),
                                            np.split(run_inc, cuts)):
                    runs.append((tables[t], run_pos, resolved[int(c[0])], int(v[0]), int(i[0])))
            for name, run_pos, tm, v, inc in runs:
                effective = self.rolled_back == "keep" or self._non_transactional(name)
                for images in _placed(src, maps, index.take(run_pos), tm, f.formats[0].flavor, self.batch_rows):
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
                        schema_version=v, incarnation=inc, threads=self.threads))
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

    def _effective(self, step: _Step, sel: np.ndarray) -> tuple[np.ndarray, list[TableMap], list[int]]:
        """The effective layout of rows events ``sel`` of a step: a code per event (int64),
        the TABLE_MAP of each code, completed by the table's definition at that event, and the
        lifetime of the table's name it was written under (see SchemaTracker.tracked)."""
        lay, gen = step.layout[sel], step.generation[sel]
        span = int(gen.max()) + 1 if len(gen) else 1
        keys, first, inverse = np.unique(lay * span + gen, return_index=True, return_inverse=True)
        pairs = np.stack([keys // span, keys % span], axis=1)
        flavor = step.file.formats[0].flavor
        codes: dict[tuple[int, int], int] = {}
        resolved: list[TableMap] = []
        lifetimes: list[int] = []
        of_pair = np.zeros(len(pairs), np.int64)
        for k, ((lid, g), i) in enumerate(zip(pairs.tolist(), first.tolist())):
            tm = step.maps.layouts[lid]
            ver, definition, lifetime = step.schema.tracked(tm.name, g)
            if (lid, ver) not in codes:
                where = f"{step.file.path}: offset {int(step.index.pos[step.rows_pos[sel[i]]])}"
                codes[(lid, ver)] = len(resolved)
                resolved.append(step.schema.resolve(tm, definition, flavor, where))
                lifetimes.append(lifetime)
            of_pair[k] = codes[(lid, ver)]
        return of_pair[inverse.ravel()], resolved, lifetimes

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
        for item in self._batches(lambda n: n == table, desc=table):
            found = True
            yield item[1]
            del item  # not held while the next batch is made
        if not found and table not in self.tables:
            raise self._table_not_found(table)

    def iter_tables(self) -> Iterator[tuple[str, pa.RecordBatch]]:
        """Every table's change log in one pass: ``(db.table, record batch)`` in log order per
        table, one segment (``segment_bytes``) decoded at a time. Batches of different tables
        come interleaved; a table's batches come in its log order."""
        yield from self._batches(lambda n: True, desc="every table")

    def read_table(self, table: str) -> pa.Table:
        """The change log of ``table`` (``"db.table"``) as one Arrow table, in log order.

        A table whose layout changes within the files read (ALTER TABLE, DROP and CREATE
        TABLE) comes in one schema: columns matched by name, types widened exactly, and types
        that cannot be widened kept apart under distinct names (``a@0``), see
        :mod:`vecbinlog.tableplan` and the README, "Schema changes mid-stream".

        Raises :class:`~vecbinlog.TableNotFoundError` (a ``KeyError``) when the files have no
        rows events of that table (or the ``tables=`` filter leaves it out).
        """
        return self._read(table)[0]

    def _read(self, table: str) -> tuple[pa.Table, TablePlan, _SchemaVersions]:
        """read_table, with the table's plan and the layouts met."""
        versions = _SchemaVersions(self._layout_state)
        batches = [b for _, b in self._batches(lambda n: n == table, versions, desc=table)]
        if not batches and table not in self.tables:
            raise self._table_not_found(table)
        plan = self._plan(table, versions)
        return _concat(batches, plan, self._paths_by_name()), plan, versions

    def _table_not_found(self, table: str) -> TableNotFoundError:
        """The error for a table without rows events (that the filters keep)."""
        why = ""
        if self.filter.tables is not None and not self.filter.table(table):
            why = f" that tables={list(self.filter.tables)} keeps"
        return TableNotFoundError(
            f"{table!r} has no rows events in {', '.join(self.paths)}{why}; tables: {', '.join(self.tables) or 'none'}",
            table=table, tables=self.tables)

    def read_all(self) -> dict[str, pa.Table]:
        """Every table's change log: ``{"db.table": pyarrow.Table}`` (each as :meth:`read_table`)."""
        out: dict[str, list[pa.RecordBatch]] = {}
        versions = _SchemaVersions(self._layout_state)
        for name, batch in self._batches(lambda n: True, versions, desc="every table"):
            out.setdefault(name, []).append(batch)
        return {name: _concat(b, self._plan(name, versions), self._paths_by_name()) for name, b in out.items()}

    def _plan(self, table: str, versions: _SchemaVersions) -> TablePlan:
        """The TablePlan of ``table`` from the layouts a walk met (their declared schemas)."""
        plan = TablePlan(table)
        for v, (tm, flavor) in sorted(versions.layouts.get(table, {}).items()):
            plan.add(v, table_schema(tm, self._options(table, flavor), self.queries))
        return plan

    def _walk_layouts(self, history: bool = False, ddl: list | None = None) -> _SchemaVersions:
        """Every table's layouts (the ``tables`` filter applies), versions and incarnations, from
        a walk of the headers, TABLE_MAPs and DDL; no row is decoded."""
        versions = _SchemaVersions(self._layout_state, history=history)
        for step in self._walk(ddl_states=ddl):
            self._versioned(step, lambda n: True, versions, self.files.index(step.file))
        return versions

    def plans(self) -> dict[str, TablePlan]:
        """Each table's :class:`~vecbinlog.tableplan.TablePlan`, without decoding a row: the
        schema :meth:`read_table` returns (``.schema``), and how a batch of
        :meth:`iter_batches` fits it (``.conform``). See "Schema changes mid-stream"."""
        versions = self._walk_layouts()
        return {name: self._plan(name, versions) for name in versions.layouts}

    def layouts(self) -> TableLayouts:
        """:meth:`plans`, and where each table's layouts and the DDL stand at any offset, so
        that a range read alone (a split, :func:`vecbinlog.splits.with_layouts`) numbers and
        names its columns as a read of the whole files does."""
        ddl: list[tuple[tuple[str, int], Any]] = []
        versions = self._walk_layouts(history=True, ddl=ddl)
        number = {f.path: k for k, f in enumerate(self.files)}
        plans = {name: self._plan(name, versions) for name in versions.layouts}
        return TableLayouts([f.path for f in self.files], plans, versions.history or {},
                            [((number[path], pos), state) for (path, pos), state in ddl])

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

        Changes that did not take effect are not replayed (``rolled_back``), nor those of an
        earlier incarnation of the table (``_incarnation``: a DROP or TRUNCATE TABLE logs no
        deletes); the table's own columns (those of the layouts replayed, named as
        :meth:`read_table` names them) come back, one row per key, in the log order of each
        key's last change. Needs FULL row images. See :mod:`vecbinlog.snapshot`.
        """
        changes, plan, versions = self._read(table)
        if until is not None and changes.num_rows:
            changes = changes.filter(self._before(changes, until))
        if changes.num_rows:  # a table dropped (or emptied) and created again: its last incarnation only
            changes = changes.filter(pc.equal(changes.column("_incarnation"), pc.max(changes.column("_incarnation"))))
        layouts = versions.layouts.get(table, {})
        # the columns of the layouts its rows were written under (the last layout without rows)
        kept = pc.unique(changes.column("_schema_version")).to_pylist() if changes.num_rows else [max(layouts, default=0)]
        if key is None:
            last = max(kept)
            pk = layouts[last][0].primary_key if last in layouts else None
            if not pk:
                raise ValueError(
                    f"{table}: neither the binlog (binlog_row_metadata=FULL), its DDL nor schema= give "
                    "a primary key; name the key columns: snapshot(table, key=[...])"
                )
            key = [plan.layout_names(last)[c] for c in pk]
        return replay(changes, list(key), table, plan.column_names(kept))

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
                    hit = pc.index(gtid_texts(seg.src, seg.index, sel), gtid).as_py()
                    if hit >= 0:
                        return k, int(seg.index.pos[sel[hit]])
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
        """The Arrow schema of ``table`` over every layout it has in the files read, as
        :meth:`read_table` returns it (before any batch's text falls back to binary): the
        names and types of its TABLE_MAPs, with what the DDL in the log, or ``schema=``, gives
        them, combined as "Schema changes mid-stream" in the README says. No row is decoded."""
        if self._schemas is None:  # every table's, in one walk (`vecbinlog tables` asks for each)
            self._schemas = {name: plan.schema for name, plan in self.plans().items()}
        if table not in self._schemas:
            raise self._table_not_found(table)
        return self._schemas[table]

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
                seg.src.verify_checksums_of(seg.index)
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
            infos: list[list[str | None]] = []
            parts_of_file = []
            for seg in f.segments(self.segment_bytes):  # each segment described while its bytes are there
                infos.append(describe_events(seg.src, seg.index))
                parts_of_file.append(seg.index)
            idx = EventIndex.concat(parts_of_file)
            n = len(idx)
            codes = np.unique(idx.type_code)
            names = [event_type_name(int(c)) for c in codes]
            parts.append(
                pa.table(
                    {
                        "file": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([f.name])),
                        "pos": pa.array(idx.pos, pa.int64()),
                        "type_code": pa.array(idx.type_code, pa.uint8()),
                        "type": pa.DictionaryArray.from_arrays(
                            pa.array(np.searchsorted(codes, idx.type_code).astype(np.int32)), pa.array(names, pa.string())
                        ),
                        "size": pa.array(idx.event_size, pa.uint32()),
                        "timestamp": pa.array(idx.timestamp.astype(np.int64), pa.timestamp("s", tz="UTC")),
                        "server_id": pa.array(idx.server_id, pa.uint32()),
                        "end_log_pos": pa.array(idx.log_pos, pa.uint32()),
                        "flags": pa.array(idx.flags, pa.uint16()),
                        "info": pa.array([text for part in infos for text in part], pa.string()),
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
                unpacked = unpack_segment(seg.src, seg.index)
                src, index = unpacked if unpacked is not None else (seg.src, seg.index)
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
                        for located in _placed(src, maps, index.take(rows_pos[layout == lid]), tm, f.formats[0].flavor,
                                               self.batch_rows):
                            kinds, n = np.unique(located.change, return_counts=True)
                            for k, c in zip(kinds.tolist(), n.tolist()):
                                images.setdefault(tm.name, Counter())[CHANGE_TYPES[k]] += c
            fde = f.formats[0]
            stop = f.walk_stop
            files.append(
                {
                    "path": f.path,
                    "size": f.size,
                    "compression": f.source.compression,
                    # a compressed file is read from its start only: one Spark split
                    "splittable": f.source.seekable,
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


class _Pending:
    """A batch of ``table`` to decode: here (:meth:`result`), or in the background (:meth:`start`)."""

    def __init__(self, path: str, table: str, cells: int, make: Callable[[], tuple[pa.RecordBatch, list[str]]]):
        self.path, self.table, self.cells = path, table, cells
        self.make: Callable[[], tuple[pa.RecordBatch, list[str]]] | None = make
        self.future: Future | None = None

    def start(self) -> None:
        self.future = pool("batch").submit(self.make)  # the thread that decodes batches in the background

    def result(self) -> tuple[str, pa.RecordBatch]:
        """(table, batch), its decoding warnings issued; the row images are let go."""
        made = self.future.result() if self.future is not None else self.make()
        self.make = self.future = None
        batch, notes = made
        del made
        for note in notes:
            warnings.warn(f"{self.path}: {self.table}: {note}", DecodeWarning, stacklevel=4)
        return self.table, batch


def _placed(src, maps: TableMaps, events: EventIndex, tm: TableMap, flavor: str, max_images: int):
    """``place_images``, with the cause named when MariaDB's pre-10.1 temporal columns make the
    row images not add up: such a column of the TABLE_MAP (TIME 11, DATETIME 12, TIMESTAMP 7,
    no metadata) is larger than its type code says when it has fractional seconds."""
    try:
        yield from place_images(src, maps, events, tm, max_images=max_images)
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


def _concat(batches: list[pa.RecordBatch], plan: TablePlan, paths: dict[str, str]) -> pa.Table:
    """One table of batches whose layouts may differ (ALTER TABLE, a table created again), in
    the plan's schema (:mod:`vecbinlog.tableplan`), widened first with what the batches'
    data changed (text that fell back to binary)."""
    for b in batches:
        plan.widen(b, paths.get(b.column("_log_file")[0].as_py()) if b.num_rows else None)
    return pa.Table.from_batches([plan.conform(b) for b in batches], schema=plan.schema)


@dataclass(frozen=True)
class LayoutState:
    """Where a table's layouts stand at a point of the log: its last effective layout, its
    ``_schema_version`` and ``_incarnation``, and the lifetime count (DROP/CREATE/TRUNCATE
    statements of its name, :attr:`vecbinlog.ddl.Catalog.lifetimes`) it was written under.
    Given to a range read alone (``Split.layouts``), it numbers versions and incarnations as a
    read of the whole files does."""

    table_map: TableMap
    version: int
    lifetime: int
    incarnation: int


class _SchemaVersions:
    """``_schema_version`` and ``_incarnation`` of each table: 0 for the first effective layout
    (and lifetime) met, +1 at every change; and, per table, the layout of each version."""

    def __init__(self, start: dict[str, LayoutState] | None = None, history: bool = False) -> None:
        self.last: dict[str, LayoutState] = dict(start or {})
        #: name -> version -> (effective layout, file flavor), in log order
        self.layouts: dict[str, dict[int, tuple[TableMap, str]]] = {}
        #: name -> [((file number, offset of the rows event), state from there on)], with history=True
        self.history: dict[str, list[tuple[tuple[int, int], LayoutState]]] | None = {} if history else None

    def assign(self, tables: list[str], table: np.ndarray, code: np.ndarray, resolved: list[TableMap],
               lifetime: list[int], flavor: str, where: tuple[int, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """The version and incarnation (int32 each) of rows events in log order, of tables
        ``tables[table]``, effective layouts ``code`` (``resolved[code]``) written under
        ``lifetime[code]``. ``where``: (file number, offset of each event), for the history."""
        version = np.zeros(len(code), np.int32)
        incarnation = np.zeros(len(code), np.int32)
        for t in dict.fromkeys(table.tolist()):
            name = tables[t]
            mine = np.flatnonzero(table == t)
            c = code[mine]
            starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])  # runs of one layout: few
            runs = []
            for s in starts.tolist():
                tm, life = resolved[int(c[s])], lifetime[int(c[s])]
                prev = self.last.get(name)
                if prev is None:
                    state = LayoutState(tm, 0, life, 0)
                else:
                    state = LayoutState(tm, prev.version + (prev.table_map != tm), life,
                                        prev.incarnation + (prev.lifetime != life))
                if state != prev:
                    self.last[name] = state
                    self.layouts.setdefault(name, {}).setdefault(state.version, (tm, flavor))
                    if self.history is not None and where is not None:
                        self.history.setdefault(name, []).append(((where[0], int(where[1][mine[s]])), state))
                runs.append((state.version, state.incarnation))
            lengths = np.diff(np.r_[starts, len(c)])
            version[mine] = np.repeat(np.array([r[0] for r in runs], np.int32), lengths)
            incarnation[mine] = np.repeat(np.array([r[1] for r in runs], np.int32), lengths)
        return version, incarnation


@dataclass
class TableLayouts:
    """Every table's layouts in the files read, found without decoding a row
    (:meth:`Binlog.layouts`): each table's :class:`~vecbinlog.tableplan.TablePlan`, and where
    layouts and DDL stand at any offset, for ranges read alone (splits)."""

    paths: list[str]
    plans: dict[str, TablePlan]
    #: name -> [((file number, offset), state from that rows event on)], in log order
    history: dict[str, list[tuple[tuple[int, int], LayoutState]]]
    #: [((file number, offset), DDL state after the DDL statement at that offset)], in log order
    ddl: list[tuple[tuple[int, int], Any]]

    def _file_number(self, path: str) -> int:
        def same(p: str) -> str:  # a file's path is its URI without credentials (BinlogFile.path)
            return redact(p) if is_uri(p) else os.path.realpath(p)

        real = same(path)
        for k, p in enumerate(self.paths):
            if same(p) == real:
                return k
        raise ValueError(f"{redact(path)} is not one of the files {self.paths}")

    def start_state(self, path: str, offset: int) -> tuple[Any, dict[str, LayoutState]]:
        """(DDL state, layout states) in force where a range of ``path`` starting at ``offset``
        starts: after every DDL statement and rows event before it."""
        at = (self._file_number(path), offset)
        ddl = None
        for where, state in self.ddl:
            if where >= at:
                break
            ddl = state
        layouts = {}
        for name, changes in self.history.items():
            before = [state for where, state in changes if where < at]
            if before:
                layouts[name] = before[-1]
        return ddl, layouts


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
