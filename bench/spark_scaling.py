"""Decoding a binlog set through Spark with 1 and 2 cores: does the split planner spread the work?

    pip install -e ".[test,spark]"
    python bench/spark_scaling.py                      # generates ~80 MB of binlogs with MariaDB
    python bench/spark_scaling.py /archive/mysql-bin.* --table db.t

For each core count, a fresh ``local[n]`` SparkSession reads the table through the ``binlog``
data source (with 1 and 2 decoding threads per task: the ``threads`` option) and writes it to
Spark's ``noop`` sink (every column decoded and handed to Spark,
nothing stored); best of ``--repeat`` runs. The driver-side planning (header walk) is timed
apart. VECBINLOG_BENCH_ROWS scales the generated files (as in bench/conftest.py).
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
                best = float("inf")
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    df.write.format("noop").mode("overwrite").save()
                    best = min(best, time.perf_counter() - t)
                rows = df.count()
                print(f"local[{cores}], {threads} thread(s) per task: {rows} rows in {best:.2f} s "
                      f"({rows / best / 1e6:.2f} M rows/s, {size / best / 1e6:.0f} MB/s)")
            spark.stop()


if __name__ == "__main__":
    main()
