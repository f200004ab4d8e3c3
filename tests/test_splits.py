"""Split planning (vecbinlog.splits) without Spark: where files are cut, and that decoding the
splits one by one gives exactly the rows of reading the whole file.

The transaction starts are checked against an independent walk: ``Binlog.events()`` (whose
types and QUERY texts tests/binlog/test_events.py checks against the server's SHOW BINLOG EVENTS),
not against the planner's own vectorised look at the QUERY events.
"""

from __future__ import annotations

import shutil
import warnings

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.splits import Split, plan_splits, read_split, split_paths, with_history

from .conftest import DATA, corpus_path
from .support.corpus import corpus_names

SAMPLE = DATA / "sample" / "mariadb-bin.000001"
GTID_TYPES = {"GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT", "GTID_TAGGED_LOG_EVENT", "GTID_EVENT"}
#: one file per way of starting a transaction: MariaDB GTID, MySQL 5.5 BEGIN (no GTIDs),
#: MySQL 5.7 ANONYMOUS_GTID + BEGIN, MySQL 8 GTID, MySQL 9 GTID_TAGGED
BOUNDARY_FILES = [
    "osheroff__mysql-binlog-connector-java/mysql-bin.sakila",
    "baojingyu__docker-canal-elasticsearch-kibana-mysql/mysql-bin.000002",
    "Percona-Lab__percona-binlog-server/data_80045_gtid/binlog.000001",
    "blackbeam__rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",
]


def expected_starts(path) -> list[int]:
    """Transaction starts from SHOW-BINLOG-EVENTS-like rows: GTID events, and QUERY 'BEGIN'
    events that do not follow a GTID event."""
    with vecbinlog.open(path) as log:
        ev = log.events().select(["pos", "type", "info"]).to_pylist()
    out = []
    for prev, e in zip([None] + ev[:-1], ev):
        if e["type"] in GTID_TYPES:
            out.append(e["pos"])
        elif e["type"] == "QUERY_EVENT" and e["info"] in ("BEGIN",) and (prev is None or prev["type"] not in GTID_TYPES):
            out.append(e["pos"])
    return out


def rows_of(batches) -> dict[str, list[dict]]:
    """Rows per table; batches of different layouts (ALTER TABLE) lined up by column name, as read_all does."""
    tables: dict[str, list[pa.Table]] = {}
    for name, batch in batches:
        tables.setdefault(name, []).append(pa.Table.from_batches([batch]))
    return {n: pa.concat_tables(t, promote_options="permissive").to_pylist() for n, t in tables.items()}


@pytest.mark.parametrize("name", BOUNDARY_FILES + [None], ids=lambda n: n or "sample")
def test_tiny_splits_start_at_every_transaction(name):
    path = SAMPLE if name is None else corpus_path(name)
    starts = expected_starts(path)
    assert starts, "the file has transactions"
    splits = plan_splits(path, 1)
    size = path.stat().st_size
    # contiguous, from the magic to the end
    assert splits[0].start == 4 and splits[-1].stop == size
    assert all(a.stop == b.start for a, b in zip(splits, splits[1:]))
    # a split of 1 byte ends at the next transaction start: every start is a cut, and only those
    assert [s.start for s in splits[1:]] == [p for p in starts if p > 4]


def test_split_size_groups_transactions():
    path = corpus_path(BOUNDARY_FILES[1])  # 3 MB, 22 transactions
    starts = expected_starts(path)
    size = path.stat().st_size
    splits = plan_splits(path, 512 * 1024)
    assert 1 < len(splits) < len(starts)
    assert {s.start for s in splits[1:]} <= set(starts)
    # each split reaches the size, except the last: it ends at the first start after it
    for s in splits[:-1]:
        assert s.size >= 512 * 1024
        assert not [p for p in starts if s.start + 512 * 1024 <= p < s.stop]
    assert splits[-1].stop == size


def test_small_files_are_one_split_each(tmp_path):
    a, b = corpus_path(BOUNDARY_FILES[2]), corpus_path(BOUNDARY_FILES[2].replace("000001", "000002"))
    splits = plan_splits([a, b], 1 << 30)
    assert splits == [Split(str(a), 4, a.stat().st_size), Split(str(b), 4, b.stat().st_size)]


def test_start_and_stop_bound_the_plan():
    starts = [p for p in expected_starts(SAMPLE) if p > 4]
    lo, hi = starts[1], starts[-2]
    splits = plan_splits(SAMPLE, 1, start=lo, stop=hi)
    assert [s.start for s in splits] == [p for p in starts if lo <= p < hi]
    assert splits[-1].stop == hi


def test_start_must_be_a_transaction_start():
    starts = [p for p in expected_starts(SAMPLE) if p > 4]
    with vecbinlog.open(SAMPLE) as log:
        inside = [e["pos"] for e in log.events().to_pylist() if e["pos"] > starts[1]][0]  # the event after a GTID
    with pytest.raises(ValueError, match="not where a transaction starts"):
        plan_splits(SAMPLE, 1, start=inside)


def test_relay_log_is_not_cut_after_its_second_format_description():
    path = corpus_path("percona__percona-toolkit/relay-binlog001")
    with vecbinlog.open(path) as log:
        fdes = [e["pos"] for e in log.events().to_pylist() if e["type"] == "FORMAT_DESCRIPTION_EVENT"]
    assert len(fdes) == 2
    splits = plan_splits(path, 1)
    assert all(s.start < fdes[1] for s in splits)
    assert splits[-1].stop == path.stat().st_size


def test_bad_split_size():
    with pytest.raises(ValueError, match="split_bytes"):
        plan_splits(SAMPLE, 0)


def test_read_split_refuses_range_options():
    with pytest.raises(ValueError, match="start"):
        list(read_split(Split(str(SAMPLE), 4, 100), start=4))


def _read_all(path) -> dict[str, pa.Table] | type[vecbinlog.BinlogError]:
    try:
        with vecbinlog.open(path) as log:
            return log.read_all()
    except vecbinlog.BinlogError as exc:
        return type(exc)


@pytest.mark.parametrize("file", corpus_names())
def test_corpus_split_at_every_transaction_gives_the_same_rows(file):
    """No row lost or duplicated at split edges, in every corpus file; a file that does not
    decode as a whole (test_corpus.py says why) raises the same error through its splits."""
    path = corpus_path(file)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = _read_all(path)
        if isinstance(whole, type):
            with pytest.raises(whole):
                list(b for s in plan_splits(path, 1) for b in read_split(s))
            return
        got = rows_of(b for s in plan_splits(path, 1) for b in read_split(s))
    assert {n: len(r) for n, r in got.items()} == {n: t.num_rows for n, t in whole.items() if t.num_rows}
    counted = ("_schema_version", "_incarnation")
    for name, table in whole.items():
        if any("@" in n for n in table.column_names):  # types kept apart: lined up by the plan, below
            continue
        # a split gets the DDL state where it starts (names, signedness from the DDL before it),
        # and counts _schema_version and _incarnation from its start
        want = table.drop_columns(list(counted)).to_pylist()
        assert [{k: v for k, v in r.items() if k not in counted} for r in got.get(name, [])] == want, name
    # given where the layouts stand at their starts, the splits fitted to each table's plan are read_all
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with vecbinlog.open(path) as log:
            layouts = log.history()
        fitted: dict[str, list[pa.RecordBatch]] = {}
        for s in with_history(plan_splits(path, 1), layouts):
            for name, b in read_split(s):
                fitted.setdefault(name, []).append(layouts.plans[name].conform(b))
    assert {n: layouts.plans[n].schema for n in fitted} == {n: t.schema for n, t in whole.items() if t.num_rows}
    for name, table in whole.items():
        assert pa.Table.from_batches(fitted.get(name, []), table.schema).to_pylist() == table.to_pylist(), name


def test_seek_walks_from_start(tmp_path):
    """Binlog.over_range(start, ...) reads nothing before start: an event made unreadable before it does not matter."""
    path = tmp_path / "mariadb-bin.000001"
    shutil.copy(SAMPLE, path)
    with vecbinlog.open(path) as log:
        ev = log.events().to_pylist()
    second = ev[1]["pos"]  # the event after the FORMAT_DESCRIPTION_EVENT
    start = [p for p in expected_starts(path) if p > second][0]
    expected = vecbinlog.read_table(path, "shop.orders", start=start)
    data = bytearray(path.read_bytes())
    data[second + 9 : second + 13] = (3).to_bytes(4, "little")  # event_size 3: impossible
    path.write_bytes(bytes(data))
    with pytest.raises(vecbinlog.MalformedEventError):
        vecbinlog.read_table(path, "shop.orders", verify_checksums=False)
    with pytest.raises(vecbinlog.MalformedEventError):  # without seek, start only filters rows events
        vecbinlog.read_table(path, "shop.orders", start=start, verify_checksums=False)
    got = vecbinlog.Binlog.over_range(path, start, None).read_table("shop.orders")
    assert got.num_rows == expected.num_rows > 0
    assert got.to_pylist() == expected.to_pylist()


def test_split_paths(tmp_path):
    for name in ("mysql-bin.000002", "mysql-bin.000001", "mysql-bin.index"):
        (tmp_path / name).write_bytes(b"")
    one, two = str(tmp_path / "mysql-bin.000001"), str(tmp_path / "mysql-bin.000002")
    assert split_paths(str(tmp_path / "mysql-bin.0*")) == [one, two]
    assert split_paths(f"{two},file://{one}") == [two, one]
    with pytest.raises(FileNotFoundError):
        split_paths(str(tmp_path / "nothing.*"))


def test_split_gets_the_ddl_before_it(mariadb_server, mariadb_globals):
    """binlog_row_metadata=NO_LOG: names and UNSIGNED come from the CREATE TABLE, which only the
    first split holds; every split decodes as the whole file does (4000000000 stays unsigned)."""
    mariadb_globals(binlog_row_metadata="NO_LOG")
    s = mariadb_server
    s.execute("DROP DATABASE IF EXISTS spl", "CREATE DATABASE spl")
    path = s.capture_binlog(
        "CREATE TABLE t (id INT UNSIGNED PRIMARY KEY, v VARCHAR(10) CHARACTER SET utf8mb4)",
        "INSERT INTO t VALUES (1, 'a'), (4000000000, 'ü')", "UPDATE t SET v = 'b' WHERE id = 1",
        "ALTER TABLE t ADD COLUMN w INT AFTER id", "INSERT INTO t VALUES (5, -5, 'c')", database="spl")
    whole = vecbinlog.read_table(path, "spl.t")
    splits = plan_splits(path, 1)
    assert len(splits) >= 4 and splits[0].ddl is None and splits[-1].ddl is not None
    got = rows_of(b for sp in splits for b in read_split(sp, "spl.t"))["spl.t"]
    assert [{k: v for k, v in r.items() if k != "_schema_version"} for r in got] == \
        whole.drop_columns(["_schema_version"]).to_pylist()
    with vecbinlog.open(path) as log:
        plan = log.plans()["spl.t"]
        placed = with_history(splits, log.history())
    exact = [plan.conform(b) for sp in placed for _, b in read_split(sp, "spl.t")]
    assert pa.Table.from_batches(exact, whole.schema).to_pylist() == whole.to_pylist()
    assert [r["id"] for r in got] == [1, 4000000000, 1, 1, 5]
    assert sorted(s.query("SELECT id, w, v FROM spl.t")) == [(1, None, "b"), (5, -5, "c"), (4000000000, None, "ü")]
