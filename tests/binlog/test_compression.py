"""Compressed events (vecbinlog/binlog/compression.py) unpack to the reference decoder's events.

* MySQL TRANSACTION_PAYLOAD_EVENTs of the corpus: the unpacked events are the reference's
  payload events (type, size, header fields, offset inside the payload), each at the file
  offset of its payload event; the plain events around them are copied as they are.
* Payloads built here (tests/support/builder.py) from a written transaction, zstd and
  uncompressed: they unpack to those events byte for byte (without their checksums), and the
  file reads as the plain file does.
* MariaDB compressed events: the sample file (MariaDB 10.11) with every QUERY and rows event
  replaced by its compressed form (a zlib block, as log_bin_compress writes it) unpacks to
  the plain events byte for byte and reads as the plain file does.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import vecbinlog
from vecbinlog.binlog.compression import unpack_segment
from vecbinlog.binlog.file import BinlogFile

from ..conftest import DATA, corpus_path
from ..support import builder as b
from ..support import reference as ref

PAYLOAD_FILES = [
    "blackbeam__rust_mysql_common/transaction_compression.000001",
    "osheroff__mysql-binlog-connector-java/mysql-bin.compressed",
    "apecloud__mysql-binlog-connector-rust/mysql-bin.000057",
]
SAMPLE = DATA / "sample" / "mariadb-bin.000001"
#: plain type -> MariaDB compressed type (log_event.h: QUERY_COMPRESSED_EVENT = 165, the rows
#: events v1 166-168, v2 169-171)
MARIADB_COMPRESSED = {2: 165, 23: 166, 24: 167, 25: 168, 30: 169, 31: 170, 32: 171}


def unpacked(path) -> list[tuple[object, object]]:
    """(Unpacked or None, EventIndex) of every segment of the file."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.TruncatedWarning)
        with BinlogFile(path) as f:
            for seg in f.segments(segment_bytes=1 << 30):
                u = unpack_segment(seg.src, seg.index)
                out.append((u[0], u[1]) if u else (None, seg.index))
    return out


def event_bytes(src, index, i: int) -> bytes:
    return bytes(src.buf[int(index.offset[i]): int(index.offset[i] + index.event_size[i])])


@pytest.mark.parametrize("name", PAYLOAD_FILES)
def test_transaction_payloads_unpack_to_the_references_events(name):
    path = corpus_path(name)
    data = path.read_bytes()
    r = ref.decode_bytes(data)
    ((src, index),) = unpacked(path)
    inner = index.inner >= 0
    got = [(int(index.pos[i]), int(index.inner[i]), int(index.type_code[i]), int(index.event_size[i]),
            int(index.timestamp[i]), int(index.server_id[i]), int(index.log_pos[i]), int(index.flags[i]))
           for i in np.flatnonzero(inner)]
    want = [(pos, at, e.type, e.size, e.timestamp, e.server_id, e.log_pos, e.flags) for pos, at, e in r.payload_events]
    assert got == want and want
    # no checksum inside a payload: the body ends with the event
    assert (index.body_end[inner] == index.offset[inner] + index.event_size[inner]).all()
    # the other events: the file's, where they are in the file, as they are
    plain = [e for e in r.events if e.logical_type != ref.TRANSACTION_PAYLOAD_EVENT]
    assert index.pos[~inner].tolist() == [e.pos for e in plain]
    for i, e in zip(np.flatnonzero(~inner), plain):
        assert event_bytes(src, index, i) == data[e.pos:e.pos + e.size]
    # what the reference decodes inside the payloads (TABLE_MAPs, rows) reads back the same
    inner_rows = [e for e in r.rows_events if e.inner is not None]
    assert inner_rows and {(e.pos, e.inner) for e in inner_rows} <= set(zip(index.pos.tolist(), index.inner.tolist()))


def transaction(writer: b.BinlogWriter) -> list[tuple[int, bytes]]:
    """A transaction of a table shop.t (INT, VARCHAR): BEGIN, TABLE_MAP, WRITE_ROWS, XID,
    as (type, body)."""
    tm = b.table_map_body(7, "shop", "t", [3, 15], [b"", (40).to_bytes(2, "little")], b.bitmap([False, True]),
                          optional=[(2, b.packed(255))])
    images = b"".join(b.row_image([(i).to_bytes(4, "little"), b.prefixed(f"row {i}".encode(), 1)]) for i in range(5))
    return [(2, b.query_body("BEGIN", "shop")), (19, tm), (30, b.rows_body(7, 2, images, extra=b"")), (16, b.xid_body(9))]


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_built_payload_unpacks_to_its_events(tmp_path, compression):
    plain = b.BinlogWriter()
    for t, body in transaction(plain):
        plain.add(t, body)
    packed = b.BinlogWriter()
    inner = b"".join(b.event(t, body, checksum=False, server_id=1) for t, body in transaction(packed))
    at = packed.add(ref.TRANSACTION_PAYLOAD_EVENT, b.transaction_payload_body(inner, compression=compression))
    paths = []
    for name, w in (("plain", plain), ("packed", packed)):
        paths.append(tmp_path / f"{name}.000001")
        paths[-1].write_bytes(w.bytes())
    r = ref.decode_bytes(packed.bytes())
    assert [e.type for _, _, e in r.payload_events] == [2, 19, 30, 16]
    ((src, index),) = unpacked(paths[1])
    unpacked_events = [event_bytes(src, index, i) for i in np.flatnonzero(index.inner >= 0)]
    assert b"".join(unpacked_events) == inner
    assert (index.pos[index.inner >= 0] == at).all()
    tables = [vecbinlog.read_table(p, "shop.t") for p in paths]
    keep = ["@1", "@2", "_change_type", "_event_row", "_xid"]
    assert tables[0].select(keep).equals(tables[1].select(keep))
    assert tables[1].column("_log_pos").to_pylist() == [at] * 5


def mariadb_compressed_file(data: bytes) -> bytes:
    """The file with each QUERY and rows event replaced by MariaDB's compressed event: the
    same header (type changed), post-header and (rows) bitmaps, then the rest compressed."""
    fmt = ref.format_of(data)
    out = bytearray(data[:4])
    for e in ref.walk_events(data)[0]:
        original = data[e.offset:e.offset + e.size]
        code = MARIADB_COMPRESSED.get(e.type)
        if code is None or (e.type == 2 and e.offset == 4):
            out += original
            continue
        if e.type == 2:  # post-header (status length at 11), status, db, NUL, then the statement
            status, db = int.from_bytes(original[30:32], "little"), original[27]
            keep = 19 + 13 + status + db + 1
        else:
            keep = ref.read_rows_header(data, fmt, e).images_at - e.offset
        rest = original[keep:len(original) - 4]
        body = original[19:keep] + b.mariadb_compressed_block(rest)
        out += b.event(code, body, **b.header_fields(original))
    return bytes(out)


def test_mariadb_compressed_events_unpack_to_the_plain_ones(tmp_path):
    data = SAMPLE.read_bytes()
    squeezed = mariadb_compressed_file(data)
    path = tmp_path / "mariadb-bin.000001"
    path.write_bytes(squeezed)
    plain = ref.walk_events(data)[0]
    packed = ref.walk_events(squeezed)[0]
    changed = [k for k, (p, q) in enumerate(zip(plain, packed)) if p.type != q.type]
    assert len(changed) == 9  # 3 statements after the first, 6 rows events
    segments = unpacked(path)
    src, index = segments[0]
    assert len(index) == len(plain)
    for k in range(len(plain)):
        e = plain[k]
        got = event_bytes(src, index, k)
        if k in changed:  # the plain event, without its checksum
            assert int(index.pos[k]) == packed[k].offset
            want = bytearray(data[e.offset:e.offset + e.size - 4])
            want[9:13] = (e.size - 4).to_bytes(4, "little")
            assert got == bytes(want)
            assert index.body_end[k] == index.offset[k] + index.event_size[k]
        else:
            assert got == data[e.offset:e.offset + e.size]
    with vecbinlog.open(SAMPLE) as a, vecbinlog.open(path) as c:
        ta, tc = a.read_all(), c.read_all()
    assert list(ta) == list(tc)
    for name in ta:
        own = [n for n in ta[name].column_names if not n.startswith("_")] + ["_change_type", "_event_row", "_xid"]
        assert ta[name].select(own).equals(tc[name].select(own)), name

