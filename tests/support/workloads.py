"""The table-changes workload: a real MariaDB server drops, creates again and alters one table
in phases, its rows and positions taken at the end of each; the change logs of its front ends,
replayed, must equal those rows (tests/test_table_changes.py, tests/test_streaming.py,
tests/spark/test_spark.py)."""

from __future__ import annotations

import pandas as pd

from .replay import apply_change

#: the workload's database (its name suffixed by the binlog_row_metadata it runs under)
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
#: every phase ends touching every row: each row's last image is in the layout of that moment
TOUCH = "UPDATE r SET n = n + 1"


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


def _plain(v):
    """A pandas missing value as None, any other value as it is."""
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
    """The change-log rows replayed equal the server's rows at the end of every phase."""
    for k, (state, mark) in enumerate(zip(replay_phases(rows, plan, run), run["marks"])):
        assert state == mark["rows"], f"after phase {k}"
