"""Nothing outlives its owner: background work ends with the read or the log that started it.

The stress suite runs in a child process (tests/support/lifecycle.py), where a signal (a read
of freed memory) fails the test instead of killing pytest. Background tasks are slowed down
(:data:`vecbinlog.pools.TASK_DELAY`) so that work outliving its read is tried every time; every
compiled entry point that reads a binlog buffer is watched for offsets past its buffer's end.
The files: the shared corpus, and binlogs the test server writes (compressed transactions,
many tables, ALTERs, a recreated table, a large file and a set of small rotated ones).
``VECBINLOG_LIFECYCLE_ROUNDS`` repeats the whole loop (the issue's 20 runs in a row).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import vecbinlog
from vecbinlog import pools
from vecbinlog.pools import TaskGroup, run_all

from .conftest import CORPUS, CORPUS_ENV, DATA, ROOT, corpus_path, shared_missing
from .support.corpus import corpus_names

SAMPLE = DATA / "sample" / "mariadb-bin.000001"
ROUNDS = int(os.environ.get("VECBINLOG_LIFECYCLE_ROUNDS", "1"))


# -- the task groups ----------------------------------------------------------------------------
def test_a_closed_group_takes_no_work_and_waits_for_what_runs():
    """close() waits for a running task (its result is there when close returns), cancels one
    not started (a pool of one thread, busy), and a closed group refuses work (ClosedError)."""
    group = TaskGroup("the test")
    started = threading.Event()

    def slow() -> str:
        started.set()
        time.sleep(0.2)
        return "done"

    running = group.submit("test-one", 1, slow)
    waiting = group.submit("test-one", 1, lambda: "never")
    started.wait()
    group.close()
    assert running.done() and running.result() == "done"
    assert waiting.cancelled()
    assert pools.running() == 0
    with pytest.raises(vecbinlog.ClosedError, match="the test is closed"):
        group.submit("test-one", 1, slow)


def test_a_group_is_closed_with_its_parent():
    parent = TaskGroup("the log")
    child = parent.child("a read")
    gate = threading.Event()
    future = child.submit("test-two", 2, gate.wait, 5)
    closer = threading.Thread(target=parent.close)
    closer.start()
    time.sleep(0.05)
    assert closer.is_alive(), "close() waits for the child's running task"
    gate.set()
    closer.join(5)
    assert not closer.is_alive() and future.result() is True and child.closed
    assert parent.child("later").closed


def test_run_all_raises_the_first_error_in_order_after_every_call_ended():
    group = TaskGroup("the test")
    ended: list[int] = []

    def call(k: int):
        def run() -> int:
            time.sleep(0.05 * (3 - k))
            ended.append(k)
            if k in (1, 2):
                raise ValueError(k)
            return k
        return run

    with pytest.raises(ValueError, match="^1$"):
        run_all(group, "test-three", 3, [call(k) for k in range(3)])
    assert pools.running() == 0 and sorted(ended) in ([0, 1, 2], [1, 2])  # (0 may be cancelled: not started)


# -- in process: the read that crashed ------------------------------------------------------------
def test_a_read_ended_early_leaves_nothing_running(monkeypatch):
    """The schedule that read freed memory: with threads=2 and background work slowed down,
    the first batch of a read, then close(): once close() returns no task of the log runs, and
    what the carried runs' CRC32 checks read is their segment's own bytes, not the file's
    (which close() lets go of)."""
    from vecbinlog.binlog import file as file_module

    monkeypatch.setattr(pools, "TASK_DELAY", 0.02)
    seen: list[tuple[int, int]] = []
    check = file_module.checksums_match

    def recorded(src, index):
        seen.append((len(src.buf), int((index.offset + index.event_size).max()) if len(index) else 0))
        return check(src, index)

    monkeypatch.setattr("vecbinlog.log.runs.checksums_match", recorded)
    with vecbinlog.open(SAMPLE, threads=2, segment_bytes=512) as log:
        for table in log.tables:
            for _ in log.iter_batches(table):
                break
    assert pools.running() == 0
    time.sleep(0.1)
    assert seen, "the carried runs were checked in the background"
    assert all(reach <= size for size, reach in seen), seen
    with pytest.raises(vecbinlog.ClosedError):
        log.read_table("shop.orders")


def test_close_from_another_thread_ends_the_read(monkeypatch):
    """close() from another thread while a read runs: the read raises ClosedError at its next
    step (or ends, when it was done); close() returns with no task of the log running."""
    monkeypatch.setattr(pools, "TASK_DELAY", 0.02)
    log = vecbinlog.open(SAMPLE, threads=2, segment_bytes=256)
    batches = log.iter_tables()
    next(batches)
    log.close()
    assert pools.running() == 0
    with pytest.raises(vecbinlog.ClosedError):
        list(batches)


# -- the stress suite, in a child process ---------------------------------------------------------
@pytest.fixture(scope="module")
def server_logs(mariadb_server, tmp_path_factory) -> list[list[str]]:
    """Binlogs of a workload over 12 tables of every kind of column: small transactions with
    compressed events, an ALTER and a table dropped and created again, multi-row statements in
    one large file, then the same rotated into small files. Returned as the sets a test opens:
    the large file alone, the small ones as one log, and every file as one log."""
    s = mariadb_server
    names = ("log_bin_compress", "log_bin_compress_min_len", "max_binlog_size")
    old = {k: s.query(f"SELECT @@GLOBAL.{k}")[0][0] for k in names}
    kinds = ["INT", "BIGINT UNSIGNED", "VARCHAR(40)", "TEXT", "DECIMAL(12,2)", "DATETIME(6)", "JSON", "BLOB",
             "DOUBLE", "DATE", "ENUM('a','b','c')", "CHAR(3)"]
    tables = [f"t{k}" for k in range(len(kinds))]
    value = {"INT": "{i}", "BIGINT UNSIGNED": "{i} * 1000003", "VARCHAR(40)": "CONCAT('v', {i})",
             "TEXT": "REPEAT('t', 50 + {i} % 300)", "DECIMAL(12,2)": "{i} / 7", "DATETIME(6)": "NOW(6)",
             "JSON": "JSON_OBJECT('k', {i})", "BLOB": "REPEAT('b', {i} % 500)", "DOUBLE": "{i} / 3",
             "DATE": "CURDATE()", "ENUM('a','b','c')": "ELT(1 + {i} % 3, 'a', 'b', 'c')", "CHAR(3)": "'xyz'"}

    def inserts(t: str, kind: str, lo: int, hi: int, per: int) -> list[str]:
        return [f"INSERT INTO {t} (id, v) VALUES " + ", ".join(
            f"({i}, {value[kind].format(i=i)})" for i in range(a, min(a + per, hi))) for a in range(lo, hi, per)]

    folder = tmp_path_factory.mktemp("lifecycle")
    try:
        s.execute("DROP DATABASE IF EXISTS life", "CREATE DATABASE life")
        s.flush_binary_logs()
        before = set(s.binlog_files()[:-1])  # (the last is the new file the workload goes into)
        s.set_global("log_bin_compress", "ON")
        s.set_global("log_bin_compress_min_len", "10")
        s.execute(*[f"CREATE TABLE {t} (id INT PRIMARY KEY, v {k})" for t, k in zip(tables, kinds)], database="life")
        for i in range(300):  # small transactions over every table in turn
            t, k = tables[i % len(tables)], kinds[i % len(kinds)]
            s.execute(*inserts(t, k, i, i + 1, 1), database="life")
        s.execute("ALTER TABLE t2 ADD COLUMN extra INT DEFAULT 7", "DROP TABLE t3",
                  "CREATE TABLE t3 (id INT PRIMARY KEY, v TEXT)", database="life")
        s.set_global("log_bin_compress", "OFF")
        for t, k in zip(tables, kinds):  # multi-row statements: a large file
            s.execute(*inserts(t, "TEXT" if t == "t3" else k, 1000, 3000, 250), database="life")
        s.execute("UPDATE t0 SET v = v + 1", "DELETE FROM t1 WHERE id % 2 = 0", database="life")
        s.flush_binary_logs()
        s.set_global("max_binlog_size", "4096")  # the server's smallest: a file a transaction or two
        for i in range(5000, 5200):
            t, k = tables[i % len(tables)], kinds[i % len(kinds)]
            s.execute(*inserts(t, "TEXT" if t == "t3" else k, i, i + 1, 1), database="life")
        s.flush_binary_logs()
        files = sorted(set(s.binlog_files()) - before)
    finally:
        for k, v in old.items():
            s.set_global(k, str(v))
    copies = []
    for f in files:
        (folder / f.name).write_bytes(f.read_bytes())
        copies.append(str(folder / f.name))
    large = max(copies, key=lambda p: Path(p).stat().st_size)
    small = [p for p in copies if Path(p).stat().st_size < 64 << 10]
    assert Path(large).stat().st_size > 1 << 20 and len(small) > 12, ([Path(p).stat().st_size for p in copies])
    return [[large], small, copies]


def _stress(tmp_path: Path, files: list[list[str]], threads: list[int], segment_bytes: int, delay: float,
            bounds_check: bool = False) -> dict:
    """Run the child over ``files`` (sets opened as one log each); its report. A crash fails."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"files": files, "rounds": ROUNDS, "threads": threads, "delay": delay,
                                "segment_bytes": segment_bytes}))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if bounds_check:  # numba checks every array index in the kernels too (a cache of its own: another build)
        env.update(NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    done = subprocess.run([sys.executable, "-m", "tests.support.lifecycle", str(spec)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"the child died (exit {done.returncode}): {done.stderr[-3000:]}"
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["short"] == [], "a kernel was handed a buffer shorter than its offsets"
    assert report["running_after_close"] == [], "a task of a log ran after its close() returned"
    assert report["unexpected"] == [], "\n".join(report["unexpected"][:5])
    assert "used after close: no error" not in report["outcomes"]
    assert report["running_at_exit"] == 0
    return report


@pytest.mark.parametrize("bounds_check", [False, True], ids=["plain", "NUMBA_BOUNDSCHECK"])
def test_stress_server_binlogs(server_logs, tmp_path, bounds_check):
    """Every way a user ends a read early, over the server's binlogs, threads 1 and 2 (with
    numba's own bounds checks too): the child survives, no kernel gets a short buffer, nothing
    runs after close(), every read ends (a read under a close() from another thread with a
    ClosedError, at least once: the large file takes longer than the 2 ms before the close)."""
    report = _stress(tmp_path, server_logs, [1, 2], 64 << 10, 0.005, bounds_check)
    outcomes = report["outcomes"]
    ended = {how for how in outcomes if how.endswith(": ended")}
    assert len(ended) == 9, outcomes  # every scenario ran to its end
    assert outcomes.get("closed under a read: ClosedError", 0) >= 1, outcomes


@pytest.mark.slow
def test_stress_corpus(tmp_path):
    """The same over every file of the corpus (each its own log), threads 2, segments of 4 KiB
    (runs carried over many segments, their CRC32s checked in the background). Files the
    corpus holds broken end in their own vecbinlog error, never another."""
    if not CORPUS.is_dir():
        shared_missing("corpus", CORPUS_ENV)
    files = [[str(corpus_path(name))] for name in corpus_names()]
    report = _stress(tmp_path, files, [2], 4096, 0.005)
    assert sum(n for how, n in report["outcomes"].items() if how.endswith(": ended")) > 9 * 100
