"""Peak memory of ``iter_batches`` over a large MariaDB-made binlog, against the file's size.

    pytest bench/test_bench_memory.py --benchmark-enable                      # 200 MB
    VECBINLOG_BENCH_MB=2000 pytest bench/test_bench_memory.py --benchmark-enable  # 2 GB

A throwaway MariaDB server (tests/support/mariadb.py) writes about ``VECBINLOG_BENCH_MB``
megabytes of binlog: multi-row INSERTs (``INSERT ... SELECT`` over the Sequence engine, 50,000
rows a statement, so no SQL text has to be built in Python) into a narrow table of integers and
a table of strings, about half of the bytes each. The server rotates files at 1 GB, so the 2 GB
measurement reads a list of files. Everything lives in a temp dir, removed at the end.

Each measurement runs in a fresh child process that imports vecbinlog, iterates over
``vecbinlog.open(paths).iter_batches(table)``, touches every batch (``validate(full=True)``
reads every buffer) and reports ``ru_maxrss`` (peak RSS) together with the peaks of
``RssAnon`` (heap: NumPy, Arrow) and ``RssFile`` (pages of the memory-mapped binlog that are
resident, plus the shared libraries) sampled from /proc/self/status after every batch, and the
same three right after the import (the baseline: Python, NumPy, pyarrow, pandas).
All of it goes to ``extra_info``. Benchmarks never assert on time or memory: the only assertion
is that the rows decoded are the rows inserted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.mariadb import MariaDBServer, ensure_mariadb

MB = int(os.environ.get("VECBINLOG_BENCH_MB", "200"))
CHUNK = 50_000  # rows per INSERT ... SELECT statement

NARROW = ("CREATE TABLE narrow (id BIGINT PRIMARY KEY, a INT, b INT UNSIGNED, c SMALLINT, d TINYINT, e BIGINT) "
          "ENGINE=InnoDB")
STRINGS = ("CREATE TABLE strings (id BIGINT PRIMARY KEY, customer VARCHAR(64) CHARACTER SET utf8mb4, "
           "amount DOUBLE, note TEXT CHARACTER SET utf8mb4, qty INT UNSIGNED NULL) ENGINE=InnoDB")


def _insert_narrow(lo: int, n: int) -> str:
    return ("INSERT INTO narrow SELECT seq, CAST(CRC32(seq) AS SIGNED) - 2147483648, CRC32(seq * 7), "
            "CAST(seq % 65536 AS SIGNED) - 32768, CAST(seq % 256 AS SIGNED) - 128, "
            "CAST(CRC32(seq) AS SIGNED) * 2147483647 - CAST(seq AS SIGNED) "
            f"FROM seq_{lo}_to_{lo + n - 1}")


def _insert_strings(lo: int, n: int) -> str:
    return ("INSERT INTO strings SELECT seq, CONCAT('customer-', CRC32(seq) % 1000000), (CRC32(seq) % 1000000) / 1000, "
            "CONCAT('note ', seq * 0.61803398875, ' ü'), IF(seq % 7 = 0, NULL, seq) "
            f"FROM seq_{lo}_to_{lo + n - 1}")


def _binlog_bytes(server: MariaDBServer) -> int:
    return sum(int(row[1]) for row in server.query("SHOW BINARY LOGS"))


@pytest.fixture(scope="module")
def big_binlog():
    """(paths, {"b.narrow": rows, "b.strings": rows}, seconds to generate): about MB megabytes of binlog."""
    ensure_mariadb()
    tmp = Path(tempfile.mkdtemp(prefix="vecbinlog-bench-mem-"))
    target = MB * 1_000_000
    rows = {"b.narrow": 0, "b.strings": 0}
    opts = {"binlog_row_metadata": "FULL", "innodb_flush_log_at_trx_commit": "0", "sync_binlog": "0",
            "innodb_buffer_pool_size": "512M", "innodb_log_file_size": "256M", "max_binlog_size": "1G"}
    t0 = time.perf_counter()
    try:
        server = MariaDBServer(workdir=tmp / "server", options=opts)
        with server:
            server.execute("CREATE DATABASE b")
            server.execute(NARROW, STRINGS, database="b")
            server.flush_binary_logs()
            first = server.current_binlog().name
            size = 0
            while size < target:
                # Alternate so both tables get about half of the bytes (a strings row is ~1.6x a narrow one).
                server.execute(_insert_narrow(rows["b.narrow"] + 1, CHUNK), database="b")
                rows["b.narrow"] += CHUNK
                if size < target:
                    server.execute(_insert_strings(rows["b.strings"] + 1, CHUNK * 5 // 8), database="b")
                    rows["b.strings"] += CHUNK * 5 // 8
                size = _binlog_bytes(server)
            server.flush_binary_logs()
            paths = [str(f) for f in server.binlog_files() if f.name >= first][:-1]  # the last: the new empty file
        yield paths, rows, time.perf_counter() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


CHILD = r"""
import json, resource, sys, time

def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("RssAnon", "RssFile", "VmRSS"):
                out[k] = int(v.split()[0]) * 1024
    return out

import vecbinlog
import pyarrow as pa
base = status()
paths, table = json.loads(sys.argv[1]), sys.argv[2]
rows = batches = max_batch = 0
peak_anon = peak_file = 0
t0 = time.perf_counter()
with vecbinlog.open(paths) as log:
    for b in log.iter_batches(table):
        b.validate(full=True)          # touch every buffer of the batch
        rows += b.num_rows
        batches += 1
        max_batch = max(max_batch, b.nbytes)
        s = status()
        peak_anon = max(peak_anon, s["RssAnon"])
        peak_file = max(peak_file, s["RssFile"])
        del b
seconds = time.perf_counter() - t0
print(json.dumps({
    "rows": rows, "batches": batches, "seconds": seconds, "max_batch_bytes": max_batch,
    "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    "peak_rss_anon": peak_anon, "peak_rss_file": peak_file,
    "baseline_rss": base["VmRSS"], "baseline_rss_anon": base["RssAnon"], "baseline_rss_file": base["RssFile"], "arrow_pool_max": pa.default_memory_pool().max_memory(),
}))
"""


def _measure(paths: list[str], table: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(paths), table],
                          capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _info(result: dict, file_bytes: int) -> dict:
    """The child's measurements in MiB, for ``extra_info``."""
    mib = 1 << 20
    out = {"file_mb": round(file_bytes / mib, 1), "table_rows": result["rows"], "batches": result["batches"],
           "decode_seconds": round(result["seconds"], 2)}
    for key in ("peak_rss", "peak_rss_anon", "peak_rss_file", "baseline_rss", "baseline_rss_anon",
                "baseline_rss_file", "arrow_pool_max"):
        out[f"{key}_mb"] = round(result[key] / mib, 1)
    out["max_batch_mb"] = round(result["max_batch_bytes"] / mib, 1)
    out["peak_rss_over_file"] = round(result["peak_rss"] / file_bytes, 3)
    return out


@pytest.mark.parametrize("table", ["b.narrow", "b.strings"])
def test_iter_batches_peak_rss(benchmark, big_binlog, table):
    paths, inserted, gen_seconds = big_binlog
    file_bytes = sum(os.path.getsize(p) for p in paths)
    result = benchmark.pedantic(_measure, args=(paths, table), rounds=1, iterations=1)
    benchmark.extra_info.update(table=table, files=len(paths), generate_seconds=round(gen_seconds, 1),
                                **_info(result, file_bytes))
    print(f"\n{table}: {json.dumps(benchmark.extra_info)}")
    assert result["rows"] == inserted[table]


@pytest.fixture(scope="module")
def one_byte_rows_files():
    """Hostile but legal binlogs (a real 5.6 binlog of the corpus with its first WRITE_ROWS
    event replaced by events of 8000 one-byte, all-NULL row images): {events: path}. A row
    image of 1 byte decodes to ~70 bytes of Arrow, so the batches must be bounded by rows."""
    from tests.test_fuzz import ZALORA, _all_null_events_file, seed_bytes

    tmp = Path(tempfile.mkdtemp(prefix="vecbinlog-bench-hostile-"))
    try:
        files = {}
        for events in (400, 1600):
            path = tmp / f"one-byte-rows-{events}.bin"
            path.write_bytes(_all_null_events_file(seed_bytes(ZALORA), events, 8000))
            files[events] = str(path)
        yield files
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("events", [400, 1600])
def test_iter_batches_peak_rss_of_one_byte_rows(benchmark, one_byte_rows_files, events):
    """Peak RSS of streaming 3 MB and 12 MB of 1-byte row images (3.2 M and 12.8 M rows):
    bounded by ``batch_rows``, not by the file or by what its events hold."""
    path = one_byte_rows_files[events]
    result = benchmark.pedantic(_measure, args=([path], "test_db.buildings"), rounds=1, iterations=1)
    benchmark.extra_info.update(events=events, **_info(result, os.path.getsize(path)))
    print(f"\none-byte rows, {events} events: {json.dumps(benchmark.extra_info)}")
    assert result["rows"] == events * 8000 + 1  # the added images and the seed's other row
