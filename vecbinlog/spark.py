"""Spark: a ``binlog`` data source (Spark 4's Python Data Source API) and Arrow UDF helpers.

``pip install vecbinlog[spark]``; pyspark is imported here only, never by the core.

>>> import vecbinlog.spark                                               # doctest: +SKIP
>>> vecbinlog.spark.register(spark)                                      # doctest: +SKIP
>>> df = (spark.read.format("binlog").option("table", "shop.orders")     # doctest: +SKIP
...       .load("/archive/mysql-bin.*"))

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

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
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

from .reader import Binlog, TableLayouts
from .splits import DEFAULT_SPLIT_BYTES, Split, plan_splits, read_split, split_paths, with_layouts
from .tableplan import TablePlan

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


@dataclass(frozen=True)
class ReadOptions:
    """The data source's options, parsed: what to read, how to split, how to decode."""

    paths: tuple[str, ...]
    tables: tuple[str, ...] | None
    split_bytes: int
    start: int | None
    stop: int | None
    decode: dict[str, Any]  #: options of Binlog other than tables/start/stop

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        """Spark options (case-insensitive strings) to typed ones; a bad value is a ValueError."""
        opts = {k.lower(): v for k, v in options.items()}
        known = {"path", "paths", "table", "tables", "split_bytes", "start", "stop", "since", "until",
                 "change_types", "invalid_dates", "segment_bytes", "batch_rows", "rolled_back", "non_transactional", "gtids",
                 "threads", *_JSON_OPTIONS, *_BOOL_OPTIONS}
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
        return cls(
            paths=tuple(split_paths(raw_paths)),
            tables=None if not tables else tuple(t.strip() for t in tables.split(",") if t.strip()),
            split_bytes=_parse_bytes("split_bytes", opts["split_bytes"]) if "split_bytes" in opts else DEFAULT_SPLIT_BYTES,
            start=int(opts["start"]) if "start" in opts else None,
            stop=int(opts["stop"]) if "stop" in opts else None,
            decode=decode,
        )


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
    if len(found) > 1:
        first = StructType(first.fields + [StructField(TABLE_COLUMN, StringType(), nullable=False)])
    return Resolved(found, first, layouts.plans, layouts)


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

    Files: a path, a glob or a comma-separated list (local or mounted file systems), or
    ``load([...])``; they are read in name order, which is log order for binlog names.
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
        resolved = getattr(self, "_resolved", None)
        if resolved is None:  # a schema given by the user: schema() was not called
            resolved = resolve_tables(o.paths, o.tables, **self._decode_and_range(o))
        return BinlogReader(o, resolved, schema)


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
