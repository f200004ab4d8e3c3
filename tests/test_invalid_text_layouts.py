"""Text not valid in its charset, in a table whose layout changes (issue 53, item 3).

A regression-run binlog with sjis columns, which ``mariadb-binlog`` prints whole, made
``read_all()`` raise UnsupportedError ("column 'a' is string in some rows of _schema_version 23
and binary in others"): a column that was UTF-8 text in some layouts and sjis with a value not
valid in it in others (an ALTER ... MODIFY between) had its sjis rows kept as bytes and its
UTF-8 rows left text. The rule (docs/types.md): ``read_table``, ``read_all`` and ``snapshot``
give a column with a value not valid in its charset as binary in every row, whatever the
layout, each value the bytes the binlog holds (sjis bytes in the rows of its sjis layouts,
UTF-8 in those of its utf8mb4 ones), with one DecodeWarning; the others as text in every row;
``iter_batches`` each batch as it is; and none of it depends on ``segment_bytes``,
``batch_rows``, ``threads`` or which layout the invalid values are in.

The workload (tests/support/badtext.py) writes such a table on a real MariaDB server: sjis,
ujis and utf8mb4 columns whose values are valid first and not valid in their charset from a
later layout on (ALTER TABLE ... ADD COLUMN between), columns whose charset an ALTER ... MODIFY
changes (sjis to utf8mb4, utf8mb4 to sjis), over five files. The truth is the server's: every
row image's bytes as ``mariadb-binlog -vv`` prints them, in log order, and the table after each
phase as ``SELECT HEX(...)`` gives it.
"""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import vecbinlog

from .support.badtext import (
    BINARY,
    CHARSETS,
    COLUMNS,
    DB,
    FILE_PHASES,
    LAYOUTS,
    assert_images,
    expected,
    invalid_counts,
    run_badtext,
    valid,
    vv_images,
)
from .support.builder import fix_crcs

pytestmark = pytest.mark.mariadb

TABLE = f"{DB}.r"
#: one batch per layout (its runs carried from segment to segment, and from file to file), every
#: rows event in a segment of its own, runs carried over segments of 4 KB, batches of 7 rows
READS = [{}, {"segment_bytes": 1}, {"segment_bytes": 4096}, {"batch_rows": 7},
         {"segment_bytes": 1, "batch_rows": 7, "threads": 1}]


def _ids(kw: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in kw.items()) or "defaults"


@pytest.fixture(scope="module", params=["FULL", "NO_LOG"])
def workload(request, mariadb_server):
    """The workload with binlog_row_metadata=FULL, and NO_LOG (names and charsets from the
    log's DDL alone)."""
    return run_badtext(mariadb_server, request.param)


def _decode_warnings(record) -> dict[str, str]:
    """The DecodeWarnings of a read, by the column they name (one each), each raised where the
    read was called."""
    out = {}
    for w in record:
        if issubclass(w.category, vecbinlog.DecodeWarning):
            m = re.search(r"column '(\w+)'", str(w.message))
            assert m and m.group(1) not in out, str(w.message)
            assert w.filename == __file__, (w.filename, str(w.message))
            out[m.group(1)] = str(w.message)
    return out


def _types(t: pa.Table) -> dict[str, pa.DataType]:
    """The type of each text column of ``t``."""
    return {n: t.schema.field(n).type for n in CHARSETS}


def _want(binary: set[str] = BINARY) -> dict[str, pa.DataType]:
    """The types of the text columns when those of ``binary`` are bytes."""
    return {n: pa.binary() if n in binary else pa.string() for n in CHARSETS}


@pytest.mark.parametrize("kw", READS, ids=_ids)
def test_read_table_is_every_image_in_bytes_or_text(workload, kw):
    """Each column with a value not valid in its charset (s and j from a later layout on, m in
    its sjis layouts and then utf8mb4, w in utf8mb4 and then sjis) is binary in every row, each
    value the bytes mariadb-binlog prints (sjis bytes in the sjis layouts, UTF-8 in the
    utf8mb4 ones); the others (g, v over sjis and utf8mb4, u) text in every row. One column per
    name: a change of charset is no change of type. One DecodeWarning per column, counting
    the values not valid in their layout's charset."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with vecbinlog.open(workload["files"], **kw) as log:
            t = log.read_table(TABLE)
    assert t.column_names[: len(COLUMNS)] == COLUMNS and t.column_names[len(COLUMNS)] == "_change_type"
    assert _types(t) == _want()
    assert t.schema.field("m").metadata[b"mysql_charset"] == b"utf8mb4"  # the last layout's
    assert_images(t, workload["images"])
    said = _decode_warnings(record)
    counts = invalid_counts(workload["images"])
    assert sorted(said) == sorted(counts) == sorted(BINARY)
    for name, text in counts.items():
        assert f"{TABLE}: column '{name}' {text}: the column is binary in every row read" in said[name], said[name]
    assert "in the charset of its row's layout (_schema_version)" in said["m"]


@pytest.mark.parametrize("kw", [{}, {"segment_bytes": 1, "batch_rows": 7}], ids=_ids)
def test_read_all_is_read_table(workload, kw):
    """read_all gives each table as read_table does (the other table, o, whose rows are in
    the same transactions, sjis text valid in every row)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with vecbinlog.open(workload["files"], **kw) as log:
            tables = log.read_all()
    assert sorted(_decode_warnings(record)) == sorted(BINARY)
    assert list(tables) == [TABLE, f"{DB}.o"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.DecodeWarning)
        assert tables[TABLE].equals(vecbinlog.read_table(workload["files"], TABLE, **kw))
    assert_images(tables[TABLE], workload["images"])
    o = tables[f"{DB}.o"]
    assert o.schema.field("s").type == pa.string()
    assert dict(zip(o.column("id").to_pylist(), o.column("s").to_pylist())) == {
        i: v.decode("shift_jis") for i, v in workload["o"].items()}


def test_charsets_binary_reads_the_same_bytes(workload):
    """charsets= naming the columns binary (what the Spark source needs for them) gives every
    value as read_table gives it without, and no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", vecbinlog.DecodeWarning)
        t = vecbinlog.read_table(workload["files"], TABLE, charsets={TABLE: {n: "binary" for n in BINARY}})
    assert _types(t) == _want()
    assert_images(t, workload["images"])


def test_snapshot_at_every_phase_equals_select(workload):
    """The table replayed up to the end of each phase is the server's SELECT HEX(...) then:
    its columns with a value not valid in their charset as bytes (also before the phase that
    wrote the first: binary in every row read), the others as text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.DecodeWarning)
        with vecbinlog.open(workload["files"]) as log:
            for phase, mark in enumerate(workload["marks"]):
                got = log.snapshot(TABLE, until=mark["gtid"])
                assert _types(got) == _want()
                names = LAYOUTS[phase]
                rows = {r["id"]: {n: r[n] for n in names} for r in got.to_pylist()}
                want = {i: {n: expected(n, phase, v) for n, v in row.items()} for i, row in mark["rows"].items()}
                assert rows == want, phase


@pytest.mark.parametrize("kw", [{}, {"segment_bytes": 4096}, {"batch_rows": 7}], ids=_ids)
def test_iter_batches_gives_each_batch_as_it_is(workload, kw):
    """Each batch of iter_batches stands alone: a column is text in a batch whose values are all
    valid in the charset of its layout, its bytes in a batch that holds one that is not (the
    batches of one layout, of one column, differ so), a utf8mb4 layout's text; the rows are
    those of read_table, in order. With the defaults, one batch holds the rows of a layout over
    two files (a run carried from file to file)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with vecbinlog.open(workload["files"], **kw) as log:
            batches = list(log.iter_batches(TABLE))
    assert sorted(_decode_warnings(record)) == sorted(BINARY)
    seen = set()  # (phase, column, whether a batch's values are all valid)
    done = 0
    for batch in batches:
        images = workload["images"][done : done + batch.num_rows]
        phase = images[0][0]
        assert batch.column("_schema_version").to_pylist() == [phase] * batch.num_rows
        binary = set()
        for name in LAYOUTS[phase]:
            if name in CHARSETS:
                ok = all(valid(values.get(name), CHARSETS[name][phase]) for _, _, values in images)
                binary |= set() if ok else {name}
                seen.add((phase, name, ok))
        assert {n: batch.schema.field(n).type for n in LAYOUTS[phase] if n in CHARSETS} == {
            n: t for n, t in _want(binary).items() if n in LAYOUTS[phase]}
        assert_images(pa.Table.from_batches([batch]), images, binary)
        done += batch.num_rows
    assert done == len(workload["images"])
    assert {name for _, name, ok in seen if not ok} == BINARY and {name for _, name, ok in seen if ok} == set(CHARSETS)
    if kw.get("batch_rows"):  # text and bytes in batches of one layout
        assert {(2, "s"), (2, "j"), (2, "m"), (3, "w")} <= {(p, n) for p, n, ok in seen if ok and (p, n, False) in seen}
    if not kw:
        assert any(len(set(b.column("_log_file").to_pylist())) > 1 for b in batches)


def test_files_with_no_invalid_value_read_as_text(workload):
    """The files of phases 0 and 1 hold no value that is not valid: every text column is text
    in every row (what a column is depends on the rows read), and nothing is warned of."""
    files = workload["files"][:3]
    with warnings.catch_warnings():
        warnings.simplefilter("error", vecbinlog.DecodeWarning)
        t = vecbinlog.read_table(files, TABLE)
    assert _types(t) == _want(set())
    assert_images(t, [im for im in workload["images"] if im[0] <= 1], set())


def test_utf8_not_valid_in_a_later_layout(workload, tmp_path):
    """v is sjis text, valid, in phases 0-2 and utf8mb4 in phase 3: one byte of a phase-3 value
    made 0xFF (the server gives a utf8mb4 column no invalid UTF-8; the CRC32 recomputed) makes
    v binary in every row, its sjis rows their sjis bytes (not transcoded), and the value as the
    changed file holds it (mariadb-binlog's print of it); the batch decoder warns of it."""
    files = [Path(shutil.copy(f, tmp_path / f.name)) for f in workload["files"]]
    raw = bytearray(files[-1].read_bytes())
    value = "v漢字テキスト96😀".encode()  # row 96's v in phase 3 (its name, TEXTS[96 % 7], the id, 😀 as 96 % 3 == 0)
    at = raw.find(bytes([len(value)]) + value)  # in its rows event (after its length), not in the statement's text
    assert at > 0 and raw.count(value) == 4  # (the INSERT's text, its image, and the touch's two)
    raw[at + 1] = 0xFF
    files[-1].write_bytes(fix_crcs(raw))
    images = vv_images(files, FILE_PHASES)
    assert sum(values.get("v") is not None and b"\xff" in values["v"] for _, _, values in images) == 1
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for kw in ({}, {"batch_rows": 7}):
            with vecbinlog.open(files, **kw) as log:
                t = log.read_table(TABLE)
            assert _types(t) == _want(BINARY | {"v"}), kw
            assert_images(t, images, BINARY | {"v"})
    said = [str(w.message) for w in record if "column 'v'" in str(w.message)]
    assert said and all("(utf8mb4) holds 1 value(s) whose bytes are not valid utf8mb4" in m for m in said), said
