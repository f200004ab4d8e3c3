"""Spark's filters pushed into a batch read of the ``binlog`` source (pyspark 4.1+, issue 54), on
archives the tests' MariaDB server writes (tests/support/engines.py).

The rows of a query with filters on the metadata columns (some kept by the source, others handed
back to Spark) equal ``read_table`` of the same files filtered by pandas, every column after the
documented type mapping (tests/spark/test_spark.py's comparison), in log order; ``explain`` lists
the filters kept; a window of 1% of the archive's times, with its index, is planned as the splits of
the file that holds it, and its tasks' reads (the source's reader driven as Spark
drives it, through a filesystem that counts) read at most 2% of the archive's bytes; and the
same query of the archive in S3 (moto's server) asks the server, Spark's workers included, for at
most 2% of its bytes.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import vecbinlog

from ..support.countingfs import counting_filesystem
from ..support.fixtures import S3_REQUESTS
from ..support.engines import SPAN, T0
from ..support.fixtures import require_pyspark

require_pyspark()  # before vecbinlog.spark, which imports pyspark
from pyspark.sql import functions as F  # noqa: E402

from vecbinlog.spark import source as vsource  # noqa: E402
from vecbinlog.spark.pushdown import SUPPORTED  # noqa: E402

from .test_spark import assert_same_rows  # noqa: E402

pytestmark = [
    pytest.mark.mariadb,
    pytest.mark.skipif(not SUPPORTED, reason="this pyspark has no DataSourceReader.pushFilters (4.1+)"),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
    pytest.mark.filterwarnings("ignore::vecbinlog.DecodeWarning"),
]


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(T0, timezone.utc) + timedelta(seconds=seconds)


def filtered(files, table: str, keep) -> pa.Table:
    whole = vecbinlog.read_table(files, table)
    frame = whole.to_pandas(types_mapper=pd.ArrowDtype)
    return whole.filter(pa.array(keep(frame).fillna(False).to_numpy(bool), pa.bool_()))


def plan_text(df, capsys) -> str:
    """What ``df.explain(mode="formatted")`` prints (the scan's ``PushedFilters``: those the source kept)."""
    capsys.readouterr()
    df.explain(mode="formatted")
    return capsys.readouterr().out


def test_a_time_window_reads_one_file_of_a_hundred(spark, spread, capsys):
    files, location = spread
    lo, hi = at(SPAN * 40), at(SPAN * 41)
    df = (spark.read.format("binlog").option("table", "spread.a").option("index", str(location))
          .option("split_bytes", "16k").load(",".join(files)))
    query = df.where((F.col("_commit_timestamp") >= lo) & (F.col("_commit_timestamp") < hi)
                     & F.col("_change_type").isin("insert", "update_postimage") & (F.col("id") > 4005))
    expected = filtered(files, "spread.a", lambda f: (f["_commit_timestamp"] >= lo) & (f["_commit_timestamp"] < hi)
                        & f["_change_type"].isin(["insert", "update_postimage"]) & (f["id"] > 4005))
    assert expected.num_rows >= 5
    assert_same_rows(expected, query.toArrow())
    plan = plan_text(query, capsys)
    assert "PushedFilters: [GreaterThanOrEqual(_commit_timestamp," in plan and "In(_change_type" in plan, plan
    # the source's reader as Spark drives it (the filters pushed, the partitions read), counted
    total = sum(pa.OSFile(f).size() for f in files)
    fs, counted = counting_filesystem()
    source = vsource.BinlogPushdownSource({"table": "spread.a", "index": str(location), "path": ",".join(files),
                                           "split_bytes": "16k"})
    reader = source.reader(source.schema())
    from pyspark.sql.datasource import GreaterThanOrEqual, LessThan

    kept = [GreaterThanOrEqual(("_commit_timestamp",), lo), LessThan(("_commit_timestamp",), hi)]
    assert list(reader.pushFilters(kept)) == []
    reader.options = dataclasses.replace(reader.options, config=reader.options.config.replace(filesystem=fs))
    batches = [b for p in reader.partitions() for b in reader.read(p)]
    assert 0 < counted.read <= 0.02 * total, (counted.read, total)
    got = pa.Table.from_batches(batches)
    window = filtered(files, "spread.a", lambda f: (f["_commit_timestamp"] >= lo) & (f["_commit_timestamp"] < hi))
    assert_same_rows(window, got)


def _bytes_asked(request: tuple, sizes: dict[str, int]) -> int:
    """The bytes of a binlog the S3 server was asked for by ``request`` (method, path, Range)."""
    method, path, asked = request
    if method != "GET" or path not in sizes:
        return 0
    if asked is None:
        return sizes[path]
    first, last = asked.removeprefix("bytes=").split("-")
    return min(int(last) if last else sizes[path] - 1, sizes[path] - 1) - int(first) + 1


def test_a_time_window_in_s3_asks_for_two_percent_of_its_bytes(spark, spread, s3, tmp_path):
    """The spread archive in S3 (moto's server on 127.0.0.1) with an index built over its URIs:
    a Spark query of 1% of its time range asks the server for at most 2% of the archive's
    bytes, every GET counted by its range, those of Spark's Python workers included (they ask
    the same server); its rows are read_table's in the window."""
    client, query, _ = s3
    files, _ = spread
    sizes = {}
    for f in map(Path, files):
        client.put_object(Bucket="binlogs", Key=f"spread/{f.name}", Body=f.read_bytes())
        sizes[f"/binlogs/spread/{f.name}"] = f.stat().st_size
    # (credentials in the URIs: the session's JVM and its workers began before the fixture's environment)
    uris = [f"s3://testing:testing@binlogs/spread/{Path(f).name}{query}" for f in files]
    vecbinlog.build_index(uris, str(tmp_path / "index"), processes=1)
    lo, hi = at(SPAN * 60), at(SPAN * 61)
    S3_REQUESTS.clear()
    df = spark.read.format("binlog").option("table", "spread.a").option("index", str(tmp_path / "index"))
    got = df.load(",".join(uris)).where((F.col("_commit_timestamp") >= lo) & (F.col("_commit_timestamp") < hi)).toArrow()
    asked = sum(_bytes_asked(r, sizes) for r in list(S3_REQUESTS))
    assert 0 < asked <= 0.02 * sum(sizes.values()), (asked, sum(sizes.values()))
    window = filtered(files, "spread.a", lambda f: (f["_commit_timestamp"] >= lo) & (f["_commit_timestamp"] < hi))
    assert window.num_rows >= 10
    assert_same_rows(window, got)


@pytest.mark.parametrize("indexed", [True, False], ids=["index", "no-index"])
def test_filters_on_files_gtids_and_outcomes(spark, minimal, indexed, capsys):
    """The altered table with MINIMAL images: filters on ``_log_file``, ``_log_pos``, ``_gtid``
    and ``_outcome`` kept (and one Spark keeps: ``NOT``, ``LIKE '%...'``), the rows those of pandas."""
    run, files, location = minimal
    table = run["table"]
    expected = vecbinlog.read_table(files, table)
    names = [f.rsplit("/", 1)[-1] for f in files]
    gtids = expected.column("_gtid").to_pylist()
    reader = spark.read.format("binlog").option("table", table)
    if indexed:
        reader = reader.option("index", str(location))
    df = reader.load(",".join(files))
    query = df.where((F.col("_log_file") > names[0]) & (F.col("_log_pos") >= 300) & (F.col("_outcome") == "commit")
                     & F.col("_gtid").isin(gtids[len(gtids) // 2], gtids[-1], "9-9-9")
                     & ~F.col("_change_type").endswith("preimage"))
    got = query.toArrow()
    want = filtered(files, table, lambda f: (f["_log_file"] > names[0]) & (f["_log_pos"] >= 300)
                    & (f["_outcome"] == "commit") & f["_gtid"].isin([gtids[len(gtids) // 2], gtids[-1], "9-9-9"])
                    & ~f["_change_type"].astype(str).str.endswith("preimage"))
    assert want.num_rows >= 2
    assert_same_rows(want, got)
    plan = plan_text(query, capsys)
    assert "In(_gtid" in plan and "GreaterThan(_log_file" in plan and "EqualTo(_outcome,commit)" in plan, plan
