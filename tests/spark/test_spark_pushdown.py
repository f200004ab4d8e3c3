"""Spark's filters pushed into a batch read of the ``binlog`` source (pyspark 4.1+, issue 54), on
archives the tests' MariaDB server writes (tests/support/engines.py).

The rows of a query with filters on the metadata columns (some kept by the source, others handed
back to Spark) equal ``read_table`` of the same files filtered by pandas, every column after the
documented type mapping (tests/spark/test_spark.py's comparison), in log order; ``explain`` lists
the filters kept; a window of 1% of the archive's times, with its index, is planned as the splits of
the file that holds it, and its tasks' reads (the source's reader driven as Spark
drives it, through a filesystem that counts) read at most 2% of the archive's bytes.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pandas as pd
import pyarrow as pa
import pytest

import vecbinlog

from ..support.countingfs import counting_filesystem
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
