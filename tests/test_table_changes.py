"""Tables that change within the log, against a real MariaDB server: dropped and created again
with other column types, CREATE OR REPLACE, an ALTER ... MODIFY no Arrow type can widen, then
ADD, DROP, CHANGE and RENAME COLUMN.

Every phase of the workload ends by touching every row (``UPDATE r SET n = n + 1``), so that
each row's last image is in the table's layout of that moment; the server's ``SELECT`` and its
GTID position are taken there. The change log of each front end (``read_all``,
``read_pandas``, ``vecbinlog to-parquet`` read back, ``snapshot`` at each GTID, ``vecbinlog
snapshot``) replayed by key up to each of those points equals that ``SELECT``, with
``binlog_row_metadata=FULL`` and with ``NO_LOG`` (names and UNSIGNED from the log's DDL
alone). ``tests/spark/test_spark.py`` reads the same workload through Spark.
"""

from __future__ import annotations

import subprocess
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import vecbinlog

from .support.workloads import PHASES, assert_phases, run_workload

pytestmark = pytest.mark.mariadb

#: read_table's columns: the last layout's, then the earlier ones; types no Arrow type widens
#: kept apart as name@V (V: the _schema_version from which they had that type)
COLUMNS = ["id", "d2", "a2", "n", "d", "a", "c", "a@2", "a@1", "b", "note", "a@0", "b@0"]
TYPES = {"id": pa.int32(), "d2": pa.int32(), "a2": pa.int64(), "n": pa.int64(), "d": pa.int32(), "a": pa.int32(),
         "c": pa.decimal128(5, 2), "a@2": pa.string(), "a@1": pa.date32(), "b": pa.uint64(), "note": pa.string(),
         "a@0": pa.uint64(), "b@0": pa.int32()}
#: _incarnation of each phase's rows: +1 at the DROP/CREATE and at the CREATE OR REPLACE
INCARNATION = [0, 1, 2, 2, 2, 2, 2]


@pytest.fixture(scope="module", params=["FULL", "NO_LOG"])
def workload(request, mariadb_server):
    return run_workload(mariadb_server, request.param)


def _plan(run):
    with vecbinlog.open(run["files"]) as log:
        return log.plans()[run["table"]]


def test_read_all_equals_select_after_every_phase(workload):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about: every DDL statement is understood
        with vecbinlog.open(workload["files"]) as log:
            t = log.read_all()[workload["table"]]
            plan = log.plans()[workload["table"]]
            assert log.schema(workload["table"]) == t.schema
    assert t.column_names[: len(COLUMNS)] == COLUMNS
    assert {n: t.schema.field(n).type for n in COLUMNS} == TYPES
    assert t.column_names[len(COLUMNS):][-2:] == ["_schema_version", "_incarnation"]
    rows = t.to_pylist()
    assert_phases(rows, plan, workload)
    # each layout's names are the server's (the types kept apart with their @V)
    by_version = {}
    for r in rows:
        by_version.setdefault(r["_schema_version"], r["_incarnation"])
    # one layout per phase: two ALTERs with no row between them make one new layout
    assert sorted(by_version) == list(range(len(PHASES)))
    names = [[n.split("@")[0] for n in plan.layout_names(v)] for v in sorted(by_version)]
    assert names == [m["names"] for m in workload["marks"]]
    # the incarnation of each phase's rows
    order = {f.name: k for k, f in enumerate(workload["files"])}
    marks = [(order[m["at"][0]], m["at"][1]) for m in workload["marks"]]
    for r in rows:
        phase = sum(m <= (order[r["_log_file"]], r["_log_pos"]) for m in marks)
        assert r["_incarnation"] == INCARNATION[phase]


def test_read_pandas_equals_select_after_every_phase(workload):
    df = vecbinlog.read_pandas(workload["files"], workload["table"])
    assert list(df.columns[: len(COLUMNS)]) == COLUMNS
    assert_phases(df.to_dict("records"), _plan(workload), workload)


def test_to_parquet_read_back_equals_select_after_every_phase(workload, tmp_path):
    out = tmp_path / "out"
    subprocess.run(["vecbinlog", "to-parquet", *map(str, workload["files"]), str(out), "-q"], check=True)
    folder = out / f"table={workload['table']}"
    back = pq.read_table(folder)  # every part in the table's one schema
    assert len(list(folder.iterdir())) == 1
    with vecbinlog.open(workload["files"]) as log:
        ref = log.read_table(workload["table"])
    assert back.schema.remove_metadata() == ref.schema.remove_metadata()
    assert back.to_pylist() == ref.to_pylist()
    assert_phases(back.to_pylist(), _plan(workload), workload)


def test_snapshot_at_every_phase(workload, tmp_path):
    """A snapshot replays the table's last incarnation only: the rows of a dropped table are gone.
    Its columns are named as read_table names them over the same files (phase k's layout is
    _schema_version k)."""
    plan = _plan(workload)
    with vecbinlog.open(workload["files"]) as log:
        for k, mark in enumerate(workload["marks"]):
            got = log.snapshot(workload["table"], until=mark["gtid"])
            names = plan.layout_names(k)
            assert {r["id"]: tuple(r[n] for n in names) for r in got.to_pylist()} == mark["rows"], k
            for extra in set(got.column_names) - set(names):  # columns of earlier layouts of the incarnation
                assert got.column(extra).null_count == got.num_rows, (k, extra)
    out = tmp_path / "r.parquet"
    subprocess.run(["vecbinlog", "snapshot", *map(str, workload["files"]), str(out), "--table", workload["table"],
                    "-q"], check=True)
    final = workload["marks"][-1]
    back = pq.read_table(out).to_pylist()
    assert {r["id"]: tuple(r[n] for n in final["names"]) for r in back} == final["rows"]


def test_truncate_starts_a_new_incarnation(mariadb_server):
    """TRUNCATE TABLE logs no deletes: the rows before it are another incarnation, which a
    snapshot does not replay; the snapshot at each point equals the server's SELECT."""
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS chg_trunc", "CREATE DATABASE chg_trunc")
    s.flush_binary_logs()
    path = s.current_binlog()
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(5))", "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
              database="chg_trunc")
    before = (s.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0], s.query("SELECT * FROM chg_trunc.t ORDER BY id"))
    s.execute("TRUNCATE TABLE t", "INSERT INTO t VALUES (2, 'c'), (3, 'd')", "UPDATE t SET v = 'e' WHERE id = 3",
              database="chg_trunc")
    after = s.query("SELECT * FROM chg_trunc.t ORDER BY id")
    s.flush_binary_logs()
    with vecbinlog.open(path) as log:
        t = log.read_table("chg_trunc.t")
        assert [(r["id"], r["_incarnation"], r["_schema_version"]) for r in t.to_pylist()] == [
            (1, 0, 0), (2, 0, 0), (2, 1, 0), (3, 1, 0), (3, 1, 0), (3, 1, 0)]
        assert sorted(tuple(r.values()) for r in log.snapshot("chg_trunc.t").to_pylist()) == list(after)
        got = log.snapshot("chg_trunc.t", until=before[0]).to_pylist()
        assert sorted(tuple(r.values()) for r in got) == list(before[1])
