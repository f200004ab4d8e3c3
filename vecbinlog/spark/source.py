"""The ``binlog`` data source of Spark 4's Python Data Source API: its options, the schema
found on the driver, the batch reader and the stream reader.

Each file is cut into splits of about ``split_bytes`` that start at transaction boundaries
(:mod:`vecbinlog.splits`); consecutive splits are packed into Spark partitions of about
``split_bytes``, so a task decodes one range of one large file, or several small files. The
stream (:class:`BinlogStreamReader`) takes what is new in the archive micro-batch by
micro-batch, whole transactions from where the last one ended (:mod:`vecbinlog.streaming`).
:func:`vecbinlog.spark.register` makes it ``spark.read.format("binlog")``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.types import StringType, StructField, StructType

from ..binlog.sources import redact
from ..decode.tableplan import TablePlan
from ..errors import ArchiveIndexError, ArchiveIndexWarning, TruncatedWarning, warn
from ..index import current_index, index_history, indexed_tables, load_index
from ..log.config import TEXT_OPTIONS, ReadConfig, RowsFilter, text_bytes
from ..log.versions import SchemaHistory
from ..netchanges import KEY_METADATA, primary_key
from ..reader import Binlog
from ..scans import Pushdown
from ..splits import DEFAULT_SPLIT_BYTES, Split, plan_splits, read_splits, with_history
from ..streaming import (
    Archive,
    NewLayout,
    Position,
    SchemaChangedError,
    StreamHistory,
    archive_files,
    archive_history,
)
from .pushdown import split_filters
from .types import TABLE_COLUMN, arrow_schema, conform, spark_schema

try:  # pyspark 4.2+: admission control (maxBytesPerTrigger...) and Trigger.AvailableNow
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadLimit,
        ReadMaxBytes,
        ReadMaxFiles,
        SupportsTriggerAvailableNow,
    )
except ImportError:  # pragma: no cover - pyspark 4.0/4.1: latestOffset() without arguments
    ReadAllAvailable = ReadLimit = ReadMaxBytes = ReadMaxFiles = None  # type: ignore[assignment,misc]

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stands for pyspark 4.2's mixin: older versions never call it."""

__all__ = ["BinlogDataSource", "BinlogPushdownSource", "BinlogReader", "BinlogPushdownReader", "BinlogStreamReader", "ReadOptions", "Resolved", "resolve_tables",
           "decode_splits", "pack_splits", "with_key"]


# -- options -------------------------------------------------------------------------------
#: options of spark.readStream only (Spark's file sources name the limits so)
_STREAM_OPTIONS = ("startingposition", "maxbytespertrigger", "maxfilespertrigger")
#: options of the data source itself; the others are those of ``vecbinlog.open``, parsed as
#: text by :meth:`vecbinlog.log.config.ReadConfig.from_text`
_SOURCE_OPTIONS = ("path", "paths", "table", "tables", "split_bytes", "index", *_STREAM_OPTIONS)


@dataclass(frozen=True)
class ReadOptions:
    """The data source's options, parsed: what to read, how to split, how to decode."""

    paths: tuple[str, ...]
    tables: tuple[str, ...] | None
    split_bytes: int
    #: the read's config (``start``/``stop`` and ``tables`` in its filter); ``threads`` 1 unless
    #: given: Spark already runs a task per core
    config: ReadConfig
    #: the paths as given (a folder, globs, an index...), listed again at each micro-batch of a stream
    spec: tuple[str, ...] = ()
    #: spark.readStream: where a new query starts (``earliest``, ``latest``, ``FILE:POS``, a GTID, a time)
    starting: str | None = None
    max_bytes: int | None = None  #: spark.readStream: ``maxBytesPerTrigger``
    max_files: int | None = None  #: spark.readStream: ``maxFilesPerTrigger``
    #: an archive index location (:func:`vecbinlog.build_index`): the schema and the splits come
    #: from it, no binlog is read on the driver (batch reads)
    index: str | None = None

    @property
    def start(self) -> int | None:
        return self.config.filter.start

    @property
    def stop(self) -> int | None:
        return self.config.filter.stop

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        """Spark options (case-insensitive strings) to typed ones; a bad value is a ValueError
        whose first line names the option and the value."""
        opts = {k.lower(): v for k, v in options.items()}
        names = {name.lower(): name for name in TEXT_OPTIONS}
        unknown = set(opts) - set(names) - set(_SOURCE_OPTIONS)
        if unknown:
            raise ValueError(f"unknown binlog option(s) {sorted(unknown)}; known: "
                             f"{sorted({*names, *_SOURCE_OPTIONS} - {'tables'})}")
        raw_paths: list[str] = []
        if "paths" in opts:  # DataFrameReader.load([...]) passes a JSON list
            raw_paths.extend(json.loads(opts["paths"]))
        if "path" in opts:
            raw_paths.append(opts["path"])
        if not raw_paths:
            raise ValueError("no binlog files: spark.read.format('binlog').load(path, glob or comma-separated list)")
        text = opts.get("table") or opts.get("tables")
        tables = None if not text else tuple(t.strip() for t in text.split(",") if t.strip())
        given: dict[str, Any] = {"tables": tables}
        if "threads" not in opts:
            given["threads"] = 1
        config = ReadConfig.from_text({names[k]: v for k, v in opts.items() if k in names and k != "tables"}, **given)
        max_files = None
        if "maxfilespertrigger" in opts:
            try:
                max_files = int(opts["maxfilespertrigger"])
            except ValueError:
                max_files = 0
            if max_files < 1:
                raise ValueError(f"option maxFilesPerTrigger={opts['maxfilespertrigger']!r}: a positive integer")
        return cls(
            paths=tuple(archive_files(raw_paths)),
            tables=tables,
            split_bytes=_bytes_option("split_bytes", opts["split_bytes"]) if "split_bytes" in opts else DEFAULT_SPLIT_BYTES,
            config=config,
            spec=tuple(raw_paths),
            starting=opts.get("startingposition"),
            max_bytes=_bytes_option("maxBytesPerTrigger", opts["maxbytespertrigger"]) if "maxbytespertrigger" in opts
            else None,
            max_files=max_files,
            index=opts.get("index") or None,
        )

    def check_batch(self) -> None:
        """A batch read takes no streaming option (they would be ignored)."""
        given = [n for n, v in (("startingPosition", self.starting), ("maxBytesPerTrigger", self.max_bytes),
                                ("maxFilesPerTrigger", self.max_files)) if v is not None]
        if given:
            raise ValueError(f"option(s) {given} apply to spark.readStream only; a batch read takes start/stop, "
                             "since/until or gtids")

    def check_stream(self) -> None:
        """A stream takes startingPosition, not start/stop (byte offsets in the first and last file)."""
        if self.start is not None or self.stop is not None:
            raise ValueError("spark.readStream takes startingPosition (earliest, latest, FILE:POS, a GTID or a time), "
                             "not start/stop")


def _bytes_option(name: str, text: str) -> int:
    try:
        return text_bytes(text)
    except ValueError as exc:
        raise ValueError(f"option {name}={text!r}: {exc}") from None


# -- the schema on the driver ----------------------------------------------------------------
@dataclass
class Resolved:
    """What the driver found: the tables read, their Spark schema, each table's plan (its one
    schema over its layouts, :mod:`vecbinlog.decode.tableplan`) and where layouts and DDL stand at
    each offset (to give each split)."""

    tables: list[str]
    schema: StructType
    plans: dict[str, TablePlan]
    history: SchemaHistory


#: binlog bytes above which a batch read without an archive index warns (ArchiveIndexWarning):
#: the driver walks them all before the first task starts (schema and partitions of 64 MB of small
#: transactions in 122 files: 0.41 s here, serially; an archive in object storage streams every byte to it)
INDEX_ADVISED_BYTES = 1 << 30


def resolve_tables(paths: Sequence[str], tables: Sequence[str] | None, config: ReadConfig | None = None,
                   index: str | None = None, *, none_found: bool = False, **options: Any) -> Resolved:
    """The tables ``tables`` (globs) matches in the files, and their common Spark schema.

    The files' headers, TABLE_MAPs and DDL are walked (no row is decoded), so that a table's
    schema is the one ``read_table`` gives it over every layout of the files read (ALTER
    TABLE, a table dropped and created again); with ``index``, their archive index is read
    instead (:func:`vecbinlog.index.index_history`). Without ``tables`` the files must hold exactly
    one table. Several matching tables must have the same Spark schema (shards of one table):
    a ``_table`` column is then added. Raises ValueError, naming the tables found, otherwise;
    but with ``none_found`` (a schema given by the user), no table is not an error: the
    Resolved has no tables (a batch read is empty, a stream reads the tables once they come).
    """
    config = config if config is not None else ReadConfig.build(**options)
    config = config.replace(filter=dataclasses.replace(config.filter, tables=RowsFilter.make(tables).tables))
    if index is not None:
        try:
            history = index_history(list(paths), index, config, filesystem=config.filesystem)
        except ArchiveIndexError:
            if not current_index(list(paths)[:1], index, filesystem=config.filesystem):
                raise  # (not an index of these files)
            history = archive_history(list(paths), config, index)  # files newer than the index (a stream's): walked
    else:
        with Binlog(list(paths), config) as log, warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncatedWarning)  # said by what reads rows: plan_splits, a stream's Archive
            history = log.history()
    found = list(history.plans)
    if not found and none_found and tables is not None:
        return Resolved([], StructType([]), {}, history)
    if not found and index is not None:
        listed = list(indexed_tables(load_index(list(paths), index, filesystem=config.filesystem)))
    elif not found:
        with Binlog(list(paths), config.over_range(None, None).replace(filter=RowsFilter())) as every:
            listed = every.tables
    if not found:
        want = f" matching {list(tables)}" if tables else ""
        raise ValueError(f"no table{want} has rows events in {', '.join(paths)}; tables: {listed}")
    if tables is None and len(found) > 1:
        raise ValueError(
            f"the files hold {len(found)} tables: {found}; choose with .option('table', 'db.table') "
            "(globs and comma-separated lists are accepted)"
        )
    schemas = {name: spark_schema(_returned(config, history.plans[name].schema)) for name in found}
    first = schemas[found[0]]
    differ = [name for name in found if schemas[name] != first]
    if differ:
        raise ValueError(
            f"the tables {found} differ in their columns ({found[0]} vs {differ[0]}); "
            "read them one at a time, one table option each"
        )
    keys = {name: primary_key(history, name) for name in found}
    key = keys[found[0]]
    if len({tuple(k) if k else None for k in keys.values()}) == 1 and key:
        first = with_key(first, key)
    if len(found) > 1:
        first = StructType(first.fields + [StructField(TABLE_COLUMN, StringType(), nullable=False)])
    return Resolved(found, first, history.plans, history)


def _returned(config: ReadConfig, schema: pa.Schema, strict: bool = True) -> pa.Schema:
    """The columns of a table's schema the read returns (``columns``, ``metadata`` options);
    with ``strict``, a column asked for that the table lacks is a ValueError naming it."""
    names = config.project(schema)
    if strict and config.columns is not None and len(names) < len(config.columns):
        missing = [c for c in config.columns if c not in schema.names]
        raise ValueError(f"option columns={','.join(config.columns)!r}: "
                         f"{schema.metadata.get(b'vecbinlog.table', b'').decode()} has no column "
                         f"{', '.join(map(repr, missing))}; its columns: {', '.join(schema.names)}")
    return pa.schema([schema.field(n) for n in names], metadata=schema.metadata)


def with_key(schema: StructType, key: Sequence[str]) -> StructType:
    """``schema`` with the primary key's columns marked in their field metadata
    (``vecbinlog.primary_key``: the place in the key), which :func:`net_changes` reads."""
    return StructType([
        StructField(f.name, f.dataType, f.nullable, {**(f.metadata or {}), KEY_METADATA: list(key).index(f.name)})
        if f.name in key else f
        for f in schema.fields
    ])


# -- the data source ---------------------------------------------------------------------------
def pack_splits(splits: Sequence[Split], target_bytes: int) -> list[list[Split]]:
    """Consecutive splits grouped so that each group holds about ``target_bytes``: a large
    file's splits stay one per group, small files share one."""
    groups: list[list[Split]] = []
    size = target_bytes
    for s in splits:
        if size >= target_bytes:
            groups.append([])
            size = 0
        groups[-1].append(s)
        size += s.size if s.size is not None else target_bytes  # a whole compressed file: a group of its own
    return groups


def decode_splits(splits: Iterable[Split], plans: Mapping[str, TablePlan], schema: StructType,
                  config: ReadConfig, given: bool = False) -> Iterator[pa.RecordBatch]:
    """Batches of the tables of ``plans`` in the splits (planned with their version states,
    :func:`vecbinlog.splits.with_history`), each fitted to its table's plan, then cast to the
    Arrow form of ``schema`` (``given`` by the user: its columns only, see :func:`conform`)."""
    target = arrow_schema(schema)
    tables = list(plans)
    if not tables:  # (a schema given by the user, of tables without rows when the read was planned)
        return
    for name, batch in _told_by_driver(read_splits(splits, tables, config, project=False)):
        if name in plans:  # the patterns were resolved on the driver: a table born later is not read
            fitted = plans[name].conform(batch)
            yield conform(fitted.select(config.project(fitted.schema)), target, name, given=given, rows=fitted)


def _told_by_driver(batches: Iterator[tuple[str, pa.RecordBatch]]) -> Iterator[tuple[str, pa.RecordBatch]]:
    """``batches`` without a TruncatedWarning: the driver said it once, as it planned the splits
    (:func:`~vecbinlog.splits.plan_splits`, or the stream's :class:`~vecbinlog.streaming.Archive`),
    and every task whose split ends the file would say it again. The filter is on only while
    vecbinlog decodes (not while Spark holds a batch)."""
    while True:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TruncatedWarning)
            item = next(batches, None)
        if item is None:
            return
        yield item


def _differs(schema: StructType, found: StructType) -> bool:
    """``schema`` (the reader's) is not the one found: the user gave another."""
    return [(f.name, f.dataType) for f in schema.fields] != [(f.name, f.dataType) for f in found.fields]


class BinlogReader(DataSourceReader):
    """Plans the splits on the driver (headers only) and decodes one group per task."""

    def __init__(self, options: ReadOptions, resolved: Resolved, schema: StructType):
        self.options = options
        self.plans = resolved.plans
        self.schema = schema
        #: a schema the user gave (``spark.read.schema(...)``) that is not the one found: its
        #: columns are read (others left out, those it adds null), each value cast to its type
        self.given = _differs(schema, resolved.schema)
        self._history = resolved.history  # where versions and DDL stand at each offset, for partitions()
        #: the filters of the query the read answers (:class:`BinlogPushdownReader`): none here
        self.pushdown = Pushdown()

    def partitions(self) -> list[InputPartition]:
        o, pushed = self.options, self.pushdown
        config = pushed.config(o.config)  # (the filters pushFilters kept: more files left out with an index)
        splits = [] if pushed.empty else plan_splits(
            o.paths, o.split_bytes, config,  # with an index: files out of since/until, or without the gtids, left out
            index=o.index, history=self._history if o.index is None else None,  # the schema's walk: no file walked again
        )
        walked = sum(s.size or 0 for s in splits)
        if o.index is None and walked > INDEX_ADVISED_BYTES:
            warn(f"planning walked {walked:,} bytes of binlogs on the driver (for the schema and the splits): "
                 "build an archive index where the files are (vecbinlog.build_index, `vecbinlog index "
                 "ARCHIVE LOCATION` or vecbinlog.spark.build_index) and read with .option('index', LOCATION)",
                 ArchiveIndexWarning)
        if o.index is not None:  # each split knows where the DDL and the versions stand at its start
            splits = with_history(splits, self._history)  # (planned from the history: it does already)
        splits = [s for s in splits if pushed.keeps(s)]  # (by the names of their files, their offsets)
        # each partition's value: the splits one task decodes, in order
        return [InputPartition(group) for group in pack_splits(splits, o.split_bytes)] or [InputPartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        config = self.pushdown.config(self.options.config)
        for batch in decode_splits(partition.value, self.plans, self.schema, config, self.given):
            batch = self.pushdown.filter(batch)  # (exactly: Spark does not check the filters kept again)
            if batch.num_rows:
                yield batch


class BinlogPushdownReader(BinlogReader):
    """:class:`BinlogReader` with Spark's filters on the metadata columns pushed into the read
    (:mod:`vecbinlog.spark.pushdown`); pyspark 4.1+, with ``spark.sql.python.filterPushdown.enabled``."""

    def pushFilters(self, filters: list[Any]) -> Iterable[Any]:
        """Keep the filters the read answers exactly; the others go back to Spark. ``df.explain()``
        lists those kept as the scan's ``PushedFilters``."""
        if self.given:  # a schema of the user's: its types may not be the source's
            return filters
        self.pushdown, back = split_filters(filters, self.schema)
        return back


class BinlogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("binlog")``: a growing archive, taken micro-batch by micro-batch.

    Offsets are :class:`~vecbinlog.streaming.Position` s as JSON, ``{"file": ..., "pos": ...}``
    (a binlog's name and a real byte offset), always outside any transaction: a micro-batch
    holds whole transactions, from where the last one ended to the end of what is complete
    (:meth:`vecbinlog.streaming.Archive.end`: a final file to its end, the newest one to its
    last complete transaction). The same offsets always give the same rows, so a query
    restarted from its checkpoint re-reads a batch it had not committed exactly as before.

    The query's schema is fixed when it starts (``schema()``: every layout of the table in the
    archive then, as the batch source). The driver walks each new stretch's headers for the
    layouts and DDL (never a row); a layout the schema cannot hold (a new column, a type no
    Arrow type widens, a new table of a glob without ``_table``) stops the stream before the
    first transaction in it, after every change before it was delivered, with a
    :class:`~vecbinlog.streaming.SchemaChangedError`: restart the query (from its checkpoint)
    and its schema has the new column. Nothing is dropped. A schema given by the user
    (``spark.readStream.schema(...)``) holds every layout: its columns are read, as a batch
    read with one reads them.

    The driver's state (:class:`~vecbinlog.streaming.Archive` walks, the layouts along the
    stream) lives in the process Spark keeps for the source; a task gets only its splits and
    the plans (:meth:`partitions`).
    """

    def __init__(self, options: ReadOptions, schema: StructType, given: bool = False,
                 found: SchemaHistory | None = None) -> None:
        self.options = options
        self.schema = schema
        #: the schema's walk of the archive (:func:`resolve_tables`): the stream's first stretch
        #: when the files are still those it walked, as large (``StreamHistory.walk``'s ``walked``)
        self._found = found
        #: a schema the user gave (``spark.readStream.schema(...)``): every layout fits it, its
        #: columns read (others left out, those it adds null), each value cast to its type
        self.given = given
        self._archive: Archive | None = None
        self._history: StreamHistory | None = None
        self._target: Position | None = None  # Trigger.AvailableNow: no further than this
        self._wall: tuple[Position, NewLayout] | None = None  # a layout the schema cannot hold starts here
        self._last: Position | None = None

    def __getstate__(self) -> dict[str, Any]:  # tasks need the options and the schema only
        return {**self.__dict__, "_archive": None, "_history": None, "_found": None}

    # -- the driver's state ---------------------------------------------------------------
    @property
    def archive(self) -> Archive:
        if self._archive is None:
            self._archive = Archive(self.options.spec, self.options.config, index=self.options.index)
        return self._archive

    @property
    def history(self) -> StreamHistory:
        """The schema history along the stream, walked from the archive's first file to what
        is complete the first time it is needed (a restart walks it again)."""
        if self._history is None:
            self._history = StreamHistory(self.options.config)
            first = self.archive.first()
            self._take(self.archive.latest(), first, begin=first)
            self._found = None  # (taken, or the files changed since)
        return self._history

    def _fits(self, news: list[NewLayout]) -> bool:
        """Whether the query's schema holds the rows of new layouts, as they are (with the
        layouts known before them: a column that a later layout widened is held widened)."""
        plans = self.history.plans if self._history is not None else {}
        want = {f.name: f.dataType.simpleString() for f in self.schema.fields}
        tables = list(dict.fromkeys(new.table for new in news))
        for table in tables:
            if table not in plans and (plans or len(tables) > 1) and TABLE_COLUMN not in want:
                return False  # a second table of the glob: its rows could not be told apart
            if self.given:
                continue  # conformed to the user's schema (a value that does not fit: an error naming it)
            trial = copy.deepcopy(plans.get(table)) or TablePlan(table)
            for new in news:
                if new.table == table:
                    trial.add(new.version, new.schema)
            returned = _returned(self.options.config, trial.schema, strict=False)
            if not all(want.get(f.name) == f.dataType.simpleString() for f in spark_schema(returned).fields):
                return False
        return True

    def _take(self, end: Position, start: Position, begin: Position | None = None) -> Position:
        """Walk the layouts up to ``end``, stopping before the first layout the schema cannot
        hold (the wall); returns ``end``, or the wall when it comes first. The first walk is
        the schema's (:func:`resolve_tables`) when the files are still those it walked."""
        history = self._history
        assert history is not None
        if history.known is not None and end <= history.known:
            return end
        walked = self._found if history.known is None and self.options.index is None else None
        chunk = history.walk(self.archive, end, first=begin, walked=walked)
        news = history.new_layouts(chunk)
        # all of them at once first: the schema a query starts with widens the types over every
        # layout to the end of what is complete then, which the earlier ones alone do not give
        bad = None if self._fits(news) else next((new for new in news if not self._fits([new])), None)
        if bad is None:
            history.take(chunk)
            return end
        lo = chunk.first.pos if chunk.first.file == bad.at.file else 4
        wall = Position(bad.at.file, self.archive.starts_before(bad.at, lo))
        if wall > chunk.first:
            history.take(history.walk(self.archive, wall, first=begin))
        self._wall = (wall, bad)
        return wall if wall > start else start

    def _stop_at_wall(self, start: Position) -> None:
        if self._wall is not None and self._wall[0] <= start:
            wall, new = self._wall
            raise SchemaChangedError(
                f"{new.table} has a new layout (_schema_version {new.version}: columns "
                f"{[f.name for f in new.schema if not f.name.startswith('_')]}) from its rows event at {new.at}, which "
                f"the stream's schema cannot hold (it was fixed when the query started); every change before {wall} "
                "was read: restart the query (from its checkpoint) to read on with a schema that has it",
                path=redact(self.archive.path_of(new.at.file)), offset=new.at.pos, event_type="rows event")

    # -- the DataSourceStreamReader interface ------------------------------------------------
    def initialOffset(self) -> dict[str, Any]:
        """Where a new query starts: the ``startingPosition`` option (``earliest`` by default)."""
        return self.archive.resolve_start(self.options.starting or "earliest").to_offset()

    def getDefaultReadLimit(self) -> Any:
        """``maxBytesPerTrigger`` (or, without it, ``maxFilesPerTrigger``) as a read limit."""
        if self.options.max_bytes is not None:
            return ReadMaxBytes(self.options.max_bytes)
        if self.options.max_files is not None:
            return ReadMaxFiles(self.options.max_files)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """``trigger(availableNow=True)``: read what is complete now, then stop."""
        self._target = self.archive.latest()

    def latestOffset(self, start: dict[str, Any] | None = None, limit: Any = None) -> dict[str, Any]:
        """The end of the next micro-batch from ``start``: what is complete, within the read
        limit (pyspark 4.2+ passes ``start`` and ``limit``; older ones neither, and then a
        micro-batch reads all there is)."""
        if start is None:
            begin = self._last or Position.from_offset(self.initialOffset())
        else:
            begin = Position.from_offset(start)
        self._stop_at_wall(begin)
        history = self.history
        unlimited = limit is None or (ReadAllAvailable is not None and isinstance(limit, ReadAllAvailable))
        max_bytes = None if unlimited else getattr(limit, "max_bytes", self.options.max_bytes)
        max_files = None if unlimited else getattr(limit, "max_files", self.options.max_files)
        target = self._target
        if self._wall is not None and (target is None or self._wall[0] < target):
            target = self._wall[0]
        end = self.archive.end(begin, max_bytes=max_bytes, max_files=max_files, target=target)
        if history.known is None or history.known < end:
            end = self._take(end, begin)
        self._stop_at_wall(begin)
        self._last = end
        return end.to_offset()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        """The splits of ``[start, end)``, each told where the DDL and the layouts stand at its
        start, packed as the batch source packs them; each partition also carries the tables'
        plans (a task has no other state)."""
        begin, stop = Position.from_offset(start), Position.from_offset(end)
        history = self.history
        if history.known is None or history.known < stop:  # a batch of the offset log, replayed after a restart
            self._take(stop, begin)
        splits = history.with_states(self.archive.splits(begin, stop, self.options.split_bytes))
        plans = dict(history.plans)
        return [InputPartition((group, plans)) for group in pack_splits(splits, self.options.split_bytes)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        splits, plans = partition.value
        yield from decode_splits(splits, plans, self.schema, self.options.config, self.given)

    def commit(self, end: dict[str, Any]) -> None:
        """Spark will not ask for anything before ``end`` again: let go of what was found before it."""
        at = Position.from_offset(end)
        if self._archive is not None:
            self._archive.forget(at)
        if self._history is not None:
            self._history.forget(at)


class BinlogDataSource(DataSource):
    """``spark.read.format("binlog")``: the change log of one table (or of same-shaped shards).

    Options (all strings, case-insensitive):

    ==================  ==============================================================
    ``table``           ``db.table``, a glob (``shop_*.orders``) or a comma-separated list;
                        without it the files must hold exactly one table. Several
                        matching tables must share their columns; ``_table`` says which.
    ``start``/``stop``  byte offsets: ``start`` in the first file (where a transaction
                        starts), ``stop`` in the last
    ``since``/``until`` ISO 8601 datetimes (no time zone = UTC)
    ``change_types``    ``insert,update,delete`` (some of)
    ``signedness``, ``charsets``, ``names``   JSON, as the Python options of ``vecbinlog.open``
    ``invalid_dates``   ``null`` (default) or ``string``
    ``strict``, ``verify_checksums``          ``true``/``false``
    ``rolled_back``     ``exclude`` (default) or ``keep``; ``non_transactional``: table globs
    ``queries``         ``true`` adds the ``_query`` column
    ``gtids``           only transactions in this GTID set (as ``vecbinlog.open(gtids=)``)
    ``split_bytes``     bytes of binlog per task (default 128m; ``64m``, ``1g``... accepted)
    ``index``           an archive index of the files (``vecbinlog.build_index``): the
                        schema and the splits come from it, no binlog read on the driver;
                        with ``table``, only the ranges where it has rows events are read;
                        with ``since``/``until`` or ``gtids``, only the files that may
                        hold rows in them. A stream reads the files the index holds as
                        they are from it (never the newest), and walks the others
    ==================  ==============================================================

    ``spark.readStream`` (:class:`BinlogStreamReader`) takes the same options but
    ``start``/``stop``, and:

    ======================  ==========================================================
    ``startingPosition``    where a new query starts: ``earliest`` (default), ``latest``,
                            ``FILE:POS`` (a transaction start), a GTID (the stream starts
                            after that transaction) or an ISO 8601 date and time
    ``maxBytesPerTrigger``  binlog bytes per micro-batch (at least one transaction)
    ``maxFilesPerTrigger``  binlog files per micro-batch
    ======================  ==========================================================

    Files: a folder (what its ``*.index`` lists, else its files that start with the binlog
    magic), a path, a glob, a ``mysql-bin.index`` or a
    comma-separated list (local, or URIs: see "Reading archives"), or ``load([...])``; they
    are read in name order, which is log order for binlog names.
    """

    #: the batch reader (:class:`BinlogPushdownSource`: one that takes Spark's filters)
    reader_class: type[BinlogReader] = BinlogReader

    @classmethod
    def name(cls) -> str:
        return "binlog"

    def _parsed(self) -> ReadOptions:
        """The options, parsed; a bad one is a ValueError of a short traceback (Spark prints the
        traceback before the message), its message ``option NAME='VALUE': what is wrong``."""
        try:
            return ReadOptions.parse(self.options)
        except ValueError as exc:
            raise ValueError(str(exc)) from None

    def schema(self) -> StructType:
        o = self._parsed()
        self._resolved = resolve_tables(o.paths, o.tables, o.config, o.index)
        return self._resolved.schema

    def reader(self, schema: StructType) -> BinlogReader:
        o = self._parsed()
        o.check_batch()
        resolved = getattr(self, "_resolved", None)
        if resolved is None:  # a schema given by the user: schema() was not called
            resolved = resolve_tables(o.paths, o.tables, o.config, o.index, none_found=True)
        return self.reader_class(o, resolved, schema)

    def streamReader(self, schema: StructType) -> BinlogStreamReader:
        """``spark.readStream.format("binlog")``: see :class:`BinlogStreamReader`."""
        o = self._parsed()
        o.check_stream()
        resolved = getattr(self, "_resolved", None)
        if resolved is None:  # a schema given by the user (schema() was not called): is it the one found?
            resolved = resolve_tables(o.paths, o.tables, o.config, o.index, none_found=True)
        return BinlogStreamReader(o, schema, _differs(schema, resolved.schema), resolved.history)


class BinlogPushdownSource(BinlogDataSource):
    """The ``binlog`` source whose batch reader pushes filters (:class:`BinlogPushdownReader`);
    :func:`vecbinlog.spark.register` registers it where pyspark has ``pushFilters``. Streams read
    as :class:`BinlogDataSource`'s."""

    reader_class = BinlogPushdownReader
