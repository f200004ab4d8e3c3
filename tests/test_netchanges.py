"""Net changes (vecbinlog.netchanges) against a real MariaDB server's SELECT at two points.

The workload spans three files and, between the two points A and B, changes keys, deletes,
inserts and deletes the same key, inserts then updates, deletes then inserts again, updates
a row twice, and rolls back to a savepoint. The net changes of (A, B], applied to the
server's SELECT at A (by key: a delete removes the row, anything else sets it), must equal
its SELECT at B; so must a Delta table landed by ``examples/delta_net_changes.py``
(``deltalake``: ``write_deltalake``, then ``merge``) run by run.
"""

from __future__ import annotations

import importlib.util
import shutil
import time
import warnings
from datetime import timedelta
from decimal import Decimal

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.errors import UnsupportedError
from vecbinlog.netchanges import net_changes, read_net_changes
from vecbinlog.streaming import Position

from .conftest import ROOT

pytestmark = pytest.mark.mariadb

COLUMNS = ("id", "v", "n", "d", "at", "tm")


def _mark(server) -> dict:
    for _ in range(100):  # a BINLOG_CHECKPOINT event may still come after the last commit
        status = server.query("SHOW MASTER STATUS")[0]
        if (server.binlog_dir / status[0]).stat().st_size == int(status[1]):
            break
        time.sleep(0.05)
    return {"rows": sorted(server.query("SELECT id, v, n, d, at, tm FROM net.t")),
            "gtid": server.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0],
            "at": Position(status[0], int(status[1]))}


@pytest.fixture(scope="module")
def marked(mariadb_server, tmp_path_factory):
    """The workload's files (copied), and the server's rows, GTID and position at A, B and the end."""
    s = mariadb_server
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
    out = tmp_path_factory.mktemp("net")
    for f in files:
        shutil.copy(f, out / f.name)
    return {"folder": out, "files": [out / f.name for f in files], "a": a, "b": b, "end": end}


def _stretch(run: dict, a: Position, b: Position) -> list:
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


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.DecodeWarning)  # the change undone by ROLLBACK TO
        return fn(*args, **kwargs)


def test_net_changes_of_a_stretch_take_its_start_to_its_end(marked):
    a, b = marked["a"], marked["b"]
    net = _quiet(read_net_changes, _stretch(marked, a["at"], b["at"]), "net.t", start=a["at"].pos, stop=b["at"].pos)
    assert apply_net(a["rows"], net) == b["rows"]
    kinds = dict(zip(net.column("id").to_pylist(), net.column("_change_type").to_pylist()))
    assert 500 not in kinds  # inserted and deleted within the stretch
    assert {k: kinds[k] for k in (1, 2, 3, 101, 102, 103, 10, 600, 7, 8, 20)} == {
        1: "delete", 2: "delete", 3: "delete", 101: "insert", 102: "insert", 103: "insert", 10: "delete",
        600: "insert", 7: "update_postimage", 8: "update_postimage", 20: "update_postimage"}
    assert 21 not in kinds  # undone by ROLLBACK TO SAVEPOINT
    assert net.schema.field("id").metadata[b"vecbinlog.primary_key"] == b"0"  # the key, from the binlog
    # the same stretch as a GTID range, over every file; the whole log from nothing to the end
    first, last = (int(m["gtid"].rsplit("-", 1)[1]) for m in (a, b))
    by_gtid = _quiet(read_net_changes, marked["files"], "net.t", gtids=f"0-1-{first + 1}..{last}")
    assert by_gtid.to_pylist() == net.to_pylist()
    everything = _quiet(read_net_changes, marked["files"], "net.t")
    assert apply_net([], everything) == marked["end"]["rows"]
    assert set(everything.column("_change_type").to_pylist()) == {"insert"}


def test_net_changes_in_any_row_order_and_of_pieces(marked):
    """Rows shuffled (a Spark micro-batch has no order) give the same net changes; the net
    changes of two halves applied one after the other equal those of the whole."""
    a, b, end = marked["a"], marked["b"], marked["end"]
    changes = _quiet(vecbinlog.read_table, _stretch(marked, a["at"], end["at"]), "net.t", start=a["at"].pos)
    whole = net_changes(changes, ["id"])
    shuffled = changes.take(pa.array(list(reversed(range(changes.num_rows)))))
    assert net_changes(shuffled, ["id"]).to_pylist() == whole.to_pylist()
    names = [f.name for f in marked["files"]]
    at_b = (names.index(b["at"].file), b["at"].pos)
    before_b = pa.array([(names.index(f), p) < at_b for f, p in zip(changes.column("_log_file").to_pylist(),
                                                                     changes.column("_log_pos").to_pylist())])
    first, second = changes.filter(before_b), changes.filter(pa.compute.invert(before_b))
    assert apply_net(apply_net(a["rows"], net_changes(first, ["id"])), net_changes(second, ["id"])) == end["rows"]
    assert apply_net(a["rows"], whole) == end["rows"]


def test_net_changes_need_a_key_and_full_images(marked):
    changes = _quiet(vecbinlog.read_table, marked["files"], "net.t")
    with pytest.raises(ValueError, match="key columns"):
        net_changes(changes)
    with pytest.raises(ValueError, match="not among"):
        net_changes(changes, ["nope"])
    partial = changes.set_column(changes.column_names.index("_absent"), "_absent",
                                 pa.array([["v"]] * changes.num_rows, changes.schema.field("_absent").type))
    with pytest.raises(UnsupportedError, match="FULL row images"):
        net_changes(partial, ["id"])


# -- Delta ------------------------------------------------------------------------------------
def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lake_rows(path) -> list[tuple]:
    """The Delta table's rows as the server's SELECT gives them (TIME: microseconds back to a timedelta)."""
    from deltalake import DeltaTable

    rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    return sorted((r["id"], r["v"], r["n"], r["d"], r["at"], None if r["tm"] is None else timedelta(microseconds=r["tm"]))
                  for r in rows)


def _server_rows(rows: list[tuple]) -> list[tuple]:
    """The server's rows with DATETIME(3) as Delta keeps it (microseconds: the same instant)."""
    return sorted((i, v, n, Decimal(d) if d is not None else None, at, tm) for i, v, n, d, at, tm in rows)


def test_delta_table_landed_run_after_run(marked, tmp_path):
    """examples/delta_net_changes.py: a first run up to A creates the Delta table (the server's
    SELECT at A); a run up to B merges the net changes of (A, B] (SELECT at B); a run with
    nothing new changes nothing; the last run reaches the end. The position each run reached is
    in its Delta commit."""
    pytest.importorskip("deltalake")
    from deltalake import DeltaTable

    example = _example("delta_net_changes")
    lake = str(tmp_path / "lake")
    archive = str(marked["folder"])
    for mark in ("a", "b"):
        done = _quiet(example.run, archive, "net.t", lake, until=marked[mark]["at"])
        assert done is not None and done[1] == marked[mark]["at"]
        assert lake_rows(lake) == _server_rows(marked[mark]["rows"]), mark
        assert example.last_position(lake) == marked[mark]["at"]
    _quiet(example.main, [archive, "net.t", lake])
    assert lake_rows(lake) == _server_rows(marked["end"]["rows"])
    versions = DeltaTable(lake).version()
    assert _quiet(example.run, archive, "net.t", lake) is None  # nothing new: no commit
    assert DeltaTable(lake).version() == versions
    schema = DeltaTable(lake).to_pyarrow_table().schema
    assert schema.field("n").type == pa.int64() and schema.field("tm").type == pa.int64()  # UNSIGNED, TIME for Delta
