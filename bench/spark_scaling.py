"""Decoding a binlog set through Spark with 1 and 2 cores: does the split planner spread the work,
and how far is the ``binlog`` source from Spark's own Parquet reader on the same rows?

    pip install -e ".[test,spark]"
    python bench/spark_scaling.py                      # generates ~80 MB of binlogs with MariaDB
    python bench/spark_scaling.py /archive/mysql-bin.* --table db.t
    python bench/spark_scaling.py --parquet --threads 1  # and the same rows from Parquet

For each core count, a fresh ``local[n]`` SparkSession reads the table through the ``binlog``
data source (with 1 and 2 decoding threads per task: the ``threads`` option) and writes it to
Spark's ``noop`` sink (every column decoded and handed to Spark,
nothing stored); best of ``--repeat`` runs. The driver-side planning (header walk) is timed
apart. VECBINLOG_BENCH_ROWS scales the generated files (as in bench/conftest.py).

``--parquet``: the rows ``read_table`` gives are written as Parquet, a file per split (zstd),
and read by ``spark.read.parquet`` into the same ``noop`` sink, in the same session; the
``binlog`` source is also timed with ``metadata`` false (the table's own columns only: what
the per-row metadata columns cost), and its parts apart, in this process: the driver's
planning (``schema()`` and ``partitions()``), and the tasks' decoding (``read()`` of each
partition, one after the other), so that what Spark adds (Python workers, the hand-over of
Arrow batches to the JVM) is the rest. And the floor of any Python data source: ``arrowfiles``,
a data source whose tasks only read the very Arrow batches the ``binlog`` source's tasks yield
(written once as Arrow IPC files, a file per partition, memory-mapped by the task), with and
without the metadata columns: what Spark's Python data source path costs for these rows
whatever decodes them. And Spark's other way in for Arrow batches from Python, ``mapInArrow``:
the same files read by a ``mapInArrow`` over a DataFrame of their names (a partition each),
and the splits decoded by ``vecbinlog.spark.map_splits``.

``--consume``: each query aggregates a hash of every column of every row
(``bit_xor(xxhash64(*))``) instead of writing to ``noop``: Spark's ``noop`` sink never reads a
value, which flatters a columnar reader (Parquet's, whose values it then never converts).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def generate(workdir: Path, rows: int, files: int) -> list[str]:
    """``files`` binlog files of the bench's narrow table (6 integer columns), ``rows`` inserts each."""
    from bench.conftest import SEED, _narrow
    from tests.support.mariadb import MariaDBServer, ensure_mariadb

    ensure_mariadb()
    rnd = random.Random(SEED)
    out = []
    opts = {"binlog_row_metadata": "FULL", "innodb_flush_log_at_trx_commit": "0", "sync_binlog": "0"}
    with MariaDBServer(options=opts) as server:
        server.execute("CREATE DATABASE b")
        for k in range(files):
            sql = _narrow(rnd, rows)
            if k:  # the table exists: empty it (TRUNCATE writes no rows events) and insert again
                sql = ["TRUNCATE TABLE narrow", *sql[1:]]
            path = server.capture_binlog(*sql, database="b")
            target = workdir / f"mariadb-bin.{k + 1:06d}"
            target.write_bytes(path.read_bytes())
            out.append(str(target))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--table", default="b.narrow")
    parser.add_argument("--split-bytes", default="8m")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", default="1,2", help="decoding threads per task to try (the threads option)")
    parser.add_argument("--parquet", action="store_true", help="also Spark's Parquet reader on the same rows, "
                        "and the floor of a Python data source (see the docstring)")
    parser.add_argument("--consume", action="store_true", help="aggregate a hash of every value instead of the noop sink")
    args = parser.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    from pyspark.sql import SparkSession

    import vecbinlog.spark
    from vecbinlog.log.config import text_bytes
    from vecbinlog.splits import plan_splits, split_paths

    with tempfile.TemporaryDirectory() as tmp:
        paths = split_paths(args.paths) if args.paths else generate(
            Path(tmp), int(os.environ.get("VECBINLOG_BENCH_ROWS", "300000")), 3)
        size = sum(os.path.getsize(p) for p in paths)
        split_bytes = text_bytes(args.split_bytes)
        t = time.perf_counter()
        splits = plan_splits(paths, split_bytes)
        plan = time.perf_counter() - t
        print(f"{len(paths)} files, {size / 1e6:.1f} MB, {len(splits)} splits of ~{args.split_bytes}: planned in {plan:.3f} s")
        for cores in (1, 2):
            spark = (SparkSession.builder.master(f"local[{cores}]").config("spark.ui.enabled", "false")
                     .config("spark.sql.session.timeZone", "UTC").getOrCreate())
            spark.sparkContext.setLogLevel("ERROR")
            vecbinlog.spark.register(spark)
            for threads in (int(t) for t in args.threads.split(",")):
                df = (spark.read.format("binlog").option("table", args.table).option("threads", str(threads))
                      .option("split_bytes", args.split_bytes).load(",".join(paths)))
                best = _best(lambda df=df: run(df, args.consume), args.repeat)
                rows = df.count()
                print(f"local[{cores}], {threads} thread(s) per task: {rows} rows in {best:.2f} s "
                      f"({rows / best / 1e6:.2f} M rows/s, {size / best / 1e6:.0f} MB/s)")
            if args.parquet:
                parquet(spark, paths, splits, args, Path(tmp))
            spark.stop()
        if args.parquet:
            parts(paths, args)


def run(df, consume: bool) -> None:
    """The query timed: every row to the ``noop`` sink, or (``consume``) a hash of every value."""
    from pyspark.sql import functions as F

    if consume:
        df.agg(F.bit_xor(F.xxhash64(*df.columns))).collect()
    else:
        df.write.format("noop").mode("overwrite").save()


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def parquet(spark, paths: list[str], splits: list, args: argparse.Namespace, tmp: Path) -> None:
    """The binlog source without its metadata columns, and Spark's Parquet reader on the rows
    read_table gives (a file per split), into the noop sink."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import vecbinlog
    from vecbinlog.log.config import text_bytes
    from vecbinlog.splits import read_split

    folder = tmp / f"parquet-{args.table}"
    if not folder.exists():
        folder.mkdir()
        with vecbinlog.open(paths) as log:
            plan = log.plans()[args.table]
        for k, s in enumerate(splits):
            batches = [plan.conform(b) for _, b in read_split(s, args.table)]
            if batches:
                pq.write_table(pa.Table.from_batches(batches), folder / f"part-{k:05d}.parquet", compression="zstd")
    lean = (spark.read.format("binlog").option("table", args.table).option("metadata", "false")
            .option("split_bytes", args.split_bytes).load(",".join(paths)))
    took = _best(lambda: run(lean, args.consume), args.repeat)
    print(f"  binlog, metadata false: {took:.2f} s")
    df = spark.read.parquet(str(folder))
    took = _best(lambda: run(df, args.consume), args.repeat)
    print(f"  Parquet ({len(list(folder.iterdir()))} files, {sum(f.stat().st_size for f in folder.iterdir()) / 1e6:.1f} MB, "
          f"every column): {took:.2f} s")
    own = df.select(*lean.columns)
    took = _best(lambda: run(own, args.consume), args.repeat)
    print(f"  Parquet, the table's own columns: {took:.2f} s")
    spark.dataSource.register(ArrowFiles)
    for metadata in ("true", "false"):
        files = _source_batches(paths, args, tmp, metadata)
        floor = spark.read.format("arrowfiles").option("files", ",".join(files)).load()
        took = _best(lambda: run(floor, args.consume), args.repeat)
        print(f"  arrowfiles (the binlog source's batches, read from Arrow IPC files), metadata {metadata}: {took:.2f} s")
        mapped = _map_files(spark, files)
        took = _best(lambda: run(mapped, args.consume), args.repeat)
        print(f"  mapInArrow of the same files, metadata {metadata}: {took:.2f} s")
    from vecbinlog.spark import map_splits, splits_dataframe

    decoded = map_splits(splits_dataframe(spark, paths, text_bytes(args.split_bytes)), args.table)
    took = _best(lambda: run(decoded, args.consume), args.repeat)
    print(f"  map_splits (mapInArrow decoding the splits), every column: {took:.2f} s")


def _map_files(spark, files: list[str]):
    """The batches of Arrow IPC ``files`` through ``mapInArrow``: a DataFrame of their names, a
    partition each, mapped to their record batches (memory-mapped)."""
    import pyarrow as pa

    from vecbinlog.spark.types import spark_schema

    with pa.memory_map(files[0]) as source:
        schema = spark_schema(pa.ipc.open_file(source).schema)

    def batches(names):
        for b in names:
            for name in b.column(0).to_pylist():
                with pa.memory_map(name) as source:
                    reader = pa.ipc.open_file(source)
                    for k in range(reader.num_record_batches):
                        yield reader.get_batch(k)

    return spark.createDataFrame([(f,) for f in files], "file string").repartition(len(files)).mapInArrow(batches, schema)


def _source_batches(paths: list[str], args: argparse.Namespace, tmp: Path, metadata: str) -> list[str]:
    """The batches the ``binlog`` source's tasks yield, as Arrow IPC files (one per partition)."""
    import pyarrow as pa

    from vecbinlog.spark.source import BinlogDataSource

    folder = tmp / f"arrow-{args.table}-{metadata}"
    if not folder.exists():
        folder.mkdir()
        ds = BinlogDataSource({"path": ",".join(paths), "table": args.table, "split_bytes": args.split_bytes,
                               "metadata": metadata})
        reader = ds.reader(ds.schema())
        for k, partition in enumerate(reader.partitions()):
            batches = list(reader.read(partition))
            if batches:
                with pa.OSFile(str(folder / f"part-{k:05d}.arrow"), "wb") as sink, \
                        pa.ipc.new_file(sink, batches[0].schema) as writer:
                    for b in batches:
                        writer.write_batch(b)
    return sorted(str(f) for f in folder.iterdir())


try:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
except ImportError:  # (the module's docstring and generate() need no pyspark)
    DataSource = DataSourceReader = InputPartition = object  # type: ignore[misc,assignment]


class ArrowFiles(DataSource):
    """``spark.read.format("arrowfiles").option("files", "a.arrow,b.arrow")``: a task per file,
    which yields its record batches as they are (memory-mapped): a Python data source that
    does nothing but hand Arrow batches to Spark."""

    @classmethod
    def name(cls) -> str:
        return "arrowfiles"

    def schema(self):
        import pyarrow as pa

        from vecbinlog.spark.types import spark_schema

        with pa.memory_map(self.options["files"].split(",")[0]) as source:
            return spark_schema(pa.ipc.open_file(source).schema)

    def reader(self, schema):
        return _ArrowFilesReader(self.options["files"].split(","))


class _ArrowFilesReader(DataSourceReader):
    def __init__(self, files: list[str]) -> None:
        self.files = files

    def partitions(self):
        return [InputPartition(f) for f in self.files]

    def read(self, partition):
        import pyarrow as pa

        with pa.memory_map(partition.value) as source:
            reader = pa.ipc.open_file(source)
            for k in range(reader.num_record_batches):
                yield reader.get_batch(k)


def parts(paths: list[str], args: argparse.Namespace) -> None:
    """The binlog source's work without Spark, in this process: planning, then each partition's decoding."""
    from vecbinlog.spark.source import BinlogDataSource

    options = {"path": ",".join(paths), "table": args.table, "split_bytes": args.split_bytes}

    def plan():
        ds = BinlogDataSource(options)
        reader = ds.reader(ds.schema())
        return reader, reader.partitions()

    took = _best(plan, args.repeat)
    reader, partitions = plan()
    print(f"in this process: the driver's schema() + partitions(): {took:.2f} s ({len(partitions)} partitions)")
    took = _best(lambda: [sum(b.num_rows for b in reader.read(p)) for p in partitions], args.repeat)
    print(f"in this process: read() of every partition, one after the other: {took:.2f} s")


if __name__ == "__main__":
    main()
