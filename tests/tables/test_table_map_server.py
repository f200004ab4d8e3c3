"""TABLE_MAP optional metadata against what the server says about the same tables
(information_schema), and against values the corpus files' origins document."""

from __future__ import annotations

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.constants import ColumnType as T

from ..conftest import corpus_path


@pytest.mark.mariadb
def test_full_metadata_equals_information_schema(mariadb_server):
    s = mariadb_server
    path = s.capture_binlog(
        "DROP DATABASE IF EXISTS tm", "CREATE DATABASE tm", "USE tm",
        "CREATE TABLE meta (id INT UNSIGNED NOT NULL, name VARCHAR(100) CHARACTER SET latin1 NOT NULL,"
        " e ENUM('small','médium','large') CHARACTER SET utf8mb4, s SET('a','b','c','d') CHARACTER SET latin1,"
        " g POINT NULL, big BIGINT NULL, txt TEXT CHARACTER SET utf8mb4, bin VARBINARY(10),"
        " PRIMARY KEY (name(10), id))",
        "INSERT INTO meta VALUES (1, 'x', 'médium', 'a,c', ST_GeomFromText('POINT(1 2)'), -5, 't', X'00')",
    )
    with vecbinlog.open(path) as log:
        (tm,) = log.table_maps("tm.meta")
    cols = s.query("SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLLATION_NAME FROM information_schema.COLUMNS "
                   "WHERE TABLE_SCHEMA='tm' AND TABLE_NAME='meta' ORDER BY ORDINAL_POSITION")
    coll_id = {name: i for name, i in s.query("SELECT COLLATION_NAME, ID FROM information_schema.COLLATIONS")}
    assert [c.name for c in tm.columns] == [c[0] for c in cols]
    assert [c.nullable for c in tm.columns] == [c[2] == "YES" for c in cols]
    for spec, (name, ctype, _, collation) in zip(tm.columns, cols):
        if spec.real_type in (T.MYSQL_TYPE_LONG, T.MYSQL_TYPE_LONGLONG):
            assert spec.unsigned == ("unsigned" in ctype), name
        if collation is not None:
            assert spec.collation == coll_id[collation], name
    # ENUM/SET labels: information_schema's COLUMN_TYPE spells them out
    assert tm.columns[2].real_type == T.MYSQL_TYPE_ENUM
    assert [v.decode("utf-8") for v in tm.columns[2].enum_values] == ["small", "médium", "large"]
    assert cols[2][1] == "enum('small','médium','large')"
    assert tm.columns[3].real_type == T.MYSQL_TYPE_SET
    assert [v.decode("latin-1") for v in tm.columns[3].set_values] == ["a", "b", "c", "d"]
    # the primary key with its prefix, from information_schema.STATISTICS
    pk = s.query("SELECT COLUMN_NAME, SUB_PART FROM information_schema.STATISTICS WHERE TABLE_SCHEMA='tm' "
                 "AND TABLE_NAME='meta' AND INDEX_NAME='PRIMARY' ORDER BY SEQ_IN_INDEX")
    names = [c.name for c in tm.columns]
    assert [names[i] for i in tm.primary_key] == [p[0] for p in pk]
    assert list(tm.primary_key_prefixes) == [p[1] or 0 for p in pk]
    # geometry subtype: POINT is 1 in GEOMETRY_TYPE (Field::geometry_type)
    assert tm.columns[4].real_type == T.MYSQL_TYPE_GEOMETRY and tm.columns[4].geometry_type == 1


def test_enum_set_file_documented_values():
    # blackbeam/rust_mysql_common's binlog_file test states these row values for this file.
    long = "0123456789" * 10
    longer = "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456780123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456780123456789012345678901234567890123456789"  # noqa: E501 (as the peer's test writes it)
    with vecbinlog.open(corpus_path("blackbeam__rust_mysql_common/mysql-enum-string-set.000001")) as log:
        t = log.read_table("mysql.t")
        (tm,) = log.table_maps("mysql.t")
    rows = t.to_pylist()
    assert [r["_change_type"] for r in rows] == ["insert", "update_preimage", "update_postimage", "delete"]
    names = t.schema.names[:5]
    first = [rows[0][n] for n in names]
    assert first[0] == long and first[1] == longer and first[4] == "0123456789"
    enum = [v.decode() for v in tm.columns[2].enum_values]
    sets = [v.decode() for v in tm.columns[3].set_values]
    assert first[2] == enum[1 - 1] and first[3] == [sets[0], sets[2]]  # ENUM index 1, SET bits 0 and 2
    after = [rows[2][n] for n in names]
    assert after[:4] == ["field1", "field_2", enum[2 - 1], [sets[1], sets[3]]]  # index 2, bits 1 and 3
    assert [rows[3][n] for n in names] == after
    assert [c.real_type for c in tm.columns][2:4] == [T.MYSQL_TYPE_ENUM, T.MYSQL_TYPE_SET]
    assert after[4] == longer


def test_bit_file_documented_values():
    # rust_mysql_common: the one row is (BIT b'100', 'foo', BIT b'100000'); 'foo' is utf8 text
    with vecbinlog.open(corpus_path("blackbeam__rust_mysql_common/mysql_type_bit.000001")) as log:
        (row,) = log.read_table("mysql.foo").to_pylist()
        (tm,) = log.table_maps("mysql.foo")
    names = tm.column_names
    assert [row[n] for n in names] == [0b100, "foo", 0b100000]
    # MANIFEST: "column types: BIT×2, BLOB×1 ... COLUMN_NAME, COLUMN_VISIBILITY, DEFAULT_CHARSET"
    assert [c.real_type for c in tm.columns] == [T.MYSQL_TYPE_BIT, T.MYSQL_TYPE_BLOB, T.MYSQL_TYPE_BIT]
    assert [c.visible for c in tm.columns] == [True, True, True]


@pytest.mark.mariadb
def test_layout_change_mid_log(mariadb_server):
    s = mariadb_server
    path = s.capture_binlog(
        "DROP DATABASE IF EXISTS lc", "CREATE DATABASE lc", "USE lc",
        "CREATE TABLE t (id INT PRIMARY KEY, a INT)",
        "INSERT INTO t VALUES (1, 10), (2, 20)",
        "ALTER TABLE t ADD COLUMN b VARCHAR(10) CHARACTER SET utf8mb4 AFTER id",
        "INSERT INTO t VALUES (3, 'x', 30)",
        "CREATE TABLE u (id INT PRIMARY KEY, a INT)",
        "INSERT INTO u VALUES (1, 10)",
        "ALTER TABLE u MODIFY a VARCHAR(10) CHARACTER SET utf8mb4",
        "INSERT INTO u VALUES (2, 'twenty')",
    )
    with vecbinlog.open(path) as log:
        assert len(log.table_maps("lc.t")) == 2
        t = log.read_table("lc.t")
        assert t.select(["id", "a", "b"]).to_pylist() == [
            {"id": 1, "a": 10, "b": None}, {"id": 2, "a": 20, "b": None}, {"id": 3, "a": 30, "b": "x"}]
        # INT then VARCHAR: no Arrow type holds both exactly, so the INT is kept apart as a@0
        u = log.read_table("lc.u")
        assert u.select(["id", "a", "a@0"]).to_pylist() == [
            {"id": 1, "a": None, "a@0": 10}, {"id": 2, "a": "twenty", "a@0": None}]
        assert (u.schema.field("a").type, u.schema.field("a@0").type) == (pa.string(), pa.int32())
        batches = list(log.iter_batches("lc.u"))
        assert [b.column("a").to_pylist() for b in batches] == [[10], ["twenty"]]


def test_vector_file():
    # MySQL 9.0.1; the file's own DDL says VECTOR(3) for foo, VECTOR(2) and VECTOR(4) for bar
    import numpy as np
    import pyarrow as pa

    with vecbinlog.open(corpus_path("blackbeam__rust_mysql_common/vector.binlog")) as log:
        ddl = [e["info"] for e in log.events().to_pylist() if e["type"] == "QUERY_EVENT"]
        assert "use `dtb`; CREATE TABLE foo(id SERIAL, vector_column VECTOR(3) NOT NULL)" in ddl
        foo, bar = log.read_table("dtb.foo"), log.read_table("dtb.bar")
    dims = {(t, c): int(tab.schema.field(c).metadata[b"mysql_vector_dimensionality"])
            for t, tab, cols in (("foo", foo, ["vector_column"]), ("bar", bar, ["vector_column", "vector_column2"]))
            for c in cols}
    assert dims == {("foo", "vector_column"): 3, ("bar", "vector_column"): 2, ("bar", "vector_column2"): 4}
    assert {foo.schema.field("vector_column").type, bar.schema.field("vector_column2").type} == {pa.list_(pa.float32())}
    assert [len(v) for v in bar.column("vector_column2").to_pylist() if v is not None] == [4] * bar.num_rows
    assert foo.column("vector_column")[0].as_py() == [float(np.float32(x)) for x in (1.1, 2.2, 3.3)]
    assert foo.column("id").type == pa.uint64()  # SERIAL = BIGINT UNSIGNED
