"""Transactions, GTIDs, statements and compressed events, checked against a real MariaDB server
and against what the corpus files' origins say.

The MariaDB workload mixes InnoDB, MyISAM and a SEQUENCE in transactions that commit, roll
back, and roll back to savepoints, once with ``log_bin_compress=ON`` and once without. The
server's own answers are the truth: its final ``SELECT`` (the replayed change log must equal
it), and ``mariadb-binlog``'s listing (GTID of each group, Xid, the annotated statements).
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.binlog.transactions import OUTCOMES

from ..conftest import DATA, corpus_path
from ..support.manifest import manifest_rows
from ..support.mariadb import run_mariadb_binlog_vv

WORKLOAD = [
    "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(100)) ENGINE=InnoDB",
    "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(100)) ENGINE=MyISAM",
    "CREATE SEQUENCE sq",
    "INSERT INTO t VALUES (1, 'one one one one one one one'), (2, 'two')",
    "INSERT INTO m VALUES (1, 'm one')",
    # rolled back: the InnoDB rows never happened, the MyISAM row did
    "BEGIN", "INSERT INTO t VALUES (3, 'three')", "INSERT INTO m VALUES (2, 'm two')",
    "INSERT INTO t VALUES (4, 'four')", "ROLLBACK",
    # savepoints: 6 is undone; the update of 5 and the delete of 7 are undone; 7 stays
    "BEGIN", "INSERT INTO t VALUES (5, 'five')", "SAVEPOINT a", "INSERT INTO t VALUES (6, 'six')",
    "INSERT INTO m VALUES (3, 'm three')", "ROLLBACK TO SAVEPOINT a", "INSERT INTO t VALUES (7, 'seven')",
    "SAVEPOINT b", "UPDATE t SET v = 'cinq' WHERE id = 5", "SAVEPOINT c", "DELETE FROM t WHERE id = 7",
    "INSERT INTO m VALUES (4, 'm four')", "ROLLBACK TO SAVEPOINT b", "COMMIT",
    # a sequence is not transactional: NEXTVAL takes effect although the transaction rolls back
    "BEGIN", "INSERT INTO t VALUES (8, 'eight')", "SELECT NEXTVAL(sq)", "ROLLBACK",
    "UPDATE t SET v = 'uno' WHERE id = 1",
    "DELETE FROM t WHERE id = 2",
]
#: What did not take effect, from the workload's semantics (not from any decoder). The
#: server (MariaDB 10.11, ROW format) writes the MyISAM and sequence changes as groups of
#: their own and leaves the rolled-back InnoDB rows out, except those undone by ROLLBACK TO
#: SAVEPOINT, which it must log (a non-transactional table changed in the transaction).
UNDONE = {"txn.t": {6, 5, 7}}


@pytest.fixture(scope="module", params=["plain", "compressed"])
def workload_binlog(request, mariadb_server):
    s = mariadb_server
    old = {k: s.query(f"SELECT @@GLOBAL.{k}")[0][0] for k in ("log_bin_compress", "log_bin_compress_min_len")}
    compressed = request.param == "compressed"
    s.set_global("log_bin_compress", "ON" if compressed else "OFF")
    s.set_global("log_bin_compress_min_len", "10")
    try:
        s.execute("DROP DATABASE IF EXISTS txn", "CREATE DATABASE txn")
        path = s.capture_binlog(*WORKLOAD, database="txn")
        state = s.query("SELECT @@GLOBAL.gtid_binlog_state")[0][0]
        selects = {f"txn.{t}": dict(s.query(f"SELECT id, v FROM txn.{t}")) for t in ("t", "m")}
        seq = s.query("SELECT next_not_cached_value FROM txn.sq")[0][0]
    finally:
        for k, v in old.items():
            s.set_global(k, str(v))
    return request.param, path, state, selects, seq


def _replay(table) -> dict:
    state: dict = {}
    for row in table.to_pylist():
        if row["_change_type"] in ("insert", "update_postimage"):
            state[row["id"]] = row["v"]
        elif row["_change_type"] == "delete":
            del state[row["id"]]
    return state


def _read(path, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with vecbinlog.open(path, **options) as log:
            tables = log.read_all()
    return tables, [str(w.message) for w in caught]


def test_replay_equals_select(workload_binlog):
    kind, path, _, selects, _ = workload_binlog
    tables, notes = _read(path)
    for name, rows in selects.items():
        assert _replay(tables[name]) == rows, (kind, name)
    # what was left out is said, table by table
    assert any(n.startswith("txn.t: 4 row images left out") for n in notes), notes
    assert set(tables["txn.t"].column("_outcome").to_pylist()) == {"commit"}


def test_rolled_back_rows_kept_and_marked(workload_binlog):
    kind, path, _, selects, _ = workload_binlog
    tables, notes = _read(path, rolled_back="keep")
    assert not notes
    for name, ids in UNDONE.items():
        rows = tables[name].to_pylist()
        assert {r["id"] for r in rows if r["_outcome"] == "rollback"} == ids, (kind, name)
        assert _replay(tables[name]) != selects[name]  # keeping them would replay wrongly
    # MyISAM rows and the sequence took effect: never marked
    assert set(tables["txn.m"].column("_outcome").to_pylist()) == {"commit"}
    assert set(tables["txn.sq"].column("_outcome").to_pylist()) == {"commit"}
    assert tables["txn.t"].schema.field("_outcome").type.value_type == "string"
    assert set(OUTCOMES) >= set(tables["txn.t"].column("_outcome").to_pylist())


def test_sequence_rows(workload_binlog):
    _, path, _, _, seq = workload_binlog
    tables, _ = _read(path)
    # NEXTVAL wrote the sequence's new state (next_not_cached_value), as SELECT shows it
    assert tables["txn.sq"].column("next_not_cached_value").to_pylist()[-1] == seq


def _listing(path):
    """Per rows event (by position): the GTID and Xid of its group and the annotated statement,
    as mariadb-binlog prints them."""
    text = run_mariadb_binlog_vv(path)
    gtid_of, xid_of, query_of = {}, {}, {}
    pos = gtid = query = None
    group: list[int] = []
    for line in text.splitlines():
        if m := re.match(r"# at (\d+)$", line):
            pos = int(m.group(1))
        elif m := re.search(r"\tGTID (\d+-\d+-\d+)", line):
            gtid, group, query = m.group(1), [], None
        elif line.startswith("#Q> "):
            query = line[4:]
        elif re.search(r"\t(Write|Update|Delete)_(compressed_)?rows", line):
            gtid_of[pos], query_of[pos] = gtid, query
            group.append(pos)
        elif m := re.search(r"\tXid = (\d+)", line):
            xid_of.update({p: int(m.group(1)) for p in group})
    return gtid_of, xid_of, query_of


def test_gtid_xid_and_statement_per_row(workload_binlog):
    kind, path, state, _, _ = workload_binlog
    gtid_of, xid_of, query_of = _listing(path)
    tables, _ = _read(path, rolled_back="keep", queries=True)
    n = 0
    for name, table in tables.items():
        for row in table.to_pylist():
            pos = row["_log_pos"]
            assert row["_gtid"] == gtid_of[pos], (kind, name, pos)
            assert row["_xid"] == xid_of.get(pos), (kind, name, pos)
            assert row["_query"] == query_of[pos], (kind, name, pos)
            n += 1
    assert n == sum(t.num_rows for t in tables.values()) >= 16
    with vecbinlog.open(path) as log:
        info = log.info()["files"][0]
    # the server's binlog state after the workload is the file's last GTID of each domain
    assert info["gtids"]["set"] == state
    listing = run_mariadb_binlog_vv(path)
    assert f"Gtid list [{info['gtids']['previous']}]" in listing
    assert info["gtids"]["first"] == re.search(r"\tGTID (\d+-\d+-\d+)", listing).group(1)
    if kind == "compressed":  # the server did compress: no plain rows event is left
        assert info["events"].get("WRITE_ROWS_COMPRESSED_EVENT_V1", 0) > 5
        assert "WRITE_ROWS_EVENT_V1" not in info["events"]
        assert info["events"]["QUERY_COMPRESSED_EVENT"] == 3  # the CREATE statements


def test_runs_carried_across_segments(workload_binlog, monkeypatch):
    """In segments of 512 bytes (transactions cut by segment boundaries), a table's rows are
    carried from segment to segment and decoded in fewer batches than with every segment's
    runs decoded at once (in a plain file; compressed events are unpacked into a buffer of
    their segment, whose runs are not carried), with the same rows; each row keeps the GTID,
    Xid and statement that mariadb-binlog's listing gives (a transaction met in two segments
    is one). Outcomes in small segments: test_savepoints_across_small_segments."""
    from vecbinlog.log import runs as runs_module

    kind, path, _, selects, _ = workload_binlog
    gtid_of, xid_of, query_of = _listing(path)

    def read(**options):
        with vecbinlog.open(path, segment_bytes=512, rolled_back="keep", queries=True, **options) as log:
            got: dict = {}
            for name, batch in log.iter_tables():
                got.setdefault(name, []).append(batch)
        return got

    carried = read()
    for threads in (1, 2):
        assert {n: [b.to_pylist() for b in bs] for n, bs in read(threads=threads).items()} == \
            {n: [b.to_pylist() for b in bs] for n, bs in carried.items()}, (kind, threads)
    for name, batches in carried.items():
        for row in (r for b in batches for r in b.to_pylist()):
            pos = row["_log_pos"]
            assert (row["_gtid"], row["_xid"], row["_query"]) == (gtid_of[pos], xid_of.get(pos), query_of[pos]), \
                (kind, name, pos)
    rows = {n: pa.Table.from_batches(bs) for n, bs in carried.items()}
    monkeypatch.setattr(runs_module, "CARRY_EVENTS", 0)  # nothing carried: each segment's runs decoded at once
    each = read()
    if kind == "plain":
        assert sum(len(b) for b in carried.values()) < sum(len(b) for b in each.values())
    else:  # compressed events are unpacked into a buffer of their segment: not carried
        assert sum(len(b) for b in carried.values()) == sum(len(b) for b in each.values())
    assert {n: pa.Table.from_batches(bs).to_pylist() for n, bs in each.items()} == \
        {n: t.to_pylist() for n, t in rows.items()}, kind


@pytest.mark.parametrize("segment_bytes", [300, 512, 2048])
def test_pages_let_go_only_once_no_run_reads_them(workload_binlog, monkeypatch, segment_bytes):
    """The pages of a memory-mapped file that a decoded run read are let go of (madvise), but
    not while a run not decoded yet (carried, or handed out) will read them: no rows event a
    run reads is in a range let go of before, and every one is let go of afterwards (nothing
    stays mapped but partial pages)."""
    from vecbinlog.log import batches as batches_module
    from vecbinlog.binlog.sources import MappedSource

    kind, path, _, _, _ = workload_binlog
    if kind != "plain":
        pytest.skip("compressed events are unpacked per segment: their runs are not carried")
    rows_events = sorted(_listing(path)[0])  # the positions mariadb-binlog lists rows events at
    for threads in (1, 2):
        log_of: list = []  # ("release", lo, hi) and ("event", lo, hi) of each run's rows events, in order
        release, decoded = MappedSource.release, batches_module.run_batches

        def recorded_release(self, lo, hi, release=release):
            log_of.append(("release", lo, hi))
            release(self, lo, hi)

        def recorded_run(run, *rest, decoded=decoded):
            for events in run.events:
                log_of.extend(("event", int(a), int(a + n)) for a, n in zip(events.pos, events.event_size))
            return decoded(run, *rest)

        monkeypatch.setattr(MappedSource, "release", recorded_release)
        monkeypatch.setattr(batches_module, "run_batches", recorded_run)
        with vecbinlog.open(path, segment_bytes=segment_bytes, threads=threads, rolled_back="keep") as log:
            log.read_all()
        monkeypatch.undo()
        events = [(k, lo, hi) for k, (what, lo, hi) in enumerate(log_of) if what == "event"]
        released = [(k, lo, hi) for k, (what, lo, hi) in enumerate(log_of) if what == "release"]
        assert released and len(rows_events) >= 8, (threads, segment_bytes)
        assert sorted(lo for _, lo, _ in events) == rows_events, (threads, segment_bytes)  # each read once
        for k, lo, hi in released:  # no rows event a run reads later is in a range let go of
            later = [(a, b) for j, a, b in events if j > k and a < hi and b > lo]
            assert not later, (threads, segment_bytes, (lo, hi), later)
        for j, lo, hi in events:  # every rows event read: let go of afterwards, whole pages aside
            assert any(k > j and a <= lo + 4096 and hi - 4096 <= b for k, a, b in released), (threads, segment_bytes, (lo, hi))


def test_checksum_mismatch_in_a_carried_run(workload_binlog):
    """A rows event with one byte changed, in a run carried across segments (whose CRC32s are
    checked on a batch thread while the walk goes on, with threads=2): the read stops with
    ChecksumError at that event, as mariadb-binlog's listing places it, whatever ``threads``."""
    kind, path, _, _, _ = workload_binlog
    if kind != "plain":
        pytest.skip("compressed events are unpacked per segment: their runs are not carried")
    gtid_of, _, _ = _listing(path)
    data = bytearray(Path(path).read_bytes())
    pos = min(gtid_of)  # the first rows event: its table's run goes on in the next segments
    size = int.from_bytes(data[pos + 9:pos + 13], "little")
    data[pos + size - 6] ^= 0x01  # a row image byte, before the stored CRC32
    for threads in (1, 2):
        with vecbinlog.open(bytes(data), segment_bytes=512, threads=threads) as log:
            with pytest.raises(vecbinlog.ChecksumError) as err:
                log.read_all()
        assert err.value.offset == pos, threads
        assert "ROWS" in err.value.event_type, threads


def test_savepoints_across_small_segments(workload_binlog):
    """In segments of a few hundred bytes the transaction with savepoints is cut several times;
    what ROLLBACK TO undid is still only what came after its savepoint (a look-ahead made for an
    earlier segment is not taken again whole for a later one), and the workload replays to
    SELECT as in one segment."""
    kind, path, _, selects, _ = workload_binlog
    for segment_bytes in (200, 333, 512, 700, 1000):
        tables, _ = _read(path, segment_bytes=segment_bytes)
        for name, rows in selects.items():
            assert _replay(tables[name]) == rows, (kind, name, segment_bytes)
        kept, _ = _read(path, segment_bytes=segment_bytes, rolled_back="keep")
        rolled_back = {r["id"] for r in kept["txn.t"].to_pylist() if r["_outcome"] == "rollback"}
        assert rolled_back == UNDONE["txn.t"], (kind, segment_bytes)


def test_compressed_equals_plain(mariadb_server):
    """The same workload with and without log_bin_compress decodes to the same change log."""
    s = mariadb_server
    logs = {}
    for mode in ("OFF", "ON"):
        s.set_global("log_bin_compress", mode)
        try:
            s.execute("DROP DATABASE IF EXISTS txn_c", "CREATE DATABASE txn_c")
            logs[mode] = s.capture_binlog(*WORKLOAD, database="txn_c")
        finally:
            s.set_global("log_bin_compress", "OFF")
    meta = ("_log_pos", "_commit_timestamp", "_log_file", "_gtid", "_transaction_pos", "_xid")
    plain, _ = _read(logs["OFF"], rolled_back="keep", queries=True)
    packed, _ = _read(logs["ON"], rolled_back="keep", queries=True)
    assert sorted(plain) == sorted(packed)
    for name in plain:
        assert plain[name].drop_columns(list(meta)).equals(packed[name].drop_columns(list(meta))), name


# -- corpus files ---------------------------------------------------------------------------

PAYLOAD_FILES = [
    "blackbeam__rust_mysql_common/transaction_compression.000001",
    "osheroff__mysql-binlog-connector-java/mysql-bin.compressed",
    "apecloud__mysql-binlog-connector-rust/mysql-bin.000057",
]


@pytest.mark.parametrize("name", PAYLOAD_FILES)
def test_payload_contents_as_manifest(name):
    """The events inside the zstd payloads are those the corpus MANIFEST lists for the file."""
    note = manifest_rows()[name]["note"]
    listed = {f"{t}": int(n) for t, n in re.findall(r"(\w+)\(\d+\)×(\d+)", note.split("payload contents:")[1].split("(compression")[0])}
    with vecbinlog.open(corpus_path(name)) as log:
        info = log.info()["files"][0]
    short = {k.replace("_EVENT", "").replace("_LOG", "").replace("_V2", "_V2"): v for k, v in info["events_in_payloads"].items()}
    names = {"QUERY": "QUERY", "XID": "XID", "TABLE_MAP": "TABLE_MAP", "ROWS_QUERY": "ROWS_QUERY",
             "WRITE_ROWS": "WRITE_ROWS_V2", "UPDATE_ROWS": "UPDATE_ROWS_V2"}
    assert {names[k]: v for k, v in short.items()} == listed
    assert info["events_not_decoded"]["unsupported"] == {}


def test_payload_rows_transactions():
    """mysql-bin.000057: a DDL statement, then two compressed transactions, each after its GTID
    event (33); the GTIDs continue the file's PREVIOUS_GTIDS set (uuid:1-10 before it: 11-13 here)."""
    with vecbinlog.open(corpus_path(PAYLOAD_FILES[2]), queries=True) as log:
        t = log.read_all()
        info = log.info()["files"][0]
    uuid = "76f3e7be-6720-11ed-9cad-0242ac110002"
    assert info["gtids"]["previous"] == f"{uuid}:1-10"
    assert info["gtids"]["set"] == f"{uuid}:11-13"
    ab = t["a.b"].to_pylist()
    assert [(r["_gtid"], r["_xid"], r["_outcome"], r["_query"]) for r in ab] == [
        (f"{uuid}:12", 10, "commit", "insert into b values(1)")
    ]
    rows = t["a.test_table_3"].to_pylist()
    assert {r["_gtid"] for r in rows} == {f"{uuid}:13"}
    assert [r["_payload_offset"] for r in rows] == [306, 306, 1029]  # the update's two images, then the insert


def test_tagged_gtid():
    """MySQL 9.6 GTID_TAGGED_LOG_EVENT: uuid:tag:gno; PREVIOUS_GTIDS lists mytag:1-2 before it."""
    with vecbinlog.open(corpus_path("blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001")) as log:
        (table,) = log.read_all().values()
        info = log.info()["files"][0]
    uuid = "55778904-0299-11f1-b1b8-4ef0c4956feb"
    assert info["gtids"]["previous"] == f"{uuid}:1-13:mytag:1-2"
    assert table.column("_gtid").to_pylist() == [f"{uuid}:mytag:3"] * table.num_rows


@pytest.mark.parametrize("file, sources, numbers", [  # file: the path, found when the test runs
    (lambda: corpus_path("blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001"),
     ["55778904-0299-11f1-b1b8-4ef0c4956feb:mytag"], [3]),
    (lambda: corpus_path(PAYLOAD_FILES[2]), ["76f3e7be-6720-11ed-9cad-0242ac110002"], [11, 12, 13]),
    (lambda: DATA / "sample" / "mariadb-bin.000001", ["0-1"], list(range(1, 10))),
], ids=["tagged", "mysql", "mariadb"])
def test_gtid_sources_and_numbers(file, sources, numbers):
    """read_gtids gives each GTID's source (MySQL uuid or uuid:tag, MariaDB domain-server) and
    number, read from the event's bytes: the text (as the servers print it, tests above) is the
    source, ':' (MySQL) or '-' (MariaDB), the number; and the index keeps them so (gtid_sources)."""
    from vecbinlog.binlog.file import BinlogFile
    from vecbinlog.binlog.gtid import GTID_EVENTS, read_gtids
    from vecbinlog.index import file_identity
    from vecbinlog.log.summary import summarize_file

    path = file()
    got_sources, got_numbers = set(), []
    with BinlogFile(str(path)) as f:
        for seg in f.segments():
            sel = np.flatnonzero(np.isin(seg.index.type_code, list(GTID_EVENTS)))
            gtids = read_gtids(seg.src, seg.index, sel)
            for text, code, number in zip(gtids.texts.to_pylist(), gtids.source.tolist(), gtids.number.tolist()):
                if text is None:
                    assert code == -1
                    continue
                source = gtids.sources[code]
                assert text == f"{source}{'-' if re.fullmatch(r'[0-9]+-[0-9]+', source) else ':'}{number}"
                got_sources.add(source)
                got_numbers.append(number)
    assert sorted(got_sources) == sources and got_numbers == numbers
    row = summarize_file(str(path), file_identity(str(path))).to_pylist()[0]
    assert row["gtid_sources"] == sources


@pytest.mark.parametrize("name", ["zalora__binlog-parser/fixtures/mysql-bin.07", "blackbeam__rust_mysql_common/mariadb-bin.000001"])
def test_mariadb_corpus_gtids(name):
    """MariaDB 10.0 and 10.5 files: each group's GTID and Xid as mariadb-binlog prints them."""
    path = corpus_path(name)
    gtid_of, xid_of, _ = _listing(path)
    tables, _ = _read(path)
    seen = Counter()
    for table in tables.values():
        for row in table.to_pylist():
            assert row["_gtid"] == gtid_of[row["_log_pos"]]
            assert row["_xid"] == xid_of.get(row["_log_pos"])
            seen[row["_gtid"]] += 1
    assert sum(seen.values()) > 0


def test_xa_prepared_transaction():
    """AliSQL (PolarDB-X) XA transaction: XA START ... XA END, XA_PREPARE: its rows are kept,
    outcome 'prepare' (a later XA COMMIT/ROLLBACK decides), in the transaction opened by XA START."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vecbinlog.TruncatedWarning)
        with vecbinlog.open(corpus_path("polardb__polardbx-cdc/mysql_bin.1")) as log:
            (table,) = log.read_all().values()
            events = log.events().to_pylist()
    xa_start = next(e["pos"] for e in events if (e["info"] or "").startswith("XA START"))
    assert [e["type"] for e in events].count("XA_PREPARE_LOG_EVENT") == 1
    assert set(table.column("_outcome").to_pylist()) == {"prepare"}
    assert set(table.column("_transaction_pos").to_pylist()) == {xa_start}
    assert table.column("_xid").null_count == table.num_rows


def test_vendor_events_counted():
    """Aurora's padding event (100) and AliSQL's (80, 101) are counted as skipped, never read."""
    for name, codes in [("osheroff__mysql-binlog-connector-java/mysql-bin.aurora-padding", {100: 1}),
                        ("polardb__polardbx-cdc/mysql_bin.1", {80: 2, 101: 1})]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", vecbinlog.TruncatedWarning)
            with vecbinlog.open(corpus_path(name)) as log:
                skipped = log.info()["files"][0]["events_not_decoded"]["skipped"]
        assert {int(k[8:-1]): v for k, v in skipped.items() if k.startswith("UNKNOWN(")} == codes


def test_gtid_filter():
    """gtids= keeps the transactions of a GTID set (MySQL intervals, MariaDB items and ranges)."""
    path = corpus_path(PAYLOAD_FILES[2])
    uuid = "76f3e7be-6720-11ed-9cad-0242ac110002"
    with vecbinlog.open(path, gtids=f"{uuid}:13") as log:
        assert {n: t.num_rows for n, t in log.read_all().items()} == {"a.b": 0, "a.test_table_3": 3}
    with vecbinlog.open(path, gtids=f"{uuid}:1-12") as log:
        assert {n: t.num_rows for n, t in log.read_all().items() if t.num_rows} == {"a.b": 1}
    sample = DATA / "sample" / "mariadb-bin.000001"
    full = vecbinlog.read_table(sample, "shop.orders")
    for spec, keep in (("0-1-5..6", {"0-1-5", "0-1-6"}), ("0-1-7,0-1-8", {"0-1-7", "0-1-8"}), ("9-9-1", set())):
        got = vecbinlog.read_table(sample, "shop.orders", gtids=spec)
        assert got.to_pylist() == [r for r in full.to_pylist() if r["_gtid"] in keep], spec
    with pytest.raises(ValueError, match="a GTID number is at most 18446744073709551615"):
        vecbinlog.open(sample, gtids="0-1-18446744073709551616")
    with pytest.raises(ValueError, match="neither"):
        vecbinlog.open(sample, gtids="not a gtid")
