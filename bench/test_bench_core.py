"""Decode throughput: vecbinlog vs the vendor's C decoder, on the same MariaDB-made files.

    pytest bench/ --benchmark-enable --benchmark-columns=min,mean,rounds

Rows/s and MB/s are in each benchmark's extra_info (shown with --benchmark-json).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

import vecbinlog


@pytest.mark.parametrize("shape", ["narrow", "strings"])
def test_vecbinlog_read_all(benchmark, bench_binlogs, shape):
    path = bench_binlogs[shape]

    def run():
        with vecbinlog.open(path) as log:
            return sum(t.num_rows for t in log.read_all().values())

    rows = benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    assert rows > 0
    best = benchmark.stats.stats.min if benchmark.stats else None
    if best:
        benchmark.extra_info.update(rows=rows, rows_per_s=rows / best, mb_per_s=path.stat().st_size / best / 1e6)


@pytest.mark.parametrize("shape", ["narrow", "strings"])
def test_mariadb_binlog_verbose(benchmark, bench_binlogs, shape):
    tool = shutil.which("mariadb-binlog")
    path = bench_binlogs[shape]

    def run():
        subprocess.run([tool, "--no-defaults", "-v", "--base64-output=DECODE-ROWS", str(path)],
                       stdout=subprocess.DEVNULL, check=True)

    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
