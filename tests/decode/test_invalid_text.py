"""Text whose bytes do not transcode never costs a table (issue 37, item 5).

A MariaDB server writes every byte pair into a column of each charset (a table per charset, a
row per pair, the value the server stores: ``INSERT IGNORE`` keeps what is well-formed for it).
Some of those values are valid for the server but not for Python's codec (cp932's and gbk's
unassigned codes, cp1251's 0x98...). ``read_table`` must give every row, the column text when
every value decodes and binary (each value's bytes) otherwise, whatever ``batch_rows`` cuts
the rows into, with one DecodeWarning per column that counts the values. The truth is the
server's ``SELECT HEX(c)``, decoded with Python's codec for the charset.
"""

from __future__ import annotations

import re
import warnings

import pyarrow as pa
import pytest

import vecbinlog

#: MySQL charset -> Python's codec for it
CHARSETS = {"cp932": "cp932", "sjis": "shift_jis", "gbk": "gbk", "cp1251": "cp1251", "utf16": "utf-16-be"}
PAIRS = 1 << 16
CHUNK = 4096


@pytest.fixture(scope="module")
def byte_pairs(mariadb_server):
    """(binlog path, {charset: [bytes stored, by row id]}) of the tables bp.t_<charset>."""
    s = mariadb_server
    sql = ["DROP DATABASE IF EXISTS bp", "CREATE DATABASE bp", "USE bp", "SET SESSION sql_mode = ''"]
    for cs in CHARSETS:
        sql.append(f"CREATE TABLE t_{cs} (id INT PRIMARY KEY, c VARCHAR(4) CHARACTER SET {cs})")
        for lo in range(0, PAIRS, CHUNK):
            rows = ", ".join(f"({i}, X'{i:04x}')" for i in range(lo, lo + CHUNK))
            sql.append(f"INSERT IGNORE INTO t_{cs} VALUES {rows}")
    path = s.capture_binlog(*sql)
    stored = {cs: [bytes.fromhex(h) if h is not None else None
                   for _, h in s.query(f"SELECT id, HEX(c) FROM bp.t_{cs} ORDER BY id")] for cs in CHARSETS}
    return path, stored


def _invalid(values: list[bytes | None], codec: str) -> int:
    """How many values Python's codec refuses."""
    bad = 0
    for v in values:
        try:
            v is None or v.decode(codec)
        except UnicodeDecodeError:
            bad += 1
    return bad


def _decode_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, vecbinlog.DecodeWarning)]


@pytest.mark.mariadb
@pytest.mark.parametrize("batch_rows", [1000, 7919, 262144])
@pytest.mark.parametrize("cs", list(CHARSETS))
def test_every_byte_pair_read_whole(byte_pairs, cs, batch_rows):
    path, stored = byte_pairs
    values, codec = stored[cs], CHARSETS[cs]
    bad = _invalid(values, codec)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        t = vecbinlog.read_table(path, f"bp.t_{cs}", batch_rows=batch_rows)
    assert t.num_rows == PAIRS and t.column("id").to_pylist() == list(range(PAIRS))
    notes = _decode_warnings(record)
    if bad:
        assert t.schema.field("c").type == pa.binary()
        assert t.column("c").to_pylist() == values  # every byte of every value
        assert len(notes) == 1, notes
        m = re.search(rf"bp\.t_{cs}: column 'c' \({cs}\) holds (\d+) value\(s\) not valid {cs}", notes[0])
        assert m and int(m.group(1)) == bad, notes[0]
        assert record[0].filename == __file__  # the warning points at the call above
    else:
        assert t.schema.field("c").type == pa.string()
        assert t.column("c").to_pylist() == [None if v is None else v.decode(codec) for v in values]
        assert notes == []
    assert t.schema.field("c").metadata[b"mysql_charset"] == cs.encode()


@pytest.mark.mariadb
def test_the_charsets_written_have_invalid_values(byte_pairs):
    """What the other tests rely on: the server accepts values Python's codecs refuse (all
    but utf16, whose server-side checks match Python's), among many it accepts."""
    _, stored = byte_pairs
    bad = {cs: _invalid(stored[cs], codec) for cs, codec in CHARSETS.items()}
    assert all(bad[cs] > 0 for cs in ("cp932", "sjis", "gbk", "cp1251")), bad
    assert all(bad[cs] < PAIRS // 2 for cs in CHARSETS), bad


@pytest.mark.mariadb
@pytest.mark.parametrize("cs", ["cp932", "gbk"])
def test_batches_of_a_stream_are_text_or_bytes_each(byte_pairs, cs):
    """iter_batches gives each batch as it is: text when its values decode, its bytes when
    not (valid and invalid values fall in different batches of 1000 rows), one warning."""
    path, stored = byte_pairs
    values, codec = stored[cs], CHARSETS[cs]
    kinds, done = set(), 0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with vecbinlog.open(path, batch_rows=1000) as log:
            for batch in log.iter_batches(f"bp.t_{cs}"):
                col, want = batch.column("c"), values[done : done + batch.num_rows]
                kinds.add(col.type)
                if col.type == pa.string():
                    want = [None if v is None else v.decode(codec) for v in want]
                assert col.to_pylist() == want
                done += batch.num_rows
    assert kinds == {pa.string(), pa.binary()} and done == PAIRS
    notes = _decode_warnings(record)
    assert len(notes) == 1 and f"holds {_invalid(values, codec)} value(s)" in notes[0], notes
    assert record[0].filename == __file__


@pytest.mark.mariadb
def test_read_all_settles_each_table(byte_pairs):
    path, stored = byte_pairs
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with vecbinlog.open(path, tables="bp.*", batch_rows=5000) as log:
            tables = log.read_all()
    for cs, codec in CHARSETS.items():
        t = tables[f"bp.t_{cs}"]
        bad = _invalid(stored[cs], codec)
        assert t.schema.field("c").type == (pa.binary() if bad else pa.string()), cs
    names = [re.search(r"bp\.t_(\w+): column", m).group(1) for m in _decode_warnings(record)]
    assert sorted(names) == sorted(cs for cs, codec in CHARSETS.items() if _invalid(stored[cs], codec))
