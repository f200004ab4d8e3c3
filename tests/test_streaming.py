"""A growing archive read as a stream (vecbinlog.streaming), without Spark, against a real
MariaDB server (and, in the quick tier, the sample against mariadb-binlog's print of it).

Where a file still being written is complete is checked against the server's own listing
(``SHOW BINLOG EVENTS``: where each GTID event starts, and the XID, COMMIT, ROLLBACK or DDL
query that ends its transaction) for copies of a binlog cut at, and inside, every event.
Positions (``startingPosition``) against the listing and ``SHOW MASTER STATUS``. Ranges read
one after the other, each decoded alone with the states the stream gives it, equal
``read_table`` of the whole files (the decoder the corpus and round-trip tests check against
the servers), for a workload whose table is altered, dropped and created again, named by its
DDL only.
"""

from __future__ import annotations

import shutil
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.log.config import ReadConfig
from vecbinlog.splits import read_split
from vecbinlog.streaming import Archive, Position, StreamHistory, archive_files

from .conftest import DATA
from .support.listing import complete_end, kept_starts, printed_events, server_events
from .support.mariadb import copy_binlogs
from .support.workloads import run_workload

SAMPLE = DATA / "sample" / "mariadb-bin.000001"


def test_the_sample_cut_anywhere_is_read_to_its_last_complete_transaction(tmp_path):
    """Copies of the sample cut at every event boundary, one byte after it and in the middle of
    each event: the stream ends where mariadb-binlog's print of the file says the last complete
    transaction ends (none before the first event is whole); one byte at a time, the ends are
    the transaction starts it prints, then the file's end."""
    events = printed_events((SAMPLE.parent / "mariadb-binlog-vv.txt").read_text())
    data = SAMPLE.read_bytes()
    assert events[-1]["end"] == len(data)
    copy = tmp_path / SAMPLE.name
    for cut in sorted({c for e in events for c in (e["pos"], e["pos"] + 1, (e["pos"] + e["end"]) // 2, e["end"])}):
        copy.write_bytes(data[:cut])
        expected = complete_end(events, cut)
        if expected is None:
            with pytest.raises(vecbinlog.SourceError):
                Archive(str(tmp_path)).latest()
            continue
        assert Archive(str(tmp_path)).latest() == Position(SAMPLE.name, expected), cut
    archive, at, visited = Archive(str(tmp_path)), Position(SAMPLE.name, 4), []
    while (nxt := archive.end(at, max_bytes=1)) != at:
        visited.append(nxt.pos)
        at = nxt
    assert visited == [e["pos"] for e in events if e["type"] == "Gtid"] + [len(data)]


@pytest.mark.parametrize("budget", [1, 700])
def test_the_samples_ranges_read_alone_equal_read_table(tmp_path, budget):
    """The sample read range after range (a transaction, or 700 bytes, at a time), each range
    decoded alone with the states the stream gives it: read_table's rows, in order."""
    shutil.copy(SAMPLE, tmp_path / SAMPLE.name)
    for table in ("shop.customers", "shop.orders"):
        got, _ = _stream_rows(Archive(str(tmp_path)), table, budget)
        expected = vecbinlog.read_table(SAMPLE, table)
        assert got.schema == expected.schema and got.to_pylist() == expected.to_pylist()


@pytest.fixture(scope="module", params=["plain", "compressed"])
def mixed_file(request, mariadb_server):
    """One binlog of DDL, multi-statement transactions, MyISAM changes in an InnoDB transaction
    that rolls back, a savepoint rolled back to, rows events of many rows (with
    log_bin_compress ON: compressed queries and rows events); and the server's listing of it."""
    s = mariadb_server
    old = {k: s.query(f"SELECT @@GLOBAL.{k}")[0][0] for k in ("log_bin_compress", "log_bin_compress_min_len")}
    if request.param == "compressed":
        s.set_global("log_bin_compress", "ON")
        s.set_global("log_bin_compress_min_len", "10")
    s.execute("DROP DATABASE IF EXISTS strm", "CREATE DATABASE strm")
    try:
        path = s.capture_binlog(
            "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40) CHARACTER SET utf8mb4, n INT) ENGINE=InnoDB",
            "CREATE TABLE side (id INT PRIMARY KEY) ENGINE=MyISAM",
            "INSERT INTO t VALUES " + ", ".join(f"({i}, 'v{i} ü', {i})" for i in range(40)),
            "BEGIN", "UPDATE t SET n = n + 1 WHERE id < 10", "DELETE FROM t WHERE id = 39", "COMMIT",
            "BEGIN", "UPDATE t SET v = 'undone' WHERE id = 1", "INSERT INTO side VALUES (1)", "ROLLBACK",
            "BEGIN", "UPDATE t SET v = 'kept' WHERE id = 2", "SAVEPOINT x", "UPDATE t SET v = 'no' WHERE id = 3",
            "INSERT INTO side VALUES (2)", "ROLLBACK TO SAVEPOINT x", "COMMIT",
            "UPDATE t SET id = id + 100 WHERE id BETWEEN 20 AND 24",
            "ALTER TABLE t ADD INDEX (n)",
            database="strm")
    finally:
        for k, v in old.items():
            s.set_global(k, v)
    return path, server_events(s, path.name)


def test_growing_file_is_read_to_its_last_complete_transaction(mixed_file, tmp_path):
    """Copies of the file cut at every event boundary, one byte after it, inside its header and
    in the middle of its body: the stream's end is where the server's listing says the last
    complete transaction ends, and a cut before the first event is whole gives no end."""
    path, events = mixed_file
    data = path.read_bytes()
    assert len(data) == events[-1]["end"]
    assert {"Gtid", "Xid", "Table_map", "Annotate_rows"} <= {e["type"] for e in events}
    assert {"COMMIT", "SAVEPOINT `x`", "ROLLBACK TO `x`"} <= {e["info"] for e in events}
    cuts = sorted({c for e in events for c in (e["pos"], e["pos"] + 1, e["pos"] + 10, (e["pos"] + e["end"]) // 2,
                                               e["end"])} | {0, 2, len(data)})
    folder = tmp_path / "growing"
    folder.mkdir()
    copy = folder / path.name
    seen = set()
    for cut in cuts:
        copy.write_bytes(data[:cut])
        expected = complete_end(events, cut)
        archive = Archive(str(folder))
        if expected is None:
            with pytest.raises(vecbinlog.SourceError):
                archive.latest()
            continue
        assert archive.latest() == Position(path.name, expected), cut
        seen.add(expected)
    # every transaction end, and every transaction start while the next is incomplete, was an end
    starts = [e["pos"] for e in events if e["type"] == "Gtid"]
    assert set(starts) <= seen
    assert len(data) in seen


def test_a_walk_from_where_the_last_one_stopped(mixed_file, tmp_path):
    """One Archive followed as the file grows (each walk goes on from where the last stopped)
    ends where a fresh walk of the same bytes ends, and reads the same transaction starts."""
    path, events = mixed_file
    data = path.read_bytes()
    folder = tmp_path / "g"
    folder.mkdir()
    copy = folder / path.name
    followed = Archive(str(folder))
    start = Position(path.name, 4)
    for cut in range(300, len(data) + 1, 97):
        copy.write_bytes(data[:cut])
        fresh = Archive(str(folder))
        assert followed.end(start) == fresh.end(start) == Position(path.name, complete_end(events, cut))
        name = path.name
        assert followed._scans[name].starts[followed._scans[name].starts < cut].tolist() == \
            fresh._scans[name].starts[fresh._scans[name].starts < cut].tolist()
    copy.write_bytes(data)
    assert followed.end(start) == Position(path.name, len(data))
    assert followed._scans[path.name].starts.tolist() == [e["pos"] for e in events if e["type"] == "Gtid"]


def test_budgets_cut_at_transaction_starts(mixed_file, tmp_path):
    """maxBytesPerTrigger of 1 byte: one transaction (and the events before the next) at a time,
    at the starts the server lists; maxFilesPerTrigger of 1 across files of a set."""
    path, events = mixed_file
    shutil.copy(path, tmp_path / path.name)
    archive = Archive(str(tmp_path))
    at, visited = Position(path.name, 4), []
    while True:
        nxt = archive.end(at, max_bytes=1)
        if nxt == at:
            break
        visited.append(nxt.pos)
        at = nxt
    starts = [e["pos"] for e in events if e["type"] == "Gtid"]
    assert visited == starts + [len(path.read_bytes())]
    assert archive.end(Position(path.name, 4), max_bytes=starts[2] - 4) == Position(path.name, starts[2])
    assert archive.end(Position(path.name, 4), max_bytes=starts[2] - 3) == Position(path.name, starts[3])


@pytest.fixture(scope="module")
def three_files(mariadb_server, tmp_path_factory):
    """A workload over three files (FLUSH BINARY LOGS twice), the listing of each, the GTID and
    time of a transaction in the middle, and the server's position at the end."""
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS strm3", "CREATE DATABASE strm3")
    s.flush_binary_logs()
    first = s.current_binlog()
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)", *[f"INSERT INTO t VALUES ({i}, {i})" for i in range(5)],
              database="strm3")
    s.flush_binary_logs()
    s.execute("UPDATE t SET v = v + 1 WHERE id = 1", database="strm3")
    middle = s.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0]
    s.execute("DELETE FROM t WHERE id = 2", database="strm3")
    s.flush_binary_logs()
    s.execute("INSERT INTO t VALUES (9, 9)", database="strm3")
    files = s.binlog_files()
    files = files[files.index(first):]
    out = tmp_path_factory.mktemp("three")
    for _ in range(50):  # a BINLOG_CHECKPOINT event may still come after the commit: copy when none is due
        status = s.query("SHOW MASTER STATUS")[0]
        for f in files:
            shutil.copy(f, out / f.name)
        if (out / files[-1].name).stat().st_size == int(status[1]) == int(s.query("SHOW MASTER STATUS")[0][1]):
            break
        time.sleep(0.1)
    (out / "mysql-bin.index").write_text("".join(f"./{f.name}\n" for f in files))
    return out, files, {f.name: server_events(s, f.name) for f in files}, middle, (status[0], int(status[1]))


def test_starting_positions(three_files):
    folder, files, events, middle, status = three_files
    archive = Archive(str(folder / "mysql-bin.index"))
    names = [f.name for f in files]
    assert [n for n, _ in archive.files()] == names
    assert archive.resolve_start("earliest") == Position(names[0], 4)
    assert archive.resolve_start("latest") == Position(*status)  # SHOW MASTER STATUS after the last commit
    # a GTID: the stream starts after that transaction (the next GTID event the server lists)
    second = events[names[1]]
    gtid_at = next(i for i, e in enumerate(second) if e["type"] == "Gtid" and e["info"].endswith(middle))
    following = next(e["pos"] for e in second[gtid_at + 1:] if e["type"] == "Gtid")
    assert archive.resolve_start(middle) == Position(names[1], following)
    # FILE:POS: a transaction start, or 4; anything else is refused
    assert archive.resolve_start(f"{names[1]}:{following}") == Position(names[1], following)
    with pytest.raises(ValueError, match="not where a transaction starts"):
        archive.resolve_start(f"{names[1]}:{following + 1}")
    with pytest.raises(ValueError, match="not in the archive"):
        archive.resolve_start("mysql-bin.999999:4")
    # a time: the first transaction at or after it (all of them, long ago; none, in the future)
    assert archive.resolve_start("2000-01-01T00:00:00") == Position(names[0], next(
        e["pos"] for e in events[names[0]] if e["type"] == "Gtid"))
    assert archive.resolve_start("2999-01-01 00:00:00") == Position(*status)
    with pytest.raises(ValueError, match="startingPosition"):
        archive.resolve_start("yesterday")


def test_new_files_in_log_order_and_file_budgets(three_files, tmp_path):
    """A folder that gets its files one by one (and the index of the server, and a glob, list
    the same), maxFilesPerTrigger=1 stays in one file, and a file that turns up behind the
    stream is an error, not a file silently passed over."""
    folder, files, events, _, status = three_files
    for spec in (str(folder), str(folder) + "/", str(folder / "mysql-bin.index"), str(folder / "mysql-bin.0*"),
                 ",".join(str(folder / f.name) for f in files)):
        assert archive_files(spec) == [str(folder / f.name) for f in files], spec
    grow = tmp_path / "grow"
    grow.mkdir()
    shutil.copy(folder / files[0].name, grow / files[0].name)
    archive = Archive(str(grow))
    at = archive.end(Position(files[0].name, 4))
    assert at == Position(files[0].name, events[files[0].name][-1]["end"])  # a lone file: to its last transaction
    for f in files[1:]:
        shutil.copy(folder / f.name, grow / f.name)
    one = archive.end(at, max_files=1)
    assert one.file == files[1].name  # the rest of the first file is nothing: the next file, alone
    assert archive.end(one, max_files=1).file == files[2].name
    assert archive.end(at) == Position(*status)
    (grow / "mysql-bin.000000").write_bytes((folder / files[0].name).read_bytes())
    with pytest.raises(ValueError, match="appeared in the archive after the stream had passed"):
        archive.end(Position(*status))


def _stream_rows(archive: Archive, table: str, max_bytes: int, upfront: bool = False,
                 **options) -> tuple[pa.Table, StreamHistory]:
    """The table's change log read range after range (``max_bytes`` each), every range decoded
    alone (``read_split`` of its splits, with the states the stream gives), fitted to the plan;
    the history walked as the ranges come, or ``upfront`` to the end of what is complete."""
    layouts = StreamHistory(ReadConfig.build(tables=[table], **options))
    at = archive.first()
    if upfront:  # as the Spark source starts: the history to the end of what is complete first
        layouts.take(layouts.walk(archive, archive.latest(), first=at))
    batches = []
    while True:
        end = archive.end(at, max_bytes=max_bytes)
        if end == at:
            break
        if layouts.known is None or layouts.known < end:
            layouts.take(layouts.walk(archive, end, first=archive.first()))
        for split in layouts.with_states(archive.splits(at, end, split_bytes=1)):
            batches += [b for _, b in read_split(split, [table], **options)]
        at = end
    plan = layouts.plans[table]
    return pa.Table.from_batches([plan.conform(b) for b in batches], schema=plan.schema), layouts


@pytest.mark.parametrize("metadata", ["FULL", "NO_LOG"])
@pytest.mark.parametrize("indexed", [False, True], ids=["walked", "indexed"])
def test_ranges_read_alone_equal_read_table(mariadb_server, tmp_path, metadata, indexed):
    """A table dropped and created again with other types, altered five ways, over three files,
    read one transaction at a time (and in ranges of 2 KB), each range with the DDL and layout
    states where it starts: read_table's schema and rows, _schema_version and _incarnation
    included; with NO_LOG the column names come from the DDL before each range. With an index
    of every file but the newest, the history of those comes from the index."""
    from vecbinlog.index import build_index

    run = run_workload(mariadb_server, metadata)
    for f in run["files"]:
        shutil.copy(f, tmp_path / f.name)
    index = None
    if indexed:
        index = str(tmp_path / "index")
        build_index([str(tmp_path / f.name) for f in run["files"][:-1]], index, processes=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
        expected = vecbinlog.read_table(run["files"], run["table"])
        for budget in (1, 2048):
            got, layouts = _stream_rows(Archive([str(tmp_path / f.name) for f in run["files"]], index=index),
                                        run["table"], budget, upfront=indexed)
            assert got.schema == expected.schema
            assert got.to_pylist() == expected.to_pylist()
    assert layouts.plans[run["table"]].versions == list(range(7))


def test_a_final_file_cut_short_is_read_to_its_last_event(three_files, tmp_path):
    """A file that is not the newest is final: read to its last whole event even when a
    transaction in it has no end (the server started a new file: it never will)."""
    folder, files, events, _, _ = three_files
    first = events[files[0].name]
    xid = next(i for i, e in enumerate(first) if e["type"] == "Xid")
    cut = first[xid]["pos"]  # the first INSERT's transaction without its XID
    (tmp_path / files[0].name).write_bytes((folder / files[0].name).read_bytes()[:cut])
    archive = Archive(str(tmp_path))
    gtid = max(e["pos"] for e in first[:xid] if e["type"] == "Gtid")
    assert archive.latest() == Position(files[0].name, gtid)  # newest: up to the open transaction
    shutil.copy(folder / files[1].name, tmp_path / files[1].name)
    assert archive.end(Position(files[0].name, gtid), max_files=1) == Position(files[0].name, cut)


def test_time_of_a_transaction(three_files):
    """startingPosition as a time: the first transaction whose GTID event's time is at or after it."""
    folder, files, _, _, _ = three_files
    archive = Archive(str(folder))
    with vecbinlog.open([str(folder / f.name) for f in files]) as log:
        gtids = [e for e in log.events().to_pylist() if e["type"] == "GTID_EVENT"]
    for g in (gtids[0], gtids[len(gtids) // 2], gtids[-1]):
        when = g["timestamp"].astimezone(timezone.utc).replace(tzinfo=None)
        first = next(e for e in gtids if e["timestamp"] >= g["timestamp"])
        assert archive.resolve_start(when.isoformat(sep=" ")) == Position(first["file"], first["pos"])
        assert archive.resolve_start(when.isoformat() + "+00:00") == Position(first["file"], first["pos"])


def test_a_split_after_create_database_knows_its_charset(mariadb_server):
    """A range that starts between CREATE DATABASE ... CHARACTER SET and the CREATE TABLE in it,
    and holds the table's rows (NO_LOG: the charset of its text comes from the database), is
    told the database's charset: the DDL states the driver gives ranges (``Binlog.history``)
    kept only the statements that changed a table. The batch source's splits and the stream's
    stretches both start so."""
    from vecbinlog.splits import Split, with_history

    run = run_workload(mariadb_server, "NO_LOG")
    first = run["files"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.SchemaWarning)
        with vecbinlog.open(first) as log:
            expected = log.read_table(run["table"])
            layouts = log.history()
            events = log.events().to_pylist()
        create = next(i for i, e in enumerate(events) if (e["info"] or "").startswith("use `chg_nolog`; CREATE TABLE"))
        gtid = max(e["pos"] for e in events[:create] if e["type"] == "GTID_EVENT")
        assert any("CREATE DATABASE" in (e["info"] or "") for e in events[:create])
        split = with_history([Split(str(first), gtid, None)], layouts)[0]
        batches = [b for _, b in read_split(split, [run["table"]])]
    assert expected.schema.field("note").type == pa.string()
    assert batches and all(b.schema.field("note").type == pa.string() for b in batches)  # not binary: a charset
    got = pa.Table.from_batches([layouts.plans[run["table"]].conform(b) for b in batches])
    assert got.to_pylist() == expected.to_pylist()


def test_an_index_answers_for_the_files_it_holds(three_files, tmp_path):
    """An archive whose index holds its files but the newest (as a stream finds it: the newest
    file is still written): starting positions, ends, splits, the history and its states are
    those of the archive walked, and through a filesystem that counts, the indexed files are not
    opened (a time in the newest file's range; a GTID of the middle file, and a micro-batch's end
    inside the first: their indexes keep every transaction start, with its time and GTID)."""
    from vecbinlog.index import build_index

    from .support.countingfs import counting_filesystem

    folder, files, events, middle, status = three_files
    paths = [str(folder / f.name) for f in files]
    build_index(paths[:-1], tmp_path / "index", processes=1)
    fs, counted = counting_filesystem()
    plain = Archive(paths, filesystem=fs)
    indexed = Archive(paths, filesystem=fs, index=str(tmp_path / "index"))
    starts = ["earliest", "latest", middle, f"{files[1].name}:4", "2000-01-01T00:00:00", "2999-01-01T00:00:00"]
    assert [indexed.resolve_start(s) for s in starts] == [plain.resolve_start(s) for s in starts]

    def walked(archive: Archive, at: Position) -> tuple:
        history = StreamHistory(ReadConfig.build())
        end = archive.latest()
        history.take(history.walk(archive, end, first=archive.first()))
        splits = history.with_states(archive.splits(at, end, split_bytes=1))
        return (end, archive.end(at, max_files=1), history.plans,
                [(s.path, s.start, s.stop, s.ddl.tables if s.ddl else None, s.versions) for s in splits])

    expected = walked(Archive(paths, filesystem=fs), Position(files[0].name, 4))
    counted.opened.clear()
    fresh = Archive(paths, filesystem=fs, index=str(tmp_path / "index"))
    assert walked(fresh, fresh.first()) == expected
    assert set(counted.opened) == {paths[-1]}, "only the newest file is read"
    # a micro-batch of 300 bytes ends inside the first file: at a start its index keeps
    at = Position(files[0].name, 4)
    assert fresh.end(at, max_bytes=300) == plain.end(at, max_bytes=300)
    assert set(counted.opened) == {paths[-1]}
    expected_start = plain.resolve_start(middle)  # (plain reads the files through fs too: not counted below)
    counted.opened.clear()
    assert fresh.resolve_start(middle) == expected_start
    assert set(counted.opened) <= {paths[-1]}


def test_a_time_or_gtid_to_start_from_is_found_in_the_index(mariadb_server, tmp_path, monkeypatch):
    """3000 transactions two seconds apart (``SET timestamp``): a time to start from is the first
    transaction the server lists at or after it (the GTID event of insert ``i`` is at ``base +
    2 i``), found from the index's block times (``start_times``); a GTID is the transaction the
    server lists after that GTID's, found from the index's GTID ranges (``gtid_blocks``): with
    every start kept, no binlog opened; with 32 kept, the block that holds it read only (through
    a filesystem that counts: not the file); as the archive walked finds them."""
    from vecbinlog.index import build_index
    from vecbinlog.log import summary

    from .support.countingfs import counting_filesystem

    base = 1_700_000_000
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS timed", "CREATE DATABASE timed")
    path = s.capture_binlog(f"SET timestamp = {base - 10}", "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(200))",
                            *[q for i in range(3000) for q in (f"SET timestamp = {base + 2 * i}",
                                                                f"INSERT INTO t VALUES ({i}, '{'x' * 190}')")],
                            database="timed")
    listed = [e for e in server_events(s, path.name) if e["type"] == "Gtid"]
    gtids = [e["pos"] for e in listed]
    assert len(gtids) == 3001  # the CREATE TABLE, then an insert each
    folder = tmp_path / "archive"
    folder.mkdir()  # (with the newest file, which is never answered from an index)
    files = [str(f) for f in copy_binlogs([path, s.current_binlog()], folder)[0]]
    build_index(files[:1], tmp_path / "every", processes=1)  # (4096 starts kept at most: all)
    monkeypatch.setattr(summary, "KEPT_STARTS", 32)
    build_index(files[:1], tmp_path / "spaced", processes=1)
    size = (folder / path.name).stat().st_size
    name = path.name

    def resolves(spec: str, expected: Position) -> None:
        """``spec`` resolves to ``expected`` walking the files, from either index, reading
        nothing of the file (every start kept) or less than a quarter of it (32 kept)."""
        assert Archive(files).resolve_start(spec) == expected, spec
        fs, counted = counting_filesystem()
        assert Archive(files, filesystem=fs, index=str(tmp_path / "every")).resolve_start(spec) == expected
        assert name not in {p.rsplit("/", 1)[-1] for p in counted.opened}
        fs, counted = counting_filesystem()
        assert Archive(files, filesystem=fs, index=str(tmp_path / "spaced")).resolve_start(spec) == expected
        assert counted.read < size // 4, (spec, counted.read, size)

    for i in (0, 1, 7, 1500, 2998, 2999):
        for when in (base + 2 * i, base + 2 * i - 1):  # at the time of insert i, or a second before it
            resolves(datetime.fromtimestamp(when, timezone.utc).replace(tzinfo=None).isoformat(),
                     Position(name, gtids[1 + i]))
    for i in (0, 1, 7, 1500, 2999):  # the stream starts after the transaction of that GTID
        resolves(listed[i]["info"].split()[-1], Position(name, gtids[i + 1]))  # "BEGIN GTID 0-1-157"
    last = listed[-1]["info"].split()[-1]  # the file's last transaction: the stream starts at its end
    assert Archive(files, index=str(tmp_path / "every")).resolve_start(last) == Archive(files).resolve_start(last) \
        == Position(name, size)


def test_positions_between_the_starts_an_index_keeps(mariadb_server, tmp_path, monkeypatch):
    """A file of 300 transactions (~100 KB) and the next one: the index of the first, keeping
    at most 32 starts, keeps the first transaction start (the server's GTID events) of each
    block of bytes; a FILE:POS at a start it does not keep, a GTID mid-file (the stream starts
    at the next GTID event the server lists), a FILE:POS that is no start, micro-batch ends by
    bytes (at the starts the server lists) and the last start before a position resolve as the
    archive walked resolves them."""
    import pyarrow.parquet as pq

    from vecbinlog.index import INDEX_SUFFIX, build_index
    from vecbinlog.log import summary

    monkeypatch.setattr(summary, "KEPT_STARTS", 32)  # (4096 by default)
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS spaced", "CREATE DATABASE spaced")
    path = s.capture_binlog("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(200))",
                            *[f"INSERT INTO t VALUES ({i}, '{'x' * 150}')" for i in range(300)], database="spaced")
    listed = server_events(s, path.name)
    folder = tmp_path / "archive"
    folder.mkdir()  # (with the newest file, which is never answered from an index)
    files = [str(f) for f in copy_binlogs([path, s.current_binlog()], folder)[0]]
    build_index(files[:1], tmp_path / "index", processes=1)
    kept = pq.read_table(tmp_path / "index" / (path.name + INDEX_SUFFIX)).column("transaction_starts")[0].as_py()
    gtids = [e for e in listed if e["type"] == "Gtid"]
    starts = [e["pos"] for e in gtids]
    assert kept == kept_starts(starts)
    assert 3 <= len(kept) <= 32 < len(starts)
    plain, indexed = Archive(files), Archive(files, index=str(tmp_path / "index"))
    name = path.name
    between = next(p for p in starts if p > kept[1] and p not in kept)
    k = len(gtids) // 2 + 1
    while gtids[k]["pos"] in kept:
        k += 1
    gtid = gtids[k - 1]["info"].split()[-1]  # "BEGIN GTID 0-1-157": the stream starts after it
    for spec, expected in [(f"{name}:{between}", Position(name, between)), (gtid, Position(name, gtids[k]["pos"]))]:
        assert indexed.resolve_start(spec) == plain.resolve_start(spec) == expected, spec
    for archive in (indexed, plain):
        with pytest.raises(ValueError, match="is not where a transaction starts"):
            archive.resolve_start(f"{name}:{between + 1}")
    first = Position(name, 4)
    for budget in (1, 5000, 20000, 50000):  # a micro-batch ends at the first start the server lists that far on
        assert indexed.end(first, max_bytes=budget) == plain.end(first, max_bytes=budget) == \
            Position(name, next(p for p in starts if p >= 4 + budget)), budget
    assert indexed.starts_before(Position(name, between + 10)) == plain.starts_before(Position(name, between + 10)) \
        == between


def test_a_streams_first_stretch_is_the_walk_its_schema_took(three_files, monkeypatch):
    """StreamHistory.walk(walked=...) with the walk a query's schema took of the archive's files
    (Binlog.history()): taken as the stream's first stretch, no file walked again, with the
    plans and, at every transaction start, the DDL and layout states of the stream's own walk;
    a walk of other files than the archive's now (one file fewer: files added since) is not
    taken, the stretch is walked."""
    from vecbinlog.reader import Binlog

    folder, files, _, _, _ = three_files
    paths = [str(folder / f.name) for f in files]
    archive = Archive(str(folder))
    first, latest = archive.first(), archive.latest()
    assert latest == Position(files[-1].name, (folder / files[-1].name).stat().st_size)
    config = ReadConfig.build()
    own = StreamHistory(config)
    own.take(own.walk(archive, latest, first=first))
    with Binlog(paths, config) as log:
        walked = log.history()
    with Binlog(paths[:-1], config) as log:
        fewer = log.history()
    ranges = []
    real = Binlog.over_range.__func__
    monkeypatch.setattr(Binlog, "over_range", classmethod(lambda cls, *a, **k: ranges.append(a[1:3]) or real(cls, *a, **k)))
    taken = StreamHistory(config)
    taken.take(taken.walk(archive, latest, first=first, walked=walked))
    assert ranges == []
    again = StreamHistory(config)
    again.take(again.walk(archive, latest, first=first, walked=fewer))
    assert ranges == [(4, latest.pos)]
    assert {n: p.schema for n, p in taken.plans.items()} == {n: p.schema for n, p in own.plans.items()}
    for split in own.with_states(archive.splits(first, latest, split_bytes=1)):
        at = Position(Path(split.path).name, split.start)
        for history in (taken, again):
            ddl, versions = history.state_at(at)
            assert versions == split.versions and (ddl.tables if ddl else None) == \
                (split.ddl.tables if split.ddl else None), at
