"""Spark: a ``binlog`` data source (Spark 4's Python Data Source API), batch and streaming,
and Arrow UDF helpers.

``pip install vecbinlog[spark]``; pyspark is imported here only, never by the core.

>>> import vecbinlog.spark                                               # doctest: +SKIP
>>> vecbinlog.spark.register(spark)                                      # doctest: +SKIP
>>> df = (spark.read.format("binlog").option("table", "shop.orders")     # doctest: +SKIP
...       .load("/archive/mysql-bin.*"))
>>> stream = (spark.readStream.format("binlog").option("table", "shop.orders")  # doctest: +SKIP
...           .load("s3://binlogs/prod/"))                               # a growing archive

The stream (:class:`BinlogStreamReader`) takes what is new in the archive micro-batch by
micro-batch, whole transactions from where the last one ended (:mod:`vecbinlog.streaming`);
:func:`net_changes` reduces a micro-batch to one row per key for a MERGE into a lake table.

Each file is cut into splits of about ``split_bytes`` that start at transaction boundaries
(:mod:`vecbinlog.splits`); consecutive splits are packed into Spark partitions of about
``split_bytes``, so a task decodes one range of one large file, or several small files.

Types: Spark has no unsigned integers, no decimals above 38 digits and no dictionary
arrays, so the Arrow schema of :meth:`vecbinlog.Binlog.schema` is mapped, type by type, as
:func:`spark_type` says; every batch is cast to exactly the Arrow form of that Spark schema
before Spark sees it. Nothing is lost: unsigned integers get the next wider signed type
(``uint64`` becomes ``decimal(20,0)``), ``decimal256`` becomes its exact decimal text.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from .netchanges import KEY_METADATA, checked_key, table_key
from .reader import Binlog
from .versions import TableLayouts
from .sources import redact
from .splits import DEFAULT_SPLIT_BYTES, Split, plan_splits, read_split, split_paths, with_layouts
from .streaming import Archive, NewLayout, Position, SchemaChangedError, StreamLayouts, archive_files
from .tableplan import TablePlan

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

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "BinlogDataSource",
    "register",
    "spark_type",
    "spark_schema",
    "splits_dataframe",
    "map_splits",
    "apply_splits",
    "net_changes",
    "key_columns",
    "BinlogStreamReader",
    "TABLE_COLUMN",
]

#: Added (string) when the ``table`` option matches more than one table.
TABLE_COLUMN = "_table"
#: Spark's largest decimal precision (DecimalType.MAX_PRECISION).
_SPARK_MAX_PRECISION = 38


# -- types ---------------------------------------------------------------------------------
_PLAIN = {
    pa.bool_(): BooleanType(),
    pa.int8(): ByteType(),
    pa.int16(): ShortType(),
    pa.int32(): IntegerType(),
    pa.int64(): LongType(),
    pa.uint8(): ShortType(),  # unsigned: the next signed type holds every value
    pa.uint16(): IntegerType(),
    pa.uint32(): LongType(),
    pa.uint64(): DecimalType(20, 0),  # 18446744073709551615 has 20 digits
    pa.float16(): FloatType(),
    pa.float32(): FloatType(),
    pa.float64(): DoubleType(),
    pa.string(): StringType(),
    pa.large_string(): StringType(),
    pa.binary(): BinaryType(),
    pa.large_binary(): BinaryType(),
    pa.date32(): DateType(),
    pa.date64(): DateType(),
    pa.null(): NullType(),
}


def spark_type(t: pa.DataType) -> DataType:
    """The Spark type that holds every value of an Arrow type exactly.

    ===============================  =========================================
    Arrow                            Spark
    ===============================  =========================================
    int8/16/32/64, float, bool       the same
    uint8, uint16, uint32            smallint, int, bigint (the next signed type)
    uint64                           decimal(20,0)
    decimal128(p, s)                 decimal(p, s)
    decimal256(p, s), p > 38         string: the exact decimal text (``"-1.50"``)
    timestamp with a time zone       timestamp (UTC instants)
    timestamp without (DATETIME)     timestamp_ntz (wall-clock time)
    duration (TIME)                  interval day to second (microseconds)
    date32                           date
    string, large_string             string
    binary, large_binary, fixed      binary
    dictionary<k, v>                 the type of v (ENUM labels: string)
    list, large_list, fixed_size     array of the mapped element type
    struct                           struct of the mapped field types
    map                              map of the mapped key and value types
    ===============================  =========================================

    Raises TypeError for Arrow types no vecbinlog column has.
    """
    if t in _PLAIN:
        return _PLAIN[t]
    if pa.types.is_fixed_size_binary(t):
        return BinaryType()
    if pa.types.is_decimal(t):
        return DecimalType(t.precision, t.scale) if t.precision <= _SPARK_MAX_PRECISION else StringType()
    if pa.types.is_timestamp(t):
        return TimestampType() if t.tz is not None else TimestampNTZType()
    if pa.types.is_duration(t):
        return DayTimeIntervalType()
    if pa.types.is_dictionary(t):
        return spark_type(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return ArrayType(spark_type(t.value_type), containsNull=t.value_field.nullable)
    if pa.types.is_map(t):
        return MapType(spark_type(t.key_type), spark_type(t.item_type), valueContainsNull=t.item_field.nullable)
    if pa.types.is_struct(t):
        return StructType([_spark_field(t.field(i)) for i in range(t.num_fields)])
    raise TypeError(f"no Spark type for the Arrow type {t}")


def _spark_field(f: pa.Field) -> StructField:
    return StructField(f.name, spark_type(f.type), nullable=f.nullable)


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow schema (:func:`spark_type` per field, nullability kept)."""
    return StructType([_spark_field(f) for f in schema])


def _arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema PySpark expects batches of ``schema`` in (its own conversion)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(schema, timezone="UTC")  # pyspark 4.1+
    except TypeError:
        return to_arrow_schema(schema)  # pyspark 4.0: timestamps are UTC by default


def decimal_text(arr: pa.Array) -> pa.Array:
    """A decimal array as plain text with all ``scale`` fraction digits, as MySQL prints it
    (``-0.000000000000000000000000000001``, never Arrow's ``-1E-30``), for every value at once."""
    import pyarrow.compute as pc

    t = arr.type
    # the same bytes read as a decimal of scale 0: the unscaled integer, printed without exponent
    as_integer = (pa.decimal256 if t.bit_width == 256 else pa.decimal128)(t.precision, 0)
    unscaled = pa.Array.from_buffers(as_integer, len(arr), arr.buffers(), offset=arr.offset).cast(pa.string())
    if t.scale <= 0:
        return unscaled
    digits = pc.utf8_lpad(pc.utf8_ltrim(unscaled, characters="-"), width=t.scale + 1, padding="0")
    whole = pc.binary_join_element_wise(
        pc.if_else(pc.starts_with(unscaled, "-"), "-", ""), pc.utf8_slice_codeunits(digits, 0, -t.scale), ""
    )
    fraction = pc.utf8_slice_codeunits(digits, -t.scale, 2**31 - 1)
    return pc.binary_join_element_wise(whole, fraction, ".")


def conform(batch: pa.RecordBatch, target: pa.Schema, table: str | None = None) -> pa.RecordBatch:
    """``batch`` cast, column by column (by name), to exactly ``target``.

    A target column the batch lacks (a layout that has fewer columns) is all null; a
    batch column the target lacks is an error, never dropped silently.
    """
    names = set(batch.schema.names)
    extra = names - set(target.names)
    if extra:
        raise ValueError(
            f"{table or 'batch'}: columns {sorted(extra)} are not in the schema {target.names} (a batch must be "
            "fitted to its table's plan first: TablePlan.conform)"
        )
    arrays = []
    for field in target:
        if field.name in names:
            col = batch.column(field.name)
            try:
                if pa.types.is_decimal(col.type) and pa.types.is_string(field.type):
                    arrays.append(decimal_text(col))
                else:
                    arrays.append(col.cast(field.type) if col.type != field.type else col)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise ValueError(
                    f"{table or 'batch'}: column {field.name!r} of type {col.type} cannot be cast to {field.type} "
                    f"(text that is invalid in its charset comes back as binary: see the charsets option): {exc}"
                ) from exc
        elif field.name == TABLE_COLUMN and table is not None:
            arrays.append(pa.repeat(pa.scalar(table, field.type), batch.num_rows))
        else:
            arrays.append(pa.nulls(batch.num_rows, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)


# -- options -------------------------------------------------------------------------------
_JSON_OPTIONS = ("signedness", "charsets", "names")
_BOOL_OPTIONS = ("strict", "verify_checksums", "queries")


def _parse_bool(name: str, value: str) -> bool:
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise ValueError(f"option {name}: 'true' or 'false', not {value!r}")
    return v == "true"


def _parse_bytes(name: str, value: str) -> int:
    """``"134217728"``, ``"128m"``, ``"64k"``, ``"1g"``."""
    v = value.strip().lower().removesuffix("b")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(v[-1:], 1)
    try:
        n = int(v[:-1] if scale > 1 else v) * scale
    except ValueError:
        raise ValueError(f"option {name}: a byte count such as 134217728 or 128m, not {value!r}") from None
    if n < 1:
        raise ValueError(f"option {name}: must be at least 1 byte, not {value!r}")
    return n


#: options of spark.readStream only (Spark's file sources name the limits so)
_STREAM_OPTIONS = ("startingposition", "maxbytespertrigger", "maxfilespertrigger")


@dataclass(frozen=True)
class ReadOptions:
    """The data source's options, parsed: what to read, how to split, how to decode."""

    paths: tuple[str, ...]
    tables: tuple[str, ...] | None
    split_bytes: int
    start: int | None
    stop: int | None
    decode: dict[str, Any]  #: options of Binlog other than tables/start/stop
    #: the paths as given (a folder, globs, an index...), listed again at each micro-batch of a stream
    spec: tuple[str, ...] = ()
    #: spark.readStream: where a new query starts (``earliest``, ``latest``, ``FILE:POS``, a GTID, a time)
    starting: str | None = None
    max_bytes: int | None = None  #: spark.readStream: ``maxBytesPerTrigger``
    max_files: int | None = None  #: spark.readStream: ``maxFilesPerTrigger``

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        """Spark options (case-insensitive strings) to typed ones; a bad value is a ValueError."""
        opts = {k.lower(): v for k, v in options.items()}
        known = {"path", "paths", "table", "tables", "split_bytes", "start", "stop", "since", "until",
                 "change_types", "invalid_dates", "segment_bytes", "batch_rows", "rolled_back", "non_transactional", "gtids",
                 "threads", *_JSON_OPTIONS, *_BOOL_OPTIONS, *_STREAM_OPTIONS}
        unknown = set(opts) - known
        if unknown:
            raise ValueError(f"unknown binlog option(s) {sorted(unknown)}; known: {sorted(known)}")
        raw_paths: list[str] = []
        if "paths" in opts:  # DataFrameReader.load([...]) passes a JSON list
            raw_paths.extend(json.loads(opts["paths"]))
        if "path" in opts:
            raw_paths.append(opts["path"])
        if not raw_paths:
            raise ValueError("no binlog files: spark.read.format('binlog').load(path, glob or comma-separated list)")
        tables = opts.get("table") or opts.get("tables")
        decode: dict[str, Any] = {}
        for name in _JSON_OPTIONS:
            if name in opts:
                try:
                    decode[name] = json.loads(opts[name])
                except json.JSONDecodeError as exc:
                    raise ValueError(f"option {name}: not JSON ({exc}): {opts[name]!r}") from exc
        for name in _BOOL_OPTIONS:
            if name in opts:
                decode[name] = _parse_bool(name, opts[name])
        for name in ("since", "until"):
            if name in opts:
                decode[name] = datetime.fromisoformat(opts[name])
        if "change_types" in opts:
            decode["change_types"] = [c.strip() for c in opts["change_types"].split(",") if c.strip()]
        if "invalid_dates" in opts:
            decode["invalid_dates"] = opts["invalid_dates"]
        if "rolled_back" in opts:
            decode["rolled_back"] = opts["rolled_back"]
        if "gtids" in opts:
            decode["gtids"] = opts["gtids"]
        if "non_transactional" in opts:
            decode["non_transactional"] = [t.strip() for t in opts["non_transactional"].split(",") if t.strip()]
        if "segment_bytes" in opts:
            decode["segment_bytes"] = _parse_bytes("segment_bytes", opts["segment_bytes"])
        if "threads" in opts:
            try:
                decode["threads"] = int(opts["threads"])
            except ValueError:
                raise ValueError(f"option threads: not an integer: {opts['threads']!r}") from None
        if "batch_rows" in opts:
            try:
                decode["batch_rows"] = int(opts["batch_rows"])
            except ValueError as exc:
                raise ValueError(f"option batch_rows: not an integer: {opts['batch_rows']!r}") from exc
        max_files = None
        if "maxfilespertrigger" in opts:
            try:
                max_files = int(opts["maxfilespertrigger"])
            except ValueError:
                max_files = 0
            if max_files < 1:
                raise ValueError(f"option maxFilesPerTrigger: a positive integer, not {opts['maxfilespertrigger']!r}")
        return cls(
            paths=tuple(archive_files(raw_paths)),
            tables=None if not tables else tuple(t.strip() for t in tables.split(",") if t.strip()),
            split_bytes=_parse_bytes("split_bytes", opts["split_bytes"]) if "split_bytes" in opts else DEFAULT_SPLIT_BYTES,
            start=int(opts["start"]) if "start" in opts else None,
            stop=int(opts["stop"]) if "stop" in opts else None,
            decode=decode,
            spec=tuple(raw_paths),
            starting=opts.get("startingposition"),
            max_bytes=_parse_bytes("maxBytesPerTrigger", opts["maxbytespertrigger"]) if "maxbytespertrigger" in opts
            else None,
            max_files=max_files,
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


# -- the schema on the driver ----------------------------------------------------------------
@dataclass
class Resolved:
    """What the driver found: the tables read, their Spark schema, each table's plan (its one
    schema over its layouts, :mod:`vecbinlog.tableplan`) and where layouts and DDL stand at
    each offset (to give each split)."""

    tables: list[str]
    schema: StructType
    plans: dict[str, TablePlan]
    layouts: TableLayouts


def resolve_tables(paths: Sequence[str], tables: Sequence[str] | None, **options: Any) -> Resolved:
    """The tables ``tables`` (globs) matches in the files, and their common Spark schema.

    The files' headers, TABLE_MAPs and DDL are walked (no row is decoded), so that a table's
    schema is the one ``read_table`` gives it over every layout of the files read (ALTER
    TABLE, a table dropped and created again). Without ``tables`` the files must hold exactly
    one table. Several matching tables must have the same Spark schema (shards of one table):
    a ``_table`` column is then added. Raises ValueError, naming the tables found, otherwise.
    """
    with Binlog(list(paths), tables=tables, **options) as log:
        layouts = log.layouts()
    found = list(layouts.plans)
    if not found:
        with Binlog(list(paths), **{k: v for k, v in options.items() if k not in ("start", "stop")}) as every:
            listed = every.tables
        want = f" matching {list(tables)}" if tables else ""
        raise ValueError(f"no table{want} has rows events in {', '.join(paths)}; tables: {listed}")
    if tables is None and len(found) > 1:
        raise ValueError(
            f"the files hold {len(found)} tables: {found}; choose with .option('table', 'db.table') "
            "(globs and comma-separated lists are accepted)"
        )
    schemas = {name: spark_schema(layouts.plans[name].schema) for name in found}
    first = schemas[found[0]]
    differ = [name for name in found if schemas[name] != first]
    if differ:
        raise ValueError(
            f"the tables {found} differ in their columns ({found[0]} vs {differ[0]}); "
            "read them one at a time, one table option each"
        )
    keys = {name: table_key(layouts, name) for name in found}
    if len({tuple(k) if k else None for k in keys.values()}) == 1 and keys[found[0]]:
        first = with_key(first, keys[found[0]])
    if len(found) > 1:
        first = StructType(first.fields + [StructField(TABLE_COLUMN, StringType(), nullable=False)])
    return Resolved(found, first, layouts.plans, layouts)


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
                  decode: Mapping[str, Any]) -> Iterator[pa.RecordBatch]:
    """Batches of the tables of ``plans`` in the splits (planned with their layout states,
    :func:`vecbinlog.splits.with_layouts`), each fitted to its table's plan, then cast to the
    Arrow form of ``schema``."""
    target = _arrow_schema(schema)
    decode = {"threads": 1, **decode}  # Spark already runs a task per core (the threads option: more)
    tables = list(plans)
    for split in splits:
        for name, batch in read_split(split, tables, **decode):
            if name in plans:  # the patterns were resolved on the driver: a table born later is not read
                yield conform(plans[name].conform(batch), target, name)


class BinlogReader(DataSourceReader):
    """Plans the splits on the driver (headers only) and decodes one group per task."""

    def __init__(self, options: ReadOptions, resolved: Resolved, schema: StructType):
        self.options = options
        self.plans = resolved.plans
        self.schema = schema
        self._layouts = resolved.layouts  # where layouts and DDL stand at each offset, for partitions()

    def partitions(self) -> list[InputPartition]:
        o = self.options
        splits = plan_splits(
            o.paths, o.split_bytes, start=o.start, stop=o.stop,
            verify_checksums=o.decode.get("verify_checksums", True), tables=o.tables,
        )
        # each split knows where the DDL and the layouts stand at its start
        splits = with_layouts(splits, self._layouts)
        # each partition's value: the splits one task decodes, in order
        return [InputPartition(group) for group in pack_splits(splits, o.split_bytes)] or [InputPartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        yield from decode_splits(partition.value, self.plans, self.schema, self.options.decode)


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
    and its schema has the new column. Nothing is dropped.

    The driver's state (:class:`~vecbinlog.streaming.Archive` walks, the layouts along the
    stream) lives in the process Spark keeps for the source; a task gets only its splits and
    the plans (:meth:`partitions`).
    """

    def __init__(self, options: ReadOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self._archive: Archive | None = None
        self._layouts: StreamLayouts | None = None
        self._target: Position | None = None  # Trigger.AvailableNow: no further than this
        self._wall: tuple[Position, NewLayout] | None = None  # a layout the schema cannot hold starts here
        self._last: Position | None = None

    def __getstate__(self) -> dict[str, Any]:  # tasks need the options and the schema only
        return {**self.__dict__, "_archive": None, "_layouts": None}

    # -- the driver's state ---------------------------------------------------------------
    @property
    def archive(self) -> Archive:
        if self._archive is None:
            self._archive = Archive(self.options.spec, verify_checksums=self.options.decode.get("verify_checksums", True))
        return self._archive

    @property
    def layouts(self) -> StreamLayouts:
        """The layouts along the stream, walked from the archive's first file to what is
        complete the first time they are needed (a restart walks them again)."""
        if self._layouts is None:
            self._layouts = StreamLayouts({**self.options.decode, "tables": self.options.tables})
            first = self.archive.first()
            self._take(self.archive.latest(), first, begin=first)
        return self._layouts

    def _fits(self, new: NewLayout) -> bool:
        """Whether the query's schema holds the rows of a new layout, as they are."""
        plans = self.layouts.plans if self._layouts is not None else {}
        trial = copy.deepcopy(plans.get(new.table)) or TablePlan(new.table)
        trial.add(new.version, new.schema)
        want = {f.name: f.dataType.simpleString() for f in self.schema.fields}
        if new.table not in plans and plans and TABLE_COLUMN not in want:
            return False  # a second table of the glob: its rows could not be told apart
        return all(want.get(f.name) == f.dataType.simpleString() for f in spark_schema(trial.schema).fields)

    def _take(self, end: Position, start: Position, begin: Position | None = None) -> Position:
        """Walk the layouts up to ``end``, stopping before the first layout the schema cannot
        hold (the wall); returns ``end``, or the wall when it comes first."""
        layouts = self._layouts
        assert layouts is not None
        if layouts.known is not None and end <= layouts.known:
            return end
        chunk = layouts.walk(self.archive, end, first=begin)
        bad = next((new for new in layouts.new_layouts(chunk) if not self._fits(new)), None)
        if bad is None:
            layouts.take(chunk)
            return end
        lo = chunk.first.pos if chunk.first.file == bad.at.file else 4
        wall = Position(bad.at.file, self.archive.starts_before(bad.at, lo))
        if wall > chunk.first:
            layouts.take(layouts.walk(self.archive, wall, first=begin))
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
        layouts = self.layouts
        unlimited = limit is None or (ReadAllAvailable is not None and isinstance(limit, ReadAllAvailable))
        max_bytes = None if unlimited else getattr(limit, "max_bytes", self.options.max_bytes)
        max_files = None if unlimited else getattr(limit, "max_files", self.options.max_files)
        target = self._target
        if self._wall is not None and (target is None or self._wall[0] < target):
            target = self._wall[0]
        end = self.archive.end(begin, max_bytes=max_bytes, max_files=max_files, target=target)
        if layouts.known is None or layouts.known < end:
            end = self._take(end, begin)
        self._stop_at_wall(begin)
        self._last = end
        return end.to_offset()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        """The splits of ``[start, end)``, each told where the DDL and the layouts stand at its
        start, packed as the batch source packs them; each partition also carries the tables'
        plans (a task has no other state)."""
        begin, stop = Position.from_offset(start), Position.from_offset(end)
        layouts = self.layouts
        if layouts.known is None or layouts.known < stop:  # a batch of the offset log, replayed after a restart
            self._take(stop, begin)
        splits = layouts.with_states(self.archive.splits(begin, stop, self.options.split_bytes))
        plans = dict(layouts.plans)
        return [InputPartition((group, plans)) for group in pack_splits(splits, self.options.split_bytes)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        splits, plans = partition.value
        yield from decode_splits(splits, plans, self.schema, self.options.decode)

    def commit(self, end: dict[str, Any]) -> None:
        """Spark will not ask for anything before ``end`` again: let go of what was found before it."""
        at = Position.from_offset(end)
        if self._archive is not None:
            self._archive.forget(at)
        if self._layouts is not None:
            self._layouts.forget(at)


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

    Files: a folder (its ``NAME.NUMBER`` files), a path, a glob, a ``mysql-bin.index`` or a
    comma-separated list (local, or URIs: see "Reading archives"), or ``load([...])``; they
    are read in name order, which is log order for binlog names.
    """

    @classmethod
    def name(cls) -> str:
        return "binlog"

    def _parsed(self) -> ReadOptions:
        return ReadOptions.parse(self.options)

    def _decode_and_range(self, o: ReadOptions) -> dict[str, Any]:
        return {**o.decode, "start": o.start, "stop": o.stop}

    def schema(self) -> StructType:
        o = self._parsed()
        self._resolved = resolve_tables(o.paths, o.tables, **self._decode_and_range(o))
        return self._resolved.schema

    def reader(self, schema: StructType) -> BinlogReader:
        o = self._parsed()
        o.check_batch()
        resolved = getattr(self, "_resolved", None)
        if resolved is None:  # a schema given by the user: schema() was not called
            resolved = resolve_tables(o.paths, o.tables, **self._decode_and_range(o))
        return BinlogReader(o, resolved, schema)

    def streamReader(self, schema: StructType) -> BinlogStreamReader:
        """``spark.readStream.format("binlog")``: see :class:`BinlogStreamReader`."""
        o = self._parsed()
        o.check_stream()
        return BinlogStreamReader(o, schema)


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("binlog")`` available in this session."""
    spark.dataSource.register(BinlogDataSource)


# -- helpers for users' own pipelines ------------------------------------------------------------
SPLITS_SCHEMA = StructType([
    StructField("file", StringType(), nullable=False),
    StructField("start", LongType(), nullable=False),
    StructField("stop", LongType(), nullable=True),
])


def splits_dataframe(spark: SparkSession, paths: str | Sequence[str], split_bytes: int = DEFAULT_SPLIT_BYTES,
                     *, start: int | None = None, stop: int | None = None) -> DataFrame:
    """The splits of binlog files as a DataFrame (``file``, ``start``, ``stop``), one split
    per partition (so that :func:`map_splits` decodes them in parallel).

    Planned on the driver from the event headers (:func:`vecbinlog.splits.plan_splits`).

    Examples
    --------
    >>> splits = splits_dataframe(spark, "/archive/mysql-bin.*", 64 << 20)   # doctest: +SKIP
    >>> df = map_splits(splits, "shop.orders")                                # doctest: +SKIP
    """
    splits = plan_splits(split_paths(paths), split_bytes, start=start, stop=stop)
    rows = [(s.path, s.start, s.stop) for s in splits]
    return spark.createDataFrame(rows, SPLITS_SCHEMA).repartition(max(len(rows), 1))


def _splits_of(table: pa.Table | pa.RecordBatch) -> list[Split]:
    cols = table.select(["file", "start", "stop"]).to_pydict()  # one value per split, not per row
    return [Split(p, int(a), None if b is None else int(b)) for p, a, b in zip(cols["file"], cols["start"], cols["stop"])]


def _helper_schema(splits: DataFrame, table: str, options: Mapping[str, Any]) -> Resolved:
    paths = sorted({r["file"] for r in splits.select("file").distinct().collect()})
    return resolve_tables(paths, [table], **options)


def map_splits(splits: DataFrame, table: str, **options: Any) -> DataFrame:
    """Decode the splits of a :func:`splits_dataframe` with ``mapInArrow``: the change log of
    ``table`` (a ``db.table`` or a glob), as the data source returns it.

    Rows come in no particular order across splits: sort by ``_log_file, _log_pos,
    _event_row`` for log order. ``options`` are those of :func:`vecbinlog.open`.
    """
    resolved = _helper_schema(splits, table, options)

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            yield from decode_splits(with_layouts(_splits_of(b), resolved.layouts), resolved.plans, resolved.schema, options)

    return splits.mapInArrow(decode, resolved.schema)


def apply_splits(splits: DataFrame, table: str, **options: Any) -> DataFrame:
    """Decode the splits of a :func:`splits_dataframe` grouped by file with ``applyInArrow``:
    one task decodes the splits of one file, in order, and returns them as one table.

    The grouping is the example to follow for a per-file (or, after a read, per-table)
    computation: the function receives all rows of its group as one ``pyarrow.Table``.
    """
    resolved = _helper_schema(splits, table, options)

    def decode(group: pa.Table) -> pa.Table:
        ordered = with_layouts(sorted(_splits_of(group), key=lambda s: s.start), resolved.layouts)
        batches = list(decode_splits(ordered, resolved.plans, resolved.schema, options))
        return pa.Table.from_batches(batches, schema=_arrow_schema(resolved.schema))

    return splits.groupBy("file").applyInArrow(decode, resolved.schema)


def key_columns(schema: StructType) -> list[str]:
    """The primary key's columns, in key order, as the ``binlog`` source marks them in its
    schema's field metadata (``vecbinlog.primary_key``); [] when the binlog gives no key."""
    marked = sorted((f.metadata[KEY_METADATA], f.name) for f in schema.fields if KEY_METADATA in (f.metadata or {}))
    return [name for _, name in marked]


def net_changes(changes: DataFrame, key: Sequence[str] | None = None) -> DataFrame:
    """One row per key: the net effect of a change-log DataFrame (a micro-batch of
    ``spark.readStream.format("binlog")`` in ``foreachBatch``, or a batch read), as
    :func:`vecbinlog.netchanges.net_changes` computes it with Arrow: for each key whose row is
    there before or after, the row of its last change with ``_change_type`` ``insert``,
    ``update_postimage`` (both upserts of the final values) or ``delete``; a key inserted and
    deleted within the DataFrame is not there. Changes are ordered by ``(_log_file,
    _log_pos, _event_row)``, files in log order (by the number after their last dot).

    ``key``: the key columns; by default the primary key the binlog gives, which the source
    marks in the schema's field metadata (``vecbinlog.primary_key``). Spark SQL throughout
    (one aggregation by key, ``max_by``/``min_by``): no Python per row.

    Examples
    --------
    >>> def upsert(batch, batch_id):                                             # doctest: +SKIP
    ...     net = vecbinlog.spark.net_changes(batch).toArrow()
    ...     DeltaTable("lake/orders").merge(net, "t.id = s.id", source_alias="s", target_alias="t") ...
    >>> stream.writeStream.foreachBatch(upsert).option("checkpointLocation", "ck/").start()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    key = checked_key(key if key is not None else key_columns(changes.schema), changes.columns)
    kind = F.col("_change_type")
    if "_outcome" in changes.columns:
        changes = changes.where(~F.col("_outcome").isin("rollback", "incomplete"))
    # log order: the number after the file's last dot, the name, the event, the row, a before image first
    order = F.struct(
        F.regexp_extract("_log_file", r"(\d+)$", 1).cast("decimal(38,0)"), F.col("_log_file"), F.col("_log_pos"),
        F.col("_event_row"), (kind == "update_postimage").cast("int"))
    others = [c for c in changes.columns if c not in key]
    grouped = changes.groupBy(*key).agg(
        F.max_by(F.struct(*[changes[c] for c in others]), order).alias("_last"),
        F.min_by(kind, order).alias("_first"),
    )
    before = F.col("_first").isin("delete", "update_preimage")
    after = F.col("_last").getField("_change_type").isin("insert", "update_postimage")
    net = F.when(~after, F.lit("delete")).when(before, F.lit("update_postimage")).otherwise(F.lit("insert"))
    return (grouped.where(before | after)
            .select(*[grouped[k] for k in key],
                    *[(net if c == "_change_type" else F.col("_last").getField(c)).alias(c) for c in others])
            .select(*[F.col(f"`{c}`") for c in changes.columns]))
