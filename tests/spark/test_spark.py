"""The Spark data source and helpers (vecbinlog.spark) on a real local SparkSession.

What Spark returns is compared value by value with ``vecbinlog.read_table`` on the same
files (the decoder that tests/test_corpus.py and the MariaDB round trips check against the
servers), after the documented type mapping; the MariaDB table's values are also checked
against the SQL literals that made them. One SparkSession serves every test (the ``spark``
fixture, tests/support/fixtures.py).

Without pyspark these tests are skipped, except in CI (the ``CI`` environment variable),
where a missing pyspark is a failure.
"""

from __future__ import annotations

import json
import shutil
import warnings
from decimal import Decimal

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.splits import plan_splits

from ..conftest import DATA, corpus_path
from ..support.badtext import BINARY as BADTEXT_BINARY
from ..support.badtext import DB as BADTEXT_DB
from ..support.badtext import run_badtext
from ..support.fixtures import require_pyspark
from ..support.timed import at, files_spanning, gtid_window
from ..support.workloads import assert_phases, run_workload

require_pyspark()  # before vecbinlog.spark, which imports pyspark
from vecbinlog import spark as vspark  # noqa: E402

SAMPLE = DATA / "sample" / "mariadb-bin.000001"
#: pyspark 4.0's toArrow() leaves a socket to the JVM for the garbage collector
pytestmark = pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning")


# -- comparing -------------------------------------------------------------------------------
def same(expected, actual) -> bool:
    """A read_table value and the Spark value of the documented mapping hold the same value:
    uint64 -> decimal(20,0) (int == Decimal), decimal256 -> its decimal text, dictionary ->
    its string, everything else equal as Python values."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and expected.keys() == actual.keys() and all(
            same(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(map(same, expected, actual))
    if isinstance(expected, Decimal) and isinstance(actual, str):
        return Decimal(actual) == expected
    return expected == actual


def assert_same_rows(expected: pa.Table, actual: pa.Table, *, ordered: bool = True) -> None:
    assert actual.column_names == expected.column_names
    assert actual.num_rows == expected.num_rows
    exp, act = expected.to_pylist(), actual.to_pylist()
    if not ordered:
        key = lambda r: (r["_log_file"], r["_log_pos"], r["_event_row"], r["_change_type"])  # noqa: E731
        exp, act = sorted(exp, key=key), sorted(act, key=key)
    for i, (e, a) in enumerate(zip(exp, act)):
        bad = {k: (e[k], a[k]) for k in e if not same(e[k], a[k])}
        assert not bad, f"row {i}: (read_table, spark) differ: {bad}"


def read(spark, paths, table, **options):
    reader = spark.read.format("binlog")
    if table is not None:
        reader = reader.option("table", table)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(paths)


# -- without a SparkSession (the quick tier) -----------------------------------------------------
def test_the_data_source_called_as_spark_calls_it_reads_read_tables_rows():
    """The data source's schema, partitions and tasks called as Spark calls them, with no JVM:
    the sample's shop.orders, value by value read_table's after the type mapping; its key, as
    workload.sql declares it, marked in the schema (key_columns)."""
    source = vspark.BinlogDataSource({"path": str(SAMPLE), "table": "shop.orders"})
    schema = source.schema()
    reader = source.reader(schema)
    got = pa.Table.from_batches([b for part in reader.partitions() for b in reader.read(part)])
    expected = vecbinlog.read_table(SAMPLE, "shop.orders")
    assert schema.fieldNames() == expected.column_names and vspark.key_columns(schema) == ["id"]
    assert_same_rows(expected, got)


#: docs/spark.md's table of the type mapping, a row of each
DOCUMENTED_TYPES = [
    (pa.int16(), "smallint"), (pa.float32(), "float"), (pa.string(), "string"), (pa.date32(), "date"),
    (pa.uint8(), "smallint"), (pa.uint16(), "int"), (pa.uint32(), "bigint"), (pa.uint64(), "decimal(20,0)"),
    (pa.decimal128(10, 2), "decimal(10,2)"), (pa.decimal256(65, 30), "string"),
    (pa.timestamp("us", "UTC"), "timestamp"), (pa.timestamp("us"), "timestamp_ntz"),
    (pa.duration("us"), "interval day to second"), (pa.dictionary(pa.int8(), pa.string()), "string"),
    (pa.list_(pa.uint64()), "array<decimal(20,0)>"),
    (pa.struct([pa.field("srid", pa.uint32()), pa.field("wkb", pa.binary())]), "struct<srid:bigint,wkb:binary>"),
    (pa.large_string(), "string"), (pa.large_binary(), "binary"), (pa.large_list(pa.int32()), "array<int>"),
]


@pytest.mark.parametrize("arrow, mapped", DOCUMENTED_TYPES, ids=[str(t) for t, _ in DOCUMENTED_TYPES])
def test_types_map_as_documented(arrow, mapped):
    assert vspark.spark_type(arrow).simpleString() == mapped


# -- a MariaDB table of every type -----------------------------------------------------------
TYPES_DDL = """CREATE TABLE t (
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
  i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  f FLOAT, d DOUBLE, dec10 DECIMAL(10,2), dec65 DECIMAL(65,30), bt BIT(64), y YEAR,
  c CHAR(10), vc VARCHAR(50) CHARACTER SET utf8mb4, l1 VARCHAR(20) CHARACTER SET latin1, tx TEXT,
  bl BLOB, bn BINARY(4), vb VARBINARY(10),
  dt DATE, dtm DATETIME(6), ts TIMESTAMP(6) NULL, tm TIME(6),
  e ENUM('small','medium','large'), st SET('a','b','c'), j JSON,
  g GEOMETRY NULL, p POINT NULL, i6 INET6, u UUID
)"""
BIG_DEC = "12345678901234567890123456789012345.123456789012345678901234567890"
TYPES_ROWS = [
    "(1, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, "
    f"18446744073709551615, 1.5, 2.25, 12345678.90, '{BIG_DEC}', b'{'1' * 64}', 2155, "
    "'abc', 'héllo 🎁', 'Søren', 'text', x'00ff', x'01020304', x'aabb', '2024-02-29', "
    "'2024-02-29 23:59:59.123456', '2038-01-19 03:14:07.999999', '838:59:59', 'large', 'a,c', "
    "'{\"k\": [1, 2]}', ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POINT(3 4)'), '::1', "
    "'123e4567-e89b-12d3-a456-426614174000')",
    "(2, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, -1.5, -2.25, "
    "-12345678.90, '-0.000000000000000000000000000001', b'0', 1901, '', '', '', '', x'', x'00000000', x'', "
    "'1000-01-01', '1000-01-01 00:00:00', '1970-01-02 00:00:00', '-838:59:59.000001', 'small', '', '[]', "
    "NULL, NULL, '::', '00000000-0000-0000-0000-000000000000')",
    "(3" + ", NULL" * 34 + ")",
]
SHARDS = ["CREATE TABLE orders (id INT PRIMARY KEY, v VARCHAR(10))"]
#: the documented mapping, written out for this table
EXPECTED_SPARK_TYPES = {
    "ti": "tinyint", "tiu": "smallint", "si": "smallint", "siu": "int", "mi": "int", "miu": "bigint",
    "i": "int", "iu": "bigint", "bi": "bigint", "biu": "decimal(20,0)", "f": "float", "d": "double",
    "dec10": "decimal(10,2)", "dec65": "string", "bt": "decimal(20,0)", "y": "int", "c": "string",
    "vc": "string", "l1": "string", "tx": "string", "bl": "binary", "bn": "binary", "vb": "binary",
    "dt": "date", "dtm": "timestamp_ntz", "ts": "timestamp", "tm": "interval day to second",
    "e": "string", "st": "array<string>", "j": "string", "g": "struct<srid:bigint,wkb:binary>",
    "p": "struct<srid:bigint,wkb:binary>", "i6": "binary", "u": "binary",
    "_change_type": "string", "_commit_timestamp": "timestamp", "_log_file": "string", "_log_pos": "bigint",
    "_event_row": "int", "_absent": "array<string>", "_payload_offset": "bigint", "_gtid": "string",
    "_transaction_pos": "bigint", "_xid": "decimal(20,0)", "_outcome": "string", "_schema_version": "int",
    "_incarnation": "int",
}


@pytest.fixture(scope="module")
def mariadb_files(mariadb_server):
    """Two binlog files: every type, in many transactions, and two same-shaped shard tables."""
    s = mariadb_server
    first = s.capture_binlog(
        "DROP DATABASE IF EXISTS spark_types", "CREATE DATABASE spark_types", "USE spark_types", TYPES_DDL,
        *(f"INSERT INTO t VALUES {row}" for row in TYPES_ROWS),
        "UPDATE t SET vc = 'changed', biu = biu - 1 WHERE id = 1",
        "DROP DATABASE IF EXISTS shard_a", "CREATE DATABASE shard_a", "USE shard_a", *SHARDS,
        "INSERT INTO orders VALUES (1, 'a1'), (2, 'a2')",
        "DROP DATABASE IF EXISTS shard_b", "CREATE DATABASE shard_b", "USE shard_b", *SHARDS,
        "INSERT INTO orders VALUES (1, 'b1')",
    )
    second = s.current_binlog()  # the file right after the first: they chain (ROTATE)
    s.execute(
        "USE spark_types",
        "BEGIN", "INSERT INTO t (id, vc, biu) VALUES (4, 'four', 4)", "INSERT INTO t (id, vc) VALUES (5, 'five')", "COMMIT",
        "DELETE FROM t WHERE id = 2",
        "UPDATE shard_b.orders SET v = 'b1!'",
        *(f"INSERT INTO t (id, i) VALUES ({k}, {k})" for k in range(10, 30)),
    )
    s.flush_binary_logs()
    return [first, second]


@pytest.mark.mariadb
def test_every_type_equals_read_table(spark, mariadb_files):
    paths = [str(p) for p in mariadb_files]
    df = read(spark, ",".join(paths), "spark_types.t")
    assert {f.name: f.dataType.simpleString() for f in df.schema.fields if f.name != "id"} == EXPECTED_SPARK_TYPES
    got = df.toArrow()
    expected = vecbinlog.read_table(paths, "spark_types.t")
    assert expected.num_rows == 3 + 2 + 2 + 1 + 20
    assert_same_rows(expected, got)
    # the values the SQL wrote, where the mapping changes the type
    first = got.slice(0, 1).to_pylist()[0]
    assert first["biu"] == Decimal(18446744073709551615) and first["bt"] == Decimal(2**64 - 1)
    assert first["dec65"] == BIG_DEC
    assert first["tiu"] == 255 and first["iu"] == 4294967295 and first["y"] == 2155
    assert first["e"] == "large" and first["st"] == ["a", "c"]
    second = got.slice(1, 1).to_pylist()[0]
    assert second["dec65"] == "-0.000000000000000000000000000001"
    assert second["tm"] == -(pa.scalar(838 * 3600 + 59 * 60 + 59, pa.duration("s")).as_py()) - pa.scalar(
        1, pa.duration("us")).as_py()


@pytest.mark.mariadb
def test_tiny_splits_give_the_same_rows_as_one(spark, tmp_path, mariadb_files):
    for p in mariadb_files:
        shutil.copy(p, tmp_path / p.name)
    glob = str(tmp_path / "*-bin.*")
    one = read(spark, glob, "spark_types.t", split_bytes="1g")
    many = read(spark, glob, "spark_types.t", split_bytes="1", batch_rows="2")  # and batches of 2 rows
    assert one.rdd.getNumPartitions() == 1
    # the first file's transactions (DDL and INSERTs included) and the second's: over 20 splits
    assert many.rdd.getNumPartitions() > 20
    expected = vecbinlog.read_table([str(p) for p in mariadb_files], "spark_types.t")
    assert_same_rows(expected, one.toArrow())
    assert_same_rows(expected, many.toArrow())


@pytest.mark.mariadb
def test_shards_by_glob_get_a_table_column(spark, mariadb_files):
    paths = [str(p) for p in mariadb_files]
    got = read(spark, paths, "shard_*.orders").toArrow()
    assert got.column_names[-1] == "_table"
    for name in ("shard_a.orders", "shard_b.orders"):
        mine = got.filter(pa.compute.equal(got.column("_table"), name)).drop_columns(["_table"])
        assert_same_rows(vecbinlog.read_table(paths, name), mine)


@pytest.mark.mariadb
def test_without_table_option_the_tables_are_listed(spark, mariadb_files):
    with pytest.raises(Exception, match=r"shard_a\.orders.*shard_b\.orders|choose with"):
        read(spark, str(mariadb_files[0]), None).schema


@pytest.mark.mariadb
def test_helpers_map_and_apply_in_arrow(spark, mariadb_files):
    paths = [str(p) for p in mariadb_files]
    expected = vecbinlog.read_table(paths, "spark_types.t")
    splits = vspark.splits_dataframe(spark, paths, split_bytes=4096)
    planned = splits.toArrow().sort_by([("file", "ascending"), ("start", "ascending")]).to_pylist()
    assert [(r["file"], r["start"], r["stop"]) for r in planned] == [
        (s.path, s.start, s.stop) for s in plan_splits(paths, 4096)
    ]
    assert len(planned) > len(paths)
    assert_same_rows(expected, vspark.map_splits(splits, "spark_types.t").toArrow(), ordered=False)
    applied = vspark.apply_splits(splits, "spark_types.t").toArrow()
    assert_same_rows(expected, applied, ordered=False)
    # within a file, apply_splits keeps log order
    for name in {r["_log_file"] for r in applied.to_pylist()}:
        pos = [r["_log_pos"] for r in applied.to_pylist() if r["_log_file"] == name]
        assert pos == sorted(pos)


def test_sample_and_filters(spark):
    expected = vecbinlog.read_table(SAMPLE, "shop.orders", change_types=["insert", "delete"])
    got = read(spark, str(SAMPLE), "shop.orders", change_types="insert,delete").toArrow()
    assert_same_rows(expected, got)
    assert [r["_change_type"] for r in got.to_pylist()] == ["insert"] * 4 + ["delete"]


def test_columns_and_metadata_options(spark):
    """The columns option: the DataFrame has those columns, in that order, with the values of
    mariadb-binlog's listing (as read_table gives them); metadata=false: the table's own only."""
    expected = vecbinlog.read_table(SAMPLE, "shop.orders", columns=["note", "id", "_change_type"])
    df = read(spark, str(SAMPLE), "shop.orders", columns="note,id,_change_type")
    assert df.columns == ["note", "id", "_change_type"]
    assert_same_rows(expected, df.toArrow())
    assert read(spark, str(SAMPLE), "shop.orders", metadata="false").columns == [
        "id", "customer_id", "quantity", "price", "note"]
    with pytest.raises(Exception, match="option columns='id,nope': shop.orders has no column 'nope'"):
        read(spark, str(SAMPLE), "shop.orders", columns="id,nope").collect()


def test_queries_and_rolled_back_options(spark):
    """The statements (MariaDB ANNOTATE_ROWS, printed by mariadb-binlog as '#Q>') come through Spark."""
    expected = vecbinlog.read_table(SAMPLE, "shop.orders", queries=True, rolled_back="keep")
    got = read(spark, str(SAMPLE), "shop.orders", queries="true", rolled_back="keep").toArrow()
    assert_same_rows(expected, got)
    printed = [line[4:] for line in (SAMPLE.parent / "mariadb-binlog-vv.txt").read_text().splitlines()
               if line.startswith("#Q> ")]
    assert set(got.column("_query").to_pylist()) <= set(printed)
    assert any("orders" in q for q in got.column("_query").to_pylist())


def test_readme_apply_in_arrow_example(spark):
    """The README's example: map_splits, then an Arrow function per file; counts and sums as read_table's."""
    orders = vspark.map_splits(vspark.splits_dataframe(spark, str(SAMPLE), split_bytes=1024), "shop.orders")
    assert orders.rdd.getNumPartitions() == 3

    def summary(t: pa.Table) -> pa.Table:
        return (t.group_by(["_log_file", "_change_type"])
                 .aggregate([("_log_pos", "count"), ("quantity", "sum")])
                 .rename_columns(["_log_file", "_change_type", "rows", "quantity"]))

    got = orders.groupBy("_log_file").applyInArrow(
        summary, "_log_file string, _change_type string, rows long, quantity long").toArrow().to_pylist()
    expected = vecbinlog.read_table(SAMPLE, "shop.orders").to_pylist()
    assert {r["_change_type"]: (r["rows"], r["quantity"]) for r in got} == {
        c: (sum(1 for e in expected if e["_change_type"] == c), sum(e["quantity"] for e in expected if e["_change_type"] == c))
        for c in {e["_change_type"] for e in expected}
    }


# -- corpus files: the types other servers write ----------------------------------------------
CORPUS_FILES = [
    "osheroff__mysql-binlog-connector-java/mysql-bin.sakila",  # 5.5: old temporals, YEAR, ENUM/SET without labels
    "osheroff__mysql-binlog-connector-java/mysql-bin.checksum-crc32",  # FLOAT/DOUBLE, DATETIME2, DECIMAL
    "rusuly__MySqlCdc/mysql-bin.000001",  # BIT, YEAR, JSON, FLOAT
    "blackbeam__rust_mysql_common/json-opaque.binlog",  # MySQL binary JSON
    "blackbeam__rust_mysql_common/vector.binlog",  # VECTOR: list<float32>
    "blackbeam__rust_mysql_common/mysql_type_bit.000001",
    "blackbeam__rust_mysql_common/mysql-enum-string-set.000001",  # ENUM/SET with labels
    "blackbeam__rust_mysql_common/minimal_row_metadata.000001",  # UNSIGNED from SIGNEDNESS
    "blackbeam__rust_mysql_common/time_issue.000001",  # TIME
    "blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",
    "blackbeam__rust_mysql_common/update-partial-row.binlog",  # partial images: _absent
    "blackbeam__rust_mysql_common/mariadb-bin.000001",
]


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_tables_equal_read_table(spark, name):
    path = str(corpus_path(name))
    with vecbinlog.open(path) as log:
        tables = log.tables
    assert tables
    for table in tables:
        expected = vecbinlog.read_table(path, table)
        assert_same_rows(expected, read(spark, path, table).toArrow())


@pytest.mark.mariadb
def test_no_log_binlog_named_by_its_ddl(spark, mariadb_server, mariadb_globals):
    """A NO_LOG binlog, split in tiny splits: every task knows the DDL before its split, so the
    names and the UNSIGNED type come from the CREATE TABLE as in read_table."""
    mariadb_globals(binlog_row_metadata="NO_LOG")
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS spark_nolog", "CREATE DATABASE spark_nolog")
    path = s.capture_binlog(
        "CREATE TABLE t (id INT UNSIGNED PRIMARY KEY, v VARCHAR(10) CHARACTER SET utf8mb4)",
        *(f"INSERT INTO t VALUES ({4000000000 + k}, 'v{k}')" for k in range(5)), database="spark_nolog")
    expected = vecbinlog.read_table(path, "spark_nolog.t").drop_columns(["_schema_version"])
    got = read(spark, str(path), "spark_nolog.t", split_bytes="1").drop("_schema_version").toArrow()
    assert got.column_names[:2] == ["id", "v"]
    assert got.column("id").to_pylist() == [4000000000 + k for k in range(5)]
    assert_same_rows(expected.cast(pa.schema([f.with_type(got.schema.field(f.name).type) for f in expected.schema])), got)


@pytest.mark.mariadb
def test_recreated_and_altered_table_equals_read_table(spark, mariadb_server):
    """A table dropped and created again with other types, CREATE OR REPLACE, an ALTER ... MODIFY
    no Arrow type widens, ADD/DROP/CHANGE/RENAME COLUMN (tests/test_table_changes.py): Spark's
    schema is read_table's over every layout, and its rows are read_table's, in one split or in
    splits of every transaction (each told where the DDL and the layouts stand at its start);
    replayed, they are the server's SELECT after every phase."""
    run = run_workload(mariadb_server, "NO_LOG")
    paths = [str(p) for p in run["files"]]
    with vecbinlog.open(paths) as log:
        expected = log.read_table(run["table"])
        plan = log.plans()[run["table"]]
    assert expected.column_names[:3] == ["id", "d2", "a2"] and "a@0" in expected.column_names
    for split_bytes in ("1g", "1"):
        df = read(spark, ",".join(paths), run["table"], split_bytes=split_bytes)
        assert df.columns == expected.column_names
        got = df.toArrow()
        assert_same_rows(expected, got)
    assert_phases(got.to_pylist(), plan, run)
    splits = vspark.splits_dataframe(spark, paths, split_bytes=1)
    assert_same_rows(expected, vspark.map_splits(splits, run["table"]).toArrow(), ordered=False)
    assert_same_rows(expected, vspark.apply_splits(splits, run["table"]).toArrow(), ordered=False)


@pytest.mark.mariadb
def test_index_option_equals_read_table(spark, mariadb_server, tmp_path):
    """.option("index", ...): the schema and the splits come from the archive index (issue 36);
    the rows are read_table's, every metadata column included, in one split or one per
    transaction, for the recreated and altered table of the table-changes workload; files not in
    the index are an error naming the index."""
    run = run_workload(mariadb_server, "NO_LOG")
    paths = [str(p) for p in run["files"]]
    vecbinlog.build_index(paths, tmp_path / "index", processes=1)
    expected = vecbinlog.read_table(paths, run["table"])
    for split_bytes in ("1g", "1"):
        df = read(spark, ",".join(paths), run["table"], split_bytes=split_bytes, index=str(tmp_path / "index"))
        assert df.columns == expected.column_names
        assert_same_rows(expected, df.toArrow())
    with pytest.raises(Exception, match="not in the index"):
        read(spark, ",".join(paths), run["table"], index=str(tmp_path / "elsewhere")).columns


@pytest.mark.mariadb
@pytest.mark.parametrize("window", [(500, 1500), (150, None), (None, 150), (500, 900)],
                         ids=["second-only", "since-inside-first", "until-inside-first", "none"])
def test_index_option_with_since_until_plans_only_those_files(spark, timed, window):
    """.option("index") with since/until: the reader plans only the files whose rows may be in
    them (tests/test_index_bounds.py's archive: its times set by SET TIMESTAMP), and the rows are
    read_table's with the same bounds; a window in no file plans nothing and reads nothing."""
    from vecbinlog.spark.source import BinlogDataSource

    files, location = timed
    since, until = window
    bounds = {k: at(v).isoformat() for k, v in (("since", since), ("until", until)) if v is not None}
    options = {"table": "tb.a", "index": str(location), "split_bytes": "1", **bounds}
    source = BinlogDataSource({"path": ",".join(files), **options})
    splits = [s for p in source.reader(source.schema()).partitions() for s in p.value]
    assert sorted({files.index(s.path) for s in splits}) == files_spanning(since, until)
    expected = vecbinlog.read_table(files, "tb.a", **{k: at(v) for k, v in (("since", since), ("until", until))
                                                       if v is not None})
    assert_same_rows(expected, read(spark, ",".join(files), "tb.a", **{k: v for k, v in options.items()
                                                                        if k != "table"}).toArrow())


@pytest.mark.mariadb
def test_index_option_with_gtids_plans_only_the_files_that_may_hold_them(spark, timed):
    """.option("index") with gtids (the last file's last transaction, from the server's listing):
    the reader plans that file only; the rows are read_table's with the set."""
    from vecbinlog.spark.source import BinlogDataSource

    files, location = timed
    wanted = gtid_window(2, -1, -1)
    options = {"index": str(location), "split_bytes": "1", "gtids": wanted}
    source = BinlogDataSource({"path": ",".join(files), "table": "tb.b", **options})
    splits = [s for p in source.reader(source.schema()).partitions() for s in p.value]
    assert {s.path for s in splits} == {files[2]}
    expected = vecbinlog.read_table(files, "tb.b", gtids=wanted)
    assert expected.column("id").to_pylist() == [2]
    assert_same_rows(expected, read(spark, ",".join(files), "tb.b", **options).toArrow())


def test_a_large_archive_without_an_index_warns(monkeypatch, tmp_path):
    """Planning a batch read walks the archive on the driver: above INDEX_ADVISED_BYTES (set
    here under the sample's 3 284 bytes) an ArchiveIndexWarning says how to build an index;
    with the index given, nothing is said."""
    import warnings

    from vecbinlog.spark import source as vsource

    monkeypatch.setattr(vsource, "INDEX_ADVISED_BYTES", 1000)
    options = {"path": str(SAMPLE), "table": "shop.orders"}
    plain = vsource.BinlogDataSource(options)
    with pytest.warns(vecbinlog.ArchiveIndexWarning, match=r"planning walked 3,280 bytes .*option\('index'"):
        plain.reader(plain.schema()).partitions()
    vecbinlog.build_index(str(SAMPLE), tmp_path, processes=1)
    indexed = vsource.BinlogDataSource({**options, "index": str(tmp_path)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", vecbinlog.ArchiveIndexWarning)
        indexed.reader(indexed.schema()).partitions()


def test_build_index_with_spark_tasks(spark, tmp_path):
    """vecbinlog.spark.build_index: a task per file writes what vecbinlog.build_index writes (the
    same rows), a second run has nothing to do, and a read with the index is read_table's."""
    import pyarrow.parquet as pq

    from vecbinlog.index import GATHERED_NAME

    folder = tmp_path / "archive"
    folder.mkdir()
    names = [f"mariadb-bin.00000{k}" for k in (1, 2, 3)]
    for n in names:
        shutil.copy(SAMPLE, folder / n)
    by_spark, by_pool = tmp_path / "spark-index", tmp_path / "pool-index"
    first = vspark.build_index(spark, str(folder), str(by_spark))
    assert (first.indexed, first.skipped, sorted(first.files)) == (3, 0, names)
    assert vspark.build_index(spark, str(folder), str(by_spark)).skipped == 3
    vecbinlog.build_index(str(folder), str(by_pool), processes=1)
    assert pq.read_table(by_spark / GATHERED_NAME).to_pylist() == pq.read_table(by_pool / GATHERED_NAME).to_pylist()
    with pytest.warns(vecbinlog.BinlogSetWarning):  # copies of one file: each rotates to the file after the sample
        expected = vecbinlog.read_table([str(folder / n) for n in names], "shop.orders")
    got = read(spark, str(folder / "mariadb-bin.*"), "shop.orders", index=str(by_spark)).toArrow()
    assert_same_rows(expected, got)


def test_build_index_of_a_huge_file_in_ranges_of_spark_tasks(spark, tmp_path):
    """vecbinlog.spark.build_index with range_bytes: a 1.4 MB corpus file indexed by 22 tasks,
    one per range of 64 KiB, their summaries joined on the driver: the index one walk of the
    file gives, field by field."""
    import pyarrow.parquet as pq

    path = corpus_path("osheroff__mysql-binlog-connector-java/mysql-bin.sakila")
    result = vspark.build_index(spark, str(path), str(tmp_path / "spark"), range_bytes=1 << 16)
    assert (result.indexed, result.ranged, result.bytes) == (1, 1, path.stat().st_size)
    vecbinlog.build_index(str(path), tmp_path / "whole", processes=1, range_bytes=None)
    name = path.name + ".parquet"
    assert pq.read_table(tmp_path / "spark" / name).to_pylist() == pq.read_table(tmp_path / "whole" / name).to_pylist()


@pytest.mark.mariadb
def test_a_schema_given_by_the_user(spark, mariadb_server, tmp_path):
    """spark.read.schema(...) (issue 36): its columns are read, others left out, a column the
    table never had is null, a type that holds the values widens them (INT as BIGINT); a type
    that does not fit is an error naming the column and the file and offset of the first row
    whose value does not fit (read_table's rows say which)."""
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    run = run_workload(mariadb_server, "FULL")
    paths = ",".join(str(p) for p in run["files"])
    expected = vecbinlog.read_table(run["files"], run["table"]).select(["id", "note", "_log_file", "_log_pos",
                                                                         "_change_type"])
    given = StructType([StructField("id", LongType()), StructField("note", StringType()),
                        StructField("never", StringType()), StructField("_log_file", StringType()),
                        StructField("_log_pos", LongType()), StructField("_change_type", StringType())])
    df = spark.read.format("binlog").schema(given).option("table", run["table"]).option("split_bytes", "1").load(paths)
    got = df.toArrow()
    assert got.column_names == given.fieldNames()
    assert got.column("never").null_count == got.num_rows == expected.num_rows
    assert sorted(map(tuple, (r.values() for r in got.drop_columns(["never"]).to_pylist()))) == sorted(
        map(tuple, (r.values() for r in expected.to_pylist())))
    bad = StructType([StructField("id", IntegerType()), StructField("note", IntegerType())])
    first = next(r for r in expected.to_pylist() if r["note"] is not None and not r["note"].lstrip("-").isdigit())
    with pytest.raises(Exception, match=f"column 'note' of type string cannot be cast to int32 at "
                                        f"{first['_log_file']}:{first['_log_pos']}, row 0 of its event"):
        spark.read.format("binlog").schema(bad).option("table", run["table"]).option("split_bytes", "1g").load(
            paths).toArrow()


@pytest.mark.mariadb
def test_text_not_valid_in_its_charset(spark, mariadb_server):
    """The invalid-text workload (tests/support/badtext.py, tests/test_invalid_text_layouts.py):
    sjis and ujis columns with values Python's codec refuses from a later layout on, columns
    whose charset an ALTER changes between sjis and utf8mb4. The schema is fixed before a row
    is decoded (text for those columns), so a split whose batch holds such a value is an error
    naming the table, the column and the charset, never bytes of sjis passed off as UTF-8;
    charsets= naming those columns binary gives read_table's rows, the same bytes in every
    row (read_table gives them as binary too)."""
    run = run_badtext(mariadb_server)
    paths = ",".join(str(p) for p in run["files"])
    table = f"{BADTEXT_DB}.r"
    with pytest.raises(Exception, match=rf"UnsupportedError: .*{table}: column '\w' \((sjis|ujis)\) holds values whose "
                                        r"bytes are not valid (sjis|ujis)"):
        read(spark, paths, table).toArrow()
    binary = json.dumps({table: {n: "binary" for n in sorted(BADTEXT_BINARY)}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.DecodeWarning)
        expected = vecbinlog.read_table(run["files"], table)
    for split_bytes in ("1g", "1"):
        got = read(spark, paths, table, charsets=binary, split_bytes=split_bytes).toArrow()
        assert {n: got.schema.field(n).type for n in BADTEXT_BINARY} == {n: pa.binary() for n in BADTEXT_BINARY}
        assert_same_rows(expected, got, ordered=split_bytes == "1g")
