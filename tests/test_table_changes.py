"""Tables that change within the log, against a real MariaDB server: dropped and created again
with other column types, CREATE OR REPLACE, an ALTER ... MODIFY no Arrow type can widen, then
ADD, DROP, CHANGE and RENAME COLUMN.

Every phase of the workload ends by touching every row (``UPDATE r SET n = n + 1``), so that
each row's last image is in the table's layout of that moment; the server's ``SELECT`` and its
GTID position are taken there. The change log of each front end (``read_all``,
``read_pandas``, ``vecbinlog to-parquet`` read back, ``snapshot`` at each GTID, ``vecbinlog
snapshot``) replayed by key up to each of those points equals that ``SELECT``, with
``binlog_row_metadata=FULL`` and with ``NO_LOG`` (names and UNSIGNED from the log's DDL
alone). ``tests/test_spark.py`` reads the same workload through Spark.
"""

from __future__ import annotations

import subprocess
import warnings

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import vecbinlog

from .support.replay import apply_change

pytestmark = pytest.mark.mariadb

DB = "chg"
#: (statements of the phase, flush the binlog after it); every phase ends with the touch
PHASES: list[tuple[list[str], bool]] = [
    (["CREATE TABLE r (id INT PRIMARY KEY, a BIGINT UNSIGNED, b INT, n INT NOT NULL DEFAULT 0, note VARCHAR(20))",
      "INSERT INTO r VALUES (1, 18446744073709551615, -5, 0, 'one'), (2, 0, 2147483647, 0, NULL), (3, 7, NULL, 0, 'x')",
      "UPDATE r SET note = 'ONE' WHERE id = 1", "DELETE FROM r WHERE id = 3"], True),
    # dropped and created again: BIGINT UNSIGNED -> DATE, INT -> BIGINT UNSIGNED
    (["DROP TABLE r",
      "CREATE TABLE r (id INT PRIMARY KEY, a DATE, b BIGINT UNSIGNED, n INT NOT NULL DEFAULT 0, note VARCHAR(20))",
      "INSERT INTO r VALUES (1, '2020-01-02', 18446744073709551615, 0, 'b1'), (4, NULL, 4, 0, 'b4')",
      "UPDATE r SET a = '1999-12-31' WHERE id = 4"], False),
    (["CREATE OR REPLACE TABLE r (id INT PRIMARY KEY, a VARCHAR(10), n INT NOT NULL DEFAULT 0, c DECIMAL(5,2))",
      "INSERT INTO r VALUES (5, '12', 0, 1.25), (6, '-7', 0, NULL)"], True),
    (["ALTER TABLE r MODIFY a INT", "INSERT INTO r VALUES (7, 70, 0, 9.99)"], False),  # text -> INT
    (["ALTER TABLE r ADD COLUMN d INT AFTER id", "INSERT INTO r VALUES (8, -8, 80, 0, 0.5)"], False),
    (["ALTER TABLE r DROP COLUMN c", "ALTER TABLE r CHANGE a a2 BIGINT", "INSERT INTO r VALUES (9, 9, 9000000000, 0)",
      "DELETE FROM r WHERE id = 5"], True),
    (["ALTER TABLE r RENAME COLUMN d TO d2", "ALTER TABLE r MODIFY n BIGINT NOT NULL DEFAULT 0",
      "INSERT INTO r VALUES (10, 10, 10, 4000000000)"], False),
]
TOUCH = "UPDATE r SET n = n + 1"
#: read_table's columns: the last layout's, then the earlier ones; types no Arrow type widens
#: kept apart as name@V (V: the _schema_version from which they had that type)
COLUMNS = ["id", "d2", "a2", "n", "d", "a", "c", "a@2", "a@1", "b", "note", "a@0", "b@0"]
TYPES = {"id": pa.int32(), "d2": pa.int32(), "a2": pa.int64(), "n": pa.int64(), "d": pa.int32(), "a": pa.int32(),
         "c": pa.decimal128(5, 2), "a@2": pa.string(), "a@1": pa.date32(), "b": pa.uint64(), "note": pa.string(),
         "a@0": pa.uint64(), "b@0": pa.int32()}
#: _incarnation of each phase's rows: +1 at the DROP/CREATE and at the CREATE OR REPLACE
INCARNATION = [0, 1, 2, 2, 2, 2, 2]


def run_workload(server, metadata: str) -> dict:
    """Run the phases with ``binlog_row_metadata=metadata``; the files, and after each phase the
    server's rows, column names, GTID position and binlog position."""
    old = server.query("SELECT @@GLOBAL.binlog_row_metadata")[0][0]
    server.set_global("binlog_row_metadata", metadata)
    try:
        db = f"{DB}_{metadata.lower().replace('_', '')}"
        server.flush_binary_logs()
        first = server.current_binlog()
        server.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db} CHARACTER SET utf8mb4")
        marks = []
        for statements, flush in PHASES:
            server.execute(*statements, TOUCH, database=db)
            status = server.query("SHOW MASTER STATUS")[0]
            marks.append({
                "rows": {r[0]: tuple(r) for r in server.query(f"SELECT * FROM {db}.r ORDER BY id")},
                "names": [r[0] for r in server.query(f"SHOW COLUMNS FROM {db}.r")],
                "gtid": server.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0],
                "at": (status[0], int(status[1])),
            })
            if flush:
                server.flush_binary_logs()
        server.flush_binary_logs()
    finally:
        server.set_global("binlog_row_metadata", str(old))
    files = server.binlog_files()
    return {"db": db, "table": f"{db}.r", "files": files[files.index(first):-1], "marks": marks}


@pytest.fixture(scope="module", params=["FULL", "NO_LOG"])
def workload(request, mariadb_server):
    return run_workload(mariadb_server, request.param)


def _plain(v):
    return None if v is pd.NA or v is pd.NaT else v


def replay_phases(rows: list[dict], plan, run: dict) -> list[dict]:
    """The table as of each phase's end, from change-log rows (dicts, in log order): replayed by
    ``id`` within the incarnation of the phase, each row's values in its layout's order."""
    order = {f.name: k for k, f in enumerate(run["files"])}
    out, state, before = [], {}, None
    incarnation, i = None, 0
    for mark in run["marks"]:
        at = (order[mark["at"][0]], mark["at"][1])
        while i < len(rows) and (order[rows[i]["_log_file"]], rows[i]["_log_pos"]) < at:
            row = {k: _plain(v) for k, v in rows[i].items()}
            i += 1
            if row["_incarnation"] != incarnation:  # the table was dropped: its rows are gone
                incarnation, state = row["_incarnation"], {}
            values = tuple(row[n] for n in plan.layout_names(row["_schema_version"]))
            before = apply_change(state, row["id"], row["_change_type"], values, before)
        out.append(dict(state))
    assert i == len(rows)
    return out


def assert_phases(rows: list[dict], plan, run: dict) -> None:
    for k, (state, mark) in enumerate(zip(replay_phases(rows, plan, run), run["marks"])):
        assert state == mark["rows"], f"after phase {k}"


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
