"""Spark: a ``binlog`` data source (Spark 4's Python Data Source API), batch and streaming,
and Arrow UDF helpers.

``pip install vecbinlog[spark]``; pyspark is imported here only, never by the core.

>>> import vecbinlog.spark                                               # doctest: +SKIP
>>> vecbinlog.spark.register(spark)                                      # doctest: +SKIP
>>> df = (spark.read.format("binlog").option("table", "shop.orders")     # doctest: +SKIP
...       .load("/archive/mysql-bin.*"))
>>> stream = (spark.readStream.format("binlog").option("table", "shop.orders")  # doctest: +SKIP
...           .load("s3://binlogs/prod/"))                               # a growing archive

The data source is :mod:`vecbinlog.spark.source` and the type mapping :mod:`vecbinlog.spark.types`;
this module registers it and has the helpers for users' own pipelines.

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

from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

import pyarrow as pa
from pyspark.sql.types import LongType, StringType, StructField, StructType

from ..index import RANGE_BYTES, IndexResult, index_file, index_job
from ..log.config import ReadConfig
from ..netchanges import KEY_METADATA, checked_key
from ..splits import DEFAULT_SPLIT_BYTES, Split, plan_splits, split_paths, with_history
from .pushdown import CONF as PUSHDOWN_CONF
from .pushdown import SUPPORTED as PUSHDOWN_SUPPORTED
from .source import BinlogDataSource, BinlogPushdownSource, BinlogStreamReader, Resolved, decode_splits, resolve_tables
from .types import TABLE_COLUMN, arrow_schema, spark_schema, spark_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "BinlogDataSource",
    "register",
    "build_index",
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

def register(spark: SparkSession, *, pushdown: bool = True) -> None:
    """Make ``spark.read.format("binlog")`` available in this session.

    With ``pushdown`` (pyspark 4.1+), a batch read takes the query's filters on the metadata
    columns into the read (:mod:`vecbinlog.spark.pushdown`: files and splits left out, rows events
    never decoded) and this turns on ``spark.sql.python.filterPushdown.enabled``, Spark's switch
    for Python data sources that take filters (off by default in Spark 4.1-4.3; Spark refuses to
    read through a source that takes them while it is off). ``pushdown=False``, or pyspark 4.0:
    the source as before, every filter applied by Spark after the read.
    """
    if pushdown and PUSHDOWN_SUPPORTED:
        spark.conf.set(PUSHDOWN_CONF, "true")
        spark.dataSource.register(BinlogPushdownSource)
    else:
        spark.dataSource.register(BinlogDataSource)


def build_index(spark: SparkSession, archive: Any, location: str, *, filesystem: Any = None,
                index_filesystem: Any = None, verify_checksums: bool = True,
                range_bytes: int | None = RANGE_BYTES) -> IndexResult:
    """:func:`vecbinlog.build_index` with one Spark task per file to index, or per range of
    ``range_bytes`` of a file larger than twice that: the executors read the binlogs and write
    their index files (``location`` and the archive must be reachable from them: a URI, or a
    shared folder); the driver lists the files and, at the end, joins the summaries of the
    ranges of each huge file (small: no binlog byte) and writes the gathered index file.
    Incremental as :func:`vecbinlog.build_index`.

    Examples
    --------
    >>> vecbinlog.spark.build_index(spark, "s3://binlogs/prod/", "s3://binlogs/prod-index/")  # doctest: +SKIP
    """
    config = ReadConfig.build(filesystem=filesystem, verify_checksums=verify_checksums)
    job = index_job(archive, location, config, index_filesystem=index_filesystem, range_bytes=range_bytes)
    return job.run(lambda tasks: spark.sparkContext.parallelize(tasks, len(tasks)).map(index_file).collect())


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


def _helper_schema(splits: DataFrame, table: str, config: ReadConfig) -> Resolved:
    paths = sorted({r["file"] for r in splits.select("file").distinct().collect()})
    return resolve_tables(paths, [table], config)


def _task_config(options: Mapping[str, Any]) -> ReadConfig:
    """The config of a helper's tasks: ``options`` of :func:`vecbinlog.open`, ``threads`` 1
    unless given (Spark already runs a task per core)."""
    return ReadConfig.build(**{"threads": 1, **options})


def map_splits(splits: DataFrame, table: str, **options: Any) -> DataFrame:
    """Decode the splits of a :func:`splits_dataframe` with ``mapInArrow``: the change log of
    ``table`` (a ``db.table`` or a glob), as the data source returns it.

    Rows come in no particular order across splits: sort by ``_log_file, _log_pos,
    _event_row`` for log order. ``options`` are those of :func:`vecbinlog.open`.
    """
    config = _task_config(options)
    resolved = _helper_schema(splits, table, config)

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            yield from decode_splits(with_history(_splits_of(b), resolved.history), resolved.plans, resolved.schema, config)

    return splits.mapInArrow(decode, resolved.schema)


def apply_splits(splits: DataFrame, table: str, **options: Any) -> DataFrame:
    """Decode the splits of a :func:`splits_dataframe` grouped by file with ``applyInArrow``:
    one task decodes the splits of one file, in order, and returns them as one table.

    The grouping is the example to follow for a per-file (or, after a read, per-table)
    computation: the function receives all rows of its group as one ``pyarrow.Table``.
    """
    config = _task_config(options)
    resolved = _helper_schema(splits, table, config)

    def decode(group: pa.Table) -> pa.Table:
        ordered = with_history(sorted(_splits_of(group), key=lambda s: s.start), resolved.history)
        batches = list(decode_splits(ordered, resolved.plans, resolved.schema, config))
        return pa.Table.from_batches(batches, schema=arrow_schema(resolved.schema))

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
