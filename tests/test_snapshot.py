"""Snapshots and binlog sets, against a real MariaDB server's SELECT at the same points.

The workload spans several binlog files (FLUSH BINARY LOGS), changes primary keys, deletes,
and rolls back to a savepoint; the server's SELECT is taken at two points (with the GTID it
had written) and at the end.
"""

from __future__ import annotations

import json
import warnings

import pytest

import vecbinlog
from vecbinlog.log.logset import binlog_files, log_order_key

from .support.mariadb import copy_binlogs

from .conftest import DATA

SAMPLE = DATA / "sample" / "mariadb-bin.000001"


def test_sample_snapshot_equals_server_select():
    expected = json.loads((DATA / "sample" / "expected.json").read_text())
    with vecbinlog.open(SAMPLE) as log:
        for table, rows in expected.items():
            got = log.snapshot(table)
            assert sorted(map(list, zip(*got.to_pydict().values()))) == sorted(rows), table


@pytest.fixture(scope="module")
def snapshot_workload(mariadb_server, tmp_path_factory):
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS snap", "CREATE DATABASE snap")
    s.flush_binary_logs()
    first = len(s.binlog_files()) - 1
    s.execute("CREATE TABLE s (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET utf8mb4, n INT UNSIGNED)",
              *[f"INSERT INTO s VALUES ({i}, 'v{i}', {i * 1000})" for i in range(1, 41)], database="snap")
    at = {"a": (s.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0], sorted(s.query("SELECT * FROM snap.s")))}
    s.flush_binary_logs()
    s.execute("UPDATE s SET id = id + 100 WHERE id <= 5",  # key changes
              "DELETE FROM s WHERE id BETWEEN 10 AND 14",
              "BEGIN", "UPDATE s SET v = 'kept' WHERE id = 20", "SAVEPOINT x",
              "UPDATE s SET v = 'undone' WHERE id = 21", "ROLLBACK TO SAVEPOINT x", "COMMIT",
              database="snap")
    at["b"] = (s.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0], sorted(s.query("SELECT * FROM snap.s")))
    s.flush_binary_logs()
    s.execute("UPDATE s SET n = n + 1 WHERE id % 3 = 0", "INSERT INTO s VALUES (10, 'again', 7)",
              "DELETE FROM s WHERE id = 103", database="snap")
    s.flush_binary_logs()
    final = sorted(s.query("SELECT * FROM snap.s"))
    files = s.binlog_files()[first:-1]
    copies, index = copy_binlogs(files, tmp_path_factory.mktemp("snap"))
    return copies, index, at, final


def _rows(table):
    return sorted(tuple(r.values()) for r in table.to_pylist())


def test_snapshot_at_gtids_and_end(snapshot_workload):
    files, _, at, final = snapshot_workload
    with vecbinlog.open(files) as log:
        assert _rows(log.snapshot("snap.s")) == final
        for gtid, rows in at.values():
            assert _rows(log.snapshot("snap.s", until=gtid)) == rows, gtid


def test_snapshot_needs_a_key(snapshot_workload):
    files, _, _, final = snapshot_workload
    with vecbinlog.open(files, names={"snap.s": ["id", "v", "n"]}) as log:
        assert _rows(log.snapshot("snap.s", key=["id"])) == final
    with pytest.raises(ValueError, match="key column"):
        vecbinlog.open(files).snapshot("snap.s", key=["nope"])


def test_binlog_set_by_glob_index_and_list(snapshot_workload):
    files, index, _, _ = snapshot_workload
    by_list = vecbinlog.open(files).read_table("snap.s")
    assert len(set(by_list.column("_log_file").to_pylist())) == 3  # the changes span three files
    for spec in (str(files[0].parent / "mysql-bin.*"), str(index)):
        assert binlog_files(spec) == [str(f) for f in files]
        with vecbinlog.open(spec) as log:  # the same rows and types (the newest file of a glob or an
            got = log.read_table("snap.s")  # index is read with pread: its rows come in batches of their own)
        assert got.schema == by_list.schema and got.to_pylist() == by_list.to_pylist()


def test_files_out_of_order_warn(snapshot_workload):
    files, _, _, _ = snapshot_workload
    with pytest.warns(vecbinlog.BinlogSetWarning, match=f"rotates to '{files[1].name}'"):
        with vecbinlog.open([files[0], files[2]]) as log:
            log.read_table("snap.s")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # in order: no warning
        vecbinlog.open(files).read_table("snap.s")


def test_log_order_is_numeric():
    names = ["mysql-bin.1000000", "mysql-bin.999999", "mysql-bin.000010", "mysql-bin.000002"]
    assert sorted(names, key=log_order_key) == [
        "mysql-bin.000002", "mysql-bin.000010", "mysql-bin.999999", "mysql-bin.1000000"]


def test_snapshot_key_from_ddl(mariadb_server, mariadb_globals):
    """binlog_row_metadata=NO_LOG (MariaDB's default): no names, no key in the TABLE_MAPs; the
    CREATE TABLE in the log gives both, and the snapshot equals the server's SELECT."""
    mariadb_globals(binlog_row_metadata="NO_LOG")
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS snap2", "CREATE DATABASE snap2")
    path = s.capture_binlog(
        "CREATE TABLE k (a INT, code VARCHAR(8) CHARACTER SET utf8mb4, qty INT UNSIGNED, PRIMARY KEY (code, a))",
        "INSERT INTO k VALUES (1, 'x', 5), (2, 'x', 6), (1, 'y', 4000000000)",
        "UPDATE k SET qty = qty + 1 WHERE a = 1", "UPDATE k SET a = 3 WHERE code = 'x' AND a = 2",
        "DELETE FROM k WHERE code = 'y'", database="snap2")
    with vecbinlog.open(path) as log:
        got = log.snapshot("snap2.k")
    assert got.column_names == ["a", "code", "qty"]
    assert _rows(got) == sorted(s.query("SELECT a, code, qty FROM snap2.k"))
