"""What pushing a query's filters into the read saves (issue 54): binlog bytes read and time of a
query of one table over a window of the archive's time range, in DuckDB, Polars and the Spark
source's reader, with the engine filtering alone, with the filters pushed, and with the archive
index.

    python bench/engines.py [--changes 30000] [--window 0.01] [--table bench.o05] [--seed S]

The archive is the production shape of bench/shapes.py, ``archive`` (the OLTP workload: single-row
changes over 16 tables, rotated into files of 512 KiB), each transaction given its time by ``SET
TIMESTAMP``, a second after the one before (a log spread over time, as production's are), written
by a throwaway MariaDB server (tests/support/mariadb.py) in a temporary folder, and indexed. The
query keeps the rows of ``--table`` in a window of ``--window`` of the archive's time range, in
its middle, and counts them. Bytes are those read through a filesystem that counts them
(tests/support/countingfs.py, as an object store is read), planning included; times are the best
of 3, planning included. The Spark rows drive the source's reader in this process as Spark drives
it (``pushFilters``, ``partitions``, ``read`` of each), without a SparkSession: what its tasks read.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import shapes  # noqa: E402

T0 = 1_790_000_000  # every transaction at T0 + its number, in seconds


def timed_statements(rnd: random.Random, changes: int) -> list[str]:
    """The OLTP workload, each transaction (a statement, or BEGIN ... COMMIT) after a ``SET
    TIMESTAMP`` one second after the last."""
    out, inside, k = [], False, 0
    for stmt in shapes.oltp(rnd, changes):
        if not inside:
            out.append(f"SET TIMESTAMP = {T0 + k}")
            k += 1
        inside = (inside or stmt == "BEGIN") and stmt != "COMMIT"
        out.append(stmt)
    return out


def write_archive(folder: Path, changes: int, seed: int) -> tuple[list[str], Path, int]:
    """The archive's files (copied into ``folder``), its index, and its last second after T0."""
    from tests.support.mariadb import MariaDBServer, copy_binlogs, ensure_mariadb
    from vecbinlog import build_index

    ensure_mariadb()
    sql = timed_statements(random.Random(f"{seed}-engines"), changes)
    options = {"binlog_row_metadata": "FULL", "innodb_flush_log_at_trx_commit": "0", "sync_binlog": "0",
               "max_binlog_size": str(shapes.ARCHIVE_FILE_BYTES)}
    with MariaDBServer(workdir=folder / "server", options=options) as server:
        server.execute("DROP DATABASE IF EXISTS bench", "CREATE DATABASE bench")
        server.flush_binary_logs()
        first = len(server.binlog_files()) - 1
        for lo in range(0, len(sql), 2000):
            server.execute(*sql[lo:lo + 2000], database="bench")
        server.flush_binary_logs()
        (folder / "archive").mkdir()
        files, _ = copy_binlogs(server.binlog_files()[first:-1], folder / "archive")
    paths = [str(f) for f in files]
    build_index(paths, folder / "index", processes=1)
    return paths, folder / "index", sum(s.startswith("SET TIMESTAMP") for s in sql)


def _best(run, counted) -> tuple[float, int, object]:
    best, read, out = float("inf"), 0, None
    for _ in range(3):
        counted.read = 0
        t = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t)
        read = counted.read
    return best, read, out


def cases(files: list[str], index: str, table: str, lo: datetime, hi: datetime, fs):
    """(engine, how, the query run) of every measurement."""
    import duckdb
    import polars as pl

    import vecbinlog.duckdb as vduck
    import vecbinlog.polars as vpl

    where = f"_commit_timestamp >= TIMESTAMPTZ '{lo.isoformat()}' AND _commit_timestamp < TIMESTAMPTZ '{hi.isoformat()}'"

    def duck(**options):
        def run():
            rows = vduck.scan(files, table, filesystem=fs, **options)  # noqa: F841 - DuckDB finds it by its name
            return duckdb.sql(f"SELECT count(*) FROM rows WHERE {where}").fetchall()[0][0]
        return run

    window = pl.col("_commit_timestamp").is_between(lo, hi, closed="left")
    opaque = pl.col("_commit_timestamp").dt.epoch("s").is_between(int(lo.timestamp()), int(hi.timestamp()) - 1)

    def polars(predicate, **options):
        return lambda: vpl.scan(files, table, filesystem=fs, **options).filter(predicate).select(pl.len()).collect().item()

    out = [("DuckDB", "the engine filters (no pushdown)", duck()),
           ("DuckDB", "since/until given to the scan", duck(since=lo, until=hi)),
           ("DuckDB", "since/until and the index", duck(since=lo, until=hi, index=index)),
           ("Polars", "the engine filters (a predicate it cannot push)", polars(opaque)),
           ("Polars", "the predicate pushed", polars(window)),
           ("Polars", "the predicate pushed, and the index", polars(window, index=index))]
    try:
        out += spark_cases(files, index, table, lo, hi, fs)
    except ImportError:
        print("(pyspark not installed: no Spark rows)", flush=True)
    return out


def spark_cases(files, index, table, lo, hi, fs):
    """The Spark source's reader in this process, without and with its filters pushed."""
    import dataclasses

    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql.datasource import GreaterThanOrEqual, LessThan

    from vecbinlog.spark import source

    def run(pushdown: bool, **extra):
        options = {"table": table, "path": ",".join(files), **extra}
        ds = (source.BinlogPushdownSource if pushdown else source.BinlogDataSource)(options)
        reader = ds.reader(ds.schema())
        if pushdown:
            reader.pushFilters([GreaterThanOrEqual(("_commit_timestamp",), lo), LessThan(("_commit_timestamp",), hi)])
        reader.options = dataclasses.replace(reader.options, config=reader.options.config.replace(filesystem=fs))
        n = 0
        for p in reader.partitions():
            for b in reader.read(p):
                if not pushdown:  # what Spark does after the read
                    ts = b.column("_commit_timestamp")
                    keep = pc.and_(pc.greater_equal(ts, pa.scalar(lo, ts.type)), pc.less(ts, pa.scalar(hi, ts.type)))
                    b = b.filter(keep)
                n += b.num_rows
        return n

    return [("Spark source", "Spark filters (no pushdown), the index", lambda: run(False, index=str(index))),
            ("Spark source", "pushFilters, no index", lambda: run(True)),
            ("Spark source", "pushFilters and the index", lambda: run(True, index=str(index)))]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--changes", type=int, default=30_000)
    p.add_argument("--window", type=float, default=0.01, help="the share of the archive's time range queried")
    p.add_argument("--table", default="bench.o05")
    p.add_argument("--seed", type=int, default=20261121)
    p.add_argument("--folder", help="write the archive here and keep it (a folder that holds one is read again)")
    args = p.parse_args()
    warnings.simplefilter("ignore")
    from tests.support.countingfs import counting_filesystem

    with tempfile.TemporaryDirectory(prefix="vecbinlog-engines-") as tmp:
        folder = Path(args.folder or tmp)
        if (folder / "index").is_dir():
            files = sorted(str(f) for f in (folder / "archive").glob("mysql-bin.0*"))
            seconds = int((folder / "seconds").read_text())
            index = folder / "index"
        else:
            folder.mkdir(parents=True, exist_ok=True)
            files, index, seconds = write_archive(folder, args.changes, args.seed)
            (folder / "seconds").write_text(str(seconds))
        total = sum(Path(f).stat().st_size for f in files)
        start = T0 + seconds * (1 - args.window) / 2
        lo = datetime.fromtimestamp(int(start), timezone.utc)
        hi = lo + timedelta(seconds=max(1, int(seconds * args.window)))
        print(f"{len(files)} files, {total / 1e6:.1f} MB, {seconds} transactions over {seconds} s; "
              f"{args.table} from {lo:%H:%M:%S} to {hi:%H:%M:%S} ({args.window:.0%} of the time range); "
              "bytes and times include planning; best of 3\n", flush=True)
        print("| engine | how | rows | binlog bytes read | % of the archive | time |\n| --- | --- | --- | --- | --- | --- |")
        fs, counted = counting_filesystem()
        for engine, how, run in cases(files, str(index), args.table, lo, hi, fs):
            best, read, rows = _best(run, counted)
            print(f"| {engine} | {how} | {rows} | {read / 1e6:.2f} MB | {100 * read / total:.1f}% | {best * 1000:.0f} ms |",
                  flush=True)


if __name__ == "__main__":
    main()
