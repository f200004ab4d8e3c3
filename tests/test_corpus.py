"""Every file of the shared corpus, decoded by vecbinlog and by the row-at-a-time reference
decoder in tests/support/reference.py (written from the server sources, independently):
the same tables, the same row images in the same order, the same values byte for byte."""

from __future__ import annotations

import datetime as dt
import struct
import warnings
from decimal import Decimal

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.collations import decode_text

from .conftest import CORPUS, corpus_path
from .support import reference as ref
from .support.corpus import FILES as LISTED
from .support.corpus import ROWS_EVENT_TYPES, corpus_names
from .support.jsontext import JsonText, apply_json_diffs, loads, parse_binary, same_json
from .support.manifest import manifest_rows

#: Files that must fail, and how (the reason is documented in the README).
EXPECTED_ERRORS: dict[str, type[Exception]] = {
    # 14 bytes: the magic and a cut header
    "blackbeam__rust_mysql_common/binlog_truncated_event.000001": vecbinlog.TruncatedError,
    # no FORMAT_DESCRIPTION_EVENT: a fragment starting mid-stream
    "polardb__polardbx-cdc/mysql_bin.19_1": vecbinlog.NotABinlogError,
    # pre-GA 5.2 development tree with permuted event type codes
    "blackbeam__rust_mysql_common/ver_5_1-wl2325_r.001": vecbinlog.UnsupportedVersionError,
    "blackbeam__rust_mysql_common/ver_5_1-wl2325_s.001": vecbinlog.UnsupportedVersionError,
    # MariaDB 10.0 TIMESTAMP(3) in its pre-10.1 format: the TABLE_MAP gives no precision,
    # so the value size is unknowable from the binlog (mariadb-binlog prints nothing either)
    "pingcap__tiflow/mysql-bin.000001": vecbinlog.MalformedEventError,
}
#: Files whose last event is cut: decoded up to it, with a TruncatedWarning.
TRUNCATED = {
    "blackbeam__rust_mysql_common/binlog_truncated_prev_gtid_event.000001",
    "polardb__polardbx-cdc/mysql_bin.1",
}

#: Files with a corrupt statement in a QUERY_EVENT (a damaged relay log): the rows around it
#: decode; the statement is passed over with a MalformedEventWarning.
CORRUPT_QUERY = {"blackbeam__rust_mysql_common/corrupt-relay-bin.000624"}
#: Files whose decoding warns (DecodeWarning), and what the warning must say.
EXPECTED_WARNINGS = {
    # MINIMAL before images: the partial JSON updates cannot be applied (tests/decode/test_partial_json.py)
    "blackbeam__rust_mysql_common/json.binlog.000001": r"6 partial JSON update\(s\) of column '@2' could not be applied",
}

FILES = corpus_names()


def test_corpus_is_the_listed_one():
    """The corpus holds the 111 files tests/support/corpus.py names (the tests are parametrized
    by it), of those sizes, each a binlog (the magic), with rows events as the MANIFEST counts."""
    rows = manifest_rows()
    found = {p.relative_to(CORPUS).as_posix(): p for p in corpus_path("MANIFEST.md").parent.rglob("*")
             if p.is_file() and p.name != "MANIFEST.md"}
    assert sorted(found) == FILES and len(FILES) == 111 and set(rows) == set(FILES)
    for name, p in found.items():
        has_rows = any(t in rows[name]["counts"] for t in ROWS_EVENT_TYPES)
        assert (p.stat().st_size, has_rows) == LISTED[name], name
        assert p.read_bytes()[:4] == b"\xfebin", name


def _read_all(path):
    # ddl=False: the reference decoder names columns as the binlog does (the names the DDL in
    # these files gives are checked by test_corpus_ddl_names)
    with vecbinlog.open(path, ddl=False) as log:
        tables = log.read_all()
        return tables, log.info(rows=True), {name: log.table_maps(name)[-1] for name in tables}


def _expected_value(raw: bytes, field: pa.Field, spec):
    t = field.type
    mysql_type = field.metadata.get(b"mysql_type")
    if mysql_type == b"NEWDECIMAL":
        return Decimal(ref.decode_decimal(raw, t.precision, t.scale))
    if mysql_type == b"BIT":
        return int.from_bytes(raw, "big")
    if mysql_type in (b"ENUM", b"SET"):
        number = int.from_bytes(raw, "little")
        if pa.types.is_dictionary(t):  # ENUM with labels: entry 0 is '', MySQL's invalid value
            return ["", *(v.decode() for v in spec.enum_values)][number]
        if pa.types.is_list(t):  # SET with labels: the members whose bits are set
            return [v.decode() for k, v in enumerate(spec.set_values) if number >> k & 1]
        return number
    if mysql_type == b"JSON":  # the text must parse to what an independent reading of the binary gives
        return JsonText(raw)
    if mysql_type == b"GEOMETRY":
        return {"srid": int.from_bytes(raw[:4], "little"), "wkb": raw[4:]}
    if mysql_type == b"VECTOR":
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if mysql_type in _TEMPORAL:
        return _expected_temporal(raw, mysql_type, spec.meta)
    if pa.types.is_integer(t):
        if mysql_type == b"YEAR":
            return 0 if raw[0] == 0 else raw[0] + 1900
        return ref.decode_int(raw, signed=pa.types.is_signed_integer(t))
    if pa.types.is_floating(t):
        return struct.unpack("<f" if len(raw) == 4 else "<d", raw)[0]
    if pa.types.is_string(t):
        return decode_text(raw, field.metadata[b"mysql_charset"].decode())
    assert pa.types.is_binary(t), t
    if mysql_type == b"STRING" and spec.collation == 63:  # BINARY(n): SELECT returns it 0x00-padded to n
        return raw.ljust(spec.max_length, b"\0")
    return raw


_TEMPORAL = {b"DATE", b"NEWDATE", b"DATETIME", b"DATETIME2", b"TIMESTAMP", b"TIMESTAMP2", b"TIME", b"TIME2"}


def _expected_temporal(raw: bytes, mysql_type: bytes, meta: int):
    """The Python value of a temporal column with invalid_dates="null" (None for zero dates),
    one value at a time: the reference's decoders for the 5.6 formats, the old formats spelled out."""
    if mysql_type in (b"DATE", b"NEWDATE"):
        v = int.from_bytes(raw, "little")
        y, m, d = v >> 9, v >> 5 & 15, v & 31
        return dt.date(y, m, d) if m and d else None
    if mysql_type in (b"DATETIME", b"DATETIME2"):
        if mysql_type == b"DATETIME":
            ymd, hms = divmod(int.from_bytes(raw, "little"), 1_000_000)
            y, m, d, hh, mi, ss, us = ymd // 10000, ymd // 100 % 100, ymd % 100, hms // 10000, hms // 100 % 100, hms % 100, 0
        else:
            y, m, d, hh, mi, ss, us = ref.decode_datetime2(raw, meta)
        return dt.datetime(y, m, d, hh, mi, ss, us) if m and d else None
    if mysql_type in (b"TIMESTAMP", b"TIMESTAMP2"):
        sec, us = (int.from_bytes(raw, "little"), 0) if mysql_type == b"TIMESTAMP" else ref.decode_timestamp2(raw, meta)
        return dt.datetime.fromtimestamp(sec, dt.timezone.utc) + dt.timedelta(microseconds=us) if sec else None
    if mysql_type == b"TIME":
        v = int.from_bytes(raw, "little", signed=True)
        a = abs(v)
        td = dt.timedelta(hours=a // 10000, minutes=a // 100 % 100, seconds=a % 100)
        return -td if v < 0 else td
    neg, hh, mi, ss, us = ref.decode_time2(raw, meta)
    td = dt.timedelta(hours=hh, minutes=mi, seconds=ss, microseconds=us)
    return -td if neg else td


def _change(ev, k: int) -> str:
    return {"insert": "insert", "delete": "delete"}.get(ev.kind) or ("update_preimage" if k % 2 == 0 else "update_postimage")


@pytest.mark.parametrize("name", FILES)
def test_corpus_file_matches_reference(name):
    path = corpus_path(name)
    if name in EXPECTED_ERRORS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", vecbinlog.TruncatedWarning)
            with pytest.raises(EXPECTED_ERRORS[name]) as err:
                _read_all(path)
        assert err.value.path == str(path)
        assert err.value.offset is not None
        return
    if name in TRUNCATED:
        with pytest.warns(vecbinlog.TruncatedWarning):
            tables, info, maps = _read_all(path)
        assert info["files"][0]["stopped_at"] is not None
    elif name in CORRUPT_QUERY:
        with pytest.warns(vecbinlog.MalformedEventWarning, match="offset 91204: QUERY_EVENT"):
            tables, info, maps = _read_all(path)
    elif name in EXPECTED_WARNINGS:
        with pytest.warns(vecbinlog.DecodeWarning, match=EXPECTED_WARNINGS[name]):
            tables, info, maps = _read_all(path)
        assert info["files"][0]["stopped_at"] is None
    else:
        tables, info, maps = _read_all(path)
        assert info["files"][0]["stopped_at"] is None

    r = ref.decode_file(path, strict=False)
    assert sum(info["files"][0]["events"].values()) == len(r.events)
    expected: dict[str, list[tuple[ref.RefRowsEvent, int, list]]] = {}
    for ev in r.rows_events:
        assert ev.images is not None
        for k, image in enumerate(ev.images):
            expected.setdefault(f"{ev.db}.{ev.table}", []).append((ev, k, image))
    assert sorted(tables) == sorted(expected)
    # info() accounts for every row image, by change type, as the reference counts them
    counted = {
        t: {c: sum(1 for ev, k, _ in imgs if _change(ev, k) == c) for c in ("insert", "update_preimage", "update_postimage", "delete")}
        for t, imgs in expected.items()
    }
    assert {t: {c: n for c, n in v.items() if n} for t, v in counted.items()} == info["files"][0]["row_images_by_table"]
    for table, images in expected.items():
        got = tables[table]
        assert got.num_rows == len(images), table
        cols = got.schema.names[: len(images[0][2])]
        rows = got.to_pylist()
        for row, (ev, k, image) in zip(rows, images):
            assert row["_log_pos"] == ev.pos
            assert row["_payload_offset"] == ev.inner
            assert row["_change_type"] == _change(ev, k)
            assert row["_event_row"] == (k // 2 if ev.kind == "update" else k)
            partial = [(col, raw) for col, raw in zip(cols, image) if isinstance(raw, ref.PartialJson)]
            if "_json_diffs" in row:  # tables with a JSON column: the diffs of this image, in column order
                assert [(d["column"], d["operation"], d["path"]) for d in row["_json_diffs"]] == [
                    (col, ("REPLACE", "INSERT", "REMOVE")[op], path) for col, raw in partial for op, path, _ in raw.diffs
                ]
                values = [v for _, raw in partial for _, _, v in raw.diffs]
                assert [d["value"] for d in row["_json_diffs"]] == [None if v is None else JsonText(v) for v in values]
            else:
                assert not partial
            for c, (col, raw) in enumerate(zip(cols, image)):
                if isinstance(raw, ref.PartialJson):
                    before = ev.images[k - 1][c]  # the UPDATE's before image
                    if isinstance(before, bytes):  # applied: the full new document
                        assert same_json(apply_json_diffs(parse_binary(before), raw.diffs), loads(row[col]))
                    else:  # not in the binlog: absent, with its diffs in _json_diffs
                        assert row[col] is None and col in row["_absent"], (table, ev.pos, col)
                elif raw is ref.ABSENT:
                    assert row[col] is None and col in row["_absent"], (table, ev.pos, col)
                elif raw is None:
                    assert row[col] is None and col not in row["_absent"], (table, ev.pos, col)
                else:
                    spec = maps[table].columns[c]
                    assert row[col] == _expected_value(raw, got.schema.field(col), spec), (table, ev.pos, col)


def test_corpus_ddl_names():
    """The DDL in a corpus file names its columns (the file was written without COLUMN_NAME
    metadata; the CREATE TABLE text of its QUERY event says json_col)."""
    path = corpus_path("blackbeam__rust_mysql_common/json.binlog.000001")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.DecodeWarning)
        with vecbinlog.open(path) as log:
            creates = [i for i in log.events().column("info").to_pylist() if i and "CREATE TABLE" in i.upper()]
            names = log.read_table("mysql.t").schema.names
    assert creates and "json_col" in creates[-1] and "json_col" in names
