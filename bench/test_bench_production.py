"""Production shapes first: small transactions over many tables, one file and many small files.

    pytest bench/test_bench_production.py --benchmark-enable --benchmark-columns=min,mean,rounds

A MariaDB server writes the OLTP workload of bench/shapes.py once as one file and once rotated
into files of 512 KiB; vecbinlog's ``read_all``, every table in turn from one open log, and
``mariadb-binlog -v`` read them in the same run (bench/peers.py has the full table and the
targets). VECBINLOG_PRODUCTION_CHANGES sets the size (default 20 000 row changes).
"""

from __future__ import annotations

import os
import subprocess

import pytest

import vecbinlog
from bench import shapes
from bench.peers import DEFAULT_SEED, SERVER_OPTIONS, files_of
from tests.support.mariadb import MariaDBServer, ensure_mariadb, find_tool

CHANGES = int(os.environ.get("VECBINLOG_PRODUCTION_CHANGES", "20000"))


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """{shape: path}: the OLTP workload as one file, and as a folder of small files."""
    ensure_mariadb()
    folder = tmp_path_factory.mktemp("production")
    with MariaDBServer(options=SERVER_OPTIONS) as server:
        return {name: shapes.write(server, name, CHANGES, DEFAULT_SEED, folder) for name in ("oltp", "archive")}


@pytest.fixture(scope="module")
def images(written) -> dict[str, int]:
    out = {}
    for name, path in written.items():
        with vecbinlog.open(path) as log:
            out[name] = sum(t.num_rows for t in log.read_all().values())
    return out


@pytest.mark.parametrize("shape", ["oltp", "archive"])
def test_production_read_all(benchmark, written, images, shape):
    def run():
        with vecbinlog.open(written[shape]) as log:
            return sum(t.num_rows for t in log.read_all().values())

    assert benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1) == images[shape]
    benchmark.extra_info.update(row_images=images[shape], files=len(files_of(written[shape])))


@pytest.mark.parametrize("shape", ["oltp", "archive"])
def test_production_each_table(benchmark, written, images, shape):
    def run():
        with vecbinlog.open(written[shape]) as log:
            return sum(log.read_table(t).num_rows for t in log.tables)

    assert benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1) == images[shape]


@pytest.mark.parametrize("shape", ["oltp", "archive"])
def test_production_mariadb_binlog(benchmark, written, shape):
    tool = find_tool("mariadb-binlog")
    if tool is None:
        pytest.skip("mariadb-binlog is not installed")
    argv = [tool, "--no-defaults", "--base64-output=DECODE-ROWS", "-v", *map(str, files_of(written[shape]))]
    benchmark.pedantic(lambda: subprocess.run(argv, stdout=subprocess.DEVNULL, check=True), rounds=3, iterations=1,
                       warmup_rounds=1)
