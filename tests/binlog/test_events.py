"""events() and info() against what the MariaDB server itself says about its binlog."""

from __future__ import annotations

import pyarrow as pa
import pytest

import vecbinlog

from ..conftest import corpus_path
from ..support import builder

# The names SHOW BINLOG EVENTS uses (Log_event::get_type_str in MariaDB's sql/log_event.cc).
SERVER_NAMES = {
    "FORMAT_DESCRIPTION_EVENT": "Format_desc", "GTID_LIST_EVENT": "Gtid_list",
    "BINLOG_CHECKPOINT_EVENT": "Binlog_checkpoint", "GTID_EVENT": "Gtid", "QUERY_EVENT": "Query",
    "ANNOTATE_ROWS_EVENT": "Annotate_rows", "TABLE_MAP_EVENT": "Table_map",
    "WRITE_ROWS_EVENT_V1": "Write_rows_v1", "UPDATE_ROWS_EVENT_V1": "Update_rows_v1",
    "DELETE_ROWS_EVENT_V1": "Delete_rows_v1", "XID_EVENT": "Xid", "ROTATE_EVENT": "Rotate", "STOP_EVENT": "Stop",
    "INTVAR_EVENT": "Intvar", "USER_VAR_EVENT": "User var", "RAND_EVENT": "RAND", "XA_PREPARE_LOG_EVENT": "XA_prepare",
    "QUERY_COMPRESSED_EVENT": "Query_compressed", "WRITE_ROWS_COMPRESSED_EVENT_V1": "Write_rows_compressed_v1",
    "UPDATE_ROWS_COMPRESSED_EVENT_V1": "Update_rows_compressed_v1",
    "DELETE_ROWS_COMPRESSED_EVENT_V1": "Delete_rows_compressed_v1",
}

#: DOUBLE user variables around my_gcvt's choices between the 'f' and the 'e' format
DOUBLES = ["1/3e0", "0.1e0", "1e-5", "0.000123456789e0", "1e14", "1e15", "1e16", "123456789012345.6e0",
           "1234567890123456.7e0", "9007199254740993e0", "-2.5e0", "1e100", "1.7976931348623157e308", "5e-324",
           "2.2250738585072014e-308", "1.23456789012345678e-7", "1e-15", "1e-16", "1.5e-15", "-1e-15", "0e0",
           "-0e0", "0.1e0+0.2e0", "-123456789012345.6e0"]


def assert_same_listing(ours: list[dict], server: list[tuple]) -> None:
    """events() rows == SHOW BINLOG EVENTS rows, event by event, info included."""
    assert [(e["pos"], SERVER_NAMES.get(e["type"], e["type"])) for e in ours] == [(r[1], r[2]) for r in server]
    for e, (log_name, pos, etype, server_id, end_log_pos, text) in zip(ours, server):
        assert (e["file"], e["pos"], e["server_id"], e["end_log_pos"]) == (log_name, pos, server_id, end_log_pos)
        assert e["info"] == text, (pos, etype)


@pytest.mark.mariadb
def test_events_equal_show_binlog_events(mariadb_server):
    s = mariadb_server
    path = s.capture_binlog(
        "DROP DATABASE IF EXISTS ev", "CREATE DATABASE ev", "USE ev",
        "CREATE TABLE `we``ird` (id INT PRIMARY KEY, v VARCHAR(10))",
        "INSERT INTO `we``ird` VALUES (1, 'a'), (2, 'b')",
        "UPDATE `we``ird` SET v = 'c' WHERE id = 2",
        "BEGIN", "DELETE FROM `we``ird` WHERE id = 1", "INSERT INTO `we``ird` VALUES (3, 'd')", "COMMIT",
    )
    server = s.query(f"SHOW BINLOG EVENTS IN '{path.name}'")
    with vecbinlog.open(path) as log:
        ours = log.events().to_pylist()
        info = log.info()["files"][0]
    assert_same_listing(ours, server)
    assert any(e["info"] == "use `ev`; CREATE TABLE `we``ird` (id INT PRIMARY KEY, v VARCHAR(10))" for e in ours)
    assert sum(info["events"].values()) == len(server)
    assert info["rows_events_by_table"] == {"ev.we`ird": 4}
    assert info["server_version"] == s.query("SELECT @@version")[0][0]
    assert info["checksum"] == "CRC32"


@pytest.mark.mariadb
def test_every_event_type_equals_show_binlog_events(mariadb_server, mariadb_globals):
    """The info of statement-era events (INTVAR, RAND, USER_VAR of every type), GTIDs (standalone,
    BEGIN, XA), GTID_LIST, BINLOG_CHECKPOINT, ANNOTATE_ROWS, XA_PREPARE and MariaDB's compressed
    events, event by event, as the server lists them; and the GTID_LIST of the next file."""
    s = mariadb_server
    mariadb_globals(log_bin_compress="ON")  # statements and row images over 256 bytes are compressed
    long_comment = "x" * 300
    sql = [
        "DROP DATABASE IF EXISTS ev2", "CREATE DATABASE ev2", "USE ev2",
        f"CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(400), d DOUBLE) COMMENT '{long_comment}'",
        "SET SESSION binlog_format=STATEMENT",
        "INSERT INTO t (v) VALUES ('a')", "INSERT INTO t (v) VALUES (LAST_INSERT_ID())",
        "INSERT INTO t (d) VALUES (RAND())",
        "SET @s = 'héllo', @e = '', @i = -42, @u = CAST(18446744073709551615 AS UNSIGNED), @n = NULL, "
        "@b = _binary 'ab\\0', @l = CONVERT('zz' USING latin1), @m3 = CONVERT('abc' USING utf8mb3), "
        "@dec = -12345678901234567890.123456789, @dz = 0.000, @`we``ird` = 5",
        "INSERT INTO t (v) VALUES (CONCAT_WS(',', @s, @e, @i, @u, @n, @b, @l, @m3, @dec, @dz, @`we``ird`))",
        *[f"SET @r{k} = {v}" for k, v in enumerate(DOUBLES)],
        "INSERT INTO t (d) VALUES (" + " + ".join(f"@r{k}" for k in range(len(DOUBLES))) + ")",
        "SET SESSION binlog_format=ROW",
        "INSERT INTO t (v) VALUES (REPEAT('r', 390))", "UPDATE t SET v = REPEAT('s', 390) WHERE id = 1",
        "DELETE FROM t WHERE id = 1",
        "XA START 'zz\\\\', 'Q', 7", "INSERT INTO t (v) VALUES ('xa')", "XA END 'zz\\\\', 'Q', 7",
        "XA PREPARE 'zz\\\\', 'Q', 7", "XA COMMIT 'zz\\\\', 'Q', 7",
        "XA START 'one'", "INSERT INTO t (v) VALUES ('xa1')", "XA END 'one'", "XA COMMIT 'one' ONE PHASE",
    ]
    path = s.capture_binlog(*sql)
    nxt = s.current_binlog()
    for f in (path, nxt):
        server = s.query(f"SHOW BINLOG EVENTS IN '{f.name}'")
        with vecbinlog.open(f) as log:
            assert_same_listing(log.events().to_pylist(), server)
    types = {e[2] for e in s.query(f"SHOW BINLOG EVENTS IN '{path.name}'")}
    assert {"Intvar", "RAND", "User var", "Annotate_rows", "XA_prepare", "Query_compressed", "Binlog_checkpoint",
            "Write_rows_compressed_v1", "Update_rows_compressed_v1", "Delete_rows_compressed_v1"} <= types
    gtid_list = s.query(f"SHOW BINLOG EVENTS IN '{nxt.name}'")[1]
    assert gtid_list[2] == "Gtid_list" and gtid_list[5] != "[]"


def test_rotate_and_relay_log_with_two_format_descriptions():
    # A 5.0.58 relay log: the slave's FDE, a ROTATE to the master's file, the master's FDE.
    path = corpus_path("blackbeam__rust_mysql_common/bug33029-slave-relay-bin.000001")
    with vecbinlog.open(path) as log:
        ev = log.events().to_pylist()
        info = log.info()["files"][0]
    # what the vendor's decoder says about the same file
    import re
    import subprocess

    text = subprocess.run(["mariadb-binlog", "--no-defaults", str(path)], capture_output=True, check=True).stdout.decode()
    vendor_fdes = re.findall(r"Start: binlog v (\d+), server v (\S+)", text)
    vendor_rotates = re.findall(r"Rotate to (\S+)\s+pos: (\d+)", text)
    assert len(vendor_fdes) == 2 and vendor_rotates == [("master-bin.000001", "4")]
    fdes = [e for e in ev if e["type"] == "FORMAT_DESCRIPTION_EVENT"]
    assert [e["info"] for e in fdes] == [f"Server ver: {v}, Binlog ver: {b}" for b, v in vendor_fdes]
    rotates = [e["info"] for e in ev if e["type"] == "ROTATE_EVENT"]
    assert rotates == [f"{name};pos={pos}" for name, pos in vendor_rotates]
    assert info["format_descriptions"] == 2 and info["checksum"] == "NONE (server predates checksums)"


def test_unknown_vendor_events_are_counted_not_guessed():
    # Aurora's event type 100 (MANIFEST: "?(100)×1")
    with vecbinlog.open(corpus_path("osheroff__mysql-binlog-connector-java/mysql-bin.aurora-padding")) as log:
        info = log.info()["files"][0]
        assert info["events"]["UNKNOWN(100)"] == 1
        assert log.tables == []


@pytest.mark.parametrize("content,error", [
    (b"", vecbinlog.NotABinlogError),
    (b"hello world, not a binlog", vecbinlog.NotABinlogError),
    (b"\xfebin", vecbinlog.TruncatedError),
])
def test_not_a_binlog(tmp_path, content, error):
    p = tmp_path / "x.000001"
    p.write_bytes(content)
    with pytest.raises(error) as err:
        vecbinlog.open(p)
    assert err.value.path == str(p) and err.value.offset is not None


def test_binlog_v3_start_event_is_refused(tmp_path):
    # MySQL 4.x: START_EVENT_V3 (type 1) first, body = binlog_version 3, server version, created
    p = tmp_path / "old-bin.001"
    p.write_bytes(builder.MAGIC + builder.event(1, builder.start_v3_body("4.0.27-log"), checksum=False, at=4))
    with pytest.raises(vecbinlog.UnsupportedVersionError, match="v1/v3") as err:
        vecbinlog.open(p)
    assert err.value.offset == 4 and err.value.event_type == "START_EVENT_V3"


@pytest.mark.parametrize("name", [
    "blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",
    "apecloud__mysql-binlog-connector-rust/mysql-bin.000057",
    "LeandroSousaCastro__kafka-connect/mysql-bin.000003",
])
def test_mysql_event_infos_agree_with_the_change_log(name):
    """No MySQL server here: the info of MySQL's GTID, PREVIOUS_GTIDS and ROWS_QUERY events
    (Gtid_log_event::to_string, Gtid_set::to_string, Rows_query_log_event::pack_info) against
    what the change log and info() read from the same events by other code."""
    with vecbinlog.open(corpus_path(name), queries=True, rolled_back="keep") as log:
        ev = log.events().to_pylist()
        gtids = log.info()["files"][0]["gtids"]
        changes = pa.concat_tables(t.select(["_gtid", "_query"]) for t in log.read_all().values())
    infos = {t: [e["info"] for e in ev if e["type"] == t] for t in {e["type"] for e in ev}}
    gtid_infos = infos.get("GTID_LOG_EVENT", []) + infos.get("GTID_TAGGED_LOG_EVENT", [])
    assert len(gtid_infos) == gtids["count"]
    assert {f"SET @@SESSION.GTID_NEXT= '{g}'" for g in changes.column("_gtid").to_pylist() if g} <= set(gtid_infos)
    if gtids["count"]:
        assert gtid_infos[0] == f"SET @@SESSION.GTID_NEXT= '{gtids['first']}'"
        assert gtid_infos[-1] == f"SET @@SESSION.GTID_NEXT= '{gtids['last']}'"
    assert infos["PREVIOUS_GTIDS_LOG_EVENT"] == [gtids["previous"].replace(",", ",\n")]
    queries = {q for q in changes.column("_query").to_pylist() if q}
    rows_query = set(infos.get("ROWS_QUERY_LOG_EVENT", []))
    assert rows_query <= {f"# {q}" for q in queries}
    if "TRANSACTION_PAYLOAD_EVENT" not in infos:  # events() lists the events outside payloads only
        assert rows_query == {f"# {q}" for q in queries}
