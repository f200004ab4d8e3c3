"""The builder of synthetic events (tests/support/builder.py) against real bytes: events the
seeds' hex dumps print and every TABLE_MAP, rows event and FORMAT_DESCRIPTION of the corpus,
rebuilt from what the reference decoder reads of them, come out byte for byte; XID, ROTATE
and MariaDB GTID events from what ``mariadb-binlog -vv`` prints of the sample file (their
values, end_log_pos, CRC32)."""

from __future__ import annotations

import re
from functools import lru_cache

import pytest

import vecbinlog

from .conftest import DATA, corpus_path
from .support import builder as b
from .support import reference as ref
from .support.corpus import corpus_names
from .support.vectors import DARREN, PERSON

SAMPLE = DATA / "sample" / "mariadb-bin.000001"


@lru_cache(maxsize=None)
def decoded(path) -> tuple[bytes, ref.RefBinlog | None]:
    data = path.read_bytes()
    try:
        return data, ref.decode_bytes(data, strict=False)
    except ref.RefDecodeError:
        return data, None


def test_table_maps_from_the_seeds_hex_dumps():
    """001_021ea0c9ad600c84.txt (presentation.person, MINIMAL metadata) and
    004_bf7358eaf922e1bf.txt (darren.t), field by field as the documents explain them."""
    person = b.event(19, b.table_map_body(95, "presentation", "person", [3, 15], [b"", (600).to_bytes(2, "little")],
                                          b.bitmap([False, True]), optional=[(1, b"\x00"), (2, b"\xfc\xff\x00")]),
                     timestamp=1748308018, server_id=1, log_pos=688)
    assert person == PERSON
    darren = b.event(19, b.table_map_body(433, "darren", "t", [3], [b""], b"\x00"),
                     timestamp=0x5B0E2E21, server_id=0x946B275C, log_pos=0x1AA)
    assert darren == DARREN


@pytest.mark.parametrize("name", corpus_names())
def test_corpus_events_rebuilt(name):
    """Every FDE, TABLE_MAP and rows event (v1, v2) the reference reads, rebuilt from its
    fields, is the file's bytes (header fields taken from the event, CRC32 recomputed)."""
    data, r = decoded(corpus_path(name))
    assert r is not None  # the reference reads every corpus file, leniently
    formats = {f.pos: f for f in r.formats}
    fmt = None
    skipped = {pos for pos, _ in r.skipped_rows_events}
    rows = {e.pos: e for e in r.rows_events if e.inner is None}
    checked = 0
    for e, bounds in zip(r.events, ref.walk_events(data)[0]):
        original = data[e.pos:e.pos + e.size]
        if e.pos in formats:
            fmt = formats[e.pos]
            if fmt.permutation is not None or fmt.binlog_version != 4:
                return  # pre-GA trees: their FDE lists lengths in another order
            body = b.fde_body(fmt.server_version, post_header=bytes(fmt.post_header_len), checksum_alg=fmt.checksum_alg,
                              create_timestamp=fmt.create_timestamp, header_length=fmt.header_length)
            rebuilt = b.event(15, body, checksum=fmt.checksum_alg is not None, **b.header_fields(original))
            # the server version field is NUL-padded by the server; some writers leave bytes after the NUL
            if original[21:71].rstrip(b"\0").find(b"\0") < 0:
                assert rebuilt[:-4] == original[:-4] if fmt.checksum_alg is not None else rebuilt == original
                checked += 1
        elif e.pos in skipped or fmt is None:
            continue
        elif e.logical_type == ref.TABLE_MAP_EVENT and e.pos in r.table_maps:
            tm = ref.read_table_map(data, fmt, bounds)
            if not tm.field_metadata_raw and len(original) - 19 - 4 * fmt.has_crc32 == tm.column_count_end - e.pos - 19 + tm.ncols:
                continue  # a pre-5.1.x map without metadata nor null bits
            assert b.table_map_like(tm, original, checksum=fmt.has_crc32) == original, e.pos
            checked += 1
        elif e.pos in rows and rows[e.pos].version > 0:
            ev, head = rows[e.pos], ref.read_rows_header(data, fmt, bounds)
            n = (ev.ncols + 7) // 8  # the bitmaps as stored: some servers set their unused bits
            before, after = data[head.width_end:head.width_end + n], data[head.width_end + n:head.width_end + 2 * n]
            body = b.rows_body(ev.table_id, ev.ncols, ev.rows_data, present=before,
                               present_after=after if ev.kind == "update" else None, extra=ev.extra_data,
                               flags=ev.flags, table_id_len=head.table_id_len)
            assert [bool(before[c // 8] >> (c % 8) & 1) for c in range(ev.ncols)] == ev.present_before
            assert b.event(e.type, body, checksum=fmt.has_crc32, **b.header_fields(original)) == original, e.pos
            checked += 1
    assert checked or not r.formats  # (two files have no FDE)


#: what ``mariadb-binlog -vv`` prints of an event (after "end_log_pos E CRC32 0xC\t"), and
#: the event the builder makes of it: (type, body, header fields the print does not give)
PRINTED = {
    "xid": (r"Xid = (\d+)", lambda m: (16, b.xid_body(int(m[1])), ())),
    "rotate": (r"Rotate to (\S+)  pos: (\d+)", lambda m: (4, b.rotate_body(int(m[2]), m[1]), ())),
    # MariaDB GTID domain-server-seq; its flags2 byte (what "ddl"/"trans" sums up) is the file's
    "gtid": (r"GTID (\d+)-(\d+)-(\d+) ", lambda m: (162, b.mariadb_gtid_body(int(m[3]), int(m[1])), ("flags2",))),
}


@pytest.mark.parametrize("kind", sorted(PRINTED))
def test_events_of_the_sample_from_mariadb_binlog(kind):
    """``# at N`` / ``server id S end_log_pos E CRC32 0xC ...``: the event built from what is
    printed (and the header's timestamp and flags) has the printed end position and CRC32
    and is the file's bytes."""
    data = SAMPLE.read_bytes()
    text = (DATA / "sample" / "mariadb-binlog-vv.txt").read_text()
    pattern, make = PRINTED[kind]
    found = list(re.finditer(r"# at (\d+)\n#\S+ \S+ server id (\d+)\s+end_log_pos (\d+) CRC32 0x([0-9a-f]+)\s+"
                             + pattern, text))
    assert found
    for m in found:
        at, server_id, end, crc = int(m[1]), int(m[2]), int(m[3]), int(m[4], 16)
        type_code, body, from_file = make((None, *m.groups()[4:]))  # [1]: the pattern's first group
        if "flags2" in from_file:
            body = body[:12] + data[at + 31:at + 32] + body[13:]
        fields = b.header_fields(data[at:at + 19])
        ev = b.event(type_code, body, at=at, server_id=server_id, timestamp=fields["timestamp"], flags=fields["flags"])
        assert b.HEADER.unpack_from(ev)[4] == end
        assert int.from_bytes(ev[-4:], "little") == crc
        assert ev == data[at:end]


def test_a_written_file_reads_back(tmp_path):
    """A file of the writer (FDE, QUERY, TABLE_MAP, WRITE_ROWS v2, XID): every CRC32 and next
    position right by the reference; vecbinlog reads the row the builder was given."""
    w = b.BinlogWriter()
    w.add(2, b.query_body("BEGIN", "shop"))
    w.add(19, b.table_map_body(7, "shop", "t", [3, 15], [b"", (40).to_bytes(2, "little")], b.bitmap([False, True]),
                               optional=[(2, b.packed(255))]))  # DEFAULT_CHARSET utf8mb4_0900_ai_ci
    image = b.row_image([(-5).to_bytes(4, "little", signed=True), b.prefixed(b"hello", 1)])
    w.add(30, b.rows_body(7, 2, image, extra=b""))
    w.add(16, b.xid_body(42))
    data = w.bytes()
    r = ref.decode_bytes(data)
    assert r.crc_checked == len(r.events) and not r.crc_mismatches
    assert [e.log_pos for e in r.events] == [e.pos + e.size for e in r.events]
    (rows,) = r.rows_events
    assert rows.images == [[(-5).to_bytes(4, "little", signed=True), b"hello"]]
    path = tmp_path / "built.000001"
    path.write_bytes(data)
    table = vecbinlog.read_table(path, "shop.t")
    assert table.column("@1").to_pylist() == [-5] and table.column("@2").to_pylist() == ["hello"]
    assert table.column("_xid").to_pylist() == [42]
