"""A growing binlog archive streamed by Spark into a Delta table: net changes in foreachBatch.

    pip install -e ".[spark]" deltalake
    python examples/spark_stream_to_delta.py ARCHIVE shop.orders lake/orders checkpoints/orders
    python examples/spark_stream_to_delta.py ... --available-now      # what is there now, then stop

``spark.readStream.format("binlog")`` takes what is new in the archive (a folder, a glob, a
``mysql-bin.index``, local or ``s3://...``) micro-batch by micro-batch; each micro-batch is
reduced to one row per primary key on the cluster (``vecbinlog.spark.net_changes``: Spark SQL)
and MERGEd into the Delta table by the driver with the ``deltalake`` package (no Delta jars
needed; with delta-spark, ``DeltaTable.forPath(...).merge`` on the DataFrame is the same
pattern). The batch id goes into the Delta commit as an application transaction
(``txn``: app id, version), so a micro-batch Spark runs again after a failure is not applied
twice: the sink is idempotent, and with the source's offsets every change lands exactly once.
The micro-batches' Arrow types are the Spark ones; ``vecbinlog.lake.types.lake_table`` maps the
rest (intervals) for Delta. Without Spark, ``vecbinlog sync`` (``vecbinlog.lake.sync_delta``)
does the same on one machine, the position in each commit (docs/lake.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from pyspark.sql import DataFrame, SparkSession

import vecbinlog.spark
from vecbinlog.decode.tableplan import METADATA_NAMES
from vecbinlog.lake.types import lake_table


def merge_net_changes(path: str, net: pa.Table, key: Sequence[str], commit: CommitProperties | None = None) -> None:
    """MERGE net changes (``_change_type`` insert/update_postimage/delete, the table's columns)
    into the Delta table at ``path``; creates it from the upserts when there is none. Applying
    the same net changes twice leaves the table as once (upserts and deletes by key)."""
    own = [c for c in net.column_names if c not in METADATA_NAMES]
    rows = lake_table(net, own, "delta")
    kinds = net.column("_change_type").cast(pa.string())
    if not DeltaTable.is_deltatable(path):
        write_deltalake(path, rows.filter(pc.not_equal(kinds, "delete")), commit_properties=commit)
        return
    on = " AND ".join(f"t.`{k}` = s.`{k}`" for k in key)
    columns = {f"`{c}`": f"s.`{c}`" for c in own}
    (DeltaTable(path).merge(rows.append_column("_change_type", kinds), on, source_alias="s", target_alias="t",
                            merge_schema=True, commit_properties=commit)
     .when_matched_delete("s._change_type = 'delete'")
     .when_matched_update(columns, "s._change_type != 'delete'")
     .when_not_matched_insert(columns, "s._change_type != 'delete'")
     .execute())


def upsert_batches(lake: str, app_id: str):
    """The foreachBatch function: a micro-batch's net changes merged into ``lake``, once."""

    def upsert(batch: DataFrame, batch_id: int) -> None:
        done = DeltaTable(lake).transaction_version(app_id) if DeltaTable.is_deltatable(lake) else None
        if done is not None and done >= batch_id:
            return  # this micro-batch is in the table already (Spark runs it again after a failure)
        key = vecbinlog.spark.key_columns(batch.schema)
        net = vecbinlog.spark.net_changes(batch, key).toArrow()
        commit = CommitProperties(app_transactions=[Transaction(app_id, batch_id)])
        if net.num_rows:
            merge_net_changes(lake, net, key, commit)

    return upsert


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive")
    parser.add_argument("table", help="db.table (with a primary key in the binlog: binlog_row_metadata=FULL)")
    parser.add_argument("lake", help="the Delta table's folder")
    parser.add_argument("checkpoint", help="the streaming query's checkpoint folder")
    parser.add_argument("--starting", default="earliest")
    parser.add_argument("--max-bytes-per-trigger", default="256m")
    parser.add_argument("--available-now", action="store_true", help="what is complete now, then stop")
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args(argv)

    if spark is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        spark = (SparkSession.builder.master(args.master).appName("binlog-to-delta")
                 .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    vecbinlog.spark.register(spark)
    stream = (spark.readStream.format("binlog")
              .option("table", args.table)
              .option("startingPosition", args.starting)
              .option("maxBytesPerTrigger", args.max_bytes_per_trigger)
              .load(args.archive))
    writer = (stream.writeStream.foreachBatch(upsert_batches(args.lake, f"vecbinlog:{args.table}"))
              .option("checkpointLocation", args.checkpoint))
    query = (writer.trigger(availableNow=True) if args.available_now else writer.trigger(processingTime="10 seconds")).start()
    query.awaitTermination()


if __name__ == "__main__":
    main()
