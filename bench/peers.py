"""vecbinlog against its peers, on the same MariaDB-made binlog files, in one run.

    python bench/peers.py [--rows N] [--out bench/RESULTS.md] [--seed S]

Starts a throwaway MariaDB server (tests/support/mariadb.py; binlog_row_metadata=FULL,
innodb_flush_log_at_trx_commit=0, sync_binlog=0), writes one binlog file per shape
(narrow ints, OLTP orders, text/JSON, wide 120 columns, mixed tables with updates and
deletes), deterministically from the seed, into the server's temp dir (never the repo),
then times on each file:

* vecbinlog ``read_all()`` in a child process after imports (best of 5, one warm-up),
* the vecbinlog CLI as a whole process: ``vecbinlog to-parquet FILE OUTDIR -q`` (wall time),
* ``to_pandas()`` of read_all()'s tables (best of 5, in a child),
* ``mariadb-binlog --no-defaults --base64-output=DECODE-ROWS -v FILE > /dev/null``,
* python-mysql-replication (``pip install mysql-replication``) streaming the same file
  from the running server over its unix socket and touching every value,
* the raw limits: reading the file from page cache into a buffer, and one NumPy pass
  (``np.memmap(...).max()``) over it.

read_all, mariadb-binlog and the raw limits are measured in interleaved rounds (--rounds,
default 3: each method once per round, each time a best of 5), so that a ratio is not two
methods measured minutes apart on a VM whose speed drifts; each keeps its best over all rounds.
Every measurement runs in its own child process; "peak RSS" is that child's VmHWM (Python
children) or GNU time's %M (whole commands). Rates count *row images* (what vecbinlog
returns: an UPDATE is two images, before and after); "row changes" counts an UPDATE once.
The last column is vecbinlog read_all's rate divided by the method's rate
(> 1: vecbinlog is faster; for the raw limits it is the fraction of the limit reached).

Results are printed and written as markdown to --out (default bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script, and in its children (--child)
    sys.path.insert(0, str(ROOT))

from bench import shapes  # noqa: E402

DEFAULT_ROWS = 100_000
DEFAULT_SEED = 20261121
SERVER_OPTIONS = {
    "binlog_row_metadata": "FULL",
    "innodb_flush_log_at_trx_commit": "0",
    "sync_binlog": "0",
    "innodb_buffer_pool_size": "256M",
    "max_binlog_size": "1073741824",
    "max_allowed_packet": "256M",
}
#: seconds python-mysql-replication may spend on repeats (it always runs at least once)
PEER_REPEAT_BUDGET = 15.0

# --------------------------------------------------------------------------
# Workloads (deterministic from the seed)
# --------------------------------------------------------------------------


def _q(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"


def _batches(n: int, size: int):
    for base in range(0, n, size):
        yield base, min(size, n - base)


def shape_narrow(rnd: random.Random, n: int) -> list[str]:
    out = ["CREATE TABLE narrow (id BIGINT PRIMARY KEY, a INT, b INT UNSIGNED, c SMALLINT, "
           "d TINYINT, e BIGINT, f MEDIUMINT, g BIGINT UNSIGNED)"]
    for base, k in _batches(n, 1000):
        out.append("INSERT INTO narrow VALUES " + ",".join(
            f"({base + i},{rnd.randint(-2**31, 2**31 - 1)},{rnd.randint(0, 2**32 - 1)},"
            f"{rnd.randint(-32768, 32767)},{rnd.randint(-128, 127)},{rnd.randint(-2**63, 2**63 - 1)},"
            f"{rnd.randint(-2**23, 2**23 - 1)},{rnd.randint(0, 2**64 - 1)})"
            for i in range(k)))
    return out


_STATUSES = ("new", "paid", "shipped", "delivered", "cancelled")
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
          "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
          "größe", "café", "naïve", "smörgåsbord", "日本", "данные")


def _when(rnd: random.Random) -> str:
    t = _dt.datetime(2024, 1, 1) + _dt.timedelta(seconds=rnd.randint(0, 3 * 365 * 86400))
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _orders_table(name: str) -> str:
    return (f"CREATE TABLE {name} (id BIGINT PRIMARY KEY, customer_id INT UNSIGNED NOT NULL, "
            "status ENUM('new','paid','shipped','delivered','cancelled') NOT NULL, "
            "amount DECIMAL(12,2) NOT NULL, discount DECIMAL(5,2) NULL, currency CHAR(3) NOT NULL, "
            "email VARCHAR(128) CHARACTER SET utf8mb4 NOT NULL, created_at DATETIME NOT NULL, "
            "shipped_at DATETIME(6) NULL, qty SMALLINT UNSIGNED NOT NULL, "
            "note VARCHAR(255) CHARACTER SET utf8mb4 NULL, weight DOUBLE NULL)")


def _orders_row(rnd: random.Random, i: int) -> str:
    disc = "NULL" if rnd.random() < 0.6 else f"{rnd.randint(0, 9999) / 100:.2f}"
    shipped = "NULL" if rnd.random() < 0.5 else _q(_when(rnd) + f".{rnd.randint(0, 999999):06d}")
    note = "NULL" if rnd.random() < 0.7 else _q(" ".join(rnd.choices(_WORDS, k=rnd.randint(1, 12))))
    weight = "NULL" if rnd.random() < 0.2 else f"{rnd.random() * 50:.4f}"
    return (f"({i},{rnd.randint(1, 10**6)},{_q(rnd.choice(_STATUSES))},{rnd.randint(0, 10**9) / 100:.2f},"
            f"{disc},{_q(rnd.choice(('EUR', 'USD', 'GBP', 'JPY')))},"
            f"{_q('user' + str(rnd.randint(0, 10**7)) + '@' + rnd.choice(('example.com', 'mail.org', 'corp.net')))},"
            f"{_q(_when(rnd))},{shipped},{rnd.randint(1, 500)},{note},{weight})")


def shape_orders(rnd: random.Random, n: int) -> list[str]:
    out = [_orders_table("orders")]
    for base, k in _batches(n, 500):
        out.append("INSERT INTO orders VALUES " + ",".join(_orders_row(rnd, base + i) for i in range(k)))
    # OLTP life cycle: a quarter of the orders get paid, a tenth shipped
    out.append("UPDATE orders SET status = 'paid' WHERE id % 4 = 1")
    out.append("UPDATE orders SET status = 'shipped', shipped_at = '2026-01-02 03:04:05.678901' WHERE id % 10 = 3")
    return out


def _json_doc(rnd: random.Random, i: int) -> str:
    doc = {
        "id": i,
        "user": {"name": " ".join(rnd.choices(_WORDS, k=2)), "age": rnd.randint(18, 90),
                 "tags": rnd.sample(_WORDS, rnd.randint(0, 6))},
        "score": round(rnd.random() * 100, 3),
        "active": rnd.random() < 0.5,
        "events": [{"t": _when(rnd), "kind": rnd.choice(_STATUSES), "v": rnd.randint(0, 10**6)}
                   for _ in range(rnd.randint(0, 6))],
        "extra": None,
    }
    return json.dumps(doc, ensure_ascii=False)


def shape_text(rnd: random.Random, n: int) -> list[str]:
    out = ["CREATE TABLE docs (id BIGINT PRIMARY KEY, title VARCHAR(200) CHARACTER SET utf8mb4 NOT NULL, "
           "body TEXT CHARACTER SET utf8mb4, doc JSON, meta LONGTEXT CHARACTER SET utf8mb4 NULL)"]
    for base, k in _batches(n, 200):
        rows = []
        for i in range(k):
            title = " ".join(rnd.choices(_WORDS, k=rnd.randint(2, 10)))
            body = " ".join(rnd.choices(_WORDS, k=rnd.randint(20, 200)))
            meta = "NULL" if rnd.random() < 0.5 else _q(json.dumps({"src": rnd.choice(_WORDS), "n": i}))
            rows.append(f"({base + i},{_q(title)},{_q(body)},{_q(_json_doc(rnd, base + i))},{meta})")
        out.append("INSERT INTO docs VALUES " + ",".join(rows))
    return out


WIDE_COLS = 120


def _wide_cols() -> list[tuple[str, str]]:
    kinds = ("INT", "BIGINT", "VARCHAR(32) CHARACTER SET utf8mb4", "DOUBLE", "DECIMAL(10,3)", "DATETIME",
             "SMALLINT UNSIGNED", "DATE")
    return [(f"c{j:03d}", kinds[j % len(kinds)]) for j in range(WIDE_COLS)]


def _wide_value(rnd: random.Random, kind: str) -> str:
    if rnd.random() < 0.1:
        return "NULL"
    if kind == "INT":
        return str(rnd.randint(-2**31, 2**31 - 1))
    if kind == "BIGINT":
        return str(rnd.randint(-2**63, 2**63 - 1))
    if kind.startswith("VARCHAR"):
        return _q(rnd.choice(_WORDS) + str(rnd.randint(0, 9999)))
    if kind == "DOUBLE":
        return repr(rnd.random() * 1e6)
    if kind.startswith("DECIMAL"):
        return f"{rnd.randint(-10**9, 10**9) / 1000:.3f}"
    if kind == "DATETIME":
        return _q(_when(rnd))
    if kind == "DATE":
        return _q(_when(rnd)[:10])
    return str(rnd.randint(0, 65535))


def shape_wide(rnd: random.Random, n: int) -> list[str]:
    cols = _wide_cols()
    out = ["CREATE TABLE wide (id BIGINT PRIMARY KEY, " + ", ".join(f"{c} {t} NULL" for c, t in cols) + ")"]
    for base, k in _batches(n, 100):
        out.append("INSERT INTO wide VALUES " + ",".join(
            f"({base + i}," + ",".join(_wide_value(rnd, t) for _, t in cols) + ")" for i in range(k)))
    return out


MIXED_TABLES = 24


def shape_mixed(rnd: random.Random, n: int) -> list[str]:
    """MIXED_TABLES tables of three kinds, interleaved inserts, then updates and deletes."""
    out: list[str] = []
    names = []
    for t in range(MIXED_TABLES):
        name = f"m{t:02d}"
        names.append(name)
        kind = t % 3
        if kind == 0:
            out.append(f"CREATE TABLE {name} (id BIGINT PRIMARY KEY, a INT, b BIGINT, c SMALLINT UNSIGNED)")
        elif kind == 1:
            out.append(_orders_table(name))
        else:
            out.append(f"CREATE TABLE {name} (id BIGINT PRIMARY KEY, k VARCHAR(64) CHARACTER SET utf8mb4, "
                       "v TEXT CHARACTER SET utf8mb4, ts DATETIME(3), f FLOAT NULL)")
    per = max(1, n // MIXED_TABLES)
    counts = dict.fromkeys(names, 0)
    for _ in range(0, per, 100):
        for t, name in enumerate(names):
            k = min(100, per - counts[name])
            if k <= 0:
                continue
            base = counts[name]
            counts[name] += k
            if t % 3 == 0:
                vals = ",".join(f"({base + i},{rnd.randint(-2**31, 2**31 - 1)},{rnd.randint(-2**63, 2**63 - 1)},"
                                f"{rnd.randint(0, 65535)})" for i in range(k))
            elif t % 3 == 1:
                vals = ",".join(_orders_row(rnd, base + i) for i in range(k))
            else:
                vals = ",".join(
                    f"({base + i},{_q(rnd.choice(_WORDS) + str(i))},{_q(' '.join(rnd.choices(_WORDS, k=rnd.randint(1, 30))))},"
                    f"{_q(_when(rnd) + '.123')},{'NULL' if i % 5 == 0 else f'{rnd.random():.5f}'})"
                    for i in range(k))
            out.append(f"INSERT INTO {name} VALUES {vals}")
    for t, name in enumerate(names):
        if t % 3 == 0:
            out.append(f"UPDATE {name} SET a = a DIV 2, c = c DIV 2 WHERE id % 3 = 0")
        elif t % 3 == 1:
            out.append(f"UPDATE {name} SET status = 'delivered', qty = qty + 1 WHERE id % 3 = 0")
        else:
            out.append(f"UPDATE {name} SET v = CONCAT(v, ' edited'), f = NULL WHERE id % 3 = 0")
        out.append(f"DELETE FROM {name} WHERE id % 7 = 0")
    return out


#: the production shapes (bench/shapes.py) first: rows as a fraction of --rows; a file, or for
#: ``archive`` a folder of small files
PRODUCTION = {"oltp": 0.125, "archive": 0.125, "stmt_ints": 2.0, "stmt_orders": 0.5, "stmt_text": 0.2,
              "oltp_minimal": 0.125, "oltp_noblob": 0.125}
#: name -> (description, generator (None: bench/shapes.py writes it), rows as a fraction of --rows)
SHAPES = {
    **{name: (shapes.SHAPES[name][0], None, frac) for name, frac in PRODUCTION.items()},
    "narrow": ("narrow: 1 table, 8 integer columns, inserts", shape_narrow, 2.0),
    "orders": ("orders: OLTP table (ints, DECIMAL, VARCHAR, DATETIME, ENUM, NULLs), inserts + updates",
               shape_orders, 1.0),
    "text": ("text/JSON: VARCHAR, TEXT, JSON (LONGTEXT) documents, inserts", shape_text, 0.1),
    "wide": (f"wide: {WIDE_COLS + 1} columns of 8 types, inserts", shape_wide, 0.1),
    "mixed": (f"mixed: {MIXED_TABLES} tables of 3 kinds, inserts + updates + deletes", shape_mixed, 1.0),
}


def generate(server, rows: int, seed: int, names=None, folder: Path | None = None) -> dict[str, Path]:
    """One binlog file (or folder of files) per shape written by `server` (database `bench`):
    {shape: path}. The production shapes are copied into ``folder``."""
    out: dict[str, Path] = {}
    for name in names or SHAPES:
        _, make, frac = SHAPES[name]
        n = max(1, int(rows * frac))
        if make is None:
            out[name] = shapes.write(server, name, n, seed, folder)
            continue
        server.execute("CREATE DATABASE IF NOT EXISTS bench")
        rnd = random.Random(f"{seed}-{name}")
        out[name] = server.capture_binlog(*make(rnd, n), database="bench")
    return out


def files_of(path: Path) -> list[Path]:
    """The binlog files of a shape: the file, or a folder's in log order (its index)."""
    if path.is_dir():
        return [path / line.strip().removeprefix("./") for line in (path / "mysql-bin.index").read_text().splitlines()
                if line.strip()]
    return [path]


# --------------------------------------------------------------------------
# Measurements, each in a child process (`python bench/peers.py --child KIND ...`)
# --------------------------------------------------------------------------


def _best_of(fn, rounds: int = 5, warmup: int = 1):
    for _ in range(warmup):
        fn()
    times = []
    result = None
    for _ in range(rounds):
        result = None  # the last result is not held while the next is made (a program would not)
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def child_read_all(path: str) -> dict:
    import vecbinlog

    def run():
        with vecbinlog.open(path) as log:
            tables = log.read_all()
        return tables

    best, tables = _best_of(run)
    images = sum(t.num_rows for t in tables.values())
    changes = 0
    for t in tables.values():
        ct = t.column("_change_type").to_pylist() if "_change_type" in t.column_names else []
        changes += sum(1 for c in ct if c != "update_postimage")
    return {"seconds": best, "images": images, "changes": changes, "tables": len(tables)}


def child_each_table(path: str) -> dict:
    """Every table in turn from one open log: ``for t in log.tables: log.read_table(t)``."""
    import vecbinlog

    def run():
        with vecbinlog.open(path) as log:
            return {t: log.read_table(t).num_rows for t in log.tables}

    best, counts = _best_of(run, rounds=3)
    return {"seconds": best, "images": sum(counts.values()), "tables": len(counts)}


def child_stages(path: str) -> dict:
    """read_all with two of its stages timed, ``threads=1`` so that each is the time it takes
    alone: the walk (``PlacedRun.batches``, each batch as it is made: the compiled walk of the row
    images, which also copies every fixed-width value's bytes to its column) and the copies of
    the length-prefixed values (``gather_var``, and ``gather_columns`` where a batch copies
    several columns' at once: every text/blob value's bytes out of the file)."""
    import vecbinlog
    from vecbinlog.decode import batch, rows
    from vecbinlog.decode.decoders import common

    spent = {"place": 0.0, "gather": 0.0}

    def timed(fn, key):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t0
        return wrapper

    def timed_pieces(fn, key):
        def wrapper(*a, **k):
            pieces = fn(*a, **k)
            while True:
                t0 = time.perf_counter()
                try:
                    piece = next(pieces)
                except StopIteration:
                    return
                finally:
                    spent[key] += time.perf_counter() - t0
                yield piece
        return wrapper

    rows.PlacedRun.batches = timed_pieces(rows.PlacedRun.batches, "place")
    original = common.gather_var
    for mod in [common, *_decoder_modules()]:
        if getattr(mod, "gather_var", None) is original:
            mod.gather_var = timed(original, "gather")
    batch.gather_columns = timed(batch.gather_columns, "gather")

    def run():
        spent.update(place=0.0, gather=0.0)
        with vecbinlog.open(path, threads=1) as log:  # one thread: the stages' own time
            log.read_all()
        return dict(spent)

    best, parts = _best_of(run)
    return {"seconds": best, "place": parts["place"], "gather": parts["gather"]}


def _decoder_modules() -> list:
    import importlib
    import pkgutil

    import vecbinlog.decode.decoders as pkg

    return [importlib.import_module(f"{pkg.__name__}.{m.name}") for m in pkgutil.iter_modules(pkg.__path__)]


def child_to_pandas(path: str) -> dict:
    import vecbinlog

    with vecbinlog.open(path) as log:
        tables = log.read_all()
    best, _ = _best_of(lambda: {k: t.to_pandas() for k, t in tables.items()})
    return {"seconds": best, "images": sum(t.num_rows for t in tables.values())}


def child_pymysqlrepl(path: str, socket: str, server_id: str, budget: str) -> dict:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import RotateEvent
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

    import pymysql

    log_file = Path(path).name
    settings = {"unix_socket": socket, "user": "root", "password": ""}
    # With is_mariadb=True, mysql-replication 1.0.x ignores log_file/log_pos: its MariaDB
    # COM_BINLOG_DUMP sends an empty file name, so the server starts at its *first* binlog.
    # Start at the file through MariaDB GTIDs instead: the GTID state at (file, 4).
    conn = pymysql.connect(**settings)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT BINLOG_GTID_POS(%s, 4)", (log_file,))
            gtid = cur.fetchone()[0]
    finally:
        conn.close()

    def run():
        stream = BinLogStreamReader(
            connection_settings=settings, server_id=int(server_id), is_mariadb=True, auto_position=gtid,
            only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, RotateEvent],
            log_file=log_file, log_pos=4, resume_stream=True, blocking=False)
        images = changes = values = 0
        try:
            for ev in stream:
                if isinstance(ev, RotateEvent):
                    if ev.next_binlog != log_file:
                        break  # end of this file
                    continue
                if isinstance(ev, UpdateRowsEvent):
                    for r in ev.rows:
                        for v in r["before_values"].values():
                            values += v is not None
                        for v in r["after_values"].values():
                            values += v is not None
                        images += 2
                        changes += 1
                else:
                    for r in ev.rows:
                        for v in r["values"].values():
                            values += v is not None
                        images += 1
                        changes += 1
        finally:
            stream.close()
        return images, changes, values

    times = []
    spent = 0.0
    result = None
    while len(times) < 3 and (not times or spent < float(budget)):
        t0 = time.perf_counter()
        result = run()
        dt = time.perf_counter() - t0
        times.append(dt)
        spent += dt
    return {"seconds": min(times), "rounds": len(times), "images": result[0], "changes": result[1],
            "non_null_values": result[2]}


def _peak_rss() -> dict:
    """This process's peak RSS: VmHWM (per address space, reset by exec) and ru_maxrss.

    ru_maxrss of an exec'd child also holds the *parent's* RSS at fork time (Linux keeps the
    old mm's high-water mark across exec), so the table uses VmHWM when it is there.
    """
    import resource

    out = {"ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                out["vmhwm"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return out


CHILDREN = {"read_all": child_read_all, "each_table": child_each_table, "stages": child_stages,
            "to_pandas": child_to_pandas, "pymysqlrepl": child_pymysqlrepl}


TIME = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)


#: the children's environment: this one without PYTHONDONTWRITEBYTECODE, so that Python children
#: import vecbinlog from cached bytecode as an installed package does (compiling its modules'
#: sources at every start costs ~0.15 s, which no user of a pip-installed vecbinlog pays)
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run_child(argv: list[str], capture: bool = True, timed: bool = False) -> tuple[float, int, bytes, int]:
    """(wall seconds, peak RSS bytes, stdout, exit code) of one child process.

    timed=True runs it under GNU ``time -f %M`` (peak RSS of the command itself, not polluted by
    this process's RSS at fork time; costs ~1 ms of wall time).
    """
    rss_file = None
    if timed and TIME:
        fd, rss_file = tempfile.mkstemp(prefix="vbl-rss-")
        os.close(fd)
        argv = [TIME, "-f", "%M", "-o", rss_file, *argv]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=CHILD_ENV)
    out = proc.stdout.read() if capture else b""
    err = proc.stderr.read()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}):\n{err.decode(errors='replace')[-3000:]}")
    rss = ru.ru_maxrss * 1024
    if rss_file:
        try:
            rss = int(Path(rss_file).read_text().split()[-1]) * 1024
        finally:
            os.unlink(rss_file)
    return wall, rss, out, proc.returncode


def measure_child(kind: str, *args: str) -> dict:
    _, rss, out, _ = _run_child([sys.executable, str(Path(__file__).resolve()), "--child", kind, *args])
    res = json.loads(out.decode().strip().splitlines()[-1])
    res["rss"] = res.get("vmhwm") or res.get("ru_maxrss") or rss
    return res


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in files_of(path))


def measure_cli(path: Path, workdir: Path, rounds: int = 3) -> dict:
    exe = shutil.which("vecbinlog") or str(Path(sys.executable).parent / "vecbinlog")
    best, rss = None, 0
    for i in range(rounds + 1):  # first one is a warm-up
        outdir = workdir / f"cli-{path.name}-{i}"
        wall, r, _, _ = _run_child([exe, "to-parquet", str(path), str(outdir), "-q"], capture=False,
                             timed=True)
        shutil.rmtree(outdir, ignore_errors=True)
        if i:
            best = wall if best is None else min(best, wall)
            rss = max(rss, r)
    return {"seconds": best, "rss": rss}


def measure_mariadb_binlog(path: Path, tool: str, rounds: int = 5) -> dict:
    best, rss = None, 0
    for i in range(rounds + 1):
        wall, r, _, _ = _run_child([tool, "--no-defaults", "--base64-output=DECODE-ROWS", "-v",
                                    *map(str, files_of(path))], capture=False, timed=True)
        if i:
            best = wall if best is None else min(best, wall)
            rss = max(rss, r)
    return {"seconds": best, "rss": rss}


def measure_raw(path: Path) -> dict:
    import numpy as np

    files = files_of(path)
    buf = bytearray(max(f.stat().st_size for f in files))

    def read():
        for name in files:
            with open(name, "rb", buffering=0) as f:
                f.readinto(buf)

    def npass():
        return max(int(np.memmap(f, dtype=np.uint8, mode="r").max()) for f in files)

    t_read, _ = _best_of(read, rounds=5)
    t_np, _ = _best_of(npass, rounds=5)
    return {"read": {"seconds": t_read}, "numpy": {"seconds": t_np}}


#: Rounds in which read_all, mariadb-binlog and the raw limits are measured one after the
#: other (each a best of 5): this shared VM's speed drifts by up to 1.8x from one minute to
#: the next, so methods measured minutes apart can be compared at different speeds.
ROUNDS = 3


def _attempt(measure) -> dict:
    """A measurement's result, or {"error": its last line}: a failed method keeps the rest of the table."""
    try:
        return measure()
    except Exception as e:
        return {"error": str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)}


def measure_interleaved(path: Path, tool: str, rounds: int = ROUNDS, each_table: bool = False) -> dict:
    """read_all (and with ``each_table`` every table in turn from one open log), mariadb-binlog
    and the raw limits, measured in turn ``rounds`` times: each method's time is its best over
    all rounds, and each keeps its per-round times (``rounds``), so a ratio can also be given
    per round (both sides measured within the same minute)."""
    seen: dict[str, list[dict]] = {}
    for _ in range(max(rounds, 1)):
        got = {"read_all": measure_child("read_all", str(path)),
               "mariadb_binlog": _attempt(lambda: measure_mariadb_binlog(path, tool))}
        if each_table:
            got["each_table"] = measure_child("each_table", str(path))
        got.update(measure_raw(path))
        for key, m in got.items():
            seen.setdefault(key, []).append(m)
    out = {}
    for key, ms in seen.items():
        ok = [m for m in ms if "seconds" in m]
        if not ok:
            out[key] = ms[0]
            continue
        best = dict(min(ok, key=lambda m: m["seconds"]))
        best["round_seconds"] = [m.get("seconds") for m in ms]
        best["rss"] = max((m.get("rss") or 0) for m in ok) or best.get("rss")
        out[key] = best
    return out


def round_ratios(m: dict, peer: str) -> list[float]:
    """``peer``'s time over read_all's, round by round (interleaved rounds only)."""
    ours, theirs = m.get("read_all", {}).get("round_seconds") or [], m.get(peer, {}).get(
        "round_seconds") or []
    return [b / a for a, b in zip(ours, theirs) if a and b]


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------

METHODS = [
    ("read_all", "vecbinlog `read_all()` (in-process)"),
    ("each_table", "vecbinlog, every table in turn from one open log"),
    ("place", "… of which the walk (`PlacedRun.batches`, 1 thread)"),
    ("gather", "… of which text/blob value copies (`gather_var`, `gather_columns`, 1 thread)"),
    ("cli", "vecbinlog CLI `to-parquet` (whole process)"),
    ("to_pandas", "`to_pandas()` of the result"),
    ("mariadb_binlog", "`mariadb-binlog -v` (C)"),
    ("pymysqlrepl", "python-mysql-replication"),
    ("read", "raw: `read()` from page cache"),
    ("numpy", "raw: `np.memmap().max()`"),
]


def _fmt_rate(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.0f} k"
    return f"{x:.0f}"


def _fmt_ms(s: float) -> str:
    if s < 0.01:
        return f"{s * 1000:.2f} ms"
    return f"{s * 1000:.0f} ms" if s < 10 else f"{s:.1f} s"


def _fmt_spread(rounds: list | None) -> str:
    """" (slowest round: X ms)" when a method was measured in several interleaved rounds."""
    times = [t for t in rounds or [] if t]
    if len(times) < 2:
        return ""
    return f" (rounds up to {_fmt_ms(max(times))})"


def render(results: dict, md: bool) -> str:
    lines = []
    header = ["shape", "file MB", "row changes (images)", "method", "time", "rows/s", "MB/s", "peak RSS",
              "vecbinlog ÷ this (rows/s)"]
    rows = []
    for shape, r in results.items():
        mb = r["size"] / 1e6
        images = r["images"]
        base = r["methods"]["read_all"]["seconds"]
        first = True
        for key, label in METHODS:
            m = r["methods"].get(key)
            if m is None:
                continue
            if "error" in m:
                cells = ["failed: " + m["error"][:80], "", "", "", ""]
            else:
                s = m["seconds"]
                rps = "" if key in ("read", "numpy", "place", "gather") or not s else _fmt_rate(images / s)
                rss = f"{m['rss'] / 2**20:.0f} MB" if m.get("rss") else ""
                ratio = "1" if key == "read_all" else f"{s / base:.2f}"
                cells = [_fmt_ms(s) + _fmt_spread(m.get("round_seconds")), rps, f"{mb / s:,.0f}" if s else "", rss,
                         ratio]
            rows.append([shape if first else "", f"{mb:.1f}" if first else "",
                         f"{r['changes']:,} ({images:,})" if first else "", label, *cells])
            first = False
    if md:
        lines.append("| " + " | ".join(header) + " |")
        lines.append("| " + " | ".join("---" for _ in header) + " |")
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    else:
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


#: The speed issue's targets: shape -> (x `mariadb-binlog -v`, x python-mysql-replication); every
#: shape also has "within MEMMAP_TARGET x of the NumPy memmap pass".
TARGETS = {"oltp": (12, None), "archive": (10, None), "stmt_ints": (12, None), "stmt_orders": (8, None),
           "stmt_text": (4, None), "narrow": (10, 300), "orders": (6, 300), "text": (3, None), "wide": (5, None),
           "mixed": (5, None)}
#: every table in turn from one open log, x `mariadb-binlog -v` reading the files
EACH_TABLE_TARGETS = {"oltp": 9}
MEMMAP_TARGET = 5


def render_targets(results: dict) -> str:
    """One line per shape: each target, what was measured, and the time the target allows
    against the walk's own (one thread)."""
    lines = ["| shape | target | measured | time the target allows | the walk alone | met |",
             "| --- | --- | --- | --- | --- | --- |"]
    for shape, r in results.items():
        m = r["methods"]
        ours = m["read_all"]["seconds"]
        walked = m.get("place", {}).get("seconds")
        checks = []
        vs_c, vs_py = TARGETS.get(shape, (None, None))
        if vs_c and "seconds" in m.get("mariadb_binlog", {}):
            checks.append((f"{vs_c}x `mariadb-binlog -v`", m["mariadb_binlog"]["seconds"] / ours,
                           m["mariadb_binlog"]["seconds"] / vs_c, vs_c, round_ratios(m, "mariadb_binlog")))
        each = EACH_TABLE_TARGETS.get(shape)
        if each and "seconds" in m.get("each_table", {}) and "seconds" in m.get("mariadb_binlog", {}):
            checks.append((f"every table in turn {each}x `mariadb-binlog -v`",
                           m["mariadb_binlog"]["seconds"] / m["each_table"]["seconds"], m["mariadb_binlog"]["seconds"] / each,
                           each, []))
        if vs_py and "seconds" in m.get("pymysqlrepl", {}):
            checks.append((f"{vs_py}x python-mysql-replication", m["pymysqlrepl"]["seconds"] / ours,
                           m["pymysqlrepl"]["seconds"] / vs_py, vs_py, []))
        if "seconds" in m.get("numpy", {}):
            checks.append((f"within {MEMMAP_TARGET}x of the memmap pass", m["numpy"]["seconds"] * MEMMAP_TARGET / ours,
                           m["numpy"]["seconds"] * MEMMAP_TARGET, 1, round_ratios(m, "numpy")))
        for label, ratio, allowed, need, per_round in checks:
            if need > 1:
                shown = f"{ratio:.2f}x"
                if len(per_round) > 1:
                    shown += f" (per round {min(per_round):.2f}-{max(per_round):.2f}x)"
            else:
                shown = f"{ours / (allowed / MEMMAP_TARGET):.1f}x the pass"
                if len(per_round) > 1:
                    shown += f" (per round {1 / max(per_round):.1f}-{1 / min(per_round):.1f}x)"
            floor = _fmt_ms(walked) if walked is not None else ""
            lines.append(f"| {shape} | {label} | {shown} | {_fmt_ms(allowed)} | {floor} | "
                         f"{'yes' if ratio >= need else 'no'} |")
    return "\n".join(lines)


def _versions(tool: str) -> dict[str, str]:
    import numpy
    import pyarrow

    import vecbinlog

    v = {"python": platform.python_version(), "numpy": numpy.__version__, "pyarrow": pyarrow.__version__,
         "vecbinlog": getattr(vecbinlog, "__version__", "?")}
    try:
        import pandas
        v["pandas"] = pandas.__version__
    except ImportError:
        pass
    try:
        from importlib.metadata import version
        v["mysql-replication"] = version("mysql-replication")
    except Exception:
        v["mysql-replication"] = "not installed"
    from tests.support.mariadb import find_tool
    mariadbd = find_tool("mariadbd")
    v["mariadb"] = subprocess.run([mariadbd, "--version"], capture_output=True, text=True).stdout.strip()
    v["mariadb-binlog"] = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.strip()
    return v


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


#: the heading of RESULTS.md's part that a new run keeps (the numbers of earlier rounds of work)
HISTORY = "## History"


def write_markdown(out: Path, results: dict, versions: dict, command: str, rows: int, seed: int,
                   gen_seconds: float, total_seconds: float | None, rounds: int = ROUNDS) -> None:
    now = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    text = [
        "# vecbinlog against its peers",
        "",
        f"Generated by `bench/peers.py` on {now}.",
        "",
        "```",
        command,
        "```",
        "",
        f"* machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {_cpu()}, "
        f"{platform.system()} {platform.release()}",
        "* versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        f"* workload: --rows {rows}, seed {seed}; files written by a MariaDB server "
        "(binlog_row_metadata=FULL, binlog_format=ROW, annotate rows events on, CRC32 checksums); "
        f"generating them took {gen_seconds:.0f} s"
        + (f", the whole run {total_seconds:.0f} s" if total_seconds else ""),
        "",
        "Shapes:",
        "",
    ]
    for name in results:
        text.append(f"* **{name}** — {SHAPES[name][0]}")
    text += [
        "",
        "How each number is taken (all on the same file, in the same run, file in page cache):",
        "",
        f"* Interleaved: vecbinlog `read_all()`, `mariadb-binlog -v` and the raw limits are measured in "
        f"{rounds} rounds, one after the other in each round; each method's time is its best over all "
        "rounds, '(rounds up to X)' its slowest round's best, and the targets table also gives the ratio "
        "round by round (both sides measured within the same minute: this shared VM's speed drifts).",
        "* vecbinlog `read_all()`: in a child process after imports, `vecbinlog.open(f).read_all()`, "
        "best of 5 after a warm-up (the last result is not held while the next is made).",
        "* vecbinlog CLI: `vecbinlog to-parquet FILE OUTDIR -q`, wall time of the whole process "
        "(interpreter start, imports, decoding, zstd Parquet writing), best of 3.",
        "* `to_pandas()`: `Table.to_pandas()` of every table read_all() returned, best of 5 "
        "(its peak RSS includes holding the Arrow tables).",
        "* `mariadb-binlog --no-defaults --base64-output=DECODE-ROWS -v FILE > /dev/null`, best of 5.",
        "* python-mysql-replication: `BinLogStreamReader` connected to the same server over its unix "
        "socket as root (`is_mariadb=True`, `only_events=[Write/Update/DeleteRowsEvent]` plus RotateEvent to "
        "stop at the end of the file, `log_file`, `log_pos=4`, `resume_stream=True`, `blocking=False`, "
        "`server_id=101`), touching every value of every row image; includes connecting and the server "
        "sending the file. With `is_mariadb=True` mysql-replication 1.0.x ignores `log_file`/`log_pos` "
        "(its MariaDB COM_BINLOG_DUMP sends an empty file name, so the server starts at its first binlog), "
        "so the stream is started at the file with `auto_position=BINLOG_GTID_POS(file, 4)` (queried "
        "before timing); its row-image count is checked against vecbinlog's. "
        f"Best of up to 3 runs (repeats only within {PEER_REPEAT_BUDGET:.0f} s).",
        "* raw limits: `readinto` of the whole file into a preallocated buffer, and "
        "`np.memmap(f, uint8).max()`; best of 5.",
        "",
        "Rows/s count row images (an UPDATE is two: before and after, as vecbinlog returns it); "
        "'row changes' counts an UPDATE once. Peak RSS: for the Python children (read_all, to_pandas, "
        "python-mysql-replication) the child's VmHWM from /proc/self/status at exit — its "
        "`getrusage(RUSAGE_SELF).ru_maxrss` is not used because Linux carries the parent's RSS at fork "
        "over exec into it; for whole commands (CLI, mariadb-binlog) GNU `time -f %M`. "
        "'vecbinlog ÷ this' = this method's time ÷ vecbinlog read_all's time "
        "(> 1: vecbinlog is faster; < 1 for the raw limits: the share of the limit vecbinlog reaches "
        "is its reciprocal).",
        "",
        render(results, md=True),
        "",
        "Targets of the speed issue (ratios from the table above; 'time the target allows' = the "
        f"peer's time divided by the ratio asked, or {MEMMAP_TARGET}x the memmap pass; 'the walk alone' = "
        "the part of read_all(threads=1) spent in the compiled walk of the row images):",
        "",
        render_targets(results),
        "",
    ]
    failed = [(s, k, m["error"]) for s, r in results.items() for k, m in r["methods"].items() if "error" in m]
    if failed:
        text += ["Failures:", ""] + [f"* {s} / {k}: `{e}`" for s, k, e in failed] + [""]
    # what earlier rounds of work measured is kept, below this run's numbers
    if out.exists():
        old = out.read_text()
        if HISTORY in old:
            text += [old[old.index(HISTORY):].rstrip(), ""]
    out.write_text("\n".join(text))


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--render"]:  # the markdown of a finished run, from its RESULTS.json
        raw = json.loads(Path(argv[1]).read_text())
        out = Path(argv[2]) if len(argv) > 2 else ROOT / "bench" / "RESULTS.md"
        meta = raw.get("meta", {})
        write_markdown(out, raw["results"], raw["versions"], raw["command"], meta.get("rows", 0), meta.get("seed", 0),
                       meta.get("gen_seconds", 0.0), meta.get("total_seconds"), meta.get("rounds", ROUNDS))
        print(f"wrote {out}")
        return 0
    if argv[:1] == ["--child"]:
        res = CHILDREN[argv[1]](*argv[2:])
        res.update(_peak_rss())
        print(json.dumps(res))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=DEFAULT_ROWS,
                    help=f"size knob: rows of the orders table; other shapes scale from it (default {DEFAULT_ROWS}; "
                         "--rows 800000 makes every file ~200 MB, and takes far longer than 5 minutes: "
                         "python-mysql-replication alone decodes 3-60 k rows/s)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md", help="markdown output")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated subset of " + ",".join(SHAPES))
    ap.add_argument("--no-peer", action="store_true", help="skip python-mysql-replication")
    ap.add_argument("--keep", type=Path, help="copy the generated binlogs into this folder")
    ap.add_argument("--archive-file-bytes", type=int, default=shapes.ARCHIVE_FILE_BYTES,
                    help=f"the archive shape's files: rotated at this size (default {shapes.ARCHIVE_FILE_BYTES})")
    ap.add_argument("--rounds", type=int, default=ROUNDS,
                    help=f"interleaved rounds of read_all, mariadb-binlog and the raw limits (default {ROUNDS})")
    args = ap.parse_args(argv)
    chosen = [s for s in args.shapes.split(",") if s]
    for s in chosen:
        if s not in SHAPES:
            ap.error(f"unknown shape {s!r}")
    command = "python bench/peers.py " + " ".join(argv) if argv else "python bench/peers.py"
    if args.archive_file_bytes != shapes.ARCHIVE_FILE_BYTES:
        shapes.SHAPES["archive"] = (f"the OLTP workload rotated into files of {args.archive_file_bytes >> 10} KiB",
                                    {"max_binlog_size": str(args.archive_file_bytes)})
        SHAPES["archive"] = (shapes.SHAPES["archive"][0], None, PRODUCTION["archive"])

    from tests.support.mariadb import MariaDBServer, ensure_mariadb

    tools = ensure_mariadb()
    try:
        import pymysqlreplication  # noqa: F401
        have_peer = not args.no_peer
    except ImportError:
        have_peer = False
        print("python-mysql-replication not installed (pip install mysql-replication): skipped", file=sys.stderr)

    t_start = time.perf_counter()
    results: dict = {}
    work = Path(tempfile.mkdtemp(prefix="vecbinlog-peers-"))
    try:
        with MariaDBServer(workdir=work / "server", options=SERVER_OPTIONS) as server:
            t0 = time.perf_counter()
            files = generate(server, args.rows, args.seed, chosen, work / "files")
            gen_seconds = time.perf_counter() - t0
            print(f"generated {len(files)} files in {gen_seconds:.0f} s under {work}", file=sys.stderr)
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                for shape, path in files.items():
                    if path.is_dir():
                        shutil.copytree(path, args.keep / shape, dirs_exist_ok=True)
                    else:
                        shutil.copy2(path, args.keep / f"{shape}.{path.name}")
            for shape, path in files.items():
                size = size_of(path)
                print(f"[{shape}] {size / 1e6:.1f} MB {path.name} ({len(files_of(path))} files)", file=sys.stderr)
                methods = measure_interleaved(path, tools["mariadb-binlog"], args.rounds, each_table=shape in PRODUCTION)
                ra = methods["read_all"]
                print(f"  interleaved: { {k: m.get('round_seconds') for k, m in methods.items()} }", file=sys.stderr)
                st = measure_child("stages", str(path))
                methods["place"] = {"seconds": st["place"]}
                methods["gather"] = {"seconds": st["gather"]}
                for key, fn in (("cli", lambda: measure_cli(path, work)),
                                ("to_pandas", lambda: measure_child("to_pandas", str(path))),
                                ("pymysqlrepl", (lambda: measure_child(
                                    "pymysqlrepl", str(path), str(server.socket), "101",
                                    str(PEER_REPEAT_BUDGET))) if have_peer and shape not in PRODUCTION else None)):
                    if fn is None:
                        continue
                    methods[key] = _attempt(fn)
                    print(f"  {key}: {methods[key]}", file=sys.stderr)
                pm = methods.get("pymysqlrepl", {})
                if "images" in pm and pm["images"] != ra["images"]:
                    pm["note"] = f"python-mysql-replication saw {pm['images']} row images, vecbinlog {ra['images']}"
                    print("  WARNING: " + pm["note"], file=sys.stderr)
                results[shape] = {"size": size, "images": ra["images"], "changes": ra["changes"],
                                  "methods": methods}
            versions = _versions(tools["mariadb-binlog"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = time.perf_counter() - t_start
    raw = args.out.with_suffix(".json")  # the numbers behind the table, kept even if rendering fails
    raw.write_text(json.dumps({"command": command, "versions": versions, "results": results, "meta": {
        "rows": args.rows, "seed": args.seed, "gen_seconds": gen_seconds, "total_seconds": total,
        "rounds": args.rounds}}, indent=1))
    print()
    print(render(results, md=False))
    print(f"\ntotal {total:.0f} s (generation {gen_seconds:.0f} s)")
    write_markdown(args.out, results, versions, command, args.rows, args.seed, gen_seconds, total, args.rounds)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
