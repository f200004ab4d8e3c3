"""events() and info() against what the MariaDB server itself says about its binlog."""

from __future__ import annotations

import pytest

import vecbinlog

from .conftest import corpus_path

# The names SHOW BINLOG EVENTS uses (Log_event::get_type_str in MariaDB's sql/log_event.cc).
SERVER_NAMES = {
    "FORMAT_DESCRIPTION_EVENT": "Format_desc", "GTID_LIST_EVENT": "Gtid_list",
    "BINLOG_CHECKPOINT_EVENT": "Binlog_checkpoint", "GTID_EVENT": "Gtid", "QUERY_EVENT": "Query",
    "ANNOTATE_ROWS_EVENT": "Annotate_rows", "TABLE_MAP_EVENT": "Table_map",
    "WRITE_ROWS_EVENT_V1": "Write_rows_v1", "UPDATE_ROWS_EVENT_V1": "Update_rows_v1",
    "DELETE_ROWS_EVENT_V1": "Delete_rows_v1", "XID_EVENT": "Xid", "ROTATE_EVENT": "Rotate", "STOP_EVENT": "Stop",
}
DESCRIBED = {"Format_desc", "Query", "Table_map", "Write_rows_v1", "Update_rows_v1", "Delete_rows_v1", "Xid", "Rotate"}


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
    assert len(ours) == len(server)
    for e, (log_name, pos, etype, server_id, end_log_pos, text) in zip(ours, server):
        assert (e["file"], e["pos"], SERVER_NAMES[e["type"]], e["server_id"], e["end_log_pos"]) == (
            log_name, pos, etype, server_id, end_log_pos)
        if etype in DESCRIBED:
            assert e["info"] == text, etype
    assert any(e["info"] == "use `ev`; CREATE TABLE `we``ird` (id INT PRIMARY KEY, v VARCHAR(10))" for e in ours)
    assert sum(info["events"].values()) == len(server)
    assert info["rows_events_by_table"] == {"ev.we`ird": 4}
    assert info["server_version"] == s.query("SELECT @@version")[0][0]
    assert info["checksum"] == "CRC32"


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
    import struct

    body = struct.pack("<H50sI", 3, b"4.0.27-log", 0)
    header = struct.pack("<IBIIIH", 0, 1, 1, 19 + len(body), 4 + 19 + len(body), 0)
    p = tmp_path / "old-bin.001"
    p.write_bytes(b"\xfebin" + header + body)
    with pytest.raises(vecbinlog.UnsupportedVersionError, match="v1/v3") as err:
        vecbinlog.open(p)
    assert err.value.offset == 4 and err.value.event_type == "START_EVENT_V3"
