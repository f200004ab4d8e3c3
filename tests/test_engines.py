"""The query engines' ways in (issue 54): ``Binlog.batch_reader`` (a pyarrow.RecordBatchReader),
``vecbinlog.duckdb.scan`` and ``vecbinlog.polars.scan``, on archives the tests' MariaDB server
writes (tests/support/engines.py): ``minimal`` (four files, a table dropped and created again and
altered five ways, MINIMAL row images) and ``spread`` (100 files of rows at times set by ``SET
TIMESTAMP``), each with its archive index and without.

What each engine returns equals ``read_table`` of the same files (the decoder the corpus and the
round-trip tests check against the servers) filtered by pandas with the query's conditions, every
column, in log order. Through a filesystem that counts the bytes read (tests/support/countingfs.py),
a query of 1% of the spread archive's time range reads at most 2% of its bytes with the index;
a read stopped mid-way (a closed or dropped reader, a LIMIT, ``head``) has closed its files.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import time
import warnings
from datetime import datetime, timedelta, timezone

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

import vecbinlog
from vecbinlog.log.batches import BatchReader

from .support.countingfs import counting_filesystem
from .support.engines import SPAN, SPREAD_FILES, STEP, T0

pytestmark = [pytest.mark.mariadb, pytest.mark.filterwarnings("ignore::vecbinlog.DecodeWarning")]


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(T0, timezone.utc) + timedelta(seconds=seconds)


def expected_rows(files, table: str, keep) -> list[dict]:
    """read_table of ``files`` filtered by ``keep(df)`` (a boolean Series of the pandas frame)."""
    whole = vecbinlog.read_table(files, table)
    frame = whole.to_pandas(types_mapper=pd.ArrowDtype)
    mask = keep(frame).fillna(False).to_numpy(bool) if len(frame) else []
    return whole.filter(pa.array(mask, pa.bool_())).to_pylist()


def _window(frame, lo: datetime, hi: datetime):
    return (frame["_commit_timestamp"] >= lo) & (frame["_commit_timestamp"] < hi)


# -- batch_reader -----------------------------------------------------------------------------------
def test_batch_reader_is_read_table_in_batches(minimal):
    """Its schema is the table's plan (before any batch), every batch in it, and its rows are
    read_table's, every column, in log order; with filters, those pandas keeps; in
    pyarrow.dataset, DuckDB and Polars as each documents."""
    run, files, _ = minimal
    table = run["table"]
    expected = vecbinlog.read_table(files, table)
    assert set(expected.column("_schema_version").to_pylist()) == set(range(7))
    with vecbinlog.open(files, segment_bytes=2048) as log:
        reader = log.batch_reader(table)
        assert reader.schema == expected.schema == log.schema(table)
        batches = list(reader)
        assert len(batches) > 4 and all(b.schema == expected.schema for b in batches)
        assert pa.Table.from_batches(batches).to_pylist() == expected.to_pylist()
        frame = expected.to_pandas(types_mapper=pd.ArrowDtype)
        lo = frame["_commit_timestamp"].iloc[len(frame) // 3].to_pydatetime()
        updates = log.batch_reader(table, change_types="update", since=lo).read_all()
        assert updates.to_pylist() == expected_rows(files, table, lambda f: f["_change_type"].isin(
            ["update_preimage", "update_postimage"]) & (f["_commit_timestamp"] >= lo))
        assert updates.num_rows and log.read_table(table).num_rows == expected.num_rows  # (the log's own filters unchanged)
        duck = pytest.importorskip("duckdb")
        counted = log.batch_reader(table)  # noqa: F841 - DuckDB finds it by its name
        got = duck.sql("SELECT _change_type, count(*) AS n FROM counted GROUP BY ALL ORDER BY ALL").fetchall()
        assert got == sorted(frame.groupby("_change_type", observed=True).size().astype(int).items())
        pl = pytest.importorskip("polars")
        assert pl.from_arrow(log.batch_reader(table)).to_arrow().to_pylist() == expected.to_pylist()
        with pytest.raises(vecbinlog.TableNotFoundError):
            log.batch_reader("no.such")
        with pytest.raises(TypeError, match="not a row filter"):
            log.batch_reader(table, columns=["id"])


def test_batch_reader_written_as_a_dataset(minimal, tmp_path):
    run, files, _ = minimal
    with vecbinlog.open(files) as log:
        ds.write_dataset(log.batch_reader(run["table"]), tmp_path / "out", format="parquet")
    back = ds.dataset(tmp_path / "out", format="parquet").to_table()
    expected = vecbinlog.read_table(files, run["table"])
    assert sorted(map(repr, back.to_pylist())) == sorted(map(repr, expected.to_pylist()))


def test_closing_or_dropping_a_reader_ends_its_read(spread, monkeypatch):
    """A reader read one batch into, then closed (or dropped): the read's generator has run its
    ``finally`` (closed), with its batch threads' runs; so for a read of a TableScan, whose
    splits open their own files, through a filesystem that counts, no file is left open."""
    files, location = spread
    made = []
    batches = BatchReader.batches

    def kept(self, *args, **kwargs):  # the read's generator, kept to look at: nothing else changed
        made.append(batches(self, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(BatchReader, "batches", kept)
    with vecbinlog.open(files, segment_bytes=4096, threads=2) as log:
        for end in ("close", "drop"):
            reader = log.batch_reader("spread.a")
            reader.read_next_batch()
            assert inspect.getgeneratorstate(made[-1]) == inspect.GEN_SUSPENDED
            if end == "close":
                reader.close()
            else:
                del reader
            assert inspect.getgeneratorstate(made[-1]) == inspect.GEN_CLOSED, end
    from vecbinlog.scans import TableScan

    fs, counted = counting_filesystem()
    scan = TableScan.of(files, "spread.a", filesystem=fs, segment_bytes=4096)
    reader = scan.reader()
    reader.read_next_batch()
    assert counted.open_now  # (the split being read)
    reader.close()
    assert not counted.open_now
    reader = scan.reader()
    reader.read_next_batch()
    del reader
    gc.collect()  # (nothing to collect: dropped is closed; this only makes sure)
    assert not counted.open_now


def test_a_reads_filters_narrow_the_logs():
    """with_filters: each bound the tighter, change types and GTID sets intersected."""
    from vecbinlog.log.config import ReadConfig

    config = ReadConfig.build(since="2026-11-21", until="2026-11-23", change_types="insert,update",
                              gtids="0-1-1..10,0-2-5")
    narrowed = config.with_filters(since="2026-11-20", until="2026-11-22", change_types="update,delete",
                                   gtids="0-1-8..20,0-3-1")
    f = narrowed.filter
    assert (f.since, f.until) == (config.filter.since, config.filter.until - 86400)
    assert f.kinds == vecbinlog.reader.ReadConfig.build(change_types="update").filter.kinds
    assert narrowed.gtids.intervals == {"0-1": [(8, 10)]} and narrowed.gtids.text == "0-1-8..10"
    gtids = pa.array(["0-1-7", "0-1-8", "0-1-10", "0-1-11", "0-2-5", None])
    assert narrowed.gtids.contains(gtids).tolist() == [False, True, True, False, False, False]
    assert config.with_filters(gtids="0-9-1").gtids.contains(gtids).tolist() == [False] * 6


# -- DuckDB -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("indexed", [True, False], ids=["index", "no-index"])
def test_duckdb_sql_over_a_table(minimal, indexed):
    duckdb = pytest.importorskip("duckdb")
    import vecbinlog.duckdb as vduck

    run, files, location = minimal
    table = run["table"]
    expected = vecbinlog.read_table(files, table)
    changes = vduck.scan(files, table, index=location if indexed else None)
    got = duckdb.sql("SELECT * FROM changes").arrow()
    got = got.read_all() if isinstance(got, pa.RecordBatchReader) else got
    assert got.to_pylist() == expected.to_pylist()
    frame = expected.to_pandas(types_mapper=pd.ArrowDtype)
    lo, hi = (frame["_commit_timestamp"].iloc[k].to_pydatetime() for k in (len(frame) // 4, 3 * len(frame) // 4))
    con = duckdb.connect()
    vduck.register(con, "changes", files, table, index=location if indexed else None, since=lo, until=hi,
                   change_types="insert,delete")
    for _ in range(2):  # each query reads anew
        got = con.sql("SELECT * FROM changes").arrow()
        got = got.read_all() if isinstance(got, pa.RecordBatchReader) else got
        assert got.to_pylist() == expected_rows(files, table, lambda f: _window(f, lo, hi) & f["_change_type"].isin(
            ["insert", "delete"]))


def test_duckdb_reads_only_the_files_of_a_time_range(spread):
    """1% of the archive's time range, given to the scan with the index: at most 2% of its bytes
    read; the rows are those of read_table in the range; a LIMIT ends the read, its files closed."""
    duckdb = pytest.importorskip("duckdb")
    import vecbinlog.duckdb as vduck

    files, location = spread
    total = sum(pa.OSFile(f).size() for f in files)
    lo, hi = at(SPAN * 50), at(SPAN * 51)  # 100 s of the 10 000
    fs, counted = counting_filesystem()
    rows = vduck.scan(files, "spread.a", index=location, filesystem=fs, since=lo, until=hi)
    got = duckdb.sql("SELECT * FROM rows").arrow()
    got = got.read_all() if isinstance(got, pa.RecordBatchReader) else got
    assert got.to_pylist() == expected_rows(files, "spread.a", lambda f: _window(f, lo, hi))
    assert got.num_rows >= 10
    assert 0 < counted.read <= 0.02 * total, (counted.read, total)
    whole = vduck.scan(files, "spread.a", filesystem=fs, segment_bytes=4096)
    assert duckdb.sql("SELECT id FROM whole LIMIT 3").fetchall() == [(0,), (1,), (2,)]
    assert not counted.open_now


# -- Polars -------------------------------------------------------------------------------------------
def _queries(pl, files):
    """(name, predicate, the same condition in pandas) over the spread archive."""
    second = files[1].rsplit("/", 1)[-1]
    return [
        ("time", (pl.col("_commit_timestamp") >= at(SPAN * 50)) & (pl.col("_commit_timestamp") < at(SPAN * 51)),
         lambda f: _window(f, at(SPAN * 50), at(SPAN * 51))),
        ("time-microseconds", pl.col("_commit_timestamp").is_between(at(SPAN * 7 + STEP - 0.5), at(SPAN * 7 + 3 * STEP + 0.5)),
         lambda f: (f["_commit_timestamp"] >= at(SPAN * 7 + STEP - 0.5)) & (f["_commit_timestamp"] <= at(SPAN * 7 + 3 * STEP + 0.5))),
        ("file-and-position", (pl.col("_log_file") == second) & (pl.col("_log_pos") > 1500),
         lambda f: (f["_log_file"] == second) & (f["_log_pos"] > 1500)),
        ("files-after", (pl.col("_log_file") >= files[-3].rsplit("/", 1)[-1]) & pl.col("_change_type").is_in(["update_postimage", "delete"]),
         lambda f: (f["_log_file"] >= files[-3].rsplit("/", 1)[-1]) & f["_change_type"].isin(["update_postimage", "delete"])),
        ("other-columns", (pl.col("t") > 5000) & (pl.col("_outcome") == "commit") & pl.col("_gtid").is_not_null(),
         lambda f: (f["t"] > 5000) & (f["_outcome"] == "commit") & f["_gtid"].notna()),
        ("an-or", (pl.col("_log_pos") < 600) | (pl.col("t") > 9900), lambda f: (f["_log_pos"] < 600) | (f["t"] > 9900)),
    ]


@pytest.mark.parametrize("indexed", [True, False], ids=["index", "no-index"])
def test_polars_scan_equals_read_table_filtered(spread, indexed):
    pl = pytest.importorskip("polars")
    import vecbinlog.polars as vpl

    files, location = spread
    orders = vpl.scan(files, "spread.a", index=location if indexed else None)
    assert orders.collect().to_arrow().to_pylist() == vecbinlog.read_table(files, "spread.a").to_pylist()
    for name, predicate, keep in _queries(pl, files):
        got = orders.filter(predicate).collect()
        assert got.to_arrow().to_pylist() == expected_rows(files, "spread.a", keep), name
        assert got.height, name
        part = orders.filter(predicate).select("id", "_log_pos").collect()
        assert part.columns == ["id", "_log_pos"]
        assert part.rows() == [(r["id"], r["_log_pos"]) for r in expected_rows(files, "spread.a", keep)], name


def test_polars_scan_of_altered_table_with_minimal_images(minimal):
    pl = pytest.importorskip("polars")
    import vecbinlog.polars as vpl

    run, files, location = minimal
    table = run["table"]
    expected = vecbinlog.read_table(files, table)
    for index in (location, None):
        frame = vpl.scan(files, table, index=index)
        assert frame.collect().to_arrow().to_pylist() == expected.to_pylist()
        gtid = expected.column("_gtid")[len(expected) // 2].as_py()
        got = frame.filter((pl.col("_gtid") == gtid) | (pl.col("_gtid") == "0-1-1")).collect()
        assert got.to_arrow().to_pylist() == expected_rows(files, table, lambda f: f["_gtid"].isin([gtid, "0-1-1"]))
        got = frame.filter(pl.col("_gtid") == gtid).collect()
        assert got.height and got.to_arrow().to_pylist() == expected_rows(files, table, lambda f: f["_gtid"] == gtid)


def test_polars_time_range_reads_two_percent(spread):
    """1% of the time range with the index: at most 2% of the archive's bytes read; ``head``
    stops the read (n_rows) with its files closed."""
    pl = pytest.importorskip("polars")
    import vecbinlog.polars as vpl

    files, location = spread
    total = sum(pa.OSFile(f).size() for f in files)
    fs, counted = counting_filesystem()
    frame = vpl.scan(files, "spread.a", index=location, filesystem=fs)
    assert counted.read == 0  # (the schema from the index)
    lo, hi = at(SPAN * 30), at(SPAN * 31)
    got = frame.filter(pl.col("_commit_timestamp").is_between(lo, hi, closed="left")).collect()
    assert got.to_arrow().to_pylist() == expected_rows(files, "spread.a", lambda f: _window(f, lo, hi))
    assert 0 < counted.read <= 0.02 * total, (counted.read, total)
    counted.read = 0
    assert frame.head(5).collect().to_arrow().to_pylist() == vecbinlog.read_table(files, "spread.a")[:5].to_pylist()
    assert counted.read < 0.05 * total and not counted.open_now


def test_a_polars_query_stopped_early_closes_its_files(spread):
    """``head`` (Polars' ``n_rows``) stops the read once its rows are out, its files closed. A
    source Polars keeps without closing it (a ``limit`` after a filter, a ``collect_batches()``
    iterator dropped mid-way: Polars 2.1 goes on pulling it in its threads, then leaves it
    suspended) holds no open file either: the read takes SPLIT_BYTES at a time, its files closed
    before its batches go out (docs/engines.md)."""
    pl = pytest.importorskip("polars")
    import vecbinlog.polars as vpl

    files, location = spread
    expected = vecbinlog.read_table(files, "spread.a")
    for index in (location, None):
        fs, counted = counting_filesystem()
        frame = vpl.scan(files, "spread.a", index=index, filesystem=fs, segment_bytes=4096)
        assert frame.head(5).collect().to_arrow().to_pylist() == expected[:5].to_pylist()
        assert not counted.open_now
        got = frame.select("note", "_log_file").head(30).collect()
        assert got.rows() == [(r["note"], r["_log_file"]) for r in expected[:30].to_pylist()]
        assert not counted.open_now
        with _small_splits(vpl):  # (several splits: the archive is 0.75 MB)
            got = frame.filter(pl.col("_log_pos") > 0).limit(3).collect()
            assert got.to_arrow().to_pylist() == expected[:3].to_pylist()
            batches = iter(frame.collect_batches())
            first = next(batches)
            assert first.height and first.to_arrow().to_pylist() == expected[:first.height].to_pylist()
            del batches
            _still(vpl)
            assert counted.read and not counted.open_now


@contextlib.contextmanager
def _small_splits(vpl):
    saved, vpl.SPLIT_BYTES = vpl.SPLIT_BYTES, 64 << 10
    try:
        yield
    finally:
        vpl.SPLIT_BYTES = saved


def _still(vpl, quiet: float = 0.5, bound: float = 60.0) -> None:
    """Until no step of a Polars source has begun or ended for ``quiet`` seconds (Polars' threads
    go on pulling a kept source for a while after its query returned); ``bound``: a process that failed."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        with vpl._PULLS.changed:
            if not vpl._PULLS.under_way and time.monotonic() - vpl._PULLS.last >= quiet:
                return
        time.sleep(0.05)
    raise AssertionError("Polars' threads never stopped pulling")


# A child that leaves Polars pulling a scan when it exits: a limit after a filter (Polars goes on
# pulling in its own threads after the query returned) and a collect_batches() iterator dropped
# mid-way; the background work is slowed, so that a step is under way when the process exits.
_EXIT_WITH_A_SOURCE_PULLED = """
import sys, polars as pl, vecbinlog.pools, vecbinlog.polars as vpl
vecbinlog.pools.TASK_DELAY = 0.03
frame = vpl.scan(sys.argv[1:], "spread.a", segment_bytes=4096, threads=2)
print(frame.filter(pl.col("_log_pos") > 0).limit(3).collect().height)
batches = iter(frame.collect_batches())
print(next(batches).height > 0)
del batches
"""


def test_a_process_exits_cleanly_while_polars_pulls_a_scan(spread):
    """Polars 2.1 pulls a source from its own threads after the query returned (a ``limit``
    after a filter, a dropped ``collect_batches()``), and a Polars thread that takes the GIL
    once the interpreter finalizes aborts the process ("FATAL: exception not rethrown", SIGABRT).
    The scan's streams end at exit, before the interpreter finalizes: each child exits with 0."""
    pytest.importorskip("polars")
    import subprocess
    import sys

    files, _ = spread
    for run in range(4):
        done = subprocess.run([sys.executable, "-c", _EXIT_WITH_A_SOURCE_PULLED, *files[:20]],
                              capture_output=True, text=True, timeout=300)
        assert (done.returncode, done.stdout.split()) == (0, ["3", "True"]), (run, done.stderr[-2000:])


def test_polars_predicates_pushed(spread):
    """What each predicate pushes (and what it cannot)."""
    pl = pytest.importorskip("polars")
    from vecbinlog.polars import pushed

    pushes = {
        "_log_pos >= 5 AND _log_pos < 9": (pl.col("_log_pos") >= 5) & (pl.lit(9) > pl.col("_log_pos")),
        "_change_type in ('insert', 'delete')": pl.col("_change_type").is_in(["insert", "delete"]),
        "_log_file starts_with 'mysql'": pl.col("_log_file").str.starts_with("mysql"),
        "_gtid is_null": pl.col("_gtid").is_null(),
        "_commit_timestamp >= '2027-01-15T08:00:00+00:00'": pl.col("_commit_timestamp") >= at(0),
        "none": (pl.col("_log_pos") > 5) | (pl.col("_log_pos") < 2),
    }
    for text, expr in pushes.items():
        assert str(pushed(expr)) == text
    assert str(pushed(pl.col("_commit_timestamp") >= datetime(2027, 1, 1))) == "none"  # no zone: not an instant
    assert str(pushed((pl.col("id") > 3) & (pl.col("_log_pos") == 7))) == "_log_pos == 7"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert str(pushed(None)) == "none"
