"""Production-shaped workloads for the benches: what production binlogs mostly hold.

Bulk INSERT files flatter any decoder. Production logs are mostly small transactions over many
tables, rotated into many files; so these shapes come first in ``bench/peers.py``:

* ``oltp``: single-row autocommit changes (INSERT/UPDATE/DELETE 70/20/10) over OLTP_TABLES
  tables of three kinds (integers, an orders table, text/JSON), 5% of them two-statement
  transactions;
* ``archive``: the same workload rotated into many small files (``max_binlog_size``);
* ``stmt_ints``, ``stmt_orders``, ``stmt_text``: realistic statements on one table of each
  kind: multi-row INSERTs of 1 to 1000 rows, range UPDATEs (before and after images), range
  DELETEs, some explicit multi-statement transactions;
* ``oltp_minimal``, ``oltp_noblob``: the OLTP workload with ``binlog_row_image`` MINIMAL and
  NOBLOB.

Every workload is deterministic from its seed and written by a real MariaDB server
(tests/support/mariadb.py); :func:`write` returns a file, or a folder for ``archive``.
"""

from __future__ import annotations

import datetime as _dt
import json
import random
import shutil
from pathlib import Path

#: tables of the OLTP workloads
OLTP_TABLES = 16
#: the archive's files: rotated at this size (MariaDB's max_binlog_size)
ARCHIVE_FILE_BYTES = 512 << 10

_STATUSES = ("new", "paid", "shipped", "delivered", "cancelled")
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
          "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
          "größe", "café", "naïve", "smörgåsbord", "日本", "данные")


def q(s: str) -> str:
    """A SQL string literal."""
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"


def when(rnd: random.Random) -> str:
    t = _dt.datetime(2024, 1, 1) + _dt.timedelta(seconds=rnd.randint(0, 3 * 365 * 86400))
    return t.strftime("%Y-%m-%d %H:%M:%S")


# -- the three kinds of table ---------------------------------------------------------------------
def create(kind: int, name: str) -> str:
    """CREATE TABLE of kind 0 (integers), 1 (an orders table: ints, DECIMAL, ENUM, DATETIME,
    VARCHAR, NULLs) or 2 (text and JSON)."""
    if kind == 0:
        return (f"CREATE TABLE {name} (id BIGINT PRIMARY KEY, a INT, b BIGINT, c SMALLINT UNSIGNED, "
                "d INT UNSIGNED, e TINYINT, f MEDIUMINT, g BIGINT UNSIGNED)")
    if kind == 1:  # 27 columns
        return (f"CREATE TABLE {name} (id BIGINT PRIMARY KEY, customer_id INT UNSIGNED NOT NULL, "
                "status ENUM('new','paid','shipped','delivered','cancelled') NOT NULL, "
                "amount DECIMAL(12,2) NOT NULL, discount DECIMAL(5,2) NULL, currency CHAR(3) NOT NULL, "
                "email VARCHAR(128) CHARACTER SET utf8mb4 NOT NULL, created_at DATETIME NOT NULL, "
                "shipped_at DATETIME(6) NULL, qty SMALLINT UNSIGNED NOT NULL, "
                "note VARCHAR(255) CHARACTER SET utf8mb4 NULL, weight DOUBLE NULL, "
                "ship_name VARCHAR(64) CHARACTER SET utf8mb4 NOT NULL, ship_city VARCHAR(64) NOT NULL, "
                "ship_zip CHAR(10) NOT NULL, country CHAR(2) NOT NULL, tax DECIMAL(10,2) NOT NULL, "
                "total DECIMAL(14,2) NOT NULL, paid_at DATETIME NULL, updated_at TIMESTAMP(3) NOT NULL, "
                "flags SET('gift','express','fragile') NOT NULL, priority TINYINT NOT NULL, "
                "warehouse SMALLINT UNSIGNED NOT NULL, coupon VARCHAR(32) NULL, rating FLOAT NULL, "
                "items INT UNSIGNED NOT NULL, channel ENUM('web','app','store') NOT NULL)")
    return (f"CREATE TABLE {name} (id BIGINT PRIMARY KEY, k VARCHAR(64) CHARACTER SET utf8mb4, "
            "v TEXT CHARACTER SET utf8mb4, doc JSON, ts DATETIME(3), f FLOAT NULL)")


def row(kind: int, rnd: random.Random, i: int) -> str:
    """A row of a table of ``kind``, key ``i``."""
    if kind == 0:
        return (f"({i},{rnd.randint(-2**31, 2**31 - 1)},{rnd.randint(-2**63, 2**63 - 1)},{rnd.randint(0, 65535)},"
                f"{rnd.randint(0, 2**32 - 1)},{rnd.randint(-128, 127)},{rnd.randint(-2**23, 2**23 - 1)},"
                f"{rnd.randint(0, 2**64 - 1)})")
    if kind == 1:
        disc = "NULL" if rnd.random() < 0.6 else f"{rnd.randint(0, 9999) / 100:.2f}"
        shipped = "NULL" if rnd.random() < 0.5 else q(when(rnd) + f".{rnd.randint(0, 999999):06d}")
        note = "NULL" if rnd.random() < 0.7 else q(" ".join(rnd.choices(_WORDS, k=rnd.randint(1, 12))))
        weight = "NULL" if rnd.random() < 0.2 else f"{rnd.random() * 50:.4f}"
        paid = "NULL" if rnd.random() < 0.4 else q(when(rnd))
        coupon = "NULL" if rnd.random() < 0.8 else q(rnd.choice(_WORDS).upper() + str(rnd.randint(1, 99)))
        rating = "NULL" if rnd.random() < 0.5 else f"{rnd.random() * 5:.2f}"
        flags = q(",".join(rnd.sample(("gift", "express", "fragile"), rnd.randint(0, 2))))
        return (f"({i},{rnd.randint(1, 10**6)},{q(rnd.choice(_STATUSES))},{rnd.randint(0, 10**9) / 100:.2f},"
                f"{disc},{q(rnd.choice(('EUR', 'USD', 'GBP', 'JPY')))},"
                f"{q('user' + str(rnd.randint(0, 10**7)) + '@' + rnd.choice(('example.com', 'mail.org')))},"
                f"{q(when(rnd))},{shipped},{rnd.randint(1, 500)},{note},{weight},"
                f"{q(' '.join(rnd.choices(_WORDS, k=2)))},{q(rnd.choice(_WORDS).title())},"
                f"{q(str(rnd.randint(10000, 99999)))},{q(rnd.choice(('DE', 'FR', 'US', 'JP', 'BR')))},"
                f"{rnd.randint(0, 10**6) / 100:.2f},{rnd.randint(0, 10**10) / 100:.2f},{paid},"
                f"{q(when(rnd) + '.250')},{flags},{rnd.randint(-5, 5)},{rnd.randint(1, 400)},{coupon},{rating},"
                f"{rnd.randint(1, 50)},{q(rnd.choice(('web', 'app', 'store')))})")
    doc = {"id": i, "user": {"name": " ".join(rnd.choices(_WORDS, k=2)), "age": rnd.randint(18, 90)},
           "tags": rnd.sample(_WORDS, rnd.randint(0, 5)), "score": round(rnd.random() * 100, 3)}
    f = "NULL" if i % 5 == 0 else f"{rnd.random():.5f}"
    return (f"({i},{q(rnd.choice(_WORDS) + str(i))},{q(' '.join(rnd.choices(_WORDS, k=rnd.randint(1, 30))))},"
            f"{q(json.dumps(doc, ensure_ascii=False))},{q(when(rnd) + '.123')},{f})")


#: the change an UPDATE makes to a table of each kind
_CHANGES = ("a = a DIV 2, c = c DIV 2, g = g DIV 3", "status = 'paid', qty = qty + 1, discount = NULL",
            "v = CONCAT(v, ' edited'), f = NULL, doc = JSON_SET(doc, '$.score', 1.5)")


# -- the workloads ------------------------------------------------------------------------------------
def oltp(rnd: random.Random, n: int) -> list[str]:
    """``n`` single-row changes over OLTP_TABLES tables (INSERT/UPDATE/DELETE 70/20/10), each
    its own autocommit transaction but 5%, which go two statements to a transaction."""
    out = [create(t % 3, f"o{t:02d}") for t in range(OLTP_TABLES)]
    next_id = [0] * OLTP_TABLES
    done = 0
    while done < n:
        stmts = []
        for _ in range(2 if rnd.random() < 0.05 else 1):
            t = rnd.randrange(OLTP_TABLES)
            name, kind, r = f"o{t:02d}", t % 3, rnd.random()
            if next_id[t] < 10 or r < 0.7:
                stmts.append(f"INSERT INTO {name} VALUES {row(kind, rnd, next_id[t])}")
                next_id[t] += 1
            elif r < 0.9:
                stmts.append(f"UPDATE {name} SET {_CHANGES[kind]} WHERE id = {rnd.randrange(next_id[t])}")
            else:
                stmts.append(f"DELETE FROM {name} WHERE id = {rnd.randrange(next_id[t])}")
        done += len(stmts)
        out.extend(stmts if len(stmts) == 1 else ["BEGIN", *stmts, "COMMIT"])
    return out


def statements(kind: int, rnd: random.Random, n: int) -> list[str]:
    """About ``n`` row changes on one table of ``kind`` as realistic statements: multi-row
    INSERTs of 1 to 1000 rows, range UPDATEs and DELETEs, a tenth of them in explicit
    transactions of two to five statements."""
    name = f"s{kind}"
    out = [create(kind, name)]
    next_id, live_from, done = 0, 0, 0
    while done < n:
        group = []
        for _ in range(rnd.randint(2, 5) if rnd.random() < 0.1 else 1):
            r = rnd.random()
            if next_id - live_from < 100 or r < 0.6:
                k = min(int(rnd.paretovariate(1.2)), 1000)
                group.append(f"INSERT INTO {name} VALUES " + ",".join(row(kind, rnd, next_id + i) for i in range(k)))
                next_id += k
                done += k
            elif r < 0.9:
                lo = rnd.randint(live_from, next_id - 1)
                k = rnd.randint(1, 300)
                group.append(f"UPDATE {name} SET {_CHANGES[kind]} WHERE id BETWEEN {lo} AND {lo + k}")
                done += k
            else:
                k = rnd.randint(1, 100)
                group.append(f"DELETE FROM {name} WHERE id < {live_from + k}")
                live_from += k
                done += k
        out.extend(group if len(group) == 1 else ["BEGIN", *group, "COMMIT"])
    return out


#: name -> (description, server settings)
SHAPES: dict[str, tuple[str, dict[str, str]]] = {
    "oltp": (f"OLTP: single-row changes over {OLTP_TABLES} tables of 3 kinds (INSERT/UPDATE/DELETE 70/20/10), "
             "5% two-statement transactions", {}),
    "archive": (f"the OLTP workload rotated into files of {ARCHIVE_FILE_BYTES >> 10} KiB",
                {"max_binlog_size": str(ARCHIVE_FILE_BYTES)}),
    "stmt_ints": ("statements on an integer table: INSERTs of 1-1000 rows, range UPDATEs and DELETEs, "
                  "some transactions", {}),
    "stmt_orders": ("statements on a 27-column orders table (ints, DECIMAL, ENUM, SET, DATETIME, VARCHAR, NULLs)", {}),
    "stmt_text": ("statements on a text/JSON table", {}),
    "oltp_minimal": ("the OLTP workload, binlog_row_image=MINIMAL", {"binlog_row_image": "MINIMAL"}),
    "oltp_noblob": ("the OLTP workload, binlog_row_image=NOBLOB", {"binlog_row_image": "NOBLOB"}),
}


def workload(name: str, rnd: random.Random, n: int) -> list[str]:
    if name.startswith("stmt_"):
        return statements(("stmt_ints", "stmt_orders", "stmt_text").index(name), rnd, n)
    return oltp(rnd, n)


def write(server, name: str, changes: int, seed: int, folder: Path) -> Path:
    """The binlog of workload ``name`` (about ``changes`` row changes) written by ``server``
    (database ``bench``), copied into ``folder``: a file, or for ``archive`` a folder of its
    files with their ``mysql-bin.index``."""
    _, settings = SHAPES[name]
    sql = workload(name, random.Random(f"{seed}-{name}"), max(1, changes))
    saved = {k: str(server.query(f"SELECT @@GLOBAL.{k}")[0][0]) for k in settings}
    for k, v in settings.items():
        server.set_global(k, v)
    try:
        server.execute("DROP DATABASE IF EXISTS bench", "CREATE DATABASE bench")
        server.flush_binary_logs()
        first = len(server.binlog_files()) - 1
        server.execute(*sql, database="bench")
        server.flush_binary_logs()
        files = server.binlog_files()[first:-1]
    finally:
        for k, v in saved.items():
            server.set_global(k, v)
    folder.mkdir(parents=True, exist_ok=True)
    if name != "archive":
        (path,) = files if len(files) == 1 else (None,)
        if path is None:
            raise RuntimeError(f"{name}: the workload spans {len(files)} files; raise max_binlog_size")
        out = folder / f"{name}.{path.name}"
        shutil.copy(path, out)
        return out
    out = folder / name
    out.mkdir(exist_ok=True)
    for f in files:
        shutil.copy(f, out / f.name)
    (out / "mysql-bin.index").write_text("".join(f"./{f.name}\n" for f in files))
    return out
