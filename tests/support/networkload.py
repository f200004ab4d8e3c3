"""The net-changes workload: a real MariaDB server's table changed over three files, its rows,
GTID and position taken at two points A and B and at the end, and what the net changes and the
Delta tables landed from them are compared with (tests/test_netchanges.py,
tests/spark/test_spark_streaming.py)."""

from __future__ import annotations

import shutil
import time
import warnings
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

import vecbinlog
from vecbinlog.streaming import Position

#: the table's columns, in the server's order (the first the key)
COLUMNS = ("id", "v", "n", "d", "at", "tm")


def _mark(server) -> dict:
    """The server's rows, GTID and position now (once it has written everything it owes)."""
    for _ in range(100):  # a BINLOG_CHECKPOINT event may still come after the last commit
        status = server.query("SHOW MASTER STATUS")[0]
        if (server.binlog_dir / status[0]).stat().st_size == int(status[1]):
            break
        time.sleep(0.05)
    return {"rows": sorted(server.query("SELECT id, v, n, d, at, tm FROM net.t")),
            "gtid": server.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0],
            "at": Position(status[0], int(status[1]))}


def run_net_workload(server, out: Path) -> dict:
    """Run the workload; its files copied into ``out``, and the server's rows, GTID and position
    at A, B and the end."""
    s = server
    s.execute("DROP DATABASE IF EXISTS net", "CREATE DATABASE net")
    s.flush_binary_logs()
    first = s.current_binlog().name
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET utf8mb4, n INT UNSIGNED, "
              "d DECIMAL(8,2), at DATETIME(3), tm TIME)",
              *(f"INSERT INTO t VALUES ({i}, 'v{i}', {i * 1000}, {i}.25, '2026-01-0{1 + i % 9} 10:00:00.123', "
                f"'{i}:30:00')" for i in range(1, 31)), database="net")
    a = _mark(s)
    s.execute("UPDATE t SET id = id + 100 WHERE id <= 3",  # key changes: 1..3 go, 101..103 come
              "DELETE FROM t WHERE id BETWEEN 10 AND 12",
              "INSERT INTO t VALUES (500, 'brief', 1, 1, NULL, NULL)", "DELETE FROM t WHERE id = 500",
              "INSERT INTO t VALUES (600, 'new', 2, 2.5, '2026-02-01 00:00:00', '-01:00:00')",
              "UPDATE t SET v = 'newer' WHERE id = 600",
              "FLUSH BINARY LOGS",
              "DELETE FROM t WHERE id = 7", "INSERT INTO t VALUES (7, 'again', 7, 7, NULL, '00:00:01')",
              "UPDATE t SET n = n + 1 WHERE id = 8", "UPDATE t SET n = n + 1, v = 'twice' WHERE id = 8",
              "BEGIN", "UPDATE t SET v = 'kept' WHERE id = 20", "SAVEPOINT x", "UPDATE t SET v = 'undone' WHERE id = 21",
              "ROLLBACK TO SAVEPOINT x", "COMMIT", database="net")
    b = _mark(s)
    s.execute("FLUSH BINARY LOGS", "UPDATE t SET v = 'after b' WHERE id = 4", "DELETE FROM t WHERE id = 5",
              database="net")
    end = _mark(s)
    s.flush_binary_logs()
    files = s.binlog_files()
    files = files[[f.name for f in files].index(first):-1]
    for f in files:
        shutil.copy(f, out / f.name)
    return {"folder": out, "files": [out / f.name for f in files], "a": a, "b": b, "end": end}


def stretch(run: dict, a: Position, b: Position) -> list:
    """The workload's files from the one position ``a`` is in to the one ``b`` is in."""
    names = [f.name for f in run["files"]]
    return run["files"][names.index(a.file): names.index(b.file) + 1]


def apply_net(rows: list[tuple], net: pa.Table) -> list[tuple]:
    """``rows`` (the server's, first column the key) with net changes applied by key."""
    state = {r[0]: r for r in rows}
    for r in net.to_pylist():
        if r["_change_type"] == "delete":
            del state[r["id"]]
        else:
            state[r["id"]] = tuple(r[c] for c in COLUMNS)
    return sorted(state.values())


def quiet(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` without the DecodeWarning of the change ROLLBACK TO undid."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.DecodeWarning)  # the change undone by ROLLBACK TO
        return fn(*args, **kwargs)


def lake_rows(path) -> list[tuple]:
    """The Delta table's rows as the server's SELECT gives them (TIME: microseconds back to a timedelta)."""
    from deltalake import DeltaTable

    rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    return sorted((r["id"], r["v"], r["n"], r["d"], r["at"], None if r["tm"] is None else timedelta(microseconds=r["tm"]))
                  for r in rows)


def server_rows(rows: list[tuple]) -> list[tuple]:
    """The server's rows with DATETIME(3) as Delta keeps it (microseconds: the same instant)."""
    return sorted((i, v, n, Decimal(d) if d is not None else None, at, tm) for i, v, n, d, at, tm in rows)
