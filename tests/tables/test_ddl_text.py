"""DDL forms MariaDB does not run, as text: MySQL's, from the MySQL manual and from the shared
corpus of real binlogs. (MariaDB's are checked against its server in test_ddl_server.py.)

The expected definitions are the manual's: the type synonyms of "Using Data Types from Other
Database Engines" (MySQL 8.0 Reference Manual 13.9), the column lists it gives for CREATE
TABLE ... SELECT (15.1.20.4), FLOAT(p) (13.1.4), NATIONAL CHAR (10.3.7), invisible columns
(15.1.20.10), functional key parts (15.1.15: the hidden column's name is
``make_functional_index_column_name``'s in sql/sql_table.cc). Each case runs with sqlglot
where it reads the statement and with the tolerant reader alone.
"""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vecbinlog
from vecbinlog.binlog.file import BinlogFile
from vecbinlog.tables.ddl import Catalog, DdlError
from vecbinlog.tables.tracker import SchemaTracker, ddl_candidates

from ..conftest import corpus_path
from ..support.corpus import corpus_names

READERS = ["sqlglot", "scan"]

#: MySQL 8.0 manual 13.9: "Using Data Types from Other Database Engines" (and 13.1.4 for
#: FLOAT(p), 13.1.1 for REAL, SERIAL and DOUBLE PRECISION, 10.3.7 for NATIONAL CHAR)
SYNONYMS = [
    ("BOOL", "TINYINT", False, None), ("BOOLEAN", "TINYINT", False, None),
    ("CHARACTER VARYING(5)", "VARCHAR", False, "latin1"), ("FIXED(5,2)", "DECIMAL", False, None),
    ("FLOAT4", "FLOAT", False, None), ("FLOAT8", "DOUBLE", False, None), ("INT1", "TINYINT", False, None),
    ("INT2", "SMALLINT", False, None), ("INT3", "MEDIUMINT", False, None), ("INT4", "INT", False, None),
    ("INT8", "BIGINT", False, None), ("LONG VARBINARY", "MEDIUMBLOB", False, "binary"),
    ("LONG VARCHAR", "MEDIUMTEXT", False, "latin1"), ("LONG", "MEDIUMTEXT", False, "latin1"),
    ("MIDDLEINT", "MEDIUMINT", False, None), ("NUMERIC(6,2)", "DECIMAL", False, None),
    ("INTEGER UNSIGNED", "INT", True, None), ("DEC(4)", "DECIMAL", False, None), ("REAL", "DOUBLE", False, None),
    ("DOUBLE PRECISION", "DOUBLE", False, None), ("SERIAL", "BIGINT", True, None), ("FLOAT(24)", "FLOAT", False, None),
    ("FLOAT(25)", "DOUBLE", False, None), ("FLOAT(7,4)", "FLOAT", False, None),
    ("NATIONAL CHAR(3)", "CHAR", False, "utf8mb3"), ("NCHAR VARCHAR(3)", "VARCHAR", False, "utf8mb3"),
    ("NATIONAL VARCHAR(3)", "VARCHAR", False, "utf8mb3"), ("NATIONAL CHARACTER VARYING(3)", "VARCHAR", False, "utf8mb3"),
    ("CHAR(3) BYTE", "BINARY", False, "binary"), ("TEXT CHARACTER SET binary", "BLOB", False, "binary"),
    ("INT(11) ZEROFILL", "INT", True, None), ("DOUBLE(10,2) UNSIGNED ZEROFILL", "DOUBLE", True, None),
    ("YEAR(4)", "YEAR", False, None), ("POINT SRID 4326", "POINT", False, "binary"),
]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("sql, want, unsigned, charset", SYNONYMS, ids=[s[0] for s in SYNONYMS])
def test_type_synonyms_are_the_manuals(sql, want, unsigned, charset, reader):
    catalog = Catalog(reader)
    catalog.apply("CREATE DATABASE d CHARACTER SET latin1", None)
    catalog.apply(f"CREATE TABLE t (c {sql}, z INT)", "d")
    c = catalog.tables["d.t"].columns[0]
    assert (c.name, c.type, c.unsigned, c.charset) == ("c", want, unsigned, charset)
    assert catalog.tables["d.t"].columns[1].name == "z"


#: (statements, table, its columns as (name, type), primary key): the manual's examples
MANUAL = [
    # 15.1.20.4: "the table has columns a, b and c": the defined ones, then the select's
    (["CREATE TABLE test2 (b INT, c VARCHAR(3))",
      "CREATE TABLE test (a INT NOT NULL AUTO_INCREMENT, PRIMARY KEY (a), KEY(b)) ENGINE=InnoDB SELECT b,c FROM test2"],
     "test", [("a", "INT"), ("b", "INT"), ("c", "VARCHAR")], ("a",)),
    # 15.1.20.4: "CREATE TABLE foo (a TINYINT NOT NULL) SELECT b+1 AS a FROM bar": one column, TINYINT
    (["CREATE TABLE bar (b INT)", "CREATE TABLE foo (a TINYINT NOT NULL) SELECT b+1 AS a FROM bar"],
     "foo", [("a", "TINYINT")], None),
    # 15.1.20.4: a join, an alias, an aggregate
    (["CREATE TABLE artist (id INT, name VARCHAR(20))", "CREATE TABLE work (artist_id INT)",
      ("CREATE TABLE artists_and_works SELECT artist.name, COUNT(work.artist_id) AS number_of_works FROM artist "
      "LEFT JOIN work ON artist.id = work.artist_id GROUP BY artist.id")],
     "artists_and_works", [("name", "VARCHAR"), ("number_of_works", None)], None),
    (["CREATE TABLE foo (n INT)", "CREATE TABLE bar (UNIQUE (n)) SELECT n FROM foo"], "bar", [("n", "INT")], None),
    # 15.1.20.10: invisible columns are columns (in the row images); SELECT * leaves them out
    (["CREATE TABLE t1 (i INT, j DATE INVISIBLE) ENGINE = InnoDB", "CREATE TABLE t2 SELECT * FROM t1"],
     "t2", [("i", "INT")], None),
    (["CREATE TABLE t1 (i INT, j DATE INVISIBLE)", "ALTER TABLE t1 ALTER COLUMN j SET VISIBLE",
      "ALTER TABLE t1 ADD COLUMN k INT INVISIBLE, ALTER COLUMN i SET INVISIBLE", "CREATE TABLE t3 SELECT * FROM t1"],
     "t3", [("j", "DATE")], None),
    # 15.1.15: a functional key part is a hidden virtual column, !hidden!<index>!<part>!<n>
    (["CREATE TABLE t1 (col1 INT, col2 INT, INDEX func_index ((ABS(col1))))",
      "ALTER TABLE t1 ADD INDEX ((col1 + col2), (col1 - col2), col1)", "ALTER TABLE t1 ADD COLUMN col3 TEXT"],
     "t1", [("col1", "INT"), ("col2", "INT"), ("!hidden!func_index!0!0", None),
            ("!hidden!functional_index!0!0", None), ("!hidden!functional_index!1!0", None), ("col3", "TEXT")], None),
    (["CREATE TABLE t1 (col1 INT, col2 INT, INDEX func_index ((ABS(col1))))", ("ALTER TABLE t1 RENAME INDEX "
      "func_index TO fi"), "ALTER TABLE t1 ADD COLUMN c INT FIRST", "ALTER TABLE t1 DROP INDEX fi"],
     "t1", [("c", "INT"), ("col1", "INT"), ("col2", "INT")], None),
    # 15.1.20: CREATE TABLE ... SELECT as MySQL 8.0.21+ logs it (atomic): its columns, START TRANSACTION
    (["CREATE TABLE t (id INT NOT NULL, v VARCHAR(3), PRIMARY KEY (id)) START TRANSACTION"],
     "t", [("id", "INT"), ("v", "VARCHAR")], ("id",)),
    # 15.1.9: ALTER TABLE examples of MySQL 8 (checks, INSTANT, options, partitions)
    ([("CREATE TABLE t1 (c1 INT, c2 INT) PARTITION BY RANGE COLUMNS(c1, c2) SUBPARTITION BY HASH(c1) "
      "SUBPARTITIONS 2 (PARTITION p0 VALUES LESS THAN (10, 10), PARTITION p1 VALUES LESS THAN (MAXVALUE, MAXVALUE))"),
      "ALTER TABLE t1 ADD CONSTRAINT ck CHECK (c1 > 10) NOT ENFORCED, ALTER CHECK ck ENFORCED",
      "ALTER TABLE t1 ADD COLUMN c3 INT FIRST, ALGORITHM=INSTANT, LOCK=DEFAULT",
      ("ALTER TABLE t1 REORGANIZE PARTITION p0 INTO (PARTITION n0 VALUES LESS THAN (5, 5), "
      "PARTITION n1 VALUES LESS THAN (10, 10))"),
      "ALTER TABLE t1 TRUNCATE PARTITION p1", "ALTER TABLE t1 DROP CHECK ck, WITH VALIDATION",
      "ALTER TABLE t1 SECONDARY_ENGINE = RAPID", "ALTER TABLE t1 ENCRYPTION = 'N', AUTOEXTEND_SIZE = 4M",
      "ALTER TABLE t1 DISCARD TABLESPACE", "ALTER TABLE t1 IMPORT TABLESPACE", "ALTER TABLE t1 REMOVE PARTITIONING",
      "ALTER TABLE t1 RENAME COLUMN c2 TO c4, CHANGE c1 c5 BIGINT UNSIGNED AFTER c4"],
     "t1", [("c3", "INT"), ("c4", "INT"), ("c5", "BIGINT")], None),
]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("statements, table, columns, pk", MANUAL, ids=[f"manual{k}" for k in range(len(MANUAL))])
def test_manual_examples(statements, table, columns, pk, reader):
    catalog = Catalog(reader)
    for sql in statements:
        catalog.apply(sql, "d")
    d = catalog.tables[f"d.{table}"]
    assert [(c.name, c.type) for c in d.columns] == columns
    assert d.primary_key == pk


@pytest.mark.parametrize("reader", READERS)
def test_what_cannot_be_known_is_said_once(reader):
    """A ``*`` of a table created before the log: the columns are not known (the table is
    then not tracked); an expression's type: its name is, its type is the TABLE_MAP's."""
    catalog = Catalog(reader)
    catalog.apply("CREATE TABLE t2 SELECT * FROM before_the_log", "d")
    assert "d.t2" not in catalog.tables and len(catalog.notes) == 1 and "are not known" in catalog.notes[0]
    catalog.apply("CREATE TABLE t3 SELECT 1 + 1, 'x' AS two", "d")
    assert [c.name for c in catalog.tables["d.t3"].columns] == ["1 + 1", "two"]
    assert len(catalog.notes) == 1 and "'1 + 1', 'two'" in catalog.notes[0]


# -- the shared corpus -------------------------------------------------------------------
def _replay(path) -> tuple[int, list[str]]:
    """(DDL statements, warnings) of a file's DDL replayed as a read replays it."""
    tracker = SchemaTracker()
    n = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with BinlogFile(path) as f:
                for seg in f.segments():
                    for i in ddl_candidates(seg.src, seg.index).tolist():
                        tracker.scan(seg.src, seg.index.take(np.array([i])))
                        n += 1
        except vecbinlog.BinlogError:
            pass  # the files the corpus has broken on purpose: their DDL up to the break
    return n, [str(w.message) for w in caught if issubclass(w.category, vecbinlog.SchemaWarning)]


@pytest.mark.slow  # reads every file of the corpus
def test_corpus_ddl_is_understood():
    """Every CREATE / ALTER / RENAME / DROP / TRUNCATE of the corpus's 111 files is understood
    (before this reader: 0 of 309 statements were "not understood" either; the corpus has
    none of MariaDB's newer forms), with no note."""
    total, messages = 0, []
    for name in corpus_names():
        n, seen = _replay(corpus_path(name))
        total += n
        messages += seen
    assert messages == [] and total >= 300


def test_corpus_functional_index_hidden_column():
    """A MySQL 8.0.17 log (mysql-test's rpl_unfiltered_hidden_gcol): its TABLE_MAP has the
    hidden column of ``INDEX i((a+1))`` between ``a`` and the ``b`` added later, as MySQL
    names it; the DDL defines all three (a later server's TABLE_MAP, without it, fits too)."""
    path = corpus_path("blackbeam__rust_mysql_common/rpl_unfiltered_hidden_gcol.000001")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = vecbinlog.read_table(path, "test.t")
    assert [str(w.message) for w in caught if issubclass(w.category, vecbinlog.SchemaWarning)] == []
    assert t.column_names[:3] == ["a", "!hidden!i!0!0", "b"]
    catalog = Catalog()
    catalog.apply("CREATE TABLE t (a INT, INDEX i((a+1)))", "test")
    catalog.apply("ALTER TABLE t ADD COLUMN b TEXT", "test")
    assert [c.hidden for c in catalog.tables["test.t"].columns] == [False, True, False]


@pytest.mark.parametrize("reader", READERS)
def test_statements_read_as_text_name_their_tables(reader):
    """A statement that cannot be read still names its table (it is forgotten, and a CREATE
    starts a new lifetime); one about no table changes nothing."""
    catalog = Catalog(reader)
    catalog.apply("CREATE TABLE t (a INT)", "d")
    with pytest.raises(DdlError) as info:
        catalog.apply("ALTER TABLE t ADD COLUMN b INT AFTER nosuch", "d")
    assert info.value.table == "d.t" and "d.t" not in catalog.tables
    assert catalog.apply("CREATE USER u IDENTIFIED BY 'x'", "d") == ([], "d")
    assert catalog.apply("ANALYZE TABLE t", "d") == ([], "d")


# -- any text: read, or refused with a DdlError, never a crash ---------------------------
MARIADB_FORMS = [
    "CREATE TABLE k (a VARCHAR(1000) COMPRESSED, b BLOB COMPRESSED, c TEXT /*M!100301 COMPRESSED*/ CHARSET latin1)",
    ("CREATE TABLE v (x INT, rs TIMESTAMP(6) GENERATED ALWAYS AS ROW START, re TIMESTAMP(6) GENERATED ALWAYS AS ROW "
    "END, PERIOD FOR SYSTEM_TIME(rs, re), y INT WITHOUT SYSTEM VERSIONING) WITH SYSTEM VERSIONING"),
    "CREATE SEQUENCE s START WITH 1 INCREMENT BY 1 cache=10",
    "ALTER TABLE t1 ADD COLUMN (a INT, b INT), CONVERT TO CHARACTER SET latin1 COLLATE latin1_bin",
    ("CREATE TABLE p (a INT) PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS "
    "THAN MAXVALUE)"),
    "CREATE TABLE cs (c INT) SELECT a, b AS x, 1 + 1, t1.* FROM t1 JOIN t2 ON t1.id = t2.id WHERE 1 = 0",
    "ALTER IGNORE TABLE t1 DROP COLUMN IF EXISTS a, MODIFY b ENUM('x', 0x41, _latin1 b'01000010') FIRST",
    "RENAME TABLE t1 TO t3, t2 TO t1",
]


@given(st.sampled_from([s for case in MANUAL for s in case[0]] + MARIADB_FORMS), st.data())
@settings(max_examples=300, deadline=None)
def test_any_text_is_read_or_refused(sql, data):
    """Statements cut, with tokens dropped or repeated, or characters inserted: read, or a
    DdlError naming the table it was about, which is then forgotten; never another exception
    (a read would stop); and a table the statement does not name keeps its definition."""
    words = sql.split()
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(words)))
        action = data.draw(st.sampled_from(["cut", "drop", "repeat", "char"]))
        if action == "cut":
            words = words[:k]
        elif action == "drop" and k < len(words):
            del words[k]
        elif action == "repeat" and k < len(words):
            words.insert(k, words[k])
        elif action == "char":
            words.insert(k, data.draw(st.sampled_from(["(", ")", "'", "`", ",", ".", "=", "*", "AS", "SELECT"])))
    for reader in READERS:
        catalog = Catalog(reader)
        catalog.apply("CREATE TABLE t1 (id INT, a INT, b VARCHAR(3))", "d")
        catalog.apply("CREATE TABLE t9 (id INT UNSIGNED, v VARCHAR(3) CHARACTER SET latin1)", "d")
        before = catalog.tables["d.t9"]
        try:
            catalog.apply(" ".join(words), "d")
        except DdlError as exc:
            assert exc.table is None or exc.table not in catalog.tables
        assert catalog.tables["d.t9"] == before  # no statement names t9


@pytest.mark.parametrize("reader", READERS)
def test_statements_that_failed_after_a_drop(reader):
    """A statement logged with an error code for what it did before failing (MariaDB logs a
    failed CREATE OR REPLACE TABLE so, its table dropped; a DROP TABLE of a table and a missing
    one dropped the first): the table is dropped, a new lifetime starts; any other failed
    statement changes nothing."""
    catalog = Catalog(reader)
    for name in ("a", "b", "c"):
        catalog.apply(f"CREATE TABLE {name} (id INT)", "d")
    assert catalog.apply_failed("CREATE OR REPLACE TABLE a (id SERIAL CHECK (id > 0))", "d") == ["d.a"]
    assert catalog.apply_failed("DROP TABLE b, nosuch", "d") == ["d.b", "d.nosuch"]
    assert catalog.apply_failed("ALTER TABLE c ADD x INT", "d") == []
    assert sorted(catalog.tables) == ["d.c"] and catalog.lifetimes["d.a"] == 2


def test_corpus_ddl_after_a_client_comment():
    """The log keeps a statement as the client sent it: DBeaver writes ``/* ApplicationName=...
    */`` before its CREATE TABLE. The table is named by it (before: ``@1, @2, @3``)."""
    path = corpus_path("LeandroSousaCastro__kafka-connect/mysql-bin.000003")
    with vecbinlog.open(path) as log:
        creates = [i for i in log.events().column("info").to_pylist() if i and "CREATE TABLE `kafka-connect`.post" in i]
        t = log.read_table("kafka-connect.post")
    assert len(creates) == 1 and "/* ApplicationName=DBeaver" in creates[0]
    assert t.column_names[:3] == ["id", "message", "read"]  # as the statement defines them
    assert t.schema.field("message").type == pa.string()  # latin1 text, from DEFAULT CHARSET=latin1


def test_corpus_table_names_in_other_case():
    """A server with ``lower_case_table_names=1`` logs ``CREATE TABLE `MySqlCdc` (...)`` as
    written and the rows under ``mysqlcdc``: the rows are named by that CREATE TABLE (its
    columns as the file's statement lists them; before: ``@1`` to ``@22``)."""
    path = corpus_path("rusuly__MySqlCdc/mysql-bin.000001")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = vecbinlog.read_table(path, "test.mysqlcdc")
    assert [str(w.message) for w in caught if issubclass(w.category, vecbinlog.SchemaWarning)] == []
    assert t.column_names[:22] == [
        "Id", "TinyColumn", "ShortColumn", "Int24Column", "Int32Column", "LongColumn", "FloatColumn", "DoubleColumn",
        "DecimalColumn", "CharColumn", "VarcharColumn", "VarstringColumn", "JsonColumn", "BlobColumn", "BitColumn",
        "EnumColumn", "SetColumn", "YearColumn", "DateColumn", "DateTimeColumn", "TimeColumn", "TimestampColumn"]
    assert t.schema.field("EnumColumn").type == pa.dictionary(pa.uint16(), pa.string())
    assert set(t.column("EnumColumn").to_pylist()) <= {None, "Low", "Medium", "High"}
