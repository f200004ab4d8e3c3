"""Regressions from the coverage-guided fuzzer (bench/fuzz/fuzz_binlog.py, atheris).

Two kinds of tests:

* ``test_finding``: each input the fuzzer found that made vecbinlog raise something other
  than a :class:`vecbinlog.BinlogError` is kept, minimised, in ``tests/data/fuzz/<name>.bin``
  (the file exactly as the fuzz target wrote it to disk). Decoding it the way the target does
  must raise a ``BinlogError`` that says where (``.path``, ``.offset``). Open bugs are marked
  ``xfail(strict=True)`` so that they flip when fixed.
* ``test_seed``: the fuzzer's seed files decode without error, and what they decode to agrees
  with the reference decoder's walk of the 19-byte event headers (TABLE_MAP
  table ids and names, rows events' table ids): the same tables, and every table's rows come
  from exactly the rows events of that table. The row counts by change type are the ones
  ``mariadb-binlog -v`` prints for these files (``### INSERT``/``UPDATE``/``DELETE``; an UPDATE
  is two rows here), except for ``vector.binlog`` (MySQL 9, which mariadb-binlog cannot read).
"""

from __future__ import annotations

import collections
import warnings
from pathlib import Path

import pyarrow.compute as pc
import pytest

import vecbinlog

from .conftest import corpus_path
from .support import reference as ref

FUZZ_DATA = Path(__file__).resolve().parent / "data" / "fuzz"

#: name of a file in tests/data/fuzz (without .bin) -> None when fixed, else the xfail reason.
FINDINGS: dict[str, str | None] = {}


def decode_like_the_fuzzer(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with vecbinlog.open(path, verify_checksums=False) as log:
            log.read_all()
            log.events()
            log.info()


def _finding_params():
    for name, reason in sorted(FINDINGS.items()):
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_finding_params()))
def test_finding(name):
    path = FUZZ_DATA / f"{name}.bin"
    with pytest.raises(vecbinlog.BinlogError) as info:
        decode_like_the_fuzzer(path)
    err = info.value
    assert err.path is not None and Path(err.path).name == path.name
    assert err.offset is not None and 0 <= err.offset <= path.stat().st_size


def test_every_finding_file_is_listed():
    on_disk = {p.stem for p in FUZZ_DATA.glob("*.bin")} if FUZZ_DATA.exists() else set()
    assert on_disk == set(FINDINGS)


# ---------------------------------------------------------------------------------------
# The seeds, against an independent header walk.
# ---------------------------------------------------------------------------------------

HEADER = 19
TABLE_MAP = 19
#: WRITE/UPDATE/DELETE rows v1 (23-25), v2 (30-32), MariaDB compressed v1 (166-168) and v2 (169-171).
ROWS_TYPES = {23, 24, 25, 30, 31, 32, 166, 167, 168, 169, 170, 171}


def header_walk(data: bytes) -> tuple[dict[str, set[int]], int]:
    """({"db.table": {offsets of its rows events}}, number of complete events), from the
    reference decoder's header walk and TABLE_MAPs.

    Table ids are those of the TABLE_MAP in force when the rows event comes (a later TABLE_MAP
    may reuse an id). The id is 6 bytes, 4 when the FDE gives TABLE_MAP a post-header of 6.
    """
    assert data[:4] == b"\xfebin"
    events = ref.walk_events(data)[0]
    fmt = ref.format_of(data)
    id_len = 4 if fmt.post_header(TABLE_MAP) == 6 else 6
    names: dict[int, str] = {}
    out: dict[str, set[int]] = collections.defaultdict(set)
    for e in events:
        if e.type == TABLE_MAP:
            tm = ref.read_table_map(data, fmt, e)
            names[tm.table_id] = f"{tm.db}.{tm.table}"
        elif e.type in ROWS_TYPES:
            table_id = int.from_bytes(data[e.offset + HEADER : e.offset + HEADER + id_len], "little")
            out[names[table_id]].add(e.offset)
    return dict(out), len(events)


#: seed -> {table: {change type: rows}} (from mariadb-binlog -v, see the module docstring).
SEEDS = {
    "blackbeam__rust_mysql_common/mysql-enum-string-set.000001": {
        "mysql.t": {"insert": 1, "update_preimage": 1, "update_postimage": 1, "delete": 1}},
    "zalora__binlog-parser/fixtures/mysql-bin.01": {
        "test_db.buildings": {"insert": 2, "delete": 1},
        "test_db.rooms": {"insert": 5, "update_preimage": 2, "update_postimage": 2}},
    "harubot__mysqlbinlog2/mysql-bin.000001": {
        "mydb.my_table": {"insert": 6, "update_preimage": 3, "update_postimage": 3, "delete": 3}},
    "blackbeam__rust_mysql_common/mariadb-bin.000001": {
        "toddy_test.outbox": {"insert": 2}},
    "blackbeam__rust_mysql_common/vector.binlog": None,  # no mariadb-binlog counts (MySQL 9)
}


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_seed(seed):
    path = corpus_path(seed)
    data = path.read_bytes()
    walked, n_events = header_walk(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the seeds are clean: no truncation, no decode warning
        with vecbinlog.open(path, verify_checksums=False) as log:
            tables = log.read_all()
            assert log.events().num_rows == n_events
            assert sorted(log.tables) == sorted(walked)
            log.info()
    assert sorted(tables) == sorted(walked)
    for name, table in tables.items():
        assert set(table["_log_pos"].to_pylist()) == walked[name], name
    expected = SEEDS[seed]
    if expected is not None:
        got = {name: dict(collections.Counter(pc.cast(t["_change_type"], "string").to_pylist()))
               for name, t in tables.items()}
        assert got == expected
    else:  # at least: one or more rows per rows event, both images of every UPDATE
        for name, t in tables.items():
            assert t.num_rows >= len(walked[name])
            kinds = collections.Counter(pc.cast(t["_change_type"], "string").to_pylist())
            assert kinds["update_preimage"] == kinds["update_postimage"]
