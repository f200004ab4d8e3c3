"""The archive index (vecbinlog.index, vecbinlog/log/summary.py): what it holds against the
server's listing and the events of the files, plans made from it alone against plans made by
walking the files (and the bytes each reads), split reads of a MariaDB archive with ALTERs and
a recreated table against read_table, incremental builds (a file changed, a file growing), and
pruning to the files where a table has rows."""

from __future__ import annotations

import os
import shutil
import time
import warnings
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecbinlog
from vecbinlog.index import (GATHERED_NAME, INDEX_SUFFIX, VERSION_KEY, build_index, file_identities, file_identity,
                             load_index)
from vecbinlog.log.summary import INDEX_FORMAT_VERSION, INDEX_SCHEMA, summarize_file
from vecbinlog.binlog.file import BinlogFile
from vecbinlog.splits import plan_splits, read_split, transaction_starts

from .conftest import DATA, corpus_path
from .support.corpus import corpus_names
from .support.countingfs import counting_filesystem
from .support.fixtures import S3_REQUESTS
from .support.listing import complete_end, kept_starts, server_events
from .support.workloads import run_workload

SAMPLE = DATA / "sample" / "mariadb-bin.000001"
#: the least range_bytes build_index takes
RANGE_MIN = 1 << 16


def _summary(location, name: str) -> dict:
    return pq.read_table(os.path.join(location, name + INDEX_SUFFIX)).to_pylist()[0]


def _same_ddl(a, b) -> bool:
    """Two splits' DDL states say the same (None: no DDL before it)."""
    if a is None or b is None:
        return a is None and b is None
    return (a.tables, a.lifetimes, a.databases) == (b.tables, b.lifetimes, b.databases)


# -- what an index holds ------------------------------------------------------------------------
def test_sample_index_against_its_events(tmp_path):
    """The sample's summary: identity from the filesystem, FORMAT_DESCRIPTION facts and counts from
    info(), transaction starts = its GTID events, DDL = its CREATE queries as events() lists them,
    every TABLE_MAP it keeps at a TABLE_MAP_EVENT, its schema and format version as written."""
    result = build_index(SAMPLE, tmp_path, processes=1)
    assert (result.indexed, result.skipped, result.bytes) == (1, 0, SAMPLE.stat().st_size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with vecbinlog.open(SAMPLE) as log:
            info = log.info()["files"][0]
            events = log.events().to_pylist()
    pf = pq.ParquetFile(tmp_path / (SAMPLE.name + INDEX_SUFFIX))
    assert pf.schema_arrow.metadata[VERSION_KEY] == str(INDEX_FORMAT_VERSION).encode()
    assert pf.schema_arrow.remove_metadata() == INDEX_SCHEMA
    row = _summary(tmp_path, SAMPLE.name)
    st = SAMPLE.stat()
    assert (row["name"], row["size"], row["mtime_ns"]) == (SAMPLE.name, st.st_size, st.st_mtime_ns)
    assert row["indexed_to"] == row["complete_to"] == st.st_size
    assert (row["server_version"], row["binlog_version"], row["checksum"]) == (
        info["server_version"], info["binlog_version"], info["checksum"])
    assert (row["first_time"].timestamp(), row["last_time"].timestamp()) == (
        info["first_timestamp"], info["last_timestamp"])
    assert row["transaction_starts"] == kept_starts([e["pos"] for e in events if e["type"] == "GTID_EVENT"])
    ddl = [e for e in events if e["type"] == "QUERY_EVENT" and "CREATE" in e["info"]]
    assert [d["offset"] for d in row["ddl"]] == [e["pos"] for e in ddl]
    assert all(e["info"].endswith(d["statement"]) for d, e in zip(row["ddl"], ddl))
    assert {d["database"] for d in row["ddl"]} == {"shop"}
    assert {t["name"]: t["rows_events"] for t in row["tables"]} == info["rows_events_by_table"]
    by_type = {e["type"] for e in events}
    assert sum(t["write_events"] for t in row["tables"]) == info["events"]["WRITE_ROWS_EVENT_V1"]
    assert sum(t["update_events"] for t in row["tables"]) == info["events"]["UPDATE_ROWS_EVENT_V1"]
    assert sum(t["delete_events"] for t in row["tables"]) == info["events"]["DELETE_ROWS_EVENT_V1"]
    assert "TABLE_MAP_EVENT" in by_type
    maps = {e["pos"]: e for e in events if e["type"] == "TABLE_MAP_EVENT"}
    for lay in row["layouts"]:
        assert lay["offset"] in maps and lay["table"].split(".")[1] in maps[lay["offset"]]["info"]


def test_a_summary_does_not_depend_on_the_segments_walked():
    """The sample summarised in segments of 512 bytes (transactions, TABLE_MAPs and their rows
    events in different segments) is the summary of one segment."""
    identity = file_identity(str(SAMPLE))
    whole = summarize_file(str(SAMPLE), identity).to_pylist()
    assert summarize_file(str(SAMPLE), identity, segment_bytes=512).to_pylist() == whole


@pytest.mark.parametrize("name", corpus_names())
def test_corpus_plans_from_the_index_equal_walked_plans(name, tmp_path):
    """Every corpus file, cut at every transaction: the plan from its index alone, and the plan
    from what the walk of its history kept (the Spark source's, after its schema), have the
    splits (and the DDL state before each) of the plan that walks it; info() from the index is
    the walk's (events by type, GTIDs, rows events by table, where the walk stopped...), and so is
    info(rows=True), the row images by table and change type (or the error its walk raises)."""
    path = corpus_path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            walked = plan_splits(str(path), 1)
        except (vecbinlog.BinlogError, vecbinlog.SourceError):
            pytest.skip("the file cannot be planned (its documented error): tests/test_corpus.py")
        build_index(str(path), tmp_path, processes=1)
        indexed = plan_splits(str(path), 1, index=tmp_path)
        with vecbinlog.open(str(path)) as log:
            history = log.history()
        from_history = plan_splits(str(path), 1, history=history)
        with vecbinlog.open(str(path)) as log:
            info = log.info()
        with vecbinlog.open(str(path), index=tmp_path) as log:
            info_from_index = log.info()
        images, images_from_index = (_images_or_error(str(path), index) for index in (None, tmp_path))
    assert from_history == walked
    assert all(_same_ddl(a.ddl, b.ddl) for a, b in zip(walked, from_history))
    assert indexed == walked
    assert all(_same_ddl(a.ddl, b.ddl) for a, b in zip(walked, indexed))
    assert info_from_index == info
    assert images_from_index == images


def _images_or_error(path, index):
    """``info(rows=True)`` of ``path`` (with ``index``), or the type and message of what it raises."""
    try:
        with vecbinlog.open(path, index=index) as log:
            return log.info(rows=True)
    except vecbinlog.BinlogError as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize("name", corpus_names())
def test_corpus_files_cut_then_grown_are_extended_to_their_whole_index(name, tmp_path):
    """Every corpus file cut at a transaction start (its first, middle and last), indexed, then
    grown to its whole bytes: the next build walks only what it grew by (walks it whole when a
    transaction was open at the cut) and gives, field by field, the index a build of the whole
    file gives (GTID sets, tables and their ranges, layouts, layout changes, DDL, info)."""
    path = corpus_path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            build_index(str(path), tmp_path / "whole", processes=1)
        except (vecbinlog.BinlogError, vecbinlog.SourceError):
            pytest.skip("the file cannot be indexed (its documented error): tests/test_corpus.py")
    data = path.read_bytes()
    fresh = _summary(tmp_path / "whole", path.name)
    if not fresh["seekable"] or fresh["second_format"] is not None:
        pytest.skip("a compressed file or a relay log with a second FORMAT_DESCRIPTION: indexed again whole")
    starts = fresh["transaction_starts"]
    if not starts:
        pytest.skip("no transaction")
    for cut in sorted({starts[0], starts[len(starts) // 2], starts[-1]}):
        copy = tmp_path / f"at{cut}" / path.name
        copy.parent.mkdir()
        copy.write_bytes(data[:cut])
        location = tmp_path / f"at{cut}-index"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
            build_index(str(copy), location, processes=1)
            before = _summary(location, path.name)
            assert before["indexed_to"] == cut
            copy.write_bytes(data)  # it grew
            os.utime(copy, ns=(time.time_ns(), time.time_ns() + 10**9))  # (a later time, as any write gives)
            result = build_index(str(copy), location, processes=1)
            if before["complete_to"] == cut:  # else a transaction open before the cut (not closed by a next start)
                assert (result.indexed, result.extended, result.bytes) == (1, 1, fresh["indexed_to"] - cut)
            else:
                assert (result.indexed, result.extended, result.bytes) == (1, 0, fresh["indexed_to"])
            build_index(str(copy), tmp_path / f"at{cut}-whole", processes=1)
        assert _summary(location, path.name) == _summary(tmp_path / f"at{cut}-whole", path.name)


def test_a_grown_file_whose_first_bytes_changed_is_indexed_again_whole(tmp_path):
    """A file replaced, under its name, by a larger one that is another file (its first bytes,
    the FORMAT_DESCRIPTION's time, differ): not extended, an ArchiveIndexWarning, indexed whole."""
    data = SAMPLE.read_bytes()
    copy = tmp_path / "archive" / SAMPLE.name
    copy.parent.mkdir()
    row = summarize_file(str(SAMPLE), file_identity(str(SAMPLE))).to_pylist()[0]
    assert row["checksum"] == "CRC32"
    with BinlogFile(str(SAMPLE)) as f:
        copy.write_bytes(data[:int(transaction_starts(f)[-1])])
    location = tmp_path / "index"
    build_index(str(copy), location, processes=1)
    other = bytearray(data)
    other[4:8] = (int.from_bytes(data[4:8], "little") + 3600).to_bytes(4, "little")  # created an hour later
    end = 4 + int.from_bytes(data[4 + 9:4 + 13], "little")  # the FORMAT_DESCRIPTION's end, its CRC32 made again
    other[end - 4:end] = zlib.crc32(other[4:end - 4]).to_bytes(4, "little")
    copy.write_bytes(bytes(other))
    with pytest.warns(vecbinlog.ArchiveIndexWarning, match="first bytes are not those of the file indexed"):
        result = build_index(str(copy), location, processes=1)
    assert (result.indexed, result.extended, result.bytes) == (1, 0, len(data))


@pytest.mark.parametrize("name", corpus_names(larger_than=2 * RANGE_MIN))
def test_corpus_files_indexed_in_ranges_give_their_whole_index(name, tmp_path):
    """The corpus files of more than two ranges of 64 KiB indexed a task per range: the ranges'
    summaries joined are, field by field, the index of one walk of the file (a file with no
    transaction start after a range's cut, such as one LOAD DATA event of 131 KB, is indexed whole)."""
    path = corpus_path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            build_index(str(path), tmp_path / "whole", processes=1, range_bytes=None)
        except (vecbinlog.BinlogError, vecbinlog.SourceError):
            pytest.skip("the file cannot be indexed (its documented error): tests/test_corpus.py")
        ranged = build_index(str(path), tmp_path / "ranges", processes=1, range_bytes=RANGE_MIN)
    whole = _summary(tmp_path / "whole", path.name)
    size = path.stat().st_size
    n = -(-size // RANGE_MIN)
    # in ranges when each range but the first has a transaction start after its cut (else whole)
    with BinlogFile(str(path)) as f:
        every = transaction_starts(f)
    joined = all(any(s > size * k // n for s in every) for k in range(1, n))
    assert (ranged.indexed, ranged.ranged, ranged.bytes) == (1, int(joined), whole["indexed_to"])
    assert _summary(tmp_path / "ranges", path.name) == whole


@pytest.mark.parametrize("name", ["osheroff__mysql-binlog-connector-java/mysql-bin.sakila",
                                  "baojingyu__docker-canal-elasticsearch-kibana-mysql/mysql-bin.000002"])
def test_transaction_starts_found_from_any_offset_are_the_files(name):
    """From every 4 KiB offset of two server binlogs (1.4 and 3 MB), the transaction start
    found without walking what is before it is one a walk of the whole file finds, the first
    after the offset (or after the event boundary nearest it)."""
    from vecbinlog.binlog.resync import transaction_start_after

    path = corpus_path(name)
    with BinlogFile(str(path)) as f:
        starts = transaction_starts(f)
    events = np.array(vecbinlog.open(str(path)).events().column("pos").to_pylist() + [path.stat().st_size])
    found = 0
    with BinlogFile(str(path)) as f:
        for at in range(4, path.stat().st_size, 4096):
            got = transaction_start_after(f, at)
            boundary = events[np.searchsorted(events, at)]  # the first event at or after the offset
            later = starts[starts > boundary]
            assert got == (int(later[0]) if len(later) else None), at
            found += got is not None
    assert found > 100


@pytest.mark.mariadb
def test_an_index_keeps_the_first_start_of_each_block(mariadb_server, tmp_path, monkeypatch):
    """A file of 400 transactions (~140 KB), an index keeping at most 32 starts (KEPT_STARTS;
    4096 by default): it keeps the first of the transaction starts (the server's GTID events) of
    each block of the least power of two of bytes that keeps no more; plans from it are the
    walked plans whatever the split size (a split ends at the first start of a block); a plan
    from a start it does not keep is the walked one, from an event that starts no transaction
    an error either way; a grown file extended, and the file indexed in ranges, keep the same;
    each kept start's time (``start_times``) is the latest of its block's transactions (insert
    ``i`` made at ``base + i``, ``SET timestamp``), its GTIDs' range (``gtid_blocks``) the least
    and greatest the server lists in the block."""
    from vecbinlog.log import summary

    monkeypatch.setattr(summary, "KEPT_STARTS", 32)
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS blocks", "CREATE DATABASE blocks")
    base = 1_700_000_000
    made = s.capture_binlog(f"SET timestamp = {base - 10}", "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(200))",
                            *[q for i in range(400) for q in (f"SET timestamp = {base + i}",
                                                               f"INSERT INTO t VALUES ({i}, '{'y' * 150}')")],
                            database="blocks")
    listed = server_events(s, made.name)
    every = [e["pos"] for e in listed if e["type"] == "Gtid"]
    times = [base - 10] + [base + i for i in range(400)]  # of each of every
    path = str(tmp_path / made.name)
    shutil.copy(made, path)
    build_index(path, tmp_path / "index", processes=1)
    row = _summary(tmp_path / "index", made.name)
    kept, spacing = row["transaction_starts"], row["start_spacing"]
    assert kept == kept_starts(every) and len(every) > 32 >= len(kept)
    assert spacing > 1 and all(b - a > spacing for a, b in zip(kept, kept[2:]))
    latest = {}
    for p, t in zip(every, times):
        latest[p // spacing] = max(latest.get(p // spacing, t), t)
    assert row["start_times"] == [latest[p // spacing] for p in kept]
    assert row["start_times"][1] > row["start_times"][0] + 1  # (blocks of several transactions)
    numbers = [int(e["info"].split()[-1].rsplit("-", 1)[1]) for e in listed if e["type"] == "Gtid"]  # BEGIN GTID 0-1-N
    source = listed[[e["type"] for e in listed].index("Gtid")]["info"].split()[-1].rsplit("-", 1)[0]
    in_block = np.searchsorted(kept, every, side="right") - 1
    assert row["gtid_sources"] == [source]
    assert row["gtid_blocks"] == [{"block": b, "source": 0, "first": min(n for n, k in zip(numbers, in_block) if k == b),
                                   "last": max(n for n, k in zip(numbers, in_block) if k == b)} for b in range(len(kept))]
    # a split ends at the first start of the first block it reaches
    assert [sp.start for sp in plan_splits(path, 1)[1:]] == [p for p in kept if p >= spacing]
    for split_bytes in (1, 5000, spacing, 40_000, 1 << 20):
        assert plan_splits(path, split_bytes, index=tmp_path / "index") == plan_splits(path, split_bytes), split_bytes
    between = next(p for p in every[len(every) // 2:] if p not in kept)
    assert plan_splits(path, 20_000, start=between, index=tmp_path / "index") == plan_splits(path, 20_000, start=between)
    inside = next(e["pos"] for e in listed if e["pos"] > between and e["type"] == "Table_map")  # an event, no start
    for index in (tmp_path / "index", None):
        with pytest.raises(ValueError, match="is not where a transaction starts"):
            plan_splits(path, 20_000, start=inside, index=index)
    # the file cut at a start it does not keep, indexed, then grown and extended; and indexed in
    # ranges of 64 KiB: the starts kept (at a spacing each part found alone) are the whole file's
    copy = tmp_path / "grown" / made.name
    copy.parent.mkdir()
    data = made.read_bytes()
    copy.write_bytes(data[:between])
    build_index(str(copy), tmp_path / "grown-index", processes=1)
    copy.write_bytes(data)
    os.utime(copy, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert build_index(str(copy), tmp_path / "grown-index", processes=1).extended == 1
    ranged = build_index(path, tmp_path / "ranged-index", processes=1, range_bytes=RANGE_MIN)
    assert ranged.ranged == 1
    for location in ("grown-index", "ranged-index"):
        again = _summary(tmp_path / location, made.name)
        assert (again["transaction_starts"], again["start_spacing"], again["start_times"], again["gtid_blocks"]) == \
            (kept, spacing, row["start_times"], row["gtid_blocks"]), location


def test_damaged_bytes_in_a_range_are_the_error_a_walk_gives(tmp_path):
    """A file with an event header in its middle damaged (its size 5 bytes), indexed in ranges:
    the build fails with the MalformedEventError (file and offset) of a walk of the whole file,
    not an IndexError and not an index of part of it."""
    path = corpus_path("osheroff__mysql-binlog-connector-java/mysql-bin.sakila")
    data = bytearray(path.read_bytes())
    events = vecbinlog.open(str(path)).events().column("pos").to_pylist()
    at = events[len(events) // 2]
    data[at + 9:at + 13] = (5).to_bytes(4, "little")
    damaged = tmp_path / "damaged" / path.name
    damaged.parent.mkdir()
    damaged.write_bytes(bytes(data))
    with pytest.raises(vecbinlog.BinlogError) as whole:
        build_index(str(damaged), tmp_path / "whole", processes=1, range_bytes=None)
    with pytest.raises(vecbinlog.BinlogError) as ranged:
        build_index(str(damaged), tmp_path / "ranges", processes=1, range_bytes=RANGE_MIN)
    assert (type(ranged.value), ranged.value.path, ranged.value.offset) == \
        (type(whole.value), whole.value.path, whole.value.offset)
    assert whole.value.offset == at
    assert not (tmp_path / "ranges" / (path.name + INDEX_SUFFIX)).exists()


def test_a_huge_file_in_ranges_in_two_processes_and_one_whose_boundaries_cannot_be_found(tmp_path):
    """A corpus file of 1.4 MB in ranges of 64 KiB walked by two processes: its whole index.
    The same file with every header's log_pos zeroed (as relay logs and hostile files may
    have them): no event boundary is found in the middle of it, and it is
    indexed whole, to the index one walk of it gives."""
    path = corpus_path("osheroff__mysql-binlog-connector-java/mysql-bin.sakila")
    build_index(str(path), tmp_path / "whole", processes=1, range_bytes=None)
    whole = _summary(tmp_path / "whole", path.name)
    two = build_index(str(path), tmp_path / "two", processes=2, range_bytes=RANGE_MIN)
    assert (two.indexed, two.ranged) == (1, 1)
    assert _summary(tmp_path / "two", path.name) == whole
    data = bytearray(path.read_bytes())
    assert whole["checksum"].startswith("NONE")  # (else each event's CRC32 would be made again)
    for e in vecbinlog.open(str(path)).events().to_pylist():
        data[e["pos"] + 13:e["pos"] + 17] = bytes(4)
    zeroed = tmp_path / "zeroed" / path.name
    zeroed.parent.mkdir()
    zeroed.write_bytes(bytes(data))
    result = build_index(str(zeroed), tmp_path / "zeroed-index", processes=1, range_bytes=RANGE_MIN)
    assert (result.indexed, result.ranged) == (1, 0)
    build_index(str(zeroed), tmp_path / "zeroed-whole", processes=1, range_bytes=None)
    assert _summary(tmp_path / "zeroed-index", path.name) == _summary(tmp_path / "zeroed-whole", path.name)


# -- an archive with ALTERs and a recreated table -------------------------------------------------
@pytest.fixture(scope="module", params=["FULL", "NO_LOG"])
def changes(request, mariadb_server, tmp_path_factory):
    """The table-changes workload (tests/support/workloads.py: a table dropped and created again
    with other types, altered five ways, over four files), copied, and its index."""
    run = run_workload(mariadb_server, request.param)
    folder = tmp_path_factory.mktemp("changes")
    files = []
    for f in run["files"]:
        shutil.copy(f, folder / f.name)
        files.append(str(folder / f.name))
    location = folder / "index"
    result = build_index(files, location, processes=2)  # in a pool of two processes
    assert (result.indexed, result.skipped) == (len(files), 0)
    return run, files, location


@pytest.mark.mariadb
def test_planning_from_the_index_reads_no_binlog(changes):
    """Through a filesystem that counts the bytes read: the plan from the index reads none of the
    binlogs (at most 64 KiB each, the issue's bound), the plan that walks them reads them whole;
    open(index=) answers what the walk answers (tables, schema, plans, TABLE_MAPs, info, and
    info(rows=True): the row images of each table by change type, read_table's rows) reading
    none either."""
    run, files, location = changes
    fs, counted = counting_filesystem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
        walked = plan_splits(files, 1, filesystem=fs)
        walked_bytes = counted.read
        counted.read = 0
        indexed = plan_splits(files, 1, filesystem=fs, index=location)
    assert indexed == walked
    # each file's first split follows the file before, read to its end, in both plans
    firsts = [k for k, s in enumerate(walked) if k and s.path != walked[k - 1].path]
    assert [s.follows for s in indexed] == [s.follows for s in walked] == [k in firsts for k in range(len(walked))]
    assert len(firsts) == len(files) - 1
    assert counted.read <= 64 * 1024 * len(files)
    assert counted.read == 0
    assert walked_bytes >= sum(os.path.getsize(f) for f in files)
    # open(index=) answers tables, schemas, plans, TABLE_MAPs and info() opening no binlog
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
        with vecbinlog.open(files, filesystem=fs, index=location) as log:
            tables = log.tables
            answers = (tables, log.schema(tables[0]), log.plans()[tables[0]].schema, log.table_maps(tables[0]),
                       log.info(), log.info(rows=True))
        assert counted.read == 0
        with vecbinlog.open(files, filesystem=fs) as log:
            walked_answers = (log.tables, log.schema(tables[0]), log.plans()[tables[0]].schema,
                              log.table_maps(tables[0]), log.info(), log.info(rows=True))
            changes_of = {t: log.read_table(t).column("_change_type").to_pylist() for t in tables}
    assert answers == walked_answers
    # the row images the index counts are the rows read_table gives, by change type
    counted_images: dict[str, dict[str, int]] = {}
    for f in answers[-1]["files"]:
        for t, by_change in f["row_images_by_table"].items():
            for change, n in by_change.items():
                counted_images.setdefault(t, {}).setdefault(change, 0)
                counted_images[t][change] += n
    assert counted_images == {t: {c: changes.count(c) for c in set(changes)} for t, changes in changes_of.items()}
    assert counted_images[run["table"]]["update_preimage"] > 0


@pytest.mark.mariadb
@pytest.mark.parametrize("split_bytes", [1, 512, 4096, 64 << 10, 1 << 30])
def test_split_reads_from_the_index_equal_read_table(changes, split_bytes):
    """Splits planned from the index, and from the history a walk kept, are those planned by
    walking the files (DDL states alike),
    and read alone with their DDL and layout states, fitted to the table's plan, they give
    read_table's rows, every column: _schema_version and _incarnation included, numbered from
    the index's TABLE_MAPs and DDL."""
    run, files, location = changes
    table = run["table"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
        walked = plan_splits(files, split_bytes)
        splits = plan_splits(files, split_bytes, index=location)
        assert splits == walked
        assert all(_same_ddl(a.ddl, b.ddl) for a, b in zip(walked, splits))
        with vecbinlog.open(files) as log:
            expected = log.read_table(table)
            plan = log.plans()[table]
            history = log.history()
        for s in splits:  # the layout states a walk of the whole files gives the same start
            assert s.versions == history.start_state(s.path, s.start)[1]
        from_history = plan_splits(files, split_bytes, history=history)  # (the Spark source's, after its schema)
        assert from_history == walked
        assert all(_same_ddl(a.ddl, b.ddl) and a.versions == b.versions for a, b in zip(from_history, splits))
        got = [plan.conform(b) for s in splits for _, b in read_split(s, table)]
    assert pa.Table.from_batches(got, expected.schema).to_pylist() == expected.to_pylist()
    assert set(expected.column("_schema_version").to_pylist()) == set(range(7))
    assert set(expected.column("_incarnation").to_pylist()) == {0, 1, 2}


@pytest.mark.mariadb
def test_open_with_an_index_answers_tables_and_schemas_from_it(changes):
    """open(..., index=): tables, table_maps, plans, schema and history are those of the walk of the files
    (the history's DDL and layout states alike at every transaction start), while reading at
    most the first 64 KiB of each binlog (each file is opened)."""
    run, files, location = changes
    table = run["table"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
        with vecbinlog.open(files) as log:
            tables, plans, history = log.tables, log.plans(), log.history()
            maps = log.table_maps(table)
        fs, counted = counting_filesystem()
        with vecbinlog.open(files, index=location, filesystem=fs) as log:
            assert log.tables == tables
            assert log.table_maps(table) == maps and len(maps) >= 5
            assert {n: p.schema for n, p in log.plans().items()} == {n: p.schema for n, p in plans.items()}
            assert log.schema(table) == plans[table].schema
            got = log.history()
        assert counted.read <= 64 * 1024 * len(files)
        with vecbinlog.open(files, index=location, tables="nothing.*") as log:
            assert log.tables == []
    assert got.plans[table].versions == plans[table].versions
    for s in plan_splits(files, 1):
        want_ddl, want_states = history.start_state(s.path, s.start)
        got_ddl, got_states = got.start_state(s.path, s.start)
        assert got_states == want_states
        assert _same_ddl(got_ddl, want_ddl)


@pytest.mark.mariadb
def test_an_archive_in_s3(changes, s3):
    """The archive uploaded to an S3 server (moto, 127.0.0.1), indexed from there by URIs into
    an index in S3 too (the files' sizes and times from a listing: a HEAD of each says the
    same): a second build skips every file; the plan from the index is the walked
    plan, and its splits read alone give read_table's rows."""
    run, files, _ = changes
    client, query, _ = s3
    prefix = f"idx-{os.path.basename(os.path.dirname(files[0]))}"
    uris = []
    for f in files:
        client.upload_file(f, "binlogs", f"{prefix}/{os.path.basename(f)}")
        uris.append(f"s3://binlogs/{prefix}/{os.path.basename(f)}{query}")
    location = f"s3://binlogs/{prefix}-index{query}"
    # sizes and times from one listing of the folder: what a HEAD of each file says
    assert file_identities(uris) == [file_identity(u) for u in uris]
    written = {f"/binlogs/{prefix}-index/{os.path.basename(f)}{INDEX_SUFFIX}" for f in files}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
        S3_REQUESTS.clear()
        assert build_index(uris, location, processes=1).indexed == len(files)
        # the gathered file takes the index files as they were written: none is read back
        assert [r for r in S3_REQUESTS if r[0] == "GET" and r[1] in written] == []
        assert build_index(uris, location, processes=1).skipped == len(files)
        listed = client.list_objects_v2(Bucket="binlogs", Prefix=f"{prefix}-index/")["Contents"]
        assert sorted(o["Key"].rsplit("/", 1)[1] for o in listed if not o["Key"].endswith("/")) == \
            sorted([GATHERED_NAME] + [os.path.basename(f) + INDEX_SUFFIX for f in files])
        body = client.get_object(Bucket="binlogs", Key=f"{prefix}-index/{os.path.basename(files[0])}{INDEX_SUFFIX}")
        assert pq.read_table(pa.BufferReader(body["Body"].read())).column("path")[0].as_py() == uris[0]
        splits = plan_splits(uris, 2048, index=location)
        assert splits == plan_splits(uris, 2048)
        expected = vecbinlog.read_table(files, run["table"])
        with vecbinlog.open(uris, index=location) as log:
            plan = log.plans()[run["table"]]
        got = [plan.conform(b) for s in splits for _, b in read_split(s, run["table"])]
    assert pa.Table.from_batches(got, expected.schema).drop_columns(["_log_file"]).to_pylist() == \
        expected.drop_columns(["_log_file"]).to_pylist()


# -- incremental builds ----------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["garbage", "cut"])
def test_a_damaged_index_file_is_an_error_then_indexed_again(tmp_path, damage):
    """An index file that is not Parquet, or cut short, makes a plan raise ArchiveIndexError
    naming it (not pyarrow's error); a build indexes its binlog again with a warning, and the
    plan is then the walked one."""
    location = tmp_path / "index"
    build_index(str(SAMPLE), location, processes=1)
    for name in (GATHERED_NAME, SAMPLE.name + INDEX_SUFFIX):
        path = location / name
        path.write_bytes(b"not an index" if damage == "garbage" else path.read_bytes()[:-100])
    with pytest.raises(vecbinlog.ArchiveIndexError, match=f"{GATHERED_NAME}: a damaged index file: not a readable index"):
        plan_splits(str(SAMPLE), 1, index=location)
    with pytest.warns(vecbinlog.ArchiveIndexWarning, match="not a readable index file"):
        again = build_index(str(SAMPLE), location, processes=1)
    assert (again.indexed, again.skipped) == (1, 0)
    assert plan_splits(str(SAMPLE), 1, index=location) == plan_splits(str(SAMPLE), 1)


def test_an_index_whose_table_map_bytes_are_damaged_is_an_error(tmp_path):
    """Parquet that reads, holding a TABLE_MAP body cut to two bytes: ArchiveIndexError naming
    the binlog and the TABLE_MAP's offset in it (the sample's first, per its listing), not an
    error with an offset into the index's bytes."""
    location = tmp_path / "index"
    build_index(str(SAMPLE), location, processes=1)
    listing = (DATA / "sample" / "mariadb-binlog-vv.txt").read_text()
    first_map = int(listing.split("Table_map:")[0].rsplit("# at ", 1)[1].split()[0])
    for name in (GATHERED_NAME, SAMPLE.name + INDEX_SUFFIX):
        table = pq.read_table(location / name)
        rows = table.to_pylist()
        for row in rows:
            for layout in row["layouts"]:
                layout["body"] = b"\x01\x02"
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), location / name)
    with pytest.raises(vecbinlog.ArchiveIndexError, match=f"{GATHERED_NAME}: a damaged index file: its row of "
                       f"mariadb-bin.000001: the TABLE_MAP_EVENT of offset {first_map} cannot be read"):
        plan_splits(str(SAMPLE), 1, index=location)


def test_an_index_whose_gtid_blocks_do_not_hold_together_is_an_error(tmp_path):
    """Parquet that reads, whose GTID blocks name a block after the last transaction start it
    keeps: ArchiveIndexError naming the binlog (not an IndexError when a GTID is looked up)."""
    location = tmp_path / "index"
    build_index(str(SAMPLE), location, processes=1)
    for name in (GATHERED_NAME, SAMPLE.name + INDEX_SUFFIX):
        table = pq.read_table(location / name)
        rows = table.to_pylist()
        for row in rows:
            row["gtid_blocks"][-1]["block"] = len(row["transaction_starts"])
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), location / name)
    with pytest.raises(vecbinlog.ArchiveIndexError, match=f"{GATHERED_NAME}: a damaged index file: its row of "
                       r"mariadb-bin.000001: gtid_blocks.block from 0 to \d+: expected positions in 0\.\.\d+"):
        plan_splits(str(SAMPLE), 1, index=location)


def test_second_build_skips_and_a_changed_file_is_indexed_again(tmp_path):
    """A second build skips every file; a file whose bytes changed (same size, a later time) is
    indexed again with an ArchiveIndexWarning, and a plan before that refuses the stale index."""
    folder = tmp_path / "archive"
    folder.mkdir()
    names = ["mariadb-bin.000001", "mariadb-bin.000002", "mariadb-bin.000003"]
    for n in names:
        shutil.copy(SAMPLE, folder / n)
    files = [str(folder / n) for n in names]
    location = tmp_path / "index"
    first = build_index(files, location, processes=1)
    assert (first.indexed, first.skipped) == (3, 0)
    assert sorted(os.listdir(location)) == [GATHERED_NAME, *(n + INDEX_SUFFIX for n in names)]
    assert pq.read_table(location / GATHERED_NAME).column("name").to_pylist() == names
    again = build_index(str(folder / "mariadb-bin.*"), location, processes=1)
    assert (again.indexed, again.skipped, again.bytes) == (0, 3, 0)
    changed = folder / names[1]
    st = changed.stat()
    os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(vecbinlog.ArchiveIndexError, match="changed since it was indexed"):
        plan_splits(files, 1, index=location)
    with pytest.warns(vecbinlog.ArchiveIndexWarning, match="changed since it was indexed"):
        third = build_index(files, location, processes=1)
    assert (third.indexed, third.skipped, third.files) == (1, 2, (names[1],))
    assert plan_splits(files, 1, index=location) == plan_splits(files, 1)
    with pytest.raises(vecbinlog.ArchiveIndexError, match="not in the index"):
        plan_splits([*files, str(SAMPLE)], 1, index=tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="several named mariadb-bin.000001"):
        build_index([files[0], str(SAMPLE)], tmp_path / "elsewhere")


@pytest.fixture(scope="module")
def growing(mariadb_server):
    """A binlog of several transactions, and the server's listing of it."""
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS grow", "CREATE DATABASE grow")
    path = s.capture_binlog(
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40))",
        *[f"INSERT INTO t VALUES ({i}, 'v{i}')" for i in range(6)],
        "BEGIN", "UPDATE t SET v = 'x' WHERE id < 3", "DELETE FROM t WHERE id = 5", "COMMIT",
        "ALTER TABLE t ADD COLUMN w INT", "INSERT INTO t VALUES (10, 'ten', 10)", database="grow")
    return path, server_events(s, path.name)


@pytest.mark.mariadb
def test_a_growing_file_is_indexed_to_its_last_complete_transaction_then_extended(growing, tmp_path):
    """A copy cut in the middle of a transaction: indexed up to where the server's listing says
    its last complete transaction ends; when it grows, the next build extends it (no warning), to
    the index of the whole file; a plan of the grown file before that ends where it was complete."""
    path, events = growing
    data = path.read_bytes()
    update = next(e for e in events if e["type"] == "Update_rows_v1" or e["type"].startswith("Update_rows"))
    cut = update["pos"] + 7  # inside the UPDATE's rows event: its transaction is not whole
    copy = tmp_path / "archive" / path.name
    copy.parent.mkdir()
    copy.write_bytes(data[:cut])
    location = tmp_path / "index"
    build_index(str(copy), location, processes=1)
    row = _summary(location, path.name)
    assert row["complete_to"] == complete_end(events, cut) < cut
    assert row["indexed_to"] == max(e["end"] for e in events if e["end"] <= cut)
    assert row["transaction_starts"] == kept_starts([e["pos"] for e in events if e["type"] == "Gtid" and e["pos"] < cut])
    time.sleep(0.01)
    copy.write_bytes(data)  # it grew
    grown = plan_splits(str(copy), 1 << 30, index=location)
    assert [(s.start, s.stop) for s in grown] == [(4, row["complete_to"])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # grown, not changed: no warning
        result = build_index(str(copy), location, processes=1)
    assert (result.indexed, result.skipped) == (1, 0)
    whole = tmp_path / "whole"
    build_index(str(path), whole, processes=1)
    extended, fresh = _summary(location, path.name), _summary(whole, path.name)
    for key in ("indexed_to", "complete_to", "transaction_starts", "tables", "layouts", "layout_changes", "ddl"):
        assert extended[key] == fresh[key], key
    assert extended["complete_to"] == len(data)
    assert plan_splits(str(copy), 1, index=location) == plan_splits(str(copy), 1)


@pytest.mark.mariadb
def test_the_binlog_a_server_writes_is_extended_as_it_grows(mariadb_server, tmp_path):
    """The server's current binlog indexed in place, then written to (rows, an ALTER, a new
    table, a transaction of two statements), indexed again: extended (only what it grew by
    walked), to the index a build of the file as it is then gives; the plan from it is the walked plan."""
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS ext", "CREATE DATABASE ext")
    s.flush_binary_logs()
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
              database="ext")
    path = s.current_binlog()
    location = tmp_path / "index"
    build_index(str(path), location, processes=1)
    before = _summary(location, path.name)
    assert before["complete_to"] == before["indexed_to"] == os.path.getsize(path)
    s.execute("INSERT INTO t VALUES (3, 'c')", "ALTER TABLE t ADD COLUMN w BIGINT UNSIGNED",
              "CREATE TABLE u (k INT PRIMARY KEY)", "BEGIN", "INSERT INTO u VALUES (1)",
              "UPDATE t SET w = 18446744073709551615 WHERE id = 1", "COMMIT", "DELETE FROM t WHERE id = 2",
              database="ext")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # grown: no warning
        result = build_index(str(path), location, processes=1)
    size = os.path.getsize(path)
    assert (result.indexed, result.extended, result.bytes) == (1, 1, size - before["indexed_to"])
    build_index(str(path), tmp_path / "whole", processes=1)
    extended = _summary(location, path.name)
    assert extended == _summary(tmp_path / "whole", path.name)
    assert {t["name"] for t in extended["tables"]} == {"ext.t", "ext.u"}
    listed = server_events(s, path.name)  # the server's SHOW BINLOG EVENTS of it
    assert extended["transaction_starts"] == kept_starts([e["pos"] for e in listed if e["type"] == "Gtid"])
    assert extended["indexed_to"] == extended["complete_to"] == max(e["end"] for e in listed)
    assert plan_splits(str(path), 1, index=location) == plan_splits(str(path), 1)


def test_a_grown_file_whose_index_rows_do_not_hold_together_is_indexed_again_whole(tmp_path):
    """An index file that reads but whose layout changes point past its layouts (damaged, or
    written by something else), for a file that grew: an ArchiveIndexWarning naming it, and the
    file indexed whole, to the index a fresh build gives (not an IndexError)."""
    data = SAMPLE.read_bytes()
    with BinlogFile(str(SAMPLE)) as f:
        last = int(transaction_starts(f)[-1])
    copy = tmp_path / "archive" / SAMPLE.name
    copy.parent.mkdir()
    copy.write_bytes(data[:last])
    location = tmp_path / "index"
    build_index(str(copy), location, processes=1)
    path = location / (SAMPLE.name + INDEX_SUFFIX)
    kept = pq.read_table(path).to_pylist()[0]
    kept["layout_changes"] = [{**c, "layout": 99} for c in kept["layout_changes"]]
    metadata = pq.ParquetFile(path).metadata.metadata
    pq.write_table(pa.Table.from_pylist([kept], schema=INDEX_SCHEMA).replace_schema_metadata(metadata), path)
    copy.write_bytes(data)
    with pytest.warns(vecbinlog.ArchiveIndexWarning, match=f"{SAMPLE.name}{INDEX_SUFFIX}: a damaged index file: its row "
                      f"of {SAMPLE.name}: layout_changes at .*: indexed again"):
        result = build_index(str(copy), location, processes=1)
    assert (result.indexed, result.extended, result.bytes) == (1, 0, len(data))
    build_index(str(copy), tmp_path / "fresh", processes=1)
    assert _summary(location, SAMPLE.name) == _summary(tmp_path / "fresh", SAMPLE.name)


# -- pruning ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def three_files(mariadb_server, tmp_path_factory):
    """Three binlogs: table a in each, table b in the second only; copied."""
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS prn", "CREATE DATABASE prn")
    s.flush_binary_logs()
    first = s.current_binlog()
    s.execute("CREATE TABLE a (id INT PRIMARY KEY, v INT)", "INSERT INTO a VALUES (1, 1), (2, 2)", database="prn")
    s.flush_binary_logs()
    s.execute("INSERT INTO a VALUES (3, 3)", "CREATE TABLE b (id INT PRIMARY KEY, t VARCHAR(10))",
              "INSERT INTO b VALUES (1, 'one'), (2, 'two')", "UPDATE b SET t = 'TWO' WHERE id = 2",
              "INSERT INTO a VALUES (4, 4)", database="prn")
    s.flush_binary_logs()
    s.execute("INSERT INTO a VALUES (5, 5)", "UPDATE a SET v = 0", database="prn")
    s.flush_binary_logs()
    files = s.binlog_files()
    files = files[files.index(first):-1]
    folder = tmp_path_factory.mktemp("three")
    copies = []
    for f in files:
        shutil.copy(f, folder / f.name)
        copies.append(str(folder / f.name))
    return copies


@pytest.mark.mariadb
def test_a_table_in_one_file_of_three_plans_only_that_files_ranges(three_files, tmp_path):
    """tables= with an index: only the second file, only from b's first transaction to the end of
    its last (as the server's listing places its rows events); read, they give read_table's rows."""
    files = three_files
    build_index(files, tmp_path, processes=1)
    splits = plan_splits(files, 1, index=tmp_path, tables="prn.b")
    assert {s.path for s in splits} == {files[1]}
    with vecbinlog.open(files[1]) as log:
        events = log.events().to_pylist()
    starts = [e["pos"] for e in events if e["type"] == "GTID_EVENT"]
    b_maps = [e["pos"] for e in events if e["type"] == "TABLE_MAP_EVENT" and "(prn.b)" in e["info"]]
    first = max(p for p in starts if p < b_maps[0])
    after = min(p for p in starts if p > b_maps[-1])
    assert (splits[0].start, splits[-1].stop) == (first, after)
    expected = vecbinlog.read_table(files, "prn.b")
    got = [b for s in splits for _, b in read_split(s, "prn.b")]
    assert pa.Table.from_batches(got).to_pylist() == expected.to_pylist()
    assert load_index(files, tmp_path)[1].row["tables"][0]["name"] == "prn.a"


# -- splits of any size: a property test --------------------------------------------------------
@pytest.fixture(scope="module")
def larger(mariadb_server, tmp_path_factory):
    """Three files of ~1-2 MB each, a transaction a row (MariaDB, binlog_row_metadata MINIMAL:
    the column names come from the DDL, of earlier files too): the table altered in the second
    file (a column added), dropped and created again with other types, altered again in the
    third (a type widened); and its index."""
    s = mariadb_server
    old = s.query("SELECT @@GLOBAL.binlog_row_metadata")[0][0]
    s.set_global("binlog_row_metadata", "MINIMAL")
    try:
        s.execute("DROP DATABASE IF EXISTS prop", "CREATE DATABASE prop")
        s.flush_binary_logs()
        first = s.current_binlog()
        loop = ("CREATE PROCEDURE {name}(lo INT, hi INT) BEGIN DECLARE i INT DEFAULT lo; WHILE i < hi DO {body}; "
                "SET i = i + 1; END WHILE; END")
        s.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40), n INT)",
                  loop.format(name="ins", body="INSERT INTO t (id, v, n) VALUES (i, CONCAT('v', i), i)"),
                  loop.format(name="upd", body="UPDATE t SET n = n + 1 WHERE id = i"),
                  "CALL ins(0, 5000)", database="prop")
        s.flush_binary_logs()
        s.execute("ALTER TABLE t ADD COLUMN w BIGINT", "CALL upd(0, 3000)", "DROP TABLE t",
                  "CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT, n SMALLINT)", "CALL ins(10000, 13000)",
                  database="prop")
        s.flush_binary_logs()
        s.execute("ALTER TABLE t MODIFY n INT", "CALL upd(10000, 14000)", "CALL ins(20000, 22000)",
                  "DELETE FROM t WHERE id % 7 = 0", database="prop")
        s.flush_binary_logs()
    finally:
        s.set_global("binlog_row_metadata", str(old))
    made = s.binlog_files()
    folder = tmp_path_factory.mktemp("larger")
    files = []
    for f in made[made.index(first):-1]:
        shutil.copy(f, folder / f.name)
        files.append(str(folder / f.name))
    build_index(files, folder / "index", processes=1)
    with vecbinlog.open(files) as log:
        expected, plan = log.read_table("prop.t"), log.plans()["prop.t"]
    return files, folder / "index", expected, plan


@pytest.mark.mariadb
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(split_bytes=st.integers(16, 30).flatmap(lambda e: st.integers(1 << e, (2 << e) - 1)))
def test_splits_of_any_size_from_the_index_read_as_read_table(larger, split_bytes):
    """Split sizes from 64 KiB to 1 GiB (log-uniform): planned from the index they are the walked
    plan's, and read alone (each with the DDL and layout states the index gives its start), the
    table's own (tables=, only its ranges) give read_table's rows, every column, _schema_version
    and _incarnation included."""
    files, location, expected, plan = larger
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
        splits = plan_splits(files, split_bytes, index=location)
        assert splits == plan_splits(files, split_bytes)
        mine = plan_splits(files, split_bytes, index=location, tables="prop.t")
        got = [plan.conform(b) for s in mine for _, b in read_split(s, "prop.t")]
    assert pa.Table.from_batches(got, expected.schema).to_pylist() == expected.to_pylist()
    assert len(splits) >= min(3, sum(os.path.getsize(f) for f in files) // split_bytes)
    assert set(expected.column("_schema_version").to_pylist()) == {0, 1, 2, 3}  # (ADD COLUMN, recreated, MODIFY)
    assert set(expected.column("_incarnation").to_pylist()) == {0, 1}
    assert {"id", "v", "n", "w"} <= set(expected.column_names)  # (names from the DDL: MINIMAL has none)
    assert [os.path.getsize(f) > 1 << 20 for f in files] == [True, True, True]
