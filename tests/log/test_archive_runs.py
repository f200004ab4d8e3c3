"""An archive of many small files, as production rotates them: a real MariaDB server writes
small single-row transactions over several tables into files of 4 KiB (``max_binlog_size``).

* ``read_all`` of the set gives every row image ``mariadb-binlog -vv`` prints, each at the file
  and position it prints it at, and replaying it by key gives the server's ``SELECT``;
* a table's rows come in a few batches, not one per file (its small runs go on from file to
  file, their events gathered into one buffer);
* reading the tables one after another from one open log gives what separate reads give (the
  runs are planned once, by the second read);
* with a CRC32 changed in a later file, the read stops with ChecksumError at that event.
"""

from __future__ import annotations

import random
import shutil
import warnings

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.log import logwalk

from ..support.mariadb import parse_vv, run_mariadb_binlog_vv

pytestmark = pytest.mark.mariadb

TABLES = 3
CHANGES = 400


@pytest.fixture(scope="module")
def archive(mariadb_server, tmp_path_factory):
    """(the binlog files of the workload, copied in log order, the server's rows by table)."""
    server = mariadb_server
    rnd = random.Random(20261127)
    sql = ["DROP DATABASE IF EXISTS arch", "CREATE DATABASE arch", "USE arch"]
    sql += [f"CREATE TABLE t{k} (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)" for k in range(TABLES)]
    ids = [[] for _ in range(TABLES)]
    for i in range(CHANGES):
        k = rnd.randrange(TABLES)
        r = rnd.random()
        if not ids[k] or r < 0.6:
            ids[k].append(i)
            sql.append(f"INSERT INTO t{k} VALUES ({i}, 'v{i}', {rnd.randint(-2**40, 2**40)})")
        elif r < 0.85:
            sql.append(f"UPDATE t{k} SET v = CONCAT(v, '+'), n = n + 1 WHERE id = {rnd.choice(ids[k])}")
        else:
            sql.append(f"DELETE FROM t{k} WHERE id = {ids[k].pop(rnd.randrange(len(ids[k])))}")
    saved = server.query("SELECT @@GLOBAL.max_binlog_size")[0][0]
    server.set_global("max_binlog_size", 4096)
    try:
        server.flush_binary_logs()
        first = len(server.binlog_files()) - 1
        server.execute(*sql)
        server.flush_binary_logs()
        files = server.binlog_files()[first:-1]
    finally:
        server.set_global("max_binlog_size", str(saved))
    folder = tmp_path_factory.mktemp("archive")
    copies = []
    for f in files:
        shutil.copy(f, folder / f.name)
        copies.append(folder / f.name)
    rows = {f"arch.t{k}": server.query(f"SELECT id, v, n FROM arch.t{k} ORDER BY id") for k in range(TABLES)}
    return copies, rows


def _replay(table: pa.Table) -> list[tuple]:
    state: dict[int, tuple] = {}
    for r in table.select(["id", "v", "n", "_change_type"]).to_pylist():
        if r["_change_type"] in ("insert", "update_postimage"):
            state[r["id"]] = (r["id"], r["v"], r["n"])
        elif r["_change_type"] == "delete":
            state.pop(r["id"], None)
    return [state[k] for k in sorted(state)]


def test_every_image_where_mariadb_binlog_prints_it(archive):
    files, rows = archive
    assert len(files) >= 20, len(files)  # the workload spans many small files
    printed = {}
    for f in files:
        for im in parse_vv(run_mariadb_binlog_vv(f)):
            if im.table.startswith("arch."):
                values = im.as_dict()
                printed.setdefault(im.table, []).append(
                    (f.name, im.pos, values[1].signed, values[2].decode(), values[3].signed))
    with vecbinlog.open(files) as log:
        tables = log.read_all()
    assert set(tables) == set(rows)
    for name, t in tables.items():
        ours = [(r["_log_file"], r["_log_pos"], r["id"], r["v"], r["n"])
                for r in t.select(["_log_file", "_log_pos", "id", "v", "n"]).to_pylist()]
        assert ours == printed[name], name
        assert _replay(t) == [tuple(r) for r in rows[name]], name


def test_a_tables_rows_come_in_few_batches(archive):
    files, _ = archive
    with vecbinlog.open(files) as log:
        counts: dict[str, int] = {}
        for name, _batch in log.iter_tables():
            counts[name] = counts.get(name, 0) + 1
    assert counts and all(n <= 2 for n in counts.values()), (len(files), counts)


def test_table_after_table_from_one_open_log(archive, monkeypatch):
    files, _ = archive
    with vecbinlog.open(files) as log:
        alone = {name: log.read_table(name) for name in ["arch.t0"]}
    walks = []
    steps = logwalk.LogWalk.steps

    def counted(self, *a, **k):
        walks.append(k.get("transactions", False))
        return steps(self, *a, **k)

    monkeypatch.setattr(logwalk.LogWalk, "steps", counted)
    with vecbinlog.open(files) as log:
        each = {name: log.read_table(name) for name in log.tables}
        again = log.read_table("arch.t0")
    monkeypatch.undo()
    with vecbinlog.open(files) as log:
        together = log.read_all()
    assert list(each) == list(together)
    for name in each:
        assert each[name].equals(together[name]), name
    assert again.equals(alone["arch.t0"]) and again.equals(each["arch.t0"])
    # log.tables plans the runs in its walk (the archive is under PLAN_ON_TABLES_BYTES): every
    # read decodes planned runs, the files are walked once
    assert walks == [True], walks


def test_files_too_large_to_plan_are_walked_once_for_tables_and_plans(archive, monkeypatch, tmp_path):
    """Files over PLAN_ON_TABLES_BYTES (patched to 0 here): their runs are not planned, and the
    walk of the layouts that finds the tables gives their plans too (and the other way
    round); ``to-parquet`` walks them twice, the layouts then the rows (it walked them three
    times: 2.28 -> 1.88 s on 391 MB of 2 MB files); its part files replay to the server's
    SELECT, and hold the rows ``read_all`` gives, in log order."""
    from vecbinlog.cli import main
    from vecbinlog.log import batches

    files, rows = archive
    with vecbinlog.open(files) as log:
        expected = log.read_all()
    monkeypatch.setattr(batches, "PLAN_ON_TABLES_BYTES", 0)
    walks = []
    steps = logwalk.LogWalk.steps

    def counted(self, *a, **k):
        walks.append(1)
        return steps(self, *a, **k)

    monkeypatch.setattr(logwalk.LogWalk, "steps", counted)
    with vecbinlog.open(files) as log:
        tables = log.tables
        plans = log.plans()
        assert walks == [1] and set(tables) == set(rows) and tables == list(expected) and list(plans) == tables
        assert all(plans[n].schema.names == expected[n].schema.names for n in tables)
    walks.clear()
    with vecbinlog.open(files) as log:
        assert list(log.plans()) == log.tables == list(expected) and walks == [1]
    walks.clear()
    assert main(["to-parquet", *map(str, files), str(tmp_path / "out"), "-q"]) == 0
    assert len(walks) == 2
    import pyarrow.parquet as pq

    for name in tables:
        got = pq.read_table(tmp_path / "out" / f"table={name}")
        assert _replay(got) == [tuple(r) for r in rows[name]], name
        columns = ["id", "v", "n", "_change_type", "_log_file", "_log_pos"]  # (a table's one part: in log order)
        assert got.select(columns).to_pylist() == expected[name].select(columns).to_pylist()


def test_a_carried_run_holds_only_its_own_events(archive):
    """Runs carried from file to file keep copies of their own events' index entries and
    transactions, not views of the arrays a step gathered for all its runs: a table with a
    few rows in each of many segments would otherwise hold every segment's."""
    files, _ = archive
    with vecbinlog.open(files, segment_bytes=4096) as log:  # a step per file, runs carried on
        tables = log.tables  # plans the runs (files this small: under PLAN_ON_TABLES_BYTES)
        planned = log._walking[1]._planned.runs
        each = {name: log.read_table(name) for name in tables}
    assert {run.table for run in planned} == {f"arch.t{k}" for k in range(TABLES)}
    assert sum(len(run.events) for run in planned) > len(files) and max(len(run.events) for run in planned) > 1
    for run in planned:
        for events, txn in zip(run.events, run.txns):
            arrays = [getattr(events, name) for name in events.__dataclass_fields__]
            arrays += [txn.txn, txn.undone, txn.query]
            assert all(a.base is None for a in arrays), run.table
    with vecbinlog.open(files) as log:  # (dictionary columns compared by their values: batches differ)
        assert all(each[name].to_pylist() == log.read_table(name).to_pylist() for name in tables)


def test_checksum_error_in_a_later_file(archive, tmp_path):
    files, _ = archive
    copies = []
    for f in files:
        shutil.copy(f, tmp_path / f.name)
        copies.append(tmp_path / f.name)
    victim = copies[len(copies) // 2]
    printed = [im for im in parse_vv(run_mariadb_binlog_vv(victim)) if im.table.startswith("arch.")]
    pos = printed[0].pos  # the first rows event of a file in the middle
    data = bytearray(victim.read_bytes())
    data[pos + 30] ^= 0x01  # inside its row image
    victim.write_bytes(bytes(data))
    with pytest.raises(vecbinlog.ChecksumError) as caught:
        with vecbinlog.open(copies) as log:
            log.read_all()
    assert caught.value.offset == pos and caught.value.path.endswith(victim.name)


# -- small files joined into one step (vecbinlog/log/logwalk.py) ---------------------------------
def _norm(tables: dict[str, pa.Table]) -> dict[str, list[dict]]:
    """Each table's rows as Python values (dictionary columns as their values, chunks as rows)."""
    return {name: t.to_pylist() for name, t in tables.items()}


def _each_file_alone(files, **options) -> dict[str, list[dict]]:
    """Every file read by itself (nothing joined to it), each table's rows in log order: what a
    read of the set gives when no DDL changes a table's columns between files."""
    out: dict[str, list[dict]] = {}
    for f in files:
        with vecbinlog.open(f, **options) as log:
            for name, rows in _norm(log.read_all()).items():
                out.setdefault(name, []).extend(rows)
    return out


def _copies_and_victim(files, folder):
    """The files copied into ``folder``, the copy in the middle (to be damaged) and its events."""
    copies = [folder / f.name for f in files]
    for f, c in zip(files, copies):
        shutil.copy(f, c)
    victim = copies[len(copies) // 2]
    with vecbinlog.open(victim) as log:
        return copies, victim, log.events().to_pylist()


def _joined_steps(monkeypatch) -> list[int]:
    """The number of files of each joined step the walks make from now on."""
    made: list[int] = []
    joined = logwalk.LogWalk._joined

    def counted(self, group, walk):
        made.append(len(group))
        return joined(self, group, walk)

    monkeypatch.setattr(logwalk.LogWalk, "_joined", counted)
    return made


@pytest.mark.parametrize("threads", [1, 2])
def test_small_files_joined_read_as_each_file_alone(archive, monkeypatch, threads):
    """The archive's files (4 KiB each) are walked as one step: every row, with its file,
    position, transaction, GTID and outcome, is what each file read alone gives."""
    files, _ = archive
    made = _joined_steps(monkeypatch)
    with vecbinlog.open(files, threads=threads) as log:
        together = _norm(log.read_all())
    assert max(made) == len(files)
    assert together == _each_file_alone(files)


def test_a_transaction_cut_at_the_end_of_a_file_does_not_go_on_in_the_next(archive, tmp_path, monkeypatch):
    """A file in the middle cut after a rows event, before its transaction's XID (the server
    crashed; the next file starts with new transactions): its rows are incomplete, kept with
    rolled_back="keep" and left out by default, as when each file is read alone; the next
    file's rows are whole."""
    copies, victim, events = _copies_and_victim(archive[0], tmp_path)
    last_xid = max(k for k, e in enumerate(events) if e["type"] == "XID_EVENT")
    cut = events[last_xid]["pos"]
    victim.write_bytes(victim.read_bytes()[:cut])
    made = _joined_steps(monkeypatch)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with vecbinlog.open(copies, rolled_back="keep") as log:
            kept = _norm(log.read_all())
        with vecbinlog.open(copies) as log:
            left_out = _norm(log.read_all())
        alone_kept = _each_file_alone(copies, rolled_back="keep")
        alone = _each_file_alone(copies)
    assert {w.category for w in said} == {vecbinlog.DecodeWarning}  # (rows left out; the cut is at an event boundary)
    assert max(made) == len(copies)
    assert kept == alone_kept and left_out == alone
    cut_rows = [r for rows in kept.values() for r in rows if r["_log_file"] == victim.name and r["_outcome"] != "commit"]
    assert cut_rows and all(r["_outcome"] == "incomplete" for r in cut_rows)
    assert sum(map(len, kept.values())) == sum(map(len, left_out.values())) + len(cut_rows)


def test_a_table_id_mapped_only_in_an_earlier_file_is_an_error(archive, tmp_path):
    """A file whose first TABLE_MAP_EVENT was made an unknown event (a hostile copy; checksums
    off): its rows event's table id is mapped in the file before (the server keeps a table's
    id), but table ids are per file: the read stops with the error of that file read alone,
    at its file and offset."""
    copies, victim, events = _copies_and_victim(archive[0], tmp_path)
    first_map = next(e for e in events if e["type"] == "TABLE_MAP_EVENT")
    data = bytearray(victim.read_bytes())
    data[first_map["pos"] + 4] = 0xF0  # its type code: an event type no server writes
    victim.write_bytes(bytes(data))
    with pytest.raises(vecbinlog.MalformedEventError) as alone:
        vecbinlog.open(victim, verify_checksums=False).read_all()
    with pytest.raises(vecbinlog.MalformedEventError) as together:
        vecbinlog.open(copies, verify_checksums=False).read_all()
    assert "which no TABLE_MAP_EVENT before it defines" in str(together.value)
    assert (together.value.path, together.value.offset, together.value.message) == (
        alone.value.path, alone.value.offset, alone.value.message)


@pytest.mark.parametrize("split_bytes", [1, 1 << 30])
def test_splits_of_consecutive_files_read_in_one_walk(archive, monkeypatch, split_bytes):
    """plan_splits of the archive marks each file's first split as following the file before
    (read to its end); read_splits reads such splits in one walk, whole files joined, and gives
    the rows of each split read alone (read_split), with their states."""
    from vecbinlog.splits import plan_splits, read_split, read_splits, with_history

    files, _ = archive
    with vecbinlog.open(files) as log:
        history = log.history()
    splits = with_history(plan_splits(files, split_bytes), history)
    firsts = {}
    for s in splits:
        firsts.setdefault(s.path, s)
    assert [s.follows for s in splits] == [s is firsts[s.path] and s.path != str(files[0]) for s in splits]
    alone = [(n, b.to_pylist()) for s in splits for n, b in read_split(s)]
    made = _joined_steps(monkeypatch)
    together = [(n, b.to_pylist()) for n, b in read_splits(splits)]
    assert max(made) <= 1 if split_bytes == 1 else max(made) == len(files)  # (a split per transaction: none joined)
    by_table = {}
    for n, rows in alone:
        by_table.setdefault(n, []).extend(rows)
    joined = {}
    for n, rows in together:
        joined.setdefault(n, []).extend(rows)
    assert joined == by_table


@pytest.mark.parametrize("threads", [1, 2])
def test_tables_read_in_turn_keep_no_copy_of_the_joined_files(archive, monkeypatch, threads):
    """An archive over PLANNED_WINDOW_BYTES (set to 0 here) of small files: the walk that plans
    the runs joins the files, as a read does, but the planned runs keep their events where they
    are in their files (JoinedFiles), not the joined copy; each table read in turn gathers its
    own events again and gives what each file read alone gives."""
    from vecbinlog.binlog.gathered import Gathered, JoinedFiles
    from vecbinlog.log import batches

    files, _ = archive
    monkeypatch.setattr(batches, "PLANNED_WINDOW_BYTES", 0)
    made = _joined_steps(monkeypatch)
    with vecbinlog.open(files, threads=threads) as log:
        tables = log.tables
        planned = log._walking[1]._planned.runs
        each = {name: log.read_table(name).to_pylist() for name in tables}
    assert max(made) == len(files)
    assert planned and all(isinstance(s, JoinedFiles) for run in planned for s in run.srcs)
    assert not any(isinstance(s, Gathered) for run in planned for s in run.srcs)
    assert each == _each_file_alone(files)


def test_a_checksum_error_in_a_planned_run_of_joined_files(archive, tmp_path, monkeypatch):
    """The CRC32 of a rows event damaged in a file of the middle: the table read in turn from
    planned runs of joined files (their copies let go of) stops with ChecksumError at that
    event's file and offset, as a read of that file alone does."""
    from vecbinlog.log import batches

    copies, victim, events = _copies_and_victim(archive[0], tmp_path)
    rows = next(e for e in events if e["type_code"] in (23, 24, 25, 30, 31, 32))  # the first rows event
    data = bytearray(victim.read_bytes())
    data[rows["pos"] + rows["size"] - 6] ^= 0x01  # inside the event, before its CRC32
    victim.write_bytes(bytes(data))
    with pytest.raises(vecbinlog.ChecksumError) as alone:
        vecbinlog.open(victim).read_all()
    monkeypatch.setattr(batches, "PLANNED_WINDOW_BYTES", 0)
    with pytest.raises(vecbinlog.ChecksumError) as together:
        with vecbinlog.open(copies) as log:
            for name in log.tables:
                log.read_table(name)
    assert (together.value.path, together.value.offset) == (alone.value.path, alone.value.offset) == (
        str(victim), rows["pos"])
