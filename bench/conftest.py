"""Benchmark fixtures: binlogs written by a real MariaDB server started for the run."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.mariadb import MariaDBServer, ensure_mariadb  # noqa: E402

#: Rows of the generated tables; VECBINLOG_BENCH_ROWS scales the files (1M narrow rows ~ 40 MB).
ROWS = int(os.environ.get("VECBINLOG_BENCH_ROWS", "300000"))
SEED = 20261121


def _narrow(rnd: random.Random, n: int) -> list[str]:
    out = ["CREATE TABLE narrow (id BIGINT PRIMARY KEY, a INT, b INT UNSIGNED, c SMALLINT, d TINYINT, e BIGINT)"]
    for base in range(0, n, 1000):
        out.append("INSERT INTO narrow VALUES " + ",".join(
            f"({base + i},{rnd.randint(-2**31, 2**31 - 1)},{rnd.randint(0, 2**32 - 1)},"
            f"{rnd.randint(-32768, 32767)},{rnd.randint(-128, 127)},{rnd.randint(-2**63, 2**63 - 1)})"
            for i in range(min(1000, n - base))))
    return out


def _strings(rnd: random.Random, n: int) -> list[str]:
    out = ["CREATE TABLE strings (id BIGINT PRIMARY KEY, customer VARCHAR(64) CHARACTER SET utf8mb4, "
           "amount DOUBLE, note TEXT CHARACTER SET utf8mb4, qty INT UNSIGNED NULL)"]
    for base in range(0, n, 500):
        out.append("INSERT INTO strings VALUES " + ",".join(
            f"({base + i},'customer-{rnd.randint(0, 10**6)}',{rnd.random() * 1000:.6f},"
            f"'note {rnd.random():.12f} ü',{'NULL' if i % 7 == 0 else i})"
            for i in range(min(500, n - base))))
    out.append("UPDATE strings SET amount = amount + 1 WHERE id % 3 = 0")
    out.append("DELETE FROM strings WHERE id % 5 = 0")
    return out


@pytest.fixture(scope="session")
def bench_binlogs(tmp_path_factory) -> dict[str, Path]:
    """{'narrow': path, 'strings': path}: one binlog file per workload (binlog_row_metadata=FULL)."""
    ensure_mariadb()
    rnd = random.Random(SEED)
    out: dict[str, Path] = {}
    workdir = tmp_path_factory.mktemp("bench")
    opts = {"binlog_row_metadata": "FULL", "innodb_flush_log_at_trx_commit": "0", "sync_binlog": "0",
            "innodb_buffer_pool_size": "256M"}
    with MariaDBServer(options=opts) as server:
        server.execute("CREATE DATABASE b")
        for name, make in (("narrow", _narrow), ("strings", _strings)):
            path = server.capture_binlog(*make(rnd, ROWS if name == "narrow" else ROWS // 3), database="b")
            out[name] = workdir / path.name
            out[name].write_bytes(path.read_bytes())
    return out
