"""The timed archive (tests/test_index_bounds.py, tests/spark/test_spark.py): three MariaDB-made
binlogs whose rows events carry times set by ``SET TIMESTAMP``, so that the files a time window
must keep and the rows it must give are known from the times set here, not from the index; one
file's rows events are out of time order (a later time, then an earlier one), as a binlog's
are when transactions overlap. The fixture ``timed`` (tests/support/fixtures.py) writes it."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

from vecbinlog.index import build_index

from .listing import server_events

T0 = 1_700_000_000  # 2023-11-14T22:13:20Z: every time below is T0 + seconds

#: file -> [(table, id, seconds after T0)] in the order the statements run
ROWS = [
    [("a", 1, 100), ("a", 2, 200)],
    [("a", 3, 1000), ("b", 1, 1100), ("a", 4, 1300), ("a", 5, 1050)],  # out of time order: max 1300, last 1050
    [("a", 6, 2000), ("b", 2, 2100)],
]


def at(seconds: int) -> datetime:
    return datetime.fromtimestamp(T0 + seconds, timezone.utc)


def write_timed_archive(s, folder: Path) -> tuple[list[str], Path]:
    """Three binlogs of rows events at the times of ROWS (the tables created at T0 + 50, in the
    first), written by the server ``s``, copied into ``folder``, and their index there; fills
    :data:`gtids`."""
    s.execute("DROP DATABASE IF EXISTS tb", "CREATE DATABASE tb")
    s.flush_binary_logs()
    first = s.current_binlog()
    s.execute("SET TIMESTAMP = %d" % (T0 + 50), "CREATE TABLE a (id INT PRIMARY KEY, t INT)",
              "CREATE TABLE b (id INT PRIMARY KEY, t INT)", database="tb")
    for k, rows in enumerate(ROWS):
        if k:
            s.flush_binary_logs()
        stmts = []
        for table, id_, t in rows:
            stmts += [f"SET TIMESTAMP = {T0 + t}", f"INSERT INTO {table} VALUES ({id_}, {t})"]
        s.execute(*stmts, database="tb")
    s.flush_binary_logs()
    files = s.binlog_files()
    files = files[files.index(first):-1]
    assert len(files) == len(ROWS)
    copies = []
    for f in files:
        shutil.copy(f, folder / f.name)
        copies.append(str(folder / f.name))
    location = folder / "index"
    build_index(copies, location, processes=1)
    gtids.extend([e["info"].split()[-1] for e in server_events(s, f.name) if e["type"] == "Gtid"] for f in files)
    return copies, location


#: the GTIDs of each file of ``timed``, as the server lists them (SHOW BINLOG EVENTS), filled by it
gtids: list[list[str]] = []


def expected_files(since: int | None, until: int | None, tables: str = "ab") -> list[int]:
    """The files holding a row of ``tables`` set at a time in [since, until) (seconds after T0)."""
    return [k for k, rows in enumerate(ROWS)
            if any(tb in tables and (since is None or t >= since) and (until is None or t < until)
                   for tb, _, t in rows)]


def files_spanning(since: int | None, until: int | None) -> list[int]:
    """The files whose rows' least and greatest times make [since, until) possible."""
    return [k for k, rows in enumerate(ROWS)
            if (since is None or max(t for *_, t in rows) >= since) and (until is None or min(t for *_, t in rows) < until)]


def gtid_window(k: int, first: int, last: int) -> str:
    """``domain-server-a..b``: the GTIDs of the timed archive's file ``k`` from its ``first`` to its ``last``."""
    d, srv, a = gtids[k][first].split("-")
    return f"{d}-{srv}-{a}..{gtids[k][last].split('-')[2]}"
