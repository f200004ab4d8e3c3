"""Checks of the reference decoder (tests/support/reference.py) against
independent truths:

1. the corpus MANIFEST (event-type counts, server versions, checksum
   algorithm, walk stops) and the CRC32 of every event;
2. ``mariadb-binlog -vv --base64-output=DECODE-ROWS`` on every corpus file
   with row events (row images, which columns are present, NULLs, column
   metadata, and the printed values of integer, string and other simply
   printed columns);
3. the hex dumps in the seed documents.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from tests.support import builder
from tests.support import reference as ref
from tests.support.reference import (
    ABSENT,
    RefDecodeError,
    RefFormat,
    decode_event,
    decode_file,
    decode_float,
    decode_int,
)

from .conftest import corpus_path, seed_path
from .support.corpus import corpus_names
from .support.manifest import manifest_rows

MARIADB_BINLOG = shutil.which("mariadb-binlog") or "/usr/bin/mariadb-binlog"


# ---------------------------------------------------------------------------
# MANIFEST (read by tests/support/manifest.py)
# ---------------------------------------------------------------------------
@functools.cache
def decoded(name: str) -> ref.RefBinlog:
    return decode_file(corpus_path(name), strict=False)


# rows events the reference cannot decode, and why (checked exactly)
KNOWN_UNDECODABLE = {
    # MariaDB 10.0 (5.3-style) TIMESTAMP(n>0) columns are logged as type 7
    # (TIMESTAMP) with no metadata, but each value is 4 + (n+1)//2 bytes: the
    # fractional precision n is not in the binlog, so these rows cannot be
    # split.  mariadb-binlog gives up on the same events.
    "pingcap__tiflow/mysql-bin.000001": {1819, 2418, 3267, 3569},
}


def test_manifest_lists_every_corpus_file():
    assert set(manifest_rows()) == set(corpus_names())
    assert len(manifest_rows()) == 111


@pytest.mark.parametrize("name", corpus_names())
def test_matches_manifest(name):
    row = manifest_rows()[name]
    b = decoded(name)
    # (1) event-type counts, as stored type bytes (the MANIFEST counts raw bytes)
    assert b.type_counts() == row["counts"]
    # server version of the first FDE
    if b.formats:
        assert b.formats[0].server_version == row["server_version"]
        assert b.formats[0].pos == 4
    else:
        assert row["server_version"] == "None"
    # checksum algorithm and CRC32 of every event (0 mismatches in the corpus)
    assert b.crc_mismatches == []
    checksum = row["checksum"]
    if checksum == "CRC32":
        assert all(f.checksum_alg == 1 for f in b.formats)
        assert b.crc_checked == len(b.events) > 0
    elif checksum == "off (alg=NONE)":
        assert b.formats[0].checksum_alg == 0
        # ... but the FDE itself still carries a valid CRC32
        assert b.crc_checked == len(b.formats) >= 1
        assert b.events[0].crc_ok is True
    elif checksum.startswith("off (pre-5.6.1"):
        assert all(f.checksum_alg is None for f in b.formats)
        assert b.crc_checked == 0
    else:
        assert checksum.startswith("n/a")
        assert b.crc_checked == 0
    # where the walk stopped
    if row["trailing_bytes"] is not None:
        assert b.stop is not None and b.stop.trailing_bytes == row["trailing_bytes"]
    # every event accounted for up to the stop point
    end = b.stop.offset if b.stop else b.size
    assert sum(ev.size for ev in b.events) == end - 4
    # rows events: decodable unless known otherwise; v1/v2 images consume the
    # whole body (the reference raises otherwise)
    failed = {pos for pos, why in b.skipped_rows_events if "not decoded" not in why}
    assert failed == KNOWN_UNDECODABLE.get(name, set())
    # TABLE_MAP contents: column (real) types, optional metadata kinds and the
    # number of UNSIGNED flags, as the MANIFEST lists them per file
    types: dict[str, int] = {}
    kinds: set[str] = set()
    unsigned = 0
    for tm in b.table_maps.values():
        for t in tm.real_types:
            types[ref.COLUMN_TYPE_NAMES[t]] = types.get(ref.COLUMN_TYPE_NAMES[t], 0) + 1
        for otype, value in tm.optional_metadata:
            kinds.add(ref.OPTIONAL_METADATA_NAMES[otype])
            if otype == 1:  # SIGNEDNESS: one bit per numeric column, MSB first
                unsigned += sum(bin(byte).count("1") for byte in value)
    if name in MANIFEST_TABLE_MAPS_DIFFER:
        assert types == MANIFEST_TABLE_MAPS_DIFFER[name]
    else:
        assert types == row["column_types"]
        assert kinds == row["optional_metadata"]
        assert unsigned == row["unsigned"]


# Where the MANIFEST's per-file TABLE_MAP summary cannot match ours, and what
# we find instead.
MANIFEST_TABLE_MAPS_DIFFER = {
    # pre-GA tree with permuted type ids: the MANIFEST took raw type 19
    # (really PRE_GA_DELETE_ROWS) as the only TABLE_MAP; the three real
    # TABLE_MAPs (raw type 16) are t1(a INT, b CHAR(50))
    "blackbeam__rust_mysql_common/ver_5_1-wl2325_r.001": {"LONG": 3, "STRING": 3},
}


@pytest.mark.slow  # reads every file of the corpus
def test_corpus_totals():
    """Totals over the whole corpus, as stated in the MANIFEST summary."""
    corpus_path("MANIFEST.md")  # skips (fails under CI) without the corpus
    files = corpus_names()
    crc_files = [n for n in files if decoded(n).formats and decoded(n).formats[0].checksum_alg == 1]
    assert len(crc_files) == 83
    totals: dict[int, int] = {}
    for n in files:
        for t, c in decoded(n).type_counts().items():
            totals[t] = totals.get(t, 0) + c
    assert totals[19] == 7632 and totals[30] == 7404 and totals[23] == 1409
    assert totals[15] == 114


# files where the header's log_pos is not pos + size, and for how many events
LOG_POS_EXCEPTIONS = {
    # relay logs / files assembled from another server's log: master positions
    "blackbeam__rust_mysql_common/binlog_savepoint.000001": 11,
    "blackbeam__rust_mysql_common/bug33029-slave-relay-bin.000001": 41,
    "blackbeam__rust_mysql_common/corrupt-relay-bin.000624": 872,
    "blackbeam__rust_mysql_common/rpl_unfiltered_hidden_gcol.000001": 12,
    "percona__percona-toolkit/relay-binlog001": 14,
    "polardb__polardbx-cdc/mysql_bin.1": 10,
    "polardb__polardbx-cdc/mysql_bin.19_1": 12,
    # two QUERY events of the pre-GA telco tree
    "blackbeam__rust_mysql_common/ver_5_1-wl2325_s.001": 2,
    # MariaDB 11.8: every QUERY event has log_pos 0
    "mariadb-operator__mariadb-poc/domain_id_0/mariadb-repl-bin.000007": 252,
}


@pytest.mark.slow  # reads every file of the corpus
def test_log_pos_is_next_position():
    """log_pos (end_log_pos) is pos + event_size except in the files above:
    a decoder must walk by event_size, never by log_pos."""
    for name in corpus_names():
        b = decoded(name)
        bad = [ev for ev in b.events if ev.log_pos != ev.pos + ev.size]
        assert len(bad) == LOG_POS_EXCEPTIONS.get(name, 0), name
    b = decoded("mariadb-operator__mariadb-poc/domain_id_0/mariadb-repl-bin.000007")
    assert {(ev.type, ev.log_pos) for ev in b.events
            if ev.log_pos != ev.pos + ev.size} == {(2, 0)}


# ---------------------------------------------------------------------------
# facts found while writing the reference (kept as regression checks)
# ---------------------------------------------------------------------------
def test_pre_ga_tree_permutes_event_types():
    """5.2.2-a_drop6p13 (wl2325 tree): type bytes 16..22 mean TABLE_MAP,
    PRE_GA_WRITE/UPDATE/DELETE_ROWS, XID, BEGIN_LOAD_QUERY, EXECUTE_LOAD_QUERY,
    and TABLE_MAP / rows post-headers are 6 bytes (4-byte table ids)."""
    r = decoded("blackbeam__rust_mysql_common/ver_5_1-wl2325_r.001")
    fmt = r.formats[0]
    assert fmt.permutation is not None
    assert fmt.post_header(ref.TABLE_MAP_EVENT) == 6
    assert fmt.post_header(ref.PRE_GA_WRITE_ROWS_EVENT) == 6
    assert r.type_counts(logical=True) == {15: 1, 2: 3, 3: 1, 19: 3, 20: 1, 21: 1, 22: 1}
    assert [(e.kind, e.version, e.images) for e in r.rows_events] == [
        ("insert", 0, None), ("update", 0, None), ("delete", 0, None)]
    assert all(tm.db == "test" for tm in r.table_maps.values())
    s = decoded("blackbeam__rust_mysql_common/ver_5_1-wl2325_s.001")
    # the MANIFEST's PRE_GA_*_ROWS(20-22) in this file are really XID,
    # BEGIN_LOAD_QUERY and EXECUTE_LOAD_QUERY: it is a statement-based log
    logical = s.type_counts(logical=True)
    assert logical.get(16) == 1 and logical.get(17) == 1 and logical.get(18) == 1
    assert not s.rows_events and not s.table_maps


def test_fde_is_checksummed_even_with_binlog_checksum_none():
    for name in ("osheroff__mysql-binlog-connector-java/mysql-bin.checksum-none",
                 "pingcap__tiflow/mysql-bin.000001",
                 "zalora__binlog-parser/fixtures/mysql-bin.07"):
        b = decoded(name)
        assert b.formats[0].checksum_alg == 0
        assert b.events[0].crc_ok is True
        assert all(ev.crc_ok is None for ev in b.events[1:])


def test_fde_crc_is_computed_with_in_use_flag_cleared():
    b = decoded("pingcap__tiflow/mysql-bin.000001")
    fde = b.events[0]
    assert fde.flags & 1
    raw = corpus_path("pingcap__tiflow/mysql-bin.000001").read_bytes()[4:4 + fde.size]
    assert zlib.crc32(raw[:-4]) != fde.crc_stored  # not over the bytes as stored
    assert fde.crc_ok


def test_truncated_files_stop_cleanly():
    b = decoded("blackbeam__rust_mysql_common/binlog_truncated_event.000001")
    assert b.events == [] and b.stop.offset == 4 and b.stop.trailing_bytes == 10
    b = decoded("polardb__polardbx-cdc/mysql_bin.1")
    assert b.stop.offset == b.size - 1 and b.stop.trailing_bytes == 1
    b = decoded("polardb__polardbx-cdc/mysql_bin.19_1")  # no FDE at all
    assert b.formats == [] and len(b.events) == 12 and b.stop is None


def test_strict_mode_raises():
    with pytest.raises(RefDecodeError) as exc:
        decode_file(corpus_path("pingcap__tiflow/mysql-bin.000001"))
    assert exc.value.offset > 1819


def test_decode_helpers():
    assert decode_int(b"\xff", True) == -1 and decode_int(b"\xff", False) == 255
    assert decode_int(b"\xff\xff\x7f", True) == 0x7FFFFF
    assert decode_int(b"\x00\x00\x80", True) == -0x800000
    assert decode_float(b"\x00\x00\x80\x3f") == 1.0
    assert decode_float(bytes.fromhex("000000000000f03f")) == 1.0
    assert repr(ABSENT) == "ABSENT" and ABSENT is type(ABSENT)()
    # the DECIMAL(14,4) example of the MySQL manual (strings/decimal.cc)
    assert ref.decode_decimal(bytes.fromhex("810DFB38D204D2"), 14, 4) == "1234567890.1234"
    assert ref.decode_decimal(bytes.fromhex("7EF204C72DFB2D"), 14, 4) == "-1234567890.1234"
    assert ref.decimal_bin_size(14, 4) == 7 and ref.decimal_bin_size(65, 30) == 30


# ---------------------------------------------------------------------------
# a hand-made file: FDE, TABLE_MAP, UPDATE_ROWS v2 with extra data and
# partial images, then a truncated event
# ---------------------------------------------------------------------------
def _handmade_binlog() -> bytes:
    post = bytearray(41)
    post[19 - 1] = 8                       # TABLE_MAP
    for t in (30, 31, 32):
        post[t - 1] = 10                   # rows v2
    w = builder.BinlogWriter("8.0.99-test", post_header=bytes(post), timestamp=1700000000, server_id=7)
    w.add(19, builder.table_map_body(
        7, "d", "t", [3, 15, 252], [b"", (300).to_bytes(2, "little"), b"\x02"],  # VARCHAR(300), BLOB 2
        bytes([0b110]),                                                          # cols 2, 3 nullable
        optional=[(4, b"\x02id\x01v\x01b")]))                                  # COLUMN_NAME
    extra = b"\x01\x05\x00\x06\x00"         # PART info: partition 5, source 6
    rows = (builder.row_image([(42).to_bytes(4, "little"), None])                # before: id, v=NULL
            + builder.row_image([builder.prefixed(b"abc", 2), builder.prefixed(b"", 2)]))  # after: v='abc', b=''
    w.add(31, builder.rows_body(7, 3, rows, present=[True, True, False], present_after=[False, True, True],
                                extra=extra))
    data = w.bytes()
    return data + builder.event(2, b"x" * 30, at=len(data), timestamp=1700000000, server_id=7)[:25]  # cut short


def test_handmade_binlog():
    data = _handmade_binlog()
    b = ref.decode_bytes(data)
    assert [e.type for e in b.events] == [15, 19, 31]
    assert b.crc_checked == 3 and b.crc_mismatches == []
    assert b.stop.offset == sum(e.size for e in b.events) + 4 and b.stop.trailing_bytes == 25
    fmt = b.formats[0]
    assert fmt.server_version == "8.0.99-test" and fmt.checksum_alg == 1
    (tm,) = b.table_maps.values()
    assert tm.column_names == ("id", "v", "b") and tm.column_meta == (0, 300, 2)
    assert tm.nullable == (False, True, True)
    (ev,) = b.rows_events
    assert (ev.kind, ev.version, ev.table_id, ev.db, ev.table) == ("update", 2, 7, "d", "t")
    assert ev.extra_data == b"\x01\x05\x00\x06\x00"
    assert ev.present_before == [True, True, False]
    assert ev.present_after == [False, True, True]
    assert ev.images == [[(42).to_bytes(4, "little"), None, ABSENT], [ABSENT, b"abc", b""]]
    assert ev.rows == [tuple(ev.images)]
    # any corruption of a rows body is caught
    bad = bytearray(data)
    bad[b.events[2].pos + b.events[2].size - 6] = 9  # BLOB length 0 -> 9
    with pytest.raises(RefDecodeError):
        ref.decode_bytes(bytes(bad))
    lenient = ref.decode_bytes(bytes(bad), strict=False)
    assert lenient.crc_mismatches == [ev.pos] and lenient.rows_events == []
    assert [pos for pos, _ in lenient.skipped_rows_events] == [ev.pos]


# ---------------------------------------------------------------------------
# (2) mariadb-binlog -vv
# ---------------------------------------------------------------------------
_AT = re.compile(rb"^# at (\d+)$")
_VAL = re.compile(rb"^###   @(\d+)=(.*) /\* (.*?) ?meta=(\d+) nullable=(\d) is_null=(\d) \*/$")
STMT_END_F = 0x1

# Files with row events that mariadb-binlog 10.11 cannot print at all.
MARIADB_UNREADABLE = {
    "blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001":
        "MySQL 9 GTID_TAGGED event (42) is rejected before the rows",
    "blackbeam__rust_mysql_common/json-opaque.binlog":
        "MySQL JSON column (type 245) not printable",
    "blackbeam__rust_mysql_common/json.binlog.000001":
        "MySQL JSON column (type 245) not printable",
    "blackbeam__rust_mysql_common/vector.binlog":
        "MySQL VECTOR column (type 242) not printable",
    "rusuly__MySqlCdc/mysql-bin.000001":
        "MySQL JSON column (type 245) not printable",
}


@functools.cache
def mariadb_binlog(name: str) -> tuple[int, dict[int, list], list[int]]:
    """Run mariadb-binlog; returns (rc, rows printed under each '# at', positions)."""
    if not Path(MARIADB_BINLOG).exists():
        pytest.skip("mariadb-binlog is not installed")
    proc = subprocess.run([MARIADB_BINLOG, "-vv", "--base64-output=DECODE-ROWS",
                           str(corpus_path(name))], capture_output=True, timeout=120)
    rows: dict[int, list] = {}
    order: list[int] = []
    cur = row = img = None
    for line in proc.stdout.split(b"\n"):
        m = _AT.match(line)
        if m:
            cur = int(m.group(1))
            order.append(cur)
            row = img = None
            continue
        if not line.startswith(b"###"):
            continue
        if line.startswith((b"### INSERT INTO ", b"### UPDATE ", b"### DELETE FROM ")):
            row = {"cmd": line.split(b" ")[1].decode(), "images": []}
            rows.setdefault(cur, []).append(row)
            if line.endswith(b" VALUES ()"):
                row["images"].append({})
            img = None
        elif line in (b"### SET", b"### WHERE"):
            img = {}
            row["images"].append(img)
        elif line == b"### SET /* no columns */":
            row["images"].append({})
            img = None
        else:
            m = _VAL.match(line)
            assert m, line
            img[int(m.group(1))] = {"value": m.group(2), "type": m.group(3).decode(),
                                    "meta": int(m.group(4)), "nullable": m.group(5) == b"1",
                                    "is_null": m.group(6) == b"1"}
    return proc.returncode, rows, order


def _quote(raw: bytes) -> bytes:
    """my_b_write_quoted (MariaDB 10.11): bytes < 0x20 as \\xNN, all else raw
    (quote and backslash are NOT escaped: that branch is unreachable there)."""
    out = bytearray(b"'")
    for c in raw:
        out += bytes([c]) if c > 0x1F else b"\\x%02x" % c
    return bytes(out + b"'")


def _int_text(raw: bytes) -> bytes:
    s = decode_int(raw, True)
    text = b"%d" % s
    if s < 0:
        text += b" (%d)" % decode_int(raw, False)
    return text


def _bits_text(raw: bytes, nbits: int) -> bytes:
    nbits8 = (nbits + 7) // 8 * 8
    return b"b'" + bytes(
        0x31 if raw[i // 8] >> (7 - i % 8) & 1 else 0x30
        for i in range(nbits8 - nbits, nbits8)) + b"'"


def expected_text(real_type: int, meta: int, raw: bytes) -> bytes | None:
    """What mariadb-binlog prints for a value, or None when not compared."""
    if real_type in (ref.T_TINY, ref.T_SHORT, ref.T_INT24, ref.T_LONG, ref.T_LONGLONG):
        return _int_text(raw)
    if real_type in (ref.T_VARCHAR, ref.T_VAR_STRING, ref.T_STRING, ref.T_BLOB,
                     ref.T_TINY_BLOB, ref.T_MEDIUM_BLOB, ref.T_LONG_BLOB, ref.T_GEOMETRY):
        return _quote(raw)
    if real_type == ref.T_FLOAT:
        return b"%-20g" % decode_float(raw)
    if real_type == ref.T_DOUBLE:
        return b"%-.20g" % decode_float(raw)
    if real_type == ref.T_ENUM:
        return b"%d" % decode_int(raw, False)
    if real_type == ref.T_SET:
        return _bits_text(raw, len(raw) * 8)
    if real_type == ref.T_BIT:
        return _bits_text(raw, (meta >> 8) * 8 + (meta & 0xFF))
    if real_type == ref.T_YEAR:
        return b"%04d" % (raw[0] + 1900)
    if real_type == ref.T_TIMESTAMP:
        return b"%d" % decode_int(raw, True)  # uint32 printed with %d
    if real_type == ref.T_DATE:
        v = decode_int(raw, False)
        return b"'%04d:%02d:%02d'" % (v // 512, v // 32 % 16, v % 32)
    if real_type == ref.T_DATETIME:
        v = decode_int(raw, False)
        d, t = divmod(v, 1000000)
        return b"'%04d-%02d-%02d %02d:%02d:%02d'" % (
            d // 10000, d % 10000 // 100, d % 100, t // 10000, t % 10000 // 100, t % 100)
    if real_type == ref.T_NEWDECIMAL:
        return ref.decode_decimal(raw, meta >> 8, meta & 0xFF).encode()
    if real_type == ref.T_TIMESTAMP2:
        sec, usec = ref.decode_timestamp2(raw, meta)
        return b"%d" % sec + _frac_text(usec, meta)
    if real_type == ref.T_DATETIME2:
        y, mo, d, h, mi, s, usec = ref.decode_datetime2(raw, meta)
        return b"'%04d-%02d-%02d %02d:%02d:%02d" % (y, mo, d, h, mi, s) + _frac_text(usec, meta) + b"'"
    if real_type == ref.T_TIME2:
        neg, h, mi, s, usec = ref.decode_time2(raw, meta)
        return b"'%s%02d:%02d:%02d" % (b"-" if neg else b"", h, mi, s) + _frac_text(usec, meta) + b"'"
    return None  # TIME (old), JSON, VECTOR...: not compared


def _frac_text(usec: int, fsp: int) -> bytes:
    return b".%0*d" % (fsp, usec // 10 ** (6 - fsp)) if fsp else b""


_TYPE_WORD = {
    ref.T_TINY: "TINYINT", ref.T_SHORT: "SHORTINT", ref.T_INT24: "MEDIUMINT",
    ref.T_LONG: "INT", ref.T_LONGLONG: "LONGINT", ref.T_FLOAT: "FLOAT",
    ref.T_DOUBLE: "DOUBLE", ref.T_VARCHAR: "VARSTRING", ref.T_STRING: "STRING",
    ref.T_ENUM: "ENUM", ref.T_SET: "SET", ref.T_BIT: "BIT", ref.T_YEAR: "YEAR",
    ref.T_DATE: "DATE", ref.T_DATETIME: "DATETIME", ref.T_TIMESTAMP: "TIMESTAMP",
    ref.T_TIMESTAMP2: "TIMESTAMP(", ref.T_DATETIME2: "DATETIME(", ref.T_TIME2: "TIME(",
    ref.T_NEWDECIMAL: "DECIMAL(", ref.T_BLOB: "",
}


def _statements(b: ref.RefBinlog) -> list[list[ref.RefRowsEvent]]:
    """mariadb-binlog prints the rows of a statement's events together, under
    the '# at' of the event that carries STMT_END_F."""
    groups, cur = [], []
    for ev in b.rows_events:
        cur.append(ev)
        if ev.flags & STMT_END_F:
            groups.append(cur)
            cur = []
    if cur:
        groups.append(cur)
    return groups


#: the corpus files with rows events mariadb-binlog prints (those it cannot: test_mariadb_binlog_really_cannot_print)
@pytest.mark.parametrize("name", [n for n in corpus_names(rows=True) if n not in MARIADB_UNREADABLE])
def test_against_mariadb_binlog(name):
    b = decoded(name)
    rc, printed, order = mariadb_binlog(name)
    complete = set(order if rc == 0 else order[:-1])  # on error the last block is cut
    maps = _table_maps_in_force(b)
    n_events = n_images = n_values = 0
    for group in _statements(b):
        last = group[-1]
        if last.pos not in complete or any(ev.images is None for ev in group):
            assert rc != 0 or any(ev.images is None for ev in group), (name, last.pos)
            continue
        for ev in group[:-1]:
            assert ev.pos not in printed, (name, ev.pos)
        theirs = [img for row in printed.get(last.pos, []) for img in row["images"]]
        mine = [(ev, img) for ev in group for img in ev.images]
        assert len(mine) == len(theirs), (name, last.pos)
        # the rows of the group, in order, with the right statement kind
        cmds = [row["cmd"] for row in printed.get(last.pos, [])]
        expect_cmds = [{"insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}[ev.kind]
                       for ev in group for _ in ev.rows]
        assert cmds == expect_cmds, (name, last.pos)
        for (ev, img), their in zip(mine, theirs):
            tm = maps[ev.pos]
            assert [i + 1 for i, v in enumerate(img) if v is not ABSENT] == sorted(their)
            for col, info in their.items():
                i = col - 1
                value = img[i]
                assert (value is None) == info["is_null"], (name, ev.pos, col)
                assert info["meta"] == tm.column_meta[i], (name, ev.pos, col)
                assert info["nullable"] == tm.nullable[i], (name, ev.pos, col)
                word = _TYPE_WORD.get(tm.real_types[i])
                if word:
                    assert info["type"].startswith(word), (name, ev.pos, col, info["type"])
                if value is None:
                    assert info["value"] == b"NULL"
                    continue
                want = expected_text(tm.real_types[i], tm.column_meta[i], value)
                if want is not None:
                    assert info["value"] == want, (name, ev.pos, col, value)
                    n_values += 1
            n_images += 1
        n_events += len(group)
    if rc == 0:
        assert n_events == len([e for e in b.rows_events if e.images is not None])
        # nothing printed that the reference does not know of
        assert set(printed) <= {g[-1].pos for g in _statements(b)}
    assert n_events > 0


def _table_maps_in_force(b: ref.RefBinlog) -> dict[int, ref.RefTableMap]:
    """For each rows event (by pos): the last TABLE_MAP before it with its id."""
    current: dict[int, ref.RefTableMap] = {}
    out = {}
    rows = {ev.pos: ev for ev in b.rows_events}
    for ev in b.events:
        if ev.pos in b.table_maps:
            tm = b.table_maps[ev.pos]
            current[tm.table_id] = tm
        elif ev.pos in rows:
            out[ev.pos] = current[rows[ev.pos].table_id]
    return out


@pytest.mark.parametrize("name", sorted(MARIADB_UNREADABLE))
def test_mariadb_binlog_really_cannot_print(name):
    """Keeps the skip list above honest."""
    rc, printed, _ = mariadb_binlog(name)
    assert rc != 0 and printed == {}
    assert decoded(name).rows_events  # ... while the reference decodes them


# ---------------------------------------------------------------------------
# (3) seed hex dumps
# ---------------------------------------------------------------------------
def _xxd_bytes(text: str, first_offset: str) -> bytes:
    """Bytes of an 'xxd' dump that starts at the line with the given offset."""
    out = bytearray()
    started = False
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]{8}): ((?:[0-9a-f]{2,4} ?)+)", line)
        if not m:
            if started:
                break
            continue
        if m.group(1) == first_offset:
            started = True
        if started:
            out += bytes.fromhex(m.group(2).replace(" ", ""))
    return bytes(out)


def test_seed_001_table_map_presentation_person():
    text = seed_path("001_021ea0c9ad600c84.txt").read_text(encoding="utf-8")
    buf = _xxd_bytes(text, "0000026c")  # xxd -s 620 -l 68 binlog.000024
    assert len(buf) == 68
    ev, tm = decode_event(buf, RefFormat.synthetic(checksum_alg=1), pos=620)
    assert (ev.type, ev.size, ev.timestamp, ev.server_id, ev.log_pos, ev.flags) == (
        19, 68, 1748308018, 1, 688, 0)
    assert ev.crc_ok and ev.crc_stored == 0xD8D0A8FB
    assert (tm.table_id, tm.flags, tm.db, tm.table, tm.ncols) == (
        95, 1, "presentation", "person", 2)
    assert tm.column_types == (3, 15)          # LONG, VARCHAR
    assert tm.column_meta == (0, 600)          # VARCHAR(150) utf8mb4 = 600 bytes
    assert tm.nullable == (False, True)
    assert tm.optional_metadata == ((1, b"\x00"), (2, b"\xfc\xff\x00"))  # SIGNEDNESS, DEFAULT_CHARSET 255


def test_seed_004_table_map_darren_t():
    # the fields listed one by one in seed 004 (cnblogs "MySQL Binlog解析(2)")
    fields = ["21 2e 0e 5b", "13", "5c 27 6b 94", "2e 00 00 00", "aa 01 00 00", "00 00",
              "b1 01 00 00 00 00", "01 00", "06", "64 61 72 72 65 6e", "00", "01", "74",
              "00", "01", "03", "00", "00", "8f cb 07 7d"]
    text = seed_path("004_bf7358eaf922e1bf.txt").read_text(encoding="utf-8")
    for f in fields:
        assert f.replace(" ", "") in text.replace(" ", "").lower(), f
    buf = bytes.fromhex("".join(fields))
    assert len(buf) == 46
    ev, tm = decode_event(buf, RefFormat.synthetic(checksum_alg=1), pos=426 - 46)
    assert (ev.type, ev.server_id, ev.size, ev.log_pos, ev.flags) == (19, 2490050396, 46, 426, 0)
    assert ev.crc_ok and ev.crc_stored == 0x7D07CB8F
    assert (tm.table_id, tm.db, tm.table, tm.ncols, tm.column_types) == (433, "darren", "t", 1, (3,))
    # seed says "2 bytes reserved for future use: 01 00"; they are the flags
    # (TM_BIT_LEN_EXACT_F)
    assert tm.flags == 1
    assert tm.nullable == (False,) and tm.field_metadata_raw == b"" and tm.optional_metadata == ()


def test_seed_000_dump_has_one_wrong_byte():
    """Seed 000's hex dump of `test`.`t4` (table id 33) reads '01 03 01 01':
    metadata length 1 would leave no room for the null bitmap.  With the
    metadata length byte corrected to 00, the stored CRC32 0xbe3c6b05 that the
    seed also shows matches, so the dump has exactly one transcription error."""
    text = seed_path("000_ae06dc76b7a39a2d.txt").read_text(encoding="utf-8")
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("# at 892"))
    dump = [lines[first][len("# at 892"):]] + lines[first + 1:first + 3]
    buf = bytearray()
    for line in dump:  # hex bytes, then an ASCII column without spaces
        for token in line.split():
            if not re.fullmatch(r"[0-9a-f]{2}", token):
                break
            buf.append(int(token, 16))
    buf = bytes(buf)
    assert len(buf) == 45
    with pytest.raises(RefDecodeError):
        decode_event(buf, RefFormat.synthetic(checksum_alg=1), pos=847)
    fixed = buf[:-6] + b"\x00" + buf[-5:]
    ev, tm = decode_event(fixed, RefFormat.synthetic(checksum_alg=1), pos=847)
    assert ev.crc_ok and ev.log_pos == 892 and ev.server_id == 10124
    assert (tm.table_id, tm.db, tm.table, tm.column_types, tm.nullable) == (
        33, "test", "t4", (3,), (True,))
