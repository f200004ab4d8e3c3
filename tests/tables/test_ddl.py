"""DDL tracking, ``schema=`` and schema changes mid-stream, against a real MariaDB server.

The workload creates tables (UNSIGNED integers, utf8mb4 and latin1 text, ENUM/SET, a primary
key), writes, then ALTERs them (a column added in the middle, one dropped, a type widened, the
table renamed) and keeps writing, across FLUSH BINARY LOGS, with ``binlog_row_metadata=NO_LOG``
(MariaDB's default: no names, no signedness, no charsets in the binlog). The truth is the
server's: its final ``SELECT``, its ``information_schema.COLUMNS`` after every statement, the
positions of the ALTERs in ``SHOW BINLOG EVENTS``, and ``mariadb-dump --no-data``.
"""

from __future__ import annotations

import subprocess
import warnings

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.tables.ddl import Catalog, DdlError
from vecbinlog.reader import widen_type

from ..support.clitext import check_all_styles
from ..support.mariadb import find_tool
from ..support.replay import apply_change

DB = "ddlt"
CREATE_ITEMS = (
    "CREATE TABLE items (id INT UNSIGNED NOT NULL, qty SMALLINT UNSIGNED, big BIGINT UNSIGNED, "
    "name VARCHAR(40), legacy VARCHAR(40) CHARACTER SET latin1, color ENUM('red','green','blue'), "
    "tags SET('a','b','c'), delta TINYINT, PRIMARY KEY (id)) ENGINE=InnoDB"
)
#: (statements, flush after): the ALTERs are the statements starting with ALTER/RENAME
WORKLOAD: list[tuple[list[str], bool]] = [
    ([CREATE_ITEMS, "CREATE TABLE notes (k INT PRIMARY KEY, body TEXT) DEFAULT CHARSET=latin1",
      "INSERT INTO items VALUES (4294967295, 65535, 18446744073709551615, 'gift 🎁', 'café', 'blue', 'a,c', -5),"
      " (1, 1, 1, 'ünï', 'naïve', 'red', '', 7)",
      "INSERT INTO notes VALUES (1, 'déjà vu')"], True),
    (["ALTER TABLE items ADD COLUMN price DECIMAL(10,2) AFTER qty",
      "INSERT INTO items VALUES (2, 2, 9.99, 2, 'two', 'zwei', 'green', 'b', -128)",
      "ALTER TABLE items DROP COLUMN delta",
      "UPDATE items SET name = 'ONE', qty = 65534 WHERE id = 1"], True),
    (["ALTER TABLE items MODIFY qty INT UNSIGNED",
      "INSERT INTO items VALUES (3, 4000000000, 0.01, 3, 'three', 'drei', 'blue', 'a,b,c')",
      "RENAME TABLE items TO goods",
      "INSERT INTO goods VALUES (5, 5, 5.5, 5, 'five', 'fünf', 'red', 'c')",
      "DELETE FROM goods WHERE id = 2",
      # MariaDB accepts it, sqlglot does not parse it: the tolerant reader follows it
      "ALTER TABLE notes ADD COLUMN (extra INT, more INT)",
      "INSERT INTO notes VALUES (2, 'après', 1, 2)"], False),
]
COLUMNS_SQL = ("SELECT COLUMN_NAME, COLUMN_TYPE, CHARACTER_SET_NAME FROM information_schema.COLUMNS "
               "WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = '{t}' ORDER BY ORDINAL_POSITION")


def _columns(server, db: str, table: str) -> list[tuple]:
    return [tuple(r) for r in server.query(COLUMNS_SQL.format(db=db, t=table))]


def _run(server, db: str) -> dict:
    """Run the workload in database ``db``; returns the files and the server's views."""
    server.flush_binary_logs()
    first = server.current_binlog()
    # in the log: the database's default charset (utf8mb4) is what `name` gets
    server.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db} CHARACTER SET utf8mb4")
    layouts = []  # information_schema.COLUMNS of items/goods after each statement that changes it
    for statements, flush in WORKLOAD:
        for sql in statements:
            server.execute(sql, database=db)
            table = "goods" if sql.startswith(("RENAME", "INSERT INTO goods")) else "items"
            if sql.startswith(("CREATE TABLE items", "ALTER TABLE items", "RENAME")):
                layouts.append(_columns(server, db, table))
        if flush:
            server.flush_binary_logs()
    server.flush_binary_logs()
    files = server.binlog_files()
    files = files[files.index(first):-1]
    alters = []  # (file name, pos) of the ALTER/RENAME of items, from the server's SHOW BINLOG EVENTS
    for f in files:
        for row in server.query(f"SHOW BINLOG EVENTS IN '{f.name}'"):
            info = str(row[5])
            if row[2] == "Query" and ("ALTER TABLE items" in info or "RENAME TABLE items" in info):
                alters.append((f.name, int(row[1])))
    dump = subprocess.run(
        [find_tool("mariadb-dump"), f"--socket={server.socket}", "-uroot", "--no-data", "--skip-triggers", db],
        check=True, capture_output=True, text=True,
    ).stdout
    return {
        "db": db, "files": files, "layouts": layouts, "alters": alters, "dump": dump,
        "goods": server.query(f"SELECT * FROM {db}.goods ORDER BY id"),
        "goods_columns": _columns(server, db, "goods"),
        "notes_columns": _columns(server, db, "notes"),
    }


@pytest.fixture(scope="module")
def runs(mariadb_server):
    s = mariadb_server
    old = s.query("SELECT @@GLOBAL.binlog_row_metadata")[0][0]
    out = {}
    try:
        for metadata in ("NO_LOG", "FULL"):
            s.set_global("binlog_row_metadata", metadata)
            out[metadata] = _run(s, f"{DB}_{metadata.lower().replace('_', '')}")
    finally:
        s.set_global("binlog_row_metadata", str(old))
    return out


def _replay(tables: list[pa.Table], names: list[str]) -> dict:
    """The change log applied by primary key (column ``id``), row at a time."""
    state: dict = {}
    before = None
    for t in tables:
        for row in t.to_pylist():
            before = apply_change(state, row["id"], row["_change_type"], [row.get(n) for n in names], before)
    return state


def _server_value(v, col_type: str):
    if "set(" in col_type:
        return [m for m in v.split(",") if m] if v is not None else None
    return v


def _read(run, **options) -> tuple[pa.Table, pa.Table, list[warnings.WarningMessage]]:
    db = run["db"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with vecbinlog.open(run["files"], **options) as log:
            items, goods = log.read_table(f"{db}.items"), log.read_table(f"{db}.goods")
    return items, goods, caught


@pytest.mark.parametrize("metadata", ["NO_LOG", "FULL"])
def test_change_log_equals_select(runs, metadata):
    """Names, unsigned values, utf8mb4/latin1 text, ENUM/SET labels from the DDL alone
    (NO_LOG), or from FULL metadata: replaying items then goods gives the server's SELECT."""
    run = runs[metadata]
    assert len(run["files"]) == 3
    items, goods, _ = _read(run)
    cols = run["goods_columns"]
    names = [c[0] for c in cols]
    assert goods.schema.names[: len(names)] == names
    state = _replay([items, goods], names)
    expected = {r[0]: [_server_value(v, c[1]) for v, c in zip(r, cols)] for r in run["goods"]}
    assert state == expected
    # the types the server reports: unsigned integers, text (not bytes), the labels
    assert goods.schema.field("id").type == pa.uint32() and goods.schema.field("big").type == pa.uint64()
    assert goods.schema.field("legacy").type == pa.string() and goods.schema.field("name").type == pa.string()
    assert goods.schema.field("color").type == pa.dictionary(pa.uint16(), pa.string())


def test_schema_version_changes_exactly_at_the_alters(runs):
    run = runs["NO_LOG"]
    items, goods, _ = _read(run)
    alters = run["alters"]  # SHOW BINLOG EVENTS: ADD price, DROP delta, MODIFY qty, RENAME
    assert len(alters) == 4
    order = {name: k for k, name in enumerate(f.name for f in run["files"])}
    key = lambda file, pos: (order[file], pos)  # noqa: E731
    for row in items.select(["_log_file", "_log_pos", "_schema_version"]).to_pylist():
        before = sum(key(*a) < key(row["_log_file"], row["_log_pos"]) for a in alters)
        assert row["_schema_version"] == before
    assert set(goods.column("_schema_version").to_pylist()) == {0}  # one layout since the rename
    # each layout has the server's columns (information_schema after each ALTER), in its order
    with warnings.catch_warnings(), vecbinlog.open(run["files"]) as log:
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)  # the ALTER of notes, below
        seen = {}
        for batch in log.iter_batches(f"{run['db']}.items"):
            v = batch.column("_schema_version")[0].as_py()
            seen[v] = [n for n in batch.schema.names if not n.startswith("_")]
    assert seen == {k: [c[0] for c in run["layouts"][k]] for k in seen}
    assert sorted(seen) == [0, 1, 2, 3]


def test_cat_formats_across_alters(runs):
    """``cat``'s line writers over a table whose layout changes three times (ADD, DROP,
    MODIFY COLUMN), small batches: the text of every style equals the reference's (a new
    header per layout), and streamed as ``cat`` streams it (later batches formatted while
    earlier ones are written) equals written a batch at a time."""
    run = runs["FULL"]
    with warnings.catch_warnings(), vecbinlog.open(run["files"], batch_rows=2) as log:
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)  # the ALTER of notes
        batches = list(log.iter_batches(f"{run['db']}.items"))
    assert len({tuple(b.schema.names) for b in batches}) == 3  # MODIFY keeps the names
    check_all_styles(batches, max_widths=(40, 5))


def test_columns_across_alters(runs):
    """Matched by name: a column added later is null before; dropped ones stay, null after;
    SMALLINT UNSIGNED widened to INT UNSIGNED (uint16 -> uint32) exactly."""
    items, _, _ = _read(runs["NO_LOG"])
    rows = items.to_pylist()
    assert items.schema.field("qty").type == pa.uint32()
    assert [r["price"] for r in rows if r["_schema_version"] == 0] == [None, None]
    assert [r["delta"] for r in rows if r["_schema_version"] == 0] == [-5, 7]
    assert all(r["delta"] is None for r in rows if r["_schema_version"] >= 2)
    assert [r["qty"] for r in rows] == [65535, 1, 2, 1, 65534, 4000000000]


def test_ddl_sqlglot_does_not_parse_is_followed(runs):
    """``ADD COLUMN (extra INT, more INT)`` (sqlglot does not parse it) is read by the tolerant
    reader: no warning, the server's names after it, and the latin1 text still decoded."""
    run = runs["NO_LOG"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with vecbinlog.open(run["files"]) as log:
            notes = log.read_table(f"{run['db']}.notes")
    assert [str(w.message) for w in caught if issubclass(w.category, vecbinlog.SchemaWarning)] == []
    names = [c[0] for c in run["notes_columns"]]
    assert names == ["k", "body", "extra", "more"] and notes.column_names[:4] == names
    assert [tuple(r[n] for n in names) for r in notes.to_pylist()] == [(1, "déjà vu", None, None), (2, "après", 1, 2)]


def test_full_metadata_wins(runs):
    """FULL metadata beats a (deliberately wrong) schema=; NO_LOG takes it when the DDL is off."""
    run = runs["FULL"]
    wrong = {f"{run['db']}.goods": [f"wrong{k}" for k in range(len(run["goods_columns"]))]}
    _, goods, _ = _read(run, schema=wrong)
    assert goods.schema.names[: len(run["goods_columns"])] == [c[0] for c in run["goods_columns"]]
    no_log = runs["NO_LOG"]
    wrong = {f"{no_log['db']}.goods": [f"wrong{k}" for k in range(len(no_log["goods_columns"]))]}
    _, goods, _ = _read(no_log, schema=wrong)  # the DDL in the log beats schema=
    assert goods.schema.names[0] == "id"
    goods = vecbinlog.read_table(no_log["files"], f"{no_log['db']}.goods", schema=wrong, ddl=False)
    assert goods.schema.names[0] == "wrong0"


def test_mariadb_dump_schema_without_ddl(runs):
    """schema= a mariadb-dump --no-data of the final tables, the log's DDL not used: the rows
    written under the final layout come out right; earlier layouts are detected as mismatches."""
    run = runs["NO_LOG"]
    dump = run["dump"]
    assert "CREATE TABLE `goods`" in dump, dump
    items_dump = dump.replace("`goods`", "`items`")  # the same definition, as items
    options = dict(schema=dump + "\n" + items_dump, ddl=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with vecbinlog.open(run["files"], **options) as log:
            goods = log.read_table(f"{run['db']}.goods")
            batches = list(log.iter_batches(f"{run['db']}.items"))
            whole = log.read_table(f"{run['db']}.items")
    # @4 is VARCHAR (bytes: no charset) in the first layout and BIGINT in the second: no exact
    # common type, so read_table keeps them apart: @4@0 (binary, version 0) and @4 (from version 1)
    assert whole.schema.field("@4@0").type == pa.binary() and whole.schema.field("@4").type == pa.int64()
    by_version = {}
    for b in batches:
        by_version.setdefault(b.column("_schema_version")[0].as_py(), []).extend(b.to_pylist())
    for row in whole.to_pylist():
        v = row["_schema_version"]
        mine = by_version[v].pop(0)
        for n, x in mine.items():  # each value under its name, or under name@V for a type kept apart
            if n.startswith("_") or x is None:
                continue
            held = [c for c in whole.column_names if (c == n or c.startswith(n + "@")) and row[c] is not None]
            assert [row[c] for c in held] == [x], (v, n)
        if v < 3:  # version 3 is named by schema=
            assert row["@4@0" if v == 0 else "@4"] == mine["@4"]
    assert not any(by_version.values())
    items = pa.Table.from_batches([b for b in batches if b.column("_schema_version")[0].as_py() in (0, 3)][:1])
    last_batch = [b for b in batches if b.column("_schema_version")[0].as_py() == 3]
    cols = run["goods_columns"]
    names = [c[0] for c in cols]
    assert goods.schema.names[: len(names)] == names
    expected = {r[0]: [_server_value(v, c[1]) for v, c in zip(r, cols)] for r in run["goods"]}
    inserted = [r for r in goods.to_pylist() if r["_change_type"] == "insert"]
    assert [r["id"] for r in inserted] == [5]
    assert [inserted[0][n] for n in names] == expected[5]
    # items: versions 0-2 do not match the final definition (8 columns with BIGINT where the
    # dump has DECIMAL; 9 columns; SMALLINT where it has INT): warned, and @N names there
    msgs = [str(w.message) for w in caught if issubclass(w.category, vecbinlog.SchemaWarning)]
    assert len({m for m in msgs if ".items: the definition from schema= does not match" in m}) == 3
    assert any("it has 8 columns, the TABLE_MAP 9" in m for m in msgs)
    last = pa.Table.from_batches(last_batch).to_pylist()
    assert [(r["id"], r["qty"], r["name"], r["tags"]) for r in last] == [(3, 4000000000, "three", ["a", "b", "c"])]
    first = items.to_pylist()
    assert [r["@1"] for r in first] == [-1, 1]  # no definition: signed, as the bytes say


# -- the interpreter on statements of the MySQL manual, against the server ------------------
#: MySQL 8.0 Reference Manual, 15.1.9 "ALTER TABLE Statement", section "ALTER TABLE Examples";
#: 15.1.20 "CREATE TABLE Statement" and 15.1.36 "RENAME TABLE Statement".
MANUAL = [
    "CREATE TABLE t1 (a INTEGER, b CHAR(10))",
    "ALTER TABLE t1 RENAME t2",
    "ALTER TABLE t2 MODIFY a TINYINT NOT NULL, CHANGE b c CHAR(20)",
    "ALTER TABLE t2 ADD d TIMESTAMP",
    "ALTER TABLE t2 ADD INDEX (d), ADD UNIQUE (a)",
    "ALTER TABLE t2 DROP COLUMN c",
    "ALTER TABLE t2 ADD c INT UNSIGNED NOT NULL AUTO_INCREMENT, ADD PRIMARY KEY (c)",
    "CREATE TABLE t3 (c CHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, "
    "e ENUM('a','b c','it''s'), s SET('x','y')) DEFAULT CHARSET=latin1",
    "ALTER TABLE t3 ADD COLUMN f VARCHAR(5) FIRST, RENAME COLUMN e TO e2",
    "RENAME TABLE t3 TO t4",
    "CREATE TABLE t5 LIKE t4",
    "DROP TABLE t4",
]


def test_interpreter_matches_information_schema(mariadb_server):
    s = mariadb_server
    db = "ddlmanual"
    s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db} CHARACTER SET utf8mb4")
    catalog = Catalog()
    catalog.apply(f"CREATE DATABASE {db} CHARACTER SET utf8mb4", None)
    for sql in MANUAL:
        s.execute(sql, database=db)
        catalog.apply(sql, db)
        tables = {r[0] for r in s.query(f"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA='{db}'")}
        assert {k for k in catalog.tables} == {f"{db}.{t}" for t in tables}, sql
        for t in tables:
            d = catalog.tables[f"{db}.{t}"]
            server = _columns(s, db, t)
            assert [c.name for c in d.columns] == [c[0] for c in server], sql
            assert [c.unsigned for c in d.columns] == ["unsigned" in c[1] for c in server], sql
            assert [c.charset for c in d.columns] == [c[2] for c in server], sql
            for c, (_, col_type, _) in zip(d.columns, server):
                labels = c.enum_values if c.enum_values is not None else c.set_values
                if labels is not None:
                    quoted = ",".join("'" + v.replace("'", "''") + "'" for v in labels)
                    assert col_type.endswith(f"({quoted})"), (sql, col_type)
            pk = [r[0] for r in s.query(
                "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = "
                f"'{db}' AND TABLE_NAME = '{t}' AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION")]
            assert list(d.primary_key or ()) == pk, sql


@pytest.mark.parametrize("reader", ["sqlglot", "scan"])
@pytest.mark.parametrize("sql", [
    "ALTER TABLE t ADD COLUMN",  # cut short
    "ALTER TABLE t MODIFY nosuch INT",  # columns the log never defined: the state is not the server's
    "ALTER TABLE t ADD c INT AFTER nosuch",
    "ALTER TABLE t DROP COLUMN nosuch",
    "ALTER TABLE t RENAME COLUMN nosuch TO other",
], ids=["cut", "modify", "after", "drop", "rename"])
def test_interpreter_refuses_what_it_cannot_read(sql, reader):
    """What no server would have run on the table as the log defines it: the table is named,
    so that it is forgotten (and a CREATE / DROP / TRUNCATE still starts a new lifetime)."""
    catalog = Catalog(reader)
    catalog.apply("CREATE TABLE t (id INT)", "d")
    with pytest.raises(DdlError) as info:
        catalog.apply(sql, "d")
    assert info.value.table == "d.t" and "d.t" not in catalog.tables
    with pytest.raises(DdlError) as info:
        catalog.apply("CREATE TABLE u (id INT", "d")
    assert info.value.table == "d.u" and catalog.lifetimes["d.u"] == 1


@pytest.mark.parametrize("a, b, want", [
    (pa.uint16(), pa.uint32(), pa.uint32()), (pa.int8(), pa.uint8(), pa.int16()), (pa.int64(), pa.uint64(), None),
    (pa.int64(), pa.float64(), None), (pa.int32(), pa.float64(), pa.float64()),
    (pa.decimal128(10, 2), pa.decimal128(12, 4), pa.decimal128(12, 4)),
    (pa.decimal128(12, 2), pa.decimal128(12, 4), pa.decimal128(14, 4)), (pa.string(), pa.binary(), None),
])
def test_widen_type_is_exact(a, b, want):
    assert widen_type(a, b) == want
    assert widen_type(b, a) == want


#: statements that define no table (sakila's routines and the like), between table DDL and rows
NOT_TABLE_DDL = [
    "CREATE PROCEDURE p(IN x INT) BEGIN SELECT x; END",
    "CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1",
    "CREATE AGGREGATE FUNCTION agg(x INT) RETURNS INT DETERMINISTIC BEGIN DECLARE s INT DEFAULT 0; "
    "DECLARE CONTINUE HANDLER FOR NOT FOUND RETURN s; LOOP FETCH GROUP NEXT ROW; SET s = s + x; END LOOP; END",
    "CREATE TRIGGER tr BEFORE INSERT ON film FOR EACH ROW SET NEW.title = UPPER(NEW.title)",
    "CREATE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW v AS SELECT id FROM film",
    "CREATE OR REPLACE VIEW v AS SELECT title FROM film",
    "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM film WHERE id < 0",
    "ALTER EVENT e DISABLE", "CREATE USER u@localhost", "CREATE ROLE r", "GRANT SELECT ON rt.* TO u@localhost",
    "CREATE INDEX i ON film (title)", "CREATE UNIQUE INDEX j ON film (title, id)", "DROP INDEX i ON film",
    "ALTER VIEW v AS SELECT id FROM film", "DROP VIEW v", "DROP TRIGGER tr", "DROP PROCEDURE p", "DROP FUNCTION f",
    "DROP FUNCTION agg", "DROP EVENT e", "DROP USER u@localhost", "DROP ROLE r",
]


@pytest.mark.mariadb
def test_ddl_of_routines_views_and_users_does_not_warn(mariadb_server, mariadb_globals):
    """Routines, triggers, views, events, users, roles, grants and indexes are in the log (the
    server lists them) but define no table: no SchemaWarning, and the tables' DDL is still
    tracked (NO_LOG: the names come from it). DDL that is not understood warns only when it is
    about a table asked for (tables=)."""
    mariadb_globals(binlog_row_metadata="NO_LOG")
    s = mariadb_server
    path = s.capture_binlog(
        "DROP DATABASE IF EXISTS rt", "CREATE DATABASE rt", "USE rt",
        "CREATE TABLE film (id INT PRIMARY KEY, title VARCHAR(20))", "CREATE TABLE other (id INT PRIMARY KEY, v INT)",
        *NOT_TABLE_DDL[:8], "INSERT INTO film VALUES (1, 'alien')", *NOT_TABLE_DDL[8:],
        # a column added with the binlog off, dropped with it on: the log's DDL cannot follow
        # (its definition of other has no column extra): other is forgotten, with a warning
        "SET SESSION sql_log_bin = 0", "ALTER TABLE other ADD COLUMN extra INT", "SET SESSION sql_log_bin = 1",
        "ALTER TABLE other ADD COLUMN (more INT, most INT), DROP COLUMN extra",
        "INSERT INTO film VALUES (2, 'brazil')", "INSERT INTO other VALUES (1, 2, 3, 4)",
    )
    listing = [r[5] for r in s.query(f"SHOW BINLOG EVENTS IN '{path.name}'")]
    for statement in NOT_TABLE_DDL:  # every one is in the log, as a QUERY event
        assert any(statement.split()[1] in info for info in listing), statement

    def read(**options):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with vecbinlog.open(path, **options) as log:
                tables = log.read_all()
        return tables, [str(w.message) for w in seen if issubclass(w.category, vecbinlog.SchemaWarning)]

    tables, seen = read(tables="rt.film")
    assert seen == []
    assert tables["rt.film"].select(["id", "title"]).to_pylist() == [
        {"id": i, "title": t} for i, t in s.query("SELECT id, CAST(title AS BINARY) FROM rt.film ORDER BY id")]
    tables, seen = read()
    assert len(seen) == 1 and "rt.other is no longer tracked" in seen[0] and "DROP COLUMN 'extra'" in seen[0]
    assert tables["rt.other"].column_names[:4] == ["@1", "@2", "@3", "@4"]


def test_a_layout_worked_out_once_warns_at_every_read(tmp_path):
    """The effective layout of a TABLE_MAP and a definition is worked out once per process
    (tables/tracker.py: reads of the same files share it), yet every read warns of a definition
    that does not fit, at its own file and offset, and decodes as the first did."""
    from pathlib import Path
    import shutil

    sample = Path(__file__).resolve().parents[2] / "data" / "sample" / "mariadb-bin.000001"
    other = tmp_path / "copy-bin.000001"
    shutil.copy(sample, other)
    schema = "CREATE TABLE shop.orders (id BIGINT UNSIGNED NOT NULL, customer_id INT);"  # 2 columns of 5
    seen, tables = [], []
    for path in (sample, sample, other):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with vecbinlog.open(str(path), schema=schema, ddl=False) as log:
                tables.append(log.read_table("shop.orders"))
        seen.append([str(w.message) for w in caught if issubclass(w.category, vecbinlog.SchemaWarning)])
    for path, msgs in zip((sample, sample, other), seen):
        assert msgs == [f"{path}: offset 1787: shop.orders: the definition from schema= does not match the TABLE_MAP "
                        "(it has 2 columns, the TABLE_MAP 5); it is not used for these rows"]
    assert tables[0].drop(["_log_file"]).equals(tables[2].drop(["_log_file"])) and tables[0].equals(tables[1])
    assert tables[0].schema.names[:5] == ["id", "customer_id", "quantity", "price", "note"]  # FULL metadata's
