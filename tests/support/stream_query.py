"""A streaming query of the ``binlog`` source in a process of its own, for the tests that kill it.

    python -m tests.support.stream_query ARCHIVE TABLE CHECKPOINT SINK [--starting POS]
        [--max-bytes N] [--hang-at BATCH]

Each micro-batch is written by :func:`write_batch` (the sink of the tests in this process
too). With ``--hang-at K``, micro-batch K writes a part of its rows to a temporary file,
creates ``SINK/hanging-K`` and sleeps: the test kills the process (and its JVM) there, in
the middle of the batch. Without it the query processes what is available, then stops.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]


def write_batch(sink: Path, table: pa.Table, batch_id: int) -> None:
    """A micro-batch as ``SINK/batch-NNNNNN.parquet``: written beside, then renamed, so a batch
    run again (after a restart) replaces its file whole: the sink is idempotent by batch id."""
    tmp = sink / f".batch-{batch_id:06d}.parquet.tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, sink / f"batch-{batch_id:06d}.parquet")


def read_sink(sink: Path) -> pa.Table:
    """Every micro-batch written, in batch order (columns of later batches may be more)."""
    parts = [pq.read_table(p) for p in sorted(sink.glob("batch-*.parquet"))]
    return pa.concat_tables(parts, promote_options="permissive") if parts else pa.table({})


def session():
    """A local SparkSession (the tests' settings) whose Python workers import vecbinlog from this tree."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    from pyspark.sql import SparkSession

    import vecbinlog.spark

    spark = (SparkSession.builder.master("local[2]").appName("vecbinlog-stream-query")
             .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "2").config("spark.driver.memory", "1g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    vecbinlog.spark.register(spark)
    return spark


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive")
    parser.add_argument("table")
    parser.add_argument("checkpoint")
    parser.add_argument("sink", type=Path)
    parser.add_argument("--starting", default="earliest")
    parser.add_argument("--max-bytes", default=None)
    parser.add_argument("--hang-at", type=int, default=None)
    args = parser.parse_args(argv)
    spark = session()

    def sink(df, batch_id: int) -> None:
        table = df.toArrow()
        if batch_id == args.hang_at:
            pq.write_table(table.slice(0, table.num_rows // 2), args.sink / f".batch-{batch_id:06d}.parquet.tmp")
            (args.sink / f"hanging-{batch_id}").touch()
            time.sleep(3600)
        write_batch(args.sink, table, batch_id)

    reader = spark.readStream.format("binlog").option("table", args.table).option("startingPosition", args.starting)
    if args.max_bytes:
        reader = reader.option("maxBytesPerTrigger", args.max_bytes)
    query = (reader.load(args.archive).writeStream.foreachBatch(sink)
             .option("checkpointLocation", args.checkpoint).trigger(processingTime="200 milliseconds").start())
    query.processAllAvailable()
    query.stop()


if __name__ == "__main__":
    main()
