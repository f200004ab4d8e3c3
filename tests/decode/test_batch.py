"""The record-batch assembly (vecbinlog/decode/batch.py, ``build_batch``) against the reference
decoder.

Row images are located here from the reference's decoding of corpus files (each column's raw
bytes as the reference reads them: fixed-width ones as (n, width) arrays, length-prefixed
ones as positions in a buffer of their bytes), not by vecbinlog's walk, and assembled by
``build_batch``. The batch must hold the reference's rows: integers, floats, decimals and
strings equal to the reference's values of the raw bytes (integers read with the signedness
the table map gives), NULL and absent columns null, absent ones listed in ``_absent``, and
the metadata columns (change type, commit time, file, position, row in the event) those of
the reference's events and images. Decoding the columns in threads changes nothing.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

from vecbinlog.decode import batch as arrow
from vecbinlog.decode.batch import build_batch
from vecbinlog.decode.decoders import DecodeOptions
from vecbinlog.decode.rows import CHANGE_TYPES, RowImages
from vecbinlog.tables.table_map import TableMap, parse_table_map

from ..conftest import corpus_path
from ..support import reference as ref

FILES = [
    "blackbeam__rust_mysql_common/mariadb-bin.000001",
    "blackbeam__rust_mysql_common/mysql-enum-string-set.000001",
    "blackbeam__rust_mysql_common/minimal_row_metadata.000001",
    "blackbeam__rust_mysql_common/binlog-invisible-columns.000001",
    "blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",
    "osheroff__mysql-binlog-connector-java/mysql-bin.checksum-none",
    "osheroff__mysql-binlog-connector-java/mysql-bin.sakila",
    "zalora__binlog-parser/fixtures/mysql-bin.01",
    "github__gh-ost/mysql-bin.000066",
    "alibaba__canal/parse/mysql-bin.000001",
    "harubot__mysqlbinlog2/mysql-bin.000001",
    "rusuly__MySqlCdc/mysql-bin.000001",
    "blackbeam__rust_mysql_common/json.binlog.000001",
]
INTS = {ref.T_TINY, ref.T_SHORT, ref.T_INT24, ref.T_LONG, ref.T_LONGLONG}
FLOATS = {ref.T_FLOAT, ref.T_DOUBLE}
TEXTS = {ref.T_VARCHAR, ref.T_VAR_STRING, ref.T_STRING, ref.T_BLOB}


@lru_cache(maxsize=None)
def decoded(path) -> tuple[bytes, ref.RefBinlog]:
    data = path.read_bytes()
    return data, ref.decode_bytes(data)


def runs(path) -> list[tuple[ref.RefTableMap, list[ref.RefRowsEvent]]]:
    """Rows events (v1/v2, not PARTIAL_UPDATE_ROWS, not in payloads) by the TABLE_MAP in force."""
    _, r = decoded(path)
    in_force: dict[int, ref.RefTableMap] = {}
    groups: dict[int, tuple[ref.RefTableMap, list]] = {}
    rows = {e.pos: e for e in r.rows_events if e.inner is None and e.version > 0}
    for e in r.events:
        if e.pos in r.table_maps:
            in_force[r.table_maps[e.pos].table_id] = r.table_maps[e.pos]
        elif e.pos in rows and e.logical_type != ref.PARTIAL_UPDATE_ROWS_EVENT:
            tm = in_force[rows[e.pos].table_id]
            groups.setdefault(tm.pos, (tm, []))[1].append(rows[e.pos])
    return list(groups.values())


def table_map_of(path, tm: ref.RefTableMap) -> TableMap:
    """vecbinlog's TableMap of that event (the input build_batch takes with the images)."""
    data, r = decoded(path)
    fmt = r.formats[0]
    size = next(e.size for e in r.events if e.pos == tm.pos)
    return parse_table_map(np.frombuffer(data, np.uint8), tm.pos, tm.pos + 19, tm.pos + size - 4 * fmt.has_crc32,
                           fmt.post_header(ref.TABLE_MAP_EVENT), flavor="mariadb" if fmt.is_mariadb else "mysql",
                           server_major=int(re.match(r"\d*", fmt.server_version).group() or 0),
                           server_version=fmt.server_version)[1]


def images_of(path, tm: ref.RefTableMap, events: list[ref.RefRowsEvent], table_map: TableMap) -> RowImages:
    """RowImages of the reference's images of ``events``."""
    _, r = decoded(path)
    stamps = {e.pos: e.timestamp for e in r.events}
    rows = [(k, ev, image) for k, ev in enumerate(events) for image in ev.images]
    n, ncols = len(rows), tm.ncols
    number = [i for ev in events for i in range(len(ev.images))]
    change = [CHANGE_TYPES.index(("update_preimage", "update_postimage")[i % 2] if ev.kind == "update" else ev.kind)
              for (_, ev, _), i in zip(rows, number)]
    values = [[image[c] for _, _, image in rows] for c in range(ncols)]
    blob, fixed, var = bytearray(), {}, {}
    for c, column in enumerate(values):
        how, width = ref.value_storage(tm.column_types[c], tm.column_meta[c])
        if how == "fixed":
            fixed[c] = np.frombuffer(b"".join(v if isinstance(v, bytes) else bytes(width) for v in column),
                                     np.uint8).reshape(n, width).copy()  # writable, as the walk gives them
            continue
        starts, lengths = np.zeros(n, np.int64), np.zeros(n, np.int64)
        for i, v in enumerate(column):
            if isinstance(v, bytes):
                starts[i], lengths[i] = len(blob), len(v)
                blob += v
        var[c] = (starts, lengths)
    absent = np.array([[v is ref.ABSENT for v in column] for column in values], bool).reshape(ncols, n)
    return RowImages(
        table_map=table_map, file=SimpleNamespace(buf=np.frombuffer(bytes(blob) + bytes(8), np.uint8), path=str(path)),
        event_pos=np.array([ev.pos for _, ev, _ in rows], np.int64), event=np.array([k for k, _, _ in rows], np.int64),
        image_number=np.array(number, np.int64), image_start=np.zeros(n, np.int64), inner=np.full(n, -1, np.int64),
        timestamp=np.array([stamps[ev.pos] for _, ev, _ in rows], np.uint32), change=np.array(change, np.int8),
        event_row=np.array([i // 2 if ev.kind == "update" else i for (_, ev, _), i in zip(rows, number)], np.int32),
        valid=np.array([[isinstance(v, bytes) for v in column] for column in values], bool).reshape(ncols, n),
        absent=absent if absent.any() else None, fixed=fixed, var=var,
    )


def expected_value(t: int, meta: int, unsigned: bool | None, raw: bytes):
    """The reference's value of ``raw``, for the types whose values it reads; else ``...``."""
    if t in INTS:
        return ref.decode_int(raw, signed=not unsigned)
    if t in FLOATS:
        return ref.decode_float(raw)
    if t == ref.T_NEWDECIMAL:
        return Decimal(ref.decode_decimal(raw, meta >> 8, meta & 0xFF))
    return ...


def same_text(got, raw: bytes) -> bool:
    """A string column's value is the raw bytes decoded (utf8 or a single-byte charset), a
    binary column's the bytes themselves."""
    if isinstance(got, bytes):
        return got == raw
    return got.encode() == raw or got.encode("latin-1", "replace") == raw or got.encode("cp1252", "replace") == raw


@pytest.mark.parametrize("name", FILES)
def test_batches_hold_the_references_rows(name):
    path = corpus_path(name)
    checked = 0
    for tm, events in runs(path):
        table_map = table_map_of(path, tm)
        flavor = "mariadb" if decoded(path)[1].formats[0].is_mariadb else "mysql"
        batch, _ = build_batch(images_of(path, tm, events, table_map), DecodeOptions(flavor=flavor), path.name)
        rows = [(ev, i, image) for ev in events for i, image in enumerate(ev.images)]
        names = batch.schema.names[:tm.ncols]
        assert batch.num_rows == len(rows)
        for c, column_name in enumerate(names):
            got = batch.column(c).to_pylist()
            t, spec = tm.real_types[c], table_map.columns[c]
            for g, (_, _, image) in zip(got, rows):
                v = image[c]
                if not isinstance(v, bytes):
                    assert g is None, (column_name, v, g)
                    continue
                want = expected_value(t, tm.column_meta[c], spec.unsigned, v)
                if want is not ...:
                    assert g == want, (column_name, v, g, want)
                elif t in TEXTS and tm.column_types[c] in TEXTS:
                    assert same_text(g, v), (column_name, v, g)
            checked += 1
        meta = {f: batch.column(f).to_pylist() for f in ("_change_type", "_log_pos", "_event_row", "_absent",
                                                           "_log_file", "_commit_timestamp", "_payload_offset")}
        assert meta["_log_pos"] == [ev.pos for ev, _, _ in rows]
        assert meta["_change_type"] == [("update_preimage", "update_postimage")[i % 2] if ev.kind == "update"
                                        else ev.kind for ev, i, _ in rows]
        assert meta["_event_row"] == [i // 2 if ev.kind == "update" else i for ev, i, _ in rows]
        assert meta["_absent"] == [[names[c] for c in range(tm.ncols) if image[c] is ref.ABSENT] for _, _, image in rows]
        assert set(meta["_log_file"]) == {path.name} and set(meta["_payload_offset"]) == {None}
        stamps = {e.pos: e.timestamp for e in decoded(path)[1].events}
        assert [int(t.timestamp()) for t in meta["_commit_timestamp"]] == [stamps[ev.pos] for ev, _, _ in rows]
    assert checked


def test_threads_change_nothing(monkeypatch):
    """Columns decoded in two threads (every batch: the threshold set to one cell) give the
    same batch as one thread."""
    path = corpus_path("rusuly__MySqlCdc/mysql-bin.000001")
    for tm, events in runs(path):
        images = images_of(path, tm, events, table_map_of(path, tm))
        one, _ = build_batch(images, DecodeOptions(), path.name)
        monkeypatch.setattr(arrow, "THREADED_CELLS", 1)
        two, _ = build_batch(images, DecodeOptions(), path.name, threads=2)
        monkeypatch.undo()
        assert pa.Table.from_batches([one]).equals(pa.Table.from_batches([two]))
