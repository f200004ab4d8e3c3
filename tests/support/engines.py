"""The archives the query-engine tests read (tests/test_engines.py, tests/spark/test_spark_pushdown.py),
written by the tests' MariaDB server:

* ``spread``: :data:`SPREAD_FILES` binlogs (FLUSH BINARY LOGS between them), each of
  :data:`SPREAD_ROWS` single-row transactions of two tables given their times by ``SET TIMESTAMP``
  (file ``k``'s at ``T0 + SPAN k + STEP i``), so that a window of 1% of the archive's time range
  holds the rows of one file, known from the times set here; then an UPDATE and a DELETE per file;
  and its archive index.
* ``minimal``: the table-changes workload (tests/support/workloads.py: a table dropped and
  created again with other types, altered five ways, over four files) with
  ``binlog_row_image=MINIMAL``, and its index.
"""

from __future__ import annotations

from pathlib import Path

from vecbinlog.index import build_index

from .mariadb import copy_binlogs
from .workloads import run_workload

T0 = 1_800_000_000  # 2027-01-15T08:00:00Z: every time of ``spread`` is T0 + seconds
SPREAD_FILES = 100
SPREAD_ROWS = 12
SPAN = 100  #: seconds between the first rows of two files
STEP = 8  #: seconds between two rows of a file (SPREAD_ROWS x STEP < SPAN)


def write_spread(s, folder: Path) -> tuple[list[str], Path]:
    """The ``spread`` archive written by server ``s`` into ``folder``: (files, index location)."""
    s.execute("DROP DATABASE IF EXISTS spread", "CREATE DATABASE spread")
    s.flush_binary_logs()
    first = len(s.binlog_files()) - 1
    s.execute(f"SET TIMESTAMP = {T0 - 50}", "CREATE TABLE a (id INT PRIMARY KEY, note VARCHAR(200), t INT)",
              "CREATE TABLE b (id INT PRIMARY KEY, v BIGINT UNSIGNED)", database="spread")
    for k in range(SPREAD_FILES):
        if k:
            s.flush_binary_logs()
        stmts = []
        for i in range(SPREAD_ROWS):
            t = SPAN * k + STEP * i
            stmts += [f"SET TIMESTAMP = {T0 + t}",
                      f"INSERT INTO a VALUES ({k * 100 + i}, '{'file %d row %d ' % (k, i) * 8}', {t})"]
            if i % 4 == 0:
                stmts.append(f"INSERT INTO b VALUES ({k * 100 + i}, {2**64 - 1 - i})")
        stmts += [f"SET TIMESTAMP = {T0 + SPAN * k + STEP * SPREAD_ROWS - 1}",
                  f"UPDATE a SET note = 'updated' WHERE id = {k * 100 + 1}", f"DELETE FROM a WHERE id = {k * 100 + 2}"]
        s.execute(*stmts, database="spread")
    s.flush_binary_logs()
    files, _ = copy_binlogs(s.binlog_files()[first:-1], folder)
    paths = [str(f) for f in files]
    build_index(paths, folder / "index", processes=1)
    return paths, folder / "index"


def write_minimal(s, folder: Path) -> tuple[dict, list[str], Path]:
    """The ``minimal`` archive: (the workload's run, files, index location)."""
    old = s.query("SELECT @@GLOBAL.binlog_row_image")[0][0]
    s.set_global("binlog_row_image", "MINIMAL")
    try:
        run = run_workload(s, "FULL")
    finally:
        s.set_global("binlog_row_image", str(old))
    files, _ = copy_binlogs(run["files"], folder)
    paths = [str(f) for f in files]
    build_index(paths, folder / "index", processes=1)
    return run, paths, folder / "index"
