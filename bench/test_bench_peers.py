"""vecbinlog against its peers on the OLTP `orders` shape (bench/peers.py has the full table).

    pytest bench/test_bench_peers.py --benchmark-enable --benchmark-columns=min,mean,rounds

The server stays up for the whole module: python-mysql-replication streams the file from it.
VECBINLOG_PEERS_ROWS sets the size (default 20 000 orders). Rows/s and MB/s are in each
benchmark's extra_info (--benchmark-json). The python-mysql-replication test is skipped when
mysql-replication is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import vecbinlog
from bench.peers import DEFAULT_SEED, SERVER_OPTIONS, generate
from tests.support.mariadb import MariaDBServer, ensure_mariadb, find_tool

ROWS = int(os.environ.get("VECBINLOG_PEERS_ROWS", "20000"))


@pytest.fixture(scope="module")
def orders_server():
    """(running server, path of the binlog file holding the `orders` workload)."""
    ensure_mariadb()
    with MariaDBServer(options=SERVER_OPTIONS) as server:
        files = generate(server, ROWS, DEFAULT_SEED, ["orders"])
        yield server, files["orders"]


@pytest.fixture(scope="module")
def orders_images(orders_server) -> int:
    _, path = orders_server
    with vecbinlog.open(path) as log:
        return sum(t.num_rows for t in log.read_all().values())


def _rates(benchmark, path, images):
    best = benchmark.stats.stats.min if benchmark.stats else None
    if best:
        benchmark.extra_info.update(row_images=images, rows_per_s=images / best,
                                    mb_per_s=path.stat().st_size / best / 1e6)


def test_peers_vecbinlog_read_all(benchmark, orders_server, orders_images):
    _, path = orders_server

    def run():
        with vecbinlog.open(path) as log:
            return sum(t.num_rows for t in log.read_all().values())

    assert benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1) == orders_images
    _rates(benchmark, path, orders_images)


def test_peers_vecbinlog_cli(benchmark, orders_server, orders_images, tmp_path):
    _, path = orders_server
    exe = shutil.which("vecbinlog") or os.path.join(os.path.dirname(sys.executable), "vecbinlog")
    outs = iter(range(100))

    def run():
        subprocess.run([exe, "to-parquet", str(path), str(tmp_path / f"o{next(outs)}"), "-q"], check=True)

    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    _rates(benchmark, path, orders_images)


def test_peers_to_pandas(benchmark, orders_server, orders_images):
    _, path = orders_server
    with vecbinlog.open(path) as log:
        tables = log.read_all()
    benchmark.pedantic(lambda: {k: t.to_pandas() for k, t in tables.items()}, rounds=3, iterations=1,
                       warmup_rounds=1)
    _rates(benchmark, path, orders_images)


def test_peers_mariadb_binlog(benchmark, orders_server, orders_images):
    _, path = orders_server
    tool = find_tool("mariadb-binlog")

    def run():
        subprocess.run([tool, "--no-defaults", "--base64-output=DECODE-ROWS", "-v", str(path)],
                       stdout=subprocess.DEVNULL, check=True)

    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    _rates(benchmark, path, orders_images)


# mysql-replication opens its control connection with pymysql's deprecated `db=` argument
@pytest.mark.filterwarnings("ignore:'db' is deprecated:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:'passwd' is deprecated:DeprecationWarning")
def test_peers_python_mysql_replication(benchmark, orders_server, orders_images):
    pytest.importorskip("pymysqlreplication", reason="pip install mysql-replication")
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import RotateEvent
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

    server, path = orders_server
    settings = {"unix_socket": str(server.socket), "user": "root", "password": ""}
    # is_mariadb=True ignores log_file/log_pos in mysql-replication 1.0.x: start by GTID instead.
    gtid = server.query(f"SELECT BINLOG_GTID_POS('{path.name}', 4)")[0][0]

    def run():
        stream = BinLogStreamReader(
            connection_settings=settings, server_id=101, is_mariadb=True, auto_position=gtid,
            only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, RotateEvent],
            log_file=path.name, log_pos=4, resume_stream=True, blocking=False)
        images = 0
        try:
            for ev in stream:
                if isinstance(ev, RotateEvent):
                    if ev.next_binlog != path.name:
                        break
                    continue
                for r in ev.rows:
                    if isinstance(ev, UpdateRowsEvent):
                        for v in r["before_values"].values():
                            pass
                        for v in r["after_values"].values():
                            pass
                        images += 2
                    else:
                        for v in r["values"].values():
                            pass
                        images += 1
        finally:
            stream.close()
        return images

    assert benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1) == orders_images
    _rates(benchmark, path, orders_images)


def test_peers_raw_read(benchmark, orders_server):
    _, path = orders_server
    buf = bytearray(path.stat().st_size)

    def run():
        with open(path, "rb", buffering=0) as f:
            return f.readinto(buf)

    assert benchmark.pedantic(run, rounds=5, iterations=1, warmup_rounds=1) == len(buf)
    if benchmark.stats:
        benchmark.extra_info["mb_per_s"] = len(buf) / benchmark.stats.stats.min / 1e6


def test_peers_raw_numpy_pass(benchmark, orders_server):
    _, path = orders_server
    benchmark.pedantic(lambda: int(np.memmap(path, dtype=np.uint8, mode="r").max()), rounds=5, iterations=1,
                       warmup_rounds=1)
    if benchmark.stats:
        benchmark.extra_info["mb_per_s"] = path.stat().st_size / benchmark.stats.stats.min / 1e6
