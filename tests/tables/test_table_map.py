"""TABLE_MAP_EVENT decoding checked against the seed documents' hex dumps (written out in
tests/support/vectors.py, so that these tests need neither the seeds nor the corpus: the real
binlogs they build on are copies in tests/data; only the ver_5_1_23.001 vector reads the
corpus, and skips without it)."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

import vecbinlog
from vecbinlog.constants import ColumnType as T, OptionalMetadataType as M
from vecbinlog.tables.table_map import ColumnSpec, parse_table_map
from vecbinlog.tables.types import decimal_bin_size

from ..conftest import TEST_DATA, corpus_path
from ..support import builder
from ..support import reference as ref
from ..support.vectors import DARREN, PERSON, T4_BAD_BYTE, T4_PRINTED


def decode(event: bytes):
    buf = np.frombuffer(event, np.uint8)
    return parse_table_map(buf, 0, 19, len(event) - 4, 8)


def crc_ok(event: bytes) -> bool:
    return zlib.crc32(event[:-4]) == struct.unpack("<I", event[-4:])[0]


def test_person_event_from_the_walkthrough():
    assert len(PERSON) == 68 and crc_ok(PERSON)
    table_id, tm = decode(PERSON)
    assert table_id == 95
    assert tm.flags == 0x0001  # TM_BIT_LEN_EXACT_F
    assert (tm.database, tm.table) == ("presentation", "person")
    assert [c.type for c in tm.columns] == [T.MYSQL_TYPE_LONG, T.MYSQL_TYPE_VARCHAR]
    assert tm.columns[1].max_length == 600  # VARCHAR(150) in utf8mb4: bytes, not characters
    assert [c.nullable for c in tm.columns] == [False, True]
    assert tm.columns[0].unsigned is False  # SIGNEDNESS 0x00: ID is signed
    assert tm.columns[1].collation == 255  # DEFAULT_CHARSET fc ff 00: utf8mb4_0900_ai_ci
    assert tm.columns[0].collation is None
    assert [k for k, _ in tm.optional_metadata] == [M.SIGNEDNESS, M.DEFAULT_CHARSET]
    assert tm.column_names == ["@1", "@2"]  # no COLUMN_NAME under MINIMAL metadata
    assert tm.columns[1].storage() == ("prefixed", 2)  # max length 600 > 255: 2-byte lengths


def test_darren_event_from_the_chinese_walkthrough():
    assert len(DARREN) == 46 and crc_ok(DARREN)
    assert struct.unpack("<I", DARREN[-4:])[0] == 0x7D07CB8F
    table_id, tm = decode(DARREN)
    assert table_id == 433 and tm.flags == 1
    assert tm.name == "darren.t"
    assert [c.type for c in tm.columns] == [T.MYSQL_TYPE_LONG]
    assert tm.columns[0].nullable is False
    assert tm.optional_metadata == ()


def test_t4_dump_has_one_byte_its_crc_contradicts():
    assert not crc_ok(T4_PRINTED)
    fixed = bytearray(T4_PRINTED)
    fixed[T4_BAD_BYTE] = 0x00
    assert crc_ok(bytes(fixed))
    # no other single-byte change makes the CRC agree
    body, crc = T4_PRINTED[:-4], struct.unpack("<I", T4_PRINTED[-4:])[0]
    fixes = [
        (i, v) for i in range(len(body)) for v in range(256)
        if v != body[i] and zlib.crc32(body[:i] + bytes([v]) + body[i + 1 :]) == crc
    ]
    assert fixes == [(T4_BAD_BYTE, 0)]
    table_id, tm = decode(bytes(fixed))
    assert table_id == 33 and tm.name == "test.t4"
    assert [c.type for c in tm.columns] == [T.MYSQL_TYPE_LONG] and tm.columns[0].nullable
    # As printed, the metadata length (1) disagrees with the column types (0 bytes).
    with pytest.raises(vecbinlog.MalformedEventError, match="field metadata block says 1 bytes"):
        decode(T4_PRINTED)


def _file_with(event: bytes, tmp_path) -> str:
    """A binlog file: the magic and FDE of a real MySQL 8.0 CRC32 binlog, then ``event``."""
    src = (TEST_DATA / "blackbeam__rust_mysql_common/minimal_row_metadata.000001").read_bytes()
    fde_size = struct.unpack_from("<I", src, 4 + 9)[0]
    path = tmp_path / "seed.000001"
    path.write_bytes(src[: 4 + fde_size] + event)
    return str(path)


@pytest.mark.parametrize("event,ok", [(PERSON, True), (DARREN, True), (T4_PRINTED, False)], ids=["person", "darren", "t4-printed"])
def test_checksum_verification_of_seed_events(event, ok, tmp_path):
    with vecbinlog.open(_file_with(event, tmp_path)) as log:
        ev = log.events()
        assert ev.column("type").to_pylist() == ["FORMAT_DESCRIPTION_EVENT", "TABLE_MAP_EVENT"]
        if ok:
            assert log.verify() == 2
        else:
            with pytest.raises(vecbinlog.ChecksumError) as err:
                log.verify()
            assert err.value.offset == ev.column("pos")[1].as_py()
            assert err.value.stored == 0xBE3C6B05
            assert err.value.event_type == "TABLE_MAP_EVENT"
    with vecbinlog.open(_file_with(event, tmp_path), verify_checksums=False) as log:
        assert log.verify() == 0


@pytest.mark.parametrize(
    "precision,scale,size",
    # MySQL manual "Precision Math: DECIMAL Data Type Characteristics": (18,9) -> 4+4, (20,6) -> 4+3+3
    [(10, 0, 5), (9, 0, 4), (18, 9, 8), (65, 30, 30), (20, 6, 10), (1, 0, 1), (14, 4, 7)],
)
def test_decimal_bin_size(precision, scale, size):
    assert decimal_bin_size(precision, scale) == size


@pytest.mark.parametrize(
    "meta,real,length",
    [
        ((0xFE << 8) | 40, T.MYSQL_TYPE_STRING, 40),  # CHAR(10) utf8mb4: fe 28
        ((0xF7 << 8) | 1, T.MYSQL_TYPE_ENUM, 1),  # ENUM: f7 01
        ((0xF8 << 8) | 8, T.MYSQL_TYPE_SET, 8),  # SET with 64 members: f8 08
        ((0xDE << 8) | 0xFC, T.MYSQL_TYPE_STRING, 764),  # CHAR(191) utf8mb4 = 764 bytes: Bug#37426 packing
        ((0xCE << 8) | 0xFC, T.MYSQL_TYPE_STRING, 1020),  # CHAR(255) utf8mb4
    ],
)
def test_string_metadata_packs_real_type_and_length(meta, real, length):
    spec = ColumnSpec(index=0, type=T.MYSQL_TYPE_STRING, meta=meta, nullable=True)
    assert spec.real_type == real
    if real == T.MYSQL_TYPE_STRING:
        assert spec.max_length == length
        assert spec.storage() == ("prefixed", 2 if length > 255 else 1)
    else:
        assert spec.storage() == ("fixed", length)


# -- MySQL 5.1.15-5.1.17: TABLE_MAP events without field metadata ----------------------------
# No server of those versions wrote a corpus file. The vectors are corpus files of 5.1.23/5.1.34
# rewritten to the older layout as the server source gives it: Table_map_log_event (sql/
# log_event.cc of 5.1) reads the field metadata and the null bitmap only
# "if (bytes_read < event_len)", the event of 5.1.15-5.1.17 ending after the column types.
def pre_5_1_18(data: bytes, version: str) -> bytes:
    """A binlog (no checksums) with its FDE's server version set to ``version`` and every
    TABLE_MAP cut after its column types; event sizes and end_log_pos follow."""
    fmt = ref.format_of(data)
    out, shift = bytearray(data[:4]), 0
    for e in ref.walk_events(data)[0]:
        ev = bytearray(data[e.offset : e.offset + e.size])
        if e.type == 15:  # FORMAT_DESCRIPTION: binlog version (2 bytes), then the server version (50)
            ev[21:71] = version.encode().ljust(50, b"\0")
        elif e.type == 19:  # up to the column types
            tm = ref.read_table_map(data, fmt, e)
            cut = tm.column_count_end - e.offset + tm.ncols
            shift += len(ev) - cut
            ev = ev[:cut]
        fields = builder.header_fields(ev)
        if fields["log_pos"]:
            fields["log_pos"] -= shift
        out += builder.event(e.type, bytes(ev[19:]), checksum=False, **fields)
    return bytes(out)


def test_table_map_without_field_metadata_decodes_when_types_need_none(tmp_path):
    """canal's 5.1.34 file (an INT and a TIMESTAMP) in the 5.1.16 layout: the same rows."""
    original = TEST_DATA / "alibaba__canal/parse/mysql-bin.000002"
    old = tmp_path / "mysql-bin.000002"
    old.write_bytes(pre_5_1_18(original.read_bytes(), "5.1.16-beta-log"))
    with vecbinlog.open(old) as log:
        assert log.info()["files"][0]["server_version"] == "5.1.16-beta-log"
        (tm,) = log.table_maps("retl.xdual")
        assert [(c.type, c.meta, c.nullable) for c in tm.columns] == [(T.MYSQL_TYPE_LONG, 0, True),
                                                                     (T.MYSQL_TYPE_TIMESTAMP, 0, True)]
        got = log.read_table("retl.xdual")
    want = vecbinlog.read_table(original, "retl.xdual")
    same = ["@1", "@2", "_change_type", "_event_row", "_xid"]
    assert got.select(same).to_pylist() == want.select(same).to_pylist() and got.num_rows == 2


def with_column_type(data: bytes, column: int, type_code: int) -> bytes:
    """A binlog of pre-5.1.18 TABLE_MAPs (no checksums) with column ``column`` of each of
    them given another type: the byte after the column count, in place."""
    out = bytearray(data)
    fmt = ref.format_of(data)
    for e in ref.walk_events(data)[0]:
        if e.type == 19:
            tm = ref.read_table_map(data, fmt, e)
            out[tm.column_count_end + column] = type_code
    return bytes(out)


def _canal_with_a_string() -> bytes:
    """canal's 5.1.34 file in the 5.1.17 layout, its TIMESTAMP column declared a STRING (CHAR),
    whose size only the field metadata (absent) gives."""
    old = pre_5_1_18((TEST_DATA / "alibaba__canal/parse/mysql-bin.000002").read_bytes(), "5.1.17-log")
    return with_column_type(old, 1, T.MYSQL_TYPE_STRING)


@pytest.mark.parametrize("vector", ["canal-with-a-string", "ver_5_1_23"])
def test_table_map_without_field_metadata_names_the_server(tmp_path, vector):
    """A TABLE_MAP in the 5.1.17 layout with a CHAR column: ver_5_1_23.001 of the corpus (CHAR
    columns), and canal's file (in tests/data) with its TIMESTAMP made a CHAR."""
    if vector == "ver_5_1_23":
        data = pre_5_1_18(corpus_path("blackbeam__rust_mysql_common/ver_5_1_23.001").read_bytes(), "5.1.17-log")
    else:
        data = _canal_with_a_string()
    old = tmp_path / "ver_5_1_17.001"
    old.write_bytes(data)
    with vecbinlog.open(old) as log, pytest.raises(vecbinlog.UnsupportedError) as err:
        log.read_all()
    assert "5.1.17-log" in str(err.value) and "MySQL 5.1.15-5.1.17" in str(err.value) and "STRING" in str(err.value)
    assert err.value.event_type == "TABLE_MAP_EVENT" and err.value.offset is not None
