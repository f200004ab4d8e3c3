"""Damaged archive index files (vecbinlog/log/indexrows.py, vecbinlog/log/indexfiles.py): each
kind of damage a page checksum does not catch (an index written by something else, a footer
changed: a type, a field renamed), and a page whose checksum does not match, is an
ArchiveIndexError naming the index file and what is wrong (expected vs got), whichever file a
plan reads (the gathered ``_archive.parquet``, or a binlog's own file); and build_index warns
and indexes it again, after which the plan is the plan that walks the binlog.
(tests/test_fuzz_index.py damages them at random.)"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import vecbinlog
from vecbinlog.index import GATHERED_NAME, INDEX_SUFFIX, VERSION_KEY, build_index
from vecbinlog.log.summary import INDEX_FORMAT_VERSION, INDEX_SCHEMA
from vecbinlog.splits import plan_splits

from .conftest import DATA

SAMPLE = DATA / "sample" / "mariadb-bin.000001"
NAME = SAMPLE.name
VERSION = {VERSION_KEY: str(INDEX_FORMAT_VERSION).encode()}


def _set(**fields: Any) -> Callable[[dict], None]:
    def change(row: dict) -> None:
        row.update({k: v(row) if callable(v) else v for k, v in fields.items()})
    return change


def _info(change: Callable[[dict], None]) -> Callable[[dict], None]:
    def changed(row: dict) -> None:
        info = json.loads(row["info"])
        change(info)
        row["info"] = json.dumps(info)
    return changed


def _first(key: str, **fields: Any) -> Callable[[dict], None]:
    """The first entry of the list ``key`` with ``fields`` set."""
    return lambda row: row[key][0].update(fields)


#: kind of damage -> (what it does to the sample's index row, what the error says is wrong)
ROW_DAMAGE: dict[str, tuple[Callable[[dict], None], str]] = {
    "starts out of order": (_set(transaction_starts=lambda r: [r["transaction_starts"][1], r["transaction_starts"][0],
                                                               *r["transaction_starts"][2:]]),
                            r"transaction_starts\[1\] 328 after 500: expected ascending"),
    "a start past what was indexed": (_set(transaction_starts=lambda r: [*r["transaction_starts"][:-1], r["indexed_to"]]),
                                      r"transaction_starts from 328 to 3284: expected from 4 to before indexed_to \(3284\)"),
    "a time short": (_set(start_times=lambda r: r["start_times"][:-1]),
                     r"start_times: expected 9 times of 0 or more \(one per transaction start\), got 8"),
    "complete past indexed": (_set(complete_to=lambda r: r["indexed_to"] + 1),
                              r"complete_to 3285: expected from 4 to indexed_to \(3284\)"),
    "spacing not a power of two": (_set(start_spacing=3), r"start_spacing 3: expected a power of two"),
    "a GTID block of no start": (lambda r: r["gtid_blocks"][-1].update(block=9),
                                 r"gtid_blocks.block from 0 to 9: expected positions in 0..8"),
    "DDL out of order": (_set(ddl=lambda r: r["ddl"][::-1]), r"ddl.offset \[825, 542, 370\]: expected ascending"),
    "DDL counted wrong": (_first("layout_changes", ddl_before=2),
                          r"layout_changes at 1372: layout 0, ddl_before 2: expected a position in the 2 layouts, and 3"),
    "a layout that is not there": (_first("layout_changes", layout=2), r"layout_changes at 1372: layout 2"),
    "a TABLE_MAP past what was indexed": (_first("layouts", offset=3284), r"layouts.offset 3284: expected from 4 to before"),
    "a range past what was indexed": (lambda r: r["tables"][0]["ranges"][0].update(stop=3285),
                                      r"tables shop.customers: range \{'start': 1107, 'stop': 3285\}: expected start < stop"),
    "counts that do not add up": (_first("tables", rows_events=3), r"tables shop.customers: rows_events 3: expected the sum"),
    "a table of no layout": (_first("tables", name="shop.other"), r"tables \['shop.other', 'shop.orders'\]: expected each once"),
    "info not JSON": (_set(info='{"path": '), r"info: expected JSON, got '\{\"path\": '"),
    "info without a key": (_info(lambda i: i.pop("gtids")), r"info: expected the keys \[.*\], got \[.*\]"),
    "info of another shape": (_info(lambda i: i["events"].update(XID_EVENT="9")),
                              r"info.events.XID_EVENT: expected int, got str '9'"),
    "info not of the row": (_info(lambda i: i.update(server_version="8.0.0")),
                            r"info.server_version '8.0.0': expected '10.11.19-MariaDB-0\+deb12u1-log', as the row says"),
    "info of other tables": (_info(lambda i: i["rows_events_by_table"].update({"shop.orders": 5})),
                             r"info.rows_events_by_table .*: expected .*, as the row says"),
    "a GTID set that is not one": (_info(lambda i: i["gtids"].update(set="0-1")), r"info.gtids.set '0-1': expected a GTID set"),
    "a null statement": (_first("ddl", statement=None), r"ddl.statement is null"),
    "a null start": (lambda r: r["transaction_starts"].__setitem__(0, None), r"transaction_starts is null"),
    "indexed past the binlog's end": (_set(indexed_to=lambda r: r["size"] + 10),
                                      r"indexed_to 3294: expected at most the binlog's size \(3,284 bytes\)"),
}


@pytest.fixture
def index(tmp_path):
    """The sample's index, and its row."""
    location = tmp_path / "index"
    build_index(str(SAMPLE), location, processes=1)
    return location, pq.read_table(location / (NAME + INDEX_SUFFIX)).to_pylist()[0]


def _write(path, rows: list[dict], schema: pa.Schema = INDEX_SCHEMA) -> None:
    """Index rows written as something other than vecbinlog would (its page checksums right)."""
    pq.write_table(pa.Table.from_pylist(rows, schema=schema.with_metadata(VERSION)), path, write_page_checksum=True)


def _damaged(location, where: str) -> tuple[str, str]:
    """(the file a plan reads, as the error names it; the file to damage): the gathered file,
    or the binlog's own, with no gathered file beside it."""
    if where == "own":
        (location / GATHERED_NAME).unlink()
    path = location / (GATHERED_NAME if where == "gathered" else NAME + INDEX_SUFFIX)
    return str(path), path


def _named_then_indexed_again(location, shown: str, what: str) -> None:
    """A plan raises an ArchiveIndexError naming ``shown`` and ``what``; a build warns so and
    indexes it again: then the plan is the plan of the walk."""
    with pytest.raises(vecbinlog.ArchiveIndexError, match=f"^{re.escape(shown)}: a damaged index file: {what}"):
        plan_splits(str(SAMPLE), 1, index=location)
    with pytest.warns(vecbinlog.ArchiveIndexWarning, match=f"^{re.escape(shown)}: a damaged index file: {what}"):
        build_index(str(SAMPLE), location, processes=1)
    assert plan_splits(str(SAMPLE), 1, index=location) == plan_splits(str(SAMPLE), 1)


@pytest.mark.parametrize("where", ["gathered", "own"])
@pytest.mark.parametrize("kind", list(ROW_DAMAGE))
def test_a_row_that_does_not_hold_together_is_named(index, kind, where):
    location, row = index
    damage, what = ROW_DAMAGE[kind]
    damage(row)
    shown, path = _damaged(location, where)
    _write(path, [row])
    _named_then_indexed_again(location, shown, f"its row of {NAME}: {what}")


#: the columns of an index file changed (what a damaged footer reads as) -> what the error says
COLUMN_DAMAGE = {
    "a type": (INDEX_SCHEMA.set(INDEX_SCHEMA.get_field_index("size"), pa.field("size", pa.int32())),
               r"its column size is not INDEX_SCHEMA's \(expected int64, got int32\)"),
    "a field renamed": (INDEX_SCHEMA.set(INDEX_SCHEMA.get_field_index("ddl"), pa.field("ddl", pa.list_(pa.struct([
        ("offset", pa.int64()), ("database", pa.string()), ("statemenu", pa.string()), ("error_code", pa.int32())])))),
        r"its column ddl is not INDEX_SCHEMA's \(expected list<item: struct<offset: int64, database: string, "
        r"statement: string"),
    "a column gone": (INDEX_SCHEMA.remove(INDEX_SCHEMA.get_field_index("second_format")),
                      r"its column second_format is not INDEX_SCHEMA's \(expected int64, got none\)"),
}


@pytest.mark.parametrize("where", ["gathered", "own"])
@pytest.mark.parametrize("kind", list(COLUMN_DAMAGE))
def test_columns_not_those_of_the_index_are_named(index, kind, where):
    """The KeyError 'statement' the random damage of a footer once gave, and its kind."""
    location, row = index
    schema, what = COLUMN_DAMAGE[kind]
    if kind == "a field renamed":
        for d in row["ddl"]:
            d["statemenu"] = d.pop("statement")
    shown, path = _damaged(location, where)
    _write(path, [{k: v for k, v in row.items() if k in schema.names}], schema)
    _named_then_indexed_again(location, shown, what)


@pytest.mark.parametrize("where", ["gathered", "own"])
def test_a_page_whose_checksum_does_not_match_is_named(index, where):
    """A bit flipped in the middle of the ``info`` column's page (zstd-compressed: what it
    decompresses to may still be JSON): its page checksum does not match."""
    location, _ = index
    shown, path = _damaged(location, where)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(INDEX_SCHEMA.get_field_index("info"))
    data = bytearray(path.read_bytes())
    data[chunk.data_page_offset + chunk.total_compressed_size - 8] ^= 0x10
    path.write_bytes(bytes(data))
    _named_then_indexed_again(location, shown, r"not a readable index file \(.*CRC checksum verification failed")


def test_an_own_file_of_another_binlog_is_named(index, tmp_path):
    """A binlog's own index file holding the row of another binlog (a copy under the wrong name)."""
    location, row = index
    shown, path = _damaged(location, "own")
    _write(path, [{**row, "name": "mariadb-bin.000002"}])
    _named_then_indexed_again(location, shown, rf"expected one row, of {NAME}; got 1, of \['mariadb-bin.000002'\]")


def test_a_gathered_file_with_a_binlog_twice_is_named(index):
    location, row = index
    shown, path = _damaged(location, "gathered")
    _write(path, [row, row])
    _named_then_indexed_again(location, shown, rf"its rows of {NAME} are there more than once")


def test_an_index_without_page_checksums_is_of_another_format_version(index):
    """An index of format version 5 (no page checksums): a plan refuses it, saying so; a build
    indexes it again (with checksums)."""
    location, row = index
    for name in (GATHERED_NAME, NAME + INDEX_SUFFIX):
        pq.write_table(pa.Table.from_pylist([row], schema=INDEX_SCHEMA.with_metadata({VERSION_KEY: b"5"})), location / name)
    with pytest.raises(vecbinlog.ArchiveIndexError, match=f"{GATHERED_NAME}: index format version b'5'; this vecbinlog "
                                                          f"reads {INDEX_FORMAT_VERSION}"):
        plan_splits(str(SAMPLE), 1, index=location)
    with pytest.warns(vecbinlog.ArchiveIndexWarning, match="index format version b'5', not 6: indexed again"):
        build_index(str(SAMPLE), location, processes=1)
    assert plan_splits(str(SAMPLE), 1, index=location) == plan_splits(str(SAMPLE), 1)
