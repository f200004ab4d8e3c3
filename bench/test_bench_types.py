"""Decode speed per type family, on one MariaDB-made binlog with a table per family.

    pytest bench/test_bench_types.py --benchmark-enable

Each table has an id and 4 columns of its family; rows/s and MB/s (of the table's rows
events) are in extra_info. A slow decoder shows up here.
"""

from __future__ import annotations

import random

import pytest

import vecbinlog

from .conftest import ROWS, SEED

FAMILIES = {
    "ints": ("INT", "BIGINT UNSIGNED", "SMALLINT", "TINYINT"),
    "decimal": ("DECIMAL(10,2)", "DECIMAL(20,6)", "DECIMAL(38,10)", "DECIMAL(65,30)"),
    "float": ("FLOAT", "DOUBLE", "DOUBLE", "FLOAT"),
    "utf8": ("VARCHAR(40) CHARACTER SET utf8mb4",) * 3 + ("TEXT CHARACTER SET utf8mb4",),
    "latin1": ("VARCHAR(40) CHARACTER SET latin1",) * 3 + ("TEXT CHARACTER SET latin1",),
    "temporal": ("DATE", "DATETIME(6)", "TIMESTAMP(3)", "TIME(2)"),
    "enum_set": ("ENUM('a','b','c')", "ENUM('x','y')", "SET('p','q','r')", "SET('s','t')"),
    "bit": ("BIT(1)", "BIT(8)", "BIT(33)", "BIT(64)"),
}


def _value(family: str, rnd: random.Random, k: int) -> str:
    if family == "ints":
        return str([rnd.randint(-2**31, 2**31 - 1), rnd.randint(0, 2**64 - 1), rnd.randint(-32768, 32767), rnd.randint(-128, 127)][k])
    if family == "decimal":
        return f"{rnd.uniform(-1e7, 1e7):.2f}" if k == 0 else f"{rnd.uniform(-1e9, 1e9):.6f}"
    if family == "float":
        return repr(rnd.uniform(-1e6, 1e6))
    if family in ("utf8", "latin1"):
        word = "".join(rnd.choice("abcdefghé ") for _ in range(rnd.randint(5, 30)))
        return f"'{word}'"
    if family == "temporal":
        return ["'2024-02-29'", "'2024-02-29 12:34:56.123456'", "'2021-06-01 00:00:00.125'", "'-12:34:56.78'"][k]
    if family == "enum_set":
        return ["'b'", "'y'", "'p,r'", "'t'"][k]
    return str([1, 200, 2**33 - 1, 2**64 - 1][k])


@pytest.fixture(scope="module")
def types_binlog(tmp_path_factory):
    from tests.support.mariadb import MariaDBServer, ensure_mariadb

    ensure_mariadb()
    rnd = random.Random(SEED)
    n = max(ROWS // 10, 1000)
    sql = []
    for fam, types in FAMILIES.items():
        sql.append(f"CREATE TABLE t_{fam} (id INT PRIMARY KEY, " + ", ".join(f"c{k} {t}" for k, t in enumerate(types)) + ")")
        for base in range(0, n, 500):
            sql.append(f"INSERT INTO t_{fam} VALUES " + ",".join(
                "(" + ", ".join([str(base + i)] + [_value(fam, rnd, k) for k in range(4)]) + ")"
                for i in range(min(500, n - base))))
    with MariaDBServer(options={"binlog_row_metadata": "FULL", "innodb_flush_log_at_trx_commit": "0"}) as server:
        server.execute("CREATE DATABASE t")
        path = server.capture_binlog(*sql, database="t")
        out = tmp_path_factory.mktemp("types") / path.name
        out.write_bytes(path.read_bytes())
    with vecbinlog.open(out) as log:
        ev = log.events().to_pandas()
    # bytes of each table's rows events (table ids from the TABLE_MAP infos), for MB/s
    ids = {}
    for info in ev.loc[ev["type"] == "TABLE_MAP_EVENT", "info"]:
        tid, name = info.split(" (")
        ids[tid.split(": ")[1]] = name.rstrip(")").split(".")[1][2:]
    rows = ev[ev["type"].str.contains("ROWS_EVENT")]
    fam_of = rows["info"].str.split(" ").str[1].map(ids)
    rows_bytes = rows.groupby(fam_of)["size"].sum().to_dict()
    return out, n, rows_bytes


@pytest.mark.parametrize("family", list(FAMILIES))
def test_read_family(benchmark, types_binlog, family):
    path, n, rows_bytes = types_binlog

    def run():
        with vecbinlog.open(path) as log:
            return log.read_table(f"t.t_{family}").num_rows

    rows = benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    assert rows == n
    if benchmark.stats:
        best = benchmark.stats.stats.min
        benchmark.extra_info.update(rows=rows, rows_per_s=round(rows / best), mb_per_s=round(rows_bytes[family] / best / 1e6, 1))
