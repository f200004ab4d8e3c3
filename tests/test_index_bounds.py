"""Pruning by event-time bounds with the archive index (issue 36): plan_splits(..., index=,
since=, until=) leaves out the files none of whose rows events can be in the bounds. The
archive is MariaDB-made, each statement given its time by ``SET TIMESTAMP`` (the rows events
carry it), so the files a window must keep and the rows it must give are known from the times
set here, not from the index; one file's rows events are out of time order (a later time, then
an earlier one), as a binlog's are when transactions overlap."""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa
import pytest

import vecbinlog
from vecbinlog.index import build_index, load_index
from vecbinlog.splits import plan_splits, read_split

from .support.countingfs import counting_filesystem
from .support.timed import ROWS, at, expected_files, files_spanning, gtid_window, gtids

# (since, until) in seconds after T0; the files planned: those that may hold rows in them
WINDOWS = {
    "all": (None, None),
    "since-inside-first": (150, None),  # a bound inside a file keeps it
    "until-inside-first": (None, 150),
    "second-only": (500, 1500),
    "gap-between-files": (500, 900),  # no file's rows: nothing planned
    "after-all": (3000, None),
    "before-all": (None, 100),  # until is exclusive: the row at 100 is out
    "until-just-after": (None, 101),
    "since-on-last": (2100, None),  # since is inclusive
    "since-after-last": (2101, None),
    "after-last-event-of-second": (1200, 1400),  # the second's last rows event (1050) is before: kept by its max
    "inside-second-no-row": (1110, 1290),  # between its rows: planned (its range spans it), reads nothing
}


def _bound(seconds: int | None) -> datetime | None:
    return None if seconds is None else at(seconds)


@pytest.mark.mariadb
def test_index_holds_each_tables_least_and_greatest_rows_time(timed):
    """The index's per-table times are the least and greatest of the times set for its rows
    (not the first and last event's: the second file's last row was set earlier than one before)."""
    files, location = timed
    for ix, rows in zip(load_index(files, location), ROWS):
        got = {t["name"]: (t["first_time"], t["last_time"]) for t in ix.row["tables"]}
        want = {f"tb.{tb}": (at(min(t for x, _, t in rows if x == tb)), at(max(t for x, _, t in rows if x == tb)))
                for tb in {x for x, *_ in rows}}
        assert got == want


@pytest.mark.mariadb
@pytest.mark.parametrize("window", list(WINDOWS.values()), ids=list(WINDOWS))
@pytest.mark.parametrize("split_bytes", [1, 1 << 30])
def test_a_window_plans_only_the_files_that_may_hold_it(timed, window, split_bytes):
    """The files planned are those whose rows' times span the window (from the times set, not the
    index); reading the splits with the same bounds gives read_table's rows with them (every
    column) and the rows set in the window (an independent count); a read of the pruned splits
    through a filesystem that counts opens no file left out."""
    files, location = timed
    since, until = window
    splits = plan_splits(files, split_bytes, index=location, since=_bound(since), until=_bound(until))
    planned = sorted({files.index(s.path) for s in splits})
    assert planned == files_spanning(since, until)
    assert set(expected_files(since, until)) <= set(planned)
    bounds = {"since": _bound(since), "until": _bound(until)}
    for table in ("tb.a", "tb.b"):
        expected = vecbinlog.read_table(files, table, **bounds)
        fs, counted = counting_filesystem()
        got = [b for s in splits for _, b in read_split(s, table, filesystem=fs, **bounds)]
        got = pa.Table.from_batches(got, expected.schema) if got else expected.schema.empty_table()
        assert got.to_pylist() == expected.to_pylist()
        want = sorted(i for rows in ROWS for tb, i, t in rows if f"tb.{tb}" == table
                      and (since is None or t >= since) and (until is None or t < until))
        assert sorted(got.column("id").to_pylist()) == want
        assert {p.rsplit("/", 1)[-1] for p in counted.opened} <= {files[k].rsplit("/", 1)[-1] for k in planned}
    if not expected_files(since, until):
        assert all(vecbinlog.read_table(files, t, **bounds).num_rows == 0 for t in ("tb.a", "tb.b"))


@pytest.mark.mariadb
def test_a_window_and_tables_prune_by_that_tables_times(timed):
    """tables= with a window: a file is kept by the times of the wanted tables' rows only (the
    second file has rows of a at 1300 but of b only at 1100)."""
    files, location = timed
    assert plan_splits(files, 1, index=location, tables="tb.b", since=at(1200), until=at(1500)) == []
    kept = plan_splits(files, 1, index=location, tables="tb.a", since=at(1200), until=at(1500))
    assert {s.path for s in kept} == {files[1]}
    assert {s.path for s in plan_splits(files, 1, index=location, tables="tb.b", since=at(1100))} == {
        files[1], files[2]}


@pytest.mark.mariadb
def test_without_an_index_the_bounds_change_no_plan(timed):
    """Without an index every file is planned (walked), as before."""
    files, _ = timed
    assert plan_splits(files, 1, since=at(3000)) == plan_splits(files, 1)


def test_an_index_of_the_format_before_is_refused_then_built_again(tmp_path):
    """An index written as version 1 (before the rows times): a plan refuses it (ArchiveIndexError
    naming the version); build_index indexes each file again, with an ArchiveIndexWarning."""
    import pyarrow.parquet as pq

    from vecbinlog.index import VERSION_KEY

    from .conftest import DATA

    sample = str(DATA / "sample" / "mariadb-bin.000001")
    build_index(sample, tmp_path, processes=1)
    fresh = plan_splits(sample, 1, index=tmp_path)
    for f in tmp_path.glob("*.parquet"):
        table = pq.read_table(f)
        pq.write_table(table.replace_schema_metadata({VERSION_KEY: b"1"}), f)
    with pytest.raises(vecbinlog.ArchiveIndexError, match="version b'1'"):
        plan_splits(sample, 1, index=tmp_path)
    with pytest.warns(vecbinlog.ArchiveIndexWarning, match="indexed again"):
        result = build_index(sample, tmp_path, processes=1)
    assert (result.indexed, result.skipped) == (1, 0)
    assert plan_splits(sample, 1, index=tmp_path) == fresh


@pytest.mark.mariadb
@pytest.mark.parametrize("which, planned", [
    ("first-file", [0]),
    ("second-file", [1]),
    ("last-file", [2]),
    ("after-all", []),
    ("other-server", []),
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_gtid_bound_plans_the_files_that_may_hold_it(timed, which, planned):
    """gtids= with the index: a file none of whose GTIDs (the server's listing) is in the set is
    left out (the ranges of numbers the index keeps per block, ``gtid_blocks``, hold none of it;
    MariaDB's indexed set alone, each source's greatest number, would keep the files after it);
    the pruned splits read with the set give read_table's rows with it, which are the rows of
    the transactions listed in it."""
    files, location = timed
    d, srv, _ = gtids[0][0].split("-")
    last = int(gtids[-1][-1].split("-")[2])
    wanted = {"first-file": gtid_window(0, 0, -1), "second-file": gtid_window(1, 1, 2),
              "last-file": gtid_window(2, -1, -1), "after-all": f"{d}-{srv}-{last + 1}..{last + 9}",
              "other-server": f"{d}-{int(srv) + 1}-1..{last}"}[which]
    splits = plan_splits(files, 1, index=location, gtids=wanted)
    assert sorted({files.index(s.path) for s in splits}) == planned
    for table in ("tb.a", "tb.b"):
        expected = vecbinlog.read_table(files, table, gtids=wanted)
        got = [b for s in splits for _, b in read_split(s, table, gtids=wanted)]
        got = pa.Table.from_batches(got, expected.schema) if got else expected.schema.empty_table()
        assert got.to_pylist() == expected.to_pylist()
    if which == "after-all" or which == "other-server":
        assert vecbinlog.read_table(files, "tb.a", gtids=wanted).num_rows == 0
    if which == "second-file":  # its second and third transactions: ROWS[1][1:3]
        rows = vecbinlog.read_table(files, "tb.a", gtids=wanted).column("id").to_pylist()
        rows += vecbinlog.read_table(files, "tb.b", gtids=wanted).column("id").to_pylist()
        assert sorted(rows) == sorted(i for _, i, _ in ROWS[1][1:3])


U1, U2 = "3e11fa47-71ca-11e1-9e33-c80aa9429562", "4e11fa47-71ca-11e1-9e33-c80aa9429562"


@pytest.mark.parametrize("held, wanted, may", [
    (f"{U1}:1-5:9", f"{U1}:6-8", False),  # MySQL's set is every GTID of the file: the hole is sure
    (f"{U1}:1-5:9", f"{U1}:7-9", True),
    (f"{U1}:1-5", f"{U2}:1-5", False),  # another source
    (f"{U1}:t1:1-3", f"{U1}:1-3", False),  # a tagged GTID is a source of its own
    (f"{U1}:t1:1-3", f"{U1}:t1:3", True),
    ("0-1-20,1-1-7", "0-1-21..30", False),  # MariaDB: after the greatest of 0-1
    ("0-1-20,1-1-7", "0-1-3", True),  # below it: may be in the file (only the greatest is kept)
    ("0-1-20", "0-2-1..99", False),
    (None, "0-1-1..99", False),  # no GTIDs: a read with gtids keeps none of its rows
], ids=lambda v: str(v))
def test_the_gtid_rule_on_indexed_sets(held, wanted, may):
    """may_hold_gtids on the sets an index keeps (vecbinlog.binlog.gtid.GtidSummary's notation:
    MySQL intervals per source; MariaDB the greatest number per domain-server)."""
    import json

    import numpy as np

    from vecbinlog.binlog.gtid import GtidSet
    from vecbinlog.index import IndexedFile
    from vecbinlog.splits import may_hold_gtids

    ix = IndexedFile("f", {"info": json.dumps({"gtids": {"set": held}})}, np.zeros(0, np.int64), 4)
    assert may_hold_gtids(ix, GtidSet(wanted)) is may
