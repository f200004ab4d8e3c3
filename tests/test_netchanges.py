"""Net changes (vecbinlog.netchanges) against a real MariaDB server's SELECT at two points (and,
in the quick tier, the sample's: data/sample/workload.sql and expected.json).

The workload spans three files and, between the two points A and B, changes keys, deletes,
inserts and deletes the same key, inserts then updates, deletes then inserts again, updates
a row twice, and rolls back to a savepoint. The net changes of (A, B], applied to the
server's SELECT at A (by key: a delete removes the row, anything else sets it), must equal
its SELECT at B; so must a Delta table landed by ``examples/delta_net_changes.py``
(``deltalake``: ``write_deltalake``, then ``merge``) run by run.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.errors import UnsupportedError
from vecbinlog.netchanges import net_changes, read_net_changes

from .conftest import DATA
from .support.examples import load_example
from .support.networkload import apply_net, lake_rows, quiet, server_rows, stretch

SAMPLE = DATA / "sample"
#: shop.orders as data/sample/workload.sql leaves it before its UPDATE (GTID 0-1-7)
ORDERS_BEFORE_THE_UPDATE = [[1001, 1, 2, 19.99, None], [1002, 2, 1, 5.5, "gift wrap \N{WRAPPED PRESENT}"],
                            [1003, 3, 10, 0.25, ""], [1004, 1, 65535, 1e9, "bulk"]]


def _applied(rows: list[list], net: pa.Table) -> list[list]:
    """``rows`` (first column the key) with the net changes applied by key."""
    state = {r[0]: r for r in rows}
    for r in net.drop_columns([c for c in net.column_names if c.startswith("_") and c != "_change_type"]).to_pylist():
        kind = r.pop("_change_type")
        if kind == "delete":
            del state[r["id"]]
        else:
            state[r["id"]] = list(r.values())
    return sorted(state.values())


def test_net_changes_of_the_sample():
    """The sample's net changes after GTID 0-1-6 (an update, a delete) applied to shop.orders as
    workload.sql leaves it then, and the whole file's applied to nothing: the server's SELECT
    at the end (expected.json)."""
    expected = json.loads((SAMPLE / "expected.json").read_text())
    path = SAMPLE / "mariadb-bin.000001"
    net = read_net_changes(path, "shop.orders", gtids="0-1-7..9")
    assert dict(zip(net.column("id").to_pylist(), net.column("_change_type").to_pylist())) == {
        1001: "update_postimage", 1003: "delete"}
    assert _applied(ORDERS_BEFORE_THE_UPDATE, net) == expected["shop.orders"]
    for table in ("shop.orders", "shop.customers"):
        assert _applied([], read_net_changes(path, table)) == expected[table]


def test_net_changes_of_a_stretch_take_its_start_to_its_end(net_workload):
    a, b = net_workload["a"], net_workload["b"]
    net = quiet(read_net_changes, stretch(net_workload, a["at"], b["at"]), "net.t", start=a["at"].pos, stop=b["at"].pos)
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
    by_gtid = quiet(read_net_changes, net_workload["files"], "net.t", gtids=f"0-1-{first + 1}..{last}")
    assert by_gtid.to_pylist() == net.to_pylist()
    everything = quiet(read_net_changes, net_workload["files"], "net.t")
    assert apply_net([], everything) == net_workload["end"]["rows"]
    assert set(everything.column("_change_type").to_pylist()) == {"insert"}


def test_net_changes_in_any_row_order_and_of_pieces(net_workload):
    """Rows shuffled (a Spark micro-batch has no order) give the same net changes; the net
    changes of two halves applied one after the other equal those of the whole."""
    a, b, end = net_workload["a"], net_workload["b"], net_workload["end"]
    changes = quiet(vecbinlog.read_table, stretch(net_workload, a["at"], end["at"]), "net.t", start=a["at"].pos)
    whole = net_changes(changes, ["id"])
    shuffled = changes.take(pa.array(list(reversed(range(changes.num_rows)))))
    assert net_changes(shuffled, ["id"]).to_pylist() == whole.to_pylist()
    names = [f.name for f in net_workload["files"]]
    at_b = (names.index(b["at"].file), b["at"].pos)
    before_b = pa.array([(names.index(f), p) < at_b for f, p in zip(changes.column("_log_file").to_pylist(),
                                                                     changes.column("_log_pos").to_pylist())])
    first, second = changes.filter(before_b), changes.filter(pa.compute.invert(before_b))
    assert apply_net(apply_net(a["rows"], net_changes(first, ["id"])), net_changes(second, ["id"])) == end["rows"]
    assert apply_net(a["rows"], whole) == end["rows"]


def test_net_changes_need_a_key_and_full_images(net_workload):
    changes = quiet(vecbinlog.read_table, net_workload["files"], "net.t")
    with pytest.raises(ValueError, match="key columns"):
        net_changes(changes)
    with pytest.raises(ValueError, match="not among"):
        net_changes(changes, ["nope"])
    partial = changes.set_column(changes.column_names.index("_absent"), "_absent",
                                 pa.array([["v"]] * changes.num_rows, changes.schema.field("_absent").type))
    with pytest.raises(UnsupportedError, match="FULL row images"):
        net_changes(partial, ["id"])


# -- Delta ------------------------------------------------------------------------------------
def test_delta_table_landed_run_after_run(net_workload, tmp_path):
    """examples/delta_net_changes.py: a first run up to A creates the Delta table (the server's
    SELECT at A); a run up to B merges the net changes of (A, B] (SELECT at B); a run with
    nothing new changes nothing; the last run reaches the end. The position each run reached is
    in its Delta commit."""
    pytest.importorskip("deltalake")
    from deltalake import DeltaTable

    example = load_example("delta_net_changes")
    lake = str(tmp_path / "lake")
    archive = str(net_workload["folder"])
    for mark in ("a", "b"):
        done = quiet(example.run, archive, "net.t", lake, until=net_workload[mark]["at"])
        assert done is not None and done[1] == net_workload[mark]["at"]
        assert lake_rows(lake) == server_rows(net_workload[mark]["rows"]), mark
        assert example.last_position(lake) == net_workload[mark]["at"]
    quiet(example.main, [archive, "net.t", lake])
    assert lake_rows(lake) == server_rows(net_workload["end"]["rows"])
    versions = DeltaTable(lake).version()
    assert quiet(example.run, archive, "net.t", lake) is None  # nothing new: no commit
    assert DeltaTable(lake).version() == versions
    schema = DeltaTable(lake).to_pyarrow_table().schema
    assert schema.field("n").type == pa.int64() and schema.field("tm").type == pa.int64()  # UNSIGNED, TIME for Delta
