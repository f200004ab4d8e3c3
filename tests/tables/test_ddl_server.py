"""The DDL tracker against the server: seeded random DDL workloads (tests/support/ddlgen.py)
run by a real MariaDB with ``binlog_row_metadata=NO_LOG``, so that names, signedness,
charsets and labels come from the log's DDL alone.

After every statement the server runs, its ``information_schema`` (COLUMNS, TABLES, the
primary keys, the JSON checks) and its binlog position are recorded; then a row is inserted
in the table the statement was about, and its ``SELECT`` recorded. The checks:

* the log's DDL replayed by :class:`~vecbinlog.tables.ddl.Catalog`, with sqlglot where it
  reads a statement and with the tolerant reader alone, gives at every recorded position the
  server's tables, column names, types, UNSIGNED, charsets, collations, labels and keys;
* ``iter_batches`` of every table gives, for each row, the column names and Arrow types of
  the table as the server had it when the row was written (``information_schema``, with
  MariaDB's implicit ``row_start``/``row_end`` of system-versioned tables), and the values
  of its ``SELECT``;
* not one ``SchemaWarning``: every statement of the workload is understood;
* the lifetimes a walk reads of the statements without replaying them (their names) are
  those of the statements replayed whole (tests/tables/test_ddl_names.py).
"""

from __future__ import annotations

import re
import socket
import warnings
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pymysql
import pytest

import vecbinlog
from vecbinlog.binlog.file import BinlogFile
from vecbinlog.tables.ddl import Catalog
from vecbinlog.tables.tracker import SchemaTracker, ddl_candidates

from ..support.ddlgen import Column, Generator, _members
from .test_ddl_names import check_met, logged_statements

pytestmark = pytest.mark.mariadb

#: (seed, steps): two workloads of about half a minute each on the session server
WORKLOADS = [(1, 70), (2, 70)]


@dataclass
class Snapshot:
    """The database as the server had it after one statement."""

    statement: str
    at: tuple[str, int]  #: (binlog file, position) after it
    tables: dict[str, list[Column]]  #: as information_schema has them, implicit period columns last
    kinds: dict[str, str]  #: TABLE_TYPE
    partitioned: set[str]
    keys: dict[str, tuple[str, ...]]  #: primary keys
    json: set[tuple[str, str]]  #: (table, column) of MariaDB's JSON columns


@dataclass
class Workload:
    db: str
    files: list
    snapshots: list[Snapshot] = field(default_factory=list)
    rows: dict[tuple[str, int], tuple[int, tuple]] = field(default_factory=dict)  #: (table, id) -> (snapshot, values)
    sequence_rows: dict[str, set] = field(default_factory=dict)  #: sequence -> its rows after each NEXTVAL
    collations: dict[str, str] = field(default_factory=dict)  #: charset -> default collation


def _query(cur, sql: str, args=None) -> list[tuple]:
    cur.execute(sql, args)
    return list(cur.fetchall())


def _snapshot(cur, db: str, statement: str) -> Snapshot:
    tables: dict[str, list[Column]] = {}
    for r in _query(cur, "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, CHARACTER_SET_NAME, COLLATION_NAME, "
                         "EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s ORDER BY TABLE_NAME, "
                         "ORDINAL_POSITION", (db,)):
        tables.setdefault(r[0], []).append(Column(*r[1:]))
    info = _query(cur, "SELECT TABLE_NAME, TABLE_TYPE, CREATE_OPTIONS FROM information_schema.TABLES "
                       "WHERE TABLE_SCHEMA = %s", (db,))
    kinds = {t: kind for t, kind, _ in info}
    partitioned = {t for t, _, options in info if "partitioned" in (options or "")}
    for name, kind in kinds.items():  # MariaDB's implicit period columns: not in COLUMNS, in every row
        if kind == "SYSTEM VERSIONED" and "PERIOD FOR SYSTEM_TIME" not in _query(cur, f"SHOW CREATE TABLE `{name}`")[0][1]:
            tables[name] += [Column("row_start", "timestamp", "timestamp(6)", None, None, "INVISIBLE"),
                             Column("row_end", "timestamp", "timestamp(6)", None, None, "INVISIBLE")]
    keys: dict[str, tuple[str, ...]] = {}
    for t, c in _query(cur, "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE "
                            "TABLE_SCHEMA = %s AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION", (db,)):
        keys[t] = keys.get(t, ()) + (c,)
    json = {(t, m.group(1)) for t, clause in _query(
        cur, "SELECT TABLE_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = %s",
        (db,)) for m in [re.fullmatch(r"json_valid\(`([^`]*)`\)", clause)] if m}
    status = _query(cur, "SHOW MASTER STATUS")[0]
    return Snapshot(statement, (status[0], int(status[1])), tables, kinds, partitioned, keys, json)


def _next(gen: Generator, snap: Snapshot | None) -> tuple[str, str, str | None]:
    """(statement, the table it is about, the binlog_format to run it in)."""
    tables = [t for t, k in (snap.kinds.items() if snap else ()) if k != "SEQUENCE"]
    sequences = [t for t, k in (snap.kinds.items() if snap else ()) if k == "SEQUENCE"]
    rnd = gen.rnd
    pick = rnd.random() if tables else 0.0
    if pick < 0.2:
        statement = gen.create(tables)
        return statement, statement.split("(")[0].split()[-1], None
    table = rnd.choice(tables)
    columns = snap.tables[table] if snap else []
    if pick < 0.65:
        return gen.alter(table, columns, snap.kinds[table] == "SYSTEM VERSIONED", table in snap.partitioned), table, None
    if pick < 0.75:
        new, statement = gen.create_from(table, columns)
        return statement, new, rnd.choice([None, "STATEMENT"]) if "SELECT" in statement else None
    if pick < 0.82:
        new = gen.fresh("t")
        other = rnd.choice(tables)
        return rnd.choice([f"RENAME TABLE {table} TO {new}", f"ALTER TABLE {table} RENAME TO {new}",
                           f"RENAME TABLE {table} TO {new}, {other} TO {table}, {new} TO {other}"]), table, None
    if pick < 0.88:
        if sequences and rnd.random() < 0.5:
            seq = rnd.choice(sequences)
            return rnd.choice([f"ALTER SEQUENCE {seq} RESTART WITH 50", f"DROP SEQUENCE {seq}"]), seq, None
        statement = gen.sequence()
        return statement, statement.split()[2], None
    return rnd.choice([f"DROP TABLE {table}", f"TRUNCATE TABLE {table}", f"DROP TABLE IF EXISTS {table}, nosuch",
                       f"ANALYZE TABLE {table}"]), table, None


def run_workload(server, seed: int, steps: int) -> Workload:
    db = f"gen{seed}"
    conn = pymysql.connect(unix_socket=str(server.socket), user="root", password="", charset="utf8mb4",
                           autocommit=True)
    cur = conn.cursor()
    server.flush_binary_logs()
    first = server.current_binlog()
    for sql in (f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db} CHARACTER SET utf8mb4", f"USE {db}",
                "SET SESSION system_versioning_alter_history = KEEP", "SET SESSION time_zone = '+00:00'"):
        cur.execute(sql)
    work = Workload(db, [])
    work.collations = dict(_query(cur, "SELECT CHARACTER_SET_NAME, DEFAULT_COLLATE_NAME FROM "
                                       "information_schema.CHARACTER_SETS"))
    gen = Generator(seed)
    snap = None
    for _ in range(steps):
        statement, target, binlog_format = _next(gen, snap)
        try:
            if binlog_format:
                cur.execute(f"SET SESSION binlog_format = '{binlog_format}'")
            cur.execute(statement)
        except pymysql.err.MySQLError:
            continue  # the server refused it: not in the log
        finally:
            cur.execute("SET SESSION binlog_format = 'ROW'")
        snap = _snapshot(cur, db, statement)
        work.snapshots.append(snap)
        k = len(work.snapshots) - 1
        if "SELECT" in statement and binlog_format is None and target in snap.tables:  # the rows it copied
            for row in _rows(cur, snap, target, None):
                work.rows[(target, row[_names(snap, target).index("id")])] = (k, row)
        if snap.kinds.get(target) == "SEQUENCE":
            cur.execute(f"SELECT NEXTVAL({target})")
            work.sequence_rows.setdefault(target, set()).update(_query(cur, f"SELECT * FROM {target}"))
        elif target in snap.tables:
            _insert(cur, gen, snap, target, work, k)
    server.flush_binary_logs()
    conn.close()
    files = server.binlog_files()
    work.files = files[files.index(first):-1]
    return work


def _names(snap: Snapshot, table: str) -> list[str]:
    return [c.name for c in snap.tables[table]]


def _rows(cur, snap: Snapshot, table: str, rid: int | None) -> list[tuple]:
    cols = ", ".join(f"`{n}`" for n in _names(snap, table))
    where = "" if rid is None else f" WHERE id = {rid}"
    return _query(cur, f"SELECT {cols} FROM `{table}`{where}")


def _insert(cur, gen: Generator, snap: Snapshot, table: str, work: Workload, k: int) -> None:
    """A row of new values (a few tries: a CHECK or a key may refuse one), and its SELECT."""
    for _ in range(3):
        rid, names, values = gen.row(snap.tables[table])
        try:
            cur.execute(f"INSERT INTO `{table}` ({', '.join(f'`{n}`' for n in names)}) "
                        f"VALUES ({', '.join(['%s'] * len(values))})", values)
        except pymysql.err.MySQLError:
            continue
        for row in _rows(cur, snap, table, rid):
            work.rows[(table, rid)] = (k, row)
        return


@pytest.fixture(scope="module", params=WORKLOADS, ids=[f"seed{s}" for s, _ in WORKLOADS])
def workload(request, mariadb_server):
    s = mariadb_server
    old = s.query("SELECT @@GLOBAL.binlog_row_metadata")[0][0]
    s.set_global("binlog_row_metadata", "NO_LOG")
    try:
        return run_workload(s, *request.param)
    finally:
        s.set_global("binlog_row_metadata", str(old))


# -- the catalog against information_schema ----------------------------------------------
def _ddl_states(work: Workload, reader: str) -> list[tuple[tuple[int, int], Catalog]]:
    """The DDL state after each DDL statement of the log, replayed as a read replays it
    (SchemaTracker: error codes, notes as warnings), with ``reader``."""
    tracker = SchemaTracker(catalog=Catalog(reader))
    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k, path in enumerate(work.files):
            with BinlogFile(path) as f:
                for seg in f.segments():
                    for i in ddl_candidates(seg.src, seg.index).tolist():
                        tracker.scan(seg.src, seg.index.take(np.array([i])))
                        out.append(((k, int(seg.index.pos[i])), tracker.state()))
    assert [str(w.message) for w in caught] == []
    return out


def _check_catalog(catalog: Catalog, snap: Snapshot, work: Workload) -> None:
    mine = {k.split(".", 1)[1]: d for k, d in catalog.tables.items() if k.startswith(work.db + ".")}
    assert sorted(mine) == sorted(snap.tables), snap.statement
    for table, server in snap.tables.items():
        d = mine[table]
        where = (snap.statement, table)
        assert [c.name for c in d.columns] == [c.name for c in server], where
        for c, s in zip(d.columns, server):
            json = (table, s.name) in snap.json
            assert c.type == ("JSON" if json else s.data_type.upper()), (where, c, s)
            assert bool(c.unsigned) == ("unsigned" in s.column_type), (where, c, s)
            charset = None if c.charset == "binary" and s.charset is None else c.charset
            assert charset == s.charset, (where, c, s)
            assert (c.collation or work.collations.get(s.charset or "")) == s.collation or s.charset is None, (where, c, s)
            labels = c.enum_values if c.enum_values is not None else c.set_values
            if s.data_type in ("enum", "set"):
                assert list(labels or ()) == _members(s.column_type), (where, c, s)
        assert (d.primary_key or ()) == snap.keys.get(table, ()), where


@pytest.mark.parametrize("reader", ["sqlglot", "scan"])
def test_catalog_equals_information_schema(workload, reader):
    """At every position the workload recorded, the log's DDL replayed so far defines the
    server's tables: names, types, UNSIGNED, charsets, collations, labels, primary keys."""
    states = _ddl_states(workload, reader)
    order = {f.name: k for k, f in enumerate(workload.files)}
    assert len(workload.snapshots) > 40
    for snap in workload.snapshots:
        at = (order[snap.at[0]], snap.at[1])
        catalog = [c for pos, c in states if pos < at][-1]
        _check_catalog(catalog, snap, workload)


# -- the decoded rows against the server -------------------------------------------------
_INTS = {"tinyint": 8, "smallint": 16, "mediumint": 32, "int": 32, "bigint": 64}  # MEDIUMINT: (u)int32
_PLAIN = {"float": pa.float32(), "double": pa.float64(), "bit": pa.uint64(), "year": pa.uint16(),
          "date": pa.date32(), "datetime": pa.timestamp("us"), "timestamp": pa.timestamp("us", "UTC"),
          "time": pa.duration("us"), "inet4": pa.binary(), "inet6": pa.binary(), "uuid": pa.binary()}


def expected_type(c: Column) -> pa.DataType:
    """The Arrow type docs/types.md gives a column of that information_schema description."""
    t = c.data_type
    if t in _INTS:
        return getattr(pa, f"{'u' if 'unsigned' in c.column_type else ''}int{_INTS[t]}")()
    if t == "decimal":
        p, s = (int(x) for x in re.findall(r"\d+", c.column_type)[:2])
        return pa.decimal128(p, s)
    if t in _PLAIN:
        return _PLAIN[t]
    if t == "enum":
        return pa.dictionary(pa.uint16(), pa.string())
    if t == "set":
        return pa.list_(pa.string())
    return pa.binary() if c.charset in (None, "binary") else pa.string()


def _value(v, c: Column, decoded: bool):
    """A value as the server's SELECT and the decoder give it, made comparable."""
    if v is None:
        return None
    t = c.data_type
    if t == "bit" and isinstance(v, bytes):
        return int.from_bytes(v, "big")
    if t == "set" and isinstance(v, str):
        return [m for m in v.split(",") if m]
    if t in ("inet4", "inet6") and isinstance(v, str):
        return socket.inet_pton(socket.AF_INET if t == "inet4" else socket.AF_INET6, v)
    if t == "uuid":
        return len(v) if decoded else 16  # MariaDB's storage order: only its size is compared
    if t == "timestamp" and decoded:
        return v.replace(tzinfo=None)
    return v


def test_rows_equal_select(workload):
    """Each row's names and Arrow types are the table's as the server had it when the row was
    written, its values the server's SELECT; not one SchemaWarning."""
    seen = set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with vecbinlog.open(workload.files) as log:
            tables = [t for t in log.tables if t.startswith(workload.db + ".")]
            batches = [(t.split(".", 1)[1], b) for t in tables for b in log.iter_batches(t)]
    assert [str(w.message) for w in caught if issubclass(w.category, vecbinlog.SchemaWarning)] == []
    for table, batch in batches:
        names = [n for n in batch.schema.names if not n.startswith("_")]
        for row in batch.to_pylist():
            if table in workload.sequence_rows:
                assert tuple(row[n] for n in names) in workload.sequence_rows[table], (table, row)
                continue
            k, values = workload.rows[(table, row["id"])]
            snap = workload.snapshots[k]
            server = snap.tables[table]
            assert names == [c.name for c in server], (snap.statement, table)
            for c, v in zip(server, values):
                assert batch.schema.field(c.name).type == expected_type(c), (snap.statement, table, c)
                assert _value(row[c.name], c, True) == _value(v, c, False), (snap.statement, table, c)
            seen.add((table, row["id"]))
    assert seen == set(workload.rows)


def test_names_met_are_the_names_replayed(workload):
    statements = [st for path in workload.files for st in logged_statements(path)]
    assert len(statements) > 50  # (a statement the server refused is not logged)
    assert check_met(statements) > 0
