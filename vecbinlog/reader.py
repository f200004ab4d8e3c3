"""The public entry point: :func:`open` a binlog (or several, in order) and read tables from it.

:class:`Binlog` is a façade: it checks the options and hands the work to

* :mod:`vecbinlog.log.logwalk`: the one walk of the files (segments, unpacking, table maps, DDL,
  transactions);
* :mod:`vecbinlog.log.batches`: the rows events kept, placed and decoded in log order
  (:mod:`vecbinlog.log.versions`: their effective layouts and schema versions);
* :mod:`vecbinlog.decode.tableplan`: one schema per table, batches concatenated and widened into it;
* :mod:`vecbinlog.log.loginfo`: what the files hold (``info``, ``events``, ``verify``);
* :mod:`vecbinlog.snapshot`: a table's rows as of a point in the log.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from .arrowbuild import scalar, strings
from .arrowstream import closing_reader
from .binlog.file import BinlogFile, open_files
from .binlog.locations import is_uri, name_of, redact
from .decode.tableplan import TablePlan, concat_batches, widen_type
from .errors import ClosedError, DecodeWarning, TableNotFoundError
from .groups import group
from .index import IndexedFile, indexed_table_maps, indexed_tables, load_index, replay_index
from .log.batches import BatchReader
from .log.config import ReadConfig, RowsFilter
from .log.loginfo import events_table, file_info, gtid_position, verify_files
from .log.logset import InMemory, binlog_sources, source_name
from .log.logwalk import LogWalk
from .log.versions import SchemaHistory, SchemaVersions, VersionState
from .pools import TaskGroup
from .snapshot import replay
from .tables.table_map import TableMap

if TYPE_CHECKING:
    import pandas as pd

    from .tables.ddl import Catalog  # (the DDL modules: imported by the first statement that needs them)

__all__ = ["Binlog", "RowsFilter", "open", "read_table", "read_pandas", "DecodeWarning", "VersionState",
           "SchemaHistory", "widen_type"]

PathLike = str | os.PathLike[str]
#: what open() reads: a path (or glob, or index file), or the binlog itself (bytes, a binary file object)
SourceLike = str | os.PathLike[str] | bytes | bytearray | memoryview | Any
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class Binlog:
    """One binlog file or an ordered list of them, read as one change log.

    ``vecbinlog.open`` is this class. Files are memory-mapped; the object is a context
    manager that unmaps them.

    Parameters
    ----------
    paths : a binlog file (str or ``os.PathLike``), a list of them in log order, a glob
        (``"archive/mysql-bin.*"``, sorted by number) or the server's ``mysql-bin.index``; local
        paths or URIs (``s3://bucket/binlogs/mysql-bin.*?region=...``, ``gs://``, ``abfs://``,
        ``hdfs://``, ``file://``: see :mod:`vecbinlog.binlog.sources`); compressed files (``.gz``,
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
        "enum": [...], "set": [...]}, ...]}`` (see :func:`vecbinlog.tables.tracker.load_schema`).
        Used for a TABLE_MAP whose column count and types it matches; the binlog's own
        metadata and the DDL in the log come first (README, "Names and types without FULL
        metadata").
    ddl : replay the CREATE/ALTER/RENAME/DROP/TRUNCATE statements of the log to name and type
        columns and count ``_incarnation`` (default True).
    filesystem : a ``pyarrow.fs.FileSystem`` (or an fsspec filesystem) that ``paths`` are
        paths in (``"bucket/binlogs/mysql-bin.000042"``), as ``pyarrow.dataset`` takes it.
    threads : how many runs of row images (one table's rows events in a segment) are placed
        and decoded at once, in the background while the log is walked on, and how many
        columns of a large batch at once (the compiled walk, NumPy and Arrow release the GIL).
        Default: the CPUs this process may use, at most 4, and 1 for a read of under 48 MB of
        binlog (``THREADED_READ_BYTES``: a second thread does not pay there); 1 decodes in this
        thread only (the Spark data source uses 1: Spark runs a task per core).
    max_event_bytes : the largest event read (default 1 GiB, as ``mysqlbinlog
        --max-allowed-packet``): a larger ``event_size`` is a
        :class:`~vecbinlog.MalformedEventError` before any of it is read or decompressed.
    index : an archive index location (:func:`vecbinlog.build_index`) of these files:
        :attr:`tables`, :meth:`table_maps`, :meth:`plans`, :meth:`schema`, :meth:`history` and
        :meth:`info` (without ``rows``) are answered from
        it, without opening the files (only their sizes and times are checked against it, from
        their filesystem's metadata); rows are read from the files as without it (the files are
        opened when first walked).
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

    def __init__(self, paths: SourceLike | Iterable[SourceLike], config: ReadConfig | None = None,
                 index: Any = None, **options: Any) -> None:
        self.index = index
        #: the log's background work: its reads' (each a group of its own), its files' (pages let
        #: go of, reads ahead, opens ahead); :meth:`close` ends it before any file closes
        self._tasks = TaskGroup("the log")
        self._closed = False
        if config is None:
            config = ReadConfig.build(**options)
        elif options:
            raise TypeError(f"Binlog takes a config or options, not both: {sorted(options)}")
        self.config = config
        self.filesystem = config.filesystem
        self._sources = binlog_sources(paths, config.filesystem)
        self.paths = [source_name(src) for src in self._sources]
        self._files: list[BinlogFile] | None = None
        self._walking: tuple[LogWalk, BatchReader] | None = None
        self._tables: dict[str, int] | None = None
        self._schemas: dict[str, pa.Schema] | None = None
        if index is None or not all(isinstance(src, str) for src in self._sources):
            self._open()  # (with an index, when a walk first needs them: what the index answers opens none)

    def _open(self) -> list[BinlogFile]:
        """The files, opened (each checked to be a binlog: its FORMAT_DESCRIPTION read)."""
        if self._files is None:
            config = self.config

            def open_file(src: str | InMemory) -> BinlogFile:
                return config.open_file(src, tasks=self._tasks)

            self._check_open()
            files: list[BinlogFile] = []
            try:
                # (files in object storage: several at a time)
                for f in open_files(self._sources, open_file, config.filesystem, tasks=self._tasks):
                    files.append(f)
            except BaseException:
                for f in files:
                    f.close()
                raise
            self._files = files
        return self._files

    @property
    def files(self) -> list[BinlogFile]:
        """The binlog files read, in log order (opened the first time they are asked for)."""
        self._check_open()
        return self._open()

    @property
    def _walk(self) -> LogWalk:
        return self._walker()[0]

    @property
    def _reader(self) -> BatchReader:
        return self._walker()[1]

    def _walker(self) -> tuple[LogWalk, BatchReader]:
        self._check_open()
        if self._walking is None:
            self._start_walk()
        assert self._walking is not None
        return self._walking

    @classmethod
    def over_range(cls, paths: SourceLike | Iterable[SourceLike], start: int, stop: int | None, *,
                   ddl: Catalog | None = None, versions: dict[str, VersionState] | None = None,
                   config: ReadConfig | None = None, **options: Any) -> Binlog:
        """A Binlog over ``[start, stop)`` only (``start`` in the first file, ``stop`` in the
        last; None: to the end), walked alone: a range of a large file costs only the range.
        ``config`` (or ``options``): the read's, as :class:`Binlog` takes them. The lower-level entry of split reads
        (:func:`vecbinlog.splits.read_split`) and of the stream's walks (:mod:`vecbinlog.streaming`).

        ``start`` must be where a transaction starts (a :class:`~vecbinlog.splits.Split`'s
        start): the events before it, TABLE_MAPs included, are not walked. ``ddl`` and
        ``versions`` are the DDL and version states where the range starts (``Split.ddl``,
        ``Split.versions``), so that the range names its columns and numbers
        ``_schema_version``/``_incarnation`` as a read of the whole files does; without them
        the range counts from itself.
        """
        if config is None:
            config = ReadConfig.build(**options)
        elif options:
            raise TypeError(f"over_range takes a config or options, not both: {sorted(options)}")
        log = cls(paths, config.over_range(start, stop))
        log._start_walk(seek=True, ddl_state=ddl, start_versions=versions)
        return log

    def _start_walk(self, seek: bool = False, ddl_state: Catalog | None = None,
                    start_versions: dict[str, VersionState] | None = None) -> None:
        """The walk of the files and the batch reader over it: whole files, or a range (over_range)."""
        walk = LogWalk(self.files, self.config, seek=seek, ddl_state=ddl_state)
        config = self.config.for_sizes([f.size for f in self.files])
        self._walking = (walk, BatchReader(walk, config, self._tasks, start_versions))

    # -- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        """Close the files. Every read of the log still under way ends first: what it runs in
        the background is cancelled or waited for, so that once this returns no thread of the
        log runs. A read resumed afterwards, and any other use of the log, raises
        :class:`~vecbinlog.ClosedError`; so does a read under way in another thread. Safe to
        call again."""
        self._closed = True
        self._tasks.close()
        self._walking = None  # (the runs planned for later reads hold the files' bytes)
        self._schemas = None
        for f in self._files or []:
            f.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError(f"the log of {', '.join(map(str, self.paths))} is closed")

    def __enter__(self) -> Binlog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        names = [f.name for f in self._files] if self._files is not None else [name_of(p) for p in self.paths]
        return f"<vecbinlog.Binlog {len(names)} file(s): {', '.join(names)}>"

    # -- tables and layouts, without decoding a row ------------------------------------
    @property
    def tables(self) -> list[str]:
        """Every ``db.table`` that has rows events, in order of first appearance."""
        if self._tables is None and self.index is not None:
            self._tables = {name: n for name, n in indexed_tables(self._indexed()).items()
                            if self.config.filter.table(name)}
        if self._tables is None:
            self._reader.plan_runs()  # one walk finds the tables and plans the reads that follow
            if self._reader.tables() is None:
                self._reader.plans()  # (files too large to plan: the walk of the layouts, kept for plans())
            self._tables = dict.fromkeys(self._reader.tables() or [], 1)
        return list(self._tables)

    def table_maps(self, table: str) -> list[TableMap]:
        """Every distinct TABLE_MAP layout of ``table`` used by its rows events, in log order.

        A :class:`~vecbinlog.tables.table_map.TableMap` has the columns' types, field metadata,
        nullability and whatever optional metadata the binlog carries (names, signedness,
        collations, ENUM/SET labels, primary key, geometry types, visibility, vector sizes).
        With ``index=``, from the TABLE_MAPs the index keeps.
        """
        if self.index is not None:
            return indexed_table_maps(self._indexed(), table)
        out: list[TableMap] = []
        for step in self._walk.steps():
            for lid in step.layout[group(step.layout)[0]].tolist():
                tm = step.maps.layouts[lid]
                if tm.name == table and tm not in out:
                    out.append(tm)
        return out

    def plans(self) -> dict[str, TablePlan]:
        """Each table's :class:`~vecbinlog.decode.tableplan.TablePlan`, without decoding a row: the
        schema :meth:`read_table` returns (``.schema``), and how a batch of
        :meth:`iter_batches` fits it (``.conform``). See "Schema changes mid-stream"."""
        if self.index is not None:
            return self.history().plans
        self._reader.plan_runs()  # as :attr:`tables` does: the one walk, where the files allow it
        return self._reader.plans()

    def history(self) -> SchemaHistory:
        """:meth:`plans`, and where each table's versions and the DDL stand at any offset, so
        that a range read alone (a split, :func:`vecbinlog.splits.with_history`) numbers and
        names its columns as a read of the whole files does."""
        if self.index is not None:
            return replay_index(self._indexed(), config=self.config)[1]
        return self._reader.history()

    def _indexed(self) -> list[IndexedFile]:
        """The index of the files (``index=``), checked to be of them."""
        return load_index(list(self.paths), self.index, filesystem=self.filesystem)  # (as given: URIs keep their options)

    def schema(self, table: str) -> pa.Schema:
        """The Arrow schema of ``table`` over every layout it has in the files read, as
        :meth:`read_table` returns it (before any batch's text falls back to binary): the
        names and types of its TABLE_MAPs, with what the DDL in the log, or ``schema=``, gives
        them, combined as "Schema changes mid-stream" in the README says. No row is decoded."""
        if self._schemas is None:  # every table's, in one walk (`vecbinlog tables` asks for each)
            self._schemas = {name: plan.schema for name, plan in self.plans().items()}
        if table not in self._schemas:
            raise self._table_not_found(table)
        schema = self._schemas[table]
        return pa.schema([schema.field(n) for n in self.returned_columns(schema, table)], metadata=schema.metadata)

    def returned_columns(self, schema: pa.Schema, table: str | None = None) -> list[str]:
        """The names of the columns of ``schema`` (a table's plan schema, or a batch's) that a read
        returns, as ``columns=`` and ``metadata=`` say, in the schema's order; with ``table``, a
        name ``columns=`` asks for that the table does not have is a ValueError."""
        names = self.config.project(schema)
        asked = self.config.columns
        if table is not None and asked is not None and len(names) < len(asked):
            missing = [c for c in asked if c not in schema.names]
            raise ValueError(f"columns: {table} has no column {', '.join(map(repr, missing))}; its columns: "
                             f"{', '.join(schema.names)}")
        return names

    def _project(self, data: pa.Table | pa.RecordBatch, table: str | None = None) -> pa.Table | pa.RecordBatch:
        """``data`` with the columns a read returns (``table``: see :meth:`returned_columns`)."""
        names = self.returned_columns(data.schema, table)
        return data if names == data.schema.names else data.select(names)

    # -- reading rows --------------------------------------------------------------------
    def iter_batches(self, table: str, *, layout_columns: bool = False) -> Generator[pa.RecordBatch, None, None]:
        """The change log of ``table`` as record batches, in log order, in bounded memory.

        Each batch holds the rows of about ``segment_bytes`` of binlog (32 MB by default), and
        at most ``batch_rows`` rows, in the schema of its layout. ``layout_columns``: every
        column of the layout, those ``columns=`` leaves out all null (not decoded): batches
        a :class:`~vecbinlog.decode.tableplan.TablePlan` can still conform to the table's one
        schema (:meth:`plans`), which :meth:`returned_columns` then projects.

        The read ends when the loop over it does, however it ends (a ``break``, an error, the
        generator closed or dropped): what it started in the background is over before the
        next statement, and :meth:`close` ends a read still under way.
        """
        found = False
        for item in self._reader.batches(lambda n: n == table, desc=table):
            found = True
            yield item[1] if layout_columns else self._project(item[1])
            del item  # not held while the next batch is made
        if not found and table not in self.tables:
            raise self._table_not_found(table)

    def iter_tables(self, *, layout_columns: bool = False) -> Generator[tuple[str, pa.RecordBatch], None, None]:
        """Every table's change log in one pass: ``(db.table, record batch)`` in log order per
        table, a segment (``segment_bytes``) at a time (a table with little in each segment of a
        local file: several segments' rows in one batch). Batches of different tables come
        interleaved; a table's batches come in its log order. ``layout_columns``, and how the
        read ends: as :meth:`iter_batches`."""
        for name, batch in self._reader.batches(lambda n: True, desc="every table"):
            yield name, batch if layout_columns else self._project(batch)

    def read_table(self, table: str) -> pa.Table:
        """The change log of ``table`` (``"db.table"``) as one Arrow table, in log order.

        A table whose layout changes within the files read (ALTER TABLE, DROP and CREATE
        TABLE) comes in one schema: columns matched by name, types widened exactly, and types
        that cannot be widened kept apart under distinct names (``a@0``), see
        :mod:`vecbinlog.decode.tableplan` and the README, "Schema changes mid-stream".

        Raises :class:`~vecbinlog.TableNotFoundError` (a ``KeyError``) when the files have no
        rows events of that table (or the ``tables=`` filter leaves it out).
        """
        return self._project(self._read(table)[0], table)

    def _read(self, table: str, whole: bool = False) -> tuple[pa.Table, TablePlan, SchemaVersions]:
        """read_table, with the table's plan and versions (``whole``: every column decoded,
        whatever ``columns=`` says: what a snapshot replays)."""
        reader = self._reader
        if whole and (self.config.columns is not None or not self.config.metadata):
            reader = BatchReader(self._walk, reader.config.replace(columns=None, metadata=True), self._tasks,
                                 reader.start_versions)
        found = reader.read(lambda n: n == table, desc=table)
        batches = found.batches.get(table, [])
        if not batches and table not in self.tables:
            raise self._table_not_found(table)
        plan = found.plans.get(table) or TablePlan(table)
        return concat_batches(batches, plan, self._paths_by_name(), self._reader.config.threads), plan, found.versions

    def read_all(self) -> dict[str, pa.Table]:
        """Every table's change log: ``{"db.table": pyarrow.Table}`` (each as :meth:`read_table`),
        the tables in the order the log first has their rows."""
        found = self._reader.read(lambda n: True, desc="every table")
        threads = self._reader.config.threads
        out = {name: self._project(concat_batches(batches, found.plans[name], self._paths_by_name(), threads))
               for name, batches in found.batches.items()}
        asked = self.config.columns or ()
        missing = [c for c in asked if not any(c in t.schema.names for t in out.values())]
        if out and missing:
            raise ValueError(f"columns: no table has a column {', '.join(map(repr, missing))}")
        return out

    def _paths_by_name(self) -> dict[str, str]:
        return {f.name: f.path for f in self.files}

    def _table_not_found(self, table: str) -> TableNotFoundError:
        """The error for a table without rows events (that the filters keep)."""
        why = ""
        if self.config.filter.tables is not None and not self.config.filter.table(table):
            why = f" that tables={list(self.config.filter.tables)} keeps"
        return TableNotFoundError(
            f"{table!r} has no rows events in {', '.join(self.paths)}{why}; tables: {', '.join(self.tables) or 'none'}",
            table=table, tables=self.tables)

    # -- a stream of batches, for the query engines (DuckDB, Polars, pyarrow.dataset) ----------
    def batch_reader(self, table: str, **filters: Any) -> pa.RecordBatchReader:
        """The change log of ``table`` as a ``pyarrow.RecordBatchReader``: its schema known before
        the first batch, its batches read one at a time, in log order, in bounded memory.

        The schema is the table's plan (:meth:`schema`, as :meth:`read_table` returns it, fixed
        before any row is decoded): each batch is fitted to it (:meth:`TablePlan.conform
        <vecbinlog.decode.tableplan.TablePlan.conform>`), as the Spark source and streams fit
        theirs. ``filters``: row filters of this read only (``start``, ``stop``, ``since``,
        ``until``, ``change_types``, ``gtids``, as :func:`open` takes them), each narrowing the
        log's own. Closing the reader, dropping it, or a consumer releasing its Arrow C stream ends
        the read and what it started; nothing is read before the first batch is asked for.

        Raises :class:`~vecbinlog.TableNotFoundError` (a ``KeyError``) as :meth:`read_table`.

        Examples
        --------
        >>> import duckdb                                                       # doctest: +SKIP
        >>> with vecbinlog.open("archive/mysql-bin.*") as log:                  # doctest: +SKIP
        ...     orders = log.batch_reader("shop.orders", since="2026-11-21")
        ...     duckdb.sql("SELECT status, count(*) FROM orders GROUP BY ALL").show()
        """
        plan = self.plans().get(table)
        if plan is None:
            raise self._table_not_found(table)
        names = self.returned_columns(plan.schema, table)
        schema = pa.schema([plan.schema.field(n) for n in names], metadata=plan.schema.metadata)
        reader = self._reader
        if filters:
            config, walk = reader.config.with_filters(**filters), self._walk
            if walk.seek and ({"start", "stop"} & filters.keys()):
                raise ValueError("batch_reader: a log over a range (over_range) takes no start/stop")
            reader = BatchReader(LogWalk(self.files, config, seek=walk.seek, ddl_state=walk.ddl_state), config,
                                 self._tasks, reader.start_versions)
        return closing_reader(schema, _fitted(lambda: reader.batches(lambda n: n == table, desc=table), plan, schema))

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
        changes, plan, versions = self._read(table, whole=True)
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

    def _before(self, changes: pa.Table, until: int | tuple[str, int] | datetime | str) -> pa.Array:
        """Mask of the changes before ``until`` (see snapshot())."""
        names = [f.name for f in self.files]
        file_no = pc.index_in(changes.column("_log_file").cast(pa.string()), value_set=strings(names))
        if isinstance(until, datetime):
            when = until if until.tzinfo else until.replace(tzinfo=timezone.utc)
            micros = (when - _EPOCH) // timedelta(microseconds=1)  # _commit_timestamp is timestamp[us, UTC]
            return pc.less(changes.column("_commit_timestamp"), scalar(micros, changes.schema.field("_commit_timestamp").type))
        if isinstance(until, (int, tuple)):
            name, pos = (names[-1], until) if isinstance(until, int) else until
            if name not in names:
                raise ValueError(f"until: {name!r} is not one of the files {names}")
            f = names.index(name)
            f, pos = scalar(f, pa.int32()), scalar(pos, pa.int64())  # (index_in gives int32)
            return pc.or_(pc.less(file_no, f), pc.and_(pc.equal(file_no, f), pc.less(changes.column("_log_pos"), pos)))
        if isinstance(until, str):
            found = gtid_position(self.files, self.config.segment_bytes, until)
            if found is None:
                raise ValueError(f"until: GTID {until!r} is not in the files {names}")
            f, pos = found
            tpos = changes.column("_transaction_pos")
            f, pos = scalar(f, pa.int32()), scalar(pos, pa.int64())
            return pc.or_(pc.less(file_no, f), pc.and_(pc.equal(file_no, f), pc.less_equal(tpos, pos)))
        raise TypeError(f"until: an offset, (file, offset), a datetime or a GTID, not {until!r}")

    # -- what the files hold -------------------------------------------------------------
    def verify(self) -> int:
        """Check the CRC32 of every event of every file; returns how many were checked.

        Raises :class:`~vecbinlog.ChecksumError` at the first mismatch. Returns 0 when the
        files have no checksums or ``verify_checksums=False``.
        """
        return verify_files(self.files, self.config.segment_bytes)

    def events(self) -> pa.Table:
        """One row per event, for every file: where it is, what it is.

        Columns: file, pos, type_code, type, size, timestamp, server_id, end_log_pos, flags,
        and info, the text ``SHOW BINLOG EVENTS`` gives (see :mod:`vecbinlog.binlog.events`; null for
        the types it does not describe: vendor types, LOAD DATA events, INCIDENT...).
        """
        parts = [events_table(f, self.config.segment_bytes) for f in self.files]
        return pa.concat_tables(parts, promote_options="permissive").unify_dictionaries()

    def info(self, rows: bool = False) -> dict[str, Any]:
        """What the files hold: versions, checksum, time range, events by type, tables.

        Every event is accounted for: ``events`` counts them all by type, and
        ``events_not_decoded`` names those whose content this version does not use
        (``"skipped"``: GTIDs, statement-era events, vendor types...; ``"unsupported"``:
        rows this version cannot read and refuses to drop, see README). With ``rows=True``
        the row images of every table are located (not decoded) and counted by change type
        in ``row_images_by_table``. With ``index=``, from the index, opening no binlog (but
        with ``rows=True`` when a table's row images could not be walked when it was indexed:
        then the files are, to raise what a read of that table raises).
        """
        if self.index is not None:
            indexed = [(ix, json.loads(ix.row["info"])) for ix in self._indexed()]
            if not (rows and any("row_images_not_counted" in entry for _, entry in indexed)):
                dropped = () if rows else ("row_images_by_table", "row_images_not_counted")
                return {"files": [{**{k: v for k, v in entry.items() if k not in dropped},
                                   "path": redact(ix.path) if is_uri(ix.path) else ix.path} for ix, entry in indexed]}
        return {"files": [file_info(f, self.config.segment_bytes, rows, self.config.batch_rows) for f in self.files]}


def _fitted(read: Callable[[], Generator[tuple[str, pa.RecordBatch], None, None]], plan: TablePlan,
            schema: pa.Schema) -> Generator[pa.RecordBatch, None, None]:
    """The batches of ``read()`` (started at the first batch asked for), each fitted to ``plan``
    and to ``schema`` (the plan's columns a read returns); the read is closed with this generator
    (its batch threads' work with it)."""
    batches = read()
    try:
        for _, batch in batches:
            fitted = plan.conform(batch)
            yield pa.RecordBatch.from_arrays([fitted.column(n) for n in schema.names], schema=schema)
            del fitted, batch
    finally:
        batches.close()


#: ``vecbinlog.open(paths, **options)`` is the :class:`Binlog` constructor.
open = Binlog


def read_table(paths: PathLike | Sequence[PathLike], table: str, **options: Any) -> pa.Table:
    """``open(paths, **options).read_table(table)`` and close the files."""
    with open(paths, **options) as log:
        return log.read_table(table)


def read_pandas(paths: PathLike | Sequence[PathLike], table: str, **options: Any) -> pd.DataFrame:
    """The change log of ``table`` as a pandas DataFrame with Arrow-backed columns.

    Columns use ``pandas.ArrowDtype`` so that nothing is lost on the way: unsigned and
    64-bit integers with NULLs stay exact integers, text stays text, timestamps keep UTC.
    """
    import pandas as pd

    return read_table(paths, table, **options).to_pandas(types_mapper=pd.ArrowDtype)
