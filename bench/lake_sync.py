"""An archive landed in a lake table: ``vecbinlog sync`` (no Spark) against the Spark streaming path.

    pip install -e ".[test,spark]"
    python bench/lake_sync.py                          # generates ~60 MB of binlogs with MariaDB
    python bench/lake_sync.py /archive/ --table db.t   # an archive of your own

The generated archive: one table (``b.orders``: BIGINT key, INT, DECIMAL, VARCHAR, DATETIME(6))
over three files: VECBINLOG_BENCH_ROWS inserts (default 300 000), then every third row
updated, then every tenth deleted. Each path starts from an empty lake and takes the whole
archive:

* ``sync_delta`` and ``sync_iceberg`` (pyiceberg's SQL catalog on SQLite), one process, with the
  default ``max_bytes`` (one commit per 64 MiB of binlog), with 8 MiB per commit, and in a run
  after each file (inserts, then updates merged into them, then deletes);
* ``examples/spark_stream_to_delta.py``: ``spark.readStream.format("binlog")`` with
  ``trigger(availableNow=True)``, each micro-batch reduced to net changes on the cluster
  (``vecbinlog.spark.net_changes``) and MERGEd into Delta by the driver, ``local[2]``, 64 MiB per
  micro-batch; the SparkSession is started before the clock starts.

Rows/s are row changes (an update counts once) per second of wall time, best of ``--repeat``;
the lake tables are checked to hold the same rows at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))


def generate(workdir: Path, rows: int) -> str:
    """The bench's archive (see the module docstring) in ``workdir/archive``: its folder."""
    from tests.support.mariadb import MariaDBServer, ensure_mariadb

    ensure_mariadb()
    rnd = random.Random(20261121)
    folder = workdir / "archive"
    folder.mkdir()
    opts = {"binlog_row_metadata": "FULL", "innodb_flush_log_at_trx_commit": "0", "sync_binlog": "0",
            "max_binlog_size": str(1 << 30)}
    with MariaDBServer(options=opts) as server:
        server.execute("CREATE DATABASE b")
        server.flush_binary_logs()
        first = server.current_binlog().name
        server.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer INT, amount DECIMAL(10,2), "
                       "note VARCHAR(40) CHARACTER SET utf8mb4, at DATETIME(6))", database="b")
        for lo in range(0, rows, 2000):
            values = ", ".join(f"({i}, {rnd.randrange(1, 50000)}, {rnd.randrange(100, 10**7) / 100:.2f}, "
                               f"'note {rnd.randrange(10**6)}', '2026-11-21 10:{i % 60:02d}:00.{i % 10**6:06d}')"
                               for i in range(lo, min(lo + 2000, rows)))
            server.execute(f"INSERT INTO orders VALUES {values}", database="b")
        server.flush_binary_logs()
        for lo in range(0, rows, 20000):
            server.execute(f"UPDATE orders SET amount = amount + 1, note = CONCAT(note, '!') "
                           f"WHERE id >= {lo} AND id < {lo + 20000} AND id % 3 = 0", database="b")
        server.flush_binary_logs()
        server.execute("DELETE FROM orders WHERE id % 10 = 0", database="b")
        server.flush_binary_logs()
        files = server.binlog_files()
        names = [f.name for f in files]
        for f in files[names.index(first):-1]:
            shutil.copy(f, folder / f.name)
    return str(folder)


def best(fn, repeat: int) -> tuple[float, object]:
    """(best wall time, the last result) of ``fn()`` run ``repeat`` times, each on a fresh lake."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archive", nargs="?")
    parser.add_argument("--table", default="b.orders")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-spark", action="store_true", help="the syncs only")
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    from deltalake import DeltaTable

    from vecbinlog.lake import iceberg_catalog, sync_delta, sync_iceberg
    from vecbinlog.streaming import Position, archive_files

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        archive = args.archive or generate(tmp, int(os.environ.get("VECBINLOG_BENCH_ROWS", "300000")))
        size = sum(Path(p).stat().st_size for p in archive_files(archive))
        print(f"archive {archive}: {size / 1e6:.1f} MB, table {args.table}")
        runs = iter(range(10**6))

        def fresh(name: str) -> Path:
            path = tmp / f"{name}-{next(runs)}"
            return path

        results = {}

        def per_file(fmt: str) -> tuple[float, int, int]:
            """A run after each file of the archive (merges into the table the last run left)."""
            path = fresh(fmt)
            path.mkdir()
            catalog = iceberg_catalog(f"sqlite:///{path}/c.db")
            ends = [Position(Path(p).name, Path(p).stat().st_size) for p in archive_files(archive)]
            t, changes, commits = time.perf_counter(), 0, 0
            for end in ends:
                done = (sync_delta(archive, args.table, str(path / "t"), until=end) if fmt == "delta" else
                        sync_iceberg(archive, args.table, "b.orders", catalog=catalog, until=end))
                changes, commits = changes + done.changes, commits + done.commits
            return time.perf_counter() - t, changes, commits

        for label, max_bytes in (("default max_bytes (64m)", 64 << 20), ("max_bytes 8m", 8 << 20)):
            def delta(mb: int = max_bytes):
                return sync_delta(archive, args.table, str(fresh("delta")), max_bytes=mb)

            def iceberg(mb: int = max_bytes):
                path = fresh("iceberg")
                path.mkdir()
                return sync_iceberg(archive, args.table, "b.orders", catalog=iceberg_catalog(f"sqlite:///{path}/c.db"),
                                    max_bytes=mb)

            for fmt, fn in (("delta", delta), ("iceberg", iceberg)):
                seconds, done = best(fn, args.repeat)
                results[fmt, label] = done
                print(f"sync_{fmt:<8} {label:<26} {done.changes:>9,} changes, {done.commits:>3} commit(s): "
                      f"{seconds:6.2f} s ({done.changes / seconds:,.0f} rows/s, {size / seconds / 1e6:.1f} MB/s)")
        for fmt in ("delta", "iceberg"):
            seconds, changes, commits = best(lambda f=fmt: per_file(f), args.repeat)[1]
            print(f"sync_{fmt:<8} {'a run per file':<26} {changes:>9,} changes, {commits:>3} commit(s): {seconds:6.2f} s "
                  f"({changes / seconds:,.0f} rows/s, {size / seconds / 1e6:.1f} MB/s)")
        if args.no_spark:
            return
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        from pyspark.sql import SparkSession

        import spark_stream_to_delta

        spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                 .config("spark.sql.session.timeZone", "UTC").config("spark.sql.shuffle.partitions", "2").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        last = {}

        def stream():
            lake, checkpoint = fresh("spark-delta"), fresh("checkpoint")
            spark_stream_to_delta.main([archive, args.table, str(lake), str(checkpoint), "--available-now",
                                        "--max-bytes-per-trigger", "64m"], spark=spark)
            last["lake"] = lake

        seconds, _ = best(stream, args.repeat)
        changes = results["delta", "default max_bytes (64m)"].changes
        commits = DeltaTable(str(last["lake"])).version() + 1
        print(f"spark stream -> delta  local[2], 64m per micro-batch {changes:>9,} changes, {commits:>3} commit(s): "
              f"{seconds:6.2f} s ({changes / seconds:,.0f} rows/s, {size / seconds / 1e6:.1f} MB/s)")
        spark_rows = DeltaTable(str(last["lake"])).to_pyarrow_table().num_rows
        sync_rows = DeltaTable(str(tmp / "delta-0")).to_pyarrow_table().num_rows
        print(f"rows in the lake: sync {sync_rows:,}, spark {spark_rows:,}")
        spark.stop()


if __name__ == "__main__":
    main()
