"""Spark ``local[2]`` reading one table of an archive of small files through the ``binlog``
source, per checkout: the Spark side of the production archive shape (bench/shapes.py's
``archive``: 122 files of 512 KB, 16 tables).

    python bench/spark_archive.py "ARCHIVE/mysql-bin.0*" bench.o05 CHECKOUT [CHECKOUT ...]

For each checkout (a folder with ``vecbinlog/``), a fresh SparkSession whose workers import
that checkout reads the table with ``df.toArrow()`` (every column decoded, handed to Spark and
collected; Spark's ``noop`` sink measured no difference between checkouts that differ 4x in
the task's decoding, so it is not used), with ``split_bytes`` 128m (one task) and 32m (two);
best of 3 after a warm-up, driver planning (schema and splits) included.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import time


def child(root: str, files: str, table: str, split_bytes: str) -> float:
    os.environ["PYTHONPATH"] = root
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    sys.path.insert(0, root)
    import warnings

    warnings.simplefilter("ignore")
    from pyspark.sql import SparkSession

    import vecbinlog.spark

    assert vecbinlog.spark.__file__.startswith(root), vecbinlog.spark.__file__
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    vecbinlog.spark.register(spark)
    paths = ",".join(sorted(glob.glob(files)))
    times = []
    for _ in range(4):
        t = time.perf_counter()
        df = spark.read.format("binlog").option("table", table).option("split_bytes", split_bytes).load(paths)
        df.toArrow()
        times.append(time.perf_counter() - t)
    return min(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files")
    parser.add_argument("table")
    parser.add_argument("checkouts", nargs="+")
    parser.add_argument("--child", nargs=2, metavar=("ROOT", "SPLIT_BYTES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(child(args.child[0], args.files, args.table, args.child[1]))
        return
    for split_bytes in ("128m", "32m"):
        for root in args.checkouts:
            # run in the checkout: Spark's Python workers (python -m) put their working folder first on sys.path
            out = subprocess.run([sys.executable, os.path.abspath(__file__), args.files, args.table, root, "--child",
                                  os.path.abspath(root), split_bytes], capture_output=True, text=True, check=True,
                                 cwd=os.path.abspath(root))
            print(f"split_bytes {split_bytes}  {root}: {float(out.stdout.strip().splitlines()[-1]):.2f} s", flush=True)


if __name__ == "__main__":
    main()
